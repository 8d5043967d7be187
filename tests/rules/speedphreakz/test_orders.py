"""SpeedPhreakz orders by mail (§5): the syntax, the refusals with reasons, the canonical
form, merging mails, completeness and the generated HELP."""

from __future__ import annotations

import dataclasses
import random

import pytest

from rules.api import ProblemKind
from rules.speedphreakz import GAME
from rules.speedphreakz.data import chart
from rules.speedphreakz.model import (
    CarStatus,
    Colour,
    Heading,
    Program,
    Race,
    Restart,
    Square,
    Start,
)
from tests.rules.speedphreakz.helpers import car, race


def ring_set_up() -> Race:
    return GAME.new_game(["ann", "bob", "cat"], {"map": "ring"}, random.Random(0))


def refusal(state: Race, player: str, text: str) -> tuple[ProblemKind, str]:
    parsed = GAME.parse_orders(state, player, text)
    assert parsed.orders == (), parsed.orders
    assert len(parsed.problems) == 1, parsed.problems
    return parsed.problems[0].kind, parsed.problems[0].reason


def test_the_set_up_mail_of_section_5() -> None:
    """§5: "Set-up: COLOUR red, START 2,4 FACING N, and the programs for rounds 1 and 2"."""
    parsed = GAME.parse_orders(
        ring_set_up(), "ann", "COLOUR red\nSTART 2,5 FACING N\nROUND 1: F2 F1\nROUND 2: F1 VR F1 TL F1"
    )
    assert parsed.ok and parsed.complete
    assert parsed.orders == (
        Colour("red"),
        Start(Square(2, 5), Heading.N),
        Program(1, ("F2", "F1")),
        Program(2, ("F1", "VR", "F1", "TL", "F1")),
    )


def test_a_round_program_of_section_5() -> None:
    """§5: "A round's program: ROUND 7: F2 F1 VR F1 TL F1"."""
    state = dataclasses.replace(race([car("ann", (3, 3))]), round=6)
    parsed = GAME.parse_orders(state, "ann", "ROUND 7: F2 F1 VR F1 TL F1")
    assert parsed.orders == (Program(7, ("F2", "F1", "VR", "F1", "TL", "F1")),) and parsed.complete


def test_a_restart_of_section_5() -> None:
    """§5: "After a crash: RESTART 3,5 FACING E plus the new program"."""
    state = race([car("ann", (3, 4), status=CarStatus.CRASHED)], round_no=3)
    parsed = GAME.parse_orders(state, "ann", "RESTART 3,5 FACING E\nROUND 3: F1\nROUND 4: F2")
    assert parsed.ok and parsed.complete
    assert parsed.orders[0] == Restart(Square(3, 5), Heading.E)


def test_spelling_is_forgiving() -> None:
    """Lower case, COLOR, no FACING, commas between actions and spaces in x, y are accepted."""
    parsed = GAME.parse_orders(ring_set_up(), "ann", "color blue\nstart 2, 5 n\nround 1 f1, f2\nRound 2:f1")
    assert parsed.ok
    assert parsed.orders == (
        Colour("blue"),
        Start(Square(2, 5), Heading.N),
        Program(1, ("F1", "F2")),
        Program(2, ("F1",)),
    )


