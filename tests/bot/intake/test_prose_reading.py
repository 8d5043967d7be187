"""Prose read as a human GM reads it, never guessed silently.
mail-interface.md: "Prose is read like a GM ... a line holding exactly one order-shaped
phrase ... is applied with the reading echoed, or offered back as a one-tap confirmation".
"I'd like the green car please. Start on 3,5 facing north. Round 1 F3 ..." read the rounds but
not the colour and the start, and did not say what it did not read; "use 2 or 3, whatever you
think" offered only USE 2; "speed 100 if legal, otherwise 80" refused without offering 80."""

from __future__ import annotations

import random
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.commands.grammar import ForTheGm
from bot.games.turns import PlayerSpec, create_game
from bot.intake import prose
from bot.models import OrderSubmission
from bot.testing import TestApp
from rules import find_game
from rules.api import AnyGame, GameState, Parsed
from rules.racecraft.game import Racecraft
from rules.racecraft.model import Order, Race
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, body_of, last, one_lap_game, one_lap_race, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc

SPEEDPHREAKZ = find_game("speedphreakz")
SP_STATE = SPEEDPHREAKZ.new_game(["ann", "bob", "cat"], {}, random.Random(1))
RACECRAFT = find_game("racecraft")
RC_STATE = RACECRAFT.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))


def _read(game: AnyGame, state: GameState, seat: str, text: str) -> prose.ProseResult:
    parsed = game.parse_orders(state, seat, text)
    return prose.read(game, state, seat, text, parsed.problems, prose.order_words(game.order_help(state, seat)))


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_colour_and_the_start_are_read_with_the_rounds() -> None:
    line = "I'd like the green car please. Start on 3,5 facing north. Round 1 F3 TL F1"
    (reading,) = _read(SPEEDPHREAKZ, SP_STATE, "ann", line).readings
    assert reading.applied == ("COLOUR green", "START 3,5 FACING N", "ROUND 1: F3 TL F1")


def test_a_colour_alone_and_a_start_written_as_starting_are_read() -> None:
    """Played by mail (playtest3): "Blue please, starting at 2,5 facing north." read only the
    rounds; the colour and the start were "not read as an order", and the start defaulted."""
    line = "Blue please, starting at 2,5 facing north. Round 1: F2. Round 2: F1 F1"
    (reading,) = _read(SPEEDPHREAKZ, SP_STATE, "ann", line).readings
    assert reading.applied == ("COLOUR blue", "START 2,5 FACING N", "ROUND 1: F2", "ROUND 2: F1 F1")
    assert reading.unread == ()
    # A word that is no colour, and "starting" where no order is meant, are no orders.
    for note in ("Thanks please", "I'm starting to enjoy this", "Lovely, thanks"):
        assert not [r for r in _read(SPEEDPHREAKZ, SP_STATE, "ann", note).readings if r.applied or r.offered]
    assert not [r for r in _read(RACECRAFT, RC_STATE, "a", "Blue please").readings if r.applied or r.offered]


def test_what_was_not_read_is_kept_to_be_said() -> None:
    (reading,) = _read(SPEEDPHREAKZ, SP_STATE, "ann", "Round 1 F1, and I hope the weather holds").readings
    assert reading.applied == ("ROUND 1: F1",) and reading.unread == ("and I hope the weather holds",)


def test_a_hedge_between_two_values_offers_both() -> None:
    """ "use 2 or 3, whatever you think": every reading offered, none taken."""
    (reading,) = _read(RACECRAFT, RC_STATE, "a", "use 2 or 3, whatever you think").readings
    assert (reading.applied, reading.offered) == ((), ("USE 2", "USE 3"))


def test_a_fallback_on_a_condition_the_game_does_not_settle_is_offered() -> None:
    (reading,) = _read(RACECRAFT, RC_STATE, "a", "use 4 if Bob attacks, otherwise 2").readings
    assert (reading.applied, reading.offered) == ((), ("USE 4", "USE 2"))


