"""Every mail of the GM side (welcome, reminder, announcements, GM confirmations, preview,
digest, NMR warnings) renders, and no line of it parses as a valid order (testing.md:
Outlook quotes without '>')."""

from __future__ import annotations

from sqlalchemy import select

from bot.games.turns import create_game
from bot.gm import digest
from bot.models import Turn
from bot.store import find_game_row
from bot.testing import TestApp
from rules import find_game
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    ADDRESS,
    GM,
    RACERS,
    body_of,
    cycle,
    gm_says,
    mails,
    player_says,
    stranger_joins,
)
from tests.helpers import moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
RACECRAFT = find_game("racecraft")


def test_no_line_of_a_gm_side_mail_parses_as_an_order(gapp: TestApp) -> None:
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=(),
            gm_address=GM,
            deadline="48h",
            signup=True,
            seed=5,
        )
    for spec in RACERS:
        stranger_joins(gapp, spec.address, f"JOIN rc2 {spec.name}")
    with gapp.db.transaction() as session:
        game = find_game_row(session, "rc2")
        assert game is not None
        game.nmr_limit, game.nmr_action = 3, "drop"
    gm_says(gapp, "OPEN rc2\nSTART rc2\nPLOT rc2 kelly USE 3\nORDER rc2 seb USE 4\nEXTEND rc2 1h", game="rc2")
    gm_says(gapp, "PREVIEW rc2", game="rc2")  # alone: its own mail, the preview
    moving_clock(gapp).advance(hours=25)
    cycle(gapp)  # the 24h reminder
    gm_says(gapp, "PAUSE rc2\nRESUME rc2\nSET rc2 steve ep 8\nPROCESS rc2", game="rc2")
    moving_clock(gapp).advance(hours=49)
    cycle(gapp)  # a deadline: NMR warnings
    player_says(gapp, "anna", "RESIGN rc2", game="rc2")
    gm_says(gapp, "ROLLBACK rc2\nDROP rc2 roger\nREPLACE rc2 kelly kim@example.net Kim", game="rc2")
    digest.send_due_digests(gapp.shell, force=True)
    gapp.service.send()
    with gapp.db.read() as session:
        states = [RACECRAFT.load_state(t.state) for t in session.scalars(select(Turn))]
    msgs = mails(gapp)
    # The subjects, and the headings of the sections of combined answers (one answer per mail).
    kinds = {str(m["Subject"]) for m in msgs} | {
        line.strip("- ") for m in msgs for line in body_of(m).splitlines() if line.startswith("--- ")
    }
    for expected in (
        "Welcome",
        "Reminder",
        "GM preview",
        "GM digest",
        "GM: ROLLBACK done",
        "reopened",
        "Warning",
        "resigned",
    ):
        assert any(expected in k for k in kinds), f"no {expected!r} mail among {sorted(kinds)}"
    for msg in msgs:
        body = body_of(msg)
        assert "Undefined" not in body
        for line in body.splitlines():
            for state in states:
                for seat in RACECRAFT.expected_players(state):
                    assert not RACECRAFT.parse_orders(state, seat, line).orders, f"{line!r} parses as an order"


def test_every_reminder_and_announcement_names_the_deadline_in_the_recipients_zone(rc: TestApp) -> None:
    """product.md: the deadline in each player's time zone, in the announcement and the reminder."""
    gm_says(rc, "DEADLINE rc1 2026-01-09 18:00")
    moving_clock(rc).advance(days=3, hours=9)
    cycle(rc)
    for seat, text in (
        ("kelly", "Fri 9 Jan 2026 18:00 GMT"),
        ("seb", "Fri 9 Jan 2026 19:00 CET"),
        ("steve", "Fri 9 Jan 2026 13:00 EST"),
        ("roger", "Sat 10 Jan 2026 05:00 AEDT"),
    ):
        new = [body_of(m) for m in mails(rc, ADDRESS[seat])[-2:]]
        assert all(text in body for body in new), (seat, new)


