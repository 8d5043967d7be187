"""Hypothesis properties over random legal races on both bundled tracks (conventions.md:
no two cars in one space, figures in range, speeds within limits, monotonic progress,
deterministic replay, parse(format(o)) == o, load(dump(s)) == s)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.api import Event, turn_rng
from rules.speed_circuit import GAME
from rules.speed_circuit.car import Status
from rules.speed_circuit.model import Phase
from rules.speed_circuit.plot import limits
from tests.rules.speed_circuit.strategies import NAMES, order_text

TRACKS = ("harbour_loop", "quarry_ring")
MAX_RACE_TURNS = 60


def passed_a_speed_test(events: tuple[Event, ...], player: str) -> bool:
    """Whether the player passed a test for speed this turn (a roll, a skill chip or option wear)."""
    for e in events:
        if player not in e.players:
            continue
        if e.kind == "roll" and ("test" in e.text) and "brakes" not in e.text:
            return True
        if e.kind == "skill" and "test" in e.text and "brakes" not in e.text:
            return True
        if e.kind == "wear" and "instead of the" in e.text and "brakes" not in e.text:
            return True
    return False


@settings(max_examples=60, deadline=None)
@given(
    track=st.sampled_from(TRACKS),
    players=st.integers(min_value=2, max_value=6),
    laps=st.integers(min_value=1, max_value=2),
    seed=st.integers(min_value=0, max_value=2**32),
    staggered=st.booleans(),
)
def test_random_legal_races_keep_every_invariant(track: str, players: int, laps: int, seed: int, staggered: bool) -> None:
    """Over random legal races: no two cars ever share a space; wear and skill never go
    negative; speeds stay within the car's limits except by a passed test; progress never
    goes back; every turn replays identically; parse(format(o)) == o; load(dump(s)) == s;
    the standings are always a permutation of the players."""
    names = list(NAMES[:players])
    options = {"track": track, "laps": str(laps), "lane_change": "staggered" if staggered else "aligned"}
    state = GAME.new_game(names, options, turn_rng(seed, 0))
    chooser = random.Random(seed)
    shell_turn = 0
    while not GAME.is_finished(state) and state.race_turn < MAX_RACE_TURNS:
        shell_turn += 1
        orders = {}
        for p in sorted(GAME.expected_players(state)):
            if chooser.random() < 0.1:
                orders[p] = GAME.default_orders(state, p)
                continue
            text = order_text(state, p, chooser)
            parsed = GAME.parse_orders(state, p, text)
            assert parsed.ok, (text, parsed.problems)
            assert GAME.parse_orders(state, p, GAME.format_orders(parsed.orders)).orders == parsed.orders
            orders[p] = parsed.orders
        before = state
        resolution = GAME.resolve(state, orders, turn_rng(seed, shell_turn))
        again = GAME.resolve(GAME.load_state(GAME.dump_state(before)), orders, turn_rng(seed, shell_turn))
        assert again == resolution
        state = resolution.state
        assert GAME.load_state(GAME.dump_state(state)) == state
        spaces = [c.space for c in state.cars if c.on_track]
        assert len(spaces) == len(set(spaces))
        standing = [p for group in GAME.standings(state) for p in group]
        assert sorted(standing) == sorted(names)
        for car in state.cars:
            assert car.wear >= 0 and car.skill >= 0
            old = before.car(car.player)
            crew_lost = any(e.kind == "roll" and car.player in e.players and "-1 space" in e.text for e in resolution.events)
            assert car.progress >= old.progress - (1 if crew_lost else 0)
            if before.phase is Phase.RACE and old.status is Status.RACING and car.status is Status.RACING:
                lim = limits(old, before.track)
                assert car.speed <= lim.highest
                if car.speed > lim.safe:
                    assert passed_a_speed_test(resolution.events, car.player), (car, lim)
    assert state.race_turn <= MAX_RACE_TURNS


@settings(max_examples=30, deadline=None)
@given(track=st.sampled_from(TRACKS), seed=st.integers(min_value=0, max_value=2**32))
def test_nmr_safe_plots_finish_the_race(track: str, seed: int) -> None:
    """§8 NMR: a race in which nobody ever orders still runs to the end on the bot's safe
    plots (legal plots that keep the cars on track), and each default parses back as legal."""
    names = ["ann", "bob", "cat"]
    state = GAME.new_game(names, {"track": track, "laps": "1"}, turn_rng(seed, 0))
    shell_turn = 0
    while not GAME.is_finished(state) and shell_turn < 80:
        shell_turn += 1
        orders = {}
        for p in GAME.expected_players(state):
            orders[p] = GAME.default_orders(state, p)
            assert GAME.parse_orders(state, p, GAME.format_orders(orders[p])).ok
        state = GAME.resolve(state, orders, turn_rng(seed, shell_turn)).state
    assert GAME.is_finished(state)
    assert all(c.status is not Status.RACING for c in state.cars)


def _orders() -> st.SearchStrategy[object]:
    from rules.speed_circuit.car import Design, Tyre
    from rules.speed_circuit.plot import (
        BidOrder,
        DesignOrder,
        PassOrder,
        PathKind,
        PathOrder,
        PayOrder,
        PitOrder,
        PushOrder,
        SkillOrder,
        SkillTable,
        SlipOrder,
        SpeedOrder,
        TyresOrder,
    )

    level = st.integers(min_value=-2, max_value=2)
    lanes = st.integers(min_value=0, max_value=2)
    skill = st.sets(st.sampled_from(list(SkillTable))).map(lambda s: SkillOrder(tuple(t for t in SkillTable if t in s)))
    return st.one_of(
        st.builds(DesignOrder, st.builds(Design, level, level, level, level, level, level, level)),
        st.builds(TyresOrder, st.sampled_from(list(Tyre))),
        st.builds(BidOrder, st.integers(0, 99), st.integers(0, 99)),
        st.builds(SpeedOrder, st.one_of(st.none(), st.integers(0, 15).map(lambda n: n * 20))),
        st.builds(PathOrder, st.just(PathKind.LANES), st.lists(lanes, min_size=1, max_size=10).map(tuple)),
        st.builds(PathOrder, st.just(PathKind.LANE), lanes.map(lambda n: (n,))),
        st.just(PathOrder(PathKind.LINE)),
        st.builds(PayOrder, st.booleans()),
        skill,
        st.builds(PushOrder, st.booleans()),
        st.builds(SlipOrder, st.integers(0, 2)),
        st.builds(PassOrder, st.booleans()),
        st.builds(PitOrder, st.sampled_from(list(Tyre))),
    )


@settings(max_examples=200, deadline=None)
@given(order=_orders())
def test_every_order_reads_back_from_its_canonical_text(order: object) -> None:
    """§8 / api.py format_orders: the canonical text of any order parses back to the same order."""
    from rules.speed_circuit.plot import format_order, parse_line

    assert parse_line(format_order(order)) == order  # type: ignore[arg-type]
