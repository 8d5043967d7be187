"""Hypothesis properties over random legal races on both bundled tracks (conventions.md:
no two cars in one space, figures in range, speeds within limits, monotonic progress,
deterministic replay, parse(format(o)) == o, load(dump(s)) == s)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.api import Event, turn_rng
from rules.speed_circuit import GAME
from rules.speed_circuit.car import PitStage, Status
from rules.speed_circuit.model import Phase
from rules.speed_circuit.plot import Order, limits
from tests.rules.speed_circuit.strategies import NAMES, order_text
from tests.settled import examples

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


@settings(max_examples=examples(20, 60), deadline=None)  # whole races: slow
@given(
    track=st.sampled_from(TRACKS),
    players=st.integers(min_value=2, max_value=6),
    laps=st.integers(min_value=1, max_value=2),
    seed=st.integers(min_value=0, max_value=2**32),
    staggered=st.booleans(),
)
def test_random_legal_races_keep_every_invariant(
    track: str, players: int, laps: int, seed: int, staggered: bool
) -> None:
    """Over random legal races (with slips, forced passes and pit stops asked for): no two
    cars ever share a space on track; finishers that did not run both compounds are
    classified after those that did (P4); wear and skill never go negative; speeds stay
    within the car's limits except by a passed test; progress never goes back (but for a
    pit crew's -1 space); every turn replays identically; parse(format(o)) == o; load(dump(s)) == s;
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
        # P4: finishers that ran both compounds come before those that did not
        compliant = [state.car(p).ran_both_compounds() for p in standing if state.car(p).status is Status.FINISHED]
        assert compliant == sorted(compliant, reverse=True)
        for car in state.cars:
            assert car.wear >= 0 and car.skill >= 0
            old = before.car(car.player)
            crew_lost = any(
                e.kind == "roll" and car.player in e.players and "-1 space" in e.text for e in resolution.events
            )
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


def _orders() -> st.SearchStrategy[Order]:
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
def test_every_order_reads_back_from_its_canonical_text(order: Order) -> None:
    """§8 / api.py format_orders: the canonical text of any order parses back to the same order."""
    from rules.speed_circuit.parse import format_order, parse_line

    assert parse_line(format_order(order)) == order


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    count=st.integers(min_value=4, max_value=9),
)
def test_crowded_races_with_passing_slips_and_pits_keep_every_invariant(seed: int, count: int) -> None:
    """Over random crowded fields (cars packed into a few rows of the pit test track, most
    drivers allowing forced passes and asking for slips, some pitting): no two cars ever share
    a space on track; a racing car is on track, off track beside an edge space, or in the
    pits, never two of these; wear and skill never go negative; replay is deterministic and
    the state round-trips; finishers that ran both compounds are classified first (P4); a car
    in the pits is offered every speed it may plot there in one tap, each a legal full plot."""
    from dataclasses import replace

    from rules.speed_circuit.car import Design, Tyre
    from tests.rules.speed_circuit.helpers import car, race, scenario_track

    track = scenario_track("pit_test")
    rnd = random.Random(seed)
    # a wall of slow cars in rows 12 and 11, the rest behind it and faster
    spaces = [f"{lane}{row}" for row in (12, 11, 10, 9) for lane in rnd.sample("ABC", 3)][:count]
    cars = []
    for name, space in zip(NAMES, spaces, strict=False):
        tyre = rnd.choice(list(Tyre))
        speed = 20 if int(space[1:]) >= 11 else rnd.choice((60, 80, 100, 120, 140))
        c = car(
            name,
            space,
            track,
            speed=speed,
            wear=rnd.randint(0, 6),
            skill=rnd.randint(0, 4),
            design=Design(acc=1, dec=1, top=0, start=0, prime=-1, option=-1, skill=-2),
            tyres=tyre,
        )
        cars.append(replace(c, tyres_used=(tyre,)))
    state = race(track, cars, laps=1, optional_slip=rnd.random() < 0.5, failed_pass_decel=rnd.random() < 0.3)
    for number in range(1, 9):
        if GAME.is_finished(state):
            break
        orders = {}
        for p in sorted(GAME.expected_players(state)):
            car_now = state.car(p)
            if car_now.speed <= 20 and car_now.pit is None and rnd.random() < 0.6:
                text = "SPEED 0"  # parked in the wall
            else:
                text = order_text(state, p, rnd)
            if rnd.random() < 0.7 and "PASS YES" not in text:
                text += "\nPASS YES"
            parsed = GAME.parse_orders(state, p, text)
            assert parsed.ok, (text, parsed.problems)
            orders[p] = parsed.orders
        before = state
        resolution = GAME.resolve(state, orders, turn_rng(seed, number))
        assert GAME.resolve(GAME.load_state(GAME.dump_state(before)), orders, turn_rng(seed, number)) == resolution
        state = resolution.state
        assert GAME.load_state(GAME.dump_state(state)) == state
        on_track = [c.space for c in state.cars if c.on_track]
        assert len(on_track) == len(set(on_track))
        for c in state.cars:
            assert c.wear >= 0 and c.skill >= 0
            if c.status is Status.RACING:
                assert (c.space is None) == (c.pit is not None)
                if c.off_track:
                    assert c.space is not None and track.space(c.space).lane in track.edge_lanes(
                        track.space(c.space).row
                    )
            else:
                assert c.space is None and c.pit is None
            if c.status is Status.RACING and c.pit is not None:
                offered = GAME.one_line_orders(state, c.player)
                plain = [o.text for o in offered if "PUSH YES" not in o.text]
                assert plain == [f"SPEED {n}" for n in range(0, limits(c, track).safe + 1, 20)]
                # the pit crew is pushed (PUSH YES) only as the tyres are changed, in the entrance lane
                pushed = [o.text for o in offered if "PUSH YES" in o.text]
                assert not pushed or c.pit.stage is PitStage.ENTRANCE, pushed
                assert all(GAME.parse_orders(state, c.player, o.text).complete for o in offered)
                assert all(GAME.parse_orders(state, c.player, o.text).ok for o in offered)
        order = [p for group in GAME.standings(state) for p in group]
        finished = [state.car(p) for p in order if state.car(p).status is Status.FINISHED]
        compliant = [c.ran_both_compounds() for c in finished]
        assert compliant == sorted(compliant, reverse=True)
