"""The whole turn cycle through the service, with a fake inbox, mailer and clock on real SQLite."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from email.message import EmailMessage

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from bot.fate import Done
from bot.intake.batch import Batch, Mail
from bot.mail_in.auth import signed_address
from bot.mail_in.inbox import Folder, RawMail
from bot.models import (
    InboundMessage,
    InboundStatus,
    OrderSubmission,
    Outbox,
    Quarantine,
    Seat,
    Turn,
)
from bot.testing import FakeInbox, FakeMailer, TestApp, body_of, plain_mail, reply_to
from rules import find_game
from tests.bot.conftest import BOT, GM, RACERS

ADDRESS = {p.seat: p.address for p in RACERS}


def last_to(app: TestApp, address: str) -> EmailMessage:
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    msgs = mailer.messages(address)
    assert msgs, f"no mail to {address}"
    return msgs[-1]


def order(app: TestApp, seat: str, text: str, *, message_id: str | None = None) -> EmailMessage:
    """`seat` replies to its latest mail with `text`; the bot polls and sends; the answer."""
    inbox = app.inbox
    assert isinstance(inbox, FakeInbox)
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    before = len(mailer.messages(ADDRESS[seat]))
    inbox.deliver(reply_to(last_to(app, ADDRESS[seat]), text, sender=ADDRESS[seat], message_id=message_id))
    app.service.poll()
    app.service.send()
    after = mailer.messages(ADDRESS[seat])
    assert len(after) > before, "no answer"
    return after[-1]


def orders_fail_for(monkeypatch: pytest.MonkeyPatch, seat_name: str) -> list[str]:
    """Handling the orders of `seat_name` raises (a bug in the making); the seats whose orders
    were handled, in order, are listed in the list returned."""
    from bot.intake import orders

    real = orders.take_orders
    calls: list[str] = []

    def explode(batch: Batch, session: Session, mail: Mail, seat: Seat, text: str) -> Done:
        calls.append(seat.name)
        if seat.name == seat_name:
            raise RuntimeError("boom")
        return real(batch, session, mail, seat, text)

    monkeypatch.setattr(orders, "take_orders", explode)
    return calls


def turn_rows(app: TestApp) -> list[Turn]:
    with app.db.read() as session:
        return list(session.scalars(select(Turn).order_by(Turn.number)))


def test_every_player_and_the_gm_get_a_turn_sheet_with_a_signed_reply_address(racecraft: TestApp) -> None:
    """product.md: players get a turn sheet with the deadline in their zone and a reply address that authenticates them."""
    for spec in RACERS:
        sheet = last_to(racecraft, spec.address)
        assert sheet["Reply-To"].addresses[0].addr_spec == signed_address(BOT, "test-site-secret", "rc1", spec.seat)
        assert "Turn 1 of 5" in str(sheet["Subject"])
        assert sheet["Auto-Submitted"] == "auto-generated"
        assert sheet["Precedence"] == "bulk"
    assert "GMT" in str(last_to(racecraft, ADDRESS["kelly"])["Subject"])
    assert "EST" in str(last_to(racecraft, ADDRESS["steve"])["Subject"])
    assert "GM copy" in str(last_to(racecraft, GM)["Subject"])


def test_a_valid_order_is_confirmed_with_its_canonical_form(racecraft: TestApp) -> None:
    """mail-interface.md: the confirmation echoes the orders as understood, in canonical form."""
    answer = order(racecraft, "seb", "bid 2")
    assert "[ERROR]" not in str(answer["Subject"])
    body = body_of(answer)
    assert "> USE 2" in body
    assert "complete set" in body
    assert answer["Auto-Submitted"] == "auto-replied"


def test_a_bad_order_is_refused_quoting_the_line_and_the_earlier_order_stays(racecraft: TestApp) -> None:
    """mail-interface.md: an invalid mail leaves the earlier set in force; the error quotes the bad line."""
    order(racecraft, "seb", "USE 2")
    answer = order(racecraft, "seb", "USE 11")
    assert str(answer["Subject"]).startswith("[ERROR]")
    body = body_of(answer)
    assert '"USE 11"' in body
    assert "earlier orders stay in force" in body and "> USE 2" in body


def test_a_later_order_replaces_the_earlier(racecraft: TestApp) -> None:
    """mail-interface.md: a later valid set replaces the earlier."""
    order(racecraft, "seb", "USE 2")
    answer = order(racecraft, "seb", "USE 4")
    assert "> USE 4" in body_of(answer)
    status = order(racecraft, "seb", "ORDERS")
    assert "> USE 4" in body_of(status) and "USE 2" not in body_of(status)


def test_when_every_order_is_in_the_turn_resolves_and_everyone_gets_results(racecraft: TestApp) -> None:
    """architecture.md tick: early resolution once every order is in (Racecraft allows it)."""
    for seat, text in (("kelly", "USE 0"), ("seb", "USE 2"), ("steve", "USE 2"), ("roger", "USE 5"), ("anna", "1")):
        order(racecraft, seat, text)
        racecraft.service.tick()
        racecraft.service.send()
    turns = turn_rows(racecraft)
    assert turns[0].resolved_at is not None and len(turns) == 2
    results = last_to(racecraft, ADDRESS["kelly"])
    assert "Results of Turn 1 of 5" in str(results["Subject"])
    assert "Turn 2 of 5" in body_of(results)
    assert "GM copy: results" in str(last_to(racecraft, GM)["Subject"])


@pytest.mark.both_databases  # deadline arithmetic in queries
def test_a_missing_order_gets_the_nmr_default_at_the_deadline(racecraft: TestApp) -> None:
    """racecraft.md NMR: the player uses half their remaining EP, rounded down (turn 1: 5)."""
    for seat in ("kelly", "seb", "steve", "roger"):
        order(racecraft, seat, "USE 1")
    racecraft.service.tick()
    assert turn_rows(racecraft)[0].resolved_at is None, "anna's order is missing: wait for the deadline"
    racecraft.clock.advance(hours=48)
    racecraft.service.tick()
    racecraft.service.send()
    turn1 = turn_rows(racecraft)[0]
    assert turn1.resolved_at is not None
    with racecraft.db.read() as session:
        defaults = session.scalars(select(OrderSubmission).where(OrderSubmission.source == "default")).all()
        assert [(d.text) for d in defaults] == ["USE 5"]
    body = body_of(last_to(racecraft, ADDRESS["anna"]))
    assert "No orders from you arrived in time" in body
    game = find_game("racecraft")
    assert turn1.state_after is not None
    state = game.load_state(turn1.state_after)
    assert game.figures(state, "anna") == {"ep": 5}


@pytest.mark.both_databases  # deadline arithmetic in queries
def test_orders_after_the_deadline_are_refused_with_a_clear_reply(racecraft: TestApp) -> None:
    """Orders arriving after the deadline are refused with a clear reply."""
    racecraft.clock.advance(hours=48, minutes=1)
    answer = order(racecraft, "seb", "USE 3")
    assert str(answer["Subject"]).startswith("[ERROR]")
    assert "Too late" in str(answer["Subject"])
    with racecraft.db.read() as session:
        assert session.scalar(select(func.count()).select_from(OrderSubmission)) == 0


@pytest.mark.both_databases  # unique constraints
def test_the_same_mail_delivered_twice_is_applied_once(racecraft: TestApp) -> None:
    """testing.md: the same Message-ID delivered twice is applied once."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    data = reply_to(last_to(racecraft, ADDRESS["seb"]), "USE 3", sender=ADDRESS["seb"], message_id="<twice@client>")
    inbox.deliver(data)
    inbox.deliver(b"Received: from relay2 by mx; Mon, 5 Jan 2026 10:00:01 +0000\n" + data)
    racecraft.service.poll()
    with racecraft.db.read() as session:
        assert session.scalar(select(func.count()).select_from(OrderSubmission)) == 1
        assert session.scalar(select(func.count()).select_from(Outbox).where(Outbox.kind == "confirmation")) == 1
    assert not inbox.pending


