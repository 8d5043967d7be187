"""Orders in prose, read like a GM and never guessed silently
(mail-interface.md: "a line holding exactly one order-shaped phrase ("please put me down for use
3") is applied with the reading echoed, or offered back as a one-tap confirmation; a negated
phrase ("I won't use 3") is never applied"). A corpus of such lines per game, then the mails."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from bot.intake import prose
from bot.models import InboundMessage, OrderSubmission
from bot.testing import TestApp, body_of, words_of
from rules import find_game
from rules.api import AnyGame, GameState
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, last, player_says
from tests.rules.speed_circuit.test_options import _race_state

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _read(game: AnyGame, state: GameState, seat: str, line: str) -> prose.ProseResult:
    parsed = game.parse_orders(state, seat, line)
    return prose.read(game, state, seat, line, parsed.problems, prose.order_words(game.order_help(state, seat)))


RACECRAFT = find_game("racecraft")
RC_STATE = RACECRAFT.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))
# (line, applied, offered, negated, note)
RACECRAFT_CORPUS = [
    ("please put me down for use 3 if that's OK", ("USE 3",), (), (), False),
    ("Sorry, was away. USE 8 for the start please.", ("USE 8",), (), (), False),
    ("I'll use 5, thanks", ("USE 5",), (), (), False),
    ("I won't use 3", (), (), ("USE 3",), False),
    ("Don't use 3, use 4 instead", (), ("USE 4",), ("USE 3",), False),
    ("use 3 or use 4?", (), ("USE 3", "USE 4"), (), False),
    ("maybe use 2", (), ("USE 2",), (), False),
    ("should I use 6?", (), ("USE 6",), (), False),
    # Played by mail (playfix M1): "Actually no - OVERTAKE please" was read as NOT OVERTAKE. A
    # "no" that takes back what was said before ("actually no", "no -", "no:") is a correction,
    # not a negation of the order after it; a "not" inside the sentence still negates.
    ("Actually no - use 4 please", ("USE 4",), (), (), False),
    ("No - use 4", ("USE 4",), (), (), False),
    ("Actually, no - use 4", ("USE 4",), (), (), False),
    ("sorry no: use 4", ("USE 4",), (), (), False),
    ("I will not - repeat not - use 3", (), (), ("USE 3",), False),
    ("No, not use 3", (), (), ("USE 3",), False),
    # Played by mail (playtest3): "use five" was refused ("'FIVE' is not a whole number of EP").
    ("use five", ("USE 5",), (), (), False),
    ("I'll use three please", ("USE 3",), (), (), False),
    ("Thanks, got it!", (), (), (), True),
    ("Good luck everyone, see you next turn", (), (), (), True),
]


@pytest.mark.parametrize(("line", "applied", "offered", "negated", "note"), RACECRAFT_CORPUS)
def test_racecraft_prose_is_read_as_a_gm_reads_it(
    line: str, applied: tuple[str, ...], offered: tuple[str, ...], negated: tuple[str, ...], note: bool
) -> None:
    """Each line of the corpus: what is applied, offered back, never applied, or passed over."""
    (reading,) = _read(RACECRAFT, RC_STATE, "a", line).readings
    assert (reading.applied, reading.offered, reading.negated, reading.note) == (applied, offered, negated, note)


@pytest.mark.parametrize("line", ["not 3", "USR 4", "See you in 2 days", "3"])
def test_what_is_no_order_phrase_is_not_read_into_one(line: str) -> None:
    """A bare number, a typo of an order word, a number in a sentence: no order is guessed (the
    parser's reason, or its did-you-mean, stands)."""
    assert not [r for r in _read(RACECRAFT, RC_STATE, "a", line).readings if r.applied or r.offered]


SPEED_CIRCUIT = find_game("speed_circuit")
SC_STATE = GameState(_race_state(1, 3, 2, "harbour_loop", False))  # as the shell holds it
SC_SEAT = sorted(SPEED_CIRCUIT.expected_players(SC_STATE))[0]


def test_speed_circuit_prose_is_read_clause_by_clause() -> None:
    """ "Speed 120, lane B please. Pay wear.": three orders, each read and echoed."""
    result = _read(SPEED_CIRCUIT, SC_STATE, SC_SEAT, "Speed 120, lane B please. Pay wear.")
    (reading,) = result.readings
    assert reading.applied == ("SPEED 120", "LANE B", "PAY WEAR")
    parsed = SPEED_CIRCUIT.parse_orders(SC_STATE, SC_SEAT, result.text)
    assert parsed.orders and not parsed.problems


def test_speed_circuit_negation_is_never_applied() -> None:
    assert _read(SPEED_CIRCUIT, SC_STATE, SC_SEAT, "I will not pay wear").readings[0].negated == ("PAY WEAR",)


SC_DESIGN = SPEED_CIRCUIT.new_game(["ann", "bob", "cat"], {"track": "harbour_loop"}, random.Random(1))


@pytest.mark.parametrize(
    ("line", "design"),
    [
        ("I'd like a fast car: top 2 please", "DESIGN ACC 0 DEC 0 TOP 2 START 0 PRIME 0 OPTION 0 SKILL 0"),
        ("acc 1 top 1 for me", "DESIGN ACC 1 DEC 0 TOP 1 START 0 PRIME 0 OPTION 0 SKILL 0"),
    ],
)
def test_speed_circuit_design_rows_in_prose_are_the_design_order(line: str, design: str) -> None:
    """On the design turn "top 2 please" names a row of the design table, so it
    is the DESIGN order it writes, applied and echoed in full (the rows left out are 0)."""
    (reading,) = _read(SPEED_CIRCUIT, SC_DESIGN, "ann", line).readings
    assert reading.applied == (design,)


def test_a_word_that_is_no_order_on_the_design_turn_is_told_the_design_orders() -> None:
    """The reason lists what this turn takes (DESIGN and its rows, TYRES), not the race orders."""
    (problem,) = SPEED_CIRCUIT.parse_orders(SC_DESIGN, "ann", "hello there 3").problems
    assert "DESIGN" in problem.reason and "TOP" in problem.reason and "TYRES" in problem.reason
    assert "SPEED" not in problem.reason and "BID" not in problem.reason


SPEEDPHREAKZ = find_game("speedphreakz")
SP_STATE = SPEEDPHREAKZ.new_game(["ann", "bob", "cat"], {}, random.Random(1))


def test_speedphreakz_prose_is_read() -> None:
    """A program with a word after it, a colour asked for politely."""
    assert _read(SPEEDPHREAKZ, SP_STATE, "ann", "ROUND 1: F1 please").readings[0].applied == ("ROUND 1: F1",)
    assert _read(SPEEDPHREAKZ, SP_STATE, "ann", "colour red please").readings[0].applied == ("COLOUR red",)


# -- the mails ---------------------------------------------------------------------------------


def _filed(app: TestApp, seat: str) -> list[str]:
    with app.db.read() as session:
        return list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail")))


def test_an_order_in_a_sentence_is_applied_and_the_reading_echoed(rc: TestApp) -> None:
    """ "please put me down for use 3 if that's OK" ... "A human GM takes them"."""
    player_says(rc, "kelly", "Hi Flagman,\nplease put me down for use 3 if that's OK\nKelly")
    assert _filed(rc, "kelly") == ["USE 3"]
    answer = last(rc, ADDRESS["kelly"])
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert "read as USE 3" in words_of(answer)


def test_a_negation_is_never_applied_and_the_answer_says_what_stands(rc: TestApp) -> None:
    """ "I won't use 3": nothing filed; no [ERROR] (nothing asked was refused); the default named."""
    player_says(rc, "kelly", "I won't use 3")
    assert _filed(rc, "kelly") == []
    answer = last(rc, ADDRESS["kelly"])
    text = words_of(answer)
    assert not str(answer["Subject"]).startswith("[ERROR]") and "read as NOT USE 3, so not taken" in text
    assert "if nothing arrives, you get" in text


def test_a_hedged_order_is_offered_back_as_one_tap_links(rc: TestApp) -> None:
    player_says(rc, "kelly", "use 3 or use 4?")
    assert _filed(rc, "kelly") == []
    text = body_of(last(rc, ADDRESS["kelly"]))
    assert text.count("mailto:") == 2 and "subject=USE%203" in text and "subject=USE%204" in text


def test_thanks_gets_no_error_and_restates_the_orders_on_file(rc: TestApp) -> None:
    """ "Thanks, got it!" after orders is no error: the answer says her USE 3
    still stands."""
    player_says(rc, "anna", "USE 3")
    player_says(rc, "anna", "Thanks, got it!")
    answer = last(rc, ADDRESS["anna"])
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert "USE 3" in body_of(answer) and "it stands" in words_of(answer)
    with rc.db.read() as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert row is not None and (row.status, row.reason) == ("applied", "note")


def test_a_friendly_note_is_not_refused_as_orders(rc: TestApp) -> None:
    """A friendly note is neither an error nor "not accepted"."""
    player_says(rc, "seb", "Good luck everyone, see you next turn")
    answer = last(rc, ADDRESS["seb"])
    assert not str(answer["Subject"]).startswith("[ERROR]") and "Not accepted" not in str(answer["Subject"])


def test_a_plot_signed_with_the_players_bare_name_is_a_signature(rc: TestApp) -> None:
    """A valid plot signed with a bare name (the player's own) is filed, and nothing in
    it is "not understood"."""
    player_says(rc, "roger", "USE 4\n\nRoger")
    answer = last(rc, ADDRESS["roger"])
    assert "not understood" not in str(answer["Subject"]) and not str(answer["Subject"]).startswith("[ERROR]")
    assert _filed(rc, "roger") == ["USE 4"]


def test_a_line_that_adds_keeps_the_rest_only_where_it_applies_an_order() -> None:
    """Played by mail (playfix M2): "Oh and PUSH YES, speed 80 then" adds to the set on file;
    "Also, what does SLIP mean?" is a question for the GM and changes nothing of the set."""
    adding = _read(SPEED_CIRCUIT, SC_STATE, SC_SEAT, "Oh and PUSH YES, speed 80 then")
    assert adding.keeps_rest and adding.readings[0].applied == ("PUSH YES", "SPEED 80")
    asking = _read(SPEED_CIRCUIT, SC_STATE, SC_SEAT, "Also, what does SLIP mean?")
    assert not asking.keeps_rest


def test_a_question_that_begins_also_is_quoted_as_written() -> None:
    """Played by mail (playfix): "Also, when is the next deadline?" was quoted back (and passed to
    the GM) as ", when is the next deadline?": a line is quoted as the player wrote it."""
    (reading,) = _read(RACECRAFT, RC_STATE, "a", "Also, when is the next deadline?").readings
    assert reading.line == "Also, when is the next deadline?" and reading.note


def test_a_name_that_signs_off_after_a_courtesy_is_no_word_unread() -> None:
    """Played by mail (playfix m3): "Hi! I'll go with use 3 this turn. Cheers, Seb" was read as
    USE 3 with 'not read as an order: "Seb"'. The name after "Cheers" signs the mail off; other
    words left over are still listed."""
    (reading,) = _read(RACECRAFT, RC_STATE, "a", "Hi! I'll go with use 3 this turn. Cheers, Seb").readings
    assert reading.applied == ("USE 3",) and reading.unread == (), reading
    (other,) = _read(RACECRAFT, RC_STATE, "a", "use 3, keep left").readings
    assert other.unread == ("keep left",), other
