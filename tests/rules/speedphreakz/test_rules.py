"""SpeedPhreakz rules, one test per rule of shared/design/speedphreakz.md (the seed's rules
kept in §4.2, the designed chart and terrain of §4.4-§4.7, and resolutions S1-S16).

Dice are scripted: the control d100 first, then each d10 face in the order rolled.
"""

from __future__ import annotations

import dataclasses

import pytest

from rules.api import IllegalOrderError, ProblemKind
from rules.speedphreakz import GAME
from rules.speedphreakz.data import chart, terrain_key
from rules.speedphreakz.model import (
    Car,
    CarStatus,
    Heading,
    NoOrders,
    Options,
    Program,
    Progress,
    Race,
    Restart,
    Square,
)
from rules.speedphreakz.parse import check, parse_line
from rules.speedphreakz.resolve import crash_surcharge, distance_behind, reckless_result, restart_squares
from tests.rules.speedphreakz.helpers import (
    ScriptedRandom,
    arena,
    at,
    car,
    control,
    kinds,
    play,
    race,
)

# -- §4.2 Control ------------------------------------------------------------------------


def test_control_is_one_d100_plus_100_rolled_once_for_everyone() -> None:
    """§4.2: "C = 1d100+100 (101-200), rolled after submission, the same for everyone"."""
    state = race([car("ann", (2, 2)), car("bob", (2, 4))], programs={"ann": "F1", "bob": "F1"})
    rng = ScriptedRandom([control(137)])
    resolution = GAME.resolve(state, {}, rng)
    assert rng.asked == [(1, 100)]
    [event] = kinds(resolution, "control")
    assert event.roll is not None and event.roll.dice == "d100" and event.roll.faces == (37,)
    assert "137" in event.text
    assert resolution.state.last_control == 137


def test_the_chart_costs_are_charged_per_action() -> None:
    """§4.2 "Actions cost control" with the §4.4 costs: F2 45 + F1 20 + VR 30 = 95."""
    state = race([car("ann", (2, 3))], programs={"ann": "F2 F1 VR"})
    [drive] = kinds(play(state, [control(150)]), "drive")
    assert "95 spent of 150" in drive.text


def test_exactly_c_spent_is_still_in_control() -> None:
    """S4 / §4.4: "Run out = cumulative cost > C (exactly C left is still in control)"."""
    state = race([car("ann", (1, 3))], programs={"ann": "F3 F2 F1"})  # 75 + 45 + 20 = 140
    resolution = play(state, [control(140)])  # no d10 is asked for
    assert kinds(resolution, "d10") == []
    assert at(resolution, "ann").square == Square(7, 3)
    assert at(resolution, "ann").deficit == 0


def test_the_action_that_exceeds_c_and_every_later_one_is_rolled() -> None:
    """S4: "The one that takes cumulative cost above C; it and all later ones that round are
    rolled." (F3 F2 = 120, the third action reaches 140 > 139.)"""
    state = race([car("ann", (1, 3))], programs={"ann": "F3 F2 F1 F1"})
    resolution = play(state, [control(139), 4, 5])  # faces 4 and 5: "As ordered"
    rolls = kinds(resolution, "d10")
    assert [("action 3" in e.text, "action 4" in e.text) for e in rolls] == [(True, False), (False, True)]
    assert at(resolution, "ann").square == Square(8, 3)


def test_a_result_off_the_table_crashes() -> None:
    """§4.2: "A result outside the table's range -> crash" (R 1, +1 for the first action
    out of control, pushes a 9 to 11)."""
    state = race([car("ann", (2, 3), recklessness=1, deficit=100)], programs={"ann": "F1"})
    resolution = play(state, [control(101), 9])
    assert at(resolution, "ann").status is CarStatus.CRASHED
    assert "off the table" in kinds(resolution, "d10")[0].text


def test_the_end_of_round_deficit_is_added_to_next_rounds_first_action() -> None:
    """§4.2: "The end-of-round deficit is added to the cost of next round's first action.
    Unused control is lost." Round 2 ends 19 over; round 3 (C = 120) would be exactly in
    control with F3 F2, but the carried 19 takes the second action over."""
    state = race([car("ann", (1, 3))], programs={"ann": "F3 F2"})
    first = play(state, [control(101), 5], texts={"ann": "ROUND 3: F3 F2"})  # F2 at 120 > 101: rolled
    assert at(first, "ann").deficit == 19
    second = play(first.state, [control(120), 5])
    [roll] = kinds(second, "d10")
    assert "action 2" in roll.text
    assert at(second, "ann").deficit == 19


def test_unused_control_is_lost() -> None:
    """§4.2 / seed: "you do not get to reduce the cost of your first action by being under"."""
    state = race([car("ann", (1, 3))], programs={"ann": "F1"})
    resolution = play(state, [control(200)])
    assert at(resolution, "ann").deficit == 0


def test_the_ordered_cost_is_charged_whatever_the_action_becomes() -> None:
    """S5: "The ordered action's cost, plus terrain surcharges actually incurred": a spun F2
    still costs 45 (75 + 45 - 101 = 19 over)."""
    state = race([car("ann", (1, 3))], programs={"ann": "F3 F2"})
    after = at(play(state, [control(101), 0]), "ann")  # F2 rolled: 0, Spin left
    assert (after.square, after.heading, after.deficit) == (Square(4, 3), Heading.N, 19)