class CrashingInbox(FakeInbox):
    """Dies between the commit and the move, once."""

    crashed = False

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        if not self.crashed:
            self.crashed = True
            raise ConnectionError("killed before the move")
        super().mark_done(keys, folder)


@pytest.mark.both_databases  # what a commit keeps
def test_a_crash_between_commit_and_move_skips_the_mail_as_a_duplicate(racecraft: TestApp) -> None:
    """architecture.md step 2: the mail is marked done only after the commit; refetched, it is a duplicate."""
    crashing = CrashingInbox()
    racecraft.use_inbox(crashing)
    crashing.deliver(reply_to(last_to(racecraft, ADDRESS["seb"]), "USE 3", sender=ADDRESS["seb"]))
    with pytest.raises(ConnectionError):
        racecraft.service.poll()
    assert crashing.pending, "still in the inbox"
    report = racecraft.service.poll()
    assert report.duplicates == 1
    assert not crashing.pending
    with racecraft.db.read() as session:
        assert session.scalar(select(func.count()).select_from(OrderSubmission)) == 1
        assert session.scalar(select(func.count()).select_from(Outbox).where(Outbox.kind == "confirmation")) == 1


@pytest.mark.both_databases  # rollback
def test_a_mail_that_crashes_processing_is_quarantined_and_the_batch_goes_on(
    racecraft: TestApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """architecture.md: an unexpected exception rolls back that mail, stores it in quarantine; others are applied."""
    orders_fail_for(monkeypatch, "kelly")
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    inbox.deliver(reply_to(last_to(racecraft, ADDRESS["kelly"]), "USE 1", sender=ADDRESS["kelly"]))
    inbox.deliver(reply_to(last_to(racecraft, ADDRESS["seb"]), "USE 2", sender=ADDRESS["seb"]))
    racecraft.service.poll()
    assert len(inbox.folders[Folder.FAILED]) == 1 and len(inbox.folders[Folder.PROCESSED]) == 1
    with racecraft.db.read() as session:
        q = session.scalars(select(Quarantine)).one()
        assert "boom" in q.error and b"USE 1" in q.raw
        assert session.scalar(select(func.count()).select_from(OrderSubmission)) == 1
        assert (
            session.scalar(select(func.count()).select_from(InboundMessage).where(InboundMessage.seat_id.is_not(None)))
            == 1
        )


def test_mail_from_a_players_address_without_proof_is_refused_to_the_registered_address(racecraft: TestApp) -> None:
    """mail-interface.md: a From that matches a player but fails authentication is refused with a note to the registered address."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    inbox.deliver(plain_mail(f"Seb <{ADDRESS['seb']}>", BOT, "my orders", "USE 9"))
    racecraft.service.poll()
    racecraft.service.send()
    note = last_to(racecraft, ADDRESS["seb"])
    assert "not accepted" in str(note["Subject"])
    with racecraft.db.read() as session:
        assert session.scalar(select(func.count()).select_from(OrderSubmission)) == 0
        row = session.scalars(select(InboundMessage)).one()
        assert row.status == InboundStatus.REFUSED


def test_the_seat_password_admits_mail_to_the_plain_address(racecraft: TestApp) -> None:
    """mail-interface.md: a mail to the plain address counts when From is registered and it carries PASSWORD."""
    from bot.models import Seat

    with racecraft.db.read() as session:
        secret = session.scalars(select(Seat.secret).where(Seat.name == "seb")).one()
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    inbox.deliver(plain_mail(ADDRESS["seb"], BOT, "orders", f"USE 3\nPASSWORD {secret}"))
    racecraft.service.poll()
    racecraft.service.send()
    answer = last_to(racecraft, ADDRESS["seb"])
    assert "Orders received" in str(answer["Subject"]) and "> USE 3" in body_of(answer)
    assert secret not in body_of(answer)


def test_a_forged_reply_tag_does_not_authenticate(racecraft: TestApp) -> None:
    """auth: a plus-tag whose MAC does not verify is no proof."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    inbox.deliver(plain_mail("mallory@evil.example", "flagman+rc1.seb.aaaaaaaaaaaa@example.org", "x", "USE 10"))
    racecraft.service.poll()
    with racecraft.db.read() as session:
        assert session.scalar(select(func.count()).select_from(OrderSubmission)) == 0


def test_auto_replies_are_never_answered(racecraft: TestApp) -> None:
    """mail-interface.md: auto-replies are logged and never answered."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    racecraft.mailer.clear()
    sheet_reply_to = signed_address(BOT, "test-site-secret", "rc1", "seb")
    inbox.deliver(
        plain_mail(
            ADDRESS["seb"], sheet_reply_to, "Out of office", "I am away", headers={"Auto-Submitted": "auto-replied"}
        )
    )
    racecraft.service.poll()
    racecraft.service.send()
    assert racecraft.mailer.sent == []
    with racecraft.db.read() as session:
        assert session.scalars(select(InboundMessage.status)).one() == InboundStatus.IGNORED


@pytest.mark.both_databases  # time windows in queries
def test_a_stranger_gets_one_short_notice_a_day(racecraft: TestApp) -> None:
    """product.md: no reply to an unauthenticated stranger beyond one short rate-limited notice."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    racecraft.mailer.clear()
    for n in range(3):
        inbox.deliver(plain_mail("someone@else.example", BOT, f"hello {n}", "what is this?"))
    racecraft.service.poll()
    racecraft.service.send()
    assert len(racecraft.mailer.messages("someone@else.example")) == 1


def test_help_status_and_orders_commands(racecraft: TestApp) -> None:
    """mail-interface.md: HELP (generated grammar), STATUS (who has ordered, not what), ORDERS (what is on file)."""
    order(racecraft, "seb", "USE 2")
    help_mail = order(racecraft, "kelly", "HELP")
    assert "USE n" in body_of(help_mail) and "STATUS" in body_of(help_mail)
    status = order(racecraft, "kelly", "STATUS")
    body = body_of(status)
    assert "Orders in from: seb" in body
    assert "USE 2" not in body, "STATUS never shows another player's orders"
    mine = order(racecraft, "kelly", "ORDERS")
    assert "Nothing is on file" in body_of(mine) and "> USE 5" in body_of(mine)


@pytest.mark.both_databases  # a whole game stored and read back
def test_a_whole_game_by_mail_ends_with_the_final_result(racecraft: TestApp) -> None:
    """The whole turn cycle: five turns by mail, the final sprint resolving at once, a final result to all."""
    for _turn in range(4):
        for spec in RACERS:
            order(racecraft, spec.seat, "CRUISE" if _turn and spec.seat == "roger" else "USE 1")
        racecraft.service.tick()
        racecraft.service.send()
    racecraft.service.tick()
    racecraft.service.send()
    turns = turn_rows(racecraft)
    assert [t.number for t in turns] == [1, 2, 3, 4, 5]
    assert all(t.resolved_at is not None for t in turns)
    for spec in RACERS:
        final = last_to(racecraft, spec.address)
        assert "Final result" in str(final["Subject"])
    answer = order(racecraft, "seb", "USE 1")
    assert "over" in str(answer["Subject"])


def test_no_line_of_any_mail_the_bot_sends_parses_as_an_order(racecraft: TestApp) -> None:
    """testing.md: never put a line that parses as a valid order into the bot's own mail (Outlook quotes without '>')."""
    for _turn in range(4):
        for spec in RACERS:
            order(racecraft, spec.seat, "OVERTAKE" if _turn else "USE 3")
        order(racecraft, "seb", "HELP")
        order(racecraft, "seb", "STATUS")
        racecraft.service.tick()
        racecraft.service.send()
    racecraft.service.tick()
    racecraft.service.send()
    game = find_game("racecraft")
    states = [game.load_state(t.state) for t in turn_rows(racecraft)]
    checked = 0
    for msg in racecraft.mailer.messages():
        for line in body_of(msg).splitlines():
            for state in states:
                if "kelly" in game.expected_players(state):
                    assert not game.parse_orders(state, "kelly", line).orders, f"{line!r} parses as an order"
                    checked += 1
    assert checked > 1000


@pytest.mark.both_databases  # stored times and zones
def test_deadline_shown_in_each_players_zone_moves_with_dst(app: TestApp) -> None:
    """The deadline in each recipient's zone; a daily 18:00 Europe/London deadline stays 18:00 local."""
    from datetime import UTC, datetime

    from bot.games.turns import create_game

    app.clock.set(datetime(2026, 3, 28, 10, 0, tzinfo=UTC))
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="dst",
            players=RACERS,
            gm_address=GM,
            deadline="daily 18:00",
            timezone="Europe/London",
            seed=1,
        )
    app.service.send()
    kelly = str(last_to(app, ADDRESS["kelly"])["Subject"])
    assert "Sun 29 Mar 2026 18:00 BST" in kelly, kelly  # the day the clocks go forward
    steve = str(last_to(app, ADDRESS["steve"])["Subject"])
    assert "13:00 EDT" in steve


