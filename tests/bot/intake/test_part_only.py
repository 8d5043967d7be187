"""A mail that supplies only the part a set on file lacks is an addition to it.
speed-circuit.md §8: "every line is optional but SPEED" and "the last valid plot
counts"; the confirmation of an incomplete set names what it lacks, so a mail that brings just
that part ("Oops, forgot: SPEED 40") completes the set rather than withdrawing the rest of it.
Where a mail does replace a set, its confirmation says first what is no longer on file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game, current_state
from bot.models import OrderSubmission
from bot.store import find_game_row, orders_on_file
from bot.testing import TestApp, words_of
from rules import speed_circuit
from rules.speed_circuit.parse import parse_orders
from rules.speed_circuit.plot import Order, SpeedOrder
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, gm_says, last, one_lap_race, player_says
from tests.rules.speed_circuit.test_options import _race_state

gapp = gm_helpers.gapp

GAME = speed_circuit.GAME  # the object `find_game` returns, with its own types: the tests look inside orders
RACE = _race_state(1, 3, 2, "harbour_loop", False)
SEAT = sorted(GAME.expected_players(RACE))[0]


def _orders(text: str) -> tuple[Order, ...]:
    parsed = parse_orders(RACE, SEAT, text)
    assert not parsed.problems, parsed.problems
    return parsed.orders


def test_the_missing_speed_alone_is_added_to_the_plot_on_file() -> None:
    """§8: the plot lacks its SPEED; "SPEED 40" alone brings it, and the PATH and PAY stand."""
    merged = GAME.merge_orders(_orders("LANE B\nPAY ROLL"), _orders("SPEED 40"))
    assert GAME.format_orders(merged) == GAME.format_orders(_orders("SPEED 40\nLANE B\nPAY ROLL"))


def test_a_set_that_names_what_is_on_file_replaces_it() -> None:
    """§8: "the last valid plot counts": a complete plot on file is replaced whole, and so is an
    incomplete one by a mail that names one of its lines again."""
    assert GAME.merge_orders(_orders("SPEED 60\nLANE B"), _orders("SPEED 40")) == _orders("SPEED 40")
    assert GAME.merge_orders(_orders("LANE B\nPAY ROLL"), _orders("SPEED 40\nLANE A")) == _orders("SPEED 40\nLANE A")
    assert GAME.merge_orders(_orders("LANE B"), _orders("PAY ROLL")) == _orders("PAY ROLL")


def _filed(app: TestApp, seat_name: str = "kelly") -> str:
    """The seat's set on file, as the tick reads it (`store.orders_on_file`)."""
    with app.db.read() as session:
        game = find_game_row(session, "sc1")
        assert game is not None
        rules, state, turn = current_state(session, game)
        assert turn is not None
        seat = next(s for s in game.seats if s.name == seat_name)
        subs = list(
            session.scalars(
                select(OrderSubmission)
                .where(OrderSubmission.turn_id == turn.id, OrderSubmission.seat_id == seat.id)
                .order_by(OrderSubmission.id)
            )
        )
        on_file = orders_on_file(rules, state, seat, subs)
        assert on_file is not None
        return rules.format_orders(on_file)


def _flat(app: TestApp, seat: str = "kelly") -> str:
    return words_of(last(app, ADDRESS[seat]))


def _design_turn(app: TestApp) -> None:
    """Speed Circuit `sc1` at its design turn (P1: DESIGN, with TYRES optional)."""
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="speed_circuit",
            name="sc1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb")],
            gm_address=GM,
            deadline="24h",
            seed=3,
            options={"laps": "1"},
        )
    app.service.send()


def test_design_skill_alone_completes_the_tyres_on_file(gapp: TestApp) -> None:
    """The design turn: "TYRES OPTION" lacks the design; "DESIGN SKILL 2" brings it and the
    tyres stand; the confirmation says what the design was added to."""
    _design_turn(gapp)
    player_says(gapp, "kelly", "TYRES OPTION", game="sc1")
    assert "It lacks" in _flat(gapp) and "DESIGN line" in _flat(gapp)
    player_says(gapp, "kelly", "Oops, forgot:\nDESIGN SKILL 2", game="sc1")
    assert _filed(gapp).splitlines() == ["DESIGN ACC 0 DEC 0 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 2", "TYRES OPTION"]
    text = _flat(gapp)
    assert "Added to the set you had on file, which stands: > TYRES OPTION" in text
    assert "That is a complete set" in text and "No longer on file" not in text


