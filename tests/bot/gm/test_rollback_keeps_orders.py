"""ROLLBACK and the orders already sent for the turn after the one it reopens (mail-interface.md,
"GM commands", ROLLBACK: "The orders you had on file for it still stand"): they are kept, not
thrown away; when the reopened turn resolves again each is checked against the corrected
state, re-filed for the new turn where it stands, and withdrawn by name where it cannot, to the
player and the GM, with the new turn's full deadline to send others. The GM's answer says what
was kept; the audit log records what was withdrawn; a reply to a sheet the rollback withdrew is
told so, and offered the reopened turn."""

from __future__ import annotations

from sqlalchemy import select

from bot.gm import digest
from bot.models import OrderSubmission, Seat, Turn
from bot.store import find_game_row
from bot.testing import TestApp, reply_to
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, audit, body_of, cycle, gm_says, last, mails, player_says, turns

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _flat(text: str) -> str:
    """A mail's words on one line (wrapping aside)."""
    return " ".join(text.split())


def _on_file(app: TestApp, number: int) -> dict[str, list[tuple[str, str]]]:
    """Each seat's submissions of turn `number`, as (source, text), robots' and defaults' aside."""
    with app.db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        turn = session.scalars(select(Turn).where(Turn.game_id == game.id, Turn.number == number)).one()
        out: dict[str, list[tuple[str, str]]] = {}
        for sub, seat in session.execute(
            select(OrderSubmission, Seat)
            .join(Seat, Seat.id == OrderSubmission.seat_id)
            .where(OrderSubmission.turn_id == turn.id, OrderSubmission.source.in_(("mail", "gm")))
            .order_by(OrderSubmission.id)
        ):
            out.setdefault(seat.name, []).append((sub.source, sub.text))
        return out


def _turn_two_with_orders(rc: TestApp) -> None:
    """Turn 1 resolved by PROCESS (kelly used 4 EP: 6 left); for turn 2, kelly's USE 6 and
    roger's CRUISE by mail, and the GM's ORDER for anna."""
    player_says(rc, "seb", "USE 2")
    player_says(rc, "kelly", "USE 4")
    gm_says(rc, "PROCESS rc1")
    player_says(rc, "kelly", "USE 6")
    player_says(rc, "roger", "CRUISE")
    gm_says(rc, "ORDER rc1 anna USE 3")


def test_rollback_keeps_the_orders_sent_for_the_next_turn_and_says_so(rc: TestApp) -> None:
    """Nothing sent for turn 2 vanishes: each sender is told by name that their orders are kept
    and will be checked against the corrected results; the GM's answer lists them."""
    _turn_two_with_orders(rc)
    gm_says(rc, "ROLLBACK rc1")
    answer = _flat(body_of(last(rc, GM)))
    assert "kept" in answer
    for seat, orders in (("kelly", "USE 6"), ("roger", "CRUISE"), ("anna", "USE 3")):
        assert seat in answer and orders in answer, answer
        told = _flat(body_of(last(rc, ADDRESS[seat])))
        assert "Turn 2" in told and orders in told and "kept" in told, told
    assert "anna (your ORDER)" in answer  # whose orders they were
    undo = audit(rc)[-1].undo
    assert undo is not None
    assert {c["seat"] for c in undo["kept"]} == {"kelly", "roger", "anna"}
    # The digest lists what is on file for the reopened turn, and the kept orders as kept only.
    assert digest.send_due_digests(rc.shell, force=True) == 1
    rc.service.send()
    section = _flat(body_of(last(rc, GM)).split("== rc1")[1])
    assert "Orders on file: kelly, seb." in section, section
    assert "Kept across your ROLLBACK for the turn after Turn 1 of 5: start" in section
    assert "anna (your ORDER), kelly, roger." in section


