"""What the sheets and the other letters of a turn say: one default, from the
outlook, stated once; no dice where a game has none; the final result in competition places
with the rule that explains a surprising order; the game's own words."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.testing import TestApp, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, START, body_of, cycle, gm_says, last, mails, player_says
from tests.helpers import moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures

PLOTTED = "you get the GM's plot (the game's own default would be USE 5): > USE 2"


def _text(app: TestApp, seat: str) -> str:
    """The last mail to `seat`, its words on one line (wrapping aside)."""
    return words_of(last(app, ADDRESS[seat]))


def _one_default(text: str) -> None:
    """The mail states what a silent seat gets once, the GM's plot with the game's own default
    beside it, and no other default anywhere (the private part, the syntax block)."""
    assert text.count(PLOTTED) == 1, text
    assert text.count("USE 5") == 1, text  # only inside the one statement
    assert "NMR default" not in text and "If no order arrives" not in text


def test_a_seat_with_a_gm_plot_is_told_one_default_once_in_every_letter(rc: TestApp) -> None:
    """racecraft.md, NMR: "The player uses half their remaining EP, rounded down ... A GM
    override for that player replaces the default." The sheet sent again, ORDERS, a refusal and
    the reminder each say the one default that counts, from the outlook, once."""
    gm_says(rc, "PLOT rc1 steve USE 2")
    player_says(rc, "steve", "RESEND")
    sheet = _text(rc, "steve")
    assert "Turn 1 of 5" in sheet
    _one_default(sheet)
    html = next(p.get_content() for p in last(rc, ADDRESS["steve"]).walk() if p.get_content_type() == "text/html")
    assert html.count("the game&#39;s own default would be USE 5") == 1, html
    assert html.count("If nothing arrives") == 1 and "NMR default" not in html and "no order arrives" not in html
    player_says(rc, "steve", "ORDERS")
    _one_default(_text(rc, "steve"))
    player_says(rc, "steve", "FLY AWAY")
    _one_default(_text(rc, "steve"))
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    (reminder,) = [body_of(m) for m in mails(rc, ADDRESS["steve"]) if "Reminder" in str(m["Subject"])]
    _one_default(" ".join(reminder.split()))


def test_a_seat_without_a_plot_is_told_the_games_default_once(rc: TestApp) -> None:
    """The sheet states the default once (it said it three times: the private part, the orders
    due, the syntax block)."""
    sheet = body_of(mails(rc, ADDRESS["kelly"])[0]).replace("\r\n", "\n")
    assert sheet.count("USE 5") == 1 and "you get the default:\n    > USE 5" in sheet
    assert not re.search(r"NMR default|no order arrives", sheet)


def test_racecraft_runners_run(rc: TestApp) -> None:
    """racecraft.md: "a middle-distance track race" of runners: the sheet says the seat runs (it
    said "You drive as")."""
    first = mails(rc, ADDRESS["kelly"])[0]
    sheet = body_of(first)
    assert 'You run as "kelly"' in sheet and "drive" not in sheet
    html = next(p.get_content() for p in first.walk() if p.get_content_type() == "text/html")
    assert "You run as" in html and "You drive as" not in html


def _sheets_of(app: TestApp, kind: str) -> list[str]:
    from tests.bot.commands.test_self_service import _game

    _game(app, kind, 2)
    return [str(m["Subject"]) for m in mails(app, "p0@example.org")]


def test_subjects_are_short_and_alike_across_games(gapp: TestApp) -> None:
    """mail-interface.md: "[game] ..." subjects; every game's turn sheet reads "[g1] Title: label,
    due ..." and is short (a SpeedPhreakz sheet's was about 110 characters: its label carried what
    to send, which is the sheet's to say)."""
    (subject,) = _sheets_of(gapp, "speedphreakz")
    assert re.fullmatch(r"\[g1\] SpeedPhreakz: Set-up and round 1, due .+", subject), subject
    assert len(subject) <= 72, subject


def test_the_speedphreakz_set_up_sheet_has_a_text_map_with_the_start_squares(gapp: TestApp) -> None:
    """speedphreakz.md / the seed: "everyone picking a colour, starting location on the starting
    line ... orientation". The set-up sheet shows the circuit as text, the start squares marked,
    with the coordinates START x,y reads."""
    from tests.bot.commands.test_self_service import _game

    _game(gapp, "speedphreakz", 2)
    sheet = body_of(mails(gapp, "p0@example.org")[0]).replace("\r\n", "\n")
    assert "choose your start among the squares marked '+' (1,5 2,5 3,5)" in sheet
    assert re.search(r"^  5 #\+\+\+#", sheet, re.M), sheet
    assert "x runs right, y down, as in START x,y" in sheet


