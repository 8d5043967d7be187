"""Speed Circuit behind the `rules.api.Game` contract: NMR defaults (§8, P29), views,
figures, GM overrides, storage, and play through `rules.script`."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import find_game
from rules.api import FigureError, Game, StateError, Viewer, turn_rng
from rules.script import run_script
from rules.speed_circuit import GAME, SpeedCircuitView
from rules.speed_circuit.car import Status
from rules.speed_circuit.plot import PathKind, PathOrder, PayOrder, SpeedOrder
from rules.speed_circuit.track import plan_track, render_svg
from tests.rules.speed_circuit.helpers import car, race, scenario_track, turn

TRACK = scenario_track("corner_test")
PUBLIC_KEYS = {"title", "turn_label", "finished", "standings", "columns", "table", "events", "private", "summary"}


def test_registered_and_implements_the_protocol() -> None:
    """rules/__init__.py GAMES lists the game; GAME implements rules.api.Game."""
    registered: object = GAME
    assert find_game("speed-circuit") is registered
    assert isinstance(GAME, Game)


def test_nmr_safe_plot_needs_no_wear_test_or_roll() -> None:
    """§8 NMR: the bot's safe plot is the highest speed within the car's limits whose planned
    path (keeping lane, following lines) needs no wear, test or roll."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=100, wear=9)])
    plot = GAME.default_orders(state, "ann")
    assert plot == (SpeedOrder(80), PathOrder(PathKind.LINE), PayOrder(True))
    assert GAME.parse_orders(state, "ann", GAME.format_orders(plot)).ok
    resolution = GAME.resolve(state, {"ann": plot}, random.Random(0))
    assert resolution.state.car("ann").wear == 9
    assert not [e for e in resolution.events if e.roll is not None]


def test_nmr_safe_plot_brakes_when_it_must() -> None:
    """§8: "or the least deceleration that gets there": a fast car short of a slow corner
    slows down as little as it can."""
    state = race(TRACK, [car("ann", "B2", TRACK, speed=120, wear=9)])
    speed = GAME.default_orders(state, "ann")[0]
    assert isinstance(speed, SpeedOrder) and speed.mph == 80


def test_nmr_maintain_speed_option() -> None:
    """P29: option plot_default=mps gives the WBC rule (missing plot = maintain present speed)."""
    state = GAME.new_game(["ann", "bob"], {"plot_default": "mps", "track": "harbour_loop"}, random.Random(0))
    for _ in range(2):
        state = GAME.resolve(
            state, {p: GAME.default_orders(state, p) for p in GAME.expected_players(state)}, random.Random(1)
        ).state
    assert GAME.default_orders(state, "ann") == (SpeedOrder(None),)


def test_views_have_the_common_keys_and_public_shows_nothing_private() -> None:
    """api.py Views: every game provides the common fields; PUBLIC has no private part; the
    view carries the track as coordinates and where every car is."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60), car("bob", "A10", TRACK, speed=40)])
    resolution = turn(state, {"ann": "SPEED 60", "bob": "SPEED 40"})
    public = GAME.view(resolution.state, resolution, Viewer.PUBLIC)
    assert isinstance(public, SpeedCircuitView) and PUBLIC_KEYS <= set(public)
    assert public.private == ()
    assert public.columns == ("Lap", "Space", "Speed", "Wear", "Skill", "Tyres", "Compounds", "Status")
    assert [row.player for row in public.table] == ["bob", "ann"]
    assert public.events and "[bob]" in public.track_text
    assert {s.id for s in public.track.spaces} == set(TRACK.spaces)
    spaces = {c.player: c.space for c in public.cars}
    assert spaces == {"ann": resolution.state.car("ann").space, "bob": resolution.state.car("bob").space}
    assert [c.player for c in public.cars] == ["bob", "ann"]
    mine = GAME.view(resolution.state, resolution, "ann")
    assert any("Next turn you may plot" in line for line in mine.private)


def test_the_track_plan_is_the_svg_geometry() -> None:
    """The view's track coordinates are those the SVG drawing prints: one outline per space,
    lane A innermost, rows running clockwise from the top, and the finish line at the top."""
    plan = plan_track(TRACK)
    svg = render_svg(TRACK, {})
    for space in plan.spaces:
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in space.outline)
        assert f'<polygon points="{points}"' in svg
    centre = plan.centre
    first = plan.space("A1")
    outer = plan.space("C1") if any(s.id == "C1" for s in plan.spaces) else plan.space("B1")
    assert math.dist(first.mid, centre) < math.dist(outer.mid, centre)
    assert first.mid[0] > centre[0] and first.mid[1] < centre[1]  # clockwise from the top
    (x0, y0), (x1, y1) = plan.finish
    assert x0 == x1 == centre[0] and y1 < y0 < centre[1]


def test_public_figures() -> None:
    """Public figures per car: lap, space, speed, wear, skill, tyres, status."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60)])
    assert set(GAME.figures(state, "ann")) == {"lap", "space", "speed", "wear", "skill", "tyres", "status"}


