"""The orders a ROLLBACK keeps: those sent for the turn after the one it reopens.

A ROLLBACK of turn N discards turn N+1, which may hold orders already: a player's mail, the GM's
ORDER for a seat. They are not thrown away. `keep` takes each seat's set on file there, as
facts (`Kept`), and the reopened turn holds them (`Turn.carried`). When turn N resolves again,
`recheck` checks each against the corrected state: a set that stands is filed for the new turn
N+1 as it was sent (`Refiled`: the results say so), one that cannot stand is withdrawn
(`Withdrawn`, with the game's reason: the seat and the GM are told by name, the new turn's full
deadline ahead, and the audit log records it). Robots' orders are not kept: a robot orders
again from the corrected state (`bot.games.robots`).

Pure but for `keep`, which reads the discarded turn's submissions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from bot import store
from bot.clock import as_utc
from bot.games import robots
from bot.models import Game, OrderSubmission, Turn
from rules.api import AnyGame, GameState


@dataclass(frozen=True, slots=True)
class Kept:
    """A seat's set on file for a discarded turn, kept: its text (canonical), who entered it
    (`source`: "mail", the seat's own; "gm", the GM's ORDER), when it arrived, and the mail it
    came in (None for the GM's ORDER)."""

    seat: str
    text: str
    source: str
    received_at: datetime
    inbound_id: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "seat": self.seat,
            "text": self.text,
            "source": self.source,
            "received_at": as_utc(self.received_at).isoformat(),
            "inbound_id": self.inbound_id,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Kept:
        inbound = row.get("inbound_id")
        return cls(
            str(row["seat"]),
            str(row["text"]),
            str(row["source"]),
            datetime.fromisoformat(str(row["received_at"])),
            inbound if isinstance(inbound, int) else None,
        )


@dataclass(frozen=True, slots=True)
class Refiled:
    """Kept orders that stand against the corrected state: filed for the new turn."""

    kept: Kept
    label: str  # the new turn's


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """Kept orders that cannot stand: withdrawn, for `reason` (the game's words)."""

    kept: Kept
    label: str  # the turn they were sent for
    reason: str  # the game's reasons; "" when the seat has no orders to give in it (`needed`)
    needed: bool = True  # False: the corrected turn expects no orders of the seat (out, or not its turn)


@dataclass(frozen=True, slots=True)
class Recheck:
    """What became of a reopened turn's kept orders when it resolved again."""

    refiled: tuple[Refiled, ...] = ()
    withdrawn: tuple[Withdrawn, ...] = ()

    def of(self, seat: str) -> Refiled | Withdrawn | None:
        facts: list[Refiled | Withdrawn] = [*self.refiled, *self.withdrawn]
        return next((fact for fact in facts if fact.kept.seat == seat), None)

    def __bool__(self) -> bool:
        return bool(self.refiled or self.withdrawn)


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


__all__ = ["Kept", "Recheck", "Refiled", "Withdrawn", "keep", "of_turn", "recheck", "rows"]
