"""The order words read from a game's order help: `prose.order_words` (what the prose reader
takes as an order word, one-letter ones too) and `prose.capital_words` (the words of two capitals
or more, by which a confirmation names a refused line: "line 2 (PATH)")."""

from __future__ import annotations

import random

from bot.intake import prose
from rules import find_game

RACECRAFT = find_game("racecraft")


def test_capital_words_are_the_order_words_of_two_capitals_or_more() -> None:
    help_text = "USE n -- spend n EP\nPATH A|B then S or X\nSKILL ALL|NONE"
    capitals = prose.capital_words(help_text)
    assert capitals == {"USE", "EP", "PATH", "SKILL", "ALL", "NONE"}
    assert prose.order_words(help_text) == capitals | {"A", "B", "S", "X"}


def test_the_capital_words_of_a_games_help_are_read_once_and_are_its_order_words() -> None:
    state = RACECRAFT.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))
    help_text = RACECRAFT.order_help(state, "a")
    words = prose.capital_words(help_text)
    assert "USE" in words, help_text
    assert all(len(word) >= 2 and word.isupper() for word in words)
    assert words <= prose.order_words(help_text)
    assert prose.capital_words(help_text) is words  # the same set, not found again
