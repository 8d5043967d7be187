"""The queries of games, seats, turns and submissions: read and look up, nothing else.

Every function here runs in the caller's session and transaction: none opens one, and none
writes (no add, no flush, no commit). A game's life (created, started, resolved, the tick)
is `bot.games.turns`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple, Protocol, TypeVar

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Select,
    Text,
    bindparam,
    cast,
    literal,
    null,
    select,
    text,
    union_all,
)
from sqlalchemy.orm import Session, contains_eager, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from bot import dice
from bot.db import among, model_table
from bot.models import Commitment, Game, Observer, OrderSubmission, Player, Seat, Turn
from rules.api import AnyGame, GameOrder, GameState

BySeat = Mapping[int, Sequence[OrderSubmission]]  # seat id -> the seat's submissions, oldest first


def find_game_row(session: Session, name: str, *, with_seats: bool = False) -> Game | None:
    """The game named `name`; `with_seats`: its seats and their players loaded with it (two
    more queries now rather than one per seat later, for code that goes through them all)."""
    query = select(Game).where(Game.name == name.lower())
    if with_seats:
        query = query.options(selectinload(Game.seats).selectinload(Seat.player))
    return session.scalar(query)


def find_games(session: Session, names: Iterable[str], *, with_seats: bool = False) -> dict[str, Game]:
    """The games of these names that exist: one query; `with_seats`: with their seats and
    players, three."""
    wanted = sorted({n.lower() for n in names})
    found: dict[str, Game] = {}
    query = select(Game).options(selectinload(Game.seats).selectinload(Seat.player)) if with_seats else select(Game)
    for start in range(0, len(wanted), 500):
        for game in session.scalars(query.where(Game.name.in_(wanted[start : start + 500]))):
            found[game.name] = game
    return found


def games_with_seats(session: Session, game_ids: Sequence[int]) -> dict[int, Game]:
    """The games of `game_ids` that exist, each with its seats (by id, as `Game.seats` orders
    them), every seat with its player and its game loaded: two queries (`among`: the games,
    then their seats joined to their players), and nothing left to load lazily.
    Game id -> its game."""
    keys = [(game_id,) for game_id in sorted(set(game_ids))]
    games: dict[int, Game] = {game.id: game for (game,) in among(session, select(Game), (Game.id,), keys)}
    seats: dict[int, list[Seat]] = {game_id: [] for game_id in games}
    query = select(Seat, Player).join(Player, Seat.player_id == Player.id)
    for seat, player in sorted(among(session, query, (Seat.game_id,), keys), key=lambda row: row[0].id):
        of = games.get(seat.game_id)
        if of is None:  # its game went in between (a session that is no snapshot)
            continue
        set_committed_value(seat, "player", player)
        set_committed_value(seat, "game", of)
        seats[of.id].append(seat)
    for game_id, game in games.items():
        set_committed_value(game, "seats", seats[game_id])
    return games


def seats_named(session: Session, wanted: Iterable[tuple[int, str]]) -> dict[tuple[int, str], Seat]:
    """The seats of these (game id, seat name) that exist, with their players: one query, and
    no more seats than those (a game's other seats are not loaded)."""
    found: dict[tuple[int, str], Seat] = {}
    query = select(Seat).join(Seat.player).options(contains_eager(Seat.player))
    for (seat,) in among(session, query, (Seat.game_id, Seat.name), list(wanted)):
        found[(seat.game_id, seat.name)] = seat
    return found


def open_turns(session: Session, games: Sequence[Game]) -> dict[int, Turn]:
    """`open_turn` of each of `games` in one query: game id -> its open turn (if any)."""
    ids = [g.id for g in games]
    turns: dict[int, Turn] = {}
    for start in range(0, len(ids), 500):
        for turn in session.scalars(
            select(Turn)
            .where(Turn.game_id.in_(ids[start : start + 500]), Turn.resolved_at.is_(None))
            .order_by(Turn.number)
        ):
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


T = TypeVar("T")


def read_ahead(
    session: Session, key: str, game_ids: Iterable[int], rows: Callable[[list[int]], Iterable[tuple[int, T]]]
) -> None:
    """What `rows` reads for each of `game_ids` ((game id, value) rows, 500 games a query),
    kept in the session's ``info`` under `key` for `read_back`. Only in a session that does
    not change those rows meanwhile: a read-only snapshot (`bot.games.deadline` works several due
    turns out on one)."""
    known: dict[int, list[T]] = session.info.setdefault(key, {})
    wanted = sorted(set(game_ids) - set(known))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        for game_id in chunk:
            known[game_id] = []
        for game_id, value in rows(chunk):
            known[game_id].append(value)


def read_back(session: Session, key: str, game_id: int, kind: type[T]) -> list[T] | None:
    """The values (of `kind`) `read_ahead` kept under `key` for `game_id`; None when it read none for it."""
    known: dict[int, list[T]] | None = session.info.get(key)
    return list(known[game_id]) if known is not None and game_id in known else None


_HISTORY = "flagman.history"  # Session.info: game id -> its turns by number (`read_ahead_turns`)


def game_turns(session: Session, game: Game) -> list[Turn]:
    """Every turn of `game`, by number (a picture's history), from `read_ahead_turns` when the
    session read them ahead."""
    known = read_back(session, _HISTORY, game.id, Turn)
    if known is not None:
        return known
    return list(session.scalars(select(Turn).where(Turn.game_id == game.id).order_by(Turn.number)))


def game_turns_read_ahead(session: Session, game_id: int) -> list[Turn]:
    """Every turn of game `game_id` by number as `read_ahead_turns` read them in this session;
    none when it did not read them."""
    return read_back(session, _HISTORY, game_id, Turn) or []


def read_ahead_logs(session: Session, game_ids: Iterable[int]) -> None:
    """Every commitment log of `game_ids` in one query, for `bot.dice.entries` in this snapshot
    (`read_ahead`)."""
    read_ahead(
        session,
        dice.LOGS,
        game_ids,
        lambda chunk: (
            (entry.game_id, entry)
            for entry in session.scalars(
                select(Commitment).where(Commitment.game_id.in_(chunk)).order_by(Commitment.game_id, Commitment.seq)
            )
        ),
    )


def read_ahead_turns(session: Session, game_ids: Iterable[int]) -> None:
    """Every turn of `game_ids` in one query, for `game_turns` in this snapshot (`read_ahead`)."""
    read_ahead(
        session,
        _HISTORY,
        game_ids,
        lambda chunk: (
            (turn.game_id, turn)
            for turn in session.scalars(select(Turn).where(Turn.game_id.in_(chunk)).order_by(Turn.game_id, Turn.number))
        ),
    )


def seat_named(game: Game, name: str) -> Seat | None:
    for seat in game.seats:
        if seat.name == name:
            return seat
    return None


def active_seats(game: Game) -> list[Seat]:
    return [s for s in game.seats if s.active]


def mailed_seats(game: Game) -> list[Seat]:
    """The active seats that get the game's mail: all but the robots (bot.games.robots)."""
    return [s for s in game.seats if s.active and not s.robot]


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
    return turns_submissions(session, [turn.id]).get(turn.id, {})


def turns_submissions(session: Session, turn_ids: Sequence[int]) -> dict[int, dict[int, list[OrderSubmission]]]:
    """`turn_submissions` of each of `turn_ids`, in one query per 500 turns: turn id -> seat id -> submissions."""
    found: dict[int, dict[int, list[OrderSubmission]]] = {}
    wanted = sorted(set(turn_ids))
    for start in range(0, len(wanted), 500):
        for sub in session.scalars(
            select(OrderSubmission)
            .where(OrderSubmission.turn_id.in_(wanted[start : start + 500]))
            .order_by(OrderSubmission.id)
        ):
            found.setdefault(sub.turn_id, {}).setdefault(sub.seat_id, []).append(sub)
    return found


class Filed(Protocol):
    """What the orders on file are made of (`turns.orders_on_file`): a submission's source and
    text, as an `OrderSubmission` has them, or a `FiledOrders` read alone."""

    @property
    def source(self) -> str: ...

    @property
    def text(self) -> str: ...


F = TypeVar("F", bound=Filed)


class FiledOrders(NamedTuple):
    source: str
    text: str


def seats_submissions(session: Session, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], list[FiledOrders]]:
    """The source and text of `submissions(turn, seat)` of each (turn id, seat id) pair, oldest
    first: one query (`among`; SQLite: per 500 pairs), and no ORM object per submission (a
    seat that has written ten times has ten)."""
    found: dict[tuple[int, int], list[FiledOrders]] = {pair: [] for pair in pairs}
    columns = select(
        OrderSubmission.turn_id, OrderSubmission.seat_id, OrderSubmission.source, OrderSubmission.text
    ).order_by(OrderSubmission.id)
    for turn_id, seat_id, source, orders in among(
        session, columns, (OrderSubmission.turn_id, OrderSubmission.seat_id), sorted(found)
    ):
        found[(turn_id, seat_id)].append(FiledOrders(source, orders))
    return found


