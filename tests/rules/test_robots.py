"""Robot drivers: every game's `Game.robot_orders` over random reachable states.

The properties: the robot never gives an order its game refuses (the canonical text of its
orders parses back to them, every line legal, the set complete), it gives none when the
seat has nothing to order, it is deterministic from the rng it is given, and it reads only
what a player at that seat can see (changing another player's private part of the state
changes nothing). Racecraft's robot plays races out on a copy of the turn's arithmetic:
that copy agrees with `resolve` on every turn of random races.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rules import racecraft, speed_circuit, speedphreakz
from rules.api import Game, PlayerId, RobotLevel, robot_rng, robot_seed, turn_rng, turn_seed
from rules.racecraft import robot as racecraft_robot
from rules.racecraft.model import Race, Use
from rules.speed_circuit.car import CornerRun, LineRun, Status
from rules.speed_circuit.model import Phase, RaceState
from rules.speedphreakz.model import CarStatus, Program
from rules.speedphreakz.model import Race as PhreakzRace
from tests.rules.racecraft_strategies import legal_orders, racecraft_scripts, replay
from tests.rules.speed_circuit.strategies import order_text
from tests.rules.speedphreakz.strategies import mail
from tests.settled import examples

# Each game with its own types (the objects `find_game` returns): the tests look inside states and orders.
RACECRAFT = racecraft.GAME
SPEED_CIRCUIT = speed_circuit.GAME
SPEEDPHREAKZ = speedphreakz.GAME
# Whole races with the robot thinking for every seat at every turn: slow. Settled, a few drawn
# races beside the explicit examples (the full field and the smallest); exploring draws many.
SLOW = settings(
    max_examples=examples(4, 25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# A full field of eight runners, each using 1 EP every turn: all eight level up to the final sprint.
EIGHT = ("kelly", "seb", "steve", "roger", "ann", "bo", "cy", "di")
FULL_FIELD = {"players": list(EIGHT), "options": {"turns": 5}, "seed": 7, "turns": [dict.fromkeys(EIGHT, "USE 1")] * 3}


def check_legal(game: Game[Any, Any], state: Any, player: PlayerId, seed: int) -> tuple[Any, ...]:
    """The robot's orders for `player` are what the game takes from a player: legal and
    complete when the seat is expected to order, none otherwise; the same for the same rng."""
    easy = game.robot_orders(state, player, random.Random(seed), RobotLevel.EASY)
    if player in game.expected_players(state):  # the easy level is as legal and complete
        parsed = game.parse_orders(state, player, game.format_orders(easy))
        assert parsed.ok and parsed.complete and parsed.orders == tuple(easy), (game.format_orders(easy), parsed)
    else:
        assert easy == ()
    orders = game.robot_orders(state, player, random.Random(seed))
    assert orders == game.robot_orders(state, player, random.Random(seed)), "not deterministic from its rng"
    if player not in game.expected_players(state):
        assert orders == ()
        return orders
    parsed = game.parse_orders(state, player, game.format_orders(orders))
    assert parsed.ok, (game.format_orders(orders), parsed.problems)
    assert parsed.orders == tuple(orders), (parsed.orders, orders)
    assert parsed.complete and game.is_complete(state, player, orders), game.missing_orders(state, player, orders)
    # Told which seats are robots (here: this seat alone, every other a person), the orders
    # are as legal and complete; a game whose robot drives alike whoever the others are
    # gives the same orders (checked on one example in four there: it costs a robot's move).
    if game.name != "speedphreakz" and seed % 4:
        return orders
    told = game.robot_orders(state, player, random.Random(seed), RobotLevel.NORMAL, frozenset({player}))
    parsed = game.parse_orders(state, player, game.format_orders(told))
    assert parsed.ok and parsed.complete and parsed.orders == tuple(told), (game.format_orders(told), parsed)
    if game.name != "speedphreakz":
        assert told == orders, "Racecraft and Speed Circuit robots drive alike whichever seats are robots"
    return orders


# -- the rng ---------------------------------------------------------------------------------


def test_a_robots_rng_is_its_own_for_each_seat_and_turn() -> None:
    """`robot_rng(turn seed, seat)`: derived from the stored turn seed (so a robot's orders can
    be worked out again at any time), different for two seats of one turn and for one seat
    in two turns, and not the turn's own stream (the dice stay the dice)."""
    seeds = [turn_seed(7, turn) for turn in range(1, 6)]
    drawn = {(s, seat): robot_rng(s, seat).random() for s in seeds for seat in ("ann", "bob", "cat")}
    assert len(set(drawn.values())) == len(drawn)
    assert robot_rng(seeds[0], "ann").random() == drawn[(seeds[0], "ann")]
    assert all(robot_rng(s, "ann").random() != random.Random(s).random() for s in seeds)
    assert 0 <= robot_seed(seeds[0], "ann") < 2**63