def test_history_marks_a_rolled_back_turn_as_corrected(rc: TestApp) -> None:
    """mail-interface.md, ROLLBACK: the turn is resolved again and its new results "replace the
    ones sent before"; HISTORY says so of that turn, in the list and in its report."""
    for seat in ("kelly", "seb", "steve", "roger", "anna"):
        player_says(rc, seat, "USE 2")
    gm_says(rc, "ROLLBACK rc1")
    gm_says(rc, "PROCESS rc1")
    player_says(rc, "kelly", "HISTORY rc1")
    assert "HISTORY rc1 <number>" in _text(rc, "kelly")
    # Played by mail (playtest5 RC5): the note, wrapped, went on 6 columns in under a 2-column
    # item; it stands on a line of its own, under the item's words.
    lines = body_of(last(rc, ADDRESS["kelly"])).replace("\r\n", "\n").splitlines()
    at = lines.index("  1. Turn 1 of 5: start")
    assert lines[at + 1] == "     (corrected: rolled back by the GM and resolved again)", lines
    player_says(rc, "kelly", "HISTORY rc1 1")
    one = _text(rc, "kelly")
    assert "The corrected results of Turn 1 of 5: start of rc1" in one


def test_racecraft_mail_carries_no_dice_and_no_empty_receipts(rc: TestApp) -> None:
    """racecraft.md: "Racecraft has no dice: the rng is never used" (rules.api `chance`). No mail
    of a whole race carries a dice commitment or a dice section; the results show the receipts
    of the orders used only where there were orders (the final sprint takes none), and a
    "Receipts of the orders used" heading is never printed with nothing under it."""
    from tests.bot.gm_helpers import to_the_finish

    to_the_finish(rc, "rc1")
    everything = [body_of(m).replace("\r\n", "\n") for m in mails(rc)]
    assert any("Final result of Racecraft rc1" in str(m["Subject"]) for m in mails(rc))
    for body in everything:
        assert "Dice of" not in body and "commitment" not in body and "seed  " not in body, body
        for heading in re.finditer(r"Receipts of the orders used[^\n]*:\n", body):
            after = body[heading.end() :].splitlines()
            assert after and re.match(r"  \S+ +[0-9a-f]{20}", after[0]), body
    receipts = [body for body in everything if "Receipts of the orders used" in body]
    assert receipts, "the tactical turns' results carry their receipts"


def test_preview_shows_every_part_the_default_fills_in_and_the_plots_default(gapp: TestApp) -> None:
    """speedphreakz.md §5: a set-up set without START is placed on "a start square no one
    chose", and a round's program left out is the empty one when that round is resolved. PREVIEW's
    orders used show the start the default fills in now, the program still missing (locked when
    this turn resolves, speedphreakz.md §5 Pipeline), and,
    for a seat with the GM's plot, the game's own default it replaces."""
    from tests.bot.commands.test_self_service import _game
    from tests.bot.gm_helpers import GM

    _game(gapp, "speedphreakz", 2)
    player_says(gapp, "p0", "ROUND 1: F1 F1", game="g1", address="p0@example.org")
    gm_says(gapp, "PLOT g1 p1 ROUND 1: F1", game="g1")
    gm_says(gapp, "PREVIEW g1", game="g1")
    preview = body_of(last(gapp, GM)).replace("\r\n", "\n")
    assert re.search(r"fills in what the seat's set lacks:\n    > START FREE FACING \w+", preview), preview
    assert "still missing, and not to be sent once this turn is resolved" in preview
    assert "- the program for round 2: a ROUND 2 line with up to 12 actions" in preview
    assert "(the GM's plot; the game's own default would be: START FREE FACING" in preview


def test_the_end_of_a_racecraft_race_is_one_mail(rc: TestApp) -> None:
    """racecraft.md, Final sprint: "No orders are needed". The sprint runs as soon as the last
    tactical turn is resolved, so a runner got two mails a second apart (its results, then the
    final result): one will do. The final result carries the last tactical turn's results first,
    with their receipts (the same the turn's own results would have carried), then the sprint's."""
    from tests.bot.gm_helpers import GM, to_the_finish

    to_the_finish(rc, "rc1")
    subjects = [str(m["Subject"]) for m in mails(rc, ADDRESS["kelly"])]
    assert not any("Results of Turn 4 of 5" in s for s in subjects), subjects
    assert sum("Final result of Racecraft rc1" in s for s in subjects) == 1
    final = body_of(mails(rc, ADDRESS["kelly"])[-1]).replace("\r\n", "\n")
    first = final.index("First, the results of Turn 4 of 5: tactical")
    assert first < final.index("Receipts of the orders used in Turn 4 of 5") < final.index("Results of Turn 5 of 5")
    assert "After turn 4:" in final and "Final result: 1st" in final
    gm = [str(m["Subject"]) for m in mails(rc, GM)]
    assert not any("results of Turn 4 of 5" in s for s in gm) and sum("final result" in s for s in gm) == 1
    copy = next(m for m in mails(rc, GM) if "final result" in str(m["Subject"]))
    assert "First, the results of Turn 4 of 5" in body_of(copy)