# Made once: building a statement costs more than running it (bench: deadline). One query
# reads the inputs of several turns at once (a chunk of the tick's due turns; one turn a game):
# each row is its game's id, what it is, and the row's columns as text (the same text, the
# same value; nothing parsed), padded with NULLs to the widest. A process compiles each of the
# four once, and they are its largest statements (about 190 columns each): they are written so
# that compiling them costs half what it did, on the tables' own columns (no ORM step), one
# TEXT type for every cast (adapted to the dialect once) and a padding NULL without a cast (a
# UNION's column takes its type from its typed branches: the rows are the same).
_GAME_IDS: BindParameter[list[int]] = bindparam("game_ids", expanding=True)
_TURN_IDS: BindParameter[list[int]] = bindparam("turn_ids", expanding=True)
_GAME_ID: BindParameter[int] = bindparam("game_id")
_TURN_ID: BindParameter[int] = bindparam("turn_id")


_AS_TEXT = Text()  # one type for every cast: the dialect adapts it once, not once a column
_GAME, _TURN, _SEAT, _PLAYER, _SUBMISSION, _OBSERVER = (
    model_table(model) for model in (Game, Turn, Seat, Player, OrderSubmission, Observer)
)


def _inputs_query(*, lock: bool, one: bool) -> CompoundSelect[*tuple[object, ...]]:
    """The turn resolved with its game, the game's seats with their players, its turns (which,
    and whether resolved), the turn's submissions, the game's observers (each gets a copy of
    the results). `lock`: the turns' rows are locked (FOR UPDATE, on PostgreSQL) first. `one`:
    of one turn (``game_id`` and ``turn_id``: no list to expand into the statement each time it
    runs), else of the turns ``turn_ids`` of the games ``game_ids``."""

    def of_turns(column: ColumnElement[int]) -> ColumnElement[bool]:
        return column == _TURN_ID if one else column.in_(_TURN_IDS)

    def of_games(column: ColumnElement[int]) -> ColumnElement[bool]:
        return column == _GAME_ID if one else column.in_(_GAME_IDS)

    game, turn, seat, player, submission, observer = _GAME.c, _TURN.c, _SEAT.c, _PLAYER.c, _SUBMISSION.c, _OBSERVER.c
    turns = select(turn.id).where(of_turns(turn.id))
    if lock:
        turns = select(turns.with_for_update(of=_TURN).cte("locked").c.id)
    parts: list[tuple[Select[int], str, list[ColumnElement[Any]]]] = [
        (
            select(game.id).join(_TURN, turn.game_id == game.id).where(turn.id.in_(turns)),
            "1 game",
            [*game, *turn],
        ),
        (
            select(seat.game_id).join(_PLAYER, player.id == seat.player_id).where(of_games(seat.game_id)),
            "2 seat",
            [*seat, *player],
        ),
        (select(turn.game_id).where(of_games(turn.game_id)), "3 turn", [turn.id, turn.number, turn.resolved_at]),
        (
            select(turn.game_id).join(_SUBMISSION, submission.turn_id == turn.id).where(of_turns(submission.turn_id)),
            "4 submission",
            [submission.id],
        ),
        (
            select(observer.game_id).where(of_games(observer.game_id)),
            "5 observer",
            [observer.id, observer.address],
        ),
    ]
    width = max(len(columns) for _, _, columns in parts)
    return union_all(
        *(
            query.add_columns(
                literal(what).label("what"),
                *(cast(c, _AS_TEXT) for c in columns),
                *(null() for _ in range(width - len(columns))),
            )
            for query, what, columns in parts
        )
    ).order_by(text("1, 2, 3"))