def test_a_bounce_maps_back_to_the_mail_and_seat_it_answers(racecraft: TestApp) -> None:
    """A VERP envelope sender so that bounces map back to the seat; a bounce is never answered."""
    from bot.models import Outbox as OutboxRow

    with racecraft.db.read() as session:
        sheet = session.scalars(select(OutboxRow).where(OutboxRow.recipient == ADDRESS["steve"])).first()
        assert sheet is not None
        envelope = sheet.envelope_from
    assert envelope.startswith("flagman+bounce-") and envelope.endswith("@example.org")
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    racecraft.mailer.clear()
    dsn = (
        f"From: MAILER-DAEMON@mx.example.org\nTo: {envelope}\nSubject: Undelivered Mail Returned to Sender\n"
        "Message-ID: <dsn-1@mx.example.org>\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\n\n"
        "--b\nContent-Type: text/plain\n\nUser unknown\n--b--\n"
    )
    inbox.deliver(dsn)
    racecraft.service.poll()
    racecraft.service.send()
    assert racecraft.mailer.sent == []
    with racecraft.db.read() as session:
        row = session.scalars(select(InboundMessage)).one()
        assert row.status == InboundStatus.IGNORED
        assert ADDRESS["steve"] in row.detail and "turn_sheet" in row.detail
        assert row.game_id is not None