def test_the_reading_of_a_mail_is_bounded_before_it_starts() -> None:
    """At most MAX_PROSE_LINES lines are read as prose; the rest stay lines not understood."""
    text = "\n".join(["please put me down for use 3"] * (prose.MAX_PROSE_LINES + 5))
    result = _read(RACECRAFT, RC_STATE, "a", text)
    assert len(result.readings) == prose.MAX_PROSE_LINES
    assert result.text.splitlines()[-1] == "please put me down for use 3"


def test_the_parser_is_tried_at_most_max_parses_times_for_one_mail() -> None:
    calls = 0

    class Counting(Racecraft):  # held as the shell holds a game (rules.find_game): AnyGame
        def parse_orders(self, state: Race, player: str, text: str) -> Parsed[Order]:
            nonlocal calls
            calls += 1
            return super().parse_orders(state, player, text)

    text = "\n".join(["use use use use use use use use use use use 3 4"] * prose.MAX_PROSE_LINES)
    parsed = RACECRAFT.parse_orders(RC_STATE, "a", text)
    prose.read(cast(AnyGame, Counting()), RC_STATE, "a", text, parsed.problems, {"USE"})
    assert 0 < calls <= prose.MAX_PARSES


# -- the mails ---------------------------------------------------------------------------------


def _filed(app: TestApp) -> list[str]:
    with app.db.read() as session:
        return list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail")))


def test_the_colour_and_the_start_are_taken_and_the_unread_words_named(gapp: TestApp) -> None:
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speedphreakz",
            name="sp1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb", "anna")],
            gm_address=GM,
            deadline="24h",
            seed=3,
        )
    gapp.service.send()
    player_says(
        gapp,
        "kelly",
        "I'd like the green car please. Start on 3,5 facing north. Round 1 F3 TL F1, and I hope the "
        "weather holds\nRound 2 F1",
        game="sp1",
    )
    assert _filed(gapp) == ["COLOUR green\nSTART 3,5 FACING N\nROUND 1: F3 TL F1\nROUND 2: F1"]
    text = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert 'not read as an order: "and I hope the weather holds"' in text


def test_use_2_or_3_offers_both_as_one_tap_links(rc: TestApp) -> None:
    player_says(rc, "seb", "use 2 or 3, whatever you think")
    assert _filed(rc) == []
    text = body_of(last(rc, ADDRESS["seb"]))
    assert "subject=USE%202" in text and "subject=USE%203" in text


def test_the_stated_fallback_is_taken_with_the_reading_echoed(gapp: TestApp) -> None:
    """Race turn 1, from a standstill: SPEED 100 is not allowed; the player said 40 otherwise."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "seb", "speed 100 if legal, otherwise 40", game="sc1")
    assert _filed(gapp) == ["SPEED 40"]
    text = _flat(body_of(last(gapp, ADDRESS["seb"])))
    assert "read as SPEED 40, the fallback you gave: SPEED 100 is not allowed now" in text


def test_a_fallback_not_allowed_either_is_said_with_its_reason(gapp: TestApp) -> None:
    """docs/DESIGN.md 9: "the first choice is applied when the game allows it now, else the
    fallback when it does". From a standstill neither 100 nor 80 is allowed (80 needs PUSH
    YES): the answer listed 'not read as an order: "otherwise 80"', as if the fallback had not
    been read. It says the fallback was read and why it is not allowed either."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "seb", "speed 100 if legal, otherwise 80", game="sc1")
    assert _filed(gapp) == []
    text = _flat(body_of(last(gapp, ADDRESS["seb"])))
    assert "read as SPEED 100; the fallback you gave, SPEED 80, is not allowed now either (" in text, text
    assert 'not read as an order: "otherwise 80"' not in text, text