def test_only_the_surcharges_actually_incurred_are_charged() -> None:
    """S5: an F3 cut to two squares by "Under" pays for two grass squares, not three:
    100 carried + 75 + 2 x 10 = 195, 94 over C 101."""
    rows = list(arena().grid)
    rows[3] = "#S,,,,.......#"
    state = race([car("ann", (1, 3), deficit=100)], arena(rows), programs={"ann": "F3"})
    after = at(play(state, [control(101), 4]), "ann")  # first action out of control: 4 - 1 = 3
    assert (after.square, after.deficit) == (Square(3, 3), 94)


# -- §4.2 Recklessness, S6, S7 ----------------------------------------------------------------


def test_first_action_losing_control_gains_a_point_at_once() -> None:
    """§4.2 "+1 if the round's first action already loses control" and S6 "Immediately":
    the same roll is pushed. Carried 120 + F1 20 = 140 > 101; face 4 - 1 = 3: Under, so F1
    moves no square."""
    state = race([car("ann", (3, 3), deficit=120)], programs={"ann": "F1"})
    resolution = play(state, [control(101), 4])
    [roll] = kinds(resolution, "d10")
    assert "recklessness 1 -> 3: Under" in roll.text
    assert at(resolution, "ann").square == Square(3, 3)
    assert at(resolution, "ann").recklessness == 1


def test_each_hundred_of_deficit_adds_a_point_as_it_is_crossed() -> None:
    """S7: "floor(deficit/100), gained as each multiple of 100 is crossed". Deficit after each
    action: 69 (first action: R1), 89, 109 (R2 from this roll on), 129."""
    state = race([car("ann", (6, 3), deficit=150)], programs={"ann": "F1 F1 F1 F1"})
    resolution = play(state, [control(101), 4, 4, 3, 4])
    texts = [e.text for e in kinds(resolution, "d10")]
    assert "recklessness 1 -> 3" in texts[0] and "recklessness 1 -> 3" in texts[1]
    assert "recklessness 2 -> 1: Slide left" in texts[2]
    assert "recklessness 2 -> 2: Twitch left" in texts[3]
    assert at(resolution, "ann").recklessness == 2
    assert at(resolution, "ann").deficit == 129


def test_a_large_deficit_counts_every_hundred() -> None:
    """S7 with the seed's "+1 per 100 points of deficit": 209 over is two points, plus one
    for the first action."""
    state = race([car("ann", (6, 3), deficit=290)], programs={"ann": "F1"})
    resolution = play(state, [control(101), 4])  # 4 - 3 = 1: Slide left, then F1
    assert at(resolution, "ann").recklessness == 3
    assert at(resolution, "ann").square == Square(7, 2)


def test_recklessness_resets_after_a_round_without_losing_control() -> None:
    """§4.2: "reset to 0 after a round with no loss of control"."""
    state = race([car("ann", (3, 3), recklessness=2)], programs={"ann": "F1"})
    assert at(play(state, [control(150)]), "ann").recklessness == 2 - 2


def test_recklessness_is_kept_after_a_round_that_lost_control() -> None:
    """§4.2: recklessness is only reset by a clean round or a crash."""
    state = race([car("ann", (3, 3), recklessness=2)], programs={"ann": "F3 F2"})
    resolution = play(state, [control(101), 4])  # 4 - 2 = 2: Twitch left, then F2 north-east
    assert at(resolution, "ann").recklessness == 2
    assert at(resolution, "ann").status is CarStatus.RACING


@pytest.mark.parametrize(
    ("face", "recklessness", "result"),
    [(3, 1, 2), (5, 1, 6), (9, 1, 10), (0, 0, 0), (4, 0, 4), (4, 2, 2), (5, 3, 8), (0, 1, -1)],
)
def test_recklessness_pushes_away_from_the_middle(face: int, recklessness: int, result: int) -> None:
    """S1 / §4.3: "one point would turn a 3 into a 2, a 5 into 6, a 9 into 10/a crash":
    faces 0-9, middle 4.5; r <= 4 -> r - R, r >= 5 -> r + R."""
    assert reckless_result(face, recklessness) == result


def test_recklessness_one_only_crashes_on_0_and_9() -> None:
    """§4.4: "With R = 1, only 0 and 9 can crash. With R = 2, raw 0/1/8/9 crash"."""
    off = {r: [f for f in range(10) if not 0 <= reckless_result(f, r) <= 9] for r in (1, 2)}
    assert off == {1: [0, 9], 2: [0, 1, 8, 9]}


def test_the_d10_reads_zero_to_nine() -> None:
    """S1: "Faces 0-9": every d10 is rolled as randint(0, 9), and a 0 with no recklessness is
    on the table (Spin left), not a crash."""
    state = race([car("ann", (3, 3), oil=True)], programs={"ann": "F1"})
    rng = ScriptedRandom([control(150), 0])
    resolution = GAME.resolve(state, {}, rng)
    assert rng.asked == [(1, 100), (0, 9)]
    [roll] = kinds(resolution, "d10")
    assert roll.roll is not None and roll.roll.dice == "d10" and roll.roll.faces == (0,)
    assert "Spin left" in roll.text
    assert at(resolution, "ann").heading is Heading.N


# -- §4.4 the loss-of-control table -----------------------------------------------------------


@pytest.mark.parametrize(
    ("face", "square", "heading"),
    [
        (0, (6, 3), "N"),  # Spin left: turn 90 left in place, movement lost
        (1, (7, 2), "E"),  # Slide left: shift to the car's left, then F1
        (2, (7, 2), "NE"),  # Twitch left: turn 45 left, then F1 (now north-east)
        (3, (6, 3), "E"),  # Under: movement -1
        (4, (7, 3), "E"),  # As ordered
        (5, (7, 3), "E"),
        (6, (8, 3), "E"),  # Over: movement +1
        (7, (7, 4), "SE"),  # Twitch right
        (8, (7, 4), "E"),  # Slide right
        (9, (6, 3), "S"),  # Spin right
    ],
)
def test_loss_of_control_table_on_a_forward(face: int, square: tuple[int, int], heading: str) -> None:
    """§4.4 loss-of-control table, each face applied to F1 from 6,3 facing E (rolled because
    of oil, so no recklessness applies)."""
    state = race([car("ann", (6, 3), oil=True)], programs={"ann": "F1"})
    resolution = play(state, [control(150), face])
    assert at(resolution, "ann").square == Square(*square)
    assert at(resolution, "ann").heading is Heading(heading)


