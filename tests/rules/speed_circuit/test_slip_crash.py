"""Slipstreaming (§2.9, P16-P18) and crash involvement (§2.11, P26), with the seed's text."""

from __future__ import annotations

from rules.speed_circuit.car import Status, Tyre
from tests.rules.speed_circuit.helpers import car, race, scenario_track, texts, turn

TRACK = scenario_track("corner_test")


def test_slip_two_spaces_behind_a_car_at_120() -> None:
    """P16: a car that ends its move directly behind a car that ran 120 or more this turn may
    take up to 2 more spaces, on request (SLIP 2); the slip changes position, not speed."""
    state = race(TRACK, [car("bob", "B10", TRACK, speed=120), car("ann", "B9", TRACK, speed=120)])
    after = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 2"})
    ann = after.state.car("ann")
    assert after.state.car("bob").space == "B16"
    assert ann.progress == state.car("ann").progress + 8 and ann.speed == 120
    assert "slips 2 behind bob" in texts(after.events)


def test_a_slip_of_one_space_when_asked() -> None:
    """Seed: "A car due a 2 space slip bonus may take only 1 space if desired" (SLIP 1)."""
    state = race(TRACK, [car("bob", "B10", TRACK, speed=120), car("ann", "B9", TRACK, speed=120)])
    ann = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 1"}).state.car("ann")
    assert ann.progress == state.car("ann").progress + 7


def test_no_slip_unless_asked() -> None:
    """Seed: "it is the driver's responsibility to ask for a slipstream" (default SLIP 0)."""
    state = race(TRACK, [car("bob", "B10", TRACK, speed=120), car("ann", "B9", TRACK, speed=120)])
    ann = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120"}).state.car("ann")
    assert ann.space == "B15"


def test_no_slip_behind_a_car_plotted_under_120() -> None:
    """Seed: "The front car must be plotted for at least 120 mph" (P16)."""
    state = race(TRACK, [car("bob", "B12", TRACK, speed=100), car("ann", "B11", TRACK, speed=100)])
    after = turn(state, {"bob": "SPEED 100", "ann": "SPEED 100\nSLIP 2"})
    assert after.state.car("ann").space == "B16"
    assert "bob was plotted for 100 (a slip needs 120 or more)" in texts(after.events)


def test_slip_behind_a_car_plotted_120_that_failed_its_test() -> None:
    """Seed: "The front car must be plotted for at least 120 mph": the plot counts, not the
    speed run (§2.9 (b), P16), so a car plotted for 120 that fails its acceleration test and
    runs 100 may still be slipped."""
    front = car("bob", "B10", TRACK, speed=80, acc=20)  # safe 100; 120 is a push, an acceleration test
    state = race(TRACK, [front, car("ann", "B9", TRACK, speed=100)])
    # bob's test: 5 + 6 = 11 fails (replot 100, engine damage); he runs 5 spaces to B15
    after = turn(state, {"bob": "SPEED 120\nPUSH YES", "ann": "SPEED 100\nSLIP 2"}, 5, 6)
    assert after.state.car("bob").space == "B15" and after.state.car("bob").engine_damage == 1
    assert "slips 2 behind bob" in texts(after.events)
    assert after.state.car("ann").progress == state.car("ann").progress + 5 + 2


def test_slip_behind_a_car_plotted_120_that_spun() -> None:
    """Seed: "The front car must be plotted for at least 120 mph" and nothing more: a front
    car that spins after braking 80 over its deceleration (seed "Deceleration Chart": "Use 3
    wear and test brakes and spin") was still plotted for 120, so it may be slipped."""
    front = car("bob", "B10", TRACK, speed=200, top=200, dec=0)  # 120 is 80 under its free deceleration
    state = race(TRACK, [front, car("ann", "B9", TRACK, speed=100)])
    # bob: 3 wear and the brakes test (3 + 3: safe), moves 6 spaces to B16 and spins
    after = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 2"}, 3, 3)
    assert after.state.car("bob").space == "B16" and after.state.car("bob").spun
    assert "slips 2 behind bob" in texts(after.events)
    assert after.state.car("ann").progress == state.car("ann").progress + 6 + 2


def test_no_slip_if_either_car_began_at_0() -> None:
    """Seed: "drivers may not take a slipstream bonus if either involved car began the turn at 0 mph"."""
    state = race(TRACK, [car("bob", "B13", TRACK, speed=0, start=120), car("ann", "B12", TRACK, speed=120)])
    after = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 2"})
    assert after.state.car("bob").space == "B19"
    assert after.state.car("ann").space == "B18"
    assert "began the turn at 0" in texts(after.events)


