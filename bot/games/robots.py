"""Robot drivers in games: seats the game's own robot drives.

A robot seat (`Seat.robot`) is held by the robots' player, whose "address" is `ROBOT_ADDRESS`:
not a mail address at all, so no door of the bot (every one asks `address_problem`) can take it,
no mail can claim it, and `bot.letters.post` never queues a letter to it. Its name is checked
like any player's (`turns.validate_name`).

**Its orders are on file as soon as a turn opens.** When a turn opens (the game starts, a turn
is resolved and the next opened, a seat is handed to a robot), each robot seat that has orders
to give gets the game's `robot_orders` for the state the turn opened with, filed as that seat's
own submission (source ``robot``, counted as sent: `store.SENT`). So early resolution waits only
for the people, STATUS and the digest count the robot as in, and `flagman replay` and the
record use the filed text, exactly.

**Its rng is fixed when the turn opens**: ``robot_rng(turn_seed(game.seed, n), seat)`` (both
`rules.api`), the game's seed drawn at creation and the turn's number. It never depends on the
turn's dice seed, which is worked out at resolution from the turn's secret and the orders used
(docs/DESIGN.md, "Dice anyone can check"): the robot's orders are part of those orders. A
ROLLBACK keeps the reopened turn's robot orders (the same numbers give the same orders).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.letters.words import say
from bot.mail_in.auth import new_secret
from bot.models import Game, OrderSubmission, Player, Seat, Turn
from bot.store import ROBOT_SOURCE
from rules.api import AnyGame, GameState, RobotLevel, robot_rng, turn_seed

ROBOT_ADDRESS = "robot"  # the robots' player: not a mail address, so nothing can be mailed to it or claim it
ROBOT_NAME = "robot"
ROBOT = ROBOT_SOURCE  # the source of a robot's filed orders (bot.store.SENT)


def robot_player(session: Session, now: datetime) -> Player:
    """The one player every robot seat belongs to (made on first use)."""
    player = session.scalar(select(Player).where(Player.address == ROBOT_ADDRESS))
    if player is None:
        player = Player(address=ROBOT_ADDRESS, name=ROBOT_NAME, timezone="UTC", created_at=now)
        session.add(player)
        session.flush()
    return player


def parse_robot(text: str) -> tuple[str, RobotLevel]:
    """A robot seat as `flagman game new --robot` names it: ``NAME`` or ``NAME:LEVEL`` (a
    `RobotLevel`, ``easy`` or ``normal``, any case); ValueError for an unknown level. The name
    is checked by the caller, as a player's."""
    name, colon, level = text.strip().partition(":")
    if not colon:
        return name, RobotLevel.NORMAL
    try:
        return name, RobotLevel(level.strip().lower())
    except ValueError:
        raise ValueError(
            say("game_refused", why="robot_level", robot=name, levels=[lv.value for lv in RobotLevel])
        ) from None


def add_robot(session: Session, game: Game, name: str, now: datetime, level: RobotLevel = RobotLevel.NORMAL) -> Seat:
    """A robot seat called `name` (checked by the caller, as a player's) in `game`, driving
    at `level`."""
    seat = Seat(
        game_id=game.id,
        name=name,
        player_id=robot_player(session, now).id,
        secret=new_secret(),
        active=True,
        nmr_streak=0,
        gm_plot=None,
        joined_at=now,
        robot=True,
        robot_level=level.value,
    )
    session.add(seat)
    session.flush()
    session.refresh(game)
    return seat


def level_of(seat: Seat) -> RobotLevel:
    """The level the seat's robot drives at (`Seat.robot_level`; normal if unreadable)."""
    try:
        return RobotLevel(seat.robot_level)
    except ValueError:
        return RobotLevel.NORMAL


def people_expected(game: Game, state: GameState, rules: AnyGame) -> bool:
    """Whether a person (a seat that is not a robot) has orders to give in the turn of `state`:
    early resolution waits for the people, so a turn only robots order in is not resolved early
    (it waits for its deadline, or the GM's PROCESS)."""
    expected = set(rules.expected_players(state))
    robots = {seat.name for seat in game.seats if seat.robot}
    return bool(expected - robots)


def robot_names(seats: Iterable[Seat]) -> list[str]:
    """The names of the robot seats among `seats`, for the templates (`shown`)."""
    return [seat.name for seat in seats if seat.robot]


def shown(name: str, robots: Iterable[str]) -> str:
    """A seat's name as standings and results show it: "robo (robot)" for a robot."""
    return f"{name} (robot)" if name in set(robots) else name


def orders_for(
    rules: AnyGame, game: Game, number: int, state: GameState, seats: Iterable[Seat], now: datetime
) -> list[dict[str, object]]:
    """The robot seats' orders for turn `number` of `game`, opened on `state`: a submission row
    (without its turn id) for each robot seat among `seats` that is in the race and has orders
    to give. Deterministic from the game's seed, the turn's number and the state."""
    expected = set(rules.expected_players(state))
    seats = list(seats)
    robots = frozenset(seat.name for seat in seats if seat.robot)
    rows: list[dict[str, object]] = []
    for seat in seats:
        if not seat.robot or not seat.active or seat.name not in expected:
            continue
        orders = rules.robot_orders(
            state, seat.name, robot_rng(turn_seed(game.seed, number), seat.name), level_of(seat), robots
        )
        rows.append(
            {
                "seat_id": seat.id,
                "inbound_id": None,
                "source": ROBOT,
                "text": rules.format_orders(orders),
                "received_at": now,
            }
        )
    return rows


def file_orders(
    session: Session, rules: AnyGame, game: Game, turn: Turn, state: GameState, seats: Iterable[Seat], now: datetime
) -> int:
    """File the robot seats' orders of `turn` now (`orders_for`); how many were filed."""
    rows = orders_for(rules, game, turn.number, state, seats, now)
    for row in rows:
        session.add(OrderSubmission(turn_id=turn.id, **row))
    if rows:
        session.flush()
    return len(rows)


def refile(session: Session, rules: AnyGame, game: Game, turn: Turn, state: GameState, now: datetime) -> int:
    """The GM changed the open turn's state (SET): each robot seat's orders are worked out again
    for the new state, after a CLEAR of its earlier ones (a robot's orders are always its own,
    from what it can see now). How many were filed."""
    rows = orders_for(rules, game, turn.number, state, game.seats, now)
    for row in rows:
        session.add(
            OrderSubmission(
                turn_id=turn.id, seat_id=row["seat_id"], inbound_id=None, source="clear", text="", received_at=now
            )
        )
        session.add(OrderSubmission(turn_id=turn.id, **row))
    if rows:
        session.flush()
    return len(rows)


__all__ = [
    "ROBOT",
    "ROBOT_ADDRESS",
    "ROBOT_NAME",
    "add_robot",
    "file_orders",
    "level_of",
    "orders_for",
    "parse_robot",
    "people_expected",
    "refile",
    "robot_names",
    "robot_player",
    "shown",
]
