"""SpeedPhreakz behind the game contract (rules/api.py): registry, options, turns, views,
figures, GM overrides, storage, and `flagman play` through the generic script runner."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import find_game
from rules.api import FigureError, Game, OptionError, Placing, StateError, Viewer, turn_seed
from rules.speedphreakz import GAME, SpeedPhreakzView
from rules.speedphreakz.model import CarStatus, Heading, NoOrders, Program, Progress, Race, Square
from tests.rules.speedphreakz.helpers import car, control, play, race

VIEW_KEYS = {"title", "turn_label", "finished", "standings", "columns", "table", "events", "private", "summary"}


def new(players: tuple[str, ...] = ("ann", "bob", "cat"), **options: str) -> Race:
    return GAME.new_game(list(players), options, random.Random(0))


def test_registered_and_implements_the_protocol() -> None:
    registered: object = GAME
    assert find_game("speedphreakz") is registered and find_game("SpeedPhreakz") is registered
    assert isinstance(GAME, Game)
    assert (GAME.name, GAME.title, GAME.min_players, GAME.max_players) == ("speedphreakz", "SpeedPhreakz", 2, 8)


def test_options() -> None:
    """S14 (nmr), S15 (max_actions), the map by name, a round limit; bad options refused."""
    state = new(map="chicane", max_actions="5", nmr="repeat", max_rounds="30")
    assert state.circuit.name == "Chicane Park"
    assert (state.options.max_actions, state.options.nmr, state.options.max_rounds) == (5, NoOrders.REPEAT, 30)
    assert new().options.max_actions == 12 and new().circuit.name == "Tin Can Ring"
    for bad in ({"map": "moon"}, {"max_actions": "0"}, {"max_actions": "x"}, {"nmr": "maybe"}, {"laps": "3"}):
        with pytest.raises(OptionError):
            GAME.new_game(["ann", "bob", "cat"], bad, random.Random(0))
    for line in ("map:", "max_actions:", "nmr:", "max_rounds:"):
        assert line in GAME.option_help()


def test_the_round_limit_is_off_by_default_and_stored_either_way() -> None:
    """§5: "No round limit by default: the race runs until a car finishes; a max_rounds
    option may end it": the option help says so; a race with no limit and one with a cap
    (and a state stored with the old default of 60) read back as they were."""
    assert (
        "max_rounds: the race ends after this round if nobody has finished, 2-500 (default: no limit"
        in GAME.option_help()
    )
    for state in (new(), new(max_rounds="60")):
        assert GAME.load_state(json.loads(json.dumps(GAME.dump_state(state)))) == state
    assert GAME.dump_state(new())["options"]["max_rounds"] is None
    assert GAME.load_state(GAME.dump_state(new(max_rounds="60"))).options.max_rounds == 60
    for bad in ("1", "501", "none", "-5"):
        with pytest.raises(OptionError):
            new(max_rounds=bad)


def test_player_count_and_names() -> None:
    with pytest.raises(ValueError):
        new(("ann",))
    with pytest.raises(ValueError):
        new(tuple(f"p{i}" for i in range(9)))
    with pytest.raises(ValueError):
        new(("ann", "ann"))


def test_turn_labels_and_who_orders() -> None:
    state = new()
    assert GAME.turn_label(state).startswith("Set-up and round 1")
    assert GAME.expected_players(state) == {"ann", "bob", "cat"}
    later = race([car("ann", (3, 3)), car("bob", (5, 3), status=CarStatus.FINISHED)], round_no=4)
    assert GAME.turn_label(later) == "Round 4"
    assert GAME.expected_players(later) == {"ann"}
    over = dataclasses.replace(later, finished=True)
    assert GAME.expected_players(over) == frozenset() and GAME.turn_label(over) == "Race over after round 3"


def test_default_orders_at_the_set_up() -> None:
    """S14 at the set-up, with §5: "A player silent at the set-up is placed on a start square
    no one chose ..., facing the race direction": START FREE (placed once every START is
    known), facing the line's direction; empty programs."""
    state = new()
    defaults = GAME.default_orders(state, "bob")
    assert GAME.format_orders(defaults) == "START FREE FACING N\nROUND 1:\nROUND 2:"
    assert GAME.parse_orders(state, "bob", GAME.format_orders(defaults)).orders == defaults


