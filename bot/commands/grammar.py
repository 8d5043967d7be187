"""The text of a mail -> typed commands. Pure.

A mail holds player commands (each on a line of its own), GM commands (only in mail from an
authenticated GM) and orders: every line that is not a command is part of the orders, which
go to the game's parser as one text.

Player commands (mail-interface.md): ``HELP``, ``STATUS``, ``ORDERS``, ``JOIN <game> [name]``,
``RESIGN <game>``; for anyone, strangers too, ``HELP``, ``LIST``, ``RULES <game>``,
``OBSERVE <game>``, ``UNOBSERVE [game]`` and ``CONFIRM <code>`` (the answer to a confirmation
mail); for players ``PRESS <game> ALL|<seat>`` (the lines under it, up to ``ENDPRESS``, are
its message), ``TIMEZONE <zone>``, ``ADDRESS <new address>``, ``VACATION <from> <to>``.
GM commands: see `GM_COMMANDS`; each names the game right after the verb, which is how a GM
line is told apart from an order that happens to start with the same word (SpeedPhreakz's
``START 2,4 FACING N`` is an order; ``START rc1`` is the GM's).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from bot.mail_in.addresses import address_problem
from bot.mail_in.auth import NAME_RE, strip_password_lines
from bot.mail_in.tokens import CONFIRM_CODE
from bot.mail_out.lists import UNSUBSCRIBE_CODE
from rules.api import RobotLevel


@dataclass(frozen=True, slots=True)
class CommandProblem:
    """A command line that cannot be run: `reason` says what to write; `verb` is the command
    the line is when its verb was understood and its words were not ("RESIGN" alone)."""

    line: str
    reason: str
    verb: str = ""


class _Verb:
    """What every player command class says of itself: its verb, its syntax (as HELP shows
    it), a one-line summary, an example; whether anyone may send it (a stranger too) and
    whether it names a game; and how a line becomes the command (`parse`)."""

    verb: ClassVar[str]
    syntax: ClassVar[str]
    summary: ClassVar[str]
    example: ClassVar[str]
    for_anyone: ClassVar[bool] = False  # answered for a sender who proved nobody (mail-interface.md)
    takes_game: ClassVar[bool] = False  # its first word after the verb is a game

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        """The command on `line` (its first word is this verb), a problem, or None: not this command."""
        return cls() if line.split()[1:] == [] else None  # type: ignore[return-value]


class _OneGame(_Verb):
    """A command whose one argument is a game: `VERB <game>`."""

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        game = _game_word(words[1]) if len(words) == 2 else None
        return cls(game) if game else _syntax(cls, line)  # type: ignore[call-arg, return-value]


class _MaybeGame(_Verb):
    """A command about one of the sender's games, named or not: `VERB [game]` (none: the game
    the mail is for, its reply address)."""

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 1:
            return cls("")  # type: ignore[call-arg, return-value]
        game = _game_word(words[1]) if len(words) == 2 else None
        return cls(game) if game else _syntax(cls, line)  # type: ignore[call-arg, return-value]


class _OnOff(_Verb):
    """A command that turns something on or off: `VERB OFF|ON`."""

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.upper().split()
        return cls(_ON_OFF[words[1]]) if len(words) == 2 and words[1] in _ON_OFF else _syntax(cls, line)  # type: ignore[call-arg, return-value]


class _Code(_Verb):
    """A command that hands back a code the bot mailed: `VERB <code>`, the code of `code_form`."""

    code_form: ClassVar[re.Pattern[str]]

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        code = words[1].lower() if len(words) == 2 else ""
        return cls(code) if cls.code_form.fullmatch(code) else _syntax(cls, line)  # type: ignore[call-arg, return-value]


_ON_OFF = {"ON": True, "OFF": False}


@dataclass(frozen=True, slots=True)
class Help(_Verb):
    verb: ClassVar[str] = "HELP"
    syntax: ClassVar[str] = "HELP"
    summary: ClassVar[str] = "this text"
    example: ClassVar[str] = "HELP"
    for_anyone: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Status(_MaybeGame):
    verb: ClassVar[str] = "STATUS"
    syntax: ClassVar[str] = "STATUS [game]"
    summary: ClassVar[str] = "standings, deadline, who has ordered (never what)"
    example: ClassVar[str] = "STATUS"
    game: str = ""  # "": the game the mail is for (for the GM of several: every one)


@dataclass(frozen=True, slots=True)
class ShowOrders(_MaybeGame):
    verb: ClassVar[str] = "ORDERS"
    syntax: ClassVar[str] = "ORDERS [game]"
    summary: ClassVar[str] = "what is on file for you"
    example: ClassVar[str] = "ORDERS"
    game: str = ""  # "": the game the mail is for


_JOIN_RE = re.compile(r"^JOIN\s+(\S+)(?:\s+(.+?))?\s*$", re.I)
_RESIGN_RE = re.compile(r"^RESIGN\s+(\S+)\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Join(_Verb):
    verb: ClassVar[str] = "JOIN"
    syntax: ClassVar[str] = "JOIN <game> [name]"
    summary: ClassVar[str] = "join a game open for sign-ups"
    example: ClassVar[str] = "JOIN rc2 Roger"
    for_anyone: ClassVar[bool] = True
    takes_game: ClassVar[bool] = True
    game: str
    name: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        match = _JOIN_RE.match(line)
        if match and NAME_RE.match(match.group(1).lower()):
            return cls(match.group(1).lower(), (match.group(2) or "").strip())
        return CommandProblem(line, f"write JOIN <game> [your name], e.g. {cls.example}")


@dataclass(frozen=True, slots=True)
class Resign(_Verb):
    verb: ClassVar[str] = "RESIGN"
    syntax: ClassVar[str] = "RESIGN <game>"
    summary: ClassVar[str] = "leave a game"
    example: ClassVar[str] = "RESIGN rc1"
    takes_game: ClassVar[bool] = True
    game: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        match = _RESIGN_RE.match(line)
        if match:
            return cls(match.group(1).lower())
        return CommandProblem(line, f"write {cls.syntax}, e.g. {cls.example}")


def _syntax(cls: type[_Verb], line: str) -> CommandProblem:
    return CommandProblem(line, f"write {cls.syntax}, e.g. {cls.example}")


def _game_word(word: str) -> str | None:
    """A game's name as a command gives it (lower case), or None when it cannot be one."""
    name = word.lower()
    return name if NAME_RE.match(name) else None