def test_after_replace_the_old_players_reply_address_no_longer_works(racecraft: TestApp) -> None:
    """REPLACE hands the seat to a new player; the reply address the old one kept stops working."""
    from bot.commands import registry as gm_commands

    old_sheet = last_to(racecraft, ADDRESS["kelly"])
    with racecraft.db.transaction() as session:
        gm_commands.execute_words(
            racecraft.shell, session, "REPLACE", "rc1", ["kelly", "kim@example.org", "Kim"], actor=GM, via="cli"
        )
    racecraft.service.send()
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    inbox.deliver(reply_to(old_sheet, "USE 10", sender=ADDRESS["kelly"]))
    racecraft.service.poll()
    new_sheet = last_to(racecraft, "kim@example.org")
    assert new_sheet["Reply-To"].addresses[0].addr_spec != old_sheet["Reply-To"].addresses[0].addr_spec
    inbox.deliver(reply_to(new_sheet, "USE 2", sender="kim@example.org"))
    racecraft.service.poll()
    with racecraft.db.read() as session:
        texts = session.scalars(select(OrderSubmission.text)).all()
    assert texts == ["USE 2"], "only the new holder's order counts"


def test_answers_to_mail_through_the_gms_reply_address_go_to_the_registered_gm(racecraft: TestApp) -> None:
    """mail-interface.md: every answer goes to the registered address, never to whoever sent the mail;
    GM commands need the GM's signed address *and* the GM's registered From (or the GM password)."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    racecraft.mailer.clear()
    gm_reply_to = signed_address(BOT, "test-site-secret", "rc1", "gm")
    inbox.deliver(plain_mail("someone@elsewhere.example", gm_reply_to, "Re: [rc1]", "what is this line"))
    inbox.deliver(plain_mail(GM, gm_reply_to, "Re: [rc1]", "what is this line"))
    racecraft.service.poll()
    racecraft.service.send()
    assert racecraft.mailer.messages("someone@elsewhere.example") == []
    refused, answered = racecraft.mailer.messages(GM)[-2:]
    assert "not accepted" in str(refused["Subject"])
    assert "Reply-To" in refused and "rc1.gm." in str(refused["Reply-To"])  # to the GM: the GM's own address
    assert "not understood" in str(answered["Subject"])


def test_a_mail_gets_one_answer_in_sections_done_first(racecraft: TestApp) -> None:
    """mail-interface.md: "One answer per mail, in sections as Mailman 3 answers commands: what was
    done, what was not understood (with the reason)". HELP, ORDERS, a command with bad arguments
    and a set of orders in one mail: one letter, to the seat's registered address through its
    signed reply address, done first, then not done; the orders are on file."""
    mailer = racecraft.mailer
    assert isinstance(mailer, FakeMailer)
    before = len(mailer.messages(ADDRESS["kelly"]))
    answer = order(racecraft, "kelly", "HELP\nORDERS\nJOIN\nUSE 4")
    assert len(mailer.messages(ADDRESS["kelly"])) == before + 1, "one answer to the mail"
    assert str(answer["Subject"]) == "[rc1] Answers to your mail", "[ERROR] only when nothing was done"
    assert answer["Reply-To"].addresses[0].addr_spec == signed_address(BOT, "test-site-secret", "rc1", "kelly")
    assert answer["Auto-Submitted"] == "auto-replied" and answer["In-Reply-To"]
    body = body_of(answer)
    assert body.startswith("Hello Kelly,")
    done, _, not_done = body.partition("== Not done ==")
    assert [line for line in done.splitlines() if line.startswith("--- ")] == [
        "--- Help ---",
        "--- Your orders on file ---",
        "--- Orders received for Turn 1 of 5: start ---",
    ]
    assert [line for line in not_done.splitlines() if line.startswith("--- ")] == ["--- Incomplete command: JOIN ---"]
    assert '"JOIN": write JOIN <game> [your name]' in not_done
    assert body.count("Hello ") == 1 and body.replace("\r\n", "\n").count("\n-- \n") == 1
    with racecraft.db.read() as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert row is not None and row.status == InboundStatus.APPLIED and row.detail == "orders"
        assert session.scalars(select(OrderSubmission.text).order_by(OrderSubmission.id.desc())).first() == "USE 4"


def test_a_mail_with_one_thing_to_answer_gets_that_answer_as_it_is(racecraft: TestApp) -> None:
    """One answer per mail: where the mail made one answer, it is that letter itself (no sections)."""
    assert str(order(racecraft, "seb", "STATUS")["Subject"]).startswith("[rc1] Status:")
    assert str(order(racecraft, "seb", "USE 2")["Subject"]) == "[rc1] Orders received for Turn 1 of 5: start"


def test_what_a_batch_remembers_is_forgotten_when_a_mail_changes_the_game(racecraft: TestApp) -> None:
    """Work per batch (performance.md): the games, states and submissions a batch reads are read
    once -- but a GM command in the same batch (here PROCESS: turn 1 resolves) changes them, and
    an order mail after it in the batch goes to turn 2, as it would in a batch of its own. (The
    later mail is a new mail to the seat's address, not a reply to turn 1's sheet: a reply to
    that sheet answers turn 1, over by then, and is refused as too late.)"""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    gm_sheet = last_to(racecraft, GM)
    seb_sheet = last_to(racecraft, ADDRESS["seb"])
    inbox.deliver(reply_to(seb_sheet, "USE 2", sender=ADDRESS["seb"], message_id="<b1@x>"))
    inbox.deliver(reply_to(gm_sheet, "PROCESS rc1", sender=GM, message_id="<b2@x>"))
    seat_address = str(seb_sheet["Reply-To"])
    inbox.deliver(plain_mail(ADDRESS["seb"], seat_address, "rc1", "OVERTAKE", message_id="<b3@x>"))
    report = racecraft.service.poll()
    assert report.fetched == 3 and report.outcomes == {InboundStatus.APPLIED: 3}
    with racecraft.db.read() as session:
        mail_orders = session.execute(
            select(Turn.number, OrderSubmission.text)
            .join(Turn, Turn.id == OrderSubmission.turn_id)
            .where(OrderSubmission.source == "mail")
            .order_by(OrderSubmission.id)
        ).all()
    assert [tuple(r) for r in mail_orders] == [(1, "USE 2"), (2, "OVERTAKE")]


def test_a_batch_of_orders_loads_the_seats_that_wrote_and_no_other(racecraft: TestApp) -> None:
    """Work per batch: the batch reads its games, and of their seats those that wrote
    (with their players and their orders on file), in one query each -- not every seat and
    player of every game it touches -- and nothing more per mail."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    loaded: list[str] = []

    def on_load(seat: Seat, _context: object) -> None:
        loaded.append(seat.name)

    for seat, text in (("seb", "USE 2"), ("kelly", "USE 1"), ("seb", "USE 3")):
        inbox.deliver(reply_to(last_to(racecraft, ADDRESS[seat]), text, sender=ADDRESS[seat]))
    event.listen(Seat, "load", on_load)
    try:
        report = racecraft.service.poll()
    finally:
        event.remove(Seat, "load", on_load)
    assert report.outcomes == {InboundStatus.APPLIED: 3}
    assert len(RACERS) > 2 and sorted(loaded) == ["kelly", "seb"]
    with racecraft.db.read() as session:
        seb = session.scalars(
            select(OrderSubmission.text).join(Seat).where(Seat.name == "seb").order_by(OrderSubmission.id)
        ).all()
    assert seb == ["USE 2", "USE 3"]


