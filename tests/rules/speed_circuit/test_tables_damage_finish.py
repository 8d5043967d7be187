"""The 2d6 tables as data (§2.14, P30), the deceleration chart (§2.8), tests for pushing
(§2.5), engine and brake damage and failure (P24, P25), and the finish (P27)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from rules.api import Resolution
from rules.speed_circuit import GAME
from rules.speed_circuit.car import Status, Tyre
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.tables import (
    ACCEL_TOP_TEST,
    BRAKES_TEST,
    CHANCE,
    PASSING,
    PIT_CREW,
    START_TEST,
    Outcome,
    Table,
)
from tests.rules.speed_circuit.helpers import car, kinds, race, scenario_track, texts, turn

TRACK = scenario_track("corner_test")


def rolls(resolution: Resolution[RaceState]) -> list[int]:
    return [e.roll.total for e in resolution.events if e.roll is not None]


def chance_of(table: Table, outcome: Outcome) -> int:
    """Of the 36 ways two dice fall, how many give `outcome`."""
    return sum(1 for a, b in itertools.product(range(1, 7), repeat=2) if table.lookup(a + b) is outcome)


def test_table_probabilities_match_the_seed() -> None:
    """§2.14: accel/top 2-9 gain (30/36); start 2-8 gain, 9 mis-shift, 10-12 stall; brakes 2-9
    safe; chance 2-6 safe, 7-9 spin, 10-12 crash; passing 2-5, 6-9, 10-12; pit crew likewise."""
    assert chance_of(ACCEL_TOP_TEST, Outcome.GAIN) == 30
    assert (
        chance_of(START_TEST, Outcome.GAIN),
        chance_of(START_TEST, Outcome.MISSHIFT),
        chance_of(START_TEST, Outcome.STALL),
    ) == (26, 4, 6)
    assert chance_of(BRAKES_TEST, Outcome.SAFE) == 30
    assert (chance_of(CHANCE, Outcome.SAFE), chance_of(CHANCE, Outcome.SPIN), chance_of(CHANCE, Outcome.CRASH)) == (
        15,
        15,
        6,
    )
    assert (chance_of(PASSING, Outcome.PASS), chance_of(PASSING, Outcome.CONTACT)) == (10, 6)
    assert chance_of(PIT_CREW, Outcome.PLUS_SPACE) == 10


def test_skill_costs_per_table() -> None:
    """P5: tests 1s, chance 2s, passing 2s, pit crew not bypassable."""
    assert (ACCEL_TOP_TEST.skill_cost, START_TEST.skill_cost, BRAKES_TEST.skill_cost) == (1, 1, 1)
    assert (CHANCE.skill_cost, PASSING.skill_cost, PIT_CREW.skill_cost) == (2, 2, None)


def test_modified_rolls_are_clamped() -> None:
    """P30: modified 2d6 results outside 2..12 are clamped."""
    assert CHANCE.lookup(-1) is Outcome.SAFE and CHANCE.lookup(15) is Outcome.CRASH


# -- the deceleration chart ----------------------------------------------------------------


def brake(plot: str, *faces: int, **fields: Any) -> Resolution[RaceState]:
    """A car at 160 (DEC 40: 120 is free) on the straight at B10."""
    fields.setdefault("wear", 9)
    state = race(TRACK, [car("ann", "B10", TRACK, speed=160, **fields)])
    return turn(state, {"ann": plot}, *faces)


@pytest.mark.parametrize(
    ("speed", "wear", "faces"),
    [(100, 8, ()), (80, 7, ()), (60, 7, (2, 3)), (40, 6, (2, 3))],
)
def test_deceleration_chart_rows(speed: int, wear: int, faces: tuple[int, ...]) -> None:
    """Deceleration Chart: 20 over: 1 wear; 40: 2 wear; 60: 2 wear and test brakes;
    80+: 3 wear and test brakes and spin."""
    resolution = brake(f"SPEED {speed}", *faces)
    ann = resolution.state.car("ann")
    assert ann.wear == wear
    assert ann.spun is (speed == 40)
    assert ann.space == f"B{10 + speed // 20}"  # the 80+ spin comes after the move (§2.11 [DES])


def test_deceleration_pay_roll_uses_the_brakes_test() -> None:
    """Deceleration Chart 20 over: use 1 wear, or test brakes (PAY ROLL)."""
    resolution = brake("SPEED 100\nPAY ROLL", 4, 5)
    assert resolution.state.car("ann").wear == 9 and rolls(resolution) == [9]


def test_failed_brakes_test_costs_wear_and_deceleration() -> None:
    """Brakes Test 10-12 / P25: use 1 wear, -20 deceleration; the car keeps its plotted speed."""
    resolution = brake("SPEED 60", 5, 5)
    ann = resolution.state.car("ann")
    assert (ann.wear, ann.dec, ann.brake_damage, ann.speed, ann.space) == (6, 20, 1, 60, "B13")


def test_second_brake_failure_removes_the_car_at_once() -> None:
    """Seed 003: any subsequent brakes test failure causes the brakes to fail completely;
    the car is removed from the track immediately."""
    resolution = brake("SPEED 60", 6, 4, brake_damage=1)
    ann = resolution.state.car("ann")
    assert ann.status is Status.OUT and ann.space is None and ann.note == "brake failure"


def test_option_tyres_replace_the_brakes_test() -> None:
    """P12: on option tyres 1 wear may replace a deceleration (brakes) test."""
    resolution = brake("SPEED 60", tyres=Tyre.OPTION)
    assert resolution.state.car("ann").wear == 6 and rolls(resolution) == []


# -- pushing: acceleration, top speed and start speed tests --------------------------------


def push(base: int, speed: int, *faces: int, **fields: Any) -> Resolution[RaceState]:
    fields.setdefault("wear", 9)
    state = race(TRACK, [car("ann", "B10", TRACK, speed=base, **fields)])
    return turn(state, {"ann": f"SPEED {speed}\nPUSH YES"}, *faces)


def test_acceleration_test_pass_gains_20() -> None:
    """Acceleration Test 2-9: gain 20 mph this turn only."""
    resolution = push(60, 120, 4, 5)
    ann = resolution.state.car("ann")
    assert (ann.speed, ann.acc, ann.engine_damage) == (120, 40, 0)


def test_acceleration_test_fail_replots_and_damages_the_engine() -> None:
    """Acceleration Test 10-12: replot 20 below the attempt; engine damage -20 to the tested category."""
    resolution = push(60, 120, 5, 5)
    ann = resolution.state.car("ann")
    assert (ann.speed, ann.acc, ann.top, ann.engine_damage) == (100, 20, 160, 1)


def test_top_speed_test_fail_damages_top_speed() -> None:
    """Top Speed Test 10-12: engine damage, -20 to top speed."""
    resolution = push(160, 180, 6, 6)
    ann = resolution.state.car("ann")
    assert (ann.speed, ann.top, ann.acc) == (160, 140, 40)


def test_start_speed_test_mis_shift_and_stall() -> None:
    """Start Speed Test: 9 mis-shift, replot 40 below the attempt; 10-12 stall, replot 0,
    -20 to acceleration."""
    misshift = push(0, 80, 4, 5).state.car("ann")
    assert (misshift.speed, misshift.space, misshift.engine_damage) == (40, "B12", 0)
    stall = push(0, 80, 5, 6).state.car("ann")
    assert (stall.speed, stall.space, stall.acc, stall.engine_damage) == (0, "B10", 20, 1)


def test_option_tyres_replace_acceleration_but_not_top_speed_tests() -> None:
    """P12: option tyres may spend 1 wear instead of testing acceleration or start speed; top
    speed is not listed (a game option adds it)."""
    accel = push(60, 120, tyres=Tyre.OPTION)
    assert accel.state.car("ann").wear == 8 and rolls(accel) == []
    top = push(160, 180, 1, 1, tyres=Tyre.OPTION)
    assert top.state.car("ann").wear == 9 and rolls(top) == [2]
    state = race(TRACK, [car("ann", "B10", TRACK, speed=160, wear=9, tyres=Tyre.OPTION)], option_tyres_top_speed=True)
    flagged = turn(state, {"ann": "SPEED 180\nPUSH YES"})
    assert flagged.state.car("ann").wear == 8


def test_skill_chip_bypasses_a_test() -> None:
    """P5: 1 skill bypasses the acceleration test."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=60, skill=2)])
    resolution = turn(state, {"ann": "SPEED 120\nPUSH YES\nSKILL ACCEL"})
    assert resolution.state.car("ann").skill == 1 and rolls(resolution) == []