# -- for anyone, strangers too ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListGames(_Verb):
    verb: ClassVar[str] = "LIST"
    syntax: ClassVar[str] = "LIST"
    summary: ClassVar[str] = "the games, open ones first: free seats, deadlines"
    example: ClassVar[str] = "LIST"
    for_anyone: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Practice(_Verb):
    verb: ClassVar[str] = "PRACTICE"
    syntax: ClassVar[str] = "PRACTICE <game kind> [EASY]"
    summary: ClassVar[str] = "a practice race against robots (EASY: gentler)"
    example: ClassVar[str] = "PRACTICE racecraft"
    for_anyone: ClassVar[bool] = True
    kind: str
    level: RobotLevel = RobotLevel.NORMAL

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 2 and re.fullmatch(r"[a-z_-]{1,30}", words[1].lower()):
            return cls(words[1].lower())
        if len(words) == 3 and re.fullmatch(r"[a-z_-]{1,30}", words[1].lower()) and words[2].upper() == "EASY":
            return cls(words[1].lower(), RobotLevel.EASY)
        return _syntax(cls, line)


@dataclass(frozen=True, slots=True)
class Substitute(_Verb):
    verb: ClassVar[str] = "SUBSTITUTE"
    syntax: ClassVar[str] = "SUBSTITUTE ON|OFF <kind>"
    summary: ClassVar[str] = "the substitutes bench: seats left under way"
    example: ClassVar[str] = "SUBSTITUTE ON speed-circuit"
    for_anyone: ClassVar[bool] = True
    on: bool
    kind: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 3 and words[1].upper() in _ON_OFF and re.fullmatch(r"[a-z_-]{1,30}", words[2].lower()):
            return cls(_ON_OFF[words[1].upper()], words[2].lower())
        return _syntax(cls, line)


@dataclass(frozen=True, slots=True)
class Record(_Verb):
    verb: ClassVar[str] = "RECORD"
    syntax: ClassVar[str] = "RECORD"
    summary: ClassVar[str] = "your record: on-time ratio, NMRs, games left"
    example: ClassVar[str] = "RECORD"
    for_anyone: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class ShowRules(_OneGame):
    verb: ClassVar[str] = "RULES"
    syntax: ClassVar[str] = "RULES <game>"
    summary: ClassVar[str] = "a game's rules in short, with the order syntax"
    example: ClassVar[str] = "RULES rc1"
    for_anyone: ClassVar[bool] = True
    takes_game: ClassVar[bool] = True
    game: str


@dataclass(frozen=True, slots=True)
class Observe(_OneGame):
    verb: ClassVar[str] = "OBSERVE"
    syntax: ClassVar[str] = "OBSERVE <game>"
    summary: ClassVar[str] = "a game's results by mail (you confirm it first)"
    example: ClassVar[str] = "OBSERVE rc1"
    for_anyone: ClassVar[bool] = True
    takes_game: ClassVar[bool] = True
    game: str


@dataclass(frozen=True, slots=True)
class Unobserve(_Verb):
    verb: ClassVar[str] = "UNOBSERVE"
    syntax: ClassVar[str] = "UNOBSERVE [game]"
    summary: ClassVar[str] = "stop them (without a game: for every game)"
    example: ClassVar[str] = "UNOBSERVE rc1"
    for_anyone: ClassVar[bool] = True
    game: str  # "": every game this address observes

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 1:
            return cls("")
        game = _game_word(words[1]) if len(words) == 2 else None
        return cls(game) if game else _syntax(cls, line)


