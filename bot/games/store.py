"""The queries of games, seats, turns and submissions: read and look up, nothing else.

Every function here runs in the caller's session and transaction: none opens one, and none
writes (no add, no flush, no commit). A game's life (created, started, resolved, the tick)
is `bot.games.turns`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from bot.models import Game, OrderSubmission, Seat, Turn

BySeat = Mapping[int, Sequence[OrderSubmission]]  # seat id -> the seat's submissions, oldest first


def find_game_row(session: Session, name: str, *, with_seats: bool = False) -> Game | None:
    """The game named `name`; `with_seats`: its seats and their players loaded with it (two
    more queries now rather than one per seat later, for code that goes through them all)."""
    query = select(Game).where(Game.name == name.lower())
    if with_seats:
        query = query.options(selectinload(Game.seats).selectinload(Seat.player))
    return session.scalar(query)


def find_games_with_seats(session: Session, names: Iterable[str]) -> dict[str, Game]:
    """The games of these names that exist, with their seats and players: three queries."""
    wanted = sorted({n.lower() for n in names})
    found: dict[str, Game] = {}
    for start in range(0, len(wanted), 500):
        for game in session.scalars(select(Game).where(Game.name.in_(wanted[start:start + 500]))
                                    .options(selectinload(Game.seats).selectinload(Seat.player))):
            found[game.name] = game
    return found


def open_turns(session: Session, games: Sequence[Game]) -> dict[int, Turn]:
    """`open_turn` of each of `games` in one query: game id -> its open turn (if any)."""
    ids = [g.id for g in games]
    turns: dict[int, Turn] = {}
    for start in range(0, len(ids), 500):
        for turn in session.scalars(select(Turn).where(Turn.game_id.in_(ids[start:start + 500]),
                                                       Turn.resolved_at.is_(None)).order_by(Turn.number)):
            turns[turn.game_id] = turn  # the highest-numbered, as open_turn
    return turns


def open_turn(session: Session, game: Game) -> Turn | None:
    """The turn now collecting orders (the highest-numbered unresolved one)."""
    return session.scalar(
        select(Turn).where(Turn.game_id == game.id, Turn.resolved_at.is_(None)).order_by(Turn.number.desc()).limit(1)
    )


def last_resolved_turn(session: Session, game: Game) -> Turn | None:
    return session.scalar(
        select(Turn).where(Turn.game_id == game.id, Turn.resolved_at.is_not(None)).order_by(Turn.number.desc()).limit(1)
    )


def seat_named(game: Game, name: str) -> Seat | None:
    for seat in game.seats:
        if seat.name == name:
            return seat
    return None


def active_seats(game: Game) -> list[Seat]:
    return [s for s in game.seats if s.active]


def submissions(session: Session, turn: Turn, seat: Seat) -> list[OrderSubmission]:
    return list(
        session.scalars(
            select(OrderSubmission)
            .where(OrderSubmission.turn_id == turn.id, OrderSubmission.seat_id == seat.id)
            .order_by(OrderSubmission.id)
        )
    )


def turn_submissions(session: Session, turn: Turn) -> dict[int, list[OrderSubmission]]:
    """Every seat's submissions for `turn` in one query: seat id -> `submissions(turn, seat)`."""
    by_seat: dict[int, list[OrderSubmission]] = {}
    for sub in session.scalars(select(OrderSubmission).where(OrderSubmission.turn_id == turn.id).order_by(OrderSubmission.id)):
        by_seat.setdefault(sub.seat_id, []).append(sub)
    return by_seat


def seats_submissions(session: Session, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], list[OrderSubmission]]:
    """`submissions(turn, seat)` of each (turn id, seat id) pair, in one query per 500 pairs."""
    found: dict[tuple[int, int], list[OrderSubmission]] = {pair: [] for pair in pairs}
    wanted = sorted(found)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        # A seat's submissions are all for turns of its own game, which has one open turn:
        # turns x seats asks for no pair but the ones wanted (the check below keeps it so).
        query = (select(OrderSubmission)
                 .where(OrderSubmission.turn_id.in_(sorted({t for t, _ in chunk})),
                        OrderSubmission.seat_id.in_(sorted({s for _, s in chunk})))
                 .order_by(OrderSubmission.id))
        for sub in session.scalars(query):
            if (sub.turn_id, sub.seat_id) in found:
                found[(sub.turn_id, sub.seat_id)].append(sub)
    return found
