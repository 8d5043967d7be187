"""What a program sent will cost, said in the confirmation (mail-interface.md,
"The confirmation": "program cost 125 of a 101-200 control range"): the chart's costs, the
terrain on the way, what the car carries, against control C = 1d100+100."""

from __future__ import annotations

from rules.speedphreakz import GAME
from rules.speedphreakz.model import CarStatus, Race
from tests.rules.speedphreakz.helpers import arena, car, race
from tests.rules.speedphreakz.test_options import GRASSY


def said(state: Race, player: str, text: str) -> tuple[str, ...]:
    parsed = GAME.parse_orders(state, player, text)
    assert not parsed.problems, parsed.problems
    return GAME.consequences(state, player, parsed.orders)


def test_a_cheap_program_stays_in_control_whatever_the_roll() -> None:
    """Seed, Control: "this will be an amount between 101 and 200"; §4.4: you lose control
    when "cumulative cost > C". F2 F1 costs 45 + 20 = 65 (the chart): never more than C."""
    state = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "", "bob": ""})
    assert said(state, "ann", "ROUND 3: F2 F1") == (
        "Round 3 program cost 65; control this round is 101-200, so you stay in control whatever the roll.",
    )


def test_a_dear_program_says_from_which_action_control_may_be_lost() -> None:
    """S4: "The one that takes cumulative cost above C; it and all later ones that round are
    rolled": F3 F2 F1 costs 75, 120, 140, so the second action is the first that C = 101..119
    does not cover; none goes above 200."""
    state = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "", "bob": ""})
    assert said(state, "ann", "ROUND 3: F3 F2 F1") == (
        "Round 3 program cost 140; control this round is 101-200, so you may lose control from action 2.",
    )


def test_terrain_and_what_the_car_carries_count() -> None:
    """§4.6: "grass: each square entered costs +10 control"; seed, Crashing: "submit your
    actions for the next round with the first action's cost increased by 50", and Control:
    the deficit "is added to the cost of your first action of the next round". A crashed car
    (surcharge 50, deficit 10) restarting on 3,2 facing N: F1 onto the grass costs
    60 + 20 + 10 = 90; RV back (30) makes 120, over the lowest C; F1 onto the grass again 150."""
    crashed = car("ann", (3, 2), "N", status=CarStatus.CRASHED, surcharge=50, deficit=10)
    state = race([crashed, car("bob", (3, 5), "E")], arena(GRASSY), programs={"bob": ""})
    assert said(state, "ann", "ROUND 2: F1") == (
        "Round 2 program cost 90 (60 carried over included); control this round is 101-200, "
        "so you stay in control whatever the roll.",
    )
    assert said(state, "ann", "ROUND 2: F1 RV F1") == (
        "Round 2 program cost 150 (60 carried over included); control this round is 101-200, "
        "so you may lose control from action 2.",
    )


def test_a_program_into_a_wall_says_it_crashes() -> None:
    """§4.5: "entering a wall or off-map square: crash"."""
    state = race([car("ann", (3, 2), "N"), car("bob", (3, 5), "E")], arena(GRASSY), programs={"ann": "", "bob": ""})
    (text,) = said(state, "ann", "ROUND 3: F3")
    assert text.endswith("drives into a solid: a crash.")
