"""The claims a letter makes (`bot.facts.Claims`), built from the very outlook its words are
rendered from (`bot.outlook.what_counts`): which orders count for a seat and why, the turn's
deadline or its absence, and whether the turn is resolved. They travel with the letter
(`RenderedMail.claiming`) into its outbox row, never into the mail."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from bot import store
from bot.facts import Claims, Counts, Why
from bot.models import Game, Seat, Turn
from bot.outlook import Counts as Counting
from bot.outlook import Outlook, Source, timing, what_counts
from rules.api import AnyGame, GameOrder, GameState

_WHY = {Source.ON_FILE: Why.OWN, Source.PLOT: Why.PLOT, Source.DEFAULT: Why.DEFAULT}


def counts(seat: str, counting: Counting) -> Counts:
    """What `counting` (the outlook's, the letter's words' own) claims for `seat`."""
    return Counts(seat, counting.text, _WHY[counting.source])


def of_turn(
    game: Game,
    turn: Turn,
    *seat_counts: Counts,
    resolved: bool = False,
    seen: Outlook | None = None,
    early: bool | None = None,
) -> Claims:
    """The claims of a letter about the open `turn`: `seat_counts`, its deadline as it stands
    (the outlook's `Timing`: none while the game is paused), whether the letter says it is
    resolved, and whether it resolves early: from the turn's outlook `seen`, with whom it still
    waits for (`waiting`), or as `early` (the letter's own fact, `Outlook.resolves_early`,
    where it says no more)."""
    when = timing(game, turn)
    claim = Claims(
        game.name,
        turn.number,
        tuple(seat_counts),
        None if resolved else when.running,
        when.paused,
        resolved,
        early=None if resolved or when.practice else early,
    )
    return waiting(claim, game, turn, seen) if seen is not None and not resolved else claim


def waiting(claim: Claims, game: Game, turn: Turn, seen: Outlook) -> Claims:
    """`claim` with what the turn's outlook `seen` says of its early resolution: the seats it
    still waits for before it resolves early (`Outlook.waits_for`), or that only its deadline
    or the GM resolves it. A practice race's pace is its letters' own to say (not claimed)."""
    when = timing(game, turn)
    if when.practice:
        return claim
    waits = seen.waits_for(when)
    return dataclasses.replace(claim, waits_for=waits, early=waits is not None)


def of_outlook(game: Game, turn: Turn, seen: Outlook) -> Claims:
    """What a GM's block of the open `turn` claims (the digest, a GM's STATUS), from the outlook
    its lists are read from (`seen`): what counts for each expected seat at the deadline (its
    own set, filled as the resolution fills it; the GM's plot; the default), the deadline, and
    the seats the turn still waits for before it resolves early (`Outlook.waits_for`)."""
    said: list[Counts] = []
    if seen.rules is not None and seen.state is not None:
        for s in seen.seats:
            seat = store.seat_named(game, s.seat)
            if seat is not None:
                own = s.orders if s.source is Source.ON_FILE else None
                said.append(counts(s.seat, what_counts(seen.rules, seen.state, seat, own)))
    return of_turn(game, turn, *said, seen=seen)


def for_seat(
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    seat: Seat,
    on_file: Sequence[GameOrder] | None,
) -> tuple[Claims, ...]:
    """A letter to `seat` about the open `turn`: what counts for it (when the turn expects its
    orders) and the deadline; nothing without an open turn."""
    if turn is None or timing(game, turn).resolved:
        return ()
    if seat.name not in rules.expected_players(state):
        return (of_turn(game, turn),)
    return (of_turn(game, turn, counts(seat.name, what_counts(rules, state, seat, on_file))),)


__all__ = ["counts", "for_seat", "of_outlook", "of_turn", "waiting"]
