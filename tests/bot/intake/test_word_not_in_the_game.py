"""A line not understood names the word the game does not have, and what it takes instead
(mail-interface.md: a refusal says why, in the game's words). speed-circuit.md: a car starts on
PRIME or OPTION tyres (TYRES PRIME|OPTION). Played by mail: "and tyres: hard please" was refused
with "'AND' is not an order": the word the game lacks is "hard"."""

from __future__ import annotations

import random

from bot.intake import prose
from bot.testing import TestApp, words_of
from rules import find_game
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, last, player_says
from tests.bot.intake.test_hedged_parts import _start_sc1

gapp = gm_helpers.gapp

SPEED_CIRCUIT = find_game("speed_circuit")
DESIGN = SPEED_CIRCUIT.new_game(["a", "b"], {"laps": "1"}, random.Random(1))


def _reasons(line: str) -> dict[int, str]:
    parsed = SPEED_CIRCUIT.parse_orders(DESIGN, "a", line)
    words = prose.order_words(SPEED_CIRCUIT.order_help(DESIGN, "a"))
    return prose.read(SPEED_CIRCUIT, DESIGN, "a", line, parsed.problems, words).reasons


def test_the_word_the_game_does_not_have_is_named_with_what_it_takes() -> None:
    why = "'HARD' is no tyre of this game: TYRES takes the starting set, PRIME or OPTION"
    assert _reasons("and tyres: hard please") == {1: why}
    assert SPEED_CIRCUIT.parse_orders(DESIGN, "a", "TYRES HARD").problems[0].reason == why


def test_the_refusal_by_mail_names_hard_not_and(gapp: TestApp) -> None:
    _start_sc1(gapp)
    player_says(gapp, "kelly", "and tyres: hard please", game="sc1")
    text = words_of(last(gapp, ADDRESS["kelly"]))
    assert "'AND'" not in text, text
    assert "'HARD' is no tyre of this game: TYRES takes the starting set, PRIME or OPTION" in text, text
