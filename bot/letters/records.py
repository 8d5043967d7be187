"""The words of a mail's record that the code gives as typed facts: a command's label (the
"commands: ..." line of the GM's digest and `flagman gm audit`) and why the ignore policy
passed a mail by (`bot.mail_in.parse.Ignore`).

Code outside `bot/letters/` gives the command's name, its values as the mail gave them (a game,
a seat, a zone) and what came of it (`Came`); the template ``command_label`` says it. The
parser gives the ignore policy's reason and the header value that decided it (`Ignore`); the
template ``ignore_detail`` says it, quoting the value as the parser made it safe (one printable
line, capped).
"""

from __future__ import annotations

import enum

from bot.letters.words import say
from bot.mail_in.parse import Ignore, IgnoreWhy
from bot.safe_text import echo

# The reasons whose whole line the parser echoed (bot.safe_text.echo), the addresses in it.
_FRAMED = frozenset({IgnoreWhy.SEVERAL_FROMS, IgnoreWhy.SEVERAL_MAILBOXES})


class Came(enum.Enum):
    """What came of a command, as its label says it (``command_label``)."""

    PLAIN = "plain"  # the command and its values, nothing after
    DONE = "done"
    REFUSED = "refused"
    ASKED = "asked"  # a confirmation code was mailed: the command waits for it
    TAKEN = "taken"  # a seat offered from the bench, taken
    NOTHING = "nothing"  # nothing to do
    NEXT_SEASON = "next_season"  # entered for the series' next season
    NOTHING_TO_HOLD = "nothing_to_hold"
    NOTHING_TO_LIFT = "nothing_to_lift"
    RESOLVES = "resolves"  # the last hold lifted: the turn resolves
    SEAT = "seat"  # values: the game, then the seat taken
    PRACTICE_RACE = "practice_race"  # refused: a practice race has no holds
    WANTS_PROOF = "wants_proof"  # refused: the setting wants a proven mail
    OBSERVER = "observer"  # an observer's subscription
    REMINDERS = "reminders"  # a seat's reminders


def command_label(verb: str, *values: object, came: Came = Came.PLAIN, on: bool | None = None) -> str:
    """A command's label for the mail's record: `verb` (the command's name), ON or OFF where the
    command switches something (`on`), its `values` and what came of it."""
    return say("command_label", verb=verb, on=on, values=[str(v) for v in values], came=came.value)


def ignore_detail(ignore: Ignore | None) -> str:
    """Why the ignore policy passed a mail by, for its record and the log: the reason and the
    header value that decided it, one printable line ("" for a mail not ignored)."""
    if ignore is None:
        return ""
    words = say(
        "ignore_detail",
        why=ignore.why.value,
        header=ignore.header,
        value=ignore.value,
        count=ignore.count,
        addresses=list(ignore.addresses),
        more=ignore.more,
        ours=ignore.ours,
    )
    # The addresses of a From that names several are quoted as the mail gave them: the whole
    # line is one printable line, capped (bot.safe_text.echo).
    return echo(words) if ignore.why in _FRAMED else words


__all__ = ["Came", "command_label", "ignore_detail"]