def test_the_views() -> None:
    """api "Views": every common key; PUBLIC shows nothing private; a player sees their own
    queued programs; extras carry the text map with car letters."""
    state = race(
        [car("ann", (3, 3), colour="red", deficit=12), car("bob", (5, 1), colour="blue")],
        programs={"ann": "F1 F2", "bob": ""},
    )
    resolution = play(state, [control(150)], texts={"ann": "ROUND 3: F3"})
    public = GAME.view(resolution.state, resolution, Viewer.PUBLIC)
    assert isinstance(public, SpeedPhreakzView) and VIEW_KEYS <= set(public)
    assert public.private == () and GAME.view(resolution.state, resolution, Viewer.GM).private == ()
    assert public.events[0].startswith("Round 2: control d100 50 + 100 = 150")
    mine = GAME.view(resolution.state, resolution, "ann")
    assert "Your program for round 3: F3" in mine.private
    assert not any("F3" in line for line in GAME.view(resolution.state, resolution, "bob").private)
    assert public.standings == (Placing(1, ("ann",)), Placing(2, ("bob",)))
    assert public.columns[0] == "Square" and public.table[0].cells[0] == "6,3"
    rows = public.map_lines  # a ruler of two lines, then "  y " and the row
    assert rows[2 + 3][4 + 6] == "A" and rows[2 + 1][4 + 5] == "B"
    assert rows[2 + 3] == "  3 #S....A......#"
    assert public.map_legend[:2] == ("A = ann (red)", "B = bob (blue)")
    assert public.summary == "ann leads.", "a sentence, with its full stop"
    assert public.circuit == resolution.state.circuit
    cars = {c.player: c for c in public.cars}
    assert cars["ann"].square == Square(6, 3) and cars["ann"].letter == "A" and cars["ann"].colour == "red"
    assert cars["ann"].trail == (Square(3, 3), Square(4, 3), Square(5, 3), Square(6, 3))
    assert cars["bob"].trail == (Square(5, 1),)


def test_the_map_marks_shared_squares_and_wrecks() -> None:
    state = race([car("ann", (3, 3)), car("bob", (3, 3)), car("cat", (6, 2), status=CarStatus.CRASHED)])
    view = GAME.view(state, None, Viewer.PUBLIC)
    assert isinstance(view, SpeedPhreakzView)
    rows = view.map_lines
    assert rows[2 + 3][4 + 3] == "*" and rows[2 + 2][4 + 6] == "c"


def test_figures() -> None:
    """ "square, heading, recklessness, crashes, lap, checkpoint, status"."""
    state = race([car("ann", (4, 7), "SW", recklessness=2, crashes=1)])
    assert GAME.figures(state, "ann") == {
        "square": "4,7",
        "heading": "SW",
        "recklessness": 2,
        "crashes": 1,
        "lap": 1,
        "checkpoint": 0,
        "status": "racing",
    }


def test_standings_by_progress() -> None:
    """Finished first in finishing order, then laps/checkpoints/distance."""
    state = race(
        [
            car("ann", (2, 3)),
            car("bob", (11, 2)),
            car("cat", (2, 2), progress=Progress(0, 1)),
            car("dan", (10, 2)),
            car("eve", (10, 3)),
        ]
    )
    assert GAME.standings(state) == (("cat",), ("bob",), ("dan", "eve"), ("ann",))