def test_the_first_choice_is_taken_when_it_is_allowed(gapp: TestApp) -> None:
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "speed 40 if possible, otherwise 20", game="sc1")
    assert _filed(gapp) == ["SPEED 40"]
    assert "read as SPEED 40, your first choice (allowed now)" in _flat(body_of(last(gapp, ADDRESS["kelly"])))


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=2000))
def test_any_mail_is_read_within_its_bounds(text: str) -> None:
    """Text from a mail is never trusted to be one line, short or printable: whatever it is, the
    reading ends, tries the parser at most MAX_PARSES times, reads at most MAX_PROSE_LINES lines,
    and never applies a phrase it read as negated."""
    calls = 0

    class Counting(Racecraft):  # held as the shell holds a game (rules.find_game): AnyGame
        def parse_orders(self, state: Race, player: str, text: str) -> Parsed[Order]:
            nonlocal calls
            calls += 1
            return super().parse_orders(state, player, text)

    parsed = RACECRAFT.parse_orders(RC_STATE, "a", text)
    result = prose.read(cast(AnyGame, Counting()), RC_STATE, "a", text, parsed.problems, {"USE"})
    assert calls <= prose.MAX_PARSES
    assert len(result.readings) <= prose.MAX_PROSE_LINES
    assert all(not (r.applied and r.negated) for r in result.readings)


def test_an_order_word_of_another_turn_in_prose_is_the_word_named(gapp: TestApp) -> None:
    """speed-circuit.md: tyres are chosen on the design turn (TYRES) and changed with PIT. In a
    race turn "Oops, forgot: TYRES 1" was refused with "'OOPS' is not an order", naming the
    word of the prose; the answer names the order word and the game's reason for it."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "Oops, forgot: TYRES 1", game="sc1")
    text = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert "'OOPS'" not in text, text
    assert "TYRES" in text.split('not understood: "Oops, forgot: TYRES 1"', 1)[1], text


# Played by mail (playtest3): an order word with more order-like words after it than the game
# takes ("Oh wait, round 2 should be F2", "ROUND 3: F1 L F1", "bid 2 wear please") offered the
# part before them as a one-tap link -- "ROUND 2:" (hold position) for "should be F2", "ROUND 3:
# F1" for a program of three actions, "BID WEAR 0" for a bid of 2 -- and lost the game's reason.
CUT_SHORT = [
    (SPEEDPHREAKZ, SP_STATE, "ann", "Oh wait, round 2 should be F2", ""),
    (SPEEDPHREAKZ, SP_STATE, "ann", "ROUND 3: F1 L F1", "unknown action code 'L'"),
    (RACECRAFT, RC_STATE, "a", "USE 3 4", "USE takes one number"),
]


def test_a_phrase_with_order_words_left_beside_it_is_neither_applied_nor_offered() -> None:
    """mail-interface.md: "a line holding exactly one order-shaped phrase ... is applied with the
    reading echoed, or offered back as a one-tap confirmation": a phrase the player wrote more
    order words beside is not that line, so the game's own reason for the line stands."""
    for game, state, seat, line, reason in CUT_SHORT:
        readings = _read(game, state, seat, line).readings
        assert not [r for r in readings if r.applied or r.offered], (line, readings)
        if reason:
            assert any(reason in p.reason for p in game.parse_orders(state, seat, line).problems)


@settings(max_examples=60, deadline=None)
@given(
    game_line=st.one_of(
        st.tuples(st.integers(0, 10), st.integers(0, 10)).map(lambda n: ("rc", f"use {n[0]} {n[1]} please")),
        st.tuples(st.integers(1, 3), st.sampled_from(["L", "R", "F", "X9", "F4"])).map(
            lambda n: ("sp", f"ROUND {n[0]}: F1 {n[1]} F1")
        ),
        st.integers(1, 3).map(lambda n: ("sp", f"round {n} should be F2")),
    )
)
def test_no_reading_offered_or_applied_drops_an_order_word_of_its_clause(game_line: tuple[str, str]) -> None:
    """Whatever the numbers and actions: a reading the bot applies or offers is never a part of
    the clause with an order word or a number of it left out."""
    kind, line = game_line
    game, state, seat = (RACECRAFT, RC_STATE, "a") if kind == "rc" else (SPEEDPHREAKZ, SP_STATE, "ann")
    assert not [r for r in _read(game, state, seat, line).readings if r.applied or r.offered]


