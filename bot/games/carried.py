"""The orders a ROLLBACK keeps: those sent for the turn after the one it reopens.

A ROLLBACK of turn N discards turn N+1, which may hold orders already: a player's mail, the GM's
ORDER for a seat. They are not thrown away. `keep` takes each seat's set on file there, as
facts (`Kept`), and the reopened turn holds them (`Turn.carried`). When turn N resolves again,
`recheck` checks each against the corrected state: a set that stands is filed for the new turn
N+1 as it was sent (`Refiled`: the results say so), one that cannot stand is withdrawn
(`Withdrawn`, with the game's reason: the seat and the GM are told by name, the new turn's full
deadline ahead, and the audit log records it). Robots' orders are not kept: a robot orders
again from the corrected state (`bot.games.robots`).

The facts are `bot.facts`'s (the letters render them). Pure but for `keep`, which reads the
discarded turn's submissions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.orm import Session

from bot import store
from bot.clock import as_utc
from bot.facts import Kept, Recheck, Refiled, Withdrawn
from bot.games import robots
from bot.models import Game, OrderSubmission, Turn
from rules.api import AnyGame, GameState


def keep(session: Session, game: Game, rules: AnyGame, discarded: Turn) -> list[Kept]:
    """Each seat's set on file for `discarded` (a turn a ROLLBACK is about to delete) that a
    person entered, by mail or the GM's ORDER, in seat order."""
    state = rules.load_state(discarded.state)
    subs = store.turn_submissions(session, discarded)
    out: list[Kept] = []
    for seat in sorted(game.seats, key=lambda s: s.name):
        if seat.robot:
            continue
        own = [s for s in store.sent(subs.get(seat.id, ())) if s.source != robots.ROBOT]
        on_file = store.orders_on_file(rules, state, seat, own) if own else None
        if on_file is None:
            continue
        last = max(own, key=lambda s: (as_utc(s.received_at), s.id))
        inbound = last.inbound_id if isinstance(last, OrderSubmission) else None
        out.append(Kept(seat.name, rules.format_orders(on_file), last.source, as_utc(last.received_at), inbound))
    return out


def recheck(rules: AnyGame, game: Game, state: GameState, label: str, kept: Sequence[Kept]) -> Recheck:
    """`kept` checked against `state`, the corrected state the new turn `label` opens on: a
    set the game's parser takes whole, for a seat that turn expects, stands."""
    expected = set(rules.expected_players(state))
    active = {s.name for s in game.seats if s.active}
    refiled: list[Refiled] = []
    withdrawn: list[Withdrawn] = []
    for item in kept:
        if item.seat not in active or item.seat not in expected:
            withdrawn.append(Withdrawn(item, label, "", needed=False))
            continue
        parsed = rules.parse_orders(state, item.seat, item.text)
        if parsed.problems or not parsed.orders:
            reason = "; ".join(p.reason for p in parsed.problems)
            withdrawn.append(Withdrawn(item, label, reason))
        else:
            refiled.append(Refiled(item, label))
    return Recheck(tuple(refiled), tuple(withdrawn))


def rows(game: Game, recheck_: Recheck, now: datetime) -> list[dict[str, object]]:
    """The submissions the refiled orders are filed as (no turn id yet: the new turn's)."""
    out: list[dict[str, object]] = []
    for fact in sorted(recheck_.refiled, key=lambda f: f.kept.received_at):
        seat = store.seat_named(game, fact.kept.seat)
        if seat is None:
            continue
        out.append(
            {
                "seat_id": seat.id,
                "inbound_id": fact.kept.inbound_id,
                "source": fact.kept.source,
                "text": fact.kept.text,
                "received_at": now,
            }
        )
    return out


def of_turn(turn: Turn) -> list[Kept]:
    return [Kept.from_json(row) for row in turn.carried or ()]


__all__ = ["keep", "of_turn", "recheck", "rows"]
