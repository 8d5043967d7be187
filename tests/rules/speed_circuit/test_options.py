"""A driver's own options this turn ("the spaces reachable at each legal speed,
marked by what they cost (free / wear / test or roll), and the corner limit ahead"): each
cost quoting the seed's chart or the design rule it comes from, and the property that what is
drawn is what the resolver does."""

from __future__ import annotations

import random
import re
from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rules.api import Event, turn_rng
from rules.speed_circuit import GAME
from rules.speed_circuit.car import CornerRun, PitStage, PitStop, Status, Tyre
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.options import (
    Cost,
    PlotOptions,
    Reach,
    SpeedChoice,
    options_text,
    plot_cost,
    plot_options,
)
from rules.speed_circuit.plot import limits
from rules.speed_circuit.resolve import STOPPED_TURNS
from rules.speed_circuit.track import bundled_tracks
from tests.rules.speed_circuit.helpers import bundled, car, race
from tests.rules.speed_circuit.strategies import NAMES, order_text

HARBOUR = bundled("harbour_loop")  # T1: rows 11-14 posted 80, a red line C10 B11 A12 A13 B14


def options_of(state: RaceState, player: str) -> PlotOptions:
    found = plot_options(state, player)
    assert found is not None
    return found


def choice(options: PlotOptions, speed: int) -> SpeedChoice:
    return next(c for c in options.choices if c.speed == speed)


def reach(options: PlotOptions, speed: int, space: str) -> Reach:
    return next(r for r in choice(options, speed).reaches if r.space == space)


def test_every_legal_speed_is_offered_and_nothing_else() -> None:
    """§2.5: "A new speed is the previous speed + a change in multiples of 20 mph: up to
    +Acceleration, down to -Deceleration" (slower on the deceleration chart, down to 0), and
    "Exceeding Acceleration, Top Speed or Start Speed is allowed by +20 only, and only by
    passing a test": a base car (ACC 40) at 60 may plot 0..100, and 120 with PUSH YES."""
    options = options_of(race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60)], laps=3), "ann")
    assert [c.speed for c in options.choices] == [0, 20, 40, 60, 80, 100, 120]
    assert [c.speed for c in options.choices if c.push] == [120]
    assert choice(options, 120).push == "acceleration"


def test_on_a_straight_every_lane_ahead_is_free_within_the_limits() -> None:
    """§2.6: "Each space entered is straight ahead or diagonally forward (a lane change)";
    with no posted space on the way and no chart to pay, a move is free: at 60 from B2 the
    car ends three rows on, in lane A, B or C (the lanes PATH would name)."""
    options = options_of(race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60)], laps=3), "ann")
    at60 = choice(options, 60)
    assert {r.space for r in at60.reaches} == {"A5", "B5", "C5"}
    assert all(r.cost is Cost.FREE and r.wear == 0 and not r.rolls for r in at60.reaches)
    assert reach(options, 60, "B5").lanes == "BBB"


def test_braking_beyond_the_deceleration_costs_what_the_chart_says() -> None:
    """Seed, Deceleration Chart: "20mph: Use 1 wear, or test brakes; 40mph: Use 2 wear, or use
    1 wear and test brakes; 60mph: Use 2 wear and test brakes; 80mph +: Use 3 wear and test
    brakes and spin". PAY WEAR (the default) pays wear first. From 120 with DEC 40: 80 is
    free, 60 costs 1 wear, 40 costs 2, 20 costs 2 and a brakes test, 0 spins."""
    options = options_of(race(HARBOUR, [car("ann", "B2", HARBOUR, speed=120)], laps=3), "ann")
    assert reach(options, 80, "B6").cost is Cost.FREE
    assert (reach(options, 60, "B5").cost, reach(options, 60, "B5").wear) == (Cost.WEAR, 1)
    assert (reach(options, 40, "B4").cost, reach(options, 40, "B4").wear) == (Cost.WEAR, 2)
    slow = reach(options, 20, "B3")
    assert (slow.cost, slow.wear, slow.rolls) == (Cost.ROLL, 2, ("brakes test",))
    stop = choice(options, 0).reaches[0]
    assert (stop.cost, stop.wear, stop.rolls, stop.space) == (Cost.SPIN, 3, ("brakes test",), "B2")
    assert choice(options, 0).braking == 80


