"""The one builder of the context every letter's template starts from: the bot as its letters
sign (`bot_context`), a letter about a game (`game_context`: the bot, the game, its archive's
address), a turn's deadline as the reader reads it (`deadline_text`) and order lines quoted
as every letter quotes them (`orders_block`, the twin of the templates' macro). A template context
with a ``bot`` is built here and nowhere else (a test checks it)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from bot.letters.words import say
from bot.models import Game, Seat
from bot.outlook import Timing
from bot.schedules import format_local
from bot.shell import Shell
from rules.api import AnyGame


def bot_context(shell: Shell) -> dict[str, str]:
    """The bot as its letters sign: its name and its plain address."""
    return {"name": shell.settings.bot.name, "address": shell.settings.bot.address}


def game_context(shell: Shell, game: Game, rules: AnyGame) -> dict[str, Any]:
    """A letter about `game`: the bot, the game, and its archive's address ("" without one)."""
    return {
        "bot": bot_context(shell),
        "game": {"name": game.name, "title": rules.title, "kind": game.kind, "status": str(game.status)},
        # A practice game is not published (bot.games.archive.publish): no link to it.
        "archive_url": (shell.settings.bot.public_url.rstrip("/") + f"/{game.name}/")
        if shell.settings.bot.public_url and not game.practice
        else "",
    }


def practice_terms(shell: Shell, when: Timing) -> dict[str, int] | None:
    """What a practice race has in place of a GM and a deadline (`when`: the outlook's `Timing`
    of its turn), as its letters say it (`[practice]` settings, the ones the tick applies): the
    days without the person's orders after which it is closed, and the minutes a turn stays open
    at the least. None for any other game."""
    if not when.practice:
        return None
    terms = shell.settings.practice
    return {"idle_days": terms.idle_days, "turn_minutes": terms.turn_minutes}


def due_by(shell: Shell, when: Timing, zone: str) -> str:
    """When the open turn's orders are due (`when`: the outlook's `Timing`, the one the deadline
    resolves by), as a letter says it after "due" or "by": its deadline in `zone`; for a practice
    race, when the orders are in (it has no GM and no deadline: `practice_terms`); for any other
    game without a deadline, the GM's call."""
    text = deadline_text(when, zone)
    if text is not None:
        return text
    terms = practice_terms(shell, when)
    if terms is not None:
        return say("practice_due", **terms)
    return say("gm_call")


def deadline_text(when: Timing, zone: str) -> str | None:
    """The deadline of the outlook's `when` (`bot.outlook.timing`) in `zone`, as every letter
    writes it; None without one."""
    return format_local(when.due, zone) if when.due is not None else None


def time_in_words(delta: timedelta) -> str:
    """A stretch of time as the letters write it: "3 days" from 48 hours on, else hours (with
    the minutes under 10 hours, "1 hour 30 min"), else minutes; never below 0."""
    minutes = max(0, int(delta.total_seconds()) // 60)
    hours, minutes = divmod(minutes, 60)
    if hours >= 48:
        return f"{hours // 24} days"
    if hours:
        return f"{hours} hour{'s' if hours != 1 else ''}" + (f" {minutes} min" if minutes and hours < 10 else "")
    return f"{minutes} min"


def duration_in_words(delta: timedelta) -> str:
    """A stretch of time the GM gave (EXTEND), exactly, in words: "2 days", "1 day 12 hours",
    "1 hour 30 minutes" (the units of `bot.schedules.parse_duration`, none left out)."""
    minutes = max(0, int(delta.total_seconds()) // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [
        f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((days, "day"), (hours, "hour"), (minutes, "minute")) if n
    ]
    return " ".join(parts) or "0 minutes"


def orders_block(text: str) -> str:
    """Order lines quoted as every letter quotes them, ``    > LINE`` each (the templates'
    `orders_block` macro, for the letters written in code)."""
    return "\n".join("    > " + line for line in text.splitlines())


def seat_labels(seats: Iterable[Seat]) -> dict[str, str]:
    """How the letters name the seats that are not simply their player's (the templates'
    ``robots``, read by the ``robot`` and ``people`` filters of `bot.mail_out.render`): a robot
    seat as "robo (robot)", a seat the GM's REPLACE gave to another person as "anna (Kim
    McDonald)", the seat's name the rules and the orders know, then its holder's name as
    given. Every other seat is shown by its name alone (docs/DESIGN.md, "Seats that change
    hands")."""
    labels: dict[str, str] = {}
    for seat in seats:
        if seat.robot:
            labels[seat.name] = f"{seat.name} (robot)"
        elif seat.handed_over and seat.player.name.strip() and seat.player.name.strip() != seat.name:
            labels[seat.name] = f"{seat.name} ({seat.player.name.strip()})"
    return labels