# -- Racecraft -------------------------------------------------------------------------------


@settings(max_examples=examples(6, 60), deadline=None)
@given(script=racecraft_scripts(), seed=st.integers(0, 2**32))
@example(script=FULL_FIELD, seed=0)
@example(script={"players": list(EIGHT[:5]), "options": {"turns": 9}, "seed": 3, "turns": []}, seed=1)  # the start
def test_racecraft_robot_orders_are_always_legal_and_complete(script: dict[str, Any], seed: int) -> None:
    """Over random legal races, at every turn, for every runner: one order it may give (USE n
    within its EP, CRUISE or OVERTAKE on tactical turns, OVERTAKE not at 0 EP), none on the
    final sprint."""
    options = {key: str(value) for key, value in script["options"].items()}
    states = [RACECRAFT.new_game(script["players"], options, random.Random(0))]
    states += [step.resolution.state for step in replay(script)]
    for state in states:
        for player in RACECRAFT.players(state):
            orders = check_legal(RACECRAFT, state, player, seed)
            if player in RACECRAFT.expected_players(state):
                assert len(orders) == 1 and orders[0] in legal_orders(state, player)


@settings(max_examples=80, deadline=None)
@given(script=racecraft_scripts(nmr=True), seed=st.integers(0, 2**32))
def test_racecrafts_robot_plays_races_out_as_resolve_does(script: dict[str, Any], seed: int) -> None:
    """The robot's copy of the turn (`robot.Field.step`: costs, cruise +1, movement from the
    last position forward, the end-of-turn adjustment, the final sprint) gives the EP and
    positions `resolve` gives, turn after turn, whatever the orders."""
    for step in replay(script) + _sprint_after(script):
        field = racecraft_robot.field_of(step.before)
        names = step.before.names()
        codes = [racecraft_robot.encode(step.orders[name][-1]) if step.orders else 0 for name in names]
        after = field.step(codes)
        expected = racecraft_robot.field_of(step.resolution.state)
        assert after.ep == expected.ep and after.turn == expected.turn
        assert [sorted(p) for p in after.positions] == [sorted(p) for p in expected.positions]


def _sprint_after(script: dict[str, Any]) -> list[Any]:
    """The steps of the same race run on to its end with every runner's default (so the
    final sprint is always among the steps checked)."""
    steps = replay(script)
    state: Race = (
        steps[-1].resolution.state
        if steps
        else RACECRAFT.new_game(script["players"], {k: str(v) for k, v in script["options"].items()}, random.Random(0))
    )
    more = []
    turn = 100
    while not RACECRAFT.is_finished(state):
        orders = {p: RACECRAFT.default_orders(state, p) for p in RACECRAFT.expected_players(state)}
        resolution = RACECRAFT.resolve(state, orders, turn_rng(0, turn))
        more.append(_Step(state, orders, resolution))
        state = resolution.state
        turn += 1
    return more


@dataclasses.dataclass(frozen=True)
class _Step:
    before: Any
    orders: dict[str, Any]
    resolution: Any


def test_racecraft_robot_reads_nothing_but_the_race() -> None:
    """Racecraft keeps nothing private (EP are public): the robot's order is a function of
    the race and its rng alone, the same race giving the same order for the same seed."""
    state = RACECRAFT.new_game(["ann", "bob", "cat", "dan", "eve"], {}, random.Random(0))
    for turn in range(1, 4):
        orders = {
            p: RACECRAFT.robot_orders(state, p, robot_rng(turn_seed(3, turn), p)) for p in RACECRAFT.players(state)
        }
        again = RACECRAFT.load_state(RACECRAFT.dump_state(state))
        assert orders == {p: RACECRAFT.robot_orders(again, p, robot_rng(turn_seed(3, turn), p)) for p in orders}
        state = RACECRAFT.resolve(state, orders, turn_rng(3, turn)).state


# -- Speed Circuit ---------------------------------------------------------------------------