def test_a_push_is_a_test_and_on_option_tyres_a_wear() -> None:
    """§2.5: the +20 above the acceleration needs a test (seed, Acceleration/Top Speed Test
    Table); seed "Option Tires": "a car on option tires may spend 1 wear instead of testing
    acceleration, start speed, or deceleration"."""
    prime = options_of(race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60)], laps=3), "ann")
    assert reach(prime, 120, "B8").cost is Cost.ROLL and reach(prime, 120, "B8").rolls == ("acceleration test",)
    option = options_of(race(HARBOUR, [car("ann", "B2", HARBOUR, speed=60, tyres=Tyre.OPTION)], laps=3), "ann")
    assert reach(option, 120, "B8").cost is Cost.WEAR and reach(option, 120, "B8").wear == 1
    # the reason is said without parentheses of its own: the sheet writes it inside a pair
    assert reach(option, 120, "B8").charges == ("1 wear on option tyres in place of the acceleration test",)


def test_entering_a_corner_too_fast_costs_the_cornering_chart_and_a_line_gives_its_bonus() -> None:
    """Seed, "What is a Corner?": "assess cornering penalties only when entering spaces with
    posted speeds"; Cornering Chart: "20mph: Use 1 wear, or consult chance table ... 60mph:
    Use 2 wear and consult chance table; 80mph +: Crash off course". §2.2: "A car following
    the arrow may go 20 mph over the posted speeds it runs over without penalty". At 100
    from B8 into T1 (80): straight down lane B costs 1 wear; along the line (C10 B11 A12
    A13) it is free; at 140 the same rows cost 2 wear and a chance roll, at 160 a crash."""
    options = options_of(race(HARBOUR, [car("ann", "B8", HARBOUR, speed=100)], laps=3), "ann")
    straight = reach(options, 100, "B13")
    assert straight.cost is Cost.WEAR and straight.wear == 1 and straight.lanes == "BBBBB"
    along = reach(options, 100, "A13")
    assert along.cost is Cost.FREE and along.path[1:] == ("C10", "B11", "A12", "A13")
    hard = reach(options, 140, "B17")
    assert hard.cost is Cost.ROLL and hard.wear == 2 and hard.rolls == ("chance table (T1)",)
    assert reach(options, 160, "B16").cost is Cost.ROLL  # along the line: +60
    assert reach(options, 160, "B17").cost is Cost.CRASH  # no line reaches it: +80


def test_wear_the_car_does_not_have_spins_it_unless_a_roll_can_pay() -> None:
    """Seed, Wear Penalties: "Any driver that can not pay the wear called for on any table
    spins"; P13: "Allow the cheaper mixed options (e.g. 1 wear + chance) when wear is short".
    With no wear left, +20 in T1 is paid by the chance table, +40 (2 wear, or 1 wear and the
    chance table) cannot be paid at all: the car spins."""
    options = options_of(race(HARBOUR, [car("ann", "B8", HARBOUR, speed=100, wear=0)], laps=3), "ann")
    assert reach(options, 100, "B13").cost is Cost.ROLL and reach(options, 100, "B13").wear == 0
    assert reach(options, 120, "A14").cost is Cost.SPIN


def test_cars_that_move_after_it_block_and_cars_that_move_first_do_not() -> None:
    """§2.6: "A car may not end in an occupied space", and "the car furthest ahead moves
    first" (P7, by progress): cars a lap down in row 11 move after ann and are still there,
    so no option enters their spaces; bob, ahead of her on the same lap, moves first and will
    have gone (§8: the engine "executes the plot against the cars that moved earlier"), so
    his space is open to her."""
    lapped = [car(p, f"{lane}11", HARBOUR, lap=0) for p, lane in (("cat", "A"), ("dan", "B"))]
    state = race(HARBOUR, [car("ann", "B8", HARBOUR, speed=80), car("bob", "C10", HARBOUR, speed=60), *lapped], laps=3)
    options = options_of(state, "ann")
    assert set(options.staying) == {"A11", "B11"} and options.gone == ("C10",)
    entered = {space for r in options.reaches() for space in r.path}
    assert not entered & {"A11", "B11"}
    assert "C10" in {r.space for r in choice(options, 40).reaches}