@pytest.mark.parametrize(
    ("text", "kind", "reason"),
    [
        ("ROUND 1: TL F1", ProblemKind.ILLEGAL, "first action must be a movement"),
        ("ROUND 1: F1 TL TR", ProblemKind.ILLEGAL, "two turns in a row (TL TR)"),
        ("ROUND 1: F1 F9", ProblemKind.INVALID, "unknown action code 'F9'"),
        ("ROUND 3: F1", ProblemKind.ILLEGAL, "round 3 is too far ahead; send ROUND 1 and ROUND 2"),
        ("ROUND 1: " + "F1 " * 13, ProblemKind.ILLEGAL, "cap of 12"),
        ("START 5,5 FACING N", ProblemKind.ILLEGAL, "5,5 is not a start square; the start squares are 1,5 2,5 3,5"),
        ("START 2,5 FACING UP", ProblemKind.INVALID, "unknown heading 'UP'"),
        ("COLOUR mauve", ProblemKind.ILLEGAL, "unknown colour 'mauve'"),
        ("RESTART 2,5 FACING N", ProblemKind.ILLEGAL, "only for a car that crashed"),
        ("GO FAST", ProblemKind.INVALID, "not an order"),
        ("ROUND two: F1", ProblemKind.INVALID, "write ROUND n: actions"),
    ],
)
def test_refused_at_once_with_the_reason(text: str, kind: ProblemKind, reason: str) -> None:
    """§5: "Refused at once, with the reason: a first action that is a turn, two turns in a
    row, an unknown code, a program for a round already resolved, more actions than the cap"."""
    got_kind, got_reason = refusal(ring_set_up(), "ann", text)
    assert got_kind is kind and reason in got_reason


def test_rounds_already_resolved_or_locked_are_refused() -> None:
    """§5 "a program for a round already resolved"; the round being resolved now was locked
    when the round before it was resolved (orders always one round ahead)."""
    state = race([car("ann", (3, 3))], round_no=5)
    assert "round 4 is already resolved; send ROUND 6" in refusal(state, "ann", "ROUND 4: F1")[1]
    assert "round 5's program was locked" in refusal(state, "ann", "ROUND 5: F1")[1]
    assert "too far ahead" in refusal(state, "ann", "ROUND 7: F1")[1]


def test_a_crashed_player_sends_the_round_being_resolved_again() -> None:
    """S9: the crashed player resubmits the scrapped round and the following one."""
    state = race([car("ann", (3, 3), status=CarStatus.CRASHED)], round_no=5)
    parsed = GAME.parse_orders(state, "ann", "ROUND 5: F1\nROUND 6: F2")
    assert parsed.ok and parsed.complete
    assert not GAME.parse_orders(state, "ann", "ROUND 6: F2").complete


def test_a_colour_taken_by_another_car_is_refused() -> None:
    """ "COLOUR taken/unknown"."""
    state = race([car("ann", (3, 3), colour="red"), car("bob", (5, 3))])
    assert refusal(state, "bob", "COLOUR red") == (
        ProblemKind.ILLEGAL,
        "red is taken by ann; free: blue green yellow orange purple white black pink silver",
    )
    assert GAME.parse_orders(state, "ann", "COLOUR red").ok


def test_a_colour_another_seat_asked_for_at_the_set_up_is_taken() -> None:
    """§4.2 "players choose a colour": at the set-up no car has one yet, so main's check let
    two seats ask for green and the resolution gave it by seat order ("kelly asked for green,
    already taken" for the seat that asked first). The first to ask has it: `taken` names the
    seat whose set on file holds it and the colours free, and what a car without a COLOUR gets
    (resolve: one nobody asked for); a seat's own colour is no conflict."""
    state = ring_set_up()
    green = GAME.parse_orders(state, "bob", "COLOUR green").orders
    others = {"ann": GAME.parse_orders(state, "ann", "COLOUR green\nROUND 1: F1").orders, "cat": ()}
    assert GAME.taken(state, "bob", green, others) == (
        (
            green[0],
            "green is taken by ann; free: red blue yellow orange purple white black pink silver; "
            "without a COLOUR line the car gets a colour nobody asked for",
        ),
    )
    assert GAME.taken(state, "ann", green, others) == ()
    assert GAME.taken(state, "bob", GAME.parse_orders(state, "bob", "COLOUR red").orders, others) == ()


def test_a_colour_asked_twice_at_the_set_up_is_said_taken_once() -> None:
    """S13: "at the resolution a colour asked twice, by a GM's ORDER, goes by seat order": the
    later seat gets a free colour, and what happened says "bob asked for green, already taken."
    once, not once for the set-up and again for the colours asked in the round."""
    state = ring_set_up()
    orders = {p: GAME.parse_orders(state, p, "COLOUR green").orders for p in ("ann", "bob")}
    resolution = GAME.resolve(state, orders, random.Random(1))
    said = [e.text for e in resolution.events if e.kind == "colour"]
    assert said == ["bob asked for green, already taken."]
    assert resolution.state.car("ann").colour == "green"
    assert resolution.state.car("bob").colour not in (None, "green")