@pytest.mark.both_databases  # rollback of a batch
def test_a_batch_with_a_mail_that_fails_is_done_again_mail_by_mail(
    racecraft: TestApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A savepoint only when a mail fails: the batch runs in one transaction; when a mail
    raises, all of it is rolled back and done again with a savepoint per mail, so the others are
    applied exactly once (one confirmation each) and the failing one is quarantined."""
    calls = orders_fail_for(monkeypatch, "kelly")
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    for seat, text in (("seb", "USE 2"), ("kelly", "USE 1"), ("steve", "USE 3")):
        inbox.deliver(reply_to(last_to(racecraft, ADDRESS[seat]), text, sender=ADDRESS[seat]))
    with racecraft.db.read() as session:
        before = session.scalar(select(func.count()).select_from(Outbox)) or 0
    report = racecraft.service.poll()
    assert calls == ["seb", "kelly", "seb", "kelly", "steve"], "first in one go, then again mail by mail"
    assert report.outcomes == {InboundStatus.APPLIED: 2, InboundStatus.QUARANTINED: 1}
    with racecraft.db.read() as session:
        assert (
            session.scalar(select(func.count()).select_from(OrderSubmission).where(OrderSubmission.source == "mail"))
            == 2
        )
        confirmations = (
            session.scalar(select(func.count()).select_from(Outbox).where(Outbox.kind == "confirmation")) or 0
        )
        assert confirmations == 2 and (session.scalar(select(func.count()).select_from(Outbox)) or 0) - before == 2


def test_commands_in_a_batch_see_the_orders_of_earlier_mails_of_the_same_batch(racecraft: TestApp) -> None:
    """Work per batch: the rows of a batch are written at its end, not before every
    query -- but a command reads what the mails before it in the batch did, as it would in a
    batch of its own (mail-interface.md: ORDERS shows what is on file, STATUS who has ordered)."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    inbox.deliver(reply_to(last_to(racecraft, ADDRESS["seb"]), "USE 2", sender=ADDRESS["seb"], message_id="<o1@x>"))
    inbox.deliver(reply_to(last_to(racecraft, ADDRESS["seb"]), "ORDERS", sender=ADDRESS["seb"], message_id="<o2@x>"))
    inbox.deliver(
        reply_to(last_to(racecraft, ADDRESS["kelly"]), "STATUS", sender=ADDRESS["kelly"], message_id="<o3@x>")
    )
    report = racecraft.service.poll()
    assert report.fetched == 3 and report.outcomes == {InboundStatus.APPLIED: 3}
    racecraft.service.send()
    assert "> USE 2" in body_of(last_to(racecraft, ADDRESS["seb"]))
    assert "Orders in from: seb" in body_of(last_to(racecraft, ADDRESS["kelly"]))


@pytest.mark.both_databases  # time windows in queries
def test_the_rate_limit_counts_the_earlier_mails_of_the_same_batch(racecraft: TestApp) -> None:
    """The per-sender limit ([limits] mails_per_sender_per_hour) counts every mail of the last
    hour, those earlier in the same batch too, although they are written only at its end: a
    stranger's mail after `limit` auto-replies from the same address in one batch is over it,
    logged as rate-limited, and not answered."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    racecraft.mailer.clear()
    limit = racecraft.settings.limits.mails_per_sender_per_hour
    for n in range(limit):
        inbox.deliver(
            plain_mail(
                "someone@else.example", BOT, f"away {n}", "I am away", headers={"Auto-Submitted": "auto-replied"}
            )
        )
    inbox.deliver(plain_mail("someone@else.example", BOT, "hello", "what is this?"))
    report = racecraft.service.poll(max_batches=1)
    assert report.fetched == limit + 1
    racecraft.service.send()
    assert racecraft.mailer.messages("someone@else.example") == []
    with racecraft.db.read() as session:
        last = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert last is not None and last.detail.startswith("rate limit")


@pytest.mark.both_databases  # time windows in queries
def test_a_seats_loop_limit_counts_its_mails_of_earlier_batches(racecraft: TestApp) -> None:
    """The loop limit ([limits] mails_per_sender_per_hour) of a seat writing to its signed reply
    address counts its mails of the last hour, those of earlier batches too (read for every seat
    the batch's addresses name when the batch starts): after `limit` mails in one batch, its
    next mail two minutes later, in another batch, is acted on but not answered; once the hour
    has passed it is answered again."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    limit = racecraft.settings.limits.mails_per_sender_per_hour
    sheet = last_to(racecraft, ADDRESS["kelly"])

    def send(n: int) -> int:
        """`n` mails of kelly's in one batch; how many answers she got."""
        before = len(racecraft.mailer.messages(ADDRESS["kelly"]))
        for _ in range(n):
            inbox.deliver(reply_to(sheet, "USE 2", sender=ADDRESS["kelly"]))
        assert racecraft.service.poll(max_batches=1).fetched == n
        racecraft.service.send()
        return len(racecraft.mailer.messages(ADDRESS["kelly"])) - before

    assert send(limit) == limit
    racecraft.clock.advance(minutes=2)
    assert send(1) == 0, "the mails of the batch before were not counted"
    racecraft.clock.advance(minutes=59)
    assert send(1) == 1, "mails over an hour old were counted"
    with racecraft.db.read() as session:
        kept = session.scalar(
            select(func.count()).select_from(OrderSubmission).where(OrderSubmission.text.contains("USE 2"))
        )
    assert kept == limit + 2  # every mail acted on, answered or not


@pytest.mark.both_databases  # what a commit keeps
def test_the_next_batch_is_read_while_one_is_handled_and_a_failed_read_loses_nothing(
    racecraft: TestApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-ahead (work per batch): while a batch is handled the next one is read;
    a batch is moved out only once that read is over. A read that fails is raised after the
    batch in hand is committed and moved: nothing is handled twice, nothing is lost."""
    inbox = racecraft.inbox
    assert isinstance(inbox, FakeInbox)
    reads: list[tuple[int, frozenset[str]]] = []
    real = inbox.fetch_new

    def fetch_new(limit: int = 100, *, skip: Collection[str] = frozenset()) -> list[RawMail]:
        reads.append((len(inbox.pending), frozenset(skip)))
        if len(reads) == 3:
            raise ConnectionError("the IMAP server went away")
        return real(limit, skip=skip)

    monkeypatch.setattr(inbox, "fetch_new", fetch_new)
    batch = racecraft.settings.inbox.batch_size
    for n in range(batch + 1):
        inbox.deliver(plain_mail(f"p{n}@players.test", BOT, "hello", "HELP", message_id=f"<ra{n}@players.test>"))
    with pytest.raises(ConnectionError):
        racecraft.service.poll()
    first = reads[1][1]
    assert len(first) == batch and reads[2][1] == {next(iter(set(inbox.folders[Folder.PROCESSED]) - first))}
    assert reads[1][0] == batch + 1, "the second batch was read before the first was moved"
    assert len(inbox.folders[Folder.PROCESSED]) == batch + 1 and not inbox.pending
    report = racecraft.service.poll()
    assert report.fetched == 0
    with racecraft.db.read() as session:
        assert session.scalar(select(func.count()).select_from(InboundMessage)) == batch + 1


def test_orders_sent_in_several_mails_of_one_batch_add_up_as_in_separate_batches(app: TestApp) -> None:
    """speedphreakz.md §5: "A later mail replaces what it names ... and keeps the rest". The batch
    works a seat's orders on file out once and keeps them up to date as its mails come:
    a second mail in the same batch is merged with the first, as it would be a poll later."""
    from bot.games.turns import PlayerSpec, create_game, current_state
    from bot.store import find_game_row
    from rules.speedphreakz.resolve import COLOURS

    players = tuple(PlayerSpec(f"p{i}", f"p{i}@example.org", f"P{i}") for i in range(2))
    with app.db.transaction() as session:
        create_game(
            app.shell, session, kind="speedphreakz", name="sp1", players=players, gm_address=GM, deadline="48h", seed=7
        )
        game = find_game_row(session, "sp1")
        assert game is not None
        rules, state, _turn = current_state(session, game)
        start = rules.format_orders(
            [o for o in rules.default_orders(state, "p0") if "START" in rules.format_orders([o])]
        )
    app.service.send()
    assert start.startswith("START")
    inbox = app.inbox
    assert isinstance(inbox, FakeInbox)
    sheet = app.mailer.messages("p0@example.org")[-1]
    inbox.deliver(reply_to(sheet, f"COLOUR {COLOURS[1]}", sender="p0@example.org", message_id="<sp1@x>"))
    inbox.deliver(reply_to(sheet, start, sender="p0@example.org", message_id="<sp2@x>"))
    report = app.service.poll()
    assert report.outcomes == {InboundStatus.APPLIED: 2}
    app.service.send()
    second = body_of(app.mailer.messages("p0@example.org")[-1])
    assert f"COLOUR {COLOURS[1]}" in second and start in second, second


def test_a_friendly_order_mail_is_confirmed_without_an_error(racecraft: TestApp) -> None:
    """ "Hi Flagman, / USE 3 / Cheers, Steve" is applied, and its answer is no
    `[ERROR] ... (3 lines not understood)`; a line refused beside orders taken is named in the
    subject, still without "[ERROR]": that is for a mail of which nothing was done."""
    answer = order(racecraft, "seb", "Hi Flagman,\n\nUSE 3\n\nCheers,\nSteve")
    assert not answer["Subject"].startswith("[ERROR]"), answer["Subject"]
    assert "not understood" not in answer["Subject"] and "USE 3" in body_of(answer)
    refused = order(racecraft, "seb", "Hi Flagman,\n\nUSE 3\nOVERTAKE NOW\n\nCheers,\nSteve")
    assert str(refused["Subject"]) == "[rc1] Orders received for Turn 1 of 5: start (1 line not understood)"


def test_a_typo_gets_a_did_you_mean_with_the_syntax(racecraft: TestApp) -> None:
    """ "USR 3" and "STAUTS" end in more than "not understood": the answer says what
    the line most likely meant, with its syntax."""
    answer = body_of(order(racecraft, "seb", "USR 3"))
    assert "did you mean USE?" in answer and "USE n" in answer
    answer = body_of(order(racecraft, "kelly", "STAUTS"))
    assert "did you mean STATUS?" in answer


def test_early_resolution_is_stated_where_the_deadline_is_when_it_is_on(racecraft: TestApp) -> None:
    """Early resolution is told: with it on (the game's setting),
    the turn sheet and the confirmation say that the turn resolves as soon as every order is
    in; with it off, they do not."""
    sheet = body_of(last_to(racecraft, ADDRESS["seb"]))
    assert "resolves as soon as every order is in" in sheet
    confirmation = body_of(order(racecraft, "seb", "USE 2"))
    assert "resolves as soon as every order is in" in confirmation and "too late" in confirmation
    from bot.store import find_game_row

    with racecraft.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.early_resolution = False
    assert "resolves as soon as every order is in" not in body_of(order(racecraft, "seb", "USE 3"))


def test_a_player_without_a_zone_gets_the_games_zone_not_the_sites(app: TestApp) -> None:
    """A player registered without a zone gets the game's zone, not the site's, so a
    deadline reads the same for a player and for the GM; one who gave a zone keeps it."""
    from bot.games.turns import PlayerSpec, create_game

    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            gm_address=GM,
            deadline="48h",
            timezone="America/New_York",
            players=(
                PlayerSpec("kim", "kim@example.org", "Kim"),
                PlayerSpec("lou", "lou@example.org", "Lou", "Asia/Tokyo"),
                *(PlayerSpec(f"p{n}", f"p{n}@example.org", f"P{n}") for n in range(3)),
            ),
        )
    app.service.send()
    assert app.settings.bot.timezone != "America/New_York"
    assert "Times are shown in America/New_York." in body_of(last_to(app, "kim@example.org"))
    assert "Times are shown in Asia/Tokyo." in body_of(last_to(app, "lou@example.org"))