@pytest.mark.parametrize(("face", "heading"), [(3, "E"), (4, "SE"), (6, "S"), (0, "N")])
def test_under_and_over_change_a_turn_by_45_degrees(face: int, heading: str) -> None:
    """§4.4: "Under: ... turns -45 (min 0)"; "Over: ... turns +45"; a spin replaces it."""
    state = race([car("ann", (6, 3), recklessness=0)], programs={"ann": "F1 TR"})
    # F1 enters oil, so TR (the next action) is rolled
    rows = list(arena().grid)
    rows[3] = rows[3][:7] + "o" + rows[3][8:]
    state = dataclasses.replace(state, circuit=arena(rows))
    resolution = play(state, [control(150), face])
    assert at(resolution, "ann").heading is Heading(heading)


def test_veer_over_moves_two_diagonally_and_turns_90() -> None:
    """§4.4 "Over: movement +1 square; turns +45" applied to VR (both parts)."""
    state = race([car("ann", (3, 1), oil=True)], programs={"ann": "VR"})
    resolution = play(state, [control(150), 6])
    assert at(resolution, "ann").square == Square(5, 3)
    assert at(resolution, "ann").heading is Heading.S


# -- the chart and the order restrictions (§4.4, S2, S11) ----------------------------------------


def test_the_chart_is_the_designed_one() -> None:
    """S2 / §4.4: the designed codes and costs, movement or turn, kept as data."""
    table = {a.code: (a.cost, a.is_turn) for a in chart().actions}
    assert table == {
        "F1": (20, False),
        "F2": (45, False),
        "F3": (75, False),
        "RV": (30, False),
        "VL": (30, False),
        "VR": (30, False),
        "TL": (15, True),
        "TR": (15, True),
        "HL": (35, True),
        "HR": (35, True),
    }
    names = [o.name for o in chart()["F1"].table]
    assert names == [
        "Spin left",
        "Slide left",
        "Twitch left",
        "Under",
        "As ordered",
        "As ordered",
        "Over",
        "Twitch right",
        "Slide right",
        "Spin right",
    ]


def test_first_action_must_be_a_movement() -> None:
    """§4.2: "a round's first action must be a forward or reverse (not a turn)"."""
    state = race([car("ann", (3, 3))])
    parsed = GAME.parse_orders(state, "ann", "ROUND 3: TL F1")
    assert parsed.orders == () and parsed.problems[0].kind is ProblemKind.ILLEGAL
    assert "first action" in parsed.problems[0].reason


def test_two_turns_may_never_be_consecutive() -> None:
    """§4.2: "two turn actions may never be consecutive"."""
    state = race([car("ann", (3, 3))])
    parsed = GAME.parse_orders(state, "ann", "ROUND 3: F1 TL HR F1")
    assert parsed.orders == () and "two turns in a row (TL HR)" in parsed.problems[0].reason


def test_a_veer_is_a_movement_not_a_turn() -> None:
    """S11: "Is a veer a turn ...? No: straight tail = movement." VL may open a round and may
    sit between two turns."""
    state = race([car("ann", (3, 3))])
    parsed = GAME.parse_orders(state, "ann", "ROUND 3: VL TR VR TL RV")
    assert parsed.ok and parsed.orders == (Program(3, ("VL", "TR", "VR", "TL", "RV")),)


def test_reverse_moves_back_with_heading_unchanged() -> None:
    """§4.4 RV: "move 1 square back, heading unchanged"."""
    state = race([car("ann", (6, 3), "NE")], programs={"ann": "RV"})
    resolution = play(state, [control(150)])
    assert (at(resolution, "ann").square, at(resolution, "ann").heading) == (Square(5, 4), Heading.NE)


# -- §4.6 terrain ----------------------------------------------------------------------------


def _strip(row: str) -> list[str]:
    rows = list(arena().grid)
    rows[3] = row
    return rows


def test_grass_and_gravel_surcharge_each_square_entered() -> None:
    """§4.6: grass "+10 control" and gravel "+20 per square entered": F3 over , : . costs
    75 + 10 + 20."""
    state = race([car("ann", (1, 3))], arena(_strip("#S,:.........#")), programs={"ann": "F3"})
    [drive] = kinds(play(state, [control(200)]), "drive")
    assert "105 spent of 200" in drive.text


def test_a_surcharge_can_lose_control_mid_action() -> None:
    """§4.6 grass: "added at that moment (can cause loss of control mid-action)": F3 costs 75;
    with C = 101 the third grass square (105) goes over, and the rest of the action is rolled
    (first action: +1 recklessness)."""
    state = race([car("ann", (1, 3))], arena(_strip("#S,,,,.......#")), programs={"ann": "F3"})
    resolution = play(state, [control(101), 5])  # 5 + 1 = 6: Over, one more square
    [lost] = kinds(resolution, "lost control")
    assert "action 1" in lost.text and "105 spent" in lost.text
    assert at(resolution, "ann").square == Square(5, 3)
    assert at(resolution, "ann").recklessness == 1