_INPUTS = _inputs_query(lock=False, one=False)
_INPUTS_LOCKED = _inputs_query(lock=True, one=False)
_INPUTS_ONE = _inputs_query(lock=False, one=True)
_INPUTS_ONE_LOCKED = _inputs_query(lock=True, one=True)


def resolution_inputs(session: Session, game_id: int, turn_id: int, *, lock: bool = False) -> tuple[object, ...]:
    """Everything the resolution of turn `turn_id` and its results mails read from the
    database, as plain values: the game, the turn, the game's seats and their players, its
    other turns (which ones, and whether resolved), the turn's submissions, the game's
    observers. Equal values read at two moments mean nothing the resolution depends on
    changed in between (`bot.games.deadline` works a turn out on a snapshot and writes it only if its
    inputs are still the same). `lock`: on PostgreSQL, the turn's row is locked (FOR UPDATE)
    for the rest of the transaction."""
    params = {"game_id": game_id, "turn_id": turn_id}
    return _grouped(session.execute(_INPUTS_ONE_LOCKED if lock else _INPUTS_ONE, params)).get(game_id, ())


def resolution_inputs_of(
    session: Session, turns: Sequence[tuple[int, int]], *, lock: bool = False
) -> dict[int, tuple[object, ...]]:
    """`resolution_inputs` of each (game id, turn id) of `turns` (one turn per game), read
    together: one query for them all. Turn id -> its inputs."""
    params = {"game_ids": sorted({g for g, _ in turns}), "turn_ids": sorted({t for _, t in turns})}
    grouped = _grouped(session.execute(_INPUTS_LOCKED if lock else _INPUTS, params))
    return {turn_id: grouped.get(game_id, ()) for game_id, turn_id in turns}


