"""A driver's own options for the round they order ("the squares reachable by the
round's programs and their control cost"): each cost quoting the seed or the design, and the
property that a program drawn as in control drives exactly there, for exactly that cost."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.speedphreakz import GAME, SpeedPhreakzView
from rules.speedphreakz.data import chart
from rules.speedphreakz.model import CarStatus, Heading, Program, Race, Square
from rules.speedphreakz.options import (
    CONTROL_HIGH,
    CONTROL_LOW,
    Band,
    ProgramOptions,
    SquareOption,
    options_text,
    program_options,
)
from tests.rules.speedphreakz.helpers import SteadyRandom, arena, car, race
from tests.rules.speedphreakz.strategies import play_random_race
from tests.settled import examples

GRASSY = [
    "##############",
    "#,,,,,,,,,,,,#",
    "#............#",
    "#S...........#",
    "#............#",
    "#............#",
    "##############",
]


def options_of(state: Race, player: str) -> ProgramOptions:
    found = program_options(state, player)
    assert found is not None
    return found


def at(options: ProgramOptions, x: int, y: int) -> SquareOption:
    found = options.at(Square(x, y))
    assert found is not None, f"{x},{y} is not reachable"
    return found


def test_the_control_range_sets_the_bands() -> None:
    """Seed, Control: "this will be an amount between 101 and 200 (1d100+100)"; "if you run
    out you are considered to have lost control" (§4.4: "cumulative cost > C"). A program of
    101 or less never loses control; of 102-200 it does when C comes out below its cost."""
    assert (CONTROL_LOW, CONTROL_HIGH) == (101, 200)
    assert Band.of(101) is Band.IN_CONTROL and Band.of(102) is Band.RISKY and Band.of(151) is Band.LONG_SHOT
    option = SquareOption(Square(1, 1), 140, ("F1",), Heading.E)
    assert option.chance_lost == 39  # C = 101..139 of 101..200


def test_costs_are_the_charts_and_the_cheapest_program_wins() -> None:
    """§4.4 chart: F1 20, F2 45, F3 75, RV 30, VL/VR 30, TL/TR 15, HL/HR 35. A car at 3,3
    facing E that holds in round 2 can reach 4,3 in round 3 for 20 (F1), 6,3 for 60 (three
    F1s are cheaper than one F3), 2,3 behind it for 30 (RV), 4,2 for 30 (VL)."""
    state = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "", "bob": ""})
    options = options_of(state, "ann")
    assert options.round == 3 and options.start == Square(3, 3) and options.heading is Heading.E
    assert (at(options, 4, 3).cost, at(options, 4, 3).program) == (20, ("F1",))
    assert (at(options, 6, 3).cost, at(options, 6, 3).program) == (60, ("F1", "F1", "F1"))
    assert (at(options, 2, 3).cost, at(options, 2, 3).program) == (30, ("RV",))
    assert (at(options, 4, 2).cost, at(options, 4, 2).program, at(options, 4, 2).heading) == (30, ("VL",), Heading.NE)


def test_a_program_opens_with_a_movement_and_never_turns_twice_running() -> None:
    """Seed, Extra Rules: "Your first action of a round must be either a forward or a
    reverse, it can't be a turn. You may not have two turns one after the other". So every
    program shown is one the game accepts: the square to the car's south, facing E, is
    reached by a movement first (VR, then onward), never HR F1."""
    state = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "", "bob": ""})
    options = options_of(state, "ann")
    codes = chart()
    for option in options.squares:
        assert not codes[option.program[0]].is_turn, option
        for a, b in zip(option.program, option.program[1:], strict=False):
            assert not (codes[a].is_turn and codes[b].is_turn), option
    assert at(options, 3, 4).program[0] != "HR"


def test_grass_and_gravel_cost_more_and_solids_are_never_entered() -> None:
    """§4.6: "grass: each square entered costs +10 control"; §4.5: "entering a wall or off-map
    square: crash". F1 north onto the grass costs 30; no program runs through a wall."""
    circuit = arena(GRASSY)
    state = race([car("ann", (3, 2), "N"), car("bob", (3, 5), "E")], circuit, programs={"ann": "", "bob": ""})
    options = options_of(state, "ann")
    assert (at(options, 3, 1).cost, at(options, 3, 1).program) == (30, ("F1",))
    assert all(not circuit.solid(o.square) for o in options.squares)


def test_the_deficit_and_the_crash_surcharge_go_on_the_first_action() -> None:
    """Seed, Crashing: "You then submit your actions for the next round with the first
    action's cost increased by 50, plus an additional 50 for each point of recklessness";
    Control: "the deficit is added to the cost of your first action of the next round". A car
    that crashed with surcharge 50 and deficit 10 pays 60 more for its first action; its
    options are from where it is re-placed (S10: the crash square when free), for the round
    it sends again."""
    crashed = car("ann", (5, 3), "E", status=CarStatus.CRASHED, surcharge=50, deficit=10)
    state = race([crashed, car("bob", (3, 5), "E")], programs={"bob": ""})
    options = options_of(state, "ann")
    assert options.round == 2 and options.extra == 60 and options.start == Square(5, 3)
    assert min(o.cost for o in options.squares) == 60 + 20
    assert "restart" in options.assumes