def test_oil_rolls_the_next_action_without_deficit() -> None:
    """§4.6 oil: "the car's next action is resolved on the loss-of-control table even if
    control remains (no deficit added)". Recklessness does not push it: the car is in control."""
    state = race([car("ann", (1, 3), recklessness=3)], arena(_strip("#So..........#")), programs={"ann": "F1 F1 F1"})
    resolution = play(state, [control(200), 9])  # 9 (not 12: in control) = Spin right
    [roll] = kinds(resolution, "d10")
    assert "action 2" in roll.text and "on oil" in roll.text
    car_after = at(resolution, "ann")
    assert (car_after.square, car_after.heading, car_after.deficit) == (Square(2, 4), Heading.S, 0)
    assert car_after.recklessness == 0  # no loss of control this round


def test_oil_carries_to_the_next_round() -> None:
    """§4.6: the *next* action, even if it is the next round's first."""
    state = race([car("ann", (1, 3))], arena(_strip("#So..........#")), programs={"ann": "F1"})
    first = play(state, [control(150)], texts={"ann": "ROUND 3: F1"})
    assert at(first, "ann").oil
    second = play(first.state, [control(150), 4])
    assert len(kinds(second, "d10")) == 1 and not at(second, "ann").oil


def test_a_barrier_is_solid_and_the_car_stays_on_its_last_legal_square() -> None:
    """§4.5: "entering a wall or off-map square -> crash. The car stays in the last legal
    square, and the crash location is that last legal square"; checked square by square."""
    state = race([car("ann", (10, 3))], programs={"ann": "F3 F1"})
    resolution = play(state, [control(200)])
    after = at(resolution, "ann")
    assert (after.status, after.square) == (CarStatus.CRASHED, Square(12, 3))
    assert "barrier at 13,3" in kinds(resolution, "crash")[0].text


def test_void_is_solid() -> None:
    """§4.6: "` ` (space, or off-map) | void | solid"."""
    state = race([car("ann", (1, 3))], arena(_strip("#S.. ........#")), programs={"ann": "F3"})
    after = at(play(state, [control(200)]), "ann")
    assert (after.status, after.square) == (CarStatus.CRASHED, Square(3, 3))


def test_a_diagonal_squeeze_between_two_solids_crashes() -> None:
    """§4.5: "A diagonal step squeezing between two orthogonally adjacent solids also crashes"."""
    rows = list(arena().grid)
    rows[2] = "#...#........#"
    rows[3] = "#S...#.......#"
    state = race([car("ann", (4, 3), "NE")], arena(rows), programs={"ann": "F1"})
    after = at(play(state, [control(200)]), "ann")
    assert (after.status, after.square) == (CarStatus.CRASHED, Square(4, 3))


def test_the_terrain_key_is_the_designed_one() -> None:
    """S3 / §4.6: the terrain key as data."""
    key = {t.char: (t.name, t.solid, t.surcharge, t.oil) for t in terrain_key()}
    assert key == {
        ".": ("tarmac", False, 0, False),
        "S": ("start/finish line", False, 0, False),
        ",": ("grass", False, 10, False),
        ":": ("gravel", False, 20, False),
        "o": ("oil", False, 0, True),
        "#": ("barrier", True, 0, False),
        " ": ("void", True, 0, False),
    }


# -- §4.5 simultaneity and crashes ------------------------------------------------------------


def test_cars_do_not_block_each_other_during_the_round() -> None:
    """§4.5: "Cars do not block each other during the round" (bob drives through ann)."""
    state = race([car("ann", (5, 3)), car("bob", (3, 3))], programs={"ann": "", "bob": "F3 F2"})
    resolution = play(state, [control(200)])
    assert at(resolution, "bob").square == Square(8, 3)
    assert kinds(resolution, "crash") == []


def test_ending_the_round_on_the_same_square_crashes_both() -> None:
    """§4.5 "Same square: at the end of the round, all cars sharing a square crash", then one
    adjacency pass (cat, next to them, crashes too)."""
    state = race(
        [car("ann", (3, 3)), car("bob", (5, 1), "S"), car("cat", (6, 4))],
        programs={"ann": "F2", "bob": "F2", "cat": ""},
    )
    resolution = play(state, [control(200)])
    assert {p: at(resolution, p).status for p in ("ann", "bob", "cat")} == {
        "ann": CarStatus.CRASHED,
        "bob": CarStatus.CRASHED,
        "cat": CarStatus.CRASHED,
    }
    assert "same square as bob" in kinds(resolution, "crash")[0].text


def test_ending_the_round_on_a_wrecks_square_crashes() -> None:
    """The seed: "If you ... end the round on the same square as someone ... you are considered
    to have crashed"; §4.5 "Same square: at the end of the round, all cars sharing a square
    crash. Then run one adjacency pass for those crashes." A car that crashed earlier in the
    round is still someone: ann hits the barrier in step 1 and her wreck stays at 12,3; bob
    ends the round on it and crashes (ann does not crash twice); dan, beside bob at the end,
    is caught by the adjacency pass."""
    state = race(
        [car("ann", (11, 3)), car("bob", (8, 3)), car("dan", (8, 2))],
        programs={"ann": "F2", "bob": "F1 F3", "dan": "F1 F2"},
    )
    resolution = play(state, [control(200)])
    assert {p: (at(resolution, p).status, at(resolution, p).square) for p in ("ann", "bob", "dan")} == {
        "ann": (CarStatus.CRASHED, Square(12, 3)),
        "bob": (CarStatus.CRASHED, Square(12, 3)),
        "dan": (CarStatus.CRASHED, Square(11, 2)),
    }
    crashes = [e.text for e in kinds(resolution, "crash")]
    assert crashes[0].startswith("ann drives into the barrier at 13,3")
    assert crashes[1].startswith("bob ends the round on the same square as ann")
    assert crashes[2].startswith("dan is caught in bob's crash at the end of the round")
    assert len(crashes) == 3 and at(resolution, "ann").crashes == 1