@dataclass(frozen=True, slots=True)
class Confirm(_Code):
    verb: ClassVar[str] = "CONFIRM"
    syntax: ClassVar[str] = "CONFIRM <code>"
    summary: ClassVar[str] = "confirm OBSERVE or ADDRESS (a reply does it)"
    example: ClassVar[str] = "CONFIRM observe.rc1.20460.abcdefghijklmnop"
    for_anyone: ClassVar[bool] = True
    code_form: ClassVar[re.Pattern[str]] = CONFIRM_CODE
    code: str


# -- for players ----------------------------------------------------------------------------

PRESS_ALL = "all"
PRESS_GM = "gm"  # PRESS <game> GM: to the GM alone
MAX_PRESS_LINES = 60
MAX_PRESS_CHARS = 4000
_END_PRESS = re.compile(r"END\s*PRESS", re.I)


@dataclass(frozen=True, slots=True)
class Press(_Verb):
    verb: ClassVar[str] = "PRESS"
    syntax: ClassVar[str] = "PRESS <game> ALL|<seat>"
    summary: ClassVar[str] = "a message: the lines under it, up to ENDPRESS"
    example: ClassVar[str] = "PRESS rc1 ALL"
    takes_game: ClassVar[bool] = True
    game: str
    to: str  # PRESS_ALL, PRESS_GM or a seat's name
    message: str = ""  # the lines under the command (and any text after it on its line)
    cut: bool = False  # the message was longer than MAX_PRESS_LINES / MAX_PRESS_CHARS

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split(maxsplit=3)
        game = _game_word(words[1]) if len(words) >= 3 else None
        to = words[2].lower() if len(words) >= 3 else ""
        if not game or not NAME_RE.match(to):
            return _syntax(cls, line)
        return cls(game, to, words[3].strip() if len(words) == 4 else "")

    def with_lines(self, lines: list[str]) -> Press:
        """The command with the lines under it as its message, capped."""
        text = "\n".join([self.message, *lines] if self.message else lines).strip("\n")
        kept = text.splitlines()[:MAX_PRESS_LINES]
        message = "\n".join(kept)[:MAX_PRESS_CHARS]
        return dataclasses.replace(self, message=message, cut=message != text)


@dataclass(frozen=True, slots=True)
class Timezone(_Verb):
    verb: ClassVar[str] = "TIMEZONE"
    syntax: ClassVar[str] = "TIMEZONE <zone>"
    summary: ClassVar[str] = "the zone deadlines are shown in (all your games)"
    example: ClassVar[str] = "TIMEZONE Europe/Paris"
    zone: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 2 and len(words[1]) <= 64:
            return cls(words[1])
        return _syntax(cls, line)


_ADDRESS = re.compile(
    r"[^@\s<>()\[\],;:\\\"]{1,64}@[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)+"
)


@dataclass(frozen=True, slots=True)
class Address(_Verb):
    verb: ClassVar[str] = "ADDRESS"
    syntax: ClassVar[str] = "ADDRESS <new address>"
    summary: ClassVar[str] = "move to a new address (you confirm it from there)"
    example: ClassVar[str] = "ADDRESS kelly@new.example"
    address: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        address = words[1].strip("<>").lower() if len(words) == 2 else ""
        problem = address_problem(address) if "@" in address else None
        if problem is not None:  # RFC 5321's lengths, said as the reason
            return CommandProblem(line, f"that address is {problem}")
        return cls(address) if _ADDRESS.fullmatch(address) else _syntax(cls, line)


VACATION_OFF = ("OFF", "NONE", "END", "CANCEL")


@dataclass(frozen=True, slots=True)
class Vacation(_Verb):
    verb: ClassVar[str] = "VACATION"
    syntax: ClassVar[str] = "VACATION <from> <to>"
    summary: ClassVar[str] = "days away (YYYY-MM-DD): no NMR counted; or OFF"
    example: ClassVar[str] = "VACATION 2026-07-01 2026-07-14"
    start: date | None  # None (and `end` None): VACATION OFF
    end: date | None

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 2 and words[1].upper() in VACATION_OFF:
            return cls(None, None)
        if len(words) == 3:
            try:
                start, end = (date.fromisoformat(w) for w in words[1:])
            except ValueError:
                return CommandProblem(line, f"write the days as YYYY-MM-DD: {cls.syntax}, e.g. {cls.example}")
            if all(len(w) == 10 for w in words[1:]):
                return cls(start, end)
        return CommandProblem(line, f"write {cls.syntax} (days as YYYY-MM-DD), e.g. {cls.example}; or VACATION OFF")


# -- what comes by mail, and how it is received ------------------------------------


@dataclass(frozen=True, slots=True)
class Ping(_Verb):
    verb: ClassVar[str] = "PING"
    syntax: ClassVar[str] = "PING"
    summary: ClassVar[str] = "test your mail: says how it was accepted"
    example: ClassVar[str] = "PING"


@dataclass(frozen=True, slots=True)
class Calendar(_OnOff):
    verb: ClassVar[str] = "CALENDAR"
    syntax: ClassVar[str] = "CALENDAR OFF|ON"
    summary: ClassVar[str] = "deadlines as calendar invitations (all games)"
    example: ClassVar[str] = "CALENDAR OFF"
    on: bool


