"""Hypothesis strategies for SpeedPhreakz: legal programs and whole random races.

The mails are drawn from what the game says is open now (`Race.allowed_rounds`, the start
squares, `restart_squares`), so every mail is legal by construction without re-implementing
the rules; a player may also stay silent and get the NMR default.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from rules.api import Resolution
from rules.speedphreakz import GAME
from rules.speedphreakz.data import chart
from rules.speedphreakz.model import (
    CarStatus,
    Colour,
    Heading,
    Order,
    Program,
    Race,
    Restart,
    Start,
)
from rules.speedphreakz.resolve import COLOURS, restart_squares

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal")
MOVES = tuple(a.code for a in chart().actions if not a.is_turn)
TURNS = tuple(a.code for a in chart().actions if a.is_turn)
headings = st.sampled_from(list(Heading))


@st.composite
def programs(draw: st.DrawFn, max_actions: int = 8) -> tuple[str, ...]:
    """A legal program: a movement first, never two turns in a row (§4.2)."""
    length = draw(st.integers(0, max_actions))
    actions: list[str] = []
    for _ in range(length):
        may_turn = bool(actions) and actions[-1] not in TURNS
        actions.append(draw(st.sampled_from(MOVES + TURNS if may_turn else MOVES)))
    return tuple(actions)


@st.composite
def mail(draw: st.DrawFn, state: Race, player: str) -> tuple[Order, ...]:
    """A legal mail for `player` now (possibly partial)."""
    car = state.car(player)
    orders: list[Order] = []
    if state.set_up:
        if draw(st.booleans()):
            orders.append(Colour(draw(st.sampled_from(COLOURS))))
        if draw(st.booleans()):
            orders.append(Start(draw(st.sampled_from(state.circuit.start_squares)), draw(headings)))
    elif car.status is CarStatus.CRASHED:
        squares = restart_squares(state, car)
        if len(squares) > 0 and draw(st.booleans()):
            orders.append(Restart(draw(st.sampled_from(squares)), draw(headings)))
    for round_no in state.allowed_rounds(player):
        if draw(st.integers(0, 4)) > 0:
            orders.append(Program(round_no, draw(programs(min(8, state.options.max_actions)))))
    return tuple(orders)


@dataclass(frozen=True)
class Turn:
    state: Race
    orders: dict[str, tuple[Order, ...]]
    seed: int
    resolution: Resolution[Race]


def play_random_race(data: Any, *, max_turns: int = 20) -> list[Turn]:
    """Draw and play a random race; every turn through `parse_orders` like the shell does."""
    count = data.draw(st.integers(2, 8), label="players")
    players = list(NAMES[:count])
    options = {
        "map": data.draw(st.sampled_from(["ring", "chicane"]), label="map"),
        "nmr": data.draw(st.sampled_from(["empty", "repeat"]), label="nmr"),
        "max_actions": str(data.draw(st.integers(4, 12), label="max_actions")),
    }
    state = GAME.new_game(players, options, random.Random(0))
    turns: list[Turn] = []
    for _ in range(data.draw(st.integers(1, max_turns), label="turns")):
        if GAME.is_finished(state):
            break
        orders: dict[str, tuple[Order, ...]] = {}
        for player in sorted(GAME.expected_players(state)):
            sent = data.draw(mail(state, player), label=f"mail {player}") if data.draw(st.integers(0, 5)) else None
            if sent is None:
                orders[player] = GAME.default_orders(state, player)
                continue
            parsed = GAME.parse_orders(state, player, GAME.format_orders(sent))
            assert parsed.ok, (GAME.format_orders(sent), parsed.problems)
            orders[player] = (
                parsed.orders
                if parsed.complete
                else GAME.merge_orders(GAME.default_orders(state, player), parsed.orders)
            )
        seed = data.draw(st.integers(0, 2**32), label="seed")
        resolution = GAME.resolve(state, orders, random.Random(seed))
        turns.append(Turn(state, orders, seed, resolution))
        state = resolution.state
    return turns