def test_a_wreck_spreads_adjacency_only_in_its_crash_step() -> None:
    """§4.5 / S8: "adjacency checked at the crash step, no chains": a car that ends the round
    next to a wreck (not on it) does not crash."""
    state = race([car("ann", (11, 3)), car("bob", (8, 3))], programs={"ann": "F2", "bob": "F1 F2"})
    resolution = play(state, [control(200)])
    assert at(resolution, "ann").status is CarStatus.CRASHED
    assert (at(resolution, "bob").status, at(resolution, "bob").square) == (CarStatus.RACING, Square(11, 3))


def test_a_crash_stops_the_car_and_scraps_its_next_program() -> None:
    """§4.2 Crash: "stops at once and loses its remaining actions; its queued orders are
    scrapped; recklessness -> 0"; S9 "The queued orders for the next round are discarded"."""
    state = race([car("ann", (12, 3), recklessness=1, deficit=90)], programs={"ann": "F1 F1 F1"})
    # 110 > 101 on the first action: R 2; 4 - 2 = 2, Twitch left into the barrier at 13,2
    resolution = play(state, [control(101), 4], texts={"ann": "ROUND 3: F1 F1"})
    after = at(resolution, "ann")
    assert after.status is CarStatus.CRASHED and after.square == Square(12, 3)
    assert after.program(3) is None and after.recklessness == 0
    assert after.surcharge == crash_surcharge(2) == 150  # R 1 + 1 (first action out of control)
    assert resolution.state.allowed_rounds("ann") == (3, 4)


def test_the_crashed_player_resubmits_with_the_surcharge_on_the_first_action() -> None:
    """S9: "the player resubmits that round (first action +50 +50*R) and then the following
    round as normal"; §4.4 "The carried deficit and the crash surcharge are added to the
    first action's cost"."""
    state = race([car("ann", (12, 3), recklessness=1, deficit=90)], programs={"ann": "F1 F1 F1"})
    crashed = play(state, [control(101), 4]).state  # deficit 9 carried, surcharge 150
    assert crashed.car("ann").deficit == 9
    resolution = play(crashed, [control(200)], texts={"ann": "RESTART 11,3 FACING W\nROUND 3: F1\nROUND 4: F2"})
    after = at(resolution, "ann")
    assert (after.square, after.heading, after.status) == (Square(10, 3), Heading.W, CarStatus.RACING)
    assert "179 spent of 200" in kinds(resolution, "drive")[0].text  # 20 + 150 + 9
    assert after.surcharge == 0 and after.program(4) == Program(4, ("F2",))


def test_a_loss_of_control_crash_counts_recklessness_gained_that_round() -> None:
    """S6: "on a crash, after computing the surcharge": R 1, first action out of control +1,
    then 0 - 2 is off the table: surcharge 50 + 2 x 50."""
    state = race([car("ann", (5, 3), recklessness=1, deficit=100)], programs={"ann": "F1"})
    after = at(play(state, [control(101), 0]), "ann")
    assert (after.status, after.surcharge, after.recklessness, after.crashes) == (CarStatus.CRASHED, 150, 0, 1)


# -- S10 re-placing --------------------------------------------------------------------------------


def _crashed_race(*others: Car, heading: str = "S") -> Race:
    wreck = car("ann", (5, 3), heading, status=CarStatus.CRASHED)
    return race([wreck, *others], round_no=3)


def test_default_restart_is_the_crash_square_when_free() -> None:
    """S10: "Default: the crash square if legal ... heading toward the next checkpoint"
    (the arena's checkpoint is at 12,1: north-east of 5,3, the nearest way first clockwise)."""
    state = _crashed_race()
    resolution = play(state, [control(150)], orders={"ann": GAME.default_orders(state, "ann")})
    after = at(resolution, "ann")
    assert (after.square, after.heading, after.status) == (Square(5, 3), Heading.NE, CarStatus.RACING)


def test_default_restart_takes_the_first_free_neighbour_clockwise() -> None:
    """S10: "else the first legal neighbour clockwise from the car's heading" (S is taken by
    cat, so SW)."""
    state = _crashed_race(car("bob", (5, 3)), car("cat", (5, 4)))
    [restart] = [o for o in GAME.default_orders(state, "ann") if isinstance(o, Restart)]
    assert restart == Restart(Square(4, 4), Heading.NE)


def test_default_restart_on_the_line_faces_across_it() -> None:
    """S10 "heading toward the next checkpoint": with every checkpoint passed, the next goal
    is the line; a car re-placed on it faces the line's direction."""
    circuit = arena(FINISH, checkpoints=[[(7, 4)]])
    state = race([car("ann", (3, 2), "S", status=CarStatus.CRASHED, progress=Progress(0, 1))], circuit, round_no=3)
    assert Restart(Square(3, 2), Heading.N) in GAME.default_orders(state, "ann")


def test_restart_where_the_player_says() -> None:
    """§4.2: "re-placed on the crash square or an adjacent legal square, with any orientation";
    a square further away, solid or taken is refused."""
    state = _crashed_race(car("bob", (6, 3)))
    assert GAME.parse_orders(state, "ann", "RESTART 4,2 FACING W").ok
    with pytest.raises(IllegalOrderError, match="not a legal square to restart on"):
        check(state, "ann", parse_line("RESTART 7,3 FACING N"))
    with pytest.raises(IllegalOrderError) as taken:
        check(state, "ann", parse_line("RESTART 6,3 FACING N"))
    assert str(taken.value.reason).startswith("6,3 is taken by bob's car; free to restart on: ")