@dataclass(frozen=True, slots=True)
class Rating(_OnOff):
    verb: ClassVar[str] = "RATING"
    syntax: ClassVar[str] = "RATING [ON|OFF]"
    summary: ClassVar[str] = "your ratings; ON: in results and the ratings page"
    example: ClassVar[str] = "RATING ON"
    on: bool | None  # None: RATING alone, the person's own ratings asked for

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.upper().split()
        if len(words) == 1:
            return cls(None)
        return cls(_ON_OFF[words[1]]) if len(words) == 2 and words[1] in _ON_OFF else _syntax(cls, line)


@dataclass(frozen=True, slots=True)
class Reminders(_OnOff):
    verb: ClassVar[str] = "REMINDERS"
    syntax: ClassVar[str] = "REMINDERS OFF|ON"
    summary: ClassVar[str] = "reminders before a deadline, this game's seat"
    example: ClassVar[str] = "REMINDERS ON"
    on: bool


# -- judge commands: what njudge and the human GMs offer --------------------------------


@dataclass(frozen=True, slots=True)
class History(_Verb):
    verb: ClassVar[str] = "HISTORY"
    syntax: ClassVar[str] = "HISTORY [game] [turn]"
    summary: ClassVar[str] = "past results: the turns so far, or one turn's"
    example: ClassVar[str] = "HISTORY rc1 2"
    game: str  # "": the game the mail is for (its reply address)
    turn: int | None  # None: the list of turns

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()[1:]
        game, turn = "", None
        if words and not words[0].isdigit():
            game = _game_word(words.pop(0)) or ""
            if not game:
                return _syntax(cls, line)
        if words and words[0].isdigit() and len(words[0]) <= 4:
            turn = int(words.pop(0))
        return cls(game, turn) if not words else _syntax(cls, line)


@dataclass(frozen=True, slots=True)
class Resend(_MaybeGame):
    verb: ClassVar[str] = "RESEND"
    syntax: ClassVar[str] = "RESEND [game]"
    summary: ClassVar[str] = "the open turn's sheet again, to your own address"
    example: ClassVar[str] = "RESEND rc1"
    game: str  # "": the game the mail is for


@dataclass(frozen=True, slots=True)
class Clear(_MaybeGame):
    verb: ClassVar[str] = "CLEAR"
    syntax: ClassVar[str] = "CLEAR [game]"
    summary: ClassVar[str] = "take back your orders: the default stands"
    example: ClassVar[str] = "CLEAR rc1"
    game: str


@dataclass(frozen=True, slots=True)
class Wait(_MaybeGame):
    verb: ClassVar[str] = "WAIT"
    syntax: ClassVar[str] = "WAIT [game]"
    summary: ClassVar[str] = "hold the turn to its deadline (no early resolution)"
    example: ClassVar[str] = "WAIT rc1"
    game: str


@dataclass(frozen=True, slots=True)
class NoWait(_MaybeGame):
    verb: ClassVar[str] = "NOWAIT"
    syntax: ClassVar[str] = "NOWAIT [game]"
    summary: ClassVar[str] = "lift your WAIT: the turn may resolve early again"
    example: ClassVar[str] = "NOWAIT rc1"
    game: str


@dataclass(frozen=True, slots=True)
class Unsubscribe(_Code):
    """The code of a List-Unsubscribe mail (bot.mail_out.lists): r.<game>.<seat>.<mac>, o.<game>.<mac>."""

    verb: ClassVar[str] = "UNSUBSCRIBE"
    syntax: ClassVar[str] = "UNSUBSCRIBE <code>"
    summary: ClassVar[str] = "stop what a mail's List-Unsubscribe code names"
    example: ClassVar[str] = "UNSUBSCRIBE o.rc1.abcdefghijklmnop"
    for_anyone: ClassVar[bool] = True
    code_form: ClassVar[re.Pattern[str]] = UNSUBSCRIBE_CODE
    code: str


@dataclass(frozen=True, slots=True)
class Stop(_Code):
    """The code of the note an ADDRESS change sends the old address: it stops the
    change before it takes effect. Only a line whose second word has the form of a code is
    this command; "stop sending me ..." stays a line of the mail's text."""

    verb: ClassVar[str] = "STOP"
    syntax: ClassVar[str] = "STOP <code>"
    summary: ClassVar[str] = "stop an address change (its code went to the old one)"
    example: ClassVar[str] = "STOP stop.42.20460.abcdefghijklmnop"
    for_anyone: ClassVar[bool] = True
    code_form: ClassVar[re.Pattern[str]] = CONFIRM_CODE
    code: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        words = line.split()
        if len(words) == 2 and cls.code_form.fullmatch(words[1].lower()):
            return cls(words[1].lower())
        return None