def test_standing_still_for_the_last_allowed_turn_is_said_to_retire_the_car() -> None:
    """NOTES.md, "Stopped cars": "a car that ends 5 race turns in a row without moving
    retires". For a car that has stood 4 turns, the options and the confirmation of SPEED 0
    say the plot retires it; for a car that has stood 3, they do not, and a move never does."""
    for standing, retires in ((STOPPED_TURNS - 1, True), (STOPPED_TURNS - 2, False)):
        state = race(HARBOUR, [car("ann", "B2", HARBOUR, speed=0, standing=standing)], laps=3)
        options = options_of(state, "ann")
        assert [r.speed for r in options.reaches() if r.retires] == ([0] if retires else [])
        said = "\n".join(options_text(state.track, options, {}))
        assert ("then retires (5th turn in a row without moving)" in said) is retires, said
        parsed = GAME.parse_orders(state, "ann", "SPEED 0")
        cost = plot_cost(state, "ann", parsed.orders)
        assert cost is not None and cost.reach.cost is Cost.FREE and cost.reach.retires is retires
        assert ("it retires from the race after this turn" in cost.describe()) is retires, cost.describe()
        resolved = GAME.resolve(state, {"ann": parsed.orders}, random.Random(0)).state.car("ann")
        assert (resolved.status is Status.OUT) is retires, resolved


def test_the_corner_ahead_and_its_limit() -> None:
    """ "the corner limit ahead": T1 starts 3 rows ahead of B8, posts 80 on rows
    11-14 and has the red line T1 (+20); once in it, what the car has paid counts."""
    corner = options_of(race(HARBOUR, [car("ann", "B8", HARBOUR, speed=100)], laps=3), "ann").corner
    assert corner is not None
    assert (corner.corner, corner.first_row, corner.last_row, corner.rows_ahead) == ("T1", 11, 14, 3)
    assert set(corner.posted) == {80} and corner.lines == (("T1", 20),) and corner.paid == 0
    inside = car("ann", "B12", HARBOUR, speed=100, corner_run=CornerRun("T1", tier=1, wear_paid=1, worst_raw=20))
    corner = options_of(race(HARBOUR, [inside], laps=3), "ann").corner
    assert corner is not None and corner.rows_ahead == 0 and corner.paid == 20 and corner.first_row == 12
    assert "you are in it" in corner.describe() and "paid for +20" in corner.describe()


_TRACKS = {name: bundled(name) for name in bundled_tracks()}


@settings(max_examples=150)
@given(st.sampled_from(sorted(_TRACKS)), st.data(), st.sampled_from(range(0, 181, 20)))
@example("harbour_loop", None, 0)  # on the grid, T1 (rows 11-14) 11 rows ahead
def test_every_row_the_corner_ahead_names_is_a_row_of_the_map(
    name: str, data: st.DataObject | None, speed: int
) -> None:
    """ "an excerpt of the track ahead of the car as a text map with coordinates (lane letters,
    row numbers)" and "the corner limit ahead": the corner's words name rows of that map
    ("Corner T1, rows 11-14" over a map that stopped at row 13 did not); a corner that goes on
    past the map says so ("and on"), one past it names no row."""
    track = _TRACKS[name]
    spaces = sorted(track.spaces)
    space = "B74" if data is None else data.draw(st.sampled_from(spaces), label="space")
    options = plot_options(race(track, [car("ann", space, track, speed=speed)], laps=3), "ann")
    assert options is not None and options.corner is not None
    text = options.corner.describe()
    found = re.match(r"Corner \w+, rows? (\d+)(?:-(\d+))?", text)
    named = [int(n) for n in found.groups() if n] if found else []
    assert all(row in options.rows for row in named), (text, options.rows)
    map_rows = [int(line.split()[0]) for line in options_text(track, options, {}) if re.match(r"\s+\d+  ", line)]
    assert all(row in map_rows for row in named), (text, map_rows)
    corner_rows = {s.row for s in track.corner_spaces(options.corner.corner)}
    assert all(row in corner_rows for row in named), (text, sorted(corner_rows))
    if data is None:
        assert text.startswith("Corner T1, rows 11-14 (11 rows ahead)"), text
    assert bool(named) is not options.corner.past_rows_shown
    assert not re.search(r"rows (\d+)-\1\b|\b1 rows", text), text  # one row is "row 41", "1 row ahead"
    assert ("and on" in text) is options.corner.goes_on


