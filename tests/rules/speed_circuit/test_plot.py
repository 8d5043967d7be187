"""Plots (speed-circuit.md §2.5, §8): the order grammar, and validation against acceleration,
deceleration, top and start speed, the corner acceleration ban (P8) and the cap after a spin (P19)."""

from __future__ import annotations

import re

import pytest

from rules.api import ProblemKind
from rules.speed_circuit import GAME
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.plot import (
    PathKind,
    PathOrder,
    PayOrder,
    PushOrder,
    SkillOrder,
    SkillTable,
    SpeedOrder,
    closest_achievable,
    limits,
    plot_of,
)
from tests.rules.speed_circuit.helpers import car, race, scenario_track

TRACK = scenario_track("corner_test")
RADIUS = scenario_track("radius_test")


def one(speed: int = 100, space: str = "B12") -> RaceState:
    return race(TRACK, [car("ann", space, TRACK, speed=speed)])


def test_full_plot_parses_into_typed_orders_in_canonical_order() -> None:
    """§8: SPEED/MPS, PATH/LANE/LINE, PAY, SKILL, PUSH; every line optional but SPEED."""
    parsed = GAME.parse_orders(
        one(), "ann", "push yes\nSKILL chance tests\nPAY ROLL\nPATH B B A A\nSPEED 120  # flat out"
    )
    assert parsed.ok and parsed.complete
    assert parsed.orders == (
        SpeedOrder(120),
        PathOrder(PathKind.LANES, (1, 1, 0, 0)),
        PayOrder(False),
        SkillOrder((SkillTable.ACCEL, SkillTable.TOP, SkillTable.START, SkillTable.BRAKES, SkillTable.CHANCE)),
        PushOrder(True),
    )
    assert GAME.format_orders(parsed.orders).splitlines()[0] == "SPEED 120"


def test_a_plot_without_speed_is_incomplete() -> None:
    """§8: every line is optional but SPEED."""
    parsed = GAME.parse_orders(one(), "ann", "LANE A")
    assert parsed.ok and not parsed.complete


def test_mps_keeps_the_present_speed() -> None:
    """§2.5 / WBC speed cards: MPS, maintain present speed."""
    parsed = GAME.parse_orders(one(speed=80), "ann", "SPEED MPS")
    assert parsed.orders == (SpeedOrder(None),)
    assert plot_of(parsed.orders).mps


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("SPEED 90", "steps of 20"),
        ("SPEED fast", "whole number"),
        ("PATH B D", "not a lane"),
        ("PAY CASH", "PAY takes WEAR"),
        ("SKILL LUCK", "unknown table"),
        ("SLIP 3", "SLIP takes 0, 1 or 2"),
        ("FLY AWAY", "is not an order"),
        # speed-circuit.md: tyres are chosen with TYRES on the design turn and changed in the
        # pits (PIT PRIME|OPTION); a set-up word in a race turn is named with what this turn takes.
        ("TYRES 1", "TYRES is not an order of this turn; race orders: SPEED"),
        ("TYRES 1", "tyres are changed in the pits: PIT PRIME|OPTION"),
        ("BID 3", "BID is not an order of this turn; race orders: SPEED"),
    ],
)
def test_bad_lines_are_invalid_with_a_reason(line: str, reason: str) -> None:
    """architecture.md: syntax errors carry the line and a reason fit to mail back."""
    parsed = GAME.parse_orders(one(), "ann", f"SPEED 100\n{line}")
    assert parsed.orders == (SpeedOrder(100),)
    assert parsed.problems[0].line_no == 2 and parsed.problems[0].kind is ProblemKind.INVALID
    assert reason in parsed.problems[0].reason


def test_slip_pass_and_pit_lines_read_back() -> None:
    """§8 SLIP, PASS, PIT are parsed, stored and confirmed in their canonical text."""
    parsed = GAME.parse_orders(one(), "ann", "SPEED 100\nSLIP 2\nPASS YES\nPIT OPTION")
    assert parsed.ok
    text = GAME.format_orders(parsed.orders)
    assert text.splitlines()[-3:] == ["SLIP 2", "PASS YES", "PIT OPTION"]
    assert GAME.parse_orders(one(), "ann", text).orders == parsed.orders


def test_acceleration_limit_and_push_test() -> None:
    """§2.5: up to +Acceleration; +20 more only with a test (PUSH YES), never more."""
    state = one(speed=100)  # ACC 40: safe 140, push 160 (= top)
    assert GAME.parse_orders(state, "ann", "SPEED 140").ok
    refused = GAME.parse_orders(state, "ann", "SPEED 160")
    assert refused.problems[0].kind is ProblemKind.ILLEGAL and "PUSH YES" in refused.problems[0].reason
    assert GAME.parse_orders(state, "ann", "SPEED 160\nPUSH YES").ok
    impossible = GAME.parse_orders(state, "ann", "SPEED 180\nPUSH YES")
    assert "impossible" in impossible.problems[0].reason and "0..140" in impossible.problems[0].reason


def test_top_speed_limit() -> None:
    """§2.5: never above Top Speed except +20 by a top speed test."""
    lim = limits(car("ann", "B12", TRACK, speed=160), TRACK)
    assert (lim.safe, lim.push, lim.highest) == (160, "top speed", 180)