PlayerCommand = (
    Help
    | Status
    | ShowOrders
    | Join
    | Resign
    | ListGames
    | ShowRules
    | Observe
    | Unobserve
    | Confirm
    | Press
    | Timezone
    | Address
    | Vacation
    | Ping
    | Calendar
    | Rating
    | Reminders
    | Unsubscribe
    | Stop
    | History
    | Resend
    | Clear
    | Wait
    | NoWait
    | Practice
    | Substitute
    | Record
)
# In the order HELP lists them.
PLAYER_COMMANDS: tuple[type[PlayerCommand], ...] = (
    Help,
    Status,
    ShowOrders,
    Clear,
    Wait,
    NoWait,
    History,
    Resend,
    Join,
    Resign,
    Press,
    Timezone,
    Address,
    Vacation,
    Ping,
    Calendar,
    Rating,
    Reminders,
    ListGames,
    ShowRules,
    Practice,
    Substitute,
    Record,
    Observe,
    Unobserve,
    Confirm,
    Unsubscribe,
    Stop,
)
FOR_ANYONE: tuple[type[PlayerCommand], ...] = tuple(c for c in PLAYER_COMMANDS if c.for_anyone)
_PLAYER_VERBS = {c.verb: c for c in PLAYER_COMMANDS}


# -- GM commands ----------------------------------------------------------------------------
# The same shape as a player's: a class per verb, with its syntax, summary and example, whose
# instance is the command as read; `bot.commands.registry` binds each to its handler.


@dataclass(frozen=True, slots=True)
class GmCommand:
    """A GM command as read: the game it names, its arguments, the line it came on. Each verb
    names the game right after it (`GmCommand.split` reads the rest)."""

    verb: ClassVar[str]
    syntax: ClassVar[str]
    summary: ClassVar[str]
    example: ClassVar[str]
    min_args: ClassVar[int] = 0
    max_args: ClassVar[int | None] = 0  # None: the rest of the line is the last argument
    game: str
    args: tuple[str, ...]
    line: str

    @classmethod
    def split(cls, words: list[str]) -> tuple[str, ...] | None:
        """The arguments in the words after the game, or None when they do not fit the syntax."""
        if cls.max_args is None:
            if len(words) < cls.min_args:
                return None
            return (*words[: cls.min_args - 1], " ".join(words[cls.min_args - 1 :]))
        if not cls.min_args <= len(words) <= cls.max_args:
            return None
        return tuple(words)


@dataclass(frozen=True, slots=True)
class Extend(GmCommand):
    verb: ClassVar[str] = "EXTEND"
    syntax: ClassVar[str] = "EXTEND <game> <duration> [FORCE]"
    summary: ClassVar[str] = "push the deadline back (announced; FORCE: under an hour)"
    example: ClassVar[str] = "EXTEND rc1 24h"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class Deadline(GmCommand):
    verb: ClassVar[str] = "DEADLINE"
    syntax: ClassVar[str] = "DEADLINE <game> <when> [FORCE]"
    summary: ClassVar[str] = "set the deadline, game time or +duration (announced)"
    example: ClassVar[str] = "DEADLINE rc1 2026-12-04 18:00"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 3

    @classmethod
    def split(cls, words: list[str]) -> tuple[str, ...] | None:
        return (" ".join(words),) if cls.min_args <= len(words) <= (cls.max_args or 0) else None


@dataclass(frozen=True, slots=True)
class Order(GmCommand):
    verb: ClassVar[str] = "ORDER"
    syntax: ClassVar[str] = "ORDER <game> <seat> <orders>"
    summary: ClassVar[str] = "enter orders for a player (';' separates lines)"
    example: ClassVar[str] = "ORDER rc1 roger CRUISE"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = None


@dataclass(frozen=True, slots=True)
class Plot(GmCommand):
    verb: ClassVar[str] = "PLOT"
    syntax: ClassVar[str] = "PLOT <game> <seat> <orders>"
    summary: ClassVar[str] = "set the GM plot: that seat's NMR default"
    example: ClassVar[str] = "PLOT rc1 kelly USE 2"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = None


@dataclass(frozen=True, slots=True)
class Process(GmCommand):
    verb: ClassVar[str] = "PROCESS"
    syntax: ClassVar[str] = "PROCESS <game>"
    summary: ClassVar[str] = "resolve the open turn now, defaults for the missing"
    example: ClassVar[str] = "PROCESS rc1"


@dataclass(frozen=True, slots=True)
class Preview(GmCommand):
    verb: ClassVar[str] = "PREVIEW"
    syntax: ClassVar[str] = "PREVIEW <game>"
    summary: ClassVar[str] = "resolve a copy; the results come to you only"
    example: ClassVar[str] = "PREVIEW rc1"


@dataclass(frozen=True, slots=True)
class Pause(GmCommand):
    verb: ClassVar[str] = "PAUSE"
    syntax: ClassVar[str] = "PAUSE <game>"
    summary: ClassVar[str] = "stop deadlines until RESUME"
    example: ClassVar[str] = "PAUSE rc1"


@dataclass(frozen=True, slots=True)
class Resume(GmCommand):
    verb: ClassVar[str] = "RESUME"
    syntax: ClassVar[str] = "RESUME <game>"
    summary: ClassVar[str] = "restart deadlines (the clock restarts from now)"
    example: ClassVar[str] = "RESUME rc1"


