"""Racecraft invariants over random legal games (Hypothesis)."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.racecraft import GAME
from rules.racecraft.model import MAX_EP, Order, Race, Stage
from rules.racecraft.resolve import run_turn
from rules.script import run_script
from tests.rules.racecraft_strategies import racecraft_scripts, races_with_orders, replay, spelled
from tests.settled import examples

# Random races, turns and orders: half as many in the settled profile (tests/run, CI) as when exploring.
SETTINGS = settings(max_examples=examples(50, 100), deadline=None)


def ahead_of(race: Race, player: str) -> set[str]:
    place = race.place_of(player)
    return {name for position in race.positions[: place - 1] for name in position}


@SETTINGS
@given(racecraft_scripts())
def test_ep_stay_in_zero_to_ten(script: dict[str, Any]) -> None:
    """Set-up: "EP are whole numbers, 0..10", after every turn."""
    for step in replay(script):
        for runner in step.resolution.state.runners:
            assert 0 <= runner.ep <= MAX_EP


@SETTINGS
@given(racecraft_scripts())
def test_standings_partition_the_players(script: dict[str, Any]) -> None:
    """The race order is a list of positions holding every runner exactly once, by name."""
    for step in replay(script):
        race = step.resolution.state
        placed = [name for position in race.positions for name in position]
        assert sorted(placed) == sorted(script["players"])
        assert all(position and list(position) == sorted(position) for position in race.positions)


@SETTINGS
@given(racecraft_scripts())
def test_nobody_gains_more_than_one_position(script: dict[str, Any]) -> None:
    """Movement: "a player gains at most one position a turn": everyone a runner newly leads
    was in the one position directly ahead of them."""
    for step in replay(script):
        before, after = step.before, step.resolution.state
        for player in before.names():
            newly_passed = ahead_of(before, player) - ahead_of(after, player)
            place = before.place_of(player)
            if newly_passed:
                assert place >= 2
                assert newly_passed <= set(before.positions[place - 2])


@SETTINGS
@given(racecraft_scripts())
def test_an_overtaken_runner_never_passes_anyone_that_turn(script: dict[str, Any]) -> None:
    """Movement: "a runner already overtaken this turn cannot overtake" (from the resolver's
    own trace of passes, in the order they happened)."""
    for step in replay(script):
        if step.before.stage is Stage.START:
            continue
        report = run_turn(step.before, step.orders)
        assert report.positions == step.resolution.state.positions
        overtaken: set[str] = set()
        for passed in report.passes:
            assert not overtaken & set(passed.passers)
            overtaken |= set(passed.passed)
        passers = {p for passed in report.passes for p in passed.passers}
        assert not passers & overtaken


@SETTINGS
@given(racecraft_scripts())
def test_the_same_script_gives_the_same_output(script: dict[str, Any]) -> None:
    """Replay is deterministic: `flagman play` twice on one script prints the same JSON."""
    first = run_script("racecraft", script)
    second = run_script("racecraft", json.loads(json.dumps(script)))
    assert json.dumps(first) == json.dumps(second)


@SETTINGS
@given(racecraft_scripts())
def test_a_full_script_always_finishes_with_the_sprint(script: dict[str, Any]) -> None:
    """Final sprint: needs no orders, so a script with every other turn finishes the race."""
    output = run_script("racecraft", script)
    turns = int(script["options"]["turns"])
    assert output["finished"] == (len(script["turns"]) == turns - 1)
    if output["finished"]:
        assert len(output["turns"]) == turns
        assert output["result"] == output["turns"][-1]["positions"]


@SETTINGS
@given(races_with_orders())
def test_parse_of_format_is_the_order(case: tuple[Race, str, Order]) -> None:
    """parse_orders(format_orders([o])) == (o,) for every legal order."""
    race, player, order = case
    parsed = GAME.parse_orders(race, player, GAME.format_orders([order]))
    assert parsed.ok and parsed.complete
    assert parsed.orders == (order,)


@SETTINGS
@given(races_with_orders(), st.data())
def test_every_spelling_parses_to_its_order(case: tuple[Race, str, Order], data: st.DataObject) -> None:
    """Orders in mail: every accepted spelling, any case, blank lines ignored."""
    race, player, order = case
    text = data.draw(spelled(order))
    assert GAME.parse_orders(race, player, text).orders == (order,)


@SETTINGS
@given(racecraft_scripts(nmr=False), st.data())
def test_resolve_never_raises_on_defaults(script: dict[str, Any], data: st.DataObject) -> None:
    """resolve is total on default orders: a race where some turns are all NMR still runs."""
    race = GAME.new_game(script["players"], {"turns": str(script["options"]["turns"])}, random.Random(0))
    while not GAME.is_finished(race):
        everyone_nmr = data.draw(st.booleans())
        orders = {}
        for player in GAME.expected_players(race):
            if everyone_nmr:
                orders[player] = GAME.default_orders(race, player)
            else:
                order = GAME.format_orders(GAME.default_orders(race, player))
                orders[player] = GAME.parse_orders(race, player, order).orders
        race = GAME.resolve(race, orders, random.Random(0)).state
    assert GAME.is_finished(race)


@SETTINGS
@given(racecraft_scripts())
def test_load_of_dump_is_the_state(script: dict[str, Any]) -> None:
    """load_state(dump_state(s)) == s, through JSON text, for every state of a game."""
    for step in replay(script):
        for race in (step.before, step.resolution.state):
            assert GAME.load_state(json.loads(json.dumps(GAME.dump_state(race)))) == race


@SETTINGS
@given(
    races_with_orders(),
    st.text(max_size=60)
    | st.lists(
        st.sampled_from(["USE", "a", "B", "c", "bid", "ep", "3", "12", "-1", "99999999", "\n", " ", "x"]), max_size=6
    ).map(" ".join),
)
def test_parse_orders_never_raises_and_numbers_every_problem(case: tuple[Race, str, Order], text: str) -> None:
    """Parsing is total: any mail text gives accepted orders or problems, each problem with
    its 1-based line number and that line; never more than one order is accepted."""
    race, player, _order = case
    parsed = GAME.parse_orders(race, player, text)
    lines = text.splitlines()
    assert len(parsed.orders) <= 1
    assert parsed.complete == (len(parsed.orders) == 1)
    assert parsed.orders or parsed.problems
    for problem in parsed.problems:
        assert 1 <= problem.line_no <= max(1, len(lines))
        assert problem.line == (lines[problem.line_no - 1].strip() if lines else "")
        assert problem.reason
