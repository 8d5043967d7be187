"""Hypothesis strategies for Racecraft, and small helpers to set up a race.

`racecraft_scripts()` draws random *legal* games as `flagman play` scripts: for each turn it
asks the game itself which orders are legal now (EP, stage), so the script is legal by
construction without re-implementing any rule here. `replay` walks a script through the game
one turn at a time, for properties that need every intermediate state.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from rules.api import Resolution, turn_rng
from rules.racecraft import GAME
from rules.racecraft.model import Cruise, Order, Overtake, Race, Runner, Stage, Use

NAMES = ("kelly", "seb", "steve", "roger", "ann", "bo", "cy", "di", "ed", "flo")

SPELLINGS_USE = ("USE {n}", "use {n}", "A {n}", "a {n}", "{n}", "BID {n}", "bid {n}", "Use {n} EP")
SPELLINGS_CRUISE = ("CRUISE", "cruise", "Cruise", "B", "b")
SPELLINGS_OVERTAKE = ("OVERTAKE", "overtake", "Overtake", "C", "c")


def make_race(
    positions: list[list[str]],
    ep: Mapping[str, int] | int = 10,
    *,
    turn: int = 2,
    turns: int = 5,
) -> Race:
    """A race set up by hand: positions front first; EP per runner (or one for all)."""
    names = [name for position in positions for name in position]

    def ep_of(name: str) -> int:
        return ep if isinstance(ep, int) else ep[name]

    return Race(
        runners=tuple(Runner(name, ep_of(name)) for name in names),
        positions=tuple(tuple(sorted(position)) for position in positions),
        turns=turns,
        turn=turn,
    )


def legal_orders(race: Race, player: str) -> list[Order]:
    """Every order `player` may give now, as the game's own parser accepts them."""
    candidates: list[Order] = [*(Use(n) for n in range(0, 11)), Cruise(), Overtake()]
    return [order for order in candidates if GAME.parse_orders(race, player, GAME.format_orders([order])).ok]


@st.composite
def spelled(draw: st.DrawFn, order: Order) -> str:
    """One of the accepted spellings of `order`, maybe with blank lines around it."""
    if isinstance(order, Use):
        text = draw(st.sampled_from(SPELLINGS_USE)).format(n=order.ep)
    elif isinstance(order, Cruise):
        text = draw(st.sampled_from(SPELLINGS_CRUISE))
    else:
        text = draw(st.sampled_from(SPELLINGS_OVERTAKE))
    before = draw(st.sampled_from(("", "\n", "  \n")))
    after = draw(st.sampled_from(("", "\n", "\n\n")))
    return before + text + after


@st.composite
def racecraft_scripts(draw: st.DrawFn, *, nmr: bool = True) -> dict[str, Any]:
    """A random legal `flagman play` script for Racecraft (players 5..8, turns 3..9).

    Some players are left out of some turns (their NMR default applies) when `nmr` is true.
    The script may stop before the race is over.
    """
    count = draw(st.integers(5, 8))
    players = draw(st.permutations(NAMES))[:count]
    turns = draw(st.integers(3, 9))
    options: dict[str, Any] = {"turns": draw(st.sampled_from((turns, str(turns))))}
    seed = draw(st.integers(0, 2**32))
    race = GAME.new_game(players, {"turns": str(turns)}, turn_rng(seed, 0))
    scripted = draw(st.integers(0, turns - 1))
    script_turns: list[dict[str, str]] = []
    for number in range(1, scripted + 1):
        orders: dict[str, str] = {}
        chosen: dict[str, tuple[Order, ...]] = {}
        for player in GAME.players(race):
            if nmr and draw(st.integers(0, 9)) == 0:
                continue  # no orders received: the default applies
            order = draw(st.sampled_from(legal_orders(race, player)))
            orders[player] = draw(spelled(order))
            chosen[player] = (order,)
        script_turns.append(orders)
        full = {p: chosen.get(p, GAME.default_orders(race, p)) for p in GAME.expected_players(race)}
        race = GAME.resolve(race, full, turn_rng(seed, number)).state
    return {"players": list(players), "options": options, "seed": seed, "turns": script_turns}


@dataclass(frozen=True)
class Step:
    """One resolved turn of a replay: the state before, the orders used, the resolution."""

    before: Race
    orders: dict[str, tuple[Order, ...]]
    resolution: Resolution[Race]


def replay(script: Mapping[str, Any]) -> list[Step]:
    """Walk `script` through the game turn by turn (then the sprint, as `flagman play` does)."""
    seed = script["seed"]
    options = {key: str(value) for key, value in script["options"].items()}
    race = GAME.new_game(script["players"], options, turn_rng(seed, 0))
    steps: list[Step] = []
    number = 0
    for number, scripted in enumerate(script["turns"], start=1):
        orders = {}
        for player in GAME.expected_players(race):
            if player in scripted:
                parsed = GAME.parse_orders(race, player, scripted[player])
                assert parsed.ok, (player, scripted[player], parsed.problems)
                orders[player] = parsed.orders
            else:
                orders[player] = GAME.default_orders(race, player)
        resolution = GAME.resolve(race, orders, turn_rng(seed, number))
        steps.append(Step(race, orders, resolution))
        race = resolution.state
    while not GAME.is_finished(race) and not GAME.expected_players(race):
        number += 1
        resolution = GAME.resolve(race, {}, turn_rng(seed, number))
        steps.append(Step(race, {}, resolution))
        race = resolution.state
    return steps


@st.composite
def races_with_orders(draw: st.DrawFn) -> tuple[Race, str, Order]:
    """A race in some state where orders are due, a runner, and an order legal for them."""
    script = draw(racecraft_scripts())
    options = {key: str(value) for key, value in script["options"].items()}
    states = [GAME.new_game(script["players"], options, random.Random(0))]
    states += [step.resolution.state for step in replay(script)]
    due = [race for race in states if race.stage in (Stage.START, Stage.TACTICAL)]
    race = draw(st.sampled_from(due))
    player = draw(st.sampled_from(GAME.players(race)))
    order = draw(st.sampled_from(legal_orders(race, player)))
    return race, player, order