@dataclass(frozen=True, slots=True)
class SetFigure(GmCommand):
    verb: ClassVar[str] = "SET"
    syntax: ClassVar[str] = "SET <game> <seat> <figure> <value>"
    summary: ClassVar[str] = "adjust a player's figure"
    example: ClassVar[str] = "SET rc1 seb ep 6"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3


@dataclass(frozen=True, slots=True)
class Replace(GmCommand):
    verb: ClassVar[str] = "REPLACE"
    syntax: ClassVar[str] = "REPLACE <game> <seat> <address> [name] | ROBOT [EASY]"
    summary: ClassVar[str] = "hand a seat to a new player, or to a robot"
    example: ClassVar[str] = "REPLACE rc1 kelly kim@example.org Kim"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = None


@dataclass(frozen=True, slots=True)
class Drop(GmCommand):
    verb: ClassVar[str] = "DROP"
    syntax: ClassVar[str] = "DROP <game> <seat>"
    summary: ClassVar[str] = "remove a player from the game"
    example: ClassVar[str] = "DROP rc1 steve"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Rollback(GmCommand):
    verb: ClassVar[str] = "ROLLBACK"
    syntax: ClassVar[str] = "ROLLBACK <game>"
    summary: ClassVar[str] = "undo the last resolution and reopen that turn"
    example: ClassVar[str] = "ROLLBACK rc1"


@dataclass(frozen=True, slots=True)
class OpenSignups(GmCommand):
    verb: ClassVar[str] = "OPEN"
    syntax: ClassVar[str] = "OPEN <game>"
    summary: ClassVar[str] = "open the game for sign-ups (JOIN)"
    example: ClassVar[str] = "OPEN rc2"


@dataclass(frozen=True, slots=True)
class Start(GmCommand):
    verb: ClassVar[str] = "START"
    syntax: ClassVar[str] = "START <game>"
    summary: ClassVar[str] = "close sign-ups and start turn 1"
    example: ClassVar[str] = "START rc2"


@dataclass(frozen=True, slots=True)
class SeasonCommand(GmCommand):
    verb: ClassVar[str] = "SEASON"
    syntax: ClassVar[str] = (
        "SEASON <game> NEW <season> [SCORING f1|cfr|linear|custom:...] [DROP n] ... | ADD <season> | NEXT [CONFIRM|REDRAW]"
    )
    summary: ClassVar[str] = (
        "make a championship season with this game as race 1, add it to yours, or draw (and confirm) the next season"
    )
    example: ClassVar[str] = "SEASON rc1 NEW spring SCORING f1 DROP 1 RACES 3"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = None


# In the order HELP and the digest list them.
GM_COMMANDS: tuple[type[GmCommand], ...] = (
    Extend,
    Deadline,
    Order,
    Plot,
    Process,
    Preview,
    Pause,
    Resume,
    SetFigure,
    Replace,
    Drop,
    Rollback,
    OpenSignups,
    Start,
    SeasonCommand,
)
GM_VERBS: dict[str, type[GmCommand]] = {c.verb: c for c in GM_COMMANDS}


# Bounds on what one mail may ask (no answer bigger than the mail deserves). A
# command written twice is carried out and answered once; past `MAX_COMMANDS` the commands of
# a mail are counted, not carried out (Mailman's habit: a mail is not a batch job); past
# `MAX_PROBLEMS` lines not understood are counted, not quoted.
MAX_COMMANDS = 20
MAX_PROBLEMS = 10


@dataclass(frozen=True, slots=True)
class MailCommands:
    player: tuple[PlayerCommand, ...]
    gm: tuple[GmCommand, ...]
    orders_text: str  # every other line, in order ("" when none)
    problems: tuple[CommandProblem, ...]  # at most MAX_PROBLEMS, each line once
    repeated: int = 0  # commands (and problem lines) that repeated an earlier one: done once
    over: int = 0  # commands past MAX_COMMANDS: not carried out
    more_problems: int = 0  # lines not understood past MAX_PROBLEMS: counted only


# A stranger's first mail often wraps its command in a greeting ("Hi! PRACTICE racecraft
# please"): a short line of greeting words (and a name), the verb of a command for anyone that
# asks for a game, written in capitals as commands are, its words, and a please or thanks after
# it. Only PRACTICE and JOIN, whose answer echoes what was read (a stranger gets a code to
# confirm it), and only when the words inside parse as the command.
_IN_GREETING_VERBS = ("PRACTICE", "JOIN")
_COMMAND_IN_GREETING = re.compile(
    r"(?i:hi|hello|hey|hiya|dear|greetings|howdy|good\s+(?:morning|afternoon|evening|day))"
    r"(?:[\s,!.:;~-]+(?:[A-Za-z][a-z'’]*))?[\s,!.:;~-]+"
    r"(?P<command>(?:" + "|".join(_IN_GREETING_VERBS) + r")\s[^,!.;]*?)"
    r"(?:[\s,!.;~-]+(?i:please|pls|thanks|thank\s+you|thx|cheers|ta))*[\s,!.:;~-]*"
)
_GREETING_LINE_MAX = 100  # characters: a greeting line, not a letter