def test_a_correction_in_prose_is_not_offered_as_hold_position_by_mail(gapp: TestApp) -> None:
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speedphreakz",
            name="sp1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb", "anna")],
            gm_address=GM,
            deadline="24h",
            seed=3,
        )
    gapp.service.send()
    player_says(gapp, "seb", "COLOUR red\nSTART 3,5 FACING N\nROUND 1: F1\nROUND 2: F1 R F1", game="sp1")
    text = body_of(last(gapp, ADDRESS["seb"]))
    assert "mailto:" not in text and "unknown action code 'R'" in _flat(text)
    player_says(gapp, "seb", "Oh wait, round 2 should be F2", game="sp1")
    text = body_of(last(gapp, ADDRESS["seb"]))
    assert "subject=ROUND%202%3A" not in text and "mailto:" not in text
    assert _filed(gapp) == ["COLOUR red\nSTART 3,5 FACING N\nROUND 1: F1"]


SPEED_CIRCUIT = find_game("speed_circuit")
SC_STATE = SPEED_CIRCUIT.new_game(["ann", "bob", "cat"], {}, random.Random(1))


def test_the_orders_after_a_question_are_read_and_the_question_goes_to_the_gm() -> None:
    """Played by mail (playtest4): "What does SKILL do exactly? I'll take DESIGN ACC 2 DEC 1"
    was taken whole for a question ("There were no orders in your mail") and the design was
    lost; "Hi GM, is it OK if I'm a bit late next week? Anyway: USE 2" offered USE 2 back and
    the question reached nobody. The question goes to the GM; the words after it are read as
    any line is."""
    (design,) = _read(
        SPEED_CIRCUIT, SC_STATE, "ann", "What does SKILL do exactly? I'll take DESIGN ACC 2 DEC 1"
    ).readings
    assert design.applied == ("DESIGN ACC 2 DEC 1",) and design.for_gm is ForTheGm.QUESTION
    late = "Hi GM, is it OK if I'm a bit late next week? Anyway: USE 2"
    (use,) = _read(RACECRAFT, RC_STATE, "a", late).readings
    assert use.applied == ("USE 2",) and use.for_gm is ForTheGm.QUESTION and use.offered == ()
    (start,) = _read(SPEEDPHREAKZ, SP_STATE, "ann", "How do I turn? I'd like to start at 2,5 facing north").readings
    assert start.applied == ("START 2,5 FACING N",) and start.for_gm is ForTheGm.QUESTION
    # A question alone, or with a courtesy after it, is words for the GM; an order asked is offered.
    for question in ("What does round 2 mean?", "What happens if I run out of EP? Thanks!"):
        (note,) = _read(RACECRAFT, RC_STATE, "a", question).readings
        assert note.note and note.for_gm is ForTheGm.QUESTION and not note.applied
    (asked,) = _read(RACECRAFT, RC_STATE, "a", "should I use 6?").readings
    assert asked.offered == ("USE 6",) and asked.for_gm is None


def test_a_question_beside_orders_reaches_the_gm_whether_the_orders_are_taken_or_refused(rc: TestApp) -> None:
    player_says(rc, "seb", "Hi GM, is it OK if I'm a bit late next week? Anyway: USE 2")
    assert _filed(rc) == ["USE 2"]
    to_seb = _flat(body_of(last(rc, ADDRESS["seb"])))
    assert "read as USE 2" in to_seb and "a question, passed on to the GM" in to_seb
    assert "is it OK if I'm a bit late next week?" in _flat(body_of(last(rc, GM)))
    player_says(rc, "kelly", "What happens if I run out of EP? I'll use 12")
    assert _filed(rc) == ["USE 2"]
    to_kelly = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert "not accepted" in to_kelly and "a question, passed on to the GM" in to_kelly
    assert "What happens if I run out of EP?" in _flat(body_of(last(rc, GM)))