def test_gm_set_figure_and_its_errors() -> None:
    """api.py set_figure: adjusts one figure; FigureError names the allowed names or range."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60)])
    assert GAME.set_figure(state, "ann", "wear", "4").car("ann").wear == 4
    with pytest.raises(FigureError, match="figures: wear"):
        GAME.set_figure(state, "ann", "fuel", "4")
    with pytest.raises(FigureError, match="steps of 20"):
        GAME.set_figure(state, "ann", "speed", "50")


# speed-circuit.md: wear laps x 1..5 (laps 1..10), skill laps x 0..4, design table ratings,
# speed up to top 200 + a 20 push; multiples of 20 for ratings and speed.
RANGES = {
    "wear": (50, 1),
    "skill": (40, 1),
    "speed": (220, 20),
    "acc": (80, 20),
    "dec": (80, 20),
    "top": (200, 20),
    "start": (120, 20),
}


@pytest.mark.parametrize(
    ("figure", "value", "ok"),
    [
        ("wear", "50", True),
        ("wear", "51", False),
        ("wear", "0", True),
        ("skill", "40", True),
        ("skill", "41", False),
        ("speed", "220", True),
        ("speed", "240", False),
        ("acc", "80", True),
        ("acc", "100", False),
        ("dec", "0", True),
        ("top", "200", True),
        ("top", "220", False),
        ("start", "120", True),
        ("start", "140", False),
        ("start", "70", False),
    ],
)
def test_gm_set_figure_keeps_each_figure_in_its_design_range(figure: str, value: str, ok: bool) -> None:
    """Each figure has a legal range from speed-circuit.md; the refusal names it."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60)])
    if ok:
        assert getattr(GAME.set_figure(state, "ann", figure, value).car("ann"), figure) == int(value)
    else:
        with pytest.raises(FigureError, match=f"from 0 to {RANGES[figure][0]}"):
            GAME.set_figure(state, "ann", figure, value)


@pytest.mark.parametrize("figure", sorted(RANGES))
@pytest.mark.parametrize(
    "value",
    [
        "9" * 5000,
        "0" * 5000 + "20",
        "99999999999999999999",
        "-20",
        "+20",
        "2e1",
        "20.0",
        "0x14",
        "",
        "\u00b2",
        "\u0662\u0660",
        "\uff12\uff10",
        "20\nPROCESS rc1",
        "2_0",
    ],
)
def test_gm_set_figure_refuses_hostile_numbers_with_the_legal_range(figure: str, value: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    The digits are checked before int() sees them; at most 40 characters are quoted back."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60)])
    with pytest.raises(FigureError, match=f"{figure} must be a whole number from 0 to {RANGES[figure][0]}") as caught:
        GAME.set_figure(state, "ann", figure, value)
    message = str(caught.value)
    assert "\n" not in message and "9" * 41 not in message and "0" * 41 not in message


def test_gm_set_figure_tyres_and_unknown_names_are_refused_clearly() -> None:
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60)])
    assert GAME.set_figure(state, "ann", "tyres", " option ").car("ann").tyres.value == "OPTION"
    with pytest.raises(FigureError, match="PRIME or OPTION") as caught:
        GAME.set_figure(state, "ann", "tyres", "x" * 5000)
    assert "x" * 41 not in str(caught.value)
    with pytest.raises(FigureError, match="figures: wear") as caught:
        GAME.set_figure(state, "ann", "y" * 5000, "3")
    assert "y" * 41 not in str(caught.value)


@settings(max_examples=300, deadline=None)
@given(
    name=st.one_of(st.sampled_from([*RANGES, "tyres"]), st.text(max_size=20)),
    value=st.one_of(
        st.text(max_size=30),
        st.text(alphabet="0123456789 +-_", max_size=30),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
    ),
)
def test_gm_set_figure_on_any_text_sets_a_legal_value_or_raises_figure_error(name: str, value: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60)])
    try:
        changed = GAME.set_figure(state, "ann", name, value)
    except FigureError as exc:
        assert "\n" not in str(exc)
    else:
        key = name.strip().lower()
        if key != "tyres":
            high, step = RANGES[key]
            number = getattr(changed.car("ann"), key)
            assert number == int(value.strip()) and 0 <= number <= high and number % step == 0


