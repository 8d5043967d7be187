"""The judge commands njudge and the human GMs have (issue 30, case 7; mail-interface.md, "Player
commands"): HISTORY <game> [turn] (past results) and RESEND <game> (the open turn's sheet again,
only to the registered address)."""

from __future__ import annotations

from bot.app import App
from bot.mail_in.auth import signed_address
from bot.testing import body_of, plain_mail
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, last, mails, player_says, stranger_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
SEATS = ("kelly", "seb", "steve", "roger", "anna")


def _play_turn_1(app: App) -> None:
    for seat in SEATS:
        player_says(app, seat, "USE 2")


def test_history_lists_the_turns_and_gives_one_turns_report(rc: App) -> None:
    """HISTORY: the turns resolved so far; HISTORY <game> <n>: that turn's public report."""
    player_says(rc, "kelly", "HISTORY")
    assert "No turn of rc1 has been resolved yet" in body_of(last(rc, ADDRESS["kelly"]))
    _play_turn_1(rc)
    player_says(rc, "kelly", "HISTORY rc1")
    assert "1. Turn 1 of 5: start" in body_of(last(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "HISTORY rc1 1")
    answer = last(rc, ADDRESS["kelly"])
    assert str(answer["Subject"]) == "[rc1] History: Turn 1 of 5: start"
    results = next(m for m in mails(rc, ADDRESS["seb"]) if "Results of Turn 1" in str(m["Subject"]))
    summary = body_of(answer).split("as everyone saw them:")[1].split("-- ")[0].strip().splitlines()[0]
    assert summary and summary in body_of(results)  # the same public report the results carried
    player_says(rc, "kelly", "HISTORY rc1 7")
    assert "has no resolved turn 7" in body_of(last(rc, ADDRESS["kelly"]))


def test_history_is_for_the_players_of_the_game(rc: App) -> None:
    """A stranger's HISTORY is a command for players: not done; the stranger gets the stranger's notice."""
    stranger_says(rc, "someone@else.example", "HISTORY rc1")
    assert "not in any game running here" in body_of(last(rc, "someone@else.example"))


def test_resend_mails_the_open_sheet_to_the_registered_address_only(rc: App) -> None:
    """RESEND through the seat's reply address, from another address: the sheet goes to the seat's
    registered address, with its reply address, and never to the From; a few a day at most."""
    before = len(mails(rc, ADDRESS["seb"]))
    rc.inbox.deliver(plain_mail("seb-phone@else.example", signed_address(BOT, "test-site-secret", "rc1", "seb"),  # type: ignore[attr-defined]
                                "resend", "RESEND"))
    gm_helpers.cycle(rc)
    new = mails(rc, ADDRESS["seb"])[before:]
    assert [str(m["Subject"]).startswith("[rc1] Racecraft: Turn 1 of 5") for m in new] == [True]
    assert "rc1.seb." in str(new[0]["Reply-To"])
    assert mails(rc, "seb-phone@else.example") == []
    for _ in range(3):
        player_says(rc, "seb", "RESEND")
    assert "Sent already" in str(last(rc, ADDRESS["seb"])["Subject"])