def _speed_circuit_race(seed: int, players: int, track: str, robots: frozenset[int], turns: int) -> Iterator[RaceState]:
    """The states of a 1-lap race on `track`: the seats in `robots` driven by the robot,
    the others by random legal plots (`strategies.order_text`) or their NMR default."""
    names = [f"p{i}" for i in range(players)]
    state = SPEED_CIRCUIT.new_game(names, {"track": track, "laps": "1"}, turn_rng(seed, 0))
    chooser = random.Random(seed)
    for number in range(1, turns + 1):
        yield state
        if SPEED_CIRCUIT.is_finished(state):
            return
        orders = {}
        for seat, player in enumerate(names):
            if player not in SPEED_CIRCUIT.expected_players(state):
                continue
            if seat in robots:
                orders[player] = SPEED_CIRCUIT.robot_orders(state, player, robot_rng(turn_seed(seed, number), player))
            elif chooser.random() < 0.7:
                parsed = SPEED_CIRCUIT.parse_orders(state, player, order_text(state, player, chooser))
                orders[player] = parsed.orders if parsed.complete else SPEED_CIRCUIT.default_orders(state, player)
            else:
                orders[player] = SPEED_CIRCUIT.default_orders(state, player)
        state = SPEED_CIRCUIT.resolve(state, orders, turn_rng(seed, number)).state


@SLOW
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 7),
    track=st.sampled_from(["harbour_loop", "quarry_ring"]),
    robots=st.frozensets(st.integers(0, 6), min_size=1),
    check=st.integers(0, 2**32),
)
@example(seed=1, players=7, track="quarry_ring", robots=frozenset(range(7)), check=2)  # a full field of robots
@example(seed=3, players=2, track="harbour_loop", robots=frozenset({1}), check=4)  # the smallest field
def test_speed_circuit_robot_plots_are_always_legal_and_complete(
    seed: int, players: int, track: str, robots: frozenset[int], check: int
) -> None:
    """Over random 1-lap races (some seats robots, the rest random legal plots or defaults),
    at every turn, for every car: the design and tyres at turn 1, a bid within its starting
    set and chips at turn 2, then a full plot (SPEED, within its limits, PUSH YES where the
    speed needs a push) on the track, in the pits and off it; nothing once out or finished."""
    for state in _speed_circuit_race(seed, players, track, robots, 60):
        for player in SPEED_CIRCUIT.players(state):
            check_legal(SPEED_CIRCUIT, state, player, check)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_speed_circuit_robots_make_their_compulsory_stop(seed: int) -> None:
    """P4 ("every car is required to use each tire at least once"): a field of robots alone
    finishes a 1-lap race, and every car that finishes has run both compounds."""
    *_, last = _speed_circuit_race(seed, 4, "harbour_loop", frozenset(range(4)), 80)
    assert last.phase is Phase.FINISHED
    finished = [c for c in last.cars if c.status is Status.FINISHED]
    assert finished and all(c.ran_both_compounds() for c in finished)


def test_speed_circuit_robot_does_not_read_another_drivers_private_lines() -> None:
    """What another car has paid for its corner, the racing line it follows and the line it
    may no longer use are private (view.private_lines): changing them changes nothing the
    robot orders."""
    changed = 0
    for state in _speed_circuit_race(5, 4, "harbour_loop", frozenset({0}), 40):
        if state.phase is not Phase.RACE or "p0" not in SPEED_CIRCUIT.expected_players(state):
            continue
        mine = SPEED_CIRCUIT.robot_orders(state, "p0", random.Random(1))
        others = tuple(
            car
            if car.player == "p0" or car.space is None
            else dataclasses.replace(
                car,
                corner_run=CornerRun("T9", tier=3, wear_paid=2, rolled=True, worst_raw=60),
                line_run=LineRun("T1", 0),
                barred_line="T2",
            )
            for car in state.cars
        )
        assert SPEED_CIRCUIT.robot_orders(dataclasses.replace(state, cars=others), "p0", random.Random(1)) == mine
        changed += others != state.cars
    assert changed > 10


# -- SpeedPhreakz ----------------------------------------------------------------------------


