"""What the sheets and the other letters of a turn say (issue 37, part C): one default, from the
outlook, stated once; no dice where a game has none; the final result in competition places
with the rule that explains a surprising order; the game's own words."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.app import App
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, START, body_of, cycle, gm_says, last, mails, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures

PLOTTED = "you get the GM's plot (the game's own default would be USE 5):\n    > USE 2"


def _text(app: App, seat: str) -> str:
    return body_of(last(app, ADDRESS[seat])).replace("\r\n", "\n")


def _one_default(text: str) -> None:
    """The mail states what a silent seat gets once, the GM's plot with the game's own default
    beside it, and no other default anywhere (the private part, the syntax block)."""
    assert text.count(PLOTTED) == 1, text
    assert text.count("USE 5") == 1, text  # only inside the one statement
    assert "NMR default" not in text and "If no order arrives" not in text


def test_a_seat_with_a_gm_plot_is_told_one_default_once_in_every_letter(rc: App) -> None:
    """racecraft.md, NMR: "The player uses half their remaining EP, rounded down ... A GM
    override for that player replaces the default." The sheet sent again, ORDERS, a refusal and
    the reminder each say the one default that counts, from the outlook, once."""
    gm_says(rc, "PLOT rc1 steve USE 2")
    player_says(rc, "steve", "RESEND")
    sheet = _text(rc, "steve")
    assert "Turn 1 of 5" in sheet
    _one_default(sheet)
    player_says(rc, "steve", "ORDERS")
    _one_default(_text(rc, "steve"))
    player_says(rc, "steve", "FLY AWAY")
    _one_default(_text(rc, "steve"))
    rc.clock.set(START + timedelta(hours=24))
    cycle(rc)
    (reminder,) = [body_of(m) for m in mails(rc, ADDRESS["steve"]) if "Reminder" in str(m["Subject"])]
    _one_default(reminder.replace("\r\n", "\n"))


def test_a_seat_without_a_plot_is_told_the_games_default_once(rc: App) -> None:
    """The sheet states the default once (it said it three times: the private part, the orders
    due, the syntax block)."""
    sheet = body_of(mails(rc, ADDRESS["kelly"])[0]).replace("\r\n", "\n")
    assert sheet.count("USE 5") == 1 and "you get the default:\n    > USE 5" in sheet
    assert not re.search(r"NMR default|no order arrives", sheet)


def test_racecraft_runners_run(rc: App) -> None:
    """racecraft.md: "a middle-distance track race" of runners: the sheet says the seat runs (it
    said "You drive as")."""
    first = mails(rc, ADDRESS["kelly"])[0]
    sheet = body_of(first)
    assert 'You run as "kelly"' in sheet and "drive" not in sheet
    html = next(p.get_content() for p in first.walk() if p.get_content_type() == "text/html")
    assert "You run as" in html and "You drive as" not in html
