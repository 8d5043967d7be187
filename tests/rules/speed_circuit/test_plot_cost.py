"""What a plot sent will cost, said in the confirmation before the deadline
(mail-interface.md, "The confirmation": "What the orders cost, where the game can say so
('this plot costs 2 wear and a top-speed test')"). The charges are the resolver's own, as
`plot_options` walks them; here for the one path the orders ask for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.speed_circuit import GAME
from rules.speed_circuit.car import Tyre
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.options import plot_cost, plot_options
from tests.rules.speed_circuit.helpers import bundled, car, race

HARBOUR = bundled("harbour_loop")  # T1: rows 11-14 posted 80, a red line C10 B11 A12 A13 B14
ORDER_WORDS = (
    "SPEED",
    "PATH",
    "LANE",
    "LINE",
    "PAY",
    "SKILL",
    "PUSH",
    "SLIP",
    "PASS",
    "PIT",
    "DESIGN",
    "TYRES",
    "BID",
    "MPS",
)


def said(state: RaceState, player: str, text: str) -> tuple[str, ...]:
    parsed = GAME.parse_orders(state, player, text)
    assert not parsed.problems, parsed.problems
    return GAME.consequences(state, player, parsed.orders)


def test_a_free_plot_says_it_costs_nothing() -> None:
    """§2.6, a straight: "Each space entered is straight ahead or diagonally forward"; at 60
    from B2 down lane B nothing is posted and no chart is paid."""
    state = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60)], laps=3)
    assert said(state, "ann", "SPEED 60\nPATH B B B") == (
        "This plot (60 mph, ending in B5) costs nothing: no wear, no test, no roll.",
    )


def test_braking_beyond_the_deceleration_says_the_wear_and_the_brakes_test() -> None:
    """Seed, Deceleration Chart: "60mph: Use 2 wear and test brakes" (PAY WEAR, the default):
    from 120 with DEC 40, 20 mph is 60 beyond the free deceleration."""
    state = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=120)], laps=3)
    (text,) = said(state, "ann", "SPEED 20\nPATH B")
    assert text.startswith("This plot (20 mph, ending in B3) costs 2 wear and brakes test")
    assert "braking 60 over your deceleration" in text


def test_a_push_says_its_test() -> None:
    """§2.5: "Exceeding Acceleration, Top Speed or Start Speed is allowed by +20 only, and only
    by passing a test": 120 from 60 (ACC 40) with PUSH YES is an acceleration test; on option
    tyres (seed, "Option Tires") 1 wear instead."""
    prime = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60)], laps=3)
    assert said(prime, "ann", "SPEED 120\nPUSH YES\nPATH B B B B B B") == (
        "This plot (120 mph, ending in B8) costs acceleration test.",
    )
    option = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60, tyres=Tyre.OPTION)], laps=3)
    (text,) = said(option, "ann", "SPEED 120\nPUSH YES\nPATH B B B B B B")
    assert text.startswith("This plot (120 mph, ending in B8) costs 1 wear")


def test_a_corner_taken_too_fast_says_the_chart_and_where() -> None:
    """Seed, Cornering Chart: "20mph: Use 1 wear, or consult chance table ... 80mph +: Crash
    off course": at 100 from B8 straight down lane B into T1 (80) costs 1 wear; at 160 it
    crashes the car (+80)."""
    state = race(HARBOUR, [car("ann", "B8", HARBOUR, speed=100)], laps=3)
    (text,) = said(state, "ann", "SPEED 100\nPATH B B B B B")
    assert text.startswith("This plot (100 mph, ending in B13) costs 1 wear (T1 +20 in B11 (80))")
    fast = race(HARBOUR, [car("ann", "B8", HARBOUR, speed=140)], laps=3)
    (crash,) = said(fast, "ann", "SPEED 160\nPATH B B B B B B B B")
    assert crash.startswith("This plot (160 mph, ending in B16) crashes the car off course")


def test_a_car_that_stays_on_the_way_is_named() -> None:
    """§2.6: "A car may not end in an occupied space"; a car a lap down moves after ann (P7),
    so it is still in B4 when she moves: the engine steers round it (P15)."""
    state = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60), car("dan", "B4", HARBOUR, lap=0)], laps=3)
    (text,) = said(state, "ann", "SPEED 60\nPATH B B B")
    assert "A car that moves after you is in B4" in text


def test_what_the_dice_decide_is_not_priced() -> None:
    """PAY ROLL and SKILL leave the cost to the dice (§2.8, the skill rules): nothing is said."""
    state = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=120)], laps=3)
    assert said(state, "ann", "SPEED 20\nPATH B\nPAY ROLL") == ()


@settings(max_examples=60, deadline=None)
@given(
    space=st.sampled_from(["A2", "B2", "C2", "B6", "A8", "B8", "C8", "B10"]),
    speed=st.sampled_from([0, 20, 40, 60, 80, 100, 120, 140]),
    wear=st.integers(0, 9),
    tyres=st.sampled_from(list(Tyre)),
    data=st.data(),
)
def test_the_cost_of_a_plot_is_the_cost_its_option_shows(
    space: str, speed: int, wear: int, tyres: Tyre, data: st.DataObject
) -> None:
    """The confirmation and the turn sheet's options never disagree: plotting an option's
    speed along its path (SPEED s + PATH its lanes, PUSH YES above the safe limit) costs just
    what the option is drawn with. No line of what is said starts with an order word."""
    state = race(HARBOUR, [car("ann", space, HARBOUR, speed=speed, wear=wear, tyres=tyres)], laps=3)
    options = plot_options(state, "ann")
    assert options is not None
    reaches = [r for r in options.reaches() if r.path]
    if not reaches:
        return
    reach = data.draw(st.sampled_from(reaches))
    text = f"SPEED {reach.speed}\nPATH {' '.join(reach.lanes)}" + ("\nPUSH YES" if reach.speed > speed else "")
    parsed = GAME.parse_orders(state, "ann", text)
    if parsed.problems:  # a path the grammar spells otherwise (e.g. past a dead end): nothing to compare
        return
    cost = plot_cost(state, "ann", parsed.orders)
    assert cost is not None
    assert cost.reach.path == reach.path
    assert (cost.reach.cost, cost.reach.wear, cost.reach.rolls) == (reach.cost, reach.wear, reach.rolls)
    for line in GAME.consequences(state, "ann", parsed.orders):
        assert "\n" not in line and not line.upper().startswith(ORDER_WORDS)