def test_one_gm_mail_makes_one_mail_to_each_player(rc: TestApp) -> None:
    """ "One GM mail, two mails to each player (EXTEND and PAUSE)": all the news
    of one GM mail goes to each player in one mail, in sections, with the deadline as it stands
    after all of it."""
    before = {address: len(mails(rc, address)) for address in ADDRESS.values()}
    gm_says(rc, "EXTEND rc1 24h\nPAUSE rc1")
    for address in ADDRESS.values():
        new = mails(rc, address)[before[address] :]
        assert len(new) == 1, [str(m["Subject"]) for m in new]
        body = body_of(new[0])
        assert "== Deadline extended for Turn 1 of 5: start ==" in body and "== rc1 is paused ==" in body
        assert "is on hold: no deadline runs until the GM resumes the game" in body
        assert " ".join(body.split()).count("no deadline runs") == 1, body  # said once


def test_a_resume_that_resolves_at_once_sends_the_results_alone(rc: TestApp) -> None:
    """ "RESUME's notice followed seconds later by the results": when every order
    is in, RESUME resolves the turn and the results are the players' only news."""
    gm_says(rc, "PAUSE rc1")
    for seat in ADDRESS:
        player_says(rc, seat, "USE 2")
    before = len(mails(rc, ADDRESS["kelly"]))
    gm_says(rc, "RESUME rc1")
    subjects = [str(m["Subject"]) for m in mails(rc, ADDRESS["kelly"])[before:]]
    assert len(subjects) == 1 and "Results of Turn 1" in subjects[0], subjects


def test_preview_lays_out_each_seat_as_its_lines_then_one_blank_line(rc: TestApp) -> None:
    """PREVIEW's "Orders used": each seat's line, its orders and, for a seat with the GM's plot,
    "(the GM's plot; the game's own default would be: USE 5)" right under them, then one blank
    line before the next seat (the note never stands apart after a blank line)."""
    player_says(rc, "seb", "USE 4")
    gm_says(rc, "PLOT rc1 kelly USE 2")
    gm_says(rc, "PREVIEW rc1")
    preview = body_of(mails(rc, GM)[-1]).replace("\r\n", "\n")
    block = preview.split("Orders used (the whole set that counts for each seat):\n", 1)[1]
    seats = block.split("\nDefaulted:", 1)[0].rstrip("\n").split("\n\n")
    assert [s.split()[0] for s in seats] == sorted(ADDRESS), preview
    assert seats[sorted(ADDRESS).index("kelly")].splitlines() == [
        "  kelly            (plot)",
        "    > USE 2",
        "    (the GM's plot; the game's own default would be: USE 5)",
    ], preview
    assert seats[sorted(ADDRESS).index("seb")].splitlines() == ["  seb              (on file)", "    > USE 4"], preview


def test_every_letter_of_one_game_signs_off_alike(rc: TestApp) -> None:
    """templates/_common/_signoff.txt: "A letter about a game signs as that game's race
    director ... a letter that shows times says the zone they are in." Played by mail, rc1's
    letters signed three ways: "Flagman, race director for rc1." (the resignation to seb),
    "... Times are shown in Europe/London." and the GM's STATUS "Flagman <...>. Times are shown
    in Europe/London.". Each letter of the game signs as its race director, in its reader's zone."""
    before = {who: len(mails(rc, ADDRESS[who])) for who in ("seb", "kelly")}
    gm_before = len(mails(rc, GM))
    player_says(rc, "seb", "RESIGN rc1")
    player_says(rc, "kelly", "HELP")
    gm_says(rc, "STATUS rc1")
    letters = [*mails(rc, ADDRESS["seb"])[before["seb"] :], *mails(rc, ADDRESS["kelly"])[before["kelly"] :]]
    letters += mails(rc, GM)[gm_before:]
    assert len(letters) >= 5, [str(m["Subject"]) for m in letters]
    for mail in letters:
        signature = body_of(mail).replace("\r\n", "\n").split("\n-- \n", 1)[1].strip()
        assert signature.startswith("Flagman, race director for rc1. Times are shown in "), (
            str(mail["Subject"]),
            signature,
        )
