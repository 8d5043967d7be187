"""SpeedPhreakz scenarios: whole rounds played out, checking everything that happens."""

from __future__ import annotations

from rules.api import Viewer
from rules.speedphreakz import GAME
from rules.speedphreakz.model import CarStatus, Heading, Progress, Square
from tests.rules.speedphreakz.helpers import arena, at, car, control, kinds, play, race


def test_a_round_that_runs_out_of_control_on_its_first_action() -> None:
    """§4.2 + S4 + S6: 60 carried + F2 45 = 105 > 101 on the first action: control is lost
    at once, recklessness +1 pushes that very roll and every later action is rolled too."""
    state = race([car("ann", (3, 3), deficit=60)], programs={"ann": "F2 TR F1"})
    resolution = play(state, [control(101), 5, 4, 6])
    assert [e.kind for e in resolution.events] == ["control", "lost control", "d10", "d10", "d10", "drive"]
    texts = [e.text for e in kinds(resolution, "d10")]
    # F2 with 5 + 1 = 6 (Over): 3 squares; TR with 4 - 1 = 3 (Under): no turn; F1 with 6 + 1 = 7
    assert texts[0].endswith("d10 5, recklessness 1 -> 6: Over.")
    assert texts[1].endswith("d10 4, recklessness 1 -> 3: Under.")
    assert texts[2].endswith("d10 6, recklessness 1 -> 7: Twitch right.")
    after = at(resolution, "ann")
    assert (after.square, after.heading) == (Square(7, 4), Heading.SE)
    assert (after.recklessness, after.deficit, after.status) == (1, 60 + 45 + 15 + 20 - 101, CarStatus.RACING)


def test_a_deficit_carried_over_from_round_to_round() -> None:
    """§4.2: "The end-of-round deficit is added to the cost of next round's first action":
    round 2 ends 30 over (C 120); in round 3 (C 101) F3 alone would be in control (75), but
    30 + 75 = 105 loses control on the first action; round 4's 4 + 20 is clean again."""
    state = race([car("ann", (1, 1)), car("bob", (1, 5))], programs={"ann": "F3 F3", "bob": "F1"})
    first = play(state, [control(120), 4], texts={"ann": "ROUND 3: F3", "bob": "ROUND 3: F1"})
    assert (at(first, "ann").deficit, at(first, "ann").recklessness) == (30, 0)
    second = play(first.state, [control(101), 5], texts={"ann": "ROUND 4: F1", "bob": "ROUND 4: F1"})
    [lost] = kinds(second, "lost control")
    assert "action 1 (F3): 105 spent of 101" in lost.text
    assert (at(second, "ann").deficit, at(second, "ann").recklessness) == (4, 1)
    assert at(second, "ann").square == Square(11, 1)  # 5 + 1 = 6: Over, four squares
    third = play(second.state, [control(101)], texts={"ann": "ROUND 5: F1", "bob": "ROUND 5: F1"})
    assert kinds(third, "d10") == []
    assert (at(third, "ann").deficit, at(third, "ann").recklessness) == (0, 0)


def test_a_crash_beside_two_cars_without_chains() -> None:
    """§4.5 / S8: "every car adjacent to a car that crashed in that step also crashes. No
    chains: secondary crashes do not spread further." ann hits the barrier in step 1; bob
    and cat beside her crash; dan, next to bob only, does not; eve, who drives up beside
    the wreck in step 2, does not either (adjacency is checked at the crash step)."""
    state = race(
        [
            car("ann", (11, 3)),
            car("bob", (11, 2)),
            car("cat", (12, 4)),
            car("dan", (10, 1)),
            car("eve", (8, 5)),
        ],
        programs={"ann": "F2", "bob": "", "cat": "", "dan": "", "eve": "F2 F1"},
    )
    resolution = play(state, [control(200)])
    status = {p: at(resolution, p).status for p in ("ann", "bob", "cat", "dan", "eve")}
    assert status == {
        "ann": CarStatus.CRASHED,
        "bob": CarStatus.CRASHED,
        "cat": CarStatus.CRASHED,
        "dan": CarStatus.RACING,
        "eve": CarStatus.RACING,
    }
    crashes = [e.text for e in kinds(resolution, "crash")]
    assert crashes[0].startswith("ann drives into the barrier at 13,3")
    assert sorted(crashes[1:]) == [
        "bob is caught in ann's crash in the same step and crashes at 11,2 (next first action +50).",
        "cat is caught in ann's crash in the same step and crashes at 12,4 (next first action +50).",
    ]
    assert at(resolution, "eve").square == Square(11, 5)  # beside the wreck of cat


def test_three_cars_cross_the_line_in_one_round() -> None:
    """§4.2 Win: "the one with more control left at the moment of crossing wins; then fewer
    crashes". ann crosses through grass with the most control left; bob and cat cross with
    the same control, and cat has crashed fewer times."""
    rows = [
        "#########",
        "#.......#",
        "#SSSSSSS#",
        "#,......#",
        "#,......#",
        "#########",
    ]
    circuit = arena(rows, checkpoints=[[(7, 4)]])
    racers = [
        car("ann", (1, 4), "N", progress=Progress(0, 1)),
        car("bob", (4, 3), "N", progress=Progress(0, 1), crashes=2),
        car("cat", (6, 3), "N", progress=Progress(0, 1), crashes=1),
    ]
    state = race(racers, circuit, programs={"ann": "F2", "bob": "RV F2", "cat": "RV F2"})
    resolution = play(state, [control(150)])
    # ann: F2 (45) + grass at 1,3 (10), crossing at 1,2: 150 - 55 = 95 left
    # bob and cat: RV (30) + F2 (45), crossing on the second square of F2: 75 left each
    controls = {p: at(resolution, p).finish_control for p in ("ann", "bob", "cat")}
    assert controls == {"ann": 95, "bob": 75, "cat": 75}
    assert resolution.state.finish_order == ("ann", "cat", "bob")
    assert GAME.standings(resolution.state) == (("ann",), ("cat",), ("bob",))
    view = GAME.view(resolution.state, resolution, Viewer.PUBLIC)
    assert view.finished and view.summary == "ann wins the race."
    assert [e.kind for e in resolution.events].count("finish") == 3


def test_a_whole_race_on_the_ring_with_defaults_for_the_silent() -> None:
    """The shell's loop: parse what is sent, default the rest, resolve; the race ends."""
    import random

    state = GAME.new_game(["ann", "bob"], {"map": "ring", "max_rounds": "40"}, random.Random(0))
    plan = {
        1: "START 2,5 FACING N\nROUND 1: F2 F1\nROUND 2: F1 HR F3",
    }
    rng = random.Random(7)
    for turn in range(1, 60):
        if GAME.is_finished(state):
            break
        orders = {}
        for player in GAME.expected_players(state):
            text = plan.get(turn) if player == "ann" else None
            if text is None:
                orders[player] = GAME.default_orders(state, player)
            else:
                parsed = GAME.parse_orders(state, player, text)
                assert parsed.ok, parsed.problems
                orders[player] = GAME.merge_orders(GAME.default_orders(state, player), parsed.orders)
        state = GAME.resolve(state, orders, rng).state
    assert GAME.is_finished(state)
    assert state.round == 41  # nobody moves after round 2 without orders: the round limit ends it