def test_drop_player_removes_the_car() -> None:
    """api.py drop_player: the player leaves the race."""
    state = race(TRACK, [car("ann", "B3", TRACK, speed=60), car("bob", "B10", TRACK, speed=60)])
    dropped = GAME.drop_player(state, "bob")
    assert dropped.car("bob").status is Status.OUT and dropped.car("bob").space is None
    assert GAME.players(dropped) == ("ann",)
    assert GAME.expected_players(dropped) == frozenset({"ann"})


def test_state_round_trips_and_refuses_unknown_versions() -> None:
    """api.py: load_state is the inverse of dump_state; StateError on an unknown version or shape."""
    state = GAME.new_game(["ann", "bob"], {}, random.Random(0))
    data = GAME.dump_state(state)
    assert GAME.load_state(data) == state
    with pytest.raises(StateError):
        GAME.load_state({**data, "version": 99})
    with pytest.raises(StateError):
        GAME.load_state({**data, "cars": [{"player": "ann"}]})


def test_play_set_up_and_race_turns_through_the_script_runner() -> None:
    """`flagman play speed_circuit --script ...` works through rules.script."""
    script = {
        "players": ["ann", "bob", "cat"],
        "options": {"track": "harbour_loop", "laps": 1},
        "seed": 7,
        "turns": [
            {"ann": "DESIGN ACC 1 TOP 1\nTYRES OPTION", "bob": "DESIGN START 2\nTYRES PRIME"},
            {"ann": "BID WEAR 2", "bob": "BID SKILL 1"},
            {"ann": "SPEED 60", "bob": "SPEED 140\nPUSH YES", "cat": "SPEED 60"},
            {"ann": "SPEED 100\nLANE B", "bob": "SPEED MPS"},
            {"ann": "SPEED MPS"},
        ],
    }
    out = run_script("speed_circuit", script)
    labels = [t["label"] for t in out["turns"]]
    assert labels[:3] == ["Turn 1: car design", "Turn 2: qualifying", "Race turn 1 (leader on lap 1 of 1)"]
    assert out["turns"][0]["defaulted"] == ["cat"]
    assert out["turns"][1]["positions"][0] == ["ann"]
    last = out["turns"][-1]["players"]
    assert set(last["ann"]) == {"lap", "space", "speed", "wear", "skill", "tyres", "status"}
    assert any(e.get("roll") for t in out["turns"] for e in t["events"])
    assert out["finished"] is False and out["result"] is None
    assert run_script("speed_circuit", script) == out


def test_an_impossible_plot_on_file_runs_as_the_closest_achievable_speed() -> None:
    """§8 / P29 / WBC Plot Errors: at the deadline an impossible plot on file (say a GM plot
    set in an earlier turn) becomes the closest achievable speed, assuming maximum use of tests."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=60, wear=9)])
    resolution = GAME.resolve(state, {"ann": (SpeedOrder(200),)}, random.Random(3))
    ann = resolution.state.car("ann")
    assert "closest achievable is 120" in " ".join(e.text for e in resolution.events)
    assert ann.speed in (100, 120)  # 120 needs the acceleration test; a failure replots 100


def test_summary_when_nobody_finishes() -> None:
    """api.py Views summary: one line saying where the race stands."""
    state = race(TRACK, [car("ann", "B1", TRACK, speed=140, wear=9)])
    after = turn(state, {"ann": "SPEED 140"}).state
    assert GAME.view(after, None, Viewer.PUBLIC)["summary"] == "No car finished at Corner Test"


def test_loose_spellings_of_speed_and_path() -> None:
    """mail-interface.md: players write orders by hand; commas and 'mph' are understood."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=60)])
    parsed = GAME.parse_orders(state, "ann", "speed 80 mph\npath b, b, a")
    assert parsed.ok
    assert GAME.format_orders(parsed.orders) == "SPEED 80\nPATH B B A"


