"""One sign-off for every letter (templates/_common/_signoff.txt): a letter about a game signs as
that game's race director, in the time zone its reader's times are shown in; any other letter
as the bot with its address."""

from __future__ import annotations

import re
from email.message import EmailMessage

from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, body_of, gm_says, mails, player_says, stranger_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _signoff(mail: EmailMessage) -> str:
    lines = body_of(mail).replace("\r\n", "\n").rstrip("\n").split("\n")
    assert "-- " in lines, lines
    return "\n".join(lines[len(lines) - lines[::-1].index("-- ") :])


def test_every_letter_of_a_game_signs_the_same_as_its_race_director(rc: TestApp) -> None:
    """Signatures differed between letters of one game: "Flagman, race director for rc1. Times
    ..." under a turn sheet, "Flagman <flagman@example.org>" under a notice or a GM command's
    answer. Every letter about rc1, to a player or to its GM (sheets, confirmations, refusals,
    STATUS, notices of the GM's commands, the GM's answers, copies and PREVIEW, results), signs
    "Flagman, race director for rc1. Times are shown in <the reader's zone>."."""
    player_says(rc, "kelly", "USE 2")
    player_says(rc, "kelly", "STATUS rc1")
    player_says(rc, "kelly", "FLY 3")
    player_says(rc, "seb", "USE 1\nUSE 2")
    gm_says(rc, "PAUSE rc1")
    gm_says(rc, "RESUME rc1")
    gm_says(rc, "EXTEND rc1 1h\nSTATUS rc1")
    gm_says(rc, "PREVIEW rc1")
    gm_says(rc, "PROCESS rc1")
    zones = {p.address: p.timezone for p in gm_helpers.RACERS} | {GM: "Europe/London"}
    seen = 0
    for address, zone in zones.items():
        for mail in mails(rc, address):
            assert _signoff(mail) == f"Flagman, race director for rc1. Times are shown in {zone}.", (
                f"{mail['Subject']}:\n{body_of(mail)}"
            )
            seen += 1
    assert seen > 25
    assert len({str(m["Subject"]) for m in mails(rc, ADDRESS["kelly"])}) >= 5


def test_a_letter_about_no_game_signs_as_the_bot_with_its_address(gapp: TestApp) -> None:
    stranger_says(gapp, "zoe@example.org", "HELP")
    (answer,) = mails(gapp, "zoe@example.org")
    assert _signoff(answer) == "Flagman <flagman@example.org>", body_of(answer)
    assert re.search(r"\n-- \n", body_of(answer).replace("\r\n", "\n"))