def test_start_only_at_the_set_up() -> None:
    """§4.2 Start is the set-up; later a crashed car uses RESTART."""
    state = race([car("ann", (3, 3))])
    assert "only for the set-up" in refusal(state, "ann", "START 1,3 FACING N")[1]


def test_every_bad_line_of_a_mail_is_reported() -> None:
    """architecture.md: "every bad line of a mail is reported in one reply"; the good lines
    count."""
    parsed = GAME.parse_orders(ring_set_up(), "ann", "COLOUR red\nROUND 1: TL\n\nHELLO\nROUND 2: F1\nROUND 2: F2")
    assert [p.line_no for p in parsed.problems] == [2, 4, 6]
    assert "already given on line 5" in parsed.problems[2].reason
    assert parsed.orders == (Colour("red"), Program(2, ("F1",)))
    assert not parsed.complete


def test_format_is_canonical_and_parses_back() -> None:
    """api: "parse_orders(state, p, format_orders(x)).orders == tuple(x)"."""
    state = ring_set_up()
    orders = (Colour("green"), Start(Square(3, 5), Heading.NE), Program(1, ()), Program(2, ("F3", "HL", "RV")))
    text = GAME.format_orders(orders)
    assert text == "COLOUR green\nSTART 3,5 FACING NE\nROUND 1:\nROUND 2: F3 HL RV"
    assert GAME.parse_orders(state, "ann", text).orders == orders


def test_a_later_mail_keeps_another_rounds_program() -> None:
    """api: "merge_orders keeps a later program for a round from wiping out another round's";
    §5 "a later mail replaces the program for that round"."""
    state = ring_set_up()
    earlier = GAME.parse_orders(state, "ann", "START 1,5 FACING N\nROUND 1: F1\nROUND 2: F1").orders
    later = GAME.parse_orders(state, "ann", "ROUND 2: F3\nCOLOUR pink").orders
    assert GAME.merge_orders(earlier, later) == (
        Colour("pink"),
        Start(Square(1, 5), Heading.N),
        Program(1, ("F1",)),
        Program(2, ("F3",)),
    )


def test_completeness_of_the_set_up() -> None:
    """api Parsed.complete: the set-up needs START and both rounds (COLOUR is optional)."""
    state = ring_set_up()
    assert GAME.parse_orders(state, "ann", "START 1,5 FACING N\nROUND 1:\nROUND 2: F1").complete
    assert not GAME.parse_orders(state, "ann", "ROUND 1:\nROUND 2: F1").complete
    assert not GAME.parse_orders(state, "ann", "START 1,5 FACING N\nROUND 1: F1").complete


def test_help_is_generated_from_the_chart_and_the_state() -> None:
    """The HELP text lists every action code with its cost and what to send now."""
    state = ring_set_up()
    text = GAME.order_help(state, "ann")
    for action in chart().actions:
        assert f"{action.code:<3} {action.name}" in text and str(action.cost) in text
    assert "ROUND 1 and ROUND 2" in text and "1,5 2,5 3,5" in text
    crashed = race([car("ann", (3, 3), status=CarStatus.CRASHED, surcharge=100)], round_no=4)
    assert "RESTART" in GAME.order_help(crashed, "ann") and "ROUND 4 and ROUND 5" in GAME.order_help(crashed, "ann")


def test_orders_after_the_race_are_refused() -> None:
    state = dataclasses.replace(race([car("ann", (3, 3))]), finished=True)
    assert refusal(state, "ann", "ROUND 3: F1") == (ProblemKind.ILLEGAL, "the race is over")


# -- §5 the GM plot: a standing default ------------------------------------------------------------


