"""Orders bind to the turn they answer (mail-interface.md, "Subject and body"):
"A reply (In-Reply-To/References, or the turn label in the subject) to a sheet or confirmation of
a turn that has resolved is never applied to another turn: the answer says so, names the open
turn, and offers the same orders for it as one-tap links. Only mail that names no turn goes to
the open turn."""

from __future__ import annotations

import re
import urllib.parse
from datetime import timedelta

from sqlalchemy import select

from bot.mail_in.auth import signed_address
from bot.models import InboundMessage, OrderSubmission
from bot.testing import TestApp, body_of, plain_mail, reply_to, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, cycle, last, mails, player_says, turns
from tests.helpers import fake_inbox, moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
SEATS = ("kelly", "seb", "steve", "roger", "anna")


def _resolve_turn_1(app: TestApp) -> None:
    moving_clock(app).advance(timedelta(minutes=30))  # the sheets went out at the start
    for seat in SEATS:
        player_says(app, seat, "USE 2")  # every order in: the turn resolves early
    assert turns(app)[0].resolved_at is not None and len(turns(app)) == 2


def _steve_orders(app: TestApp) -> list[tuple[int, str]]:
    with app.db.read() as session:
        return [
            (t, x)
            for t, x in session.execute(
                select(OrderSubmission.turn_id, OrderSubmission.text).where(
                    OrderSubmission.source == "mail", OrderSubmission.text == "USE 8"
                )
            )
        ]


def test_a_late_reply_to_the_turn_1_sheet_is_not_taken_for_turn_2(rc: TestApp) -> None:
    """ "After Turn 1 resolved, Steve replied to the Turn 1 sheet ... with USE 8, meant for the
    start. It was silently taken for Turn 2": now nothing is filed, the answer names both turns,
    and a one-tap link carries the same orders for the open turn."""
    sheet = next(m for m in mails(rc, ADDRESS["steve"]) if "Turn 1 of 5" in str(m["Subject"]))
    _resolve_turn_1(rc)
    fake_inbox(rc).deliver(reply_to(sheet, "USE 8", sender=ADDRESS["steve"]))
    cycle(rc)
    assert _steve_orders(rc) == []
    answer = last(rc, ADDRESS["steve"])
    text = words_of(answer)
    assert "Turn 1 of 5: start is over" in str(answer["Subject"])
    assert "answers Turn 1 of 5: start, which has been resolved" in text and "Turn 2 of 5" in text
    link = re.search(r"mailto:\S+", body_of(answer))
    assert link is not None
    address, _, query = link.group(0).removeprefix("mailto:").partition("?")
    assert urllib.parse.unquote(address) == signed_address(BOT, "test-site-secret", "rc1", "steve")
    assert urllib.parse.parse_qs(query)["subject"] == ["USE 8"]
    with rc.db.read() as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert row is not None and (row.status, row.reason) == ("refused", "answers a resolved turn")
    # The tap: a new mail with the order in its subject, naming no turn: for the open turn.
    fake_inbox(rc).deliver(
        plain_mail(
            ADDRESS["steve"],
            urllib.parse.unquote(address),
            "USE 8",
            "",
            message_id="<tap@phone.example>",
        )
    )
    cycle(rc)
    assert [turn for turn, _ in _steve_orders(rc)] == [turns(rc)[1].id]


def test_a_reply_to_the_results_orders_for_the_turn_they_open(rc: TestApp) -> None:
    """The results of Turn 1 come with the sheet of Turn 2: a reply to them is for Turn 2."""
    _resolve_turn_1(rc)
    results = next(m for m in mails(rc, ADDRESS["steve"]) if "Results of Turn 1" in str(m["Subject"]))
    fake_inbox(rc).deliver(reply_to(results, "USE 8", sender=ADDRESS["steve"]))
    cycle(rc)
    assert [turn for turn, _ in _steve_orders(rc)] == [turns(rc)[1].id]


def test_the_turn_label_in_a_replys_subject_binds_it_when_the_headers_are_gone(rc: TestApp) -> None:
    """A client that dropped In-Reply-To and References: the subject still names Turn 1."""
    subject = next(str(m["Subject"]) for m in mails(rc, ADDRESS["steve"]) if "Turn 1 of 5" in str(m["Subject"]))
    _resolve_turn_1(rc)
    fake_inbox(rc).deliver(
        plain_mail(
            ADDRESS["steve"],
            signed_address(BOT, "test-site-secret", "rc1", "steve"),
            "Re: " + subject,
            "USE 8",
            message_id="<noheaders@x>",
        )
    )
    cycle(rc)
    assert _steve_orders(rc) == [] and "is over" in str(last(rc, ADDRESS["steve"])["Subject"])


def test_a_mail_that_names_no_turn_goes_to_the_open_turn(rc: TestApp) -> None:
    """A new mail to the reply address, no reply headers, no turn in its subject: the open turn."""
    _resolve_turn_1(rc)
    fake_inbox(rc).deliver(
        plain_mail(
            ADDRESS["steve"],
            signed_address(BOT, "test-site-secret", "rc1", "steve"),
            "my orders",
            "USE 8",
            message_id="<fresh@x>",
        )
    )
    cycle(rc)
    assert [turn for turn, _ in _steve_orders(rc)] == [turns(rc)[1].id]


def test_a_reply_to_a_confirmation_of_the_open_turn_is_taken(rc: TestApp) -> None:
    """The common case is unchanged: a reply to a mail of the turn open now (its confirmation)."""
    _resolve_turn_1(rc)
    player_says(rc, "steve", "USE 3")
    confirmation = last(rc, ADDRESS["steve"])
    assert "Orders received for Turn 2 of 5" in str(confirmation["Subject"])
    moving_clock(rc).advance(timedelta(minutes=5))
    fake_inbox(rc).deliver(reply_to(confirmation, "USE 8", sender=ADDRESS["steve"]))
    cycle(rc)
    assert [turn for turn, _ in _steve_orders(rc)] == [turns(rc)[1].id]


def test_a_reply_to_the_confirmation_that_completed_a_turn_is_not_taken_for_the_next(rc: TestApp) -> None:
    """Played by mail (playfix L1): the confirmation of the orders that complete a turn ("Yours
    were the last orders: the turn is resolved") is queued at the very moment the next turn
    opens, so its time alone cannot tell which turn it answers: a reply to it ("Sorry, USE 1
    instead"), meant for the turn just resolved, was taken for the next. The letter's own claim
    (turn 1, resolved) says which turn it answers: nothing is filed, and the answer says so."""
    for seat in SEATS[:-1]:
        player_says(rc, seat, "USE 2")
    player_says(rc, "anna", "USE 2")  # the last orders: turn 1 resolves at this same instant
    assert turns(rc)[0].resolved_at is not None and len(turns(rc)) == 2
    confirmation = next(m for m in mails(rc, ADDRESS["anna"]) if "Orders received" in str(m["Subject"]))
    assert "Yours were the last orders" in words_of(confirmation)
    fake_inbox(rc).deliver(reply_to(confirmation, "USE 8", sender=ADDRESS["anna"]))
    cycle(rc)
    with rc.db.read() as session:
        filed = list(session.scalars(select(OrderSubmission.turn_id).where(OrderSubmission.text == "USE 8")))
    assert filed == []
    text = words_of(last(rc, ADDRESS["anna"]))
    assert "answers Turn 1 of 5: start, which has been resolved" in text and "Turn 2 of 5" in text, text