def test_no_options_outside_the_race_or_in_the_pits_or_off_the_track() -> None:
    """The options are a race plot's: none at car design and qualifying, none for a car in
    the pits or off the track (its private lines say what it may plot), none once out."""
    state = GAME.new_game(["ann", "bob"], {}, random.Random(1))
    assert state.phase is Phase.DESIGN and plot_options(state, "ann") is None
    base = race(HARBOUR, [car("ann", "B8", HARBOUR, speed=100), car("bob", "B2", HARBOUR)], laps=3)
    pits = base.with_car(replace(base.car("ann"), space=None, pit=PitStop(PitStage.ENTRANCE, 70, 1, Tyre.OPTION, 1)))
    assert plot_options(pits, "ann") is None
    assert plot_options(base.with_car(replace(base.car("ann"), off_track=1)), "ann") is None
    assert plot_options(base.with_car(replace(base.car("ann"), status=Status.OUT, space=None)), "ann") is None


def test_the_text_map_names_spaces_as_the_orders_do_and_holds_no_order() -> None:
    """ "an excerpt of the track ahead of the car as a text map with coordinates
    (lane letters, row numbers)", and testing.md: "Never put a line that parses as a valid
    order into the bot's own mail"."""
    state = race(HARBOUR, [car("ann", "B8", HARBOUR, speed=100), car("bob", "C10", HARBOUR)], laps=3)
    options = options_of(state, "ann")
    lines = options_text(HARBOUR, options, {"C10": "bob"})
    text = "\n".join(lines)
    assert "lane A" in text and "lane B" in text and "lane C" in text
    for row in options.rows:
        assert any(line.split()[:1] == [str(row)] for line in lines), f"row {row} missing"
    assert "[you]" in text and "(bob)" in text and "@100" in text and "T1" in text
    assert "100 mph: free A13 (CCBAA)" in text.replace("\n           ", " ")
    for line in lines:
        assert not GAME.parse_orders(state, "ann", line).orders, line
        assert len(line) <= 80, line


# -- what is drawn is what the resolver does --------------------------------------------------

COSTLY = ("wear", "roll", "skill", "spin", "brake", "unpaid", "damage", "crash", "out", "path", "pass", "offtrack")
"""Event kinds that mean a car paid, was steered off its plotted path, or came to grief."""


def _race_state(seed: int, players: int, turns: int, track: str, staggered: bool) -> RaceState:
    """A race `turns` race turns in, driven by random legal plots (strategies.order_text)."""
    names = list(NAMES[:players])
    state = GAME.new_game(
        names, {"track": track, "lane_change": "staggered" if staggered else "aligned"}, turn_rng(seed, 0)
    )
    chooser = random.Random(seed)
    shell_turn = 0
    while not GAME.is_finished(state) and (state.phase is not Phase.RACE or state.race_turn < turns):
        shell_turn += 1
        orders = {}
        for p in sorted(GAME.expected_players(state)):
            parsed = GAME.parse_orders(state, p, order_text(state, p, chooser))
            orders[p] = parsed.orders if parsed.complete else GAME.default_orders(state, p)
        state = GAME.resolve(state, orders, turn_rng(seed, shell_turn)).state
    return state


def _plot(choice_: SpeedChoice, target: Reach) -> str:
    lines = [f"SPEED {target.speed}"]
    if target.path:
        lines.append("PATH " + " ".join(target.lanes))
    if choice_.push:
        lines.append("PUSH YES")
    return "\n".join(lines)


