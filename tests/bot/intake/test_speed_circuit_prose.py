"""Speed Circuit's race orders in prose, read as a human GM reads them (mail-interface.md: "a
line holding exactly one order-shaped phrase ... is applied with the reading echoed, or offered
back as a one-tap confirmation"; speed-circuit.md §8: "every line is optional but SPEED"). Played
by mail: "I'll put 40 in and stay on A, cheers" was refused ("I'LL" is not an order; did you
mean SKILL?): a human reads SPEED 40 and LANE A (PATH's "or LANE A (end lane)"), as Racecraft's
"I'll put 4 in" is read as USE 4."""

from __future__ import annotations

from sqlalchemy import select

from bot.intake import prose
from bot.models import OrderSubmission
from bot.testing import TestApp, body_of, words_of
from rules import find_game
from rules.api import GameState
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, last, one_lap_race, player_says
from tests.rules.speed_circuit.test_options import _race_state

gapp = gm_helpers.gapp

SPEED_CIRCUIT = find_game("speed_circuit")
STATE = GameState(_race_state(1, 3, 2, "harbour_loop", False))  # as the shell holds it
SEAT = sorted(SPEED_CIRCUIT.expected_players(STATE))[0]


def _read(line: str) -> prose.Reading:
    parsed = SPEED_CIRCUIT.parse_orders(STATE, SEAT, line)
    words = prose.order_words(SPEED_CIRCUIT.order_help(STATE, SEAT))
    (reading,) = prose.read(SPEED_CIRCUIT, STATE, SEAT, line, parsed.problems, words).readings
    return reading


def test_the_speed_and_the_lane_in_prose_are_read_and_applied() -> None:
    reading = _read("I'll put 40 in and stay on A, cheers")
    assert (reading.applied, reading.offered, reading.unread) == (("SPEED 40", "LANE A"), (), ())
    assert _read("I'll put 40 in").applied == ("SPEED 40",)
    assert _read("move over to lane b please").applied == ("LANE B",)


def test_two_speeds_or_a_hedge_offer_each_reading_as_a_tap_and_apply_none() -> None:
    reading = _read("I'll put 40 or 60 in and stay on A")
    assert (reading.applied, reading.offered) == ((), ("SPEED 40\nLANE A", "SPEED 60\nLANE A"))
    reading = _read("speed 40 or 60, whatever you think")
    assert (reading.applied, reading.offered) == ((), ("SPEED 40", "SPEED 60"))


def test_the_stated_fallback_is_taken_with_the_reading_said() -> None:
    """ "speed 100 if legal, otherwise 80": the game settles the condition; the reading says
    which was taken (here SPEED 100 is legal, the fallback is kept beside it)."""
    reading = _read("speed 100 if legal, otherwise 80")
    assert (reading.applied, reading.fallback) == (("SPEED 100",), "SPEED 80")
    reading = _read("speed 140 if legal, otherwise 80")
    assert (reading.applied, reading.first_choice) == (("SPEED 80",), "SPEED 140")


def test_a_number_that_is_no_speed_is_no_order_and_a_speed_refused_keeps_the_games_reason() -> None:
    assert not [r for r in _read_all("make it 6") if r.applied or r.offered]  # no step of 20
    parsed = SPEED_CIRCUIT.parse_orders(STATE, SEAT, "I'll put 200 in")
    words = prose.order_words(SPEED_CIRCUIT.order_help(STATE, SEAT))
    result = prose.read(SPEED_CIRCUIT, STATE, SEAT, "I'll put 200 in", parsed.problems, words)
    assert not result.readings and "SPEED 200 is impossible" in result.reasons[1]


def _read_all(line: str) -> list[prose.Reading]:
    parsed = SPEED_CIRCUIT.parse_orders(STATE, SEAT, line)
    words = prose.order_words(SPEED_CIRCUIT.order_help(STATE, SEAT))
    return prose.read(SPEED_CIRCUIT, STATE, SEAT, line, parsed.problems, words).readings


def test_the_confirmation_echoes_the_speed_and_the_lane_read(gapp: TestApp) -> None:
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "I'll put 40 in and stay on A, cheers", game="sc1")
    with gapp.db.read() as session:
        filed = list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail")))
    answer = last(gapp, ADDRESS["kelly"])
    assert filed == ["SPEED 40\nLANE A"], body_of(answer)
    assert not str(answer["Subject"]).startswith("[ERROR]")
    text = words_of(answer)
    assert "read as SPEED 40 / LANE A" in text, text
