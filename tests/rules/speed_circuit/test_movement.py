"""Movement (speed-circuit.md §2.6): distance, order of movement (P6, P7), straight and
diagonal moves (P32), blocked paths (another lane, else emergency braking: P14, P15)."""

from __future__ import annotations

from rules.api import Resolution
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.track import LANES
from tests.rules.speed_circuit.helpers import car, kinds, race, scenario_track, texts, turn

TRACK = scenario_track("corner_test")
RADIUS = scenario_track("radius_test")


def order_event(resolution: Resolution[RaceState]) -> tuple[str, ...]:
    return next(e.players for e in resolution.events if e.kind == "order")


def test_distance_is_one_space_per_20_mph() -> None:
    """§2.6 / SRC 1, 14: distance = speed / 20 spaces (60 mph = 3 spaces)."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=60)])
    after = turn(state, {"ann": "SPEED 60"}).state
    assert after.car("ann").space == "B13"
    assert after.car("ann").speed == 60


def test_front_car_moves_first() -> None:
    """§2.6 rule 1: the car furthest ahead (front-most row) moves first."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=60), car("bob", "B12", TRACK, speed=40)])
    assert order_event(turn(state, {"ann": "SPEED 60\nLANE A", "bob": "SPEED 40"})) == ("bob", "ann")


def test_same_row_higher_speed_moves_first() -> None:
    """§2.6 rule 2 / P6: same row, the higher speed this turn moves first."""
    state = race(TRACK, [car("ann", "A10", TRACK, speed=60), car("bob", "C10", TRACK, speed=60)])
    assert order_event(turn(state, {"ann": "SPEED 60", "bob": "SPEED 80"})) == ("bob", "ann")


def test_same_row_and_speed_grey_side_then_middle_then_far() -> None:
    """§2.6 rule 3 / P6 / seed 003: ties go to the side with the grey line; in a 3-wide row,
    grey side, middle, far side."""
    state = race(
        TRACK, [car(p, f"{lane}10", TRACK, speed=60) for p, lane in (("cat", "C"), ("bob", "B"), ("ann", "A"))]
    )
    assert TRACK.grey_lane(10) == LANES.index("A")
    assert order_event(turn(state, dict.fromkeys(("ann", "bob", "cat"), "SPEED 60"))) == ("ann", "bob", "cat")


def test_a_car_moving_after_a_spin_moves_last_in_its_row() -> None:
    """P19 / seed 003: "a car moving after a spin moves last among all cars in the same row
    this turn", whatever its speed."""
    state = race(TRACK, [car("ann", "A10", TRACK, speed=0, spun=True), car("bob", "C10", TRACK, speed=20)])
    assert order_event(turn(state, {"ann": "SPEED 40", "bob": "SPEED 20"})) == ("bob", "ann")


def test_path_lanes_and_lane_target() -> None:
    """§8 PATH gives the lane of each space entered; LANE the end lane; diagonals are forward."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=80), car("bob", "B16", TRACK, speed=60)])
    after = turn(state, {"ann": "SPEED 80\nPATH C C B A", "bob": "SPEED 60\nLANE A"}).state
    assert after.car("ann").space == "A14"
    assert after.car("bob").space == "A19"


def test_blocked_lane_takes_another_lane() -> None:
    """§8: the engine chooses the nearest legal alternative where the plotted path is
    blocked (another lane) and reports it; no car ends in or passes through an occupied space."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=80), car("bob", "B14", TRACK, speed=0)])
    resolution = turn(state, {"ann": "SPEED 80", "bob": "SPEED 0"})
    ann = resolution.state.car("ann")
    assert ann.space is not None  # on the track
    assert TRACK.space(ann.space).row == 14 and ann.space != "B14"
    assert "path" in kinds(resolution.events)


