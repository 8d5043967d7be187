"""A question for the GM beside an order: the order is taken and echoed, the question goes to
the GM. mail-interface.md: "Prose is read like a GM ... a line holding exactly one order-shaped
phrase ... is applied with the reading echoed". Played by mail (playtest5): "Can I change my
order later? USE 4" and "Could you tell me when the next turn is? USE 3" were refused as "not
taken, as it does not settle on one order" and the question reached nobody (the player was
defaulted); "Should I use 6? USE 5" was offered back as two taps, though the words after the
question are the order."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.commands.grammar import ForTheGm
from bot.intake import prose
from bot.models import OrderSubmission
from bot.testing import TestApp, words_of
from rules import find_game
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, last, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc

RACECRAFT = find_game("racecraft")
RC_STATE = RACECRAFT.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))

# Each opener a question for the GM starts with, as a player writes it before an order.
QUESTIONS = (
    "Can I change my order later?",
    "Could you tell me when the next turn is?",
    "May I ask how the deadline works?",
    "Will the robot pit this turn?",
    "Would it matter if I'm late next week?",
    "Did everyone get the results?",
    "Am I the only one left?",
    "Was the last turn right?",
    "Should I worry about the weather?",
    "Were the dice fair?",
    "Has the GM seen my note?",
    "Hi GM, can I change my order later?",
)


def _read(text: str) -> prose.ProseResult:
    parsed = RACECRAFT.parse_orders(RC_STATE, "a", text)
    return prose.read(
        RACECRAFT, RC_STATE, "a", text, parsed.problems, prose.order_words(RACECRAFT.order_help(RC_STATE, "a"))
    )


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_order_after_a_question_is_taken_and_the_question_goes_to_the_gm(question: str) -> None:
    (reading,) = _read(f"{question} USE 4").readings
    assert reading.applied == ("USE 4",), reading
    assert reading.offered == () and reading.for_gm is ForTheGm.QUESTION


OPENERS = ("can", "could", "may", "will", "would", "did", "am", "was", "should", "what", "how", "is")


@settings(max_examples=60, deadline=None)
@given(
    opener=st.sampled_from(OPENERS),
    asked=st.lists(st.text("abcdefghijklmnopqrstuvwxyz'", min_size=1, max_size=8), min_size=1, max_size=6),
    greeting=st.sampled_from(("", "Hi GM, ", "Sorry, ")),
    use=st.integers(0, 5),
)
def test_any_question_with_an_order_after_it_takes_that_order(
    opener: str, asked: list[str], greeting: str, use: int
) -> None:
    """Whatever the question says, the order after its question mark is the line's one order."""
    (reading,) = _read(f"{greeting}{opener} {' '.join(asked)}? USE {use}").readings
    assert reading.applied == (f"USE {use}",) and reading.for_gm is ForTheGm.QUESTION


def test_a_number_in_the_question_is_no_order_when_an_order_follows() -> None:
    """ "Should I use 6? USE 5": the words after the question are the order; 6 is asked about."""
    (reading,) = _read("Should I use 6? USE 5").readings
    assert reading.applied == ("USE 5",) and reading.offered == () and reading.for_gm is ForTheGm.QUESTION


def test_an_order_asked_or_hedged_is_still_offered_not_taken() -> None:
    """Where no order follows the question, the order asked is a tap, never applied silently."""
    (asked,) = _read("should I use 6?").readings
    assert asked.offered == ("USE 6",) and asked.applied == () and asked.for_gm is None
    (either,) = _read("Can I use 6? If not, 5").readings
    assert either.offered == ("USE 6", "USE 5") and either.applied == ()


def _filed(app: TestApp) -> list[str]:
    with app.db.read() as session:
        return list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail")))


@pytest.mark.parametrize(
    ("seat", "line", "order"),
    [
        ("seb", "Can I change my order later? USE 4", "USE 4"),
        ("kelly", "Could you tell me when the next turn is? USE 3", "USE 3"),
        ("seb", "Should I use 6? USE 5", "USE 5"),
    ],
)
def test_by_mail_the_order_is_filed_echoed_and_the_question_reaches_the_gm(
    rc: TestApp, seat: str, line: str, order: str
) -> None:
    player_says(rc, seat, line)
    assert _filed(rc) == [order]
    to_player = words_of(last(rc, ADDRESS[seat]))
    assert f"read as {order}" in to_player, to_player
    assert "a question, passed on to the GM" in to_player, to_player
    assert "does not settle on one order" not in to_player, to_player
    asked = line.rpartition("?")[0] + "?"
    assert asked in words_of(last(rc, GM))
