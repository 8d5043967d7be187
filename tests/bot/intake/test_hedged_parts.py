"""A clause that goes on with the order before it (mail-interface.md: prose "is applied with the
reading echoed, or offered back as a one-tap confirmation"). "bid wear 2, maybe skill 1" (a
Speed Circuit grid bid) offered only BID WEAR 2 SKILL 0 on main: every reading is offered as a
one-tap link; "design skill 1, top 1 please" read only SKILL 1 and said "top 1 please" was not
read: the two clauses are the one DESIGN line."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.intake import prose
from bot.models import OrderSubmission
from bot.testing import TestApp, words_of
from rules import find_game
from rules.api import AnyGame, GameState
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, body_of, cycle, last, one_lap_game, player_says

gapp = gm_helpers.gapp

SPEED_CIRCUIT = find_game("speed_circuit")
DESIGN = SPEED_CIRCUIT.new_game(["a", "b"], {"laps": "1"}, random.Random(1))
QUALIFYING = SPEED_CIRCUIT.resolve(
    DESIGN, {p: SPEED_CIRCUIT.default_orders(DESIGN, p) for p in ("a", "b")}, random.Random(1)
).state


def _read(game: AnyGame, state: GameState, text: str) -> prose.Reading:
    parsed = game.parse_orders(state, "a", text)
    (reading,) = prose.read(
        game, state, "a", text, parsed.problems, prose.order_words(game.order_help(state, "a"))
    ).readings
    return reading


def test_a_hedged_part_offers_the_order_without_it_and_with_it() -> None:
    reading = _read(SPEED_CIRCUIT, QUALIFYING, "bid wear 2, maybe skill 1")
    assert (reading.applied, reading.offered) == ((), ("BID WEAR 2 SKILL 0", "BID WEAR 2 SKILL 1"))
    reading = _read(SPEED_CIRCUIT, DESIGN, "design skill 1, maybe top 1")
    assert reading.offered == (
        "DESIGN ACC 0 DEC 0 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 1",
        "DESIGN ACC 0 DEC 0 TOP 1 START 0 PRIME 0 OPTION 0 SKILL 1",
    )


def test_a_part_said_plainly_goes_on_with_the_order_before_it() -> None:
    reading = _read(SPEED_CIRCUIT, DESIGN, "design skill 1, top 1 please")
    assert reading.applied == ("DESIGN ACC 0 DEC 0 TOP 1 START 0 PRIME 0 OPTION 0 SKILL 1",)
    assert reading.unread == ()
    reading = _read(SPEED_CIRCUIT, QUALIFYING, "bid wear 2, and skill 1")
    assert (reading.applied, reading.offered) == (("BID WEAR 2 SKILL 1",), ())


@settings(max_examples=40, deadline=None)
@given(wear=st.integers(0, 4), skill=st.integers(0, 2), hedge=st.sampled_from(("maybe", "perhaps", "possibly")))
def test_every_hedged_reading_is_an_order_the_game_takes_now(wear: int, skill: int, hedge: str) -> None:
    """Whatever the bid: each reading offered is a full bid the game takes as it stands."""
    reading = _read(SPEED_CIRCUIT, QUALIFYING, f"bid wear {wear}, {hedge} skill {skill}")
    assert reading.applied == ()
    for offer in reading.offered:
        parsed = SPEED_CIRCUIT.parse_orders(QUALIFYING, "a", offer)
        assert parsed.ok and parsed.complete, offer
    if skill:
        assert f"BID WEAR {wear} SKILL {skill}" in reading.offered


def test_the_hedged_bid_by_mail_offers_both_as_one_tap_links(gapp: TestApp) -> None:
    from datetime import timedelta

    one_lap_game(gapp, ("kelly", "seb"))
    gapp.clock.advance(timedelta(hours=25))
    cycle(gapp)  # to the qualifying turn
    player_says(gapp, "kelly", "bid wear 2, maybe skill 1", game="sc1")
    with gapp.db.read() as session:
        assert list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail"))) == []
    text = body_of(last(gapp, ADDRESS["kelly"]))
    assert "subject=BID%20WEAR%202%20SKILL%200" in text and "subject=BID%20WEAR%202%20SKILL%201" in text, text


def test_a_hedged_longer_reading_the_game_refuses_says_why_it_is_not_offered() -> None:
    """speed-circuit design: "the design allows 2 points in total". "design skill 2, maybe top 1"
    reads DESIGN SKILL 2 and lists "maybe top 1" as not read; DESIGN SKILL 2 TOP 1 would add up
    to 3, so it is not offered, and the reading says so with the game's reason."""
    reading = _read(SPEED_CIRCUIT, DESIGN, "design skill 2, maybe top 1")
    assert reading.applied == ("DESIGN ACC 0 DEC 0 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 2",)
    assert reading.offered == () and reading.unread == ("maybe top 1",)
    ((refused, why),) = reading.not_offered
    assert refused == "DESIGN SKILL 2 TOP 1" and "add up to +3" in why and "2 points in total" in why
    # A longer reading the game takes is offered, never listed as refused.
    assert _read(SPEED_CIRCUIT, DESIGN, "design skill 1, maybe top 1").not_offered == ()


