"""`bot.letters.words.say`: a words template renders with exactly the facts its callers give;
one given a value it does not know fails (StrictUndefined), never prints blank."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.letters import words
from bot.letters.words import WordsError, say


def test_orders_and_what_stands_say_there_is_nothing_to_send_without_a_turns_facts() -> None:
    """ORDERS and a note's "what stands" for a seat with no orders to send are called without a
    turn, a deadline or a pause (there is none): the words need none of them."""
    assert (
        say("commands_orders_on_file", expected=False, over=True) == "You have no orders to send now: the game is over."
    )
    assert say("commands_orders_on_file", expected=False, over=False) == "You have no orders to send now."
    assert say("intake_stands", expected=False, game="rc1") == "You have no orders to send for rc1 now."


def test_a_template_given_too_little_fails_and_a_missing_one_is_named() -> None:
    with pytest.raises(WordsError, match="game_over"):
        say("game_over")
    with pytest.raises(WordsError, match="no words template"):
        say("no_such_words")


def test_every_game_has_its_own_words_for_how_a_seat_takes_part() -> None:
    """Racecraft's runners run (racecraft.md), the cars of the other games are driven: each game
    registered (rules.GAMES) has templates/<game>/vocabulary.toml with the same words, and a
    template asks for them by the game's kind, never with an ``if`` on it."""
    from bot.mail_out.vocabulary import game_words
    from bot.resources import templates_path
    from rules import game_names

    words = {kind: game_words(templates_path(), kind) for kind in game_names()}
    assert words["racecraft"].take_part == "run" and words["racecraft"].driver == "runner"
    assert words["speed_circuit"].takes_part == "drives" and words["speedphreakz"].taken_part == "driven"
    assert say("bench_offered_text", seat="seb", kind="racecraft") == (
        "seb is offered to the substitutes bench; a robot runs it until someone of the bench takes it over."
    )
    for path in templates_path().rglob("*.*"):
        if path.suffix in (".txt", ".html"):
            assert 'kind == "racecraft"' not in path.read_text(encoding="utf-8"), path


_LINE = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)


@settings(max_examples=60, deadline=None)
@given(orders=st.lists(_LINE, max_size=4), plot=st.booleans(), game_default=st.lists(_LINE, max_size=3))
def test_words_said_again_are_the_words_rendered_anew(orders: list[str], plot: bool, game_default: list[str]) -> None:
    """`say` renders the words of plain facts once and says them again: for any facts, what it
    says the first and the second time is what the template renders from them now."""
    facts = {"orders": orders, "plot": plot, "game_default": game_default}
    fresh = words._env().get_template("sheet_gets.txt").render(**facts).strip()
    assert say("sheet_gets", **facts) == fresh
    assert say("sheet_gets", **facts) == fresh
    assert say("sheet_gets", orders=tuple(orders), plot=plot, game_default=game_default) == fresh


def test_words_are_named_by_each_facts_value_and_type_and_others_are_rendered_each_time() -> None:
    """1 and True, a list and a tuple of the same strings, "1" and 1 name different words; a
    fact that is not plain (a float, an object) names none: its words are rendered anew."""
    keys = {words._said_key("k", {"n": value}) for value in (1, True, "1", None, 0, False, ["a"], ("a",), [1], [True])}
    assert len(keys) == 10 and None not in keys
    assert words._said_key("k", {"n": 0.0}) is None
    assert words._said_key("k", {"n": [0.5]}) is None
    assert words._said_key("k", {"n": object()}) is None
    assert words._said_key("k", {"a": 1, "b": 2}) != words._said_key("k", {"b": 1, "a": 2})