def test_two_cars_compete_for_one_slip() -> None:
    """Seed: "When 2 cars would otherwise legally slip the same car, the first of those cars
    to take advantage of the slip will be the only car allowed to take that slip" (P18: the
    earlier in the order of movement)."""
    cars = [car("bob", "B10", TRACK, speed=120), car("ann", "B9", TRACK, speed=120), car("cat", "B8", TRACK, speed=140)]
    state = race(TRACK, cars)
    after = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 2", "cat": "SPEED 140\nSLIP 2"})
    assert "slips 2 behind bob" in texts(after.events)
    assert after.state.car("cat").space == "B15"
    assert "ann already took bob's slip" in texts(after.events)


def test_slip_may_not_carry_a_car_into_a_corner_by_default() -> None:
    """P17: base rule: slips through corners only as the seed's base allows; a slip alone
    may not carry a car into a corner (the seed's optional rule), so a 2-space slip that
    would reach the corner is cut to 1."""
    cars = [car("bob", "B23", TRACK, speed=120, lap=1), car("ann", "B22", TRACK, speed=120, lap=1)]
    state = race(TRACK, cars, laps=3)
    after = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 2"})
    ann = after.state.car("ann")
    assert after.state.car("bob").space == "B5" and ann.space in ("A5", "C5") and ann.wear == 9


def test_optional_rule_lets_a_slip_enter_a_corner_paying_cornering() -> None:
    """P17 option (optional_slip=yes): "Cars may enter a corner solely due to a slip stream
    bonus", cornering paid at the slipper's plotted speed: 120 in the 60 corner is 60 over,
    2 wear and a chance roll."""
    cars = [car("bob", "B23", TRACK, speed=120, lap=1), car("ann", "B22", TRACK, speed=120, lap=1, skill=6)]
    state = race(TRACK, cars, laps=3, optional_slip=True)
    after = turn(state, {"bob": "SPEED 120", "ann": "SPEED 120\nSLIP 2\nSKILL CHANCE"})
    ann = after.state.car("ann")
    assert ann.space is not None  # on the track
    assert TRACK.space(ann.space).corner == "T1"
    assert ann.wear == 7 and ann.skill == 4


def test_no_slip_from_the_last_space_of_a_corner_by_default() -> None:
    """P17 / seed optional rule: "A car that is on the last number space of a corner, may
    slip a car in front of it" only when the optional rules are in play."""
    cars = [car("bob", "B3", TRACK, speed=120), car("ann", "B2", TRACK, speed=120)]
    # bob runs 120 through the 60 corner on skill; ann ends on B8, the corner's last space
    state = race(TRACK, cars)
    plots = {"bob": "SPEED 120\nSKILL CHANCE", "ann": "SPEED 120\nSLIP 2\nSKILL CHANCE"}
    after = turn(state, plots)
    assert after.state.car("ann").space == "B8"
    assert "last space of a corner" in texts(after.events)
    optional = race(TRACK, cars, optional_slip=True)
    assert after.state.car("ann").progress < turn(optional, plots).state.car("ann").progress


# -- crash involvement ---------------------------------------------------------------------


def test_a_crash_and_two_cars_rolling_for_involvement() -> None:
    """Seed "Crash Involvement": "mark the row it occurred on and remove the crashed car
    immediately ... Any other car that subsequently ends its move in or beyond the marked
    row of spaces must roll on the chance table" with -2 (0-2 spaces after), -1 (3 or more),
    -1 more for a 3-wide row; P26."""
    cars = [car("bob", "B4", TRACK, speed=100), car("ann", "A2", TRACK, speed=80), car("cat", "C1", TRACK, speed=100)]
    state = race(TRACK, cars)
    plots = {"bob": "SPEED 100\nPAY ROLL", "ann": "SPEED 80\nLINE", "cat": "SPEED 100"}
    # bob: 1 wear + chance roll 12 = crash in B6 (row 6, 3-wide); ann ends A6: 0 rows past,
    # -2 -1 = -3: 5-3 = 2 safe; cat ends C6 at 100 (+40: 2 wear), -3: 12-3 = 9: spin
    after = turn(state, plots, 6, 6, 2, 3, 6, 6)
    assert after.state.car("bob").status is Status.OUT
    log = texts(after.events)
    assert "rolls 5-3 = 2 on the chance table (0 rows past bob's crash in row 6, -3)" in log
    assert "rolls 12-3 = 9 on the chance table" in log
    assert after.state.car("cat").spun and after.state.car("cat").speed == 0
    assert not after.state.car("ann").spun