def test_the_tyres_alone_are_added_to_the_complete_design_on_file(gapp: TestApp) -> None:
    """Played by mail (playtest M1): "DESIGN TOP 1 SKILL 1" (a complete set), then "TYRES OPTION"
    alone: the design was no longer on file and the default design raced. A mail that lacks the
    part the turn needs, names nothing the complete set on file names, and makes a legal set with
    it is an addition: the design stands, and the confirmation says so."""
    _design_turn(gapp)
    player_says(gapp, "kelly", "DESIGN TOP 1 SKILL 1", game="sc1")
    player_says(gapp, "kelly", "TYRES OPTION", game="sc1")
    assert _filed(gapp).splitlines() == ["DESIGN ACC 0 DEC 0 TOP 1 START 0 PRIME 0 OPTION 0 SKILL 1", "TYRES OPTION"]
    text = _flat(gapp)
    assert "Added to the set you had on file, which stands: > DESIGN ACC 0 DEC 0 TOP 1" in text, text
    assert "No longer on file" not in text and "That is a complete set" in text, text
    # A second complete set still replaces the first whole (§8: the last valid plot counts).
    player_says(gapp, "kelly", "DESIGN ACC 1", game="sc1")
    assert _filed(gapp) == "DESIGN ACC 1 DEC 0 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 0"


def test_the_forgotten_speed_is_added_to_the_plot_on_file(gapp: TestApp) -> None:
    """The race: a plot without its SPEED, then "Oops, forgot: SPEED 40": the PATH and the PAY
    line are still on file, and the confirmation names them."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "LANE B\nPAY ROLL", game="sc1")
    assert "It lacks" in _flat(gapp)
    player_says(gapp, "kelly", "Oops, forgot: SPEED 40", game="sc1")
    assert _filed(gapp).splitlines() == ["SPEED 40", "LANE B", "PAY ROLL"]
    text = _flat(gapp)
    assert "Added to the set you had on file, which stands: > LANE B > PAY ROLL" in text


def test_a_replacing_set_says_first_what_is_no_longer_on_file(gapp: TestApp) -> None:
    """A complete plot on file, then another: the lines of the first that the second does not
    keep are named before anything else."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "SPEED 60\nLANE B\nPAY ROLL", game="sc1")
    player_says(gapp, "kelly", "SPEED 40", game="sc1")
    assert _filed(gapp) == "SPEED 40"
    text = _flat(gapp)
    assert "Your mail replaces the set you had on file. No longer on file: > SPEED 60 > LANE B > PAY ROLL" in text
    assert text.index("No longer on file") < text.index("Understood for")


def test_speedphreakz_says_alike_what_a_program_replaced_and_what_stands(gapp: TestApp) -> None:
    """SpeedPhreakz merges (§5: a program for one round does not wipe out another's); its
    confirmation says the same two things in the same words."""
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
    player_says(gapp, "kelly", "COLOUR red\nSTART FREE FACING N", game="sp1")
    player_says(gapp, "kelly", "COLOUR green", game="sp1")
    text = _flat(gapp)
    assert "No longer on file: > COLOUR red" in text
    assert "The rest of the set on file stands beside it: > START FREE FACING N" in text


RACE_LINES = ["SPEED 40", "SPEED 60", "LANE B", "LINE", "PAY ROLL", "PAY WEAR", "PASS YES", "SLIP 1", "PUSH NO"]