def test_kept_orders_are_filed_again_when_they_stand_and_withdrawn_by_name_when_not(rc: TestApp) -> None:
    """The GM corrects turn 1 (kelly used 8 EP, not 4): her USE 6 for turn 2 cannot stand (2 EP
    left) and is withdrawn, to her and the GM, with the reason and the new deadline; roger's
    CRUISE and the GM's ORDER for anna stand and are on file for turn 2 at once."""
    _turn_two_with_orders(rc)
    gm_says(rc, "ROLLBACK rc1")
    gm_says(rc, "ORDER rc1 kelly USE 8")
    before = len(mails(rc, ADDRESS["kelly"]))
    gm_says(rc, "PROCESS rc1")
    assert _on_file(rc, 2) == {"roger": [("mail", "CRUISE")], "anna": [("gm", "USE 3")]}
    kelly = _flat("\n".join(body_of(m) for m in mails(rc, ADDRESS["kelly"])[before:]))
    assert "withdrawn" in kelly and "USE 6" in kelly and "only 2 EP" in kelly, kelly
    roger = _flat(body_of(last(rc, ADDRESS["roger"])))
    assert "still stand" in roger and "CRUISE" in roger, roger
    gm = _flat(body_of(last(rc, GM)))  # the answer to PROCESS
    assert "kelly: WITHDRAWN (USE 6)" in gm and "roger: still stand" in gm, gm
    recorded = [a for a in audit(rc) if a.undo and "withdrawn" in a.undo]
    assert recorded and recorded[-1].undo is not None
    assert [w["seat"] for w in recorded[-1].undo["withdrawn"]] == ["kelly"]
    # The turn waits for no vanished order: roger's and anna's count, the others may still send.
    assert turns(rc)[-1].resolved_at is None


def test_a_reply_to_the_withdrawn_sheet_is_told_what_happened_and_offered_the_reopened_turn(rc: TestApp) -> None:
    """Roger answers the turn 2 sheet after the GM rolled turn 1 back: his mail is not applied to
    the reopened turn 1 unasked; he is told the results it answers were withdrawn, and offered
    the same orders for turn 1 in one tap."""
    player_says(rc, "seb", "USE 2")
    gm_says(rc, "PROCESS rc1")
    sheet = last(rc, ADDRESS["roger"])
    assert "Results of Turn 1" in str(sheet["Subject"])
    gm_says(rc, "ROLLBACK rc1")
    rc.inbox.deliver(reply_to(sheet, "USE 5", sender=ADDRESS["roger"]))
    cycle(rc)
    answer = last(rc, ADDRESS["roger"])
    text = _flat(body_of(answer))
    assert "rolled back" in text and "Turn 1" in text, text
    assert "mailto:" in text and "USE 5" in text
    assert _on_file(rc, 1).get("roger") is None  # nothing applied unasked


def test_the_reopening_tells_each_seat_what_stands_for_it_not_orders_it_never_sent(rc: TestApp) -> None:
    """Played by mail (playfix C1): after PROCESS and ROLLBACK every seat was told "The orders
    you had on file for it still stand", also steve, who had sent nothing (the default was
    used), and kelly, who had only the GM's plot. Each seat is told what stands for it now, from
    the outlook: its own orders where it sent some, else what it gets if nothing arrives."""
    gm_says(rc, "PLOT rc1 kelly USE 2")
    player_says(rc, "seb", "USE 4")
    gm_says(rc, "PROCESS rc1")
    gm_says(rc, "ROLLBACK rc1")
    seb = _flat(body_of(last(rc, ADDRESS["seb"])))
    assert "The orders you had on file for it still stand" in seb and "> USE 4" in seb, seb
    steve = _flat(body_of(last(rc, ADDRESS["steve"])))
    assert "still stand" not in steve, steve
    assert "You had no orders on file for it" in steve and "you get the default: > USE 5" in steve, steve
    kelly = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert "still stand" not in kelly, kelly
    assert "you get the GM's plot" in kelly and "> USE 2" in kelly, kelly