def test_a_restart_square_taken_names_the_car_on_it() -> None:
    """§4.2: a taken square is refused; main said only "not a legal square to restart on",
    not who is on it. The reason names the car and the squares free."""
    state = _crashed_race(car("bob", (6, 3)))
    with pytest.raises(IllegalOrderError) as taken:
        check(state, "ann", parse_line("RESTART 6,3 FACING N"))
    free = " ".join(str(s) for s in restart_squares(state, state.car("ann")))
    assert taken.value.reason == f"6,3 is taken by bob's car; free to restart on: {free}"


def test_two_restarts_on_one_square_go_by_seat() -> None:
    """S10 with §4.2 "an adjacent legal square": two crashed cars asking for the same square;
    the first in seating order gets it, the other falls back to the S10 default."""
    state = race(
        [car("ann", (5, 3), status=CarStatus.CRASHED), car("bob", (6, 3), status=CarStatus.CRASHED)], round_no=3
    )
    mails = {p: "RESTART 5,4 FACING E\nROUND 3:\nROUND 4:" for p in ("ann", "bob")}
    resolution = play(state, [control(150)], texts=mails)
    assert (at(resolution, "ann").square, at(resolution, "bob").square) == (Square(5, 4), Square(6, 3))
    assert kinds(resolution, "restart")[1].text.endswith("by default: 5,4 is taken.")


# -- S12, S16 and the win -------------------------------------------------------------------------

FINISH = [
    "#########",
    "#.......#",
    "#SSSSSSS#",
    "#.......#",
    "#.......#",
    "#########",
]


def _line_race(programs: dict[str, str], **cars: dict[str, int]) -> Race:
    circuit = arena(FINISH, checkpoints=[[(7, 4)]])
    xs = {"ann": 1, "bob": 3, "cat": 5, "dan": 7}
    racers = [car(p, (xs[p], 3), "N", progress=Progress(0, 1), **cars.get(p, {})) for p in programs]
    return race(racers, circuit, programs=programs)


def test_control_at_crossing_is_c_minus_cost_up_to_the_crossing_action() -> None:
    """S12: "Control left = C - cumulative cost up to and including the crossing action
    (may be negative)"; §4.5 the car "is removed at once"."""
    state = _line_race({"ann": "F1 F3", "bob": "F1"}, bob={"deficit": 150})
    resolution = play(state, [control(101), 5])  # bob: 170 > 101, 5 + 1 = 6 Over
    assert at(resolution, "ann").finish_control == 101 - 20
    assert at(resolution, "bob").finish_control == 101 - 170
    assert at(resolution, "ann").square == Square(1, 2)  # F3 never ran


def test_finishers_of_one_round_rank_by_control_then_crashes_then_seat() -> None:
    """§4.2 Win: "the one with more control left at the moment of crossing wins; then fewer
    crashes; then earlier submission" (S16; where no submission order is known, as here, the
    seating order stands in for it: test_ties_and_stalls has the submission order)."""
    state = _line_race(
        {"ann": "F1", "bob": "F1", "cat": "F2", "dan": "F1"},
        ann={"crashes": 1},
        dan={"crashes": 1},
    )
    resolution = play(state, [control(150)])
    assert resolution.state.finish_order == ("bob", "ann", "dan", "cat")
    assert GAME.standings(resolution.state) == (("bob",), ("ann",), ("dan",), ("cat",))
    assert resolution.state.finished and kinds(resolution, "winner")[0].players == ("bob",)


def test_the_finish_counts_only_in_its_direction_after_every_checkpoint() -> None:
    """§4.7: "entered every checkpoint in order and then enters a finish-line cell with a move
    whose displacement has a positive component in direction"."""
    circuit = arena(FINISH, checkpoints=[[(7, 4)]])
    backwards = race([car("ann", (2, 1), "S", progress=Progress(0, 1))], circuit, programs={"ann": "F1"})
    early = race([car("ann", (2, 3), "N")], circuit, programs={"ann": "F1"})
    for state in (backwards, early):
        resolution = play(state, [control(150)])
        assert kinds(resolution, "finish") == [] and not resolution.state.finished


def test_checkpoints_count_only_in_order() -> None:
    """§4.7 / issue: checkpoints in order; the second one first does not count."""
    circuit = arena(checkpoints=[[(10, 1)], [(5, 3)]])
    state = race([car("ann", (3, 3))], circuit, programs={"ann": "F3"})
    resolution = play(state, [control(150)])
    assert at(resolution, "ann").progress == Progress(0, 0)


def test_laps_reset_the_checkpoints() -> None:
    """§4.7 "laps": crossing the line with laps to go starts the next lap."""
    circuit = arena(FINISH, checkpoints=[[(7, 4)]], laps=2)
    state = race([car("ann", (1, 3), "N", progress=Progress(0, 1))], circuit, programs={"ann": "F1"})
    resolution = play(state, [control(150)])
    assert at(resolution, "ann").progress == Progress(1, 0)
    assert [e.kind for e in resolution.events if e.kind in ("lap", "finish")] == ["lap"]
    assert not resolution.state.finished


# -- S13, S14, S15 ---------------------------------------------------------------------------------


def _set_up(players: list[str]) -> Race:
    return Race(
        circuit=arena(),
        options=Options(),
        cars=tuple(Car(player=p, letter=p[0].upper()) for p in players),
        round=1,
    )


