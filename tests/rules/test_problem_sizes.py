"""The reasons a game's parser gives are bounded per line ("Problem texts are linear in
the input"; 2,000 repeated Racecraft orders once gave each line a reason naming all 2,000 lines)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rules import find_game

GAMES = {
    "racecraft": (["a", "b", "c", "d", "e"], ["USE 1", "CRUISE", "OVERTAKE", "USE 99", "junk 7"]),
    "speed_circuit": (["a", "b", "c"], ["SPEED 60", "PATH B3", "PIT", "PUSH YES", "junk"]),
    "speedphreakz": (["a", "b", "c"], ["ROUND 1 F", "START 2,4 FACING N", "COLOUR RED", "junk"]),
}
MAX_REASON = 600  # characters of one line's reason, however many lines the mail has


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(GAMES)), data=st.data())
def test_every_problem_reason_is_bounded_whatever_the_number_of_lines(kind: str, data: st.DataObject) -> None:
    """Any mix of up to 3,000 order lines, repeated: each line's reason stays under a fixed bound."""
    players, lines = GAMES[kind]
    game = find_game(kind)
    state = game.new_game(players, {}, random.Random(1))
    mix = data.draw(st.lists(st.tuples(st.sampled_from(lines), st.integers(1, 1000)), min_size=1, max_size=3))
    text = "\n".join(line for line, times in mix for _ in range(times))
    parsed = game.parse_orders(state, players[0], text)
    assert all(len(problem.reason) <= MAX_REASON for problem in parsed.problems)


def test_a_racecraft_mail_of_many_orders_names_a_few_lines_and_counts_the_rest() -> None:
    """racecraft.md, one order per mail: "one order per turn: this mail has 2000 (lines 1, 2, 3, 4
    and 1996 more)"; five or fewer are all named."""
    game = find_game("racecraft")
    state = game.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))
    many = game.parse_orders(state, "a", "USE 1\n" * 2000).problems
    assert {p.reason for p in many} == {
        "one order per turn: this mail has 2000 (lines 1, 2, 3, 4 and 1996 more); send just one"
    }
    five = game.parse_orders(state, "a", "USE 1\n" * 5).problems
    assert five[0].reason == "one order per turn: this mail has 5 (lines 1, 2, 3, 4 and 5); send just one"