def _grouped(rows: Iterable[Sequence[object]]) -> dict[object, tuple[object, ...]]:
    """The rows of an inputs query by game id: game id -> ((what, [its rows' columns]), ...)."""
    grouped: dict[object, dict[object, list[tuple[object, ...]]]] = {}
    for row in rows:
        grouped.setdefault(row[0], {}).setdefault(row[1], []).append(tuple(row[2:]))
    return {game_id: tuple(by_what.items()) for game_id, by_what in grouped.items()}


# A seat's own orders: by mail, the GM's ORDER for it, or a robot seat's (filed as its turn opens).
ROBOT_SOURCE = "robot"  # a robot seat's orders, filed as its turn opens (bot.games.robots)
SENT = ("mail", "gm", ROBOT_SOURCE)
# A player's CLEAR, WAIT and NOWAIT of a turn, kept as the turn's submissions (no
# orders in them), so that they belong to the turn and go with it (a ROLLBACK, the next turn).
CLEAR, WAIT, NOWAIT = "clear", "wait", "nowait"


def sent(subs: Sequence[F]) -> list[F]:
    """The seat's own submissions that count (oldest first): those sent since its last CLEAR."""
    start = max((i + 1 for i, sub in enumerate(subs) if sub.source == CLEAR), default=0)
    return [sub for sub in subs[start:] if sub.source in SENT]