def command_in_greeting(line: str) -> PlayerCommand | None:
    """The PRACTICE or JOIN command a short greeting line carries ("Hi! PRACTICE racecraft
    please" -> PRACTICE racecraft), or None: the line is not one, or its command does not parse."""
    text = line.strip()
    if len(text) > _GREETING_LINE_MAX:
        return None
    match = _COMMAND_IN_GREETING.fullmatch(text)
    if match is None:
        return None
    inner = match.group("command").strip()
    command = _PLAYER_VERBS[inner.split()[0]].parse(inner)
    return command if isinstance(command, Practice | Join) else None


def split_gm_args(command: type[GmCommand], words: list[str]) -> tuple[str, ...] | None:
    """The arguments of a GM command in the words after its game (`GmCommand.split`)."""
    return command.split(words)


def _is_gm_command(line: str, gm_games: Collection[str]) -> bool:
    """Whether `line` is a GM command (its verb, then one of `gm_games`)."""
    words = line.split()
    return len(words) >= 2 and words[0].upper() in GM_VERBS and words[1].lower() in gm_games


def parse_commands(text: str, *, gm_games: Collection[str] = ()) -> MailCommands:
    """Sort the lines of a mail into player commands, GM commands and orders."""
    player: list[PlayerCommand] = []
    gm: list[GmCommand] = []
    problems: list[CommandProblem] = []
    order_lines: list[str] = []
    gm_games = {g.lower() for g in gm_games}
    lines = strip_password_lines(text).splitlines()
    index = 0
    while index < len(lines):
        raw_line = lines[index]
        index += 1
        line = raw_line.strip()
        if not line:
            order_lines.append("")
            continue
        words = line.split()
        verb = words[0].upper()
        command_class = _PLAYER_VERBS.get(verb)
        command = command_class.parse(line) if command_class is not None else None
        if command_class is None and verb not in GM_VERBS:
            command = command_in_greeting(line)
        if isinstance(command, CommandProblem):
            problems.append(dataclasses.replace(command, verb=command_class.verb) if command_class else command)
            continue
        if isinstance(command, Press):
            # The lines under PRESS are its message, up to ENDPRESS (or the end of the mail):
            # never commands, never orders. In a GM's mail a GM command of the GM's games ends
            # it too, and is read as the command it is (a reply to the digest: PRESS, then more
            # commands), never sent to the player as press.
            message: list[str] = []
            while index < len(lines) and not _END_PRESS.fullmatch(lines[index].strip()):
                if _is_gm_command(lines[index], gm_games):
                    break
                message.append(lines[index].rstrip())
                index += 1
            else:
                index += 1  # the ENDPRESS line
            command = command.with_lines(message)
        if command is not None:
            player.append(command)
            continue
        gm_class = GM_VERBS.get(verb)
        if gm_class is not None and len(words) >= 2 and words[1].lower() in gm_games:
            args = gm_class.split(words[2:])
            if args is None:
                problems.append(
                    CommandProblem(line, f"write {gm_class.syntax}, e.g. {gm_class.example}", gm_class.verb)
                )
            else:
                gm.append(gm_class(words[1].lower(), args, line))
            continue
        order_lines.append(raw_line.rstrip())
    orders_text = "\n".join(without_courtesies(order_lines)).strip("\n")
    return _bounded(player, gm, orders_text, problems)


def _bounded(
    player: list[PlayerCommand], gm: list[GmCommand], orders_text: str, problems: list[CommandProblem]
) -> MailCommands:
    """The commands of a mail, each once and at most `MAX_COMMANDS` of them (player commands
    first, in the mail's order, then GM commands), and its problem lines, each once and at
    most `MAX_PROBLEMS` of them: what the mail asks is answered once, in bounded size."""
    repeated = 0
    unique_player: list[PlayerCommand] = []
    for command in player:
        if command in unique_player:
            repeated += 1
        else:
            unique_player.append(command)
    unique_gm: list[GmCommand] = []
    seen_gm: set[tuple[str, str, tuple[str, ...]]] = set()
    for gm_command in gm:
        key = (gm_command.verb, gm_command.game, gm_command.args)
        if key in seen_gm:
            repeated += 1
        else:
            seen_gm.add(key)
            unique_gm.append(gm_command)
    room = MAX_COMMANDS
    kept_player = unique_player[:room]
    kept_gm = unique_gm[: max(0, room - len(kept_player))]
    over = len(unique_player) + len(unique_gm) - len(kept_player) - len(kept_gm)
    unique_problems = list(dict.fromkeys(problems))
    repeated += len(problems) - len(unique_problems)
    return MailCommands(
        tuple(kept_player),
        tuple(kept_gm),
        orders_text,
        tuple(unique_problems[:MAX_PROBLEMS]),
        repeated=repeated,
        over=over,
        more_problems=max(0, len(unique_problems) - MAX_PROBLEMS),
    )


