"""SpeedPhreakz invariants, as Hypothesis properties over random legal races."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.speedphreakz import GAME
from rules.speedphreakz.data import chart
from rules.speedphreakz.model import CarStatus, Heading, Order, Program, Race, Start
from rules.speedphreakz.resolve import reckless_result
from tests.rules.speedphreakz.helpers import ScriptedRandom, car, race
from tests.rules.speedphreakz.strategies import NAMES, play_random_race, programs
from tests.settled import examples

RACES = settings(max_examples=examples(20, 60), deadline=None)  # whole races: slow


def on_the_board(state: Race) -> None:
    for c in state.cars:
        assert c.recklessness >= 0, c
        assert c.deficit >= 0 and c.surcharge >= 0, c
        if c.square is not None and c.status is not CarStatus.OUT:
            assert state.circuit.on_map(c.square), c
            assert not state.circuit.solid(c.square), c


@RACES
@given(st.data())
def test_recklessness_never_negative_no_car_in_a_solid_no_two_on_a_square(data: st.DataObject) -> None:
    """§4.2: recklessness only grows or resets to 0; §4.5: a car never enters a solid (it
    stays on its last legal square) and "at the end of the round, all cars sharing a square
    crash" (S10 re-places a crashed car on a square no racing car holds); and resolve never
    raises on parsed or default orders."""
    for turn in play_random_race(data):
        state = turn.resolution.state
        on_the_board(state)
        squares = [c.square for c in state.cars if c.status is CarStatus.RACING]
        assert len(squares) == len(set(squares))


@RACES
@given(st.data())
def test_no_car_still_racing_ends_a_round_on_someone_elses_square(data: st.DataObject) -> None:
    """The seed: "end the round on the same square as someone ... you are considered to have
    crashed"; §4.5 "at the end of the round, all cars sharing a square crash". After every
    round, a car still racing shares its square with nobody: no racing car and no wreck of
    that round (a car that crashed stays on its square until it is re-placed)."""
    for turn in play_random_race(data):
        state = turn.resolution.state
        on_board = [c for c in state.cars if c.status in (CarStatus.RACING, CarStatus.CRASHED)]
        for racer in (c for c in on_board if c.status is CarStatus.RACING):
            assert all(other.square != racer.square for other in on_board if other is not racer), (racer, on_board)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["ring", "chicane"]),
    st.lists(st.none() | st.tuples(st.integers(0, 9), st.sampled_from(list(Heading))), min_size=2, max_size=8),
    st.integers(0, 2**32),
)
def test_a_silent_player_starts_where_the_fewest_cars_are(
    map_name: str, choices: list[tuple[int, Heading] | None], seed: int
) -> None:
    """§5: "A player silent at the set-up is placed on a start square no one chose (the first
    free one in seat order; if none is free, the one with fewest cars), facing the race
    direction". Whatever the others choose, a silent car's start square holds at most one
    car more (itself) than the emptiest start square: alone whenever a square was free.
    (Every program is empty, so every car is still on its start square after round 1.)"""
    players = list(NAMES[: len(choices)])
    state = GAME.new_game(players, {"map": map_name}, random.Random(0))
    starts = state.circuit.start_squares
    orders: dict[str, tuple[Order, ...]] = {}
    for player, choice in zip(players, choices, strict=True):
        if choice is None:
            orders[player] = GAME.default_orders(state, player)
        else:
            orders[player] = (Start(starts[choice[0] % len(starts)], choice[1]), Program(1, ()), Program(2, ()))
    after = GAME.resolve(state, orders, random.Random(seed)).state
    cars_on = {square: sum(1 for c in after.cars if c.square == square) for square in starts}
    assert sum(cars_on.values()) == len(players)
    for player, choice in zip(players, choices, strict=True):
        if choice is None:
            mine = after.car(player)
            assert mine.square is not None
            assert cars_on[mine.square] <= min(cars_on.values()) + 1, (mine, cars_on)
            assert mine.heading is state.circuit.finish_direction


@RACES
@given(st.data())
def test_a_gm_plot_stands_legal_and_complete_in_every_later_turn(data: st.DataObject) -> None:
    """§5: a GM plot is "a standing default per player ... that applies to every round the
    player leaves empty until the GM clears it". A plot of a player's set-up orders stands in
    every later turn that player orders for: legal and complete (api: as parse_orders would
    take it), every open round carrying the plot's last program (its ROUND 2)."""
    turns = play_random_race(data, max_turns=12)
    player = data.draw(st.sampled_from(sorted(turns[0].orders)), label="plotted")
    plot = GAME.format_orders(turns[0].orders[player])
    [carried] = [o.actions for o in turns[0].orders[player] if isinstance(o, Program) and o.round == 2]
    for turn in turns[1:]:
        if player not in GAME.expected_players(turn.state):
            continue
        orders = GAME.plot_orders(turn.state, player, plot)
        assert orders is not None
        parsed = GAME.parse_orders(turn.state, player, GAME.format_orders(orders))
        assert parsed.ok and parsed.complete and parsed.orders == orders, parsed.problems
        assert [o.actions for o in orders if isinstance(o, Program)] == [carried] * len(
            turn.state.allowed_rounds(player)
        )


