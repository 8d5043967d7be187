"""The orders as the dice digest them (docs/DESIGN.md, "Dice anyone can check"): `Game.normal_orders`,
the filled set less every line that only restates a default. A line that changes nothing in play
must change no roll, and a change that changes the play must change the digest, in every game."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rules import fair, find_game
from tests.rules.test_conformance import NAMES, races
from tests.rules.test_conformance import last as _last
from tests.rules.test_missing_orders import sets_sent

# A race is played once per (game, players, seed, turns) drawn: the states are immutable.
last = functools.lru_cache(maxsize=256)(_last)

PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Lines that restate what the resolution does without them, whatever the state, where the game
# has any (beyond what `filled_orders` adds, which every game's test draws from the state).
RESTATING = {
    "speed_circuit": ("PAY WEAR", "SKILL NONE", "PUSH NO", "SLIP 0", "PASS NO", "TYRES PRIME"),
    "speedphreakz": (),
    "racecraft": (),
}


def _digest(game: Any, state: Any, orders: dict[str, tuple[Any, ...]]) -> str:
    return fair.orders_digest({p: game.format_orders(game.normal_orders(state, p, o)) for p, o in orders.items()})


def _restating(game: Any, name: str, state: Any, player: str, sent: tuple[Any, ...]) -> list[str]:
    """The lines that restate a default for `sent`: what the fill adds, and the game's own
    restating lines of a kind the set does not hold yet, where legal now."""
    filled = game.format_orders(game.filled_orders(state, player, sent)).splitlines()
    own = set(game.format_orders(sent).splitlines())
    found = [line for line in filled if line not in own]
    for line in RESTATING[name]:
        parsed = game.parse_orders(state, player, game.format_orders(sent) + "\n" + line)
        head = line.split()[0]
        if parsed.ok and not any(text.split()[0] == head for text in own):
            found.append(line)
    return found


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(data=st.data())
def test_lines_that_restate_a_default_never_change_the_digest(name: str, data: st.DataObject) -> None:
    """Property: adding to a seat's set any line that only restates a default (the line the
    game's fill would put there; Speed Circuit's PAY WEAR, PUSH NO, SLIP 0 ...), or taking one
    away, leaves the digest of the turn's orders as it was: no roll can be redrawn by them."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    assume(not game.is_finished(state) and game.expected_players(state))
    orders = sets_sent(game, state, data)
    before = _digest(game, state, orders)
    player = data.draw(st.sampled_from(sorted(orders)))
    extra = _restating(game, name, state, player, orders[player])
    if not extra:
        return  # nothing to restate for this seat now (a set that is its own fill)
    added = data.draw(st.lists(st.sampled_from(extra), unique=True, min_size=1))
    text = "\n".join([game.format_orders(orders[player]), *added])
    parsed = game.parse_orders(state, player, text)
    assert parsed.ok, (text, parsed.problems)
    assert _digest(game, state, {**orders, player: parsed.orders}) == before, (player, added)


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(data=st.data())
def test_the_normal_form_resolves_as_the_set_and_any_change_in_play_changes_the_digest(
    name: str, data: st.DataObject
) -> None:
    """Property: the normal form resolves exactly as the sets sent (dice included), reads back
    as itself and is its own normal form; of two ways to order a turn, those that play
    differently (another state or other events on the same dice) have different digests."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    assume(not game.is_finished(state))
    first, second = sets_sent(game, state, data), sets_sent(game, state, data)
    seed = data.draw(st.integers(0, 2**32))
    for orders in (first, second):
        normal = {p: game.normal_orders(state, p, o) for p, o in orders.items()}
        for player, own in normal.items():
            assert game.normal_orders(state, player, own) == own
            assert game.parse_orders(state, player, game.format_orders(own)).orders == own
        as_sent = game.resolve(state, orders, random.Random(seed))
        as_normal = game.resolve(state, normal, random.Random(seed))
        assert game.dump_state(as_normal.state) == game.dump_state(as_sent.state)
        assert as_normal.events == as_sent.events
    one = game.resolve(state, first, random.Random(seed))
    two = game.resolve(state, second, random.Random(seed))
    if game.dump_state(one.state) != game.dump_state(two.state) or one.events != two.events:
        assert _digest(game, state, first) != _digest(game, state, second)


def test_speed_circuit_pay_wear_push_no_slip_0_leave_the_dice_as_they_were() -> None:
    """speed-circuit.md §8: every plot line but SPEED is optional, and a line left out is at its
    default; written out, PAY WEAR, SKILL NONE, PUSH NO, SLIP 0 and PASS NO change neither the
    play nor the dice."""
    game = find_game("speed_circuit")
    state = game.new_game(["a", "b"], {}, random.Random(1))
    for _ in ("design", "qualifying"):
        state = game.resolve(
            state, {p: game.default_orders(state, p) for p in game.expected_players(state)}, random.Random(2)
        ).state
    plain = game.parse_orders(state, "a", "SPEED 20").orders
    wordy = game.parse_orders(state, "a", "SPEED 20\nPAY WEAR\nSKILL NONE\nPUSH NO\nSLIP 0\nPASS NO").orders
    assert len(wordy) == 6
    assert game.normal_orders(state, "a", wordy) == game.normal_orders(state, "a", plain) == plain