def test_start_speed_from_a_standstill() -> None:
    """§2.4: the first turn each car plots up to its Start Speed; +20 by a start speed test."""
    lim = limits(car("ann", "B12", TRACK, speed=0, start=100), TRACK)
    assert (lim.safe, lim.push) == (100, "start speed")


def test_deceleration_beyond_the_rating_is_legal_and_charged() -> None:
    """§2.5: exceeding Deceleration is allowed by 20/40/60/80+, paid on the Deceleration Chart."""
    state = one(speed=140)
    lim = limits(state.car("ann"), TRACK)
    assert lim.free_low == 100
    assert GAME.parse_orders(state, "ann", "SPEED 0").ok
    assert "deceleration chart" in lim.describe()


def test_no_acceleration_in_a_corner() -> None:
    """P8 / seed 003: the original rule prohibiting acceleration once a corner has been entered."""
    state = one(speed=60, space="B6")
    refused = GAME.parse_orders(state, "ann", "SPEED 80")
    assert "in a corner" in refused.problems[0].reason
    assert GAME.parse_orders(state, "ann", "SPEED 60").ok


def test_acceleration_from_the_last_marked_space_of_a_corner() -> None:
    """P8 / seed 003: "A car may accelerate from the last marked space of a corner"."""
    state = one(speed=60, space="B8")
    assert GAME.parse_orders(state, "ann", "SPEED 100").ok


def test_changing_radius_rise_from_the_last_space_of_the_slower_limit() -> None:
    """P8 / seed 003 Changing Radius Corners: a car that ended on the last space of the slower
    limit, just in front of the higher limit, may raise its speed accordingly (here +40)."""
    on_last_slow = limits(car("ann", "A15", RADIUS, speed=60), RADIUS)
    assert on_last_slow.safe == 100 and on_last_slow.push is None
    before_it = limits(car("ann", "A14", RADIUS, speed=60), RADIUS)
    assert before_it.safe == 60


def test_speed_cap_after_a_spin() -> None:
    """P19 / seed 003 Moving After A Spin: start speed or acceleration, whichever is lower; no pushing."""
    lim = limits(car("ann", "B12", TRACK, speed=0, spun=True, start=100, acc=60), TRACK)
    assert (lim.safe, lim.push) == (60, None)
    state = race(TRACK, [car("ann", "B12", TRACK, speed=0, spun=True, start=100, acc=60)])
    assert GAME.parse_orders(state, "ann", "SPEED 60").ok
    refused = GAME.parse_orders(state, "ann", "SPEED 80\nPUSH YES")
    assert "after a spin" in refused.problems[0].reason


def test_impossible_plot_on_file_becomes_the_closest_achievable() -> None:
    """§8 / WBC Plot Errors / P29: an impossible plot becomes the closest achievable speed,
    assuming the maximum use of wear and tests."""
    c = car("ann", "B12", TRACK, speed=100)
    assert closest_achievable(c, TRACK, 200) == 160
    assert closest_achievable(c, TRACK, 120) == 120
    in_corner = car("ann", "B6", TRACK, speed=60)
    assert closest_achievable(in_corner, TRACK, 100) == 60


def test_order_help_gives_the_legal_range_now() -> None:
    """mail-interface.md HELP: the grammar for this player now, generated from the state."""
    text = GAME.order_help(one(speed=100), "ann")
    assert "0..140 mph (160 with PUSH YES" in text


def test_order_help_explains_every_race_line_from_one_column() -> None:
    """The race's syntax block (speed-circuit.md §8, every plot line): each line's explanation
    starts in the same column (a syntax too long for it, SKILL's, aside). Played by mail
    (playtest5 SC6): SLIP's stood one column right of its neighbours."""
    text = GAME.order_help(one(speed=100), "ann")
    cells = [re.match(r"(\S.*?)( {2,})\S", line) for line in text.splitlines() if line and not line[0].isspace()]
    columns = {m.end(2) for m in cells if m is not None and len(m.group(1)) < 22}
    assert len(columns) == 1 and len([m for m in cells if m]) >= 8, text


def test_duplicate_lines_are_refused() -> None:
    """One plot per mail: a second SPEED (or a second path line) is refused, the first counts."""
    parsed = GAME.parse_orders(one(), "ann", "SPEED 100\nSPEED 120\nLANE A\nLINE")
    assert parsed.orders == (SpeedOrder(100), PathOrder(PathKind.LANE, (0,)))
    assert len(parsed.problems) == 2


def test_a_path_the_car_cannot_drive_from_where_it_stands_is_refused_at_intake() -> None:
    """§8: "PATH B B A A: lane of each space entered", §2.16: a move goes straight on or to an
    adjacent lane. Main's parser took "PATH C C" from lane A (the first space entered two lanes
    over) and left the deadline to drive something else; it is refused at once, naming the
    space and the lanes the car can enter."""
    state = race(TRACK, [car("ann", "A12", TRACK, speed=40)])
    refused = GAME.parse_orders(state, "ann", "SPEED 40\nPATH C C")
    assert refused.orders == (SpeedOrder(40),)
    (problem,) = refused.problems
    assert problem.kind is ProblemKind.ILLEGAL
    assert "from A12 the 1st space entered is in lane A or B, not C" in problem.reason
    assert GAME.parse_orders(state, "ann", "PATH B C\nSPEED 40").ok
