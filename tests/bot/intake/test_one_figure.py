"""Racecraft's turn is one figure, the EP to spend (racecraft.md: "USE n (or A n, BID n or just
n)"; the seed: "each player secretly bids Energy Points"), and players write it as people do:
"I'll put 4 in", "make it 6", "4 this time", "bid four". A human GM reads each as the number,
and says so; where two readings are there ("4 or 5", "I'll put 4 in, maybe 5") the player
picks one with a tap; a line with no number (and no order word) is never read as an order,
and a number in a sentence about something else ("I'm away for 3 days") is no order either."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.intake import prose
from bot.models import OrderSubmission
from bot.testing import TestApp, body_of, words_of
from rules import find_game
from rules.api import AnyGame, GameState
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, last, player_says
from tests.rules.speed_circuit.test_options import _race_state

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures

RACECRAFT = find_game("racecraft")
RC_STATE = RACECRAFT.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))  # 10 EP each
SPEED_CIRCUIT = find_game("speed_circuit")


def _read(game: AnyGame, state: GameState, seat: str, line: str) -> prose.ProseResult:
    parsed = game.parse_orders(state, seat, line)
    return prose.read(game, state, seat, line, parsed.problems, prose.order_words(game.order_help(state, seat)))


@pytest.mark.parametrize(
    ("line", "read_as"),
    [
        ("I'll put 4 in", "USE 4"),
        ("make it 6", "USE 6"),
        ("4 this time", "USE 4"),
        ("bid four", "USE 4"),
        ("make it six please", "USE 6"),
        ("I'll put 4 in, thanks", "USE 4"),
        ("Let's go with 3 this turn.", "USE 3"),
        ("2EP please", "USE 2"),
    ],
)
def test_the_turns_one_figure_in_prose_is_read_as_the_number(line: str, read_as: str) -> None:
    result = _read(RACECRAFT, RC_STATE, "a", line)
    (reading,) = result.readings
    assert (reading.applied, reading.offered) == ((read_as,), ())
    assert result.text == read_as


@pytest.mark.parametrize(
    ("line", "offered"),
    [
        ("4 or 5", ("USE 4", "USE 5")),
        ("I'll put 4 in, maybe 5", ("USE 4", "USE 5")),
        ("make it 6?", ("USE 6",)),
        ("maybe 3 this time", ("USE 3",)),
    ],
)
def test_two_readings_or_a_hedge_offer_each_number_and_apply_none(line: str, offered: tuple[str, ...]) -> None:
    (reading,) = _read(RACECRAFT, RC_STATE, "a", line).readings
    assert (reading.applied, reading.offered) == ((), offered)


@pytest.mark.parametrize(
    "line", ["I'm away for 3 days", "put 4 in this time and 3 next", "I won't put 4 in", "see you in 2 weeks"]
)
def test_a_number_in_a_sentence_about_something_else_is_no_order(line: str) -> None:
    assert not [r for r in _read(RACECRAFT, RC_STATE, "a", line).readings if r.applied or r.offered]


def test_a_number_the_game_refuses_now_is_not_taken_and_its_reason_is_given() -> None:
    result = _read(RACECRAFT, RC_STATE, "a", "I'll put 40 in")
    assert not [r for r in result.readings if r.applied or r.offered]
    assert result.reasons == {1: "you have only 10 EP, so USE 10 at most"}


def test_a_game_whose_turn_is_not_one_figure_does_not_read_a_number_so() -> None:
    """Speed Circuit takes no number alone as an order: "make it 6" is no SPEED."""
    state = GameState(_race_state(1, 3, 2, "harbour_loop", False))  # as the shell holds it
    seat = sorted(SPEED_CIRCUIT.expected_players(state))[0]
    assert not [r for r in _read(SPEED_CIRCUIT, state, seat, "make it 6").readings if r.applied or r.offered]


_PROSE_WORDS = sorted(prose._FIGURE_WORDS | prose.HEDGES | {"good", "luck", "everyone", "see", "you", "soon", "cheers"})
_NUMBER_WORDS = frozenset(prose._NUMBERS)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(_PROSE_WORDS), min_size=1, max_size=9),
    st.sampled_from(["", ".", "!", "?", ", thanks"]),
    st.booleans(),
)
def test_a_prose_line_with_no_number_is_never_taken_as_an_order(words: list[str], end: str, capital: bool) -> None:
    """Any line of the words a player says what to spend with, hedges and courtesies, but no
    number (in digits or in words) and no order word: nothing applied, nothing offered."""
    assert not _NUMBER_WORDS & set(words)
    line = " ".join(words) + end
    line = line[:1].upper() + line[1:] if capital else line
    result = _read(RACECRAFT, RC_STATE, "a", line)
    assert not [r for r in result.readings if r.applied or r.offered], line
    assert not RACECRAFT.parse_orders(RC_STATE, "a", result.text).orders if result.text.strip() else True


# -- the mails ---------------------------------------------------------------------------------


def _filed(app: TestApp) -> list[str]:
    with app.db.read() as session:
        return list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail")))


def test_the_confirmation_echoes_the_reading_of_the_figure(rc: TestApp) -> None:
    player_says(rc, "kelly", "I'll put 4 in")
    assert _filed(rc) == ["USE 4"]
    answer = last(rc, ADDRESS["kelly"])
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert 'line 1, "I\'ll put 4 in": read as USE 4' in words_of(answer)


def test_two_readings_come_back_as_a_tap_each_and_nothing_is_filed(rc: TestApp) -> None:
    player_says(rc, "kelly", "4 or 5")
    assert _filed(rc) == []
    text = body_of(last(rc, ADDRESS["kelly"]))
    assert text.count("mailto:") == 2 and "subject=USE%204" in text and "subject=USE%205" in text