def test_engine_failure_moves_at_half_speed_then_leaves() -> None:
    """P24 / seed 003: a damaged engine that fails again fails completely; "Cars removed from
    the race due to engine failure immediately reduce their plotted speed by half (rounding
    down) and move that speed for this turn": half of the 160 plotted, not of the 140 the
    failed test replots (this test used to expect 60)."""
    resolution = push(100, 160, 6, 5, engine_damage=1)
    ann = resolution.state.car("ann")
    assert ann.status is Status.OUT and ann.note == "engine failure"
    moved = [e for e in resolution.events if e.kind == "engine"]
    assert moved and "moves 80" in moved[0].text  # plotted 160, half = 80
    assert ann.progress == TRACK.rows + 14


@pytest.mark.parametrize(("base", "plotted", "moved"), [(60, 120, 60), (80, 140, 60), (40, 100, 40)])
def test_engine_failure_halves_the_plotted_speed_rounding_down(base: int, plotted: int, moved: int) -> None:
    """Seed 003 Engine/Brake Damage: "immediately reduce their plotted speed by half (rounding
    down)"; P24: "Floor to a multiple of 20; move, then leave the track". Plotted 120 moves 60
    (not half of the 100 replotted after the failed test), 140 moves 70 -> 60, 100 moves 40."""
    resolution = push(base, plotted, 6, 6, engine_damage=1)
    ann = resolution.state.car("ann")
    assert ann.status is Status.OUT and ann.note == "engine failure"
    assert f"moves {moved} this turn" in texts(resolution.events)
    assert ann.progress == TRACK.rows + 10 + moved // 20