def test_the_rollback_letter_leads_with_the_reopened_turn_and_its_subject_says_that_alone(rc: TestApp) -> None:
    """mail-interface.md, ROLLBACK: the players are told the turn is open again. kelly's letter
    read "A new receipt for your orders in ...; Your orders for ... are kept; ... is reopened"
    (a subject of 136 characters), the receipt before the news. Its subject says the news
    ("[rc1] Turn 1 of 5: start reopened by the GM"); the body leads with it, then what became
    of the orders kept for the next turn, the new receipt last."""
    _turn_two_with_orders(rc)
    gm_says(rc, "ROLLBACK rc1")
    letter = last(rc, ADDRESS["kelly"])
    assert str(letter["Subject"]) == "[rc1] Turn 1 of 5: start reopened by the GM"
    body = _flat(body_of(letter))
    reopened = body.index("The GM has rolled back the resolution of Turn 1 of 5: start")
    kept = body.index("Your orders for Turn 2 of 5: tactical, on file before the rollback, are kept")
    receipt = body.index("The turn's secret is new, so the receipt your confirmation carried")
    assert reopened < kept < receipt, body
    for address in ADDRESS.values():
        for mail in mails(rc, address):
            assert len(str(mail["Subject"])) <= 78, str(mail["Subject"])


def test_a_final_result_resolved_again_after_a_rollback_says_it_is_corrected(gapp: TestApp) -> None:
    """mail-interface.md, ROLLBACK: the turn's new results "replace the ones sent before". Played
    by mail (playtest3): a ROLLBACK of a Racecraft race's last tactical turn, resolved again with
    the final sprint after it, mailed "Final result of Racecraft ..." word for word as the first
    one (the correction flag was the sprint's, a turn never rolled back)."""
    from bot.games.turns import create_game
    from tests.bot.conftest import RACERS

    with gapp.db.transaction() as session:
        create_game(
            gapp.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM, seed=7,
            options={"turns": "3"},
        )  # fmt: skip
    gapp.service.send()
    gm_says(gapp, "PROCESS rc1")
    gm_says(gapp, "PROCESS rc1")
    finals = [m for m in mails(gapp, ADDRESS["kelly"]) if "inal result" in str(m["Subject"])]
    assert [str(m["Subject"]) for m in finals] == ["[rc1] Final result of Racecraft rc1"]
    gm_says(gapp, "ROLLBACK rc1")
    gm_says(gapp, "PROCESS rc1")
    finals = [m for m in mails(gapp, ADDRESS["kelly"]) if "inal result" in str(m["Subject"])]
    assert str(finals[-1]["Subject"]) == "[rc1] Corrected final result of Racecraft rc1"
    text = _flat(body_of(finals[-1]))
    assert "These results replace the ones sent before for Turn 2 of 3: tactical" in text
    assert any(str(m["Subject"]) == "[rc1] GM copy: corrected final result of rc1" for m in mails(gapp, GM))


def test_a_reply_to_the_withdrawn_sheet_shows_the_orders_a_tap_would_replace(rc: TestApp) -> None:
    """Played by mail (playtest4): roger had USE 2 on file for the reopened turn and answered
    the withdrawn sheet of the next one with USE 1; he was offered USE 1 for the reopened turn in
    one tap, without a word that it replaces the USE 2 he has on file there, nor that his USE 1
    can be sent for the next turn once its sheet comes."""
    player_says(rc, "roger", "USE 1")
    player_says(rc, "seb", "USE 2")
    gm_says(rc, "PROCESS rc1")
    sheet = last(rc, ADDRESS["roger"])
    gm_says(rc, "ROLLBACK rc1")
    rc.inbox.deliver(reply_to(sheet, "USE 5", sender=ADDRESS["roger"]))
    cycle(rc)
    text = _flat(body_of(last(rc, ADDRESS["roger"])))
    assert "On file for you for Turn 1 of 5: start (they stand unless you send others): > USE 1" in text, text
    assert "To send the same orders for Turn 1 of 5: start in place of those, tap" in text, text
    assert "Orders for Turn 2 of 5: tactical are sent in reply to its sheet" in text, text
    assert _on_file(rc, 1)["roger"] == [("mail", "USE 1")]
