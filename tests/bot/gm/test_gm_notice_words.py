"""The small words of the GM's and players' notices: a notice where the
deadline did not move says "the deadline is unchanged", not "... is now due"; the GM's notice
of a turn resolved late names the turn by its label and says the time in words, singular where
it is one ("1 hour 30 min", never "1 hours")."""

from __future__ import annotations

from datetime import timedelta

from bot.games.turns import create_game
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.conftest import RACERS
from tests.bot.gm_helpers import ADDRESS, GM, START, body_of, cycle, gm_says, last, new_app

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_notice_where_nothing_moved_says_the_deadline_is_unchanged(rc: TestApp) -> None:
    gm_says(rc, "ORDER rc1 anna USE 2")
    told = _flat(body_of(last(rc, ADDRESS["anna"])))
    assert "The deadline is unchanged: Turn 1 of 5: start is due" in told, told
    assert "is now due" not in told


def test_a_notice_where_the_deadline_moved_says_it_is_now_due(rc: TestApp) -> None:
    gm_says(rc, "EXTEND rc1 24h")
    told = _flat(body_of(last(rc, ADDRESS["anna"])))
    assert "Turn 1 of 5: start is now due" in told and "unchanged" not in told


def test_the_late_notice_names_the_turn_by_its_label_and_says_one_hour(tmp_path: gm_helpers.Path) -> None:
    app = new_app(tmp_path)
    with app.db.transaction() as session:
        create_game(app.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM, deadline="48h")
    app.service.send()
    app.clock.set(START + timedelta(hours=49, minutes=30))
    cycle(app)
    notice = last(app, GM)
    text = _flat(body_of(notice))
    assert str(notice["Subject"]).endswith("Turn 1 of 5: start was resolved late")
    assert "Turn 1 of 5: start of rc1 was resolved 1 hour 30 min after its deadline" in text, text
    assert "1 hours" not in text and "Turn 1 of rc1" not in text
    app.close()


def test_the_gms_copy_of_the_results_claims_no_confirmation_of_the_gms_own(rc: TestApp) -> None:
    """Played by mail (playfix m1): the GM's copy of the results listed the receipts "(your
    confirmation carried yours)" -- the GM has no confirmation. The words are true for every
    reader of the shared block: each player's confirmation carried theirs."""
    gm_says(rc, "PROCESS rc1")
    copies = [m for m in gm_helpers.mails(rc, GM) if "GM copy: results" in str(m["Subject"])]
    assert copies
    text = _flat(body_of(copies[-1]))
    assert "your confirmation carried yours" not in text, text
    assert "Receipts of the orders used in Turn 1 of 5: start (each player's confirmation carried theirs)" in text


def test_the_gms_copy_of_the_final_result_carries_the_final_classification(rc: TestApp) -> None:
    """Played by mail (playfix m5): the players' final result ends with "Final result: 1. anna
    2. roger ... 5. steve (did not finish)"; the GM's copy had the last table only, without the
    classification (who did not finish). It carries the same lines."""
    gm_says(rc, "DROP rc1 steve")
    gm_helpers.to_the_finish(rc, "rc1")
    final = [m for m in gm_helpers.mails(rc, GM) if "GM copy: final result" in str(m["Subject"])]
    assert final

    def classification(body: str) -> str:
        return body.replace("\r\n", "\n").split("\nFinal result:\n", 1)[1].split("\n\n", 1)[0]

    text = classification(body_of(final[-1]))
    assert text.splitlines()[-1] == "  5. steve (did not finish)", text
    assert text == classification(body_of(last(rc, ADDRESS["anna"])))


def test_the_drop_is_said_once_and_the_dropped_player_is_told_her_orders_no_longer_count(rc: TestApp) -> None:
    """DROP tells the others once that the seat is out, from which turn; the dropped player,
    who had orders on file for the open turn, is told they no longer count."""
    gm_helpers.player_says(rc, "anna", "USE 2")
    gm_says(rc, "DROP rc1 anna")
    others = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert others.count("out of rc1") == 1, others
    assert "anna is out of rc1 from Turn 1 of 5: start on" in others, others
    anna = _flat(body_of(last(rc, ADDRESS["anna"])))
    assert "The orders you had on file for Turn 1 of 5: start no longer count" in anna, anna
    gm_says(rc, "DROP rc1 steve")  # steve sent nothing: nothing is said of orders
    steve = _flat(body_of(last(rc, ADDRESS["steve"])))
    assert "The GM has removed you (steve) from rc1" in steve and "no longer count" not in steve, steve


def test_the_gms_order_that_completes_the_turn_is_answered_with_the_turn_resolved(rc: TestApp) -> None:
    """The GM's ORDER for the last seat without orders resolves the turn (early resolution):
    the GM's answer to that mail says so, beside the ORDER done; an ORDER that leaves the turn
    open says nothing of it."""
    gm_says(rc, "ORDER rc1 anna USE 2")
    assert "is resolved" not in _flat(body_of(last(rc, GM)))
    for seat in ("kelly", "seb", "steve"):
        gm_helpers.player_says(rc, seat, "USE 3")
    mid = gm_says(rc, "ORDER rc1 roger USE 2")
    answer = next(m for m in reversed(gm_helpers.mails(rc, GM)) if str(m["In-Reply-To"]) == mid)
    text = _flat(body_of(answer))
    assert "GM: ORDER done" in text, text
    assert "With your mail, every order of Turn 1 of 5: start is in: the turn is resolved" in text, text


def test_a_subject_of_two_news_goes_on_in_lower_case_after_the_semicolon(rc: TestApp) -> None:
    """One mail per player per GM mail (docs/DESIGN.md, "The GM's mail"), its subject each
    item's title. Played by mail (playtest5 G4): "[spg] spg resumes; The GM entered orders for
    you in Set-up and round 1" -- a capital mid-subject; words in capitals (GM) stay."""
    gm_says(rc, "PAUSE rc1")
    gm_says(rc, "RESUME rc1\nORDER rc1 anna USE 2")
    subject = str(last(rc, ADDRESS["anna"])["Subject"])
    assert subject.startswith("[rc1] rc1 resumes; the GM entered orders for you"), subject