def _nesting(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def test_the_head_of_the_options_never_nests_parentheses() -> None:
    """The crash sheet read "from 1,1 facing E (if you restart on 1,1 facing E (the default;
    RESTART may name ...))": where the options start is said in two sentences, one aside at
    most (S10: the crash square when free, RESTART may name it or a neighbour)."""
    crashed = car("ann", (5, 3), "E", status=CarStatus.CRASHED, surcharge=50, deficit=10)
    state = race([crashed, car("bob", (3, 5), "E")], programs={"bob": ""})
    head = " ".join(options_text(state, options_of(state, "ann"))[:2])
    assert "from 5,3 facing E, if you restart there (the default). RESTART may instead name" in head, head
    holding = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "", "bob": ""})
    for shown, player in ((state, "ann"), (holding, "ann"), (holding, "bob")):
        text = " ".join(options_text(shown, options_of(shown, player))[:3])
        assert _nesting(text) <= 1, text


def test_the_round_in_hand_is_driven_first() -> None:
    """§5: "orders always one round ahead of the round being resolved": the options for
    round 3 start where the queued round-2 program leaves the car if it runs as ordered."""
    state = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "F1 F1 VR", "bob": ""})
    options = options_of(state, "ann")
    assert options.start == Square(6, 4) and options.heading is Heading.SE and options.extra == 0
    assert "F1 F1 VR" in options.assumes


def test_none_at_the_set_up_and_once_the_round_in_hand_crashes() -> None:
    """No car is on the map at the set-up; a program that drives into the wall crashes
    (§4.5), and then the round after is sent again (S9): no options to draw."""
    fresh = GAME.new_game(["ann", "bob"], {}, random.Random(1))
    assert program_options(fresh, "ann") is None
    state = race([car("ann", (11, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "F3 F3", "bob": ""})
    assert program_options(state, "ann") is None
    view = GAME.view(state, None, "ann")
    assert isinstance(view, SpeedPhreakzView)
    assert view.options is None and any("runs into a solid" in line for line in view.plot_map)


def test_the_text_map_has_x_y_coordinates_and_holds_no_order() -> None:
    """ "an excerpt of the track ahead of the car as a text map with coordinates
    (... x,y)"; testing.md: no line of the bot's mail parses as an order (programs are shown
    without ROUND n:)."""
    state = race([car("ann", (3, 3), "E"), car("bob", (3, 5), "E")], programs={"ann": "", "bob": ""})
    options = options_of(state, "ann")
    lines = options_text(state, options)
    x0, y0, x1, y1 = options.window
    units = "".join(str(x % 10) for x in range(x0, x1 + 1))
    assert any(line.strip().startswith(units) for line in lines)
    for y in range(y0, y1 + 1):
        assert any(line[:3].strip() == str(y) for line in lines), y
    assert any("@" in line and line[:3].strip() == "3" for line in lines)
    for line in lines:
        assert not GAME.parse_orders(state, "ann", line).orders, line
        assert len(line) <= 80, line


@settings(max_examples=examples(15, 40), deadline=None)  # whole races: slow
@given(data=st.data())
def test_a_program_shown_in_control_drives_exactly_there(data: st.DataObject) -> None:
    """The property: in random races, every square shown within 101 (never out of
    control) is where its program takes the car, facing the heading shown, for the cost shown,
    with no loss of control, whatever control the round gets. The car holds in the round in
    hand so it starts where it is; the other cars are taken out (they do not block, §4.5, but
    ending on one's square or next to a crash would)."""
    turns = play_random_race(data, max_turns=8)
    state = turns[-1].resolution.state
    candidates = [c for c in state.cars if c.status is CarStatus.RACING and c.square is not None]
    if state.finished or state.set_up or not candidates:
        return
    me = data.draw(st.sampled_from(candidates), label="car")
    held = dataclasses.replace(me, programs=(Program(state.round, ()),))
    alone = dataclasses.replace(
        state,
        cars=tuple(held if c.player == me.player else dataclasses.replace(c, status=CarStatus.OUT) for c in state.cars),
    )
    options = options_of(alone, me.player)
    assert options.start == me.square and options.extra == me.deficit + me.surcharge
    assert options.first_rolled == me.oil
    safe = [o for o in options.squares if o.band is Band.IN_CONTROL and not options.first_rolled]
    for option in data.draw(st.lists(st.sampled_from(safe), max_size=4, unique=True), label="options") if safe else []:
        first = GAME.resolve(alone, {me.player: (Program(state.round + 1, option.program),)}, SteadyRandom(1))
        assert first.state.car(me.player).square == me.square
        second = GAME.resolve(first.state, {}, SteadyRandom(data.draw(st.integers(1, 100), label="d100")))
        after = second.state.car(me.player)
        assert not [e for e in second.events if e.kind in ("lost control", "crash", "d10")], (option, second.events)
        if after.status is CarStatus.FINISHED:
            continue
        assert (after.square, after.heading) == (option.square, option.heading), option
        assert any(f"{option.cost} spent" in e.text for e in second.events if e.kind == "drive"), (
            option,
            second.events,
        )
