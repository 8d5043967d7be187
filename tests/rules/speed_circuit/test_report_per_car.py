"""The results say what each car did ("bob 60 mph B74 -> B3" was never said):
one "moved" event per car that moved, with the speed it ran (and the plot, where the turn changed
it), where it started and ended, and the spaces it entered; the costs and dice are the events
before it. speed-circuit.md: the report is public, the same for every player."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.api import PlayerId, Resolution, robot_rng
from rules.speed_circuit import GAME as RULES  # what `find_game("speed_circuit")` returns, with its own types
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.plot import Order


def _race(seed: int, turns: int) -> list[tuple[RaceState, dict[PlayerId, tuple[Order, ...]], Resolution[RaceState]]]:
    state = RULES.new_game(["ann", "bob", "cat"], {}, random.Random(seed))
    played = []
    for t in range(turns):
        orders = {p: RULES.robot_orders(state, p, robot_rng(seed + t, p)) for p in RULES.expected_players(state)}
        resolution = RULES.resolve(state, orders, random.Random(seed * 100 + t))
        played.append((state, orders, resolution))
        state = resolution.state
    return played


def test_each_car_that_moves_is_said_with_its_speed_start_end_and_path() -> None:
    before, _, resolution = _race(1, 3)[2]  # the first racing turn after the design and the grid
    moved = [e for e in resolution.events if e.kind == "moved"]
    assert [e.players for e in moved] == [(p,) for p in resolution.events[0].players], "in the order of movement"
    for event in moved:
        (player,) = event.players
        start = before.car(player).space
        end = resolution.state.car(player).space
        assert end is not None, player  # a car that moved is on the track
        assert event.text.startswith(f"{player} {resolution.state.car(player).speed} mph: {start} -> {end}")
        assert "(entered " in event.text and event.text.rstrip(")").endswith(end)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), turns=st.integers(3, 8))
def test_every_car_that_moves_gets_exactly_one_line(seed: int, turns: int) -> None:
    """Whatever happens (spins, crashes, the pits), a car in the order of movement is said once."""
    for _, _, resolution in _race(seed, turns):
        order = next((e for e in resolution.events if e.kind == "order"), None)
        if order is None:
            continue
        said = [e.players[0] for e in resolution.events if e.kind == "moved"]
        assert sorted(said) == sorted(order.players)
