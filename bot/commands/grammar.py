"""The text of a mail -> typed commands. Pure.

A mail holds player commands (each on a line of its own), GM commands (only in mail from an
authenticated GM) and orders: every line that is not a command is part of the orders, which
go to the game's parser as one text.

Player commands (mail-interface.md): ``HELP``, ``STATUS``, ``ORDERS``, ``JOIN <game> [name]``,
``RESIGN <game>``. GM commands: see `GM_COMMANDS`; each names the game right after the verb,
which is how a GM line is told apart from an order that happens to start with the same word
(SpeedPhreakz's ``START 2,4 FACING N`` is an order; ``START rc1`` is the GM's).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import ClassVar

from bot.mail_in.auth import NAME_RE, strip_password_lines


@dataclass(frozen=True, slots=True)
class CommandProblem:
    line: str
    reason: str


class _Verb:
    """What every player command class says of itself: its verb, its syntax (as HELP shows
    it), a one-line summary, an example; and how a line becomes the command (`parse`)."""

    verb: ClassVar[str]
    syntax: ClassVar[str]
    summary: ClassVar[str]
    example: ClassVar[str]

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        """The command on `line` (its first word is this verb), a problem, or None: not this command."""
        return cls() if line.split()[1:] == [] else None  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Help(_Verb):
    verb: ClassVar[str] = "HELP"
    syntax: ClassVar[str] = "HELP"
    summary: ClassVar[str] = "this text"
    example: ClassVar[str] = "HELP"


@dataclass(frozen=True, slots=True)
class Status(_Verb):
    verb: ClassVar[str] = "STATUS"
    syntax: ClassVar[str] = "STATUS"
    summary: ClassVar[str] = "standings, deadline, who has ordered (never what)"
    example: ClassVar[str] = "STATUS"


@dataclass(frozen=True, slots=True)
class ShowOrders(_Verb):
    verb: ClassVar[str] = "ORDERS"
    syntax: ClassVar[str] = "ORDERS"
    summary: ClassVar[str] = "what is on file for you"
    example: ClassVar[str] = "ORDERS"


_JOIN_RE = re.compile(r"^JOIN\s+(\S+)(?:\s+(.+?))?\s*$", re.I)
_RESIGN_RE = re.compile(r"^RESIGN\s+(\S+)\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Join(_Verb):
    verb: ClassVar[str] = "JOIN"
    syntax: ClassVar[str] = "JOIN <game> [name]"
    summary: ClassVar[str] = "join a game open for sign-ups"
    example: ClassVar[str] = "JOIN rc2 Roger"
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
    game: str

    @classmethod
    def parse(cls, line: str) -> PlayerCommand | CommandProblem | None:
        match = _RESIGN_RE.match(line)
        if match:
            return cls(match.group(1).lower())
        return CommandProblem(line, f"write {cls.syntax}, e.g. {cls.example}")


PlayerCommand = Help | Status | ShowOrders | Join | Resign
# In the order HELP lists them.
PLAYER_COMMANDS: tuple[type[Help | Status | ShowOrders | Join | Resign], ...] = (Help, Status, ShowOrders, Join, Resign)
_PLAYER_VERBS = {c.verb: c for c in PLAYER_COMMANDS}


@dataclass(frozen=True, slots=True)
class GmCommand:
    verb: str
    game: str
    args: tuple[str, ...]
    line: str


@dataclass(frozen=True, slots=True)
class GmCommandSpec:
    verb: str
    syntax: str
    summary: str
    example: str
    min_args: int = 0
    max_args: int | None = 0  # None: the rest of the line


GM_COMMANDS: tuple[GmCommandSpec, ...] = (
    GmCommandSpec("EXTEND", "EXTEND <game> <duration>", "push the deadline back (announced to the players)", "EXTEND rc1 24h", 1, 1),
    GmCommandSpec("DEADLINE", "DEADLINE <game> <when>", "set the deadline, game time or +duration (announced)", "DEADLINE rc1 2026-12-04 18:00", 1, 2),
    GmCommandSpec("ORDER", "ORDER <game> <seat> <orders>", "enter orders for a player (';' separates lines)", "ORDER rc1 roger CRUISE", 2, None),
    GmCommandSpec("PLOT", "PLOT <game> <seat> <orders>", "set the GM plot: that seat's NMR default", "PLOT rc1 kelly USE 2", 2, None),
    GmCommandSpec("PROCESS", "PROCESS <game>", "resolve the open turn now, defaults for the missing", "PROCESS rc1"),
    GmCommandSpec("PREVIEW", "PREVIEW <game>", "resolve a copy; the results come to you only", "PREVIEW rc1"),
    GmCommandSpec("PAUSE", "PAUSE <game>", "stop deadlines until RESUME", "PAUSE rc1"),
    GmCommandSpec("RESUME", "RESUME <game>", "restart deadlines (the clock restarts from now)", "RESUME rc1"),
    GmCommandSpec("SET", "SET <game> <seat> <figure> <value>", "adjust a player's figure", "SET rc1 seb ep 6", 3, 3),
    GmCommandSpec("REPLACE", "REPLACE <game> <seat> <address> [name]", "hand a seat to a new player", "REPLACE rc1 kelly kim@example.org Kim", 2, None),
    GmCommandSpec("DROP", "DROP <game> <seat>", "remove a player from the game", "DROP rc1 steve", 1, 1),
    GmCommandSpec("ROLLBACK", "ROLLBACK <game>", "undo the last resolution and reopen that turn", "ROLLBACK rc1"),
    GmCommandSpec("OPEN", "OPEN <game>", "open the game for sign-ups (JOIN)", "OPEN rc2"),
    GmCommandSpec("START", "START <game>", "close sign-ups and start turn 1", "START rc2"),
)
GM_VERBS = {spec.verb: spec for spec in GM_COMMANDS}



@dataclass(frozen=True, slots=True)
class MailCommands:
    player: tuple[PlayerCommand, ...]
    gm: tuple[GmCommand, ...]
    orders_text: str  # every other line, in order ("" when none)
    problems: tuple[CommandProblem, ...]


def split_gm_args(spec: GmCommandSpec, words: list[str]) -> tuple[str, ...] | None:
    if spec.max_args is None:
        if len(words) < spec.min_args:
            return None
        head = words[: spec.min_args - 1]
        rest = " ".join(words[spec.min_args - 1 :])
        return (*head, rest)
    if not spec.min_args <= len(words) <= spec.max_args:
        return None
    if spec.verb == "DEADLINE":
        return (" ".join(words),)
    return tuple(words)


def parse_commands(text: str, *, gm_games: Collection[str] = ()) -> MailCommands:
    """Sort the lines of a mail into player commands, GM commands and orders."""
    player: list[PlayerCommand] = []
    gm: list[GmCommand] = []
    problems: list[CommandProblem] = []
    order_lines: list[str] = []
    gm_games = {g.lower() for g in gm_games}
    for raw_line in strip_password_lines(text).splitlines():
        line = raw_line.strip()
        if not line:
            order_lines.append("")
            continue
        words = line.split()
        verb = words[0].upper()
        command_class = _PLAYER_VERBS.get(verb)
        command = command_class.parse(line) if command_class is not None else None
        if isinstance(command, CommandProblem):
            problems.append(command)
            continue
        if command is not None:
            player.append(command)
            continue
        spec = GM_VERBS.get(verb)
        if spec is not None and len(words) >= 2 and words[1].lower() in gm_games:
            args = split_gm_args(spec, words[2:])
            if args is None:
                problems.append(CommandProblem(line, f"write {spec.syntax}, e.g. {spec.example}"))
            else:
                gm.append(GmCommand(verb, words[1].lower(), args, line))
            continue
        order_lines.append(raw_line.rstrip())
    orders_text = "\n".join(without_courtesies(order_lines)).strip("\n")
    return MailCommands(tuple(player), tuple(gm), orders_text, tuple(problems))


# Greetings before the orders and sign-offs after them are what people write around orders
# ("Hi Flagman, / USE 3 / Cheers, Steve"): they are left out quietly, not refused as orders
# (issue 17). Only at the top and the bottom, short, and never a word any game's orders use.
# What may follow the word: a few words in lower case or Capitalised ("Flagman", "all", "GM"),
# punctuation; never a digit or a word in capitals (orders are written so: "hi USE 3" is an
# order line with a greeting in it, refused with its reason as before, not dropped).
_REST = r"(?:[\s,!.:;~-]+(?:[A-Za-z][a-z'’]*|[A-Z]{1,2}))*[\s,!.:;~-]*"
_GREETING = re.compile(
    r"(?i:hi|hello|hey|hiya|dear|greetings|howdy|good\s+(?:morning|afternoon|evening|day))" + _REST)
_SIGN_OFF = re.compile(
    r"(?i:thanks|thank\s+you|thx|ty|cheers|ta|regards|best|best\s+regards|kind\s+regards|warm\s+regards|"
    r"all\s+the\s+best|many\s+thanks|sincerely|yours|good\s+luck|gl|see\s+you|bye|cu|br|hth)" + _REST)
_NAME = re.compile(r"[A-Z][a-z'.-]*(?:\s+[A-Z][a-z'.-]*){0,2}")  # "Steve", "Mary Ann": not "USE", not "OVERTAKE"


def without_courtesies(lines: list[str]) -> list[str]:
    """`lines` without the greeting lines that open them and the sign-off (and the name
    under it) that closes them; blank lines count as nothing either way."""
    start, end = 0, len(lines)
    while start < end and (not lines[start].strip() or _GREETING.fullmatch(lines[start].strip())):
        start += 1
    tail = end
    while tail > start and not lines[tail - 1].strip():
        tail -= 1
    if tail > start and _NAME.fullmatch(lines[tail - 1].strip()) and tail - 1 > start and _SIGN_OFF.fullmatch(
            lines[tail - 2].strip()):
        end = tail - 2  # "Cheers," then "Steve"
    elif tail > start and _SIGN_OFF.fullmatch(lines[tail - 1].strip()):
        end = tail - 1
    else:
        end = tail
    return lines[start:end]