def test_crash_involvement_close_behind_and_the_cheaper_skill_bypass() -> None:
    """Crash mods: "If modifiers are -2 or -3 then only 1s is required to avoid this roll"
    (P5): cat ends 2 rows past a 3-wide crash row (-3) and bypasses it with 1 chip."""
    cars = [car("bob", "B4", TRACK, speed=100), car("cat", "C3", TRACK, speed=100, skill=6)]
    state = race(TRACK, cars)
    after = turn(state, {"bob": "SPEED 100\nPAY ROLL", "cat": "SPEED 100\nSKILL CRASH"}, 6, 6)
    cat = after.state.car("cat")
    assert cat.space == "C8" and cat.skill == 5


def test_crash_involvement_three_or_more_rows_past() -> None:
    """Crash mods: "move completed 3 or more spaces after crash row -1", with -1 for the
    3-wide row: -2 (and so 1 chip would bypass it)."""
    cars = [car("bob", "B4", TRACK, speed=100), car("cat", "C3", TRACK, speed=120, skill=6)]
    state = race(TRACK, cars)
    # cat: C4..C9 at 120 through the 60 corner: 2 wear + the chance roll, bypassed (2 chips)
    after = turn(state, {"bob": "SPEED 100\nPAY ROLL", "cat": "SPEED 120\nSKILL CHANCE"}, 6, 6, 3, 3)
    assert "rolls 6-2 = 4 on the chance table (3 rows past bob's crash in row 6, -2): safe" in texts(after.events)
    skilled = turn(state, {"bob": "SPEED 100\nPAY ROLL", "cat": "SPEED 120\nSKILL CHANCE CRASH"}, 6, 6)
    assert skilled.state.car("cat").skill == 3


def test_option_tyres_replace_the_crash_roll_with_wear() -> None:
    """P12: "any situation" for the chance table includes crash involvement: on option tyres
    1 wear replaces the roll."""
    cars = [car("bob", "B4", TRACK, speed=100), car("ann", "A2", TRACK, speed=80, tyres=Tyre.OPTION)]
    state = race(TRACK, cars)
    after = turn(state, {"bob": "SPEED 100\nPAY ROLL", "ann": "SPEED 80\nLINE"}, 6, 6)
    assert after.state.car("ann").wear == 8


def test_cars_that_moved_before_the_crash_do_not_roll() -> None:
    """P26: only cars that move later in the same turn; the mark lasts until the end of the turn."""
    cars = [car("dan", "B9", TRACK, speed=40), car("bob", "B4", TRACK, speed=100)]
    state = race(TRACK, cars)
    after = turn(state, {"dan": "SPEED 40", "bob": "SPEED 100\nPAY ROLL"}, 6, 6)
    assert after.state.car("dan").space == "B11"
    nxt = turn(after.state, {"dan": "SPEED 40"})
    assert "chance table" not in texts(nxt.events)


def test_slip_through_a_corner_with_cornering_paid() -> None:
    """Seed: "Cars may slipstream through a corner as long as all other slipstreaming rules
    are obeyed"; P17: cornering is paid at the slipper's plotted speed. ann has paid +60 for
    T1 (2 wear and the chance table, bypassed) and slips on through it at no more cost."""
    cars = [car("bob", "B1", TRACK, lap=2, speed=120), car("ann", "B24", TRACK, lap=1, speed=120)]
    state = race(TRACK, cars, laps=3)
    plots = {"bob": "SPEED 120\nSKILL CHANCE", "ann": "SPEED 120\nSLIP 2\nSKILL CHANCE"}
    after = turn(state, plots)
    ann = after.state.car("ann")
    assert after.state.car("bob").space == "B7"
    assert ann.progress == state.car("ann").progress + 8
    assert ann.space is not None and TRACK.space(ann.space).corner == "T1" and (ann.wear, ann.skill) == (7, 4)


def test_crash_involvement_behind_a_two_wide_crash_row_costs_two_chips() -> None:
    """Crash mods: only -1 when 3 or more rows past a crash row that is not 3-wide, so the
    skill bypass costs the chance table's usual 2 chips (P5), not 1."""
    from tests.rules.speed_circuit.helpers import bundled

    harbour = bundled("harbour_loop")
    cars = [car("bob", "B21", harbour, speed=140), car("cat", "A20", harbour, speed=160, skill=6)]
    state = race(harbour, cars, laps=3)
    # bob: 140 into the 120 T2 (2-wide) is 20 over, PAY ROLL: 12, crash on course in B25
    after = turn(state, {"bob": "SPEED 140\nPAY ROLL", "cat": "SPEED 160\nLINE\nSKILL CRASH"}, 6, 6)
    assert harbour.width(25) == 2 and after.state.car("bob").status is Status.OUT
    cat = after.state.car("cat")
    assert cat.space == "A28" and cat.skill == 4
    assert "spends 2 skill to pass the chance table (3 rows past bob's crash in row 25, -1)" in texts(after.events)