def test_engine_failure_on_a_stall_moves_half_the_plotted_speed() -> None:
    """Seed 003: a stall is "Engine Damage ... Engine Failure if second damage", and such cars
    "immediately reduce their plotted speed by half (rounding down) and move that speed for
    this turn": plotted 80 from a standstill (a start speed push), half is 40, though the
    stall itself replots 0."""
    resolution = push(0, 80, 5, 6, engine_damage=1)
    ann = resolution.state.car("ann")
    assert ann.status is Status.OUT and ann.note == "engine failure"
    assert "moves 40 this turn" in texts(resolution.events)
    assert ann.progress == TRACK.rows + 12


def test_engine_failure_across_the_finish_line_stays_and_finishes() -> None:
    """P24: stay on track if it crossed the finish line on the final lap."""
    state = race(TRACK, [car("ann", "B22", TRACK, speed=100, engine_damage=1)])
    resolution = turn(state, {"ann": "SPEED 160\nPUSH YES"}, 6, 6)
    assert resolution.state.car("ann").status is Status.FINISHED


# -- the finish ----------------------------------------------------------------------------


def test_two_cars_finish_in_one_turn_by_rows_past_the_line() -> None:
    """P27: finished on entering a space whose front edge is the finish line, or beyond, on
    the final lap; same-turn finishers ranked by rows past the line, then order of movement."""
    state = race(TRACK, [car("ann", "B20", TRACK, speed=120), car("bob", "A22", TRACK, speed=60)])
    resolution = turn(state, {"ann": "SPEED 120", "bob": "SPEED 60"})
    after = resolution.state
    assert after.car("bob").status is Status.FINISHED and after.car("ann").status is Status.FINISHED
    assert GAME.standings(after) == (("ann",), ("bob",))  # ann 2 rows past, bob 1
    assert GAME.is_finished(after)
    same = turn(state, {"ann": "SPEED 100", "bob": "SPEED 60"}).state
    assert GAME.standings(same) == (("bob",), ("ann",))  # both 1 past: bob moved first


def test_a_spun_finisher_is_last_among_that_turns_finishers() -> None:
    """Seed 003 Race Finish / P27: a car that finishes in a spin finishes last of the cars that
    also finished this turn."""
    state = race(TRACK, [car("ann", "A22", TRACK, speed=160, wear=9), car("bob", "B20", TRACK, speed=120)])
    resolution = turn(state, {"ann": "SPEED 40", "bob": "SPEED 120"}, 1, 1)
    after = resolution.state
    assert after.car("ann").status is Status.FINISHED and after.car("ann").spun
    assert GAME.standings(after) == (("bob",), ("ann",))


def test_a_car_that_crashes_on_its_finishing_turn_has_not_finished() -> None:
    """Seed 003: any car that crashes the turn it crossed the finish line is not considered to
    have finished."""
    state = race(
        TRACK, [car("ann", "B22", TRACK, speed=180, top=200, acc=40), car("bob", "A10", TRACK, speed=0)], laps=1
    )
    resolution = turn(state, {"ann": "SPEED 180", "bob": "SPEED 0"})
    ann = resolution.state.car("ann")
    assert "crosses the finish line" in texts(resolution.events)
    assert ann.status is Status.OUT
    assert "out" in kinds(resolution.events)


def test_laps_are_counted_at_the_line() -> None:
    """P27: a lap is counted on crossing the start/finish line; the race is N laps."""
    state = race(TRACK, [car("ann", "B20", TRACK, lap=1, speed=120)], laps=2)
    after = turn(state, {"ann": "SPEED 120"}).state.car("ann")
    assert (after.lap, after.space, after.status) == (2, "B2", Status.RACING)
