"""`bot.letters.words.say`: a words template renders with exactly the facts its callers give;
one given a value it does not know fails (StrictUndefined), never prints blank."""

from __future__ import annotations

import pytest

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