@settings(max_examples=200, deadline=None)
@given(
    earlier=st.lists(st.sampled_from(RACE_LINES), max_size=4), later=st.lists(st.sampled_from(RACE_LINES), max_size=4)
)
def test_a_later_mail_is_kept_whole_and_adds_only_what_fills_the_gap(earlier: list[str], later: list[str]) -> None:
    """Whatever two mails a player sends: the later one's orders are all on file after it; what
    stays of the earlier set is nothing, unless that set lacked its SPEED, the later mail brings
    one and names nothing the earlier set named (§8: an addition, not a second plot)."""
    first = parse_orders(RACE, SEAT, "\n".join(earlier)).orders
    second = parse_orders(RACE, SEAT, "\n".join(later)).orders
    merged = GAME.merge_orders(first, second)
    if not second:
        assert merged == first
        return
    assert set(second) <= set(merged) <= set(first) | set(second)
    kept = set(merged) - set(second)
    if kept:
        assert not any(isinstance(o, SpeedOrder) for o in first)
        assert any(isinstance(o, SpeedOrder) for o in second)
        assert not {type(o) for o in first} & {type(o) for o in second}
        assert kept == set(first)


def test_keep_the_rest_changes_one_part_and_keeps_the_others(gapp: TestApp) -> None:
    """ "change of plan: speed 80 please, keep the rest" replaced the whole plot (LANE, PAY went)
    and listed "keep the rest" as words not read. A human GM keeps the rest: the mail's SPEED
    replaces the SPEED on file, the other lines stand, and the reading says so."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "SPEED 60\nLANE B\nPAY ROLL", game="sc1")
    player_says(gapp, "kelly", "change of plan: speed 40 please, keep the rest", game="sc1")
    assert _filed(gapp).splitlines() == ["SPEED 40", "LANE B", "PAY ROLL"]
    text = _flat(gapp)
    assert "read as SPEED 40 read as: the rest of the set on file stands" in text.replace("\n", " ")
    assert "No longer on file: > SPEED 60" in text and "> LANE B" not in text.split("Understood for")[0]
    assert "not read as an order" not in text


def test_a_mail_that_begins_and_adds_to_the_plot_on_file(gapp: TestApp) -> None:
    """Played by mail (playfix M2): after "SPEED 60 / LANE C", "Oh and PUSH YES, speed 80 then"
    replaced the plot: LANE C was no longer on file. A mail that begins "and" (or "also",
    "plus") adds to what it follows, as "keep the rest" does: PUSH YES is added, SPEED 80
    replaces SPEED 60, LANE C stands, and the reading says so."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "SPEED 60\nLANE C", game="sc1")
    player_says(gapp, "kelly", "Oh and PUSH YES, speed 80 then", game="sc1")
    assert sorted(_filed(gapp).splitlines()) == ["LANE C", "PUSH YES", "SPEED 80"]
    text = _flat(gapp).replace("\n", " ")
    assert "the rest of the set on file stands" in text, text


def test_the_gms_order_of_one_part_is_added_to_the_set_on_file(gapp: TestApp) -> None:
    """Played by mail (playtest5 SC1): the GM writes a plot as one ORDER a line, "ORDER sc1 seb
    SPEED 60" then "ORDER sc1 seb LINE": the second replaced the first, LINE alone raced, and
    seb's mail said "On file for you now: > SPEED 60". The GM's part-only ORDER is an addition
    as a player's part-only mail is (§8): the SPEED stands, and both mails say what is on file."""
    one_lap_race(gapp, ("kelly", "seb"))
    gm_says(gapp, "ORDER sc1 seb SPEED 60\nORDER sc1 seb LINE", game="sc1")
    assert _filed(gapp, "seb").splitlines() == ["SPEED 60", "LINE"]
    told = _flat(gapp, "seb")
    assert (
        told.count("On file for you now (they count unless you send others before the deadline): > SPEED 60 > LINE")
        == 1
    ), told
    answer = words_of(last(gapp, GM))
    assert "On file for seb now: > SPEED 60 > LINE" in answer, answer
    # A whole plot from the GM still replaces the set on file (§8: the last valid plot counts).
    gm_says(gapp, "ORDER sc1 seb SPEED 40; LANE B", game="sc1")
    assert _filed(gapp, "seb").splitlines() == ["SPEED 40", "LANE B"]