def holds(subs: Sequence[Filed]) -> bool:
    """Whether the seat holds the turn to its deadline: its last WAIT is not lifted by a NOWAIT."""
    last = next((sub.source for sub in reversed(subs) if sub.source in (WAIT, NOWAIT)), None)
    return last == WAIT


def file_note(session: Session, turn: Turn, seat: Seat, source: str, text: str, now: datetime) -> None:
    """Keep a CLEAR, WAIT or NOWAIT (`source`) of `seat` with `turn`, written now (flushed): what
    comes after it reads it."""
    session.add(
        OrderSubmission(turn_id=turn.id, seat_id=seat.id, inbound_id=None, source=source, text=text, received_at=now)
    )
    session.flush()


def turn_waits(session: Session, turn: Turn) -> dict[str, list[FiledOrders]]:
    """Each seat's WAIT and NOWAIT of `turn`, oldest first, by seat name: all `holds` reads of a
    seat's submissions, in one query and no seat read (`bot.outlook.held_by`)."""
    found: dict[str, list[FiledOrders]] = {}
    rows = session.execute(
        select(Seat.name, OrderSubmission.source, OrderSubmission.text)
        .join(Seat, Seat.id == OrderSubmission.seat_id)
        .where(OrderSubmission.turn_id == turn.id, OrderSubmission.source.in_((WAIT, NOWAIT)))
        .order_by(OrderSubmission.id)
    )
    for name, source, body in rows:
        found.setdefault(name, []).append(FiledOrders(source, body))
    return found


def senders(session: Session, turn: Turn) -> set[int]:
    """The ids of the seats with orders sent for `turn` (any source in SENT: one query, no seat read)."""
    return set(
        session.scalars(
            select(OrderSubmission.seat_id)
            .where(OrderSubmission.turn_id == turn.id, OrderSubmission.source.in_(SENT))
            .distinct()
        )
    )


def orders_on_file(rules: AnyGame, state: GameState, seat: Seat, subs: Sequence[Filed]) -> tuple[GameOrder, ...] | None:
    """The seat's orders now: every valid submission since its last CLEAR folded with the game's
    merge rule; in a game where a later set replaces the earlier (`later_replaces`), the latest
    that holds an order, read from the newest back (the same result: one parse, not one per
    submission)."""
    valid = sent(subs)
    if not valid:
        return None
    if rules.later_replaces:
        for sub in reversed(valid):
            parsed = rules.parse_orders(state, seat.name, sub.text).orders
            if parsed:
                return parsed
        return ()
    merged: tuple[GameOrder, ...] | None = None
    for sub in valid:
        parsed = rules.parse_orders(state, seat.name, sub.text).orders
        merged = parsed if merged is None else rules.merge_orders(merged, parsed)
    return merged


def adds_a_part(
    rules: AnyGame, state: GameState, seat: str, earlier: tuple[GameOrder, ...], sent: tuple[GameOrder, ...]
) -> bool:
    """Whether a mail (a player's, or the GM's ORDER) the game's merge files alone adds to the
    complete set on file: it lacks what the turn needs (the set on file has it) and names no kind
    of order the set on file names ("TYRES OPTION" after a whole DESIGN). `with_the_rest` keeps
    the set on file only where the game takes both together now."""
    return (
        rules.is_complete(state, seat, earlier)
        and not rules.is_complete(state, seat, sent)
        and not {type(order) for order in earlier} & {type(order) for order in sent}
    )


def with_the_rest(
    rules: AnyGame, state: GameState, seat: str, earlier: tuple[GameOrder, ...], merged: tuple[GameOrder, ...]
) -> tuple[GameOrder, ...]:
    """The set after a mail that said "keep the rest": the mail's orders, and every order on file
    of a kind the mail did not send, when the game takes them together as a set now; else the
    mail's orders alone (the confirmation then says what is no longer on file)."""
    sent = {type(order) for order in merged}
    kept = [order for order in earlier if type(order) not in sent]
    if not kept:
        return merged
    together = rules.parse_orders(state, seat, rules.format_orders((*merged, *kept)))
    return together.orders if together.orders and not together.problems else merged
