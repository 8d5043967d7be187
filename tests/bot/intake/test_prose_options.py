"""Racecraft's options by letter and a player's own correction, read as a human GM reads them.

racecraft.md (the order syntax, as each sheet gives it): "CRUISE (or B)", "OVERTAKE (or C)".
mail-interface.md: "Prose is read like a GM, never guessed silently: a line holding exactly one
order-shaped phrase ... is applied with the reading echoed". "B for me this turn" and "Option B
please" were passed over as notes; "Use 2. No wait, use 1." was refused as two orders, where
the last correction is the one meant (and echoed); a hedge offered the same order twice."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from bot.intake import prose
from bot.models import OrderSubmission, Seat
from bot.testing import TestApp
from rules import find_game
from rules.api import GameState
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, body_of, gm_says, last, one_lap_race, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures

RACECRAFT = find_game("racecraft")


def _tactical() -> GameState:
    """Racecraft after the start: turn 2, where CRUISE (B) and OVERTAKE (C) are allowed."""
    state = RACECRAFT.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))
    orders = {p: RACECRAFT.parse_orders(state, p, "USE 3").orders for p in "abcde"}
    return RACECRAFT.resolve(state, orders, random.Random(2)).state


def _read(line: str) -> prose.Reading:
    state = _tactical()
    parsed = RACECRAFT.parse_orders(state, "a", line)
    (reading,) = prose.read(
        RACECRAFT, state, "a", line, parsed.problems, prose.order_words(RACECRAFT.order_help(state, "a"))
    ).readings
    return reading


# (line, applied, offered, negated, corrected)
CASES = [
    ("B for me this turn", ("CRUISE",), (), (), ()),
    ("Option B please", ("CRUISE",), (), (), ()),
    ("option b please", ("CRUISE",), (), (), ()),
    ("Hi, C this time", ("OVERTAKE",), (), (), ()),
    ("not B", (), (), ("CRUISE",), ()),
    ("B or C?", (), ("CRUISE", "OVERTAKE"), (), ()),
    ("Use 2. No wait, use 1.", ("USE 1",), (), (), ("USE 2",)),
    ("use 2, no wait use 1", ("USE 1",), (), (), ("USE 2",)),
    ("use 2, actually make that use 4", ("USE 4",), (), (), ("USE 2",)),
]


@pytest.mark.parametrize(("line", "applied", "offered", "negated", "corrected"), CASES)
def test_option_letters_and_corrections_are_read(
    line: str, applied: tuple[str, ...], offered: tuple[str, ...], negated: tuple[str, ...], corrected: tuple[str, ...]
) -> None:
    reading = _read(line)
    assert (reading.applied, reading.offered, reading.negated, reading.corrected) == (
        applied,
        offered,
        negated,
        corrected,
    )


@pytest.mark.parametrize("line", ["c u later", "Plan A is best", "see you, b", "Good luck everyone"])
def test_a_letter_in_a_sentence_is_no_order(line: str) -> None:
    """A lower-case letter, or one the game does not take alone (A needs its number): a note."""
    reading = _read(line)
    assert (reading.applied, reading.offered, reading.note) == ((), (), True)


def _filed(app: TestApp, seat: str) -> list[str]:
    with app.db.read() as session:
        return list(
            session.scalars(
                select(OrderSubmission.text)
                .join(Seat, Seat.id == OrderSubmission.seat_id)
                .where(OrderSubmission.source == "mail", Seat.name == seat)
                .order_by(OrderSubmission.id)
            )
        )


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_by_mail_b_for_me_is_cruise_and_the_last_correction_counts(rc: TestApp) -> None:
    gm_says(rc, "PROCESS rc1")  # to Turn 2: tactical, where B and C are orders
    player_says(rc, "seb", "Hi, B for me this turn\n-- \nSeb Smith\nsent from my phone")
    assert _filed(rc, "seb") == ["CRUISE"]
    answer = last(rc, ADDRESS["seb"])
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert 'line 1, "Hi, B for me this turn": read as CRUISE' in _flat(body_of(answer))
    player_says(rc, "anna", "Use 2. No wait, use 1.")
    assert _filed(rc, "anna") == ["USE 1"]
    answer = last(rc, ADDRESS["anna"])
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert "read as USE 1, your correction: USE 2 before it is not taken" in _flat(body_of(answer))


def test_a_hedge_is_answered_with_its_line_quoted_once(rc: TestApp) -> None:
    """ "use 2 or 3, whatever you think" was answered with the line quoted three times, once per
    thing said of it: quoted once, each offer a one-tap link under it, and the words not read."""
    player_says(rc, "seb", "use 2 or 3, whatever you think")
    text = body_of(last(rc, ADDRESS["seb"]))
    assert text.count('"use 2 or 3, whatever you think"') == 1
    assert text.count("mailto:") == 2 and "subject=USE%202" in text and "subject=USE%203" in text
    assert 'not read as an order: "whatever you think"' in _flat(text)


def test_each_one_tap_link_stands_on_its_own_line_under_a_short_label(gapp: TestApp) -> None:
    """The hedge's one-tap links (~200 characters in Speed Circuit) ran inside a sentence ("to
    send SPEED 40 ..., tap mailto:..."). Each is a line of its own, whole, under a label that
    ends "tap:", as the other one-tap blocks are; no other line passes 78 characters."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "seb", "speed 40 or 60, whatever you think", game="sc1")
    lines = body_of(last(gapp, ADDRESS["seb"])).replace("\r\n", "\n").split("\n")
    links = [n for n, line in enumerate(lines) if "mailto:" in line]
    assert len(links) == 2, lines
    for n in links:
        assert lines[n].strip().startswith("mailto:") and " " not in lines[n].strip(), lines[n]
        assert lines[n - 1].rstrip().endswith("tap:"), lines[n - 1]
    assert all(len(line) <= 78 for n, line in enumerate(lines) if n not in links and not line.startswith(" ")), lines