def _mine(events: tuple[Event, ...], player: str, kinds: tuple[str, ...]) -> list[str]:
    return [e.text for e in events if e.kind in kinds and player in e.players]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 6),
    turns=st.integers(1, 14),
    track=st.sampled_from(("harbour_loop", "quarry_ring")),
    staggered=st.booleans(),
    pick=st.integers(0, 8),
)
@example(seed=140000, players=2, turns=9, track="quarry_ring", staggered=False, pick=1)  # bob at 0 mph, 4 turns still
def test_what_the_options_say_a_plot_costs_is_what_it_costs(
    seed: int, players: int, turns: int, track: str, staggered: bool, pick: int
) -> None:
    """ "every option drawn as free is a plot the resolver accepts at no cost". In
    random races, for a car on the track: every free option, plotted as SPEED and PATH, is
    run at no cost (no wear, test, roll, spin or detour) and ends in the space drawn; every
    wear option costs exactly the wear drawn and no roll; every test-or-roll option rolls.
    An option drawn as retiring the car (it would stand for its 5th race turn in a row,
    NOTES.md "Stopped cars") retires it, and only those do; that is its one consequence
    beyond its cost.
    Every option is a legal plot. The cars level with or ahead of it are taken off the track
    for the check: they may move first, and where they go is secret until the reveal (§2.5);
    the cars behind stay, as they move after it."""
    state = _race_state(seed, players, turns, track, staggered)
    racing = [c for c in state.racing() if c.on_track]
    if state.phase is not Phase.RACE or not racing:
        return
    me = racing[pick % len(racing)]
    options = options_of(state, me.player)
    behind = replace(
        state,
        cars=tuple(c for c in state.cars if c.player == me.player or c.progress < me.progress or c.pit is not None),
    )
    assert limits(me, state.track).describe() == options.limits
    checked = 0
    for speed_choice in options.choices:
        for target in speed_choice.reaches:
            text = _plot(speed_choice, target)
            parsed = GAME.parse_orders(state, me.player, text)
            assert parsed.ok and parsed.complete, (text, parsed.problems)
            if target.cost not in (Cost.FREE, Cost.WEAR, Cost.ROLL) or checked >= 12:
                continue
            checked += 1
            orders = {c.player: GAME.default_orders(behind, c.player) for c in behind.racing()}
            orders[me.player] = parsed.orders
            resolution = GAME.resolve(behind, orders, random.Random(seed ^ target.speed))
            after = resolution.state.car(me.player)
            events = resolution.events
            if target.retires:
                # the stated consequence (NOTES.md, "Stopped cars"): "a car that ends 5 race turns
                # in a row without moving retires"; the check of the cost goes on without it
                assert target.speed == 0 and me.standing + 1 >= STOPPED_TURNS, (text, target)
                assert after.status is Status.OUT and after.note.startswith("stopped"), (text, target, after)
                stopped = f"{me.player} is out of the race ({after.note})"
                assert stopped in _mine(events, me.player, ("out",)), (text, target)
                events = tuple(e for e in events if e.text != stopped)
            elif target.speed == 0 and target.cost is Cost.FREE:
                assert after.status is Status.RACING, (text, target, after)
            if target.cost is Cost.FREE:
                assert _mine(events, me.player, COSTLY) == [], (text, target)
                assert after.status is Status.FINISHED or target.retires or after.space == target.space, (
                    text,
                    target,
                    after.space,
                )
            elif target.cost is Cost.WEAR:
                assert _mine(events, me.player, COSTLY) == _mine(events, me.player, ("wear",)), text
                assert me.wear - after.wear == target.wear, (text, target)
                assert after.status is Status.FINISHED or target.retires or after.space == target.space, (
                    text,
                    target,
                    after.space,
                )
            else:
                assert _mine(resolution.events, me.player, ("roll", "spin", "crash", "out", "damage")), (text, target)


def test_a_one_lap_race_is_one_lap_in_the_summary() -> None:
    """Option laps (speed-circuit.md: "laps, default 3"): "4 cars preparing for 1 laps of Harbour
    Loop" read in every design and qualifying sheet of a one-lap race (the table's summary line);
    one lap is "1 lap"."""
    from rules.speed_circuit.view import summary

    assert " preparing for 1 lap of " in summary(GAME.new_game(["ann", "bob"], {"laps": "1"}, turn_rng(1, 0)))
    assert " preparing for 3 laps of " in summary(GAME.new_game(["ann", "bob"], {}, turn_rng(1, 0)))