def test_start_squares_may_be_shared() -> None:
    """S13: "Allowed before round 1; the same-square crash applies only at round end"."""
    state = _set_up(["ann", "bob"])
    mails = {
        "ann": "START 1,3 FACING N\nROUND 1: F1\nROUND 2: F1",
        "bob": "START 1,3 FACING N\nROUND 1: F2\nROUND 2: F1",
    }
    resolution = play(state, [control(150)], texts=mails)
    assert kinds(resolution, "crash") == []
    held = play(state, [control(150)], texts={p: "START 1,3 FACING N\nROUND 1:\nROUND 2:" for p in ("ann", "bob")})
    assert len(kinds(held, "crash")) == 2


def test_a_colour_asked_for_is_never_given_to_an_earlier_seat_that_asked_for_none() -> None:
    """S13: "A colour is one car's: at the set-up the first seat to ask for it has it". ann (the
    first seat) asks for no colour, bob asks for red, the first colour of the list: ann was given
    red by default and bob told "asked for red, already taken". A seat that asked for no colour
    gets one nobody asked for."""
    state = _set_up(["ann", "bob"])
    mails = {
        "ann": "START 1,3 FACING N\nROUND 1: F1\nROUND 2: F1",
        "bob": "COLOUR red\nSTART 1,3 FACING N\nROUND 1: F1\nROUND 2: F1",
    }
    resolution = play(state, [control(150)], texts=mails)
    assert at(resolution, "bob").colour == "red"
    assert at(resolution, "ann").colour not in (None, "red")
    assert kinds(resolution, "colour") == []


def _ring_set_up(players: list[str]) -> Race:
    """The bundled ring, at the set-up: start squares 1,5 2,5 3,5, the line faces N."""
    import random

    state: Race = GAME.new_game(players, {"map": "ring"}, random.Random(0))
    return state


HOLD = "ROUND 1:\nROUND 2:"


def test_a_silent_player_starts_on_a_square_no_one_chose() -> None:
    """§5: "A player silent at the set-up is placed on a start square no one chose (the first
    free one in seat order ...), facing the race direction": ann (seat 0) takes 2,5, bob is
    silent and gets the first free square, 1,5, not ann's; nobody crashes at the end of
    round 1 (before, bob's default was the second start square by seat, ann's, and both
    crashed)."""
    state = _ring_set_up(["ann", "bob"])
    orders = {"bob": GAME.default_orders(state, "bob")}
    resolution = play(state, [control(150)], orders=orders, texts={"ann": f"START 2,5 FACING NE\n{HOLD}"})
    assert (at(resolution, "ann").square, at(resolution, "ann").heading) == (Square(2, 5), Heading.NE)
    assert (at(resolution, "bob").square, at(resolution, "bob").heading) == (Square(1, 5), Heading.N)
    assert kinds(resolution, "crash") == []
    assert (
        kinds(resolution, "start")[1].text == "bob (blue, car B) starts at 1,5 facing N (a start square no one chose)."
    )


def test_silent_players_fill_free_start_squares_in_seat_order_then_the_emptiest() -> None:
    """§5: "the first free one in seat order; if none is free, the one with fewest cars".
    ann and bob choose 1,5 (S13: "squares may be shared at the start"); cat, dan and eve are
    silent: cat gets 2,5, dan 3,5, and eve, with no square free, the first of the emptiest
    (2,5 and 3,5 hold one car each)."""
    players = ["ann", "bob", "cat", "dan", "eve"]
    state = _ring_set_up(players)
    orders = {p: GAME.default_orders(state, p) for p in ("cat", "dan", "eve")}
    texts = {p: f"START 1,5 FACING N\n{HOLD}" for p in ("ann", "bob")}
    resolution = play(state, [control(150)], orders=orders, texts=texts)
    started = [e.text.split(" starts at ")[1][:3] for e in kinds(resolution, "start")]
    assert started == ["1,5", "1,5", "2,5", "3,5", "2,5"]
    assert {p: at(resolution, p).square for p in players} == {
        "ann": Square(1, 5),
        "bob": Square(1, 5),
        "cat": Square(2, 5),
        "dan": Square(3, 5),
        "eve": Square(2, 5),
    }


def test_a_player_may_ask_for_a_free_start_square() -> None:
    """§5 "a start square no one chose", as an order: START FREE is placed after every
    chosen START, whatever the seat (ann, seat 0, asks for it; bob, seat 1, chose 1,5)."""
    state = _ring_set_up(["ann", "bob"])
    texts = {"ann": f"START FREE FACING E\n{HOLD}", "bob": f"START 1,5 FACING N\n{HOLD}"}
    resolution = play(state, [control(150)], texts=texts)
    assert (at(resolution, "ann").square, at(resolution, "ann").heading) == (Square(2, 5), Heading.E)
    assert at(resolution, "bob").square == Square(1, 5)


def test_a_silent_player_holds_and_pays_nothing() -> None:
    """S14: "Empty program: the car holds position and pays nothing, since there is no first
    action to carry a deficit" (the deficit waits for the next first action)."""
    state = race([car("ann", (3, 3), deficit=30, recklessness=1)], round_no=2, programs={"ann": ""})
    defaults = GAME.default_orders(state, "ann")
    assert defaults == (Program(3, ()),)
    resolution = play(state, [control(101)], orders={"ann": defaults})
    after = at(resolution, "ann")
    assert (after.square, after.deficit, after.recklessness) == (Square(3, 3), 30, 0)


def test_the_repeat_option_repeats_the_previous_program() -> None:
    """S14: "Alternative config: repeat the previous program"."""
    state = race([car("ann", (3, 3))], programs={"ann": "F1 TL F2"}, nmr=NoOrders.REPEAT)
    assert GAME.default_orders(state, "ann") == (Program(3, ("F1", "TL", "F2")),)