@RACES
@given(st.data())
def test_without_a_round_limit_only_a_finish_or_an_empty_field_ends_the_race(data: st.DataObject) -> None:
    """§5: "No round limit by default: the race runs until a car finishes": with no
    max_rounds, a race is over exactly when a car has crossed the line or none is racing."""
    for turn in play_random_race(data):
        state = turn.resolution.state
        assert state.options.max_rounds is None
        assert state.finished == (bool(state.finish_order) or not any(c.racing for c in state.cars))


@RACES
@given(st.data())
def test_replay_is_deterministic(data: st.DataObject) -> None:
    """architecture.md: "any turn can be replayed exactly" from the state, orders and seed."""
    for turn in play_random_race(data, max_turns=10):
        again = GAME.resolve(GAME.load_state(GAME.dump_state(turn.state)), turn.orders, random.Random(turn.seed))
        assert again == turn.resolution


@RACES
@given(st.data())
def test_dump_then_load_is_the_same_state(data: st.DataObject) -> None:
    """api: `load_state` is the inverse of `dump_state`, through real JSON text."""
    for turn in play_random_race(data, max_turns=10):
        state = turn.resolution.state
        assert GAME.load_state(json.loads(json.dumps(GAME.dump_state(state)))) == state


@RACES
@given(st.data())
def test_format_then_parse_is_the_same_orders(data: st.DataObject) -> None:
    """api: "parse_orders(state, p, format_orders(x)).orders == tuple(x)"."""
    for turn in play_random_race(data, max_turns=10):
        for player, orders in turn.orders.items():
            parsed = GAME.parse_orders(turn.state, player, GAME.format_orders(orders))
            assert parsed.ok and parsed.orders == orders


@RACES
@given(st.data())
def test_standings_hold_every_player_once(data: st.DataObject) -> None:
    """The standings are a partition of the players still in the race, finishers first."""
    for turn in play_random_race(data, max_turns=12):
        state = turn.resolution.state
        places = GAME.standings(state)
        flat = [p for position in places for p in position]
        assert sorted(flat) == sorted(GAME.players(state))
        assert tuple(flat[: len(state.finish_order)]) == state.finish_order
        assert GAME.view(state, turn.resolution, "ann").events == tuple(e.text for e in turn.resolution.events)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 9), st.integers(0, 40))
def test_the_d10_table_is_total(face: int, recklessness: int) -> None:
    """S1 / §4.3: every face with any recklessness gives a table line or a crash, never an
    error; results only move away from the middle (4.5) as recklessness grows."""
    result = reckless_result(face, recklessness)
    assert (result <= face <= 4) or (result >= face >= 5)
    if 0 <= result <= 9:
        for action in chart().actions:
            assert action.table[result].name


@settings(max_examples=150, deadline=None)
@given(
    programs(max_actions=12),
    st.integers(0, 12),
    st.integers(0, 500),
    st.lists(st.integers(0, 9), min_size=14, max_size=14),
    st.integers(1, 100),
    st.booleans(),
)
def test_any_program_with_any_recklessness_resolves(
    program: tuple[str, ...], recklessness: int, deficit: int, faces: list[int], d100: int, oil: bool
) -> None:
    """Resolve is total: any legal program, recklessness, carried deficit and dice; the car
    stays on the board and its recklessness is never negative."""
    state = race(
        [car("ann", (6, 3), recklessness=recklessness, deficit=deficit, oil=oil)], programs={"ann": " ".join(program)}
    )
    rng = ScriptedRandom([d100, *faces])
    resolution = GAME.resolve(state, {}, rng)
    on_the_board(resolution.state)
    assert sum(1 for e in resolution.events if e.kind == "d10") == len(rng.asked) - 1


TOKENS = st.sampled_from(
    [
        "ROUND",
        "round",
        "START",
        "RESTART",
        "COLOUR",
        "FACING",
        "1",
        "2",
        "3",
        "99",
        "-1",
        ":",
        ",",
        "2,5",
        "1,5",
        "F1",
        "F2",
        "TL",
        "HR",
        "VL",
        "RV",
        "N",
        "SE",
        "red",
        "blue",
        "??",
        "é",
        "\t",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(TOKENS, max_size=8).map(" ".join) | st.text(max_size=30), max_size=6), st.booleans())
def test_parsing_is_total(lines: list[str], set_up: bool) -> None:
    """architecture.md: every bad line is reported, never raised; each non-blank line is
    either an accepted order or a problem."""
    state = GAME.new_game(["ann", "bob"], {}, random.Random(0))
    if not set_up:
        state = race([car("ann", (3, 3)), car("bob", (5, 3))])
    text = "\n".join(lines)
    parsed = GAME.parse_orders(state, "ann", text)
    assert len(parsed.orders) + len(parsed.problems) == sum(1 for line in text.splitlines() if line.strip())
    assert GAME.parse_orders(state, "ann", GAME.format_orders(parsed.orders)).orders == parsed.orders
