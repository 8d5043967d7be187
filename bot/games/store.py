"""The queries of games, seats, turns and submissions: read and look up, nothing else.

Every function here runs in the caller's session and transaction: none opens one, and none
writes (no add, no flush, no commit). A game's life (created, started, resolved, the tick)
is `bot.games.turns`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import JSON, BindParameter, ColumnElement, FromClause, Text, bindparam, cast, select
from sqlalchemy.orm import Session, selectinload

from bot.models import Game, OrderSubmission, Player, Seat, Turn

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


def turns_submissions(session: Session, turn_ids: Sequence[int]) -> dict[int, dict[int, list[OrderSubmission]]]:
    """`turn_submissions` of each of `turn_ids`, in one query per 500 turns: turn id -> seat id -> submissions."""
    found: dict[int, dict[int, list[OrderSubmission]]] = {}
    wanted = sorted(set(turn_ids))
    for start in range(0, len(wanted), 500):
        for sub in session.scalars(select(OrderSubmission).where(OrderSubmission.turn_id.in_(wanted[start:start + 500]))
                                   .order_by(OrderSubmission.id)):
            found.setdefault(sub.turn_id, {}).setdefault(sub.seat_id, []).append(sub)
    return found


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


def _as_read(table: FromClause) -> list[ColumnElement[Any]]:
    """A table's columns, JSON ones as their text (the same text, the same value; nothing parsed)."""
    return [cast(c, Text) if isinstance(c.type, JSON) else c for c in table.columns]


# Made once: building a statement costs more than running it (bench: deadline). Each query
# reads the inputs of several turns at once (a chunk of the tick's due turns): the rows are
# grouped by their first column (the game's or the turn's id), which is not part of the inputs.
_GAME_IDS: BindParameter[list[int]] = bindparam("game_ids", expanding=True)
_TURN_IDS: BindParameter[list[int]] = bindparam("turn_ids", expanding=True)
_INPUTS = (
    (select(Game.id, *_as_read(Game.__table__)).where(Game.id.in_(_GAME_IDS)), "game"),
    (select(Seat.game_id, *_as_read(Seat.__table__), *_as_read(Player.__table__)).join(Player, Player.id == Seat.player_id)
     .where(Seat.game_id.in_(_GAME_IDS)).order_by(Seat.game_id, Seat.id), "game"),
    (select(Turn.game_id, Turn.id, Turn.number, Turn.resolved_at).where(Turn.game_id.in_(_GAME_IDS))
     .order_by(Turn.game_id, Turn.id), "game"),
    (select(OrderSubmission.turn_id, OrderSubmission.id).where(OrderSubmission.turn_id.in_(_TURN_IDS))
     .order_by(OrderSubmission.turn_id, OrderSubmission.id), "turn"),
)
_TURNS = select(Turn.id, *_as_read(Turn.__table__)).where(Turn.id.in_(_TURN_IDS)).order_by(Turn.id)
_TURNS_LOCKED = _TURNS.with_for_update()


def resolution_inputs(session: Session, game_id: int, turn_id: int, *, lock: bool = False) -> tuple[object, ...]:
    """Everything the resolution of turn `turn_id` and its results mails read from the
    database, as plain values: the game, its seats and their players, the turn, the game's
    other turns (which ones, and whether resolved), the turn's submissions. Equal values read
    at two moments mean nothing the resolution depends on changed in between (`turns.tick`
    works a turn out on a snapshot and writes it only if its inputs are still the same).
    `lock`: on PostgreSQL, the turn's row is locked (FOR UPDATE) for the rest of the transaction."""
    return resolution_inputs_of(session, [(game_id, turn_id)], lock=lock)[turn_id]


def resolution_inputs_of(session: Session, turns: Sequence[tuple[int, int]], *,
                         lock: bool = False) -> dict[int, tuple[object, ...]]:
    """`resolution_inputs` of each (game id, turn id) of `turns` (one turn per game), read
    together: five queries for them all. Turn id -> its inputs."""
    params = {"game_ids": sorted({g for g, _ in turns}), "turn_ids": sorted({t for _, t in turns})}
    by_game: list[dict[object, list[tuple[object, ...]]]] = []
    for query, _key in _INPUTS:
        grouped: dict[object, list[tuple[object, ...]]] = {}
        for row in session.execute(query, params):
            grouped.setdefault(row[0], []).append(tuple(row[1:]))
        by_game.append(grouped)
    turn_rows: dict[object, list[tuple[object, ...]]] = {}
    for row in session.execute(_TURNS_LOCKED if lock else _TURNS, params):
        turn_rows.setdefault(row[0], []).append(tuple(row[1:]))
    return {turn_id: (*(tuple(grouped.get(game_id if key == "game" else turn_id, ()))
                        for grouped, (_query, key) in zip(by_game, _INPUTS, strict=True)),
                      tuple(turn_rows.get(turn_id, ())))
            for game_id, turn_id in turns}