def _start_sc1(gapp: TestApp) -> None:
    """Speed Circuit `sc1` (kelly, seb; one lap, 24h turns), started at its design turn."""
    one_lap_game(gapp, ("kelly", "seb"))


def test_the_refused_longer_reading_and_its_reason_are_in_the_confirmation(gapp: TestApp) -> None:
    _start_sc1(gapp)
    player_says(gapp, "kelly", "design skill 2, maybe top 1", game="sc1")
    text = words_of(last(gapp, ADDRESS["kelly"]))
    assert (
        'not read as an order: "maybe top 1"; DESIGN SKILL 2 TOP 1 cannot be offered: the columns add up to +3' in text
    ), text
    # Played by mail (playtest5 SC3): the part said of the line goes on under itself, not four
    # columns left of where it starts.
    lines = body_of(last(gapp, ADDRESS["kelly"])).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('        not read as an order: "maybe top 1"'))
    rest = lines[start + 1 : next(i for i in range(start + 1, len(lines)) if not lines[i].strip())]
    assert rest and all(line.startswith("        ") and line[8] != " " for line in rest), lines[start:]


def test_an_alternative_after_or_is_offered_in_place_of_the_order_never_added_to_it() -> None:
    """Played by mail (playtest5 SC3): "I think DESIGN ACC 2 would be good, or maybe TOP 2. Your
    call." was taken as DESIGN ACC 2 at once, and "DESIGN ACC 2 TOP 2 cannot be offered: the
    columns add up to +4" -- she offered TOP 2 instead of ACC 2, not beside it. After "or", a
    part is another value for the order before it: each is offered as a one-tap link, none
    taken, never the two summed."""
    for line, first, instead in (
        ("Hello! I think DESIGN ACC 2 would be good, or maybe TOP 2. Your call.", "ACC 2", "TOP 2"),
        ("DESIGN ACC 1, or maybe TOP 1", "ACC 1", "TOP 1"),
        ("design acc 2, or perhaps design top 2", "ACC 2", "TOP 2"),
        ("design skill 1, or start 1", "SKILL 1", "START 1"),
    ):
        reading = _read(SPEED_CIRCUIT, DESIGN, line)
        each = [SPEED_CIRCUIT.parse_orders(DESIGN, "a", f"DESIGN {rows}").orders for rows in (first, instead)]
        assert reading.applied == () and reading.not_offered == (), (line, reading)
        assert reading.offered == tuple(SPEED_CIRCUIT.format_orders(o) for o in each), (line, reading)
    # An alternative the game refuses now is not offered, and the answer says why; the first
    # is offered, not taken: the player hedged.
    reading = _read(SPEED_CIRCUIT, DESIGN, "design acc 2, or top 3")
    assert reading.applied == () and reading.offered == ("DESIGN ACC 2 DEC 0 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 0",)
    assert reading.unread == ("or top 3",) and [r for r, _ in reading.not_offered] == ["TOP 3"], reading
    # Without "or", a hedged part still goes on with the order (both offered, the longer summed).
    assert (
        _read(SPEED_CIRCUIT, DESIGN, "design skill 1, maybe top 1")
        .offered[1]
        .endswith("TOP 1 START 0 PRIME 0 OPTION 0 SKILL 1")
    )


def test_the_alternative_by_mail_files_nothing_and_offers_both(gapp: TestApp) -> None:
    one_lap_game(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "Hello! I think DESIGN ACC 2 would be good, or maybe TOP 2. Your call.", game="sc1")
    with gapp.db.read() as session:
        assert list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail"))) == []
    text = body_of(last(gapp, ADDRESS["kelly"]))
    assert (
        "subject=DESIGN%20ACC%202%20DEC%200%20TOP%200" in text
        and "subject=DESIGN%20ACC%200%20DEC%200%20TOP%202" in text
    )
    assert "cannot be offered" not in text and "does not settle on one order" in words_of(last(gapp, ADDRESS["kelly"]))


ROWS = ("ACC", "DEC", "TOP", "START", "PRIME", "OPTION", "SKILL")


@settings(max_examples=60, deadline=None)
@given(
    first=st.sampled_from(ROWS),
    other=st.sampled_from(ROWS),
    a=st.integers(-1, 2),
    b=st.integers(-1, 2),
    hedge=st.sampled_from(("", "maybe ", "perhaps ")),
)
def test_an_alternative_after_or_is_never_applied_nor_summed(
    first: str, other: str, a: int, b: int, hedge: str
) -> None:
    """Whatever the rows: "DESIGN <row> a, or <hedge><row> b" applies nothing (unless the two
    are the one order), and each reading offered is one DESIGN the game takes as it stands,
    never one with both rows set."""
    reading = _read(SPEED_CIRCUIT, DESIGN, f"design {first} {a}, or {hedge}{other} {b}")
    one, two = (SPEED_CIRCUIT.parse_orders(DESIGN, "a", f"DESIGN {r} {n}").orders for r, n in ((first, a), (other, b)))
    assert reading.applied == () or one == two, reading
    for offer in reading.offered:
        parsed = SPEED_CIRCUIT.parse_orders(DESIGN, "a", offer)
        assert parsed.ok and len(parsed.orders) == 1, offer
        if first != other and a and b:
            assert not (f"{first} {a}" in offer and f"{other} {b}" in offer), offer