# Greetings before the orders and sign-offs after them are what people write around orders
# ("Hi Flagman, / USE 3 / Cheers, Steve"): they are left out quietly, not refused as orders
# Only at the top and the bottom, short, and never a word any game's orders use.
# What may follow the word: a few words in lower case or Capitalised ("Flagman", "all", "GM"),
# punctuation; never a digit or a word in capitals (orders are written so: "hi USE 3" is an
# order line with a greeting in it, refused with its reason as before, not dropped).
_REST = r"(?:[\s,!.:;~-]+(?:[A-Za-z][a-z'’]*|[A-Z]{1,2}))*[\s,!.:;~-]*"
_GREETING = re.compile(r"(?i:hi|hello|hey|hiya|dear|greetings|howdy|good\s+(?:morning|afternoon|evening|day))" + _REST)
# Words for the GM, not to pass over as a courtesy nor to refuse as orders: a farewell ("I have
# to drop out, family stuff"), a question, a line that names the GM.
_FAREWELL = re.compile(
    r"(?i)\b(?:drop(?:ping)?\s+out|quit(?:ting)?\b|resign(?:ing)?\b|leav(?:e|ing)\s+the\s+(?:game|race)|"
    r"withdraw(?:ing)?\s+from|bow(?:ing)?\s+out|step(?:ping)?\s+(?:down|away)|give\s+up\s+my\s+(?:seat|car|place)|"
    r"(?:can'?t|can’t|cannot|won'?t\s+be\s+able\s+to)\s+(?:continue|carry\s+on|keep\s+(?:playing|going)|play\s+on)|"
    r"i'?m\s+out\b)"
)
_FOR_GM = re.compile(r"\b(?:GM|gm|(?i:game\s*master|race\s+director|organi[sz]er))\b")


class ForTheGm(enum.StrEnum):
    """Why a line of a player's mail is for the GM: words no rule of the bot answers."""

    FAREWELL = "farewell"  # the player means to leave: asked whether they meant RESIGN
    QUESTION = "question"  # a question (a rules question): the GM answers it
    NOTE = "note"  # words addressed to the GM


def for_the_gm(line: str) -> ForTheGm | None:
    """Whether `line` is words for the GM (a farewell, a question, a line naming the GM), and
    which; None for anything else (an order, a command, a courtesy, a note to nobody)."""
    if _FAREWELL.search(line):
        return ForTheGm.FAREWELL
    if "?" in line:
        return ForTheGm.QUESTION
    if _FOR_GM.search(line):
        return ForTheGm.NOTE
    return None


_SIGN_OFF = re.compile(
    r"(?i:thanks|thank\s+you|thx|ty|cheers|ta|regards|best|best\s+regards|kind\s+regards|warm\s+regards|"
    r"all\s+the\s+best|many\s+thanks|sincerely|yours|good\s+luck|gl|see\s+you|bye|cu|br|hth)" + _REST
)
_LONE_CAPITAL = re.compile(r"(?<![\w'’-])[A-HJ-Z](?![\w'’-])")  # a capital letter standing alone, not "I"
_NAME = re.compile(r"[A-Z][a-z'.-]*(?:\s+[A-Z][a-z'.-]*){0,2}")  # "Steve", "Mary Ann": not "USE", not "OVERTAKE"


def is_courtesy(line: str) -> bool:
    """Whether `line` is a greeting or a sign-off alone ("thanks!", "cheers", "Hi GM"): words
    to a person, never a command or an order. A greeting or sign-off that carries words for
    the GM ("Dear GM, I have to drop out"; "Thanks! Can I pit twice?") is not one."""
    text = line.strip()
    if not text or (for_the_gm(text) not in (None, ForTheGm.NOTE)):
        return False
    if _GREETING.fullmatch(text):
        if len(text.split()) > 2 and _LONE_CAPITAL.search(text):
            return False  # "Hi, B for me this turn": an option letter after the greeting (Racecraft's B)
        return len(text.split()) <= 3 or for_the_gm(text) is None
    return bool(_SIGN_OFF.fullmatch(text))


def without_courtesies(lines: list[str]) -> list[str]:
    """`lines` without the greeting lines that open them and the sign-off (and the name
    under it) that closes them; blank lines count as nothing either way."""
    start, end = 0, len(lines)
    while start < end and (
        not lines[start].strip() or (_GREETING.fullmatch(lines[start].strip()) and is_courtesy(lines[start]))
    ):
        start += 1
    tail = end
    while tail > start and not lines[tail - 1].strip():
        tail -= 1
    if (
        tail > start
        and _NAME.fullmatch(lines[tail - 1].strip())
        and tail - 1 > start
        and _SIGN_OFF.fullmatch(lines[tail - 2].strip())
    ):
        end = tail - 2  # "Cheers," then "Steve"
    elif tail > start and _SIGN_OFF.fullmatch(lines[tail - 1].strip()) and is_courtesy(lines[tail - 1]):
        end = tail - 1
    else:
        end = tail
    return lines[start:end]
