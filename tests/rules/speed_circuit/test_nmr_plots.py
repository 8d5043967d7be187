"""Plots for drivers who sent none (speed-circuit.md §8, P29): the bot's safe plot among other
cars and on the way to the compulsory stop, and a GM plot on file that is no longer possible."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.api import Event, IllegalOrderError
from rules.speed_circuit import GAME
from rules.speed_circuit.car import Car, CornerRun, Design, LineRun, PitStage, Status, Tyre
from rules.speed_circuit.corner import coast
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.plot import (
    DesignOrder,
    PassOrder,
    PathKind,
    PathOrder,
    PitOrder,
    PushOrder,
    SlipOrder,
    SpeedOrder,
    limits,
)
from rules.speed_circuit.resolve import brakes_in_time
from rules.speed_circuit.track import Track
from tests.rules.speed_circuit.helpers import bundled, car, race, scenario_track, texts, turn

CORNER = scenario_track("corner_test")
PIT = scenario_track("pit_test")
PIT_DESIGN = Design(prime=1, option=0)

COSTS = ("wear", "roll", "skill", "spin", "brake", "unpaid", "damage", "crash", "out")
"""Event kinds that mean a car paid something (wear, a test or a roll) or came to grief."""


def costs(events: Iterable[Event], player: str) -> list[str]:
    """What `player` paid or suffered, as the results tell it."""
    return [e.text for e in events if e.kind in COSTS and player in e.players]


# -- the safe plot among other cars (§8) -------------------------------------------------


def test_a_car_that_moves_first_is_no_obstacle_to_the_safe_plot() -> None:
    """§8 NMR: the safe plot is "the highest speed within the car's limits whose planned path
    needs no wear, test or roll ... or the least deceleration that gets there"; §2.6: "the car
    furthest ahead (front-most row) moves first". ann follows the T1 line at 80 (20 over the
    60 corner, on the line's bonus); bob, on the line's next space, moves first and will have
    gone when ann moves, so ann holds 80 along the line. (It used to count bob's space as
    blocked: every path off the line costs the corner without the bonus, so it braked to 0,
    paying 2 wear on the deceleration chart.)"""
    ann = car("ann", "A6", CORNER, speed=80, line_run=LineRun("T1", 1), corner_run=CornerRun("T1", worst_raw=20))
    state = race(CORNER, [ann, car("bob", "A7", CORNER, speed=60)])
    plot = GAME.default_orders(state, "ann")
    assert plot[:2] == (SpeedOrder(80), PathOrder(PathKind.LINE))
    resolution = turn(state, {"bob": "SPEED 60"})
    assert costs(resolution.events, "ann") == []
    assert resolution.state.car("ann").progress == state.car("ann").progress + 4


def test_the_safe_plot_does_not_plan_a_speed_blocked_by_cars_that_move_after_it() -> None:
    """§8 (no wear, test or roll) and P15 ("emergency brake to the greatest legal distance
    reachable", charged on the deceleration chart as P14): three cars a lap down fill row 12
    and move after ann (P7: by progress), so they are still there when she moves. The safe
    plot runs the one space she can use, within her free deceleration, instead of planning
    five and emergency braking 80 mph away (3 wear, a brakes test and a spin)."""
    lapped = [car(p, f"{lane}12", CORNER, lap=0, speed=0) for p, lane in (("bob", "A"), ("cat", "B"), ("dan", "C"))]
    state = race(CORNER, [car("ann", "B10", CORNER, speed=60), *lapped])
    assert GAME.default_orders(state, "ann")[0] == SpeedOrder(20)
    resolution = turn(state, {"bob": "SPEED 0", "cat": "SPEED 0", "dan": "SPEED 0"})
    assert costs(resolution.events, "ann") == []
    assert resolution.state.car("ann").space == "B11"


def test_the_compulsory_stop_prefers_a_free_speed_onto_an_arrow() -> None:
    """§8 safe plot, "needs no wear, test or roll", over the P4 stop: at 120 with DEC 20,
    100 mph reaches the arrow row 16 within the free deceleration, so the plot pits from there
    (the slowing to the pit limit comes next turn) rather than braking 60 on the chart now to
    end on an arrow at pit limit + deceleration (it used to plot 60: 2 wear)."""
    ann = car("ann", "B11", PIT, speed=120, dec=20, design=PIT_DESIGN, tyres_used=(Tyre.PRIME,))
    state = race(PIT, [ann], laps=1)
    plot = GAME.default_orders(state, "ann")
    assert plot[0] == SpeedOrder(100) and PitOrder(Tyre.OPTION) in plot
    resolution = turn(state, {})
    assert costs(resolution.events, "ann") == []
    stop = resolution.state.car("ann").pit
    assert stop is not None and stop.stage is PitStage.ENTRANCE


def test_the_compulsory_stop_is_not_bought_on_the_deceleration_chart_while_a_free_plot_exists() -> None:
    """§8: the safe plot is the highest speed "whose planned path needs no wear, test or roll";
    only "the least deceleration that gets there" when none does. On the last arrow row at 140
    the only way to pit is to brake to 0 on the spot (100 over: 3 wear, a brakes test and a
    spin); the safe plot no longer does that while holding speed is free (the stop is missed:
    the P4 tyre rule classifies the car)."""
    ann = car("ann", "B16", PIT, speed=140, design=PIT_DESIGN, tyres_used=(Tyre.PRIME,))
    state = race(PIT, [ann], laps=1)
    plot = GAME.default_orders(state, "ann")
    assert plot[0] == SpeedOrder(140) and not any(isinstance(o, PitOrder) for o in plot)
    assert costs(turn(state, {}).events, "ann") == []


# -- the property ------------------------------------------------------------------------


def moves_after(state: RaceState, c: Car) -> set[str]:
    """Spaces of the cars still standing when `c` moves: those that move after it whatever
    anyone plots (§2.6 rule 1: further back, by progress, P7)."""
    return {o.space for o in state.cars if o.on_track and o.player != c.player and o.progress <= c.progress and o.space}


def free_plot_exists(state: RaceState, c: Car) -> bool:
    """Whether some speed in the free range (no test, no deceleration chart) has some path,
    avoiding every car that moves after `c`, that calls for no cornering payment and leaves
    the car able to brake freely after it (`brakes_in_time`, §8 [DES]). Every path is tried."""
    track = state.track
    lim = limits(c, track)
    staying = moves_after(state, c)
    staggered = state.options.staggered_lane_change
    for speed in range(lim.free_low, lim.safe + 1, 20):
        frontier = {replace(c, speed=speed, spun=False)}
        for _ in range(speed // 20):
            frontier = {
                after
                for here in frontier
                for nxt in track.moves(here.space or "", staggered=staggered)
                if nxt not in staying
                for after in (coast(track, here, [nxt], speed),)
                if after is not None
            }
        if any(brakes_in_time(state, end) for end in frontier):
            return True
    return False


def crowded_field(rnd: random.Random, track: Track, count: int) -> list[Car]:
    """`count` cars packed into a few rows of `track`: random speeds and designs, some a lap
    down, some following a racing line they are on, some that have run both compounds."""
    start = rnd.randint(1, track.rows)
    rows = {(start + k - 1) % track.rows + 1 for k in range(rnd.randint(2, 6))}
    spaces = sorted(s.id for s in track.spaces.values() if s.row in rows)
    rnd.shuffle(spaces)
    cars = []
    for index, space_id in enumerate(spaces[:count]):
        space = track.space(space_id)
        design = Design(
            acc=rnd.choice((-1, 0, 1)),
            dec=rnd.choice((-1, 0, 1, 2)),
            top=rnd.choice((-1, 0, 1)),
            start=0,
            prime=1,
            option=0,
            skill=-2,
        )
        used = (Tyre.PRIME, Tyre.OPTION) if rnd.random() < 0.5 else (Tyre.PRIME,)
        top = design.rating("TOP")
        fields: dict[str, Any] = {
            "lap": 0 if rnd.random() < 0.2 else 1,
            "speed": rnd.randrange(0, top + 1, 20),
            "acc": design.rating("ACC"),
            "dec": design.rating("DEC"),
            "top": top,
            "design": design,
            "tyres_used": used,
            "wear": rnd.randint(0, 6),
        }
        lines = [*track.lines_from(space_id), *(ln for ln in track.lines.values() if space_id in ln.spaces[1:])]
        if lines and rnd.random() < 0.6:
            line = lines[0]
            fields["line_run"] = LineRun(line.id, line.spaces.index(space_id))
            if space.corner is not None and space.speed is not None:
                over = fields["speed"] - space.speed
                if over <= (line.bonus if space.corner == line.corner else 0):
                    fields["corner_run"] = CornerRun(space.corner, worst_raw=max(0, over))
        cars.append(car(f"c{index}", space_id, track, **fields))
    return cars


@settings(max_examples=80, deadline=None)
@given(
    track=st.sampled_from(("corner_test", "pit_test", "harbour_loop", "quarry_ring")),
    count=st.integers(min_value=3, max_value=9),
    seed=st.integers(min_value=0, max_value=2**32),
    staggered=st.booleans(),
)
def test_the_safe_plot_never_pays_when_a_free_plot_exists(track: str, count: int, seed: int, staggered: bool) -> None:
    """§8 NMR: the safe plot is "the highest speed within the car's limits whose planned path
    needs no wear, test or roll ..., or the least deceleration that gets there". Over crowded
    fields (cars ahead that move first, cars a lap down that move after, racing lines, cars
    still owing their compulsory stop on the last lap): whenever some free plot exists (a
    speed within the free range, on a path clear of every car that moves after this one,
    needing no cornering payment and leaving the car able to brake freely), the safe plot runs
    with no wear, test or roll once the cars that move first are out of its way."""
    shape = bundled(track) if track in ("harbour_loop", "quarry_ring") else scenario_track(track)
    rnd = random.Random(seed)
    state = race(shape, crowded_field(rnd, shape, count), laps=1, staggered_lane_change=staggered)
    for c in state.cars:
        plot = GAME.default_orders(state, c.player)
        assert GAME.parse_orders(state, c.player, GAME.format_orders(plot)).ok
        if not free_plot_exists(state, c):
            continue
        # the cars that move first have gone; those that move after stay put (SPEED 0)
        alone = replace(state, cars=tuple(o for o in state.cars if o.player == c.player or o.progress <= c.progress))
        orders = {o.player: GAME.parse_orders(alone, o.player, "SPEED 0").orders for o in alone.cars}
        orders[c.player] = plot
        resolution = GAME.resolve(alone, orders, random.Random(seed))
        assert costs(resolution.events, c.player) == [], (c, GAME.format_orders(plot), texts(resolution.events))
        assert resolution.state.car(c.player).status is not Status.OUT


# -- GM plots on file (P29) ----------------------------------------------------------------


def test_a_legal_gm_plot_stands_as_written() -> None:
    """P29: "Use the GM plot if the GM set one"; a plot legal now is the orders it says."""
    state = race(CORNER, [car("ann", "B10", CORNER, speed=100)])
    plot = "SPEED 120\nLANE A\nSLIP 2\nPASS YES"
    assert GAME.plot_orders(state, "ann", plot) == GAME.parse_orders(state, "ann", plot).orders


def test_an_impossible_gm_plot_becomes_the_closest_achievable_speed() -> None:
    """P29: "Impossible plots on file -> closest achievable (WBC)"; §2.5 WBC Plot Errors: "an
    impossible plot -> the closest achievable speed, assuming maximum use of wear and tests".
    At 100 (ACC 40, TOP 160) SPEED 200 becomes 160 with the acceleration test (PUSH YES);
    the path, slip and pass lines of the plot are kept."""
    state = race(CORNER, [car("ann", "B10", CORNER, speed=100)])
    orders = GAME.plot_orders(state, "ann", "SPEED 200\nPATH A A B\nSLIP 2\nPASS YES")
    assert orders == (
        SpeedOrder(160),
        PathOrder(PathKind.LANES, (0, 0, 1)),
        PushOrder(True),
        SlipOrder(2),
        PassOrder(True),
    )
    parsed = GAME.parse_orders(state, "ann", GAME.format_orders(orders))
    assert parsed.ok and parsed.orders == orders


def test_a_gm_plot_that_says_push_no_keeps_to_the_safe_range() -> None:
    """P29 closest achievable, with the plot's own choices kept: a plot that says PUSH NO
    takes no test, so its closest achievable speed is the safe limit (140 at 100, ACC 40)."""
    state = race(CORNER, [car("ann", "B10", CORNER, speed=100)])
    assert GAME.plot_orders(state, "ann", "SPEED 200\nPUSH NO") == (SpeedOrder(140), PushOrder(False))


def test_a_gm_plot_in_a_corner_keeps_its_speed() -> None:
    """P8 (no acceleration once a corner has been entered) with P29: SPEED 100 plotted for a
    car now at 60 in the corner becomes 60, the closest it may plot; no push is allowed there."""
    state = race(CORNER, [car("ann", "B6", CORNER, speed=60)])
    assert GAME.plot_orders(state, "ann", "SPEED 100\nLINE") == (SpeedOrder(60), PathOrder(PathKind.LINE))


def test_a_gm_plot_after_a_spin_is_capped() -> None:
    """Seed 003 Moving After A Spin ("use start speed or acceleration ... whichever is lower.
    You are prohibited from pushing") with P29: SPEED 120 becomes 40 (ACC 40, START 60)."""
    state = race(CORNER, [car("ann", "B12", CORNER, speed=0, spun=True)])
    orders = GAME.plot_orders(state, "ann", "SPEED 120\nPUSH YES")
    assert orders == (SpeedOrder(40), PushOrder(True))
    assert GAME.parse_orders(state, "ann", GAME.format_orders(orders)).ok


def test_a_maintain_speed_gm_plot_in_the_pits_slows_to_the_limit() -> None:
    """P28 (the turn after entering, slow to the pit limit) with P29: SPEED MPS at 100 in the
    entrance lane is impossible (the pit limit is 40); it becomes SPEED 40."""
    from tests.rules.speed_circuit.test_pits import in_pits

    state = race(PIT, [in_pits("ann", PitStage.ENTRANCE, 16, 1, speed=100)], laps=3)
    assert GAME.plot_orders(state, "ann", "SPEED MPS\nPIT OPTION") == (SpeedOrder(40), PitOrder(Tyre.OPTION))


def test_a_gm_plot_with_nothing_legal_now_does_not_stand() -> None:
    """api.py plot_orders: None when the plot cannot stand (the shell then uses the safe
    plot, P29): a design order in a race turn, or no order at all."""
    state = race(CORNER, [car("ann", "B10", CORNER, speed=100)])
    assert GAME.plot_orders(state, "ann", GAME.format_orders([DesignOrder(Design())])) is None
    assert GAME.plot_orders(state, "ann", "NOT AN ORDER") is None


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    asked=st.one_of(st.none(), st.integers(min_value=0, max_value=12).map(lambda n: n * 20)),
    push=st.sampled_from((None, True, False)),
    path=st.sampled_from(((), ("LINE",), ("LANE C",), ("PATH A B",))),
    extras=st.lists(
        st.sampled_from(("SLIP 1", "PASS YES", "PAY ROLL", "SKILL CHANCE", "PIT OPTION")), max_size=3, unique=True
    ),
)
def test_a_gm_plot_on_file_keeps_its_lines_and_the_closest_achievable_speed(
    seed: int, asked: int | None, push: bool | None, path: tuple[str, ...], extras: list[str]
) -> None:
    """P29 "Impossible plots on file -> closest achievable (WBC)", for any car (in a corner,
    after a spin, in the pits, damaged) and any plot: what stands is legal now; every line but
    SPEED (and PUSH, added only where a push reaches closer and the plot does not say PUSH NO)
    is the plot's own (a PATH the car can no longer drive from where it stands left out, §8);
    the speed is the plot's when legal, else the highest legal one below it."""
    from rules.speed_circuit.car import PitStop
    from rules.speed_circuit.parse import parse_line
    from rules.speed_circuit.plot import check_speed

    rnd = random.Random(seed)
    space = rnd.choice(sorted(PIT.spaces))
    c = car(
        "ann",
        space,
        PIT,
        speed=rnd.randrange(0, 201, 20),
        top=rnd.choice((140, 160, 180)),
        acc=rnd.choice((20, 40, 60)),
        spun=rnd.random() < 0.2,
    )
    if rnd.random() < 0.2:
        c = replace(c, space=None, pit=PitStop(PitStage.ENTRANCE, c.progress, 1, Tyre.OPTION, 1))
    state = race(PIT, [c], laps=2)
    lines = ["SPEED MPS" if asked is None else f"SPEED {asked}", *path, *extras]
    if push is not None:
        lines.append(f"PUSH {'YES' if push else 'NO'}")
    rnd.shuffle(lines)
    orders = GAME.plot_orders(state, "ann", "\n".join(lines))
    assert orders is not None
    parsed = GAME.parse_orders(state, "ann", GAME.format_orders(orders))
    assert parsed.ok and parsed.orders == orders
    written = {parse_line(line) for line in lines}
    assert {o for o in orders if not isinstance(o, SpeedOrder | PushOrder)} == {
        o for o in written if not isinstance(o, SpeedOrder | PushOrder) and drivable(state, o)
    }
    if push is not None:
        assert PushOrder(push) in orders
    speed = next(o for o in orders if isinstance(o, SpeedOrder))
    wanted = c.speed if asked is None else asked
    may_push = push is not False
    driven = [line for line in lines if drivable(state, parse_line(line))]
    legal = GAME.parse_orders(state, "ann", "\n".join(driven)).ok
    if legal:
        assert orders == GAME.parse_orders(state, "ann", "\n".join(driven)).orders
    else:
        got = c.speed if speed.mph is None else speed.mph
        assert got < wanted or (
            got == wanted and push is None and PushOrder(True) in orders
        )  # WBC: "maximum use of ... tests"
        for higher in range(got + 20, wanted + 1, 20):
            try:
                check_speed(c, PIT, higher, may_push)
            except IllegalOrderError:
                continue
            raise AssertionError(f"{higher} was achievable, {got} was chosen")


def drivable(state: RaceState, order: object) -> bool:
    """Whether `order` is no PATH, or a PATH "ann" can drive from where the car stands."""
    from rules.speed_circuit.parse import check_path
    from rules.speed_circuit.plot import PathOrder

    if not isinstance(order, PathOrder):
        return True
    try:
        check_path(state, "ann", order)
    except IllegalOrderError:
        return False
    return True