def _speedphreakz_race(data: st.DataObject, robots: frozenset[int]) -> Iterator[PhreakzRace]:
    """The states of a random race: the seats in `robots` driven by the robot, the others
    sending random legal mails (`strategies.mail`) or nothing (the NMR default)."""
    count = data.draw(st.integers(2, 8), label="players")
    names = [f"p{i}" for i in range(count)]
    options = {
        "map": data.draw(st.sampled_from(["ring", "chicane"]), label="map"),
        "nmr": data.draw(st.sampled_from(["empty", "repeat"]), label="nmr"),
        "max_actions": str(data.draw(st.integers(4, 12), label="max_actions")),
        # Short races (a robot alone finishes a bundled map in 9 to 13 rounds): the round limit
        # ends some of them, so races still reach their end and the robot's silence after it.
        "max_rounds": str(data.draw(st.integers(2, 14), label="max_rounds")),
    }
    state = SPEEDPHREAKZ.new_game(names, options, random.Random(0))
    for number in range(1, data.draw(st.integers(1, 16), label="turns") + 1):
        yield state
        if SPEEDPHREAKZ.is_finished(state):
            return
        orders = {}
        for seat, player in enumerate(names):
            if player not in SPEEDPHREAKZ.expected_players(state):
                continue
            if seat in robots:
                orders[player] = SPEEDPHREAKZ.robot_orders(state, player, robot_rng(number, player))
                continue
            sent = data.draw(mail(state, player), label=f"mail {player}")
            parsed = SPEEDPHREAKZ.parse_orders(state, player, SPEEDPHREAKZ.format_orders(sent))
            orders[player] = SPEEDPHREAKZ.merge_orders(SPEEDPHREAKZ.default_orders(state, player), parsed.orders)
        state = SPEEDPHREAKZ.resolve(state, orders, turn_rng(7, number)).state
    yield state


@SLOW
@given(data=st.data(), robots=st.frozensets(st.integers(0, 7), min_size=1), check=st.integers(0, 2**32))
def test_speedphreakz_robot_orders_are_always_legal_and_complete(
    data: st.DataObject, robots: frozenset[int], check: int
) -> None:
    """Over random races (some seats robots, the rest random legal mails or silence), at every
    turn, for every car: START and the programs of rounds 1 and 2 at the set-up, a program
    for the next round while racing, RESTART and the programs of the round in hand and the
    next after a crash; every program legal (§4.2: a movement first, never two turns in a
    row, within the game's cap); nothing once finished or out."""
    for state in _speedphreakz_race(data, robots):
        for car in state.cars:
            orders = check_legal(SPEEDPHREAKZ, state, car.player, check)
            programs = [o for o in orders if isinstance(o, Program)]
            assert all(len(p.actions) <= state.options.max_actions for p in programs)


def test_speedphreakz_robot_does_not_read_another_players_programs_or_what_they_carry() -> None:
    """Another player's queued programs, deficit, crash surcharge and oil are shown to that
    player only (view.build_view): changing them changes nothing the robot orders."""
    checked = 0
    state = SPEEDPHREAKZ.new_game(["p0", "p1", "p2"], {"map": "chicane"}, random.Random(0))
    for number in range(1, 12):
        if SPEEDPHREAKZ.is_finished(state):
            break
        orders = {
            p: SPEEDPHREAKZ.robot_orders(state, p, robot_rng(number, p)) for p in SPEEDPHREAKZ.expected_players(state)
        }
        if "p0" in orders:
            others = tuple(
                car
                if car.player == "p0"
                else dataclasses.replace(
                    car, programs=(Program(state.round + 1, ("F3", "HL", "F3")),), deficit=77, surcharge=100, oil=True
                )
                for car in state.cars
            )
            assert (
                SPEEDPHREAKZ.robot_orders(dataclasses.replace(state, cars=others), "p0", robot_rng(number, "p0"))
                == orders["p0"]
            )
            checked += 1
        state = SPEEDPHREAKZ.resolve(state, orders, turn_rng(1, number)).state
    assert checked >= 5


def test_a_speedphreakz_robot_alone_finishes_the_race() -> None:
    """A robot on its own gets round each bundled map and over the line, driving programs it
    never loses control of (cost 101 or less: `Band.IN_CONTROL`) until the line is in reach."""
    for name in ("ring", "chicane"):
        state = SPEEDPHREAKZ.new_game(["solo", "idle"], {"map": name}, random.Random(0))
        for number in range(1, 40):
            if SPEEDPHREAKZ.is_finished(state):
                break
            orders = {
                "solo": SPEEDPHREAKZ.robot_orders(state, "solo", robot_rng(number, "solo")),
                "idle": SPEEDPHREAKZ.default_orders(state, "idle"),
            }
            state = SPEEDPHREAKZ.resolve(state, orders, turn_rng(2, number)).state
        assert state.finished and state.finish_order[0] == "solo", name
        assert state.car("solo").status is CarStatus.FINISHED


