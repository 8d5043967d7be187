"""The CLI options that take a duration or a deadline schedule, read alike by every command.

Each is read by bot.schedules, the parser the mail commands use too (`parse_duration`
under all of them), and the entry gate's ratio: ``--grace`` of `game new` and `gm configure` by `parse_grace` (minutes,
``30``, or a duration, ``2h``), ``--deadline`` by `parse_schedule` (``48h``, ``daily 18:00``,
``manual``), ``--min-reliability`` by `rules.reliability.parse_minimum`. They are argparse types, so a bad value is refused while the arguments are
read, with the parser's message. Loaded when used, not when the parser is built: `flagman
play` must not import `bot.games` (tests/rules/test_play_cli.py).

A leaf of the CLI package: it imports no other `bot.cli` module.
"""

from __future__ import annotations

import argparse
from datetime import timedelta

# A turn shorter than this leaves the players no time to read their turn sheet and mail
# their orders back (mail can take minutes to arrive, and the poll runs every few); only
# with --force (a test game, a demo).
MIN_TURN = timedelta(hours=1)

GRACE_HELP = (
    "orders still accepted this long after each deadline: minutes (30) or a duration (30m, 2h); at most 365 days"
)
DEADLINE_HELP = (
    "48h, 3d, 1d12h, daily 18:00, mon,thu 18:00, or manual; a fixed time gives at least 12 hours' notice "
    "(the next such time 12 hours or more after the turn opens); a turn under an hour needs --force"
)
FORCE_HELP = "accept a turn under an hour (a test game): it leaves the players no time to mail their orders"


class TurnTooShort(ValueError):  # noqa: N818 - named for what happened, as Refused
    """A deadline schedule shorter than `MIN_TURN`, given without --force."""


def grace(text: str) -> int:
    """``--grace``: whole minutes, from a plain number of minutes or a duration."""
    from bot.letters.refusals import deadline_refused
    from bot.schedules import DeadlineError, parse_grace

    try:
        return parse_grace(text)
    except DeadlineError as exc:
        raise argparse.ArgumentTypeError(deadline_refused(exc.problem)) from None


def schedule(text: str) -> str:
    """``--deadline``: the schedule as written, once it is known to be one."""
    from bot.letters.refusals import deadline_refused
    from bot.schedules import DeadlineError, parse_schedule

    try:
        parse_schedule(text)
    except DeadlineError as exc:
        raise argparse.ArgumentTypeError(deadline_refused(exc.problem)) from None
    return text


def min_reliability(text: str) -> str:
    """``--min-reliability``: the entry gate's ratio as written (``0.8``, ``80%``), once it is
    known to be one from 0 to 1 (`rules.reliability.parse_minimum`)."""
    from rules.reliability import parse_minimum

    text = text.strip()
    try:
        parse_minimum(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(text) > 12:
        raise argparse.ArgumentTypeError("the minimum reliability is a short ratio, such as 0.8")
    return text


def min_reliability_or_off(text: str) -> str:
    """``gm configure --min-reliability``: a ratio, or ``off`` ("": the gate removed)."""
    return "" if text.strip().lower() == "off" else min_reliability(text)


def check_turn_length(spec: str, *, force: bool) -> None:
    """Refuse a schedule whose turns are shorter than `MIN_TURN`, unless forced."""
    from bot.schedules import parse_schedule, shown

    length = parse_schedule(spec).length
    if length is not None and length < MIN_TURN and not force:
        minutes = int(length.total_seconds()) // 60
        raise TurnTooShort(
            f"--deadline {shown(spec)}: a turn of {minutes} min leaves the players no time to mail "
            "their orders (at least an hour; mail takes minutes to arrive and to be read); "
            "give --force to use it all the same"
        )