def _plot(state: Race, player: str, text: str) -> str:
    """The plot as the shell keeps it: the GM's orders, parsed now, in canonical text."""
    parsed = GAME.parse_orders(state, player, text)
    assert parsed.ok, parsed.problems
    return GAME.format_orders(parsed.orders)


def test_a_gm_plot_stands_for_every_round_the_player_leaves_empty() -> None:
    """§5: "the GM may set a standing default per player ... that applies to every round the
    player leaves empty until the GM clears it". A plot set at the set-up stands as it is
    there; later its program (the last one it names) is carried over to the round in hand,
    re-labelled, and the set-up lines (COLOUR, START) are left out."""
    state = ring_set_up()
    plot = _plot(state, "ann", "COLOUR red\nSTART 1,5 FACING N\nROUND 1: F1\nROUND 2: F2 VR")
    assert GAME.plot_orders(state, "ann", plot) == (
        Colour("red"),
        Start(Square(1, 5), Heading.N),
        Program(1, ("F1",)),
        Program(2, ("F2", "VR")),
    )
    later = dataclasses.replace(race([car("ann", (3, 3)), car("bob", (6, 3))]), round=7)
    assert GAME.plot_orders(later, "ann", plot) == (Program(8, ("F2", "VR")),)


def test_a_gm_plot_stands_for_a_crashed_car_with_the_s10_restart() -> None:
    """§5 standing default with S9 ("the player resubmits that round ... and then the
    following round"): both open rounds get the plot's program; a RESTART of the plot stands
    only where it is legal now, else the S10 default restart fills in."""
    crashed = race([car("ann", (5, 3), "S", status=CarStatus.CRASHED), car("bob", (9, 3))], round_no=6)
    plot = "RESTART 1,1 FACING E\nROUND 4: F1 F1"  # set after an earlier crash, elsewhere
    orders = GAME.plot_orders(crashed, "ann", plot)
    assert orders == (
        *[o for o in GAME.default_orders(crashed, "ann") if isinstance(o, Restart)],
        Program(6, ("F1", "F1")),
        Program(7, ("F1", "F1")),
    )
    here = GAME.plot_orders(crashed, "ann", "RESTART 5,4 FACING E\nROUND 4: F1 F1")
    assert here is not None and here[0] == Restart(Square(5, 4), Heading.E)


def test_a_gm_plot_program_without_a_round_number_stands() -> None:
    """§5: "a program without a round number (PLOT g seat F1 F1 VL) that applies to every
    round the player leaves empty"."""
    state = race([car("ann", (3, 3)), car("bob", (6, 3))], round_no=4)
    assert GAME.plot_orders(state, "ann", "F1 F1 VL") == (Program(5, ("F1", "F1", "VL")),)
    assert GAME.plot_orders(state, "ann", "F1 TL TR") is None  # §4.2: never two turns in a row


def test_a_gm_plot_of_which_nothing_stands_is_none() -> None:
    """api `plot_orders`: None "when it cannot stand": set-up lines after the set-up, a
    RESTART for a car that did not crash, and text that is no order."""
    state = race([car("ann", (3, 3)), car("bob", (6, 3))], round_no=4)
    for plot in ("COLOUR red\nSTART 1,5 FACING N", "RESTART 3,4 FACING N", "NOT AN ORDER AT ALL", ""):
        assert GAME.plot_orders(state, "ann", plot) is None, plot


def test_start_free_reads_and_writes() -> None:
    """§5 "a start square no one chose" as an order: START FREE FACING <heading>, the NMR
    default at the set-up; canonical text that parses back; only at the set-up."""
    state = ring_set_up()
    parsed = GAME.parse_orders(state, "ann", "start free ne\nROUND 1:\nROUND 2:")
    assert parsed.ok and parsed.complete and parsed.orders[0] == Start.free(Heading.NE)
    assert GAME.format_orders(parsed.orders).startswith("START FREE FACING NE\n")
    assert "only for the set-up" in refusal(race([car("ann", (3, 3))]), "ann", "START FREE FACING N")[1]
    assert "START FREE FACING <heading>" in GAME.order_help(state, "ann")
