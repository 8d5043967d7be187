"""The order of the mails a GM's one mail sends: each is true when it is read, in the order it
arrives (mail-interface.md, "What happens next: one outlook": "no two mails, and no two lines
of one mail, can disagree"). "ROLLBACK rc1 / ORDER rc1 kelly USE 5 / PROCESS rc1" told the
players the reopened turn was paused and open after the corrected results had reached them."""

from __future__ import annotations

from bot.testing import TestApp, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, body_of, gm_says, mails, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def test_rollback_order_process_in_one_mail_tells_the_reopening_before_the_corrected_results(rc: TestApp) -> None:
    player_says(rc, "kelly", "USE 4")
    gm_says(rc, "PROCESS rc1")
    player_says(rc, "kelly", "USE 2")
    before = {seat: len(mails(rc, ADDRESS[seat])) for seat in ("kelly", "seb")}
    gm_says(rc, "ROLLBACK rc1\nORDER rc1 kelly USE 5\nPROCESS rc1")
    for seat in ("kelly", "seb"):
        got = mails(rc, ADDRESS[seat])[before[seat] :]
        subjects = [str(m["Subject"]) for m in got]
        results = [i for i, s in enumerate(subjects) if "Corrected results of Turn 1" in s]
        reopened = [i for i, s in enumerate(subjects) if "reopened by the GM" in s]
        assert len(results) == 1 and len(reopened) == 1, subjects
        assert reopened[0] < results[0], subjects
        # Nothing after the corrected results says the turn is open or the game paused.
        for later in got[results[0] + 1 :]:
            text = words_of(later)
            assert "is open again" not in text and "The game is paused" not in text, text
    kelly = mails(rc, ADDRESS["kelly"])[before["kelly"] :]
    entered = [i for i, m in enumerate(kelly) if "== The GM entered orders for you" in body_of(m)]
    corrected = [i for i, m in enumerate(kelly) if "Corrected results" in str(m["Subject"])]
    assert entered and entered[0] < corrected[0]


def test_a_process_below_a_refused_order_for_its_game_is_not_run_and_the_answer_says_why(rc: TestApp) -> None:
    """docs/DESIGN.md, "The GM's mail": a PROCESS in the same mail after a refused ORDER, PLOT or
    SET for that game is not run. Played by mail (playtest5 G5): "ROLLBACK scg / ORDER scg kelly
    BID WEAR 1 / PROCESS scg" refused the ORDER and resolved the turn without it, listed first
    under "Done": the GM who meant the ORDER to count was never warned."""
    gm_says(rc, "PROCESS rc1")
    gm_says(rc, "ROLLBACK rc1\nORDER rc1 kelly USE 99\nPROCESS rc1")
    answer = " ".join(body_of(gm_helpers.last(rc, gm_helpers.GM)).split())
    done = answer.split("== Not done ==")[0]
    assert "PROCESS done" not in done, answer
    assert "ORDER refused" in answer and "PROCESS refused" in answer, answer
    assert (
        "not run: the ORDER above it in your mail was refused, and rc1's turn is not resolved without it; "
        "send PROCESS rc1 again"
    ) in answer, answer
    assert gm_helpers.turns(rc)[-1].number == 1 and gm_helpers.turns(rc)[-1].resolved_at is None
    assert "refused: not run" in gm_helpers.audit(rc)[-1].outcome
    # A refused ORDER for another game, or none, leaves PROCESS to run.
    gm_says(rc, "ORDER rc1 kelly USE 3\nPROCESS rc1")
    assert gm_helpers.turns(rc)[-1].number == 2
