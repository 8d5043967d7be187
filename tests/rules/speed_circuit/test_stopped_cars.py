"""Stopped cars (rules/speed_circuit/NOTES.md, "Stopped cars", and docs/DESIGN.md): with
`plot_default=mps` a car whose driver sends nothing holds its present speed, and "a silent
car at 0 mph 'maintains' 0 forever" (WBC: "missing plot = maintain speed"). The rule: "a car
that ends 5 race turns in a row without moving retires", so a race always ends, and from its
second turn standing still the GM is told (`Game.stall`) with the SET that gets it moving."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules import find_game
from rules.api import GameState, Stall, turn_rng
from rules.speed_circuit.car import Car, Status
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.resolve import STOPPED_REPORT, STOPPED_TURNS

GAME = find_game("speed_circuit")


def cars_of(state: GameState) -> tuple[Car, ...]:
    """The cars of a Speed Circuit state (the game's API hands the state on as an opaque value)."""
    assert isinstance(state, RaceState), state
    return state.cars


def _race(seed: int, silent: frozenset[int], players: int, track: str) -> tuple[list[Stall | None], GameState]:
    """A 1-lap mps race: the seats in `silent` send nothing (their NMR default: MPS), the
    others drive the robot. Each race turn's stall report, and the final state."""
    seats = [f"s{i}" for i in range(players)]
    state = GAME.new_game(seats, {"laps": "1", "plot_default": "mps", "track": track}, turn_rng(seed, 0))
    reports: list[Stall | None] = []
    for turn in range(1, 400):
        if GAME.is_finished(state):
            break
        orders = {
            seat: GAME.default_orders(state, seat)
            if index in silent
            else GAME.robot_orders(state, seat, random.Random(seed * 1000 + turn))
            for index, seat in enumerate(seats)
            if seat in GAME.expected_players(state)
        }
        state = GAME.resolve(state, orders, turn_rng(seed, turn)).state
        reports.append(GAME.stall(state))
    return reports, state


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 4),
    silent=st.sets(st.integers(0, 1), min_size=1),
    track=st.sampled_from(("harbour_loop", "quarry_ring")),
)
def test_a_race_with_silent_cars_at_0_mph_always_ends(seed: int, players: int, silent: set[int], track: str) -> None:
    """Every race ends, whoever is silent: each silent car (MPS from 0 mph at the start)
    retires after 5 turns standing, noted as stopped, and the GM is told while it stands."""
    reports, state = _race(seed, frozenset(silent), players, track)
    assert GAME.is_finished(state)
    for index, car in enumerate(cars_of(state)):
        if index in silent:
            assert car.status is Status.OUT and "has not moved for 5 turns" in car.note, car
    told = [r for r in reports if r is not None]
    assert told and told[0].turns == STOPPED_REPORT and told[0].seat is not None
    assert told[0].figure == "speed" and told[0].value == "20"
    assert f"has not moved for {STOPPED_REPORT} turns in a row" in told[0].reason


def test_a_stopped_car_is_reported_then_retires_and_a_set_speed_gets_it_moving() -> None:
    """From the 2nd turn standing the GM is told (the report names the car and the turns);
    at the 5th the car retires; a SET speed 20 before then gets it moving (MPS holds 20)."""
    seats = ["ann", "bob"]
    state = GAME.new_game(seats, {"laps": "1", "plot_default": "mps"}, turn_rng(5, 0))
    turn = 0

    def step(state: GameState) -> GameState:
        nonlocal turn
        turn += 1
        orders = {s: GAME.default_orders(state, s) for s in GAME.expected_players(state)}
        return GAME.resolve(state, orders, turn_rng(5, turn)).state

    state = step(step(state))  # design and qualifying
    assert GAME.stall(state) is None
    standing = []
    for _ in range(STOPPED_TURNS - 1):
        state = step(state)
        report = GAME.stall(state)
        standing.append(report.turns if report else 0)
    assert standing == [0, 2, 3, 4]
    moved = step(GAME.set_figure(GAME.set_figure(state, "ann", "speed", "20"), "bob", "speed", "20"))
    assert all(c.status is Status.RACING and c.standing == 0 for c in cars_of(moved))
    state = step(state)
    assert GAME.is_finished(state)
    assert all(c.status is Status.OUT and c.note.startswith("stopped") for c in cars_of(state))
