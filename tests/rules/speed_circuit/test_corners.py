"""Cornering (speed-circuit.md §2.7; P9, P10, P11), the chance table (§2.11), option tyres
(P12), skill chips (P5), unpayable wear (P13) and spins (P19)."""

from __future__ import annotations

from dataclasses import replace
from typing import Unpack

from rules.api import Resolution
from rules.speed_circuit import GAME
from rules.speed_circuit.car import CornerRun, Status, Tyre
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.plot import limits
from tests.rules.speed_circuit.helpers import CarFields, car, kinds, race, scenario_track, texts, turn

TRACK = scenario_track("corner_test")  # T1: rows 6-8 posted 60; red line A5 A6 A7 A8
RADIUS = scenario_track("radius_test")  # T1: 100 100 60 60 (rows 6-9); T2: 60 60 100 100, green line


def rolls(resolution: Resolution[RaceState]) -> list[int]:
    return [e.roll.total for e in resolution.events if e.roll is not None]


def run_corner(speed: int, plot: str = "", *faces: int, **fields: Unpack[CarFields]) -> Resolution[RaceState]:
    """A car in lane B running into T1 at `speed` (it starts far enough back to reach B6)."""
    start = {80: "B3", 100: "B2", 120: "B2", 140: "B1"}[speed]
    fields.setdefault("wear", 9)
    state = race(TRACK, [car("ann", start, TRACK, speed=speed, **fields)])
    return turn(state, {"ann": f"SPEED {speed}\n{plot}"}, *faces)


def test_plus_20_costs_one_wear() -> None:
    """Cornering Chart: over by 20: use 1 wear, or consult the chance table (PAY WEAR)."""
    resolution = run_corner(80)
    assert resolution.state.car("ann").wear == 8
    assert rolls(resolution) == []


def test_plus_40_costs_two_wear() -> None:
    """Cornering Chart: over by 40: use 2 wear, or 1 wear and the chance table."""
    resolution = run_corner(100)
    assert resolution.state.car("ann").wear == 7
    assert rolls(resolution) == []


def test_plus_60_costs_two_wear_and_a_chance_roll() -> None:
    """Cornering Chart: over by 60: use 2 wear and consult the chance table (2-6 safe)."""
    resolution = run_corner(120, "", 1, 2)
    ann = resolution.state.car("ann")
    assert ann.wear == 7 and ann.status is Status.RACING and ann.space == "B8"
    assert rolls(resolution) == [3]


def test_plus_80_crashes_off_course() -> None:
    """Cornering Chart / P10: over by 80 or more: crash off course, out of the race."""
    resolution = run_corner(140)
    ann = resolution.state.car("ann")
    assert ann.status is Status.OUT and ann.space is None
    assert "crashes off course" in texts(resolution.events)
    assert GAME.is_finished(resolution.state)


def test_corner_is_paid_once_for_the_worst_excess() -> None:
    """P9: payment is once per corner; a car that has paid for +X may run at up to +X over any
    later space of that corner, also on the next turn."""
    resolution = run_corner(80)
    assert [e.kind for e in resolution.events].count("wear") == 1
    in_corner = car("ann", "B6", TRACK, speed=80, wear=8, corner_run=CornerRun("T1", 1, 1, False, 20))
    after = turn(race(TRACK, [in_corner]), {"ann": "SPEED 80"}).state
    assert after.car("ann").wear == 8


def test_changing_radius_corner_tops_up_when_the_limit_drops() -> None:
    """P9 / seed 003 Changing Radius Corners: payment buys +20/+40/+60 over the limit; if the
    limit drops the driver increases the payment: here +20 (1 wear) at 100, then +60 at 60
    (2 wear and chance: 1 more wear and the roll)."""
    state = race(RADIUS, [car("ann", "B4", RADIUS, speed=120, wear=9)])
    resolution = turn(state, {"ann": "SPEED 120"}, 2, 2)
    assert resolution.state.car("ann").wear == 7
    assert rolls(resolution) == [4]
    assert resolution.state.car("ann").space == "B10"


def test_racing_line_gives_plus_20() -> None:
    """§2.2 / P11: a car following the arrow may go 20 mph over the posted speeds without penalty."""
    state = race(TRACK, [car("ann", "A4", TRACK, speed=80, wear=9)])
    assert turn(state, {"ann": "SPEED 80\nLINE"}).state.car("ann").wear == 9
    assert turn(state, {"ann": "SPEED 80\nLANE B"}).state.car("ann").wear == 8


def test_line_bonus_needs_entry_at_the_first_space() -> None:
    """P11 [DES]: the car must enter the line at its first space."""
    state = race(TRACK, [car("ann", "A5", TRACK, speed=80, wear=9)])
    assert turn(state, {"ann": "SPEED 80\nLINE"}).state.car("ann").wear == 8


def test_leaving_the_line_early_recomputes_without_the_bonus() -> None:
    """P11: deviation loses the bonus and tops up: 100 on the line is +20 (1 wear); stepping
    off in the corner makes it +40 (1 more wear)."""
    state = race(TRACK, [car("ann", "A4", TRACK, speed=100, wear=9)])
    assert turn(state, {"ann": "SPEED 100\nLINE"}).state.car("ann").wear == 8
    assert turn(state, {"ann": "SPEED 100\nPATH A A B B B"}).state.car("ann").wear == 7


