"""What an incomplete set of orders lacks, in the game's words ("an incomplete
set says exactly what is missing"): `Game.missing_orders`, of which `is_complete` is the
emptiness, for every game."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rules import find_game
from tests.rules.test_conformance import NAMES, SLOW, last, races


def _start(name: str, count: int | None = None) -> tuple[Any, Any]:
    game = find_game(name)
    players = [f"p{i}" for i in range(count or game.min_players)]
    return game, game.new_game(players, {}, random.Random(1))


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_a_set_lacks_something_exactly_when_it_is_not_complete(name: str, data: st.DataObject) -> None:
    """Property: `missing_orders` is empty exactly when `is_complete`, whatever the mail (lines of
    the default, repeated or left out, and lines that are no order); each thing missing is one
    line, and none of them is itself an order line (the bot's mail holds no order line)."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    for player in sorted(game.expected_players(state)):
        lines = game.format_orders(game.default_orders(state, player)).splitlines()
        mail = data.draw(st.lists(st.sampled_from([*lines, "", "HELP", "no orders from me"]), max_size=6))
        orders = game.parse_orders(state, player, "\n".join(mail)).orders
        missing = game.missing_orders(state, player, orders)
        assert (missing == ()) == game.is_complete(state, player, orders)
        for what in missing:
            assert what and "\n" not in what
            assert not game.parse_orders(state, player, what).orders, what


def test_racecraft_a_missing_order_names_the_orders_of_the_turn() -> None:
    """racecraft.md, Orders: one order a turn; at the start only a number of EP (USE n)."""
    game, state = _start("racecraft")
    assert game.missing_orders(state, "p0", ()) == (
        "the order for turn 1: one of USE n (or A n, BID n or just n) with n from 0 to 10",
    )
    assert game.missing_orders(state, "p0", game.default_orders(state, "p0")) == ()


def test_speed_circuit_a_plot_without_speed_says_speed_is_what_it_lacks() -> None:
    """speed-circuit.md §8: "Each turn a driver sends one plot; every line is optional but SPEED";
    the set-up turns take DESIGN, then BID."""
    game, state = _start("speed_circuit")
    assert game.missing_orders(state, "p0", ())[0].startswith("the car's design: a DESIGN line")
    for _ in ("design", "qualifying"):  # to race turn 1
        state = game.resolve(
            state, {p: game.default_orders(state, p) for p in game.expected_players(state)}, random.Random(2)
        ).state
    assert game.turn_label(state).startswith("Race turn 1")
    path_only = game.parse_orders(state, "p0", "PATH B B B").orders
    assert path_only and not game.is_complete(state, "p0", path_only)
    (lacks,) = game.missing_orders(state, "p0", path_only)
    assert lacks.startswith("the speed: a SPEED line (SPEED n in steps of 20, or SPEED MPS; you may plot")


def test_speedphreakz_a_missing_round_is_named_with_its_number() -> None:
    """speedphreakz.md §5: at the set-up a car sends its START and the programs of rounds 1 and
    2; each later turn the program of the next round."""
    game, state = _start("speedphreakz")
    program_1 = game.parse_orders(state, "p0", "ROUND 1: F1 F1").orders
    assert game.missing_orders(state, "p0", program_1) == (
        "the start: a START line (START x,y FACING h, or START FREE FACING h)",
        "the program for round 2: a ROUND 2 line with up to 12 actions",
    )


def sets_sent(game: Any, state: Any, data: st.DataObject) -> dict[str, tuple[Any, ...]]:
    """For every expected seat a set as a player might send it: part of its default's or its
    robot's lines (possibly none)."""
    orders: dict[str, tuple[Any, ...]] = {}
    for player in sorted(game.expected_players(state)):
        source = data.draw(st.sampled_from(["default", "robot"]))
        whole = (
            game.default_orders(state, player)
            if source == "default"
            else game.robot_orders(state, player, random.Random(data.draw(st.integers(0, 99))))
        )
        lines = game.format_orders(whole).splitlines()
        kept = data.draw(st.lists(st.sampled_from(lines), unique=True, max_size=len(lines))) if lines else []
        orders[player] = game.parse_orders(state, player, "\n".join(kept)).orders
    return orders


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_filled_set_is_what_the_resolution_acts_on(name: str, data: st.DataObject) -> None:
    """Property ("name the default that will fill each missing part"): every part a
    set lacks is filled by `filled_orders` exactly as the resolution fills it, so resolving the
    sets as sent and resolving them filled give the same turn, dice included; a filled set is
    complete (but for what a later turn fills), keeps every line sent, and is the set itself when
    nothing was missing."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    assume(not game.is_finished(state))
    orders = sets_sent(game, state, data)
    filled = {p: game.filled_orders(state, p, o) for p, o in orders.items()}
    for player, sent in orders.items():
        # What is still missing once filled is only what a later turn fills (SpeedPhreakz: the
        # program of a later round), and it was missing before.
        still = game.missing_orders(state, player, filled[player])
        assert set(still) <= set(game.missing_orders(state, player, sent)), (player, sent, filled[player])
        assert name == "speedphreakz" or not still
        assert set(sent) <= set(filled[player])
        if game.is_complete(state, player, sent):
            assert filled[player] == tuple(sent)
    seed = data.draw(st.integers(0, 2**32))
    as_sent = game.resolve(state, orders, random.Random(seed))
    as_filled = game.resolve(state, filled, random.Random(seed))
    assert game.dump_state(as_filled.state) == game.dump_state(as_sent.state)
    assert as_filled.events == as_sent.events