def test_boxed_in_car_emergency_brakes_to_the_usable_distance() -> None:
    """P15 / seed 003 Rear Ending: a car that plots spaces it cannot use emergency brakes to
    a speed it can use; P14 charges the braking on the deceleration chart."""
    wall = [car(p, f"{lane}14", TRACK, speed=0) for p, lane in (("x", "A"), ("y", "B"), ("z", "C"))]
    state = race(TRACK, [car("ann", "B10", TRACK, speed=80, wear=5), *wall])
    resolution = turn(state, {"ann": "SPEED 80", "x": "SPEED 0", "y": "SPEED 0", "z": "SPEED 0"})
    ann = resolution.state.car("ann")
    assert ann.space is not None  # on the track
    assert TRACK.space(ann.space).row == 13
    assert ann.speed == 60  # the new speed is next turn's base (P14)
    assert ann.wear == 4  # 20 over: 1 wear (PAY WEAR)
    assert "brake" in kinds(resolution.events)


def test_emergency_braking_tops_up_an_earlier_deceleration_payment() -> None:
    """P14: recompute the chart row for the total excess (original + emergency); already-paid
    wear and passed brake tests count toward it; pay only the difference."""
    wall = [car(p, f"{lane}14", TRACK, speed=0) for p, lane in (("x", "A"), ("y", "B"), ("z", "C"))]
    stops = {"x": "SPEED 0", "y": "SPEED 0", "z": "SPEED 0"}
    # 140 with DEC 40: 100 is free; 80 is 20 over; blocked to 60 makes 40 over
    state = race(TRACK, [car("ann", "B10", TRACK, speed=140, wear=5), *wall])
    by_wear = turn(state, {"ann": "SPEED 80", **stops})
    assert by_wear.state.car("ann").wear == 3  # 1 wear, then 1 more for the 40-over row (2 wear)
    # PAY ROLL: a brakes test for 20 over (passed on 3+3), then 1 wear makes "1 wear and test"
    by_roll = turn(state, {"ann": "SPEED 80\nPAY ROLL", **stops}, 3, 3)
    assert by_roll.state.car("ann").wear == 4
    assert [e.roll.total for e in by_roll.events if e.roll] == [6]


def test_completely_boxed_in_car_stops() -> None:
    """P15: the greatest usable distance may be none at all: speed 0."""
    wall = [car(p, f"{lane}11", TRACK, speed=0) for p, lane in (("x", "A"), ("y", "B"), ("z", "C"))]
    state = race(TRACK, [car("ann", "B10", TRACK, speed=40, wear=5), *wall])
    resolution = turn(state, {"ann": "SPEED 40", "x": "SPEED 0", "y": "SPEED 0", "z": "SPEED 0"})
    ann = resolution.state.car("ann")
    assert (ann.space, ann.speed) == ("B10", 0)
    assert "emergency brakes to 0" in texts(resolution.events)


def test_staggered_diagonal_only_with_the_optional_rule() -> None:
    """P32: diagonal moves across staggered rows are off by default; the option adds them."""
    blocker = car("bob", "B22", RADIUS, speed=0)
    base = race(RADIUS, [car("ann", "B21", RADIUS, speed=20, wear=5), blocker])
    plain = turn(base, {"ann": "SPEED 20", "bob": "SPEED 0"}).state
    assert plain.car("ann").space == "A22"
    optional = race(RADIUS, [car("ann", "B21", RADIUS, speed=20, wear=5), blocker], staggered_lane_change=True)
    moved = turn(optional, {"ann": "SPEED 20\nLANE C", "bob": "SPEED 0"}).state
    assert moved.car("ann").space == "C22"


def test_furthest_ahead_uses_the_front_edge_in_staggered_rows() -> None:
    """P7: rows in staggered corners: rows share a front edge; the progress index `row`
    decides who is furthest ahead (a long outside space reaching row 22 is ahead of row 21)."""
    state = race(RADIUS, [car("ann", "B21", RADIUS, speed=40), car("bob", "C22", RADIUS, speed=20)])
    assert order_event(turn(state, {"ann": "SPEED 40\nLANE A", "bob": "SPEED 20"})) == ("bob", "ann")