def test_set_figure() -> None:
    state = race([car("ann", (3, 3))])
    state = GAME.set_figure(state, "ann", "recklessness", "3")
    state = GAME.set_figure(state, "ann", "square", "5,4")
    state = GAME.set_figure(state, "ann", "HEADING", "sw")
    ann = state.car("ann")
    assert (ann.recklessness, ann.square, ann.heading) == (3, Square(5, 4), Heading.SW)
    for name, value in (("recklessness", "-1"), ("square", "0,0"), ("square", "x"), ("heading", "UP"), ("speed", "3")):
        with pytest.raises(FigureError):
            GAME.set_figure(state, "ann", name, value)
    with pytest.raises(FigureError):
        GAME.set_figure(state, "zed", "recklessness", "1")


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("recklessness", "9" * 5000, "from 0 to 20"),  # int() refuses more than 4300 digits
        ("recklessness", "0" * 5000 + "3", "from 0 to 20"),
        ("recklessness", "21", "from 0 to 20"),
        ("recklessness", "\u00b2", "from 0 to 20"),  # superscript two
        ("recklessness", "\u0663", "from 0 to 20"),
        ("recklessness", "+3", "from 0 to 20"),
        ("recklessness", "", "from 0 to 20"),
        ("square", "9" * 5000 + ",1", "x,y on the map"),
        ("square", "1," + "9" * 5000, "x,y on the map"),
        ("square", "99999999999999999999,1", "x,y on the map"),
        ("square", "\u00b2,\u00b3", "x,y on the map"),
        ("square", "\u0663,\u0663", "x,y on the map"),
        ("square", "-1,3", "x,y on the map"),
        ("square", "3,3,3", "x,y on the map"),
        ("square", "999,999", "off the map"),
        ("square", "3\n,3", "x,y on the map"),
        ("heading", "x" * 5000, "one of N NE E SE S SW W NW"),
        ("heading", "N\nPROCESS rc1", "one of N NE"),
        ("x" * 5000, "3", "SpeedPhreakz figures"),
    ],
)
def test_set_figure_refuses_hostile_values_with_the_legal_range(name: str, value: str, reason: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    The digits are checked before int() sees them; at most 40 characters are quoted back."""
    state = race([car("ann", (3, 3))])
    with pytest.raises(FigureError, match=reason) as caught:
        GAME.set_figure(state, "ann", name, value)
    message = str(caught.value)
    assert "\n" not in message and "9" * 41 not in message and "x" * 41 not in message and "0" * 41 not in message


def test_set_figure_square_names_the_map_size() -> None:
    state = race([car("ann", (3, 3))])
    circuit = state.circuit
    with pytest.raises(FigureError, match=f"x 0 to {circuit.width - 1}, y 0 to {circuit.height - 1}"):
        GAME.set_figure(state, "ann", "square", "1000,1000")


@settings(max_examples=300, deadline=None)
@given(
    name=st.one_of(st.sampled_from(["recklessness", "square", "heading"]), st.text(max_size=20)),
    value=st.one_of(
        st.text(max_size=30),
        st.text(alphabet="0123456789, -NESW", max_size=30),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
    ),
)
def test_set_figure_on_any_text_sets_a_legal_value_or_raises_figure_error(name: str, value: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    state = race([car("ann", (3, 3))])
    try:
        changed = GAME.set_figure(state, "ann", name, value).car("ann")
    except FigureError as exc:
        assert "\n" not in str(exc)
    else:
        assert 0 <= changed.recklessness <= 20
        assert changed.square is not None and state.circuit.on_map(changed.square)
        assert not state.circuit.solid(changed.square)


def test_drop_player() -> None:
    state = race([car("ann", (3, 3)), car("bob", (5, 3))], programs={"ann": "F1", "bob": "F1"})
    dropped = GAME.drop_player(state, "bob")
    assert GAME.players(dropped) == ("ann",) and GAME.expected_players(dropped) == {"ann"}
    assert ("bob",) not in GAME.standings(dropped)
    assert not dropped.finished
    resolution = play(dropped, [control(150)])
    assert resolution.state.car("bob").square == Square(5, 3)
    assert GAME.drop_player(dropped, "ann").finished


def test_a_player_dropped_before_the_start_never_starts() -> None:
    state = GAME.drop_player(new(), "bob")
    resolution = GAME.resolve(
        state, {p: GAME.default_orders(state, p) for p in GAME.expected_players(state)}, random.Random(1)
    )
    assert resolution.state.car("bob").square is None
    assert not any("bob" in e.players for e in resolution.events)
    assert GAME.expected_players(resolution.state) == {"ann", "cat"}


def test_dump_and_load() -> None:
    state = race(
        [car("ann", (3, 3), colour="red", oil=True, deficit=20), car("bob", (5, 3), status=CarStatus.CRASHED)],
        programs={"ann": "F1 TL F2"},
    )
    data = GAME.dump_state(state)
    assert data["version"] == 1
    assert GAME.load_state(data) == state
    for broken in (
        {**data, "version": 99},
        {"version": 1},
        {**data, "cars": [{"player": "x"}]},
        {**data, "circuit": "ring"},
    ):
        with pytest.raises(StateError):
            GAME.load_state(broken)


def test_resolving_a_finished_race_changes_nothing() -> None:
    state = dataclasses.replace(race([car("ann", (3, 3))]), finished=True)
    assert GAME.resolve(state, {}, random.Random(0)).state == state


def test_a_rules_summary_exists() -> None:
    assert "control" in GAME.rules_summary() and "recklessness" in GAME.rules_summary().lower()


class Recording(random.Random):
    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.asked: list[tuple[int, int]] = []

    def randint(self, a: int, b: int) -> int:
        self.asked.append((a, b))
        return super().randint(a, b)


# ann's round 1 costs 220, more than any control (101..200): at least one d10 is rolled
SCRIPT: dict[str, Any] = {
    "players": ["ann", "bob", "cat"],
    "options": {"map": "ring"},
    "seed": 3,
    "turns": [
        {
            "ann": "COLOUR red\nSTART 2,5 FACING N\nROUND 1: F1 HR F1 HL F1 HR F1 HL\nROUND 2: F1 HR F3 F3",
            "bob": "START 1,5 FACING N\nROUND 1: F2 F1\nROUND 2: RV",
            "cat": "COLOUR blue\nSTART 3,5 FACING N\nROUND 1: F1 F1\nROUND 2: F1 F1 F1",
        },
        {},
        {},
    ],
}


def test_a_short_game_through_the_script_runner() -> None:
    """`flagman play speedphreakz --script`: each turn's events hold the control roll and
    every d10 rolled (checked against a replay that records every die asked for)."""
    from rules.script import run_script

    output = run_script("speedphreakz", SCRIPT)
    assert [t["turn"] for t in output["turns"]] == [1, 2, 3]
    state = GAME.new_game(SCRIPT["players"], SCRIPT["options"], random.Random(0))
    for number, turn in enumerate(output["turns"], start=1):
        events = turn["events"]
        controls = [e for e in events if e["kind"] == "control"]
        assert len(controls) == 1 and controls[0]["roll"]["dice"] == "d100"
        d10s = [e for e in events if e["kind"] == "d10"]
        assert all(e["roll"]["dice"] == "d10" and 0 <= e["roll"]["total"] <= 9 for e in d10s)
        # replay the same turn with a recording rng: one event per die
        rng = Recording(turn_seed(SCRIPT["seed"], number))
        orders = {}
        for player in GAME.expected_players(state):
            text = SCRIPT["turns"][number - 1].get(player)
            orders[player] = (
                GAME.parse_orders(state, player, text).orders if text else GAME.default_orders(state, player)
            )
        resolution = GAME.resolve(state, orders, rng)
        assert rng.asked.count((1, 100)) == 1 and rng.asked.count((0, 9)) == len(d10s)
        assert [e.to_json() for e in resolution.events] == events
        state = resolution.state
    assert set(output["turns"][-1]["players"]["ann"]) == {
        "square",
        "heading",
        "recklessness",
        "crashes",
        "lap",
        "checkpoint",
        "status",
    }
    assert sum(len([e for e in t["events"] if e["kind"] == "d10"]) for t in output["turns"]) > 0


def test_defaults_repeat_previous_program_when_asked() -> None:
    state = race([car("ann", (3, 3))], programs={"ann": "F1"}, nmr=NoOrders.REPEAT)
    assert GAME.default_orders(state, "ann") == (Program(3, ("F1",)),)
