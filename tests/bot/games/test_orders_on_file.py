"""The seat's orders on file (`store.orders_on_file`): every valid submission folded with the
game's merge rule. Where a later set replaces the earlier (`later_replaces`) only the newest
that holds an order is read (bench: ingest); the result must be the fold's, whatever the
submissions on file."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.models import Seat
from bot.store import FiledOrders, holds, orders_on_file
from rules import find_game, game_names


def fold(rules: Any, state: Any, seat: str, subs: list[Any]) -> tuple[Any, ...] | None:
    """The definition: the seat's own sets (by mail, the GM's ORDER) since its last CLEAR, folded."""
    merged: tuple[Any, ...] | None = None
    for sub in subs:
        if sub.source == "clear":
            merged = None
        elif sub.source in ("mail", "gm"):
            parsed = rules.parse_orders(state, seat, sub.text).orders
            merged = parsed if merged is None else rules.merge_orders(merged, parsed)
    return merged


@pytest.mark.parametrize("name", game_names())
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_newest_set_read_alone_is_the_fold_of_them_all(name: str, data: st.DataObject) -> None:
    rules = find_game(name)
    state = rules.new_game(
        [f"p{i}" for i in range(rules.min_players)], {}, random.Random(data.draw(st.integers(0, 99)))
    )
    seat = sorted(rules.expected_players(state))[0]
    lines = rules.format_orders(rules.default_orders(state, seat)).splitlines()
    # The default, its lines alone, other orders of each game (each game refuses the others'),
    # and lines that are no order at all.
    others = [
        "USE 0",
        "USE 1",
        "USE 2",
        "DESIGN 40 40 160 60",
        "TYRES OPTION",
        "BID 1 1",
        "COLOUR red",
        "START FREE FACING E",
        "ROUND 1: F1",
        "ROUND 2: F2 F1",
    ]
    texts = st.one_of(
        st.just("\n".join(lines)), st.sampled_from([*lines, *others]), st.just("no orders here"), st.just("")
    )
    subs = [
        FiledOrders(source, text)
        for text, source in data.draw(
            st.lists(
                st.tuples(texts, st.sampled_from(["mail", "gm", "default", "plot", "clear", "wait", "nowait"])),
                max_size=6,
            )
        )
    ]
    assert orders_on_file(rules, state, Seat(name=seat), subs) == fold(rules, state, seat, subs)


@given(st.lists(st.sampled_from(["mail", "gm", "default", "clear", "wait", "nowait"]), max_size=12))
def test_a_seat_holds_the_turn_while_its_last_wait_is_not_lifted(sources: list[str]) -> None:
    """WAIT holds the turn until the same seat's NOWAIT; nothing else lifts or sets it."""
    subs = [SimpleNamespace(source=s, text="") for s in sources]
    flags = [s for s in sources if s in ("wait", "nowait")]
    assert holds(subs) == (bool(flags) and flags[-1] == "wait")