def test_parts_of_one_set_on_one_line_are_taken_together(gapp: TestApp) -> None:
    """Played by mail (playtest5 PR1): "SPEED 60 LINE", "SPEED 60 PATH A A A", "I'd like SPEED 40
    and LANE B" were "not taken, as it does not settle on one order", each part offered as a
    tap of its own: they are the parts of one plot (speed-circuit.md §8: SPEED, PATH, PUSH ...
    are lines of one set), read together with the reading echoed. Two of one kind, a hedge or
    a question still offer each."""
    one_lap_race(gapp, ("kelly", "seb"))
    for line, filed in (
        ("SPEED 60 LINE", ["SPEED 60", "LINE"]),
        ("SPEED 60 PATH A A A", ["SPEED 60", "PATH A A A"]),
        ("I'd like SPEED 40 and LANE B", ["SPEED 40", "LANE B"]),
        ("speed 60 line push no", ["SPEED 60", "LINE", "PUSH NO"]),
    ):
        player_says(gapp, "kelly", line, game="sc1")
        told = _flat(body_of(last(gapp, ADDRESS["kelly"])))
        assert "read as " + " / ".join(filed) in told and "does not settle" not in told, told
        assert _filed(gapp)[-1].splitlines() == filed
    for hedged in ("SPEED 40 or SPEED 60", "SPEED 40 or maybe 60", "speed 40, or 60"):
        player_says(gapp, "kelly", hedged, game="sc1")
        told = body_of(last(gapp, ADDRESS["kelly"]))
        assert "does not settle on one order" in _flat(told), told
        assert "subject=SPEED%2040" in told and "subject=SPEED%2060" in told, told
    # Racecraft takes one order a turn: two orders on a line are still alternatives offered.
    orders = {p: RACECRAFT.parse_orders(RC_STATE, p, "USE 3").orders for p in "abcde"}
    tactical = RACECRAFT.resolve(RC_STATE, orders, random.Random(2)).state  # CRUISE allowed
    (two,) = _read(RACECRAFT, tactical, "a", "USE 2 CRUISE").readings
    assert two.applied == () and set(two.offered) == {"USE 2", "CRUISE"}


def test_a_correction_further_down_the_mail_takes_back_the_order_it_corrects(gapp: TestApp) -> None:
    """Played by mail (playtest5 SC2): "DESIGN ACC 1 DEC 1 / TYRES OPTION / Wait, actually make that
    DESIGN TOP 2" was refused: "DESIGN given twice; the first one counts". A human reads "actually
    make that" as the correction: the last word counts, and the answer says what it took back."""
    one_lap_game(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "DESIGN ACC 1 DEC 1\nTYRES OPTION\n\nWait, actually make that DESIGN TOP 2", game="sc1")
    told = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert "given twice" not in told and "not allowed now" not in told, told
    assert "your correction: DESIGN ACC 1 DEC 1 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 0 before it is not taken" in told
    assert _filed(gapp)[-1].splitlines() == [
        "DESIGN ACC 0 DEC 0 TOP 2 START 0 PRIME 0 OPTION 0 SKILL 0",
        "TYRES OPTION",
    ]
    # Racecraft: the USE above is taken back; SpeedPhreakz: another round's program is no
    # correction of round 1's, both stand.
    text = "USE 2\nActually, use 3"
    read = _read(RACECRAFT, RC_STATE, "a", text)
    assert read.text.split() == ["USE", "3"] and read.readings[0].corrected == ("USE 2",)
    text = "ROUND 1: F1\nactually make that ROUND 2: F2"
    read = _read(SPEEDPHREAKZ, SP_STATE, "ann", text)
    assert "ROUND 1: F1" in read.text and read.readings[0].corrected == (), read
    read = _read(SPEEDPHREAKZ, SP_STATE, "ann", "ROUND 1: F1\nactually make that ROUND 1: F2")
    assert read.text.split("\n") == ["", "ROUND 1: F2"] and read.readings[0].corrected == ("ROUND 1: F1",)


