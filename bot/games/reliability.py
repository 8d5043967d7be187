"""A person's reliability record (docs/reliability.md), worked out from what the games hold.

Nothing is counted as it happens: each time a record is shown (``RECORD``) or a gate is checked
(``JOIN`` into a game with ``--min-reliability``) it is worked out again by `rules.reliability`
from the record of every game the person held a seat in:

* the turns they held a seat for: every resolved turn with orders filed for the seat (the
  person's own, the GM's ``ORDER``, or the default at resolution), the seat's holder at that
  turn given by its `SeatChange` rows (`holder_at`). A ``ROLLBACK`` deletes the defaults it
  discards and reopens the turn, so a rolled-back turn counts for nobody until it resolves again;
* on time: the person's own orders (by mail) filed for it since they held the seat (a late mail
  is refused, never filed); an NMR: the default or the GM's plot was filed instead;
* abandoned: their `SeatChange` rows of why ``resigned`` or ``nmr limit``;
* substitute: the seats they took over from the bench (`SeatChange` of why ``substitute``).

Practice games count for nothing, nor do the turns a game's GM held a seat for (the NMR
limit's hand-over to the GM).

`note_change` writes a seat's change of holder; the GM's commands, RESIGN, the NMR limit and
the bench call it wherever a seat leaves its holder in a game under way.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from fractions import Fraction

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from bot.clock import as_utc
from bot.models import ChangeWhy, Game, OrderSubmission, Player, Seat, SeatChange, Turn
from rules.reliability import HeldTurn, Reliability, admits, parse_minimum, record_of

_OWN = "mail"  # the person's own orders
_NMR = ("default", "plot")  # filed for them at resolution


def note_change(
    session: Session, seat: Seat, turn: int, why: ChangeWhy, successor: Player | None, now: datetime
) -> SeatChange:
    """The seat leaves its holder now (`turn`: the number of the turn open), to `successor`
    (None: the seat is closed). Call before the seat's player is changed."""
    change = SeatChange(
        seat_id=seat.id,
        game_id=seat.game_id,
        player_id=seat.player_id,
        successor_id=successor.id if successor is not None else None,
        turn=turn,
        at=now,
        why=why.value,
    )
    session.add(change)
    session.flush()
    return change


def holder_at(seat: Seat, changes: list[SeatChange], number: int) -> tuple[int, datetime | None]:
    """Who held `seat` at turn `number` (`changes`: the seat's, in the order made), and since
    when, if they came by a change (None: they held it from the start)."""
    since: datetime | None = None
    for change in changes:
        if change.turn > number:
            return change.player_id, since
        since = as_utc(change.at)
    return seat.player_id, since


def moved(session: Session, seats: list[Seat], old: Player, new: Player) -> None:
    """The seats moved from address `old` to `new` (ADDRESS): their record goes with them."""
    ids = [s.id for s in seats]
    if not ids:
        return
    for change in session.scalars(select(SeatChange).where(SeatChange.seat_id.in_(ids))):
        if change.player_id == old.id:
            change.player_id = new.id
        if change.successor_id == old.id:
            change.successor_id = new.id


def record(session: Session, player: Player) -> Reliability:
    """The reliability record of `player`, as the games hold it now."""
    changed = list(
        session.scalars(
            select(SeatChange)
            .where(or_(SeatChange.player_id == player.id, SeatChange.successor_id == player.id))
            .order_by(SeatChange.id)
        )
    )
    seat_ids = {c.seat_id for c in changed} | set(session.scalars(select(Seat.id).where(Seat.player_id == player.id)))
    seats = {
        seat.id: seat
        for seat in session.scalars(select(Seat).join(Game, Game.id == Seat.game_id).where(Seat.id.in_(seat_ids)))
        if not seat.game.practice and seat.game.gm_address != player.address
    }
    changes: dict[int, list[SeatChange]] = defaultdict(list)
    if seats:
        for change in session.scalars(
            select(SeatChange).where(SeatChange.seat_id.in_(list(seats))).order_by(SeatChange.id)
        ):
            changes[change.seat_id].append(change)
    filed: dict[tuple[int, int], list[tuple[str, datetime]]] = defaultdict(list)
    if seats:
        rows = session.execute(
            select(OrderSubmission.seat_id, Turn.number, OrderSubmission.source, OrderSubmission.received_at)
            .join(Turn, Turn.id == OrderSubmission.turn_id)
            .where(OrderSubmission.seat_id.in_(list(seats)), Turn.resolved_at.is_not(None))
        )
        for seat_id, number, source, received_at in rows:
            filed[(seat_id, number)].append((source, as_utc(received_at)))
    held: list[HeldTurn] = []
    games: set[int] = set()
    for (seat_id, number), subs in sorted(filed.items()):
        seat = seats[seat_id]
        who, since = holder_at(seat, changes[seat_id], number)
        if who != player.id:
            continue
        own = any(source == _OWN and (since is None or at >= since) for source, at in subs)
        held.append(HeldTurn(on_time=own, nmr=not own and any(source in _NMR for source, _ in subs)))
        games.add(seat.game_id)
    mine = [c for c in changed if c.seat_id in seats]
    abandoned = sum(1 for c in mine if c.player_id == player.id and c.why in (ChangeWhy.RESIGNED, ChangeWhy.NMR_LIMIT))
    substituted = sum(1 for c in mine if c.successor_id == player.id and c.why == ChangeWhy.SUBSTITUTE)
    return record_of(held, abandoned=abandoned, substituted=substituted, games=len(games))


def gate(game: Game) -> Fraction | None:
    """The game's entry gate (None: none)."""
    return parse_minimum(game.min_reliability) if game.min_reliability else None


def let_in(session: Session, game: Game, address: str) -> tuple[bool, Reliability]:
    """Whether the person at `address` passes the game's entry gate, and their record (a
    person the bot has never seen has none, and passes; without a gate, an empty one)."""
    minimum = gate(game)
    if minimum is None:
        return True, Reliability()  # no gate: the record is not needed
    player = session.scalar(select(Player).where(Player.address == address.strip().lower()))
    found = record(session, player) if player is not None else Reliability()
    return admits(found, minimum), found


__all__ = ["gate", "holder_at", "let_in", "moved", "note_change", "record"]