@pytest.mark.parametrize("field", [2, 4, 8])
@pytest.mark.parametrize("name", ["ring", "chicane"])
def test_speedphreakz_robots_expect_each_other_to_move_and_never_crash_into_each_other(name: str, field: int) -> None:
    """speedphreakz.md §4.5: "at the end of the round, all cars sharing a square crash", and a
    car next to a crash crashes too. The practice game is one person and four robots; robots
    alone on a map (two on the chicane crashed into each other in round 1 in 6 of 6 races) must
    expect each other to move: every car planned in seating order, the earlier seat having the
    way. Fields of robots only, each robot told that every seat is a robot (as the shell tells
    it), several seeds: no crash at all, and every robot finishes."""
    seats = [f"r{i}" for i in range(field)]
    for seed in range(3):
        state = SPEEDPHREAKZ.new_game(seats, {"map": name, "max_rounds": "40"}, turn_rng(seed, 0))
        for number in range(1, 60):
            if SPEEDPHREAKZ.is_finished(state):
                break
            orders = {
                seat: SPEEDPHREAKZ.robot_orders(
                    state, seat, robot_rng(turn_seed(seed, number), seat), RobotLevel.NORMAL, frozenset(seats)
                )
                for seat in SPEEDPHREAKZ.expected_players(state)
            }
            state = SPEEDPHREAKZ.resolve(state, orders, turn_rng(seed, number)).state
        assert state.finished, (name, field, seed)
        assert [state.car(seat).crashes for seat in seats] == [0] * field, (name, field, seed)


# The robots' strength against the references (the NMR default, a greedy driver, Racecraft's
# rule of thumb, the easy level) in every field size, over many seeded races, is measured by
# `python -m bench --only robots` (bench/README.md, "robots"): a benchmark, not a test. The
# suite keeps one small seeded case a game, the smallest field, so that a robot that forgets
# how to race fails here.


@pytest.mark.parametrize(
    ("game", "opponent", "size"),
    [
        ("racecraft", "nmr", 5),
        ("racecraft", "heuristic", 5),
        ("speed_circuit", "nmr", 2),
        ("speed_circuit", "greedy", 2),
        ("speedphreakz", "nmr", 2),
        ("speedphreakz", "greedy", 2),
    ],
)
def test_the_robot_meets_the_bench_target_against_each_reference_in_a_few_small_seeded_fields(
    game: str, opponent: str, size: int
) -> None:
    """bench/robots.py, targets: the robot finishes ahead of the NMR default (racecraft.md, "NMR":
    "The player uses half their remaining EP, rounded down") in at least 70% of pairs, and
    ahead head to head (more pairs ahead than behind) of the game's best reference (the greedy
    driver; Racecraft's rule of thumb). Four seeded races of the smallest field (seed 40, as
    bench `robots` draws them)."""
    from bench import robots

    drawn = robots.specs(game, "robot", opponent, size, 4, seed=40)
    matchup = robots.tally(game, "robot", opponent, size, drawn, [robots.run_spec(spec) for spec in drawn])
    assert matchup.met, matchup.line()


@settings(max_examples=40, deadline=None)
@given(
    runners=st.integers(5, 8),
    turns=st.integers(3, 9),
    seed=st.integers(0, 2**32),
    level=st.sampled_from(list(RobotLevel)),
)
def test_racecraft_robot_never_spends_all_its_ep_at_the_start(
    runners: int, turns: int, seed: int, level: RobotLevel
) -> None:
    """racecraft.md, "Turn 1 -- the start": EP used are deducted, and the adjustment takes 1 from
    the leader after each tactical turn. A robot that spent all 10 EP on turn 1 finished last
    (at 0 EP it can neither OVERTAKE, "refused at 0 EP", nor score). At either level, in any
    field, the robot's start uses at most 3 of its 10 EP."""
    names = [f"r{i}" for i in range(runners)]
    state = RACECRAFT.new_game(names, {"turns": str(turns)}, random.Random(0))
    for name in names:
        (order,) = RACECRAFT.robot_orders(state, name, robot_rng(turn_seed(seed, 1), name), level)
        assert isinstance(order, Use) and order.ep <= 3, order  # the start takes USE n only