def test_a_colour_in_prose_is_read_and_a_taken_one_is_refused_with_whose_it_is(gapp: TestApp) -> None:
    """Played by mail (playtest5 SP1): after kelly's COLOUR blue, seb's "I'll take blue and start
    at 2,5 facing N. Round 1 F1, round 2 F1" was read as the start and rounds alone: nothing
    said "blue" was not read, or that it is kelly's, and the results gave seb red. A colour
    named in prose is read ("I'll take blue", "I'd like red", "in green"); one taken is refused
    with whose it is, and the line's other orders stand."""
    for line, read in (
        ("I'd like red", ("COLOUR red",)),
        ("Blue please", ("COLOUR blue",)),
        ("Start at 2,5 facing N in green", ("START 2,5 FACING N", "COLOUR green")),
        ("I'll have the pink one. ROUND 1: F1", ("COLOUR pink", "ROUND 1: F1")),
        # Played by mail (playtest6 M2): read as "COLOUR IS" ("unknown colour 'is'").
        ("My favourite colour is green but any will do", ("COLOUR green",)),
        ("my colour will be red. ROUND 1: F1", ("COLOUR red", "ROUND 1: F1")),
    ):
        (reading,) = _read(SPEEDPHREAKZ, SP_STATE, "ann", line).readings
        assert reading.applied == read, (line, reading)
    for note in ("I'll take it slowly", "Good luck with the race everyone!", "Thanks please"):
        assert all(r.note for r in _read(SPEEDPHREAKZ, SP_STATE, "ann", note).readings), note
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speedphreakz",
            name="sp1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb", "anna")],
            gm_address=GM,
            deadline="24h",
            seed=3,
        )
    gapp.service.send()
    player_says(gapp, "kelly", "COLOUR blue", game="sp1")
    player_says(gapp, "seb", "I'll take blue and start at 2,5 facing N. Round 1 F1, round 2 F1", game="sp1")
    told = _flat(body_of(last(gapp, ADDRESS["seb"])))
    assert 'line 1: "COLOUR blue" blue is taken by kelly; free: red' in told, told
    assert "without line 1 (COLOUR): the orders below count without it" in told, told
    assert _filed(gapp)[-1].splitlines() == ["START 2,5 FACING N", "ROUND 1: F1", "ROUND 2: F1"]


@settings(max_examples=40, deadline=None)
@given(
    first=st.integers(0, 10),
    then=st.integers(0, 10),
    marker=st.sampled_from(("Actually,", "Wait, actually make that", "Sorry, I meant", "Scratch that:")),
)
def test_a_correction_leaves_only_the_order_it_gives(first: int, then: int, marker: str) -> None:
    """Whatever the two figures: the order a correction gives is the one filed, and the one above
    it that the game refuses beside it is said to be taken back."""
    read = _read(RACECRAFT, RC_STATE, "a", f"USE {first}\n{marker} use {then}")
    assert (
        RACECRAFT.parse_orders(RC_STATE, "a", read.text).orders
        == RACECRAFT.parse_orders(RC_STATE, "a", f"USE {then}").orders
    )
    (reading,) = read.readings
    assert reading.corrected == (f"USE {first}",), reading


def test_one_set_asked_or_hedged_on_one_line_is_offered_as_one_tap(gapp: TestApp) -> None:
    """Played by mail (playtest6): "Would SPEED 60 LINE work?" was "not taken, as it does not
    settle on one order; to send SPEED 60, tap ... or, to send LINE, tap": SPEED and LINE are
    two parts of one plot (speed-circuit.md §8), not two choices, and each tap sent half a set.
    Parts of one set that a question or a hedge leaves unsettled are offered together, as one
    tap sending the whole set (its lines joined by "; " in the subject); nothing is filed."""
    one_lap_race(gapp, ("kelly", "seb"))
    for line in ("Would SPEED 60 LINE work?", "speed 60 line maybe"):
        player_says(gapp, "kelly", line, game="sc1")
        told = _flat(body_of(last(gapp, ADDRESS["kelly"])))
        assert "to send SPEED 60 / LINE, tap:" in told and "or, to send" not in told, told
        assert "?subject=SPEED%2060%3B%20LINE" in told, told
        assert _filed(gapp) == []
    # Two of one kind are still two choices, each its own tap.
    player_says(gapp, "kelly", "SPEED 40 or SPEED 60?", game="sc1")
    told = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert "to send SPEED 40, tap:" in told and "or, to send SPEED 60, tap:" in told, told
