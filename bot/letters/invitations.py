"""A turn's deadline as an invitation in a seat's calendar: the event each turn sheet, results
mail or announcement that moves the deadline carries (RFC 5545 objects written by
`bot.mail_out.calendar`, which says how), with its words (the event's summary and description)
from templates/_common/words/calendar_*.txt.

* `seat_parts`: the REQUEST of the open turn's deadline on a turn sheet, or on a results mail
  that opens a turn the seat orders in; the CANCEL of a turn resolved before its deadline.
* `paused_parts`: the CANCEL of the open turn's deadline when the game is paused.

None for a player who turned the calendar off (``CALENDAR OFF``, `Player.calendar`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from bot.clock import as_utc
from bot.letters.words import say
from bot.mail_out.calendar import (
    CANCEL,
    REQUEST,
    DeadlineEvent,
    Sender,
    attendee_part,
    event_uid_of,
    part,
    reminder_marks,
    resolved_early,
)
from bot.mail_out.compose import CalendarPart
from bot.outlook import timing
from bot.schedules import format_local

if TYPE_CHECKING:  # models only for their attributes
    from bot.models import Game, Seat, Turn
    from rules.api import AnyGame, GameState


def turn_event(
    sender: Sender,
    now: datetime,
    game: Game,
    turn: Turn,
    seat: Seat,
    *,
    method: str = REQUEST,
    sequence: int | None = None,
) -> DeadlineEvent | None:
    """The deadline of `turn` as `seat`'s holder gets it; None when the turn has no deadline."""
    shared = shared_event(sender, now, game, turn, seat.player.timezone, method=method, sequence=sequence)
    if shared is None:
        return None
    return dataclasses.replace(shared, attendee=seat.player.address, attendee_name=seat.player.name)


def shared_event(
    sender: Sender,
    now: datetime,
    game: Game,
    turn: Turn,
    zone: str,
    *,
    method: str = REQUEST,
    sequence: int | None = None,
) -> DeadlineEvent | None:
    """The deadline of `turn` without its attendee, as the holders of its seats in `zone` get it
    (`_turn_event`: made once for them); None when the turn has no deadline."""
    deadline = timing(game, turn).due
    if deadline is None:
        return None
    base = turn.calendar_sequence or 0  # a turn not yet inserted (the next one) has None
    return _turn_event(
        sender,
        now,
        game.id,
        game.name,
        game.reminder_spec,
        turn.number,
        turn.label,
        deadline,
        zone,
        method,
        sequence if sequence is not None else base + (1 if method == CANCEL else 0),
    )


def _seat_part(
    sender: Sender, now: datetime, game: Game, turn: Turn, seat: Seat, filename: str, *, method: str = REQUEST
) -> CalendarPart | None:
    """The calendar object of `turn`'s deadline to `seat`'s holder (`turn_event`), its text but
    the attendee written once for the seats of the turn."""
    player = seat.player
    shared = shared_event(sender, now, game, turn, player.timezone, method=method)
    return attendee_part(shared, player.address, player.name, filename) if shared is not None else None


@lru_cache(maxsize=256)
def _turn_event(
    sender: Sender,
    now: datetime,
    game_id: int,
    game: str,
    reminder_spec: str,
    number: int,
    label: str,
    deadline: datetime,
    zone: str,
    method: str,
    sequence: int,
) -> DeadlineEvent:
    """A turn's deadline event without its attendee, as the holders of its seats in `zone` get it."""
    shown = format_local(deadline, zone)
    facts = {"game": game, "label": label, "due": shown, "zone": zone, "cancel": method == CANCEL}
    alarms = tuple(mark for mark in reminder_marks(reminder_spec) if deadline - mark > as_utc(now))
    return DeadlineEvent(
        uid=event_uid_of(game_id, game, number, sender.domain),
        sequence=sequence,
        stamp=now,
        deadline=deadline,
        summary=say("calendar_summary", **facts),
        description=say("calendar_description", **facts),
        organizer=sender.address,
        organizer_name=sender.name,
        attendee="",
        attendee_name="",
        alarms=alarms,
        method=method,
    )


def seat_parts(
    sender: Sender,
    now: datetime,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    seat: Seat,
    template: str,
    *,
    resolved: Turn | None = None,
    resolved_seats: Sequence[str] = (),
) -> tuple[CalendarPart, ...]:
    """The calendar objects of one seat's mail: the REQUEST of the open turn's deadline on a
    turn sheet or a results mail that opens a turn the seat orders in; the CANCEL of the turn
    just resolved, on its results (or final) mail, when it was resolved before its deadline and
    the seat was among those it waited for (`resolved_seats`). None for a player who turned
    the calendar off."""
    if not seat.player.calendar:
        return ()
    parts: list[CalendarPart] = []
    if template in ("turn_sheet", "results") and turn is not None and seat.name in rules.expected_players(state):
        opened = _seat_part(sender, now, game, turn, seat, f"{game.name}-turn-{turn.number}.ics")
        if opened is not None:
            parts.append(opened)
    if (
        template in ("results", "final")
        and resolved is not None
        and seat.name in resolved_seats
        and resolved_early(resolved)
    ):
        name = f"{game.name}-turn-{resolved.number}-cancelled.ics"
        cancelled = _seat_part(sender, now, game, resolved, seat, name, method=CANCEL)
        if cancelled is not None:
            parts.append(cancelled)
    return tuple(parts)


def paused_parts(
    sender: Sender, now: datetime, game: Game, rules: AnyGame, state: GameState, turn: Turn, seat: Seat
) -> tuple[CalendarPart, ...]:
    """The CANCEL of the open turn's deadline, for the seats it waits for, when the game is paused
    (PAUSE, ROLLBACK): no deadline runs; RESUME sends the event again, its SEQUENCE
    raised (the caller raises it for both)."""
    if not seat.player.calendar or seat.name not in rules.expected_players(state):
        return ()
    event = turn_event(sender, now, game, turn, seat, method=CANCEL)
    return (part(event, f"{game.name}-turn-{turn.number}-paused.ics"),) if event is not None else ()


__all__ = ["paused_parts", "seat_parts", "turn_event"]