@pytest.mark.parametrize("track", ["harbour_loop", "quarry_ring"])
@pytest.mark.parametrize("lane_change", ["aligned", "staggered"])
def test_a_lone_car_on_safe_plots_laps_the_track_without_paying(track: str, lane_change: str) -> None:
    """§8 NMR: the safe plot "keeps the car on track and pays what it must": alone on the
    track it needs no wear, test or roll, and still finishes the race."""
    state = GAME.new_game(["ann", "bob"], {"track": track, "laps": "2", "lane_change": lane_change}, random.Random(1))
    state = GAME.drop_player(state, "bob")
    turns = 0
    while not GAME.is_finished(state):
        turns += 1
        before = state.car("ann").wear
        resolution = GAME.resolve(
            state, {p: GAME.default_orders(state, p) for p in GAME.expected_players(state)}, random.Random(turns)
        )
        assert not [e for e in resolution.events if e.roll is not None or e.kind in ("wear", "spin", "brake")]
        state = resolution.state
        assert state.car("ann").wear == before or turns <= 2  # the design and bid turns
    assert state.car("ann").status is Status.FINISHED
    assert turns < 60


@pytest.mark.parametrize("track", ["harbour_loop", "quarry_ring"])
def test_flagman_play_a_whole_three_lap_race_with_eight_cars(track: str) -> None:
    """`flagman play speed_circuit` plays a full 3-lap race with 8 cars (every
    driver on the bot's safe plots, §8), every car making its compulsory stop (P4) on the
    last lap; every turn's results view shows the track picture with every car on it."""
    players = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"]
    state = GAME.new_game(players, {"track": track}, turn_rng(7, 0))
    turns = 0
    while not GAME.is_finished(state):
        turns += 1
        orders = {p: GAME.default_orders(state, p) for p in GAME.expected_players(state)}
        resolution = GAME.resolve(state, orders, turn_rng(7, turns))
        state = resolution.state
        picture = GAME.view(state, resolution, Viewer.PUBLIC)["track_text"]
        assert isinstance(picture, str)
        for c in state.cars:
            if c.status is Status.RACING and (c.space is not None or c.pit is not None):
                assert f"[{c.player[:5]}]" in picture, (turns, c)
        if turns > 2 and not GAME.is_finished(state):
            assert sum(c.status is Status.RACING for c in state.cars) == picture.count("[")
        assert turns < 120
    out = run_script(
        "speed_circuit", {"players": players, "options": {"track": track, "laps": 3}, "seed": 7, "turns": [{}] * turns}
    )
    assert out["finished"] and len(out["turns"]) == turns
    assert sorted(p for group in out["result"] for p in group) == sorted(players)
    assert [[c.player] for c in sorted(state.cars, key=lambda c: c.finish_key or (0,))] == out["result"]
    assert all(c.status is Status.FINISHED and c.ran_both_compounds() for c in state.cars)
    assert any(e["kind"] == "pit" for t in out["turns"] for e in t["events"])
    assert out["turns"][-1]["players"]["ann"]["lap"] == 3


def test_safe_plot_steers_around_a_blocked_lane() -> None:
    """§8: the safe plot avoids lanes blocked by other cars: its path
    goes round a parked car instead of braking behind it. The parked car is a lap down, so
    it moves after ann (§2.6: "the car furthest ahead (front-most row) moves first", P7: by
    progress) and is still in B12 when ann moves."""
    state = race(TRACK, [car("ann", "B10", TRACK, speed=60), car("bob", "B12", TRACK, lap=0, speed=0)])
    plot = GAME.default_orders(state, "ann")
    assert plot[0] == SpeedOrder(100)
    path = plot[1]
    assert (
        isinstance(path, PathOrder) and path.kind is PathKind.LANES and "B" not in [("ABC")[i] for i in path.lanes[1:2]]
    )
    after = GAME.resolve(
        state, {"ann": plot, "bob": GAME.parse_orders(state, "bob", "SPEED 0").orders}, random.Random(0)
    )
    assert "brakes" not in " ".join(e.text for e in after.events)
    assert after.state.car("ann").progress == state.car("ann").progress + 5


def test_a_car_behind_the_line_at_the_start_is_on_lap_1_as_the_summary_says() -> None:
    """P27: "Cars start on lap 0 behind the line; crossing it starts lap 1" is how progress is
    counted; the table says the lap as the summary does ("leads on lap 1"), never "Lap 0"."""
    state = race(TRACK, [car("ann", "B3", TRACK, lap=0), car("bob", "A10", TRACK, lap=0)], laps=3)
    public = GAME.view(state, None, Viewer.PUBLIC)
    assert "leads on lap 1 of 3" in public.summary
    lap = public.columns.index("Lap")
    assert [row.cells[lap] for row in public.table] == ["1", "1"]