def test_the_action_cap() -> None:
    """S15: "add a configurable cap (e.g. 12) against abuse"."""
    state = race([car("ann", (3, 3))])
    assert GAME.parse_orders(state, "ann", "ROUND 3: " + "F1 " * 12).ok
    parsed = GAME.parse_orders(state, "ann", "ROUND 3: " + "F1 " * 13)
    assert "cap of 12" in parsed.problems[0].reason
    small = race([car("ann", (3, 3))], max_actions=3)
    assert not GAME.parse_orders(small, "ann", "ROUND 3: F1 F1 F1 F1").ok


# -- §5 the round limit ------------------------------------------------------------------------


def test_there_is_no_round_limit_by_default() -> None:
    """§5: "No round limit by default: the race runs until a car finishes; a max_rounds option
    may end it": a race far past any old cap (round 500) goes on; with max_rounds 30 the race
    ends after round 30."""
    import random

    assert GAME.new_game(["ann", "bob"], {}, random.Random(0)).options.max_rounds is None
    long = race([car("ann", (3, 3)), car("bob", (6, 3))], round_no=500, programs={"ann": "", "bob": ""})
    resolution = play(long, [control(150)])
    assert not resolution.state.finished and kinds(resolution, "over") == []
    capped = race([car("ann", (3, 3)), car("bob", (6, 3))], round_no=30, programs={"ann": "", "bob": ""}, max_rounds=30)
    resolution = play(capped, [control(150)])
    assert resolution.state.finished
    assert kinds(resolution, "over")[0].text.startswith("The race ends after round 30, the last round allowed;")


def test_a_race_ended_by_the_round_limit_is_classified_by_distance_then_crashes_then_seating() -> None:
    """§5: "a max_rounds option may end it (classified by distance to the next checkpoint,
    then the tie-break of S16)"; S16: "equal control, equal crashes: the earliest submission
    wins" (no submission order known here: seating order stands in, as for the finish). ann is
    nearest the next checkpoint; bob and cat stand level, cat with fewer crashes; dan and
    eve level with equal crashes: dan sits first."""
    cars = [
        car("bob", (4, 3), crashes=2),
        car("ann", (7, 3)),
        car("cat", (4, 4), crashes=1),
        car("dan", (2, 3)),
        car("eve", (2, 4)),
    ]
    capped = race(cars, round_no=30, programs={c.player: "" for c in cars}, max_rounds=30)
    far = {c.player: distance_behind(capped, c) for c in capped.cars}
    assert far["ann"] < far["bob"] == far["cat"] < far["dan"] == far["eve"], far
    resolution = play(capped, [control(150)])
    assert resolution.state.finished
    assert resolution.state.finish_order == ("ann", "cat", "bob", "dan", "eve")
    assert GAME.standings(resolution.state)[0] == ("ann",)
    assert "ann is classified first" in kinds(resolution, "over")[0].text


# -- §4.2 pipeline --------------------------------------------------------------------------------


def test_orders_run_one_round_ahead() -> None:
    """§4.2 Pipeline: "each round is resolved after orders for the round after it are in":
    turn 1 takes rounds 1 and 2 and resolves round 1; turn 2 takes round 3 and resolves the
    queued round 2."""
    state = _set_up(["ann", "bob"])
    assert state.allowed_rounds("ann") == (1, 2)
    mails = {
        "ann": "START 1,3 FACING E\nROUND 1: F1\nROUND 2: F2",
        "bob": "START 1,3 FACING N\nROUND 1: F2\nROUND 2: RV",
    }
    first = play(state, [control(150)], texts=mails)
    assert at(first, "ann").square == Square(2, 3)
    assert first.state.allowed_rounds("ann") == (3,)
    second = play(first.state, [control(150)], texts={"ann": "ROUND 3: F1", "bob": "ROUND 3: F1"})
    assert at(second, "ann").square == Square(4, 3)
    assert at(second, "ann").program(3) == Program(3, ("F1",))


def test_a_crash_scraps_the_queued_program_and_the_results_say_so() -> None:
    """§4.2, Crash: "its queued orders are scrapped"; S9. A confirmed program for the next
    round was dropped without a word: the results now say it was scrapped, and what to send,
    without its actions (a program is its player's secret)."""
    state = race([car("ann", (1, 1), "N")], programs={"ann": "F1"})
    crashed = play(state, [control(150)], texts={"ann": "ROUND 3: F2 F1"})
    assert at(crashed, "ann").programs == ()
    [scrapped] = kinds(crashed, "scrapped")
    assert scrapped.players == ("ann",)
    assert "ann's queued program for round 3 is scrapped" in scrapped.text
    assert "F2" not in scrapped.text
    calm = play(race([car("ann", (1, 3))], programs={"ann": "F1"}), [control(150)], texts={"ann": "ROUND 3: F1"})
    assert kinds(calm, "scrapped") == []


def test_a_crash_with_only_the_empty_default_queued_scraps_nothing_said() -> None:
    """S14: a seat that sent nothing for the next round gets the empty program; S9 scraps the
    queued round at a crash. The results named it "ann's program for round 3, sent before the
    crash, is scrapped" to every player, of a program ann never sent: an empty program loses
    nothing, so nothing is said (the crash and what to send are)."""
    state = race([car("ann", (1, 1), "N")], programs={"ann": "F1"})
    crashed = play(state, [control(150)], texts={"ann": GAME.format_orders(GAME.default_orders(state, "ann"))})
    assert at(crashed, "ann").status is CarStatus.CRASHED
    assert kinds(crashed, "scrapped") == []
    assert not any("sent before the crash" in event.text for event in crashed.events)