def test_green_line_gives_plus_40() -> None:
    """Seed 003 Green Arrows: a green racing line allows 40 mph over the marked speeds."""
    state = race(RADIUS, [car("ann", "B12", RADIUS, speed=100, wear=9)])
    assert turn(state, {"ann": "SPEED 100\nLINE"}).state.car("ann").wear == 9
    assert turn(state, {"ann": "SPEED 100\nLANE B"}).state.car("ann").wear == 7


def test_pay_roll_uses_the_chance_table_and_a_spin_stops_the_car() -> None:
    """Cornering Chart +20: the chance table instead of wear; 7-9 spin. §2.11 [DES]: the car
    stops in the space whose entry triggered the roll, speed 0."""
    resolution = run_corner(80, "PAY ROLL", 3, 4)
    ann = resolution.state.car("ann")
    assert (ann.space, ann.speed, ann.spun, ann.wear) == ("B6", 0, True, 9)
    assert "spin" in kinds(resolution.events)


def test_chance_table_crash_on_course() -> None:
    """Chance Table: 10-12 crash on course: out of race."""
    resolution = run_corner(80, "PAY ROLL", 5, 6)
    assert resolution.state.car("ann").status is Status.OUT
    assert "crashes on course" in texts(resolution.events)


def test_the_turn_after_a_spin() -> None:
    """P19 / seed 003 Moving After A Spin: min(start, acceleration), no pushing; moves last
    in its row; the cap lasts one turn."""
    spun = run_corner(80, "PAY ROLL", 3, 4).state
    ann = spun.car("ann")
    assert limits(ann, TRACK).safe == 40 and limits(ann, TRACK).push is None
    refused = GAME.parse_orders(spun, "ann", "SPEED 60\nPUSH YES")
    assert "after a spin" in refused.problems[0].reason
    after = turn(spun, {"ann": "SPEED 40"}).state
    assert after.car("ann").space == "B8" and not after.car("ann").spun
    # the cap is gone: from B8, the last marked space of T1, 40 + ACC 40; from B7 no acceleration
    assert limits(after.car("ann"), TRACK).safe == 80
    assert limits(replace(after.car("ann"), space="B7"), TRACK).safe == 40


def test_spin_on_a_racing_line_loses_the_line_this_time_through() -> None:
    """Seed 003: cars that have spun on a racing line may not gain any future advantage from
    that line this time through the corner."""
    state = race(TRACK, [car("ann", "A4", TRACK, speed=100, wear=9)])
    spun = turn(state, {"ann": "SPEED 100\nLINE\nPAY ROLL"}, 4, 4).state.car("ann")
    assert (spun.space, spun.barred_line, spun.line_run) == ("A6", "T1", None)


def test_option_tyres_replace_the_chance_roll_with_wear() -> None:
    """P12 / seed 003 Option Tires: 1 wear instead of the chance table in any situation, so a
    car on options can effectively spend 3 wear in a corner."""
    resolution = run_corner(120, "", tyres=Tyre.OPTION)
    assert resolution.state.car("ann").wear == 6
    assert rolls(resolution) == []


def test_skill_chips_bypass_the_chance_table() -> None:
    """P5 / seed 003 Skill Chips: 2 skill bypass the chance table."""
    resolution = run_corner(80, "PAY ROLL\nSKILL CHANCE", skill=3)
    ann = resolution.state.car("ann")
    assert (ann.skill, ann.wear, ann.spun) == (1, 9, False)
    assert rolls(resolution) == []


def test_skill_bypass_needs_enough_chips() -> None:
    """P5: with fewer chips than the table costs, the roll is made."""
    resolution = run_corner(80, "PAY ROLL\nSKILL CHANCE", 1, 1, skill=1)
    assert resolution.state.car("ann").skill == 1 and rolls(resolution) == [2]


def test_unpayable_wear_spins_but_the_roll_is_still_made_and_crash_wins() -> None:
    """P13 / seed 003 Wear Penalties: a driver that cannot pay the wear spins unless other
    results indicate a crash; the cheaper mixed option is used when wear is short."""
    spun = run_corner(100, "", 1, 1, wear=0)
    assert spun.state.car("ann").spun and spun.state.car("ann").status is Status.RACING
    crashed = run_corner(100, "", 6, 6, wear=0)
    assert crashed.state.car("ann").status is Status.OUT
    mixed = run_corner(100, "", 2, 1, wear=1)  # 1 wear + chance instead of 2 wear
    assert mixed.state.car("ann").wear == 0 and not mixed.state.car("ann").spun


def test_two_corners_in_one_move_are_paid_separately() -> None:
    """§2.7 / P9: "Several corners in one move → pay each separately"; a new corner id starts a
    new payment (Quarry Ring's T5 and T6, both 80, two rows apart)."""
    from tests.rules.speed_circuit.helpers import bundled

    quarry = bundled("quarry_ring")
    state = race(quarry, [car("ann", "B62", quarry, speed=120, wear=9)])
    resolution = turn(state, {"ann": "SPEED 120\nLANE B"})
    ann = resolution.state.car("ann")
    assert ann.space == "B68" and ann.wear == 5  # 40 over in T5 (2 wear), again in T6 (2 wear)
    assert ann.corner_run is not None and ann.corner_run.corner == "T6"
