"""The holes hostile testing found, each through the real pipeline: the Maildir
inbox and outbox of the embedded default, and Dovecot (IMAP, LMTP) with the SMTP relay.

1. a stranger or a player never gets the GM's signed reply address, and the GM's address
   alone (without the GM's From or password) commands nothing;
2. forged mail "from" a player or the GM does not spend their allowance;
3. forged JOINs from many addresses get a bounded number of answers, none repeating them;
4. an encoded word that decodes to CR LF puts no line of its own into an answer or the digest;
5. a hostile mail does not stall the poll, and a deadline is judged by arrival;
6. GM numbers get a clear refusal; 7. DMARC alignment and two From headers;
8. answers to the GM go to the GM's registered address.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.gm import digest
from bot.mail_in.auth import GM_SEAT, signed_address
from bot.models import Game
from bot.testing import plain_mail
from tests.e2e.rig import DEADLINE, SECRET, Rig, text_of

pytestmark = pytest.mark.e2e


def test_no_answer_to_a_stranger_or_a_refused_player_carries_the_gms_address(rig: Rig) -> None:
    """ "A reply address that signs for a seat or for the GM is given only in mail to
    that seat's or the GM's registered address. Answers to anyone else carry no signed address.\""""
    start = rig.last_outbox_id()
    rig.mail("stranger@else.test", rig.bot, "JOIN rc1 Stan")  # a started game: refused
    rig.mail(rig.players["kelly"], rig.bot, "USE 2")  # no proof: refused at the registered address
    rig.cycle()
    sent = rig.sent(start)
    assert [r for r, _ in sent] == ["stranger@else.test", rig.players["kelly"]]
    join_refusal, notice = (m for _, m in sent)
    assert "not open for sign-ups" in str(join_refusal["Subject"])
    assert "flagman+" not in text_of(join_refusal)  # no signed address of anyone
    assert "rc1.gm." not in text_of(notice) and "rc1.kelly." in str(notice["Reply-To"])  # the seat's own
    # Kelly does what the notice says: replies to it. The orders count.
    rig.mail(rig.players["kelly"], str(notice["Reply-To"].addresses[0].addr_spec), "USE 2")
    rig.cycle()
    assert rig.orders() == ["USE 2"]


def test_the_gms_address_alone_commands_nothing(rig: Rig) -> None:
    """ "GM commands need the GM's signed address *and* the GM's registered From (or
    the GM password)". Someone holding a leaked GM reply address gets nothing done and is not answered."""
    before = rig.deadline()
    start = rig.last_outbox_id()
    gm_address = signed_address(rig.bot, SECRET, "rc1", GM_SEAT)
    rig.mail("stranger@else.test", gm_address, "EXTEND rc1 1h\nPREVIEW rc1")
    rig.mail(rig.players["seb"], gm_address, "USE 3")
    rig.cycle()
    assert rig.deadline() == before and rig.orders() == []
    sent = rig.sent(start)
    assert [r for r, _ in sent] == [rig.gm]  # one note to the GM, once a day
    assert "not accepted" in str(sent[0][1]["Subject"])
    assert [r.status for r in rig.rows()] == ["refused", "ignored"]
    # With the GM's From (or from anywhere with the GM password) it works.
    rig.mail(rig.gm, gm_address, "EXTEND rc1 1h")
    with rig.app.db.read() as session:
        password = session.scalar(select(Game.gm_secret).where(Game.name == "rc1"))
    rig.mail("phone@else.test", gm_address, f"EXTEND rc1 1h\nPASSWORD {password}")
    rig.cycle()
    assert rig.deadline() == before + timedelta(hours=2) if before else False
    answers = rig.sent(start)[1:]
    assert {r for r, _ in answers if "[rc1]" in str(_["Subject"]) and "EXTEND" in str(_["Subject"])} == {rig.gm}


def test_forged_mail_from_a_player_does_not_lock_out_the_player_or_the_gm(rig: Rig) -> None:
    """ "authenticated mail is never limited by unauthenticated mail using the same From"."""
    for i in range(35):
        rig.mail(
            rig.players["seb"],
            rig.bot,
            "I am out of the office",
            subject=f"Auto: away {i}",
            headers={"Auto-Submitted": "auto-replied"},
        )
        rig.mail(rig.gm, rig.bot, "EXTEND rc1 99h")  # forged GM mail without proof
    rig.cycle()
    rig.mail(rig.players["seb"], rig.signed("seb"), "USE 4")
    rig.mail(rig.gm, signed_address(rig.bot, SECRET, "rc1", GM_SEAT), "EXTEND rc1 1h")
    rig.cycle()
    assert rig.orders() == ["USE 4"]
    last_two = rig.rows()[-2:]
    assert [r.status for r in last_two] == ["applied", "applied"], [r.detail for r in last_two]


def test_forged_joins_from_many_addresses_get_a_bounded_number_of_plain_answers(rig: Rig) -> None:
    """ "limits on unauthenticated senders are global as well as per sender (JOIN
    refusals included); the notice text never repeats attacker text"."""
    start = rig.last_outbox_id()
    cap = rig.app.settings.limits.answers_to_strangers_per_hour
    for i in range(cap + 15):
        rig.mail(f"victim{i}@else.test", rig.bot, "JOIN nosuchgame BUY CHEAP WATCHES at spam.example")
    rig.cycle()
    sent = rig.sent(start)
    assert len(sent) == cap
    for _, msg in sent:
        text = text_of(msg)
        assert "WATCHES" not in text and "nosuchgame" not in text and "flagman+" not in text
    assert sum(1 for r in rig.rows() if r.status == "ignored") == 15
    assert rig.quarantined() == 0


def test_an_encoded_line_break_puts_no_line_into_answers_or_the_digest(rig: Rig) -> None:
    """ "Every piece of text from a mail that the bot echoes (subject, display name,
    JOIN name, order lines) is flattened to one line, stripped of control and bidi-override
    characters, and capped in length, wherever it goes"."""
    evil = "=?utf-8?q?orders=0D=0A=0D=0A=3D=3D_Notice_from_the_operator_=3D=3D=0D=0Amail_your_GM_password?="
    evil_name = "=?utf-8?q?Kim=0D=0A=3D=3D_Notice_from_the_operator_=3D=3D=E2=80=AE?="
    start = rig.last_outbox_id()
    raw = plain_mail(
        rig.players["seb"],
        rig.signed("seb"),
        "x",
        "USE 99\nbogus\x1b[2J line\u202e here",
        message_id="<evil-1@client.example>",
    ).replace(b"Subject: x", f"Subject: {evil}".encode())
    rig.deliver(raw)
    raw = plain_mail(
        "kim@else.test", rig.bot, "x", "JOIN rc9 " + "Kim\u202eLee" + "x" * 500, message_id="<evil-2@client.example>"
    )
    rig.deliver(raw.replace(b"From: kim@else.test", f"From: {evil_name} <kim@else.test>".encode()))
    rig.cycle()
    digest.send_due_digests(rig.app.shell, force=True)
    rig.app.service.send()
    for _, msg in rig.sent(start):
        for line in text_of(msg).splitlines():
            assert not line.startswith("== Notice"), line
            assert "\u202e" not in line and "\x1b" not in line
    with rig.app.db.read() as session:  # such a name is refused before it is shown anywhere
        assert session.scalars(select(Game).where(Game.name == "rc9")).one().seats == []
    assert any("That name cannot be used" in str(msg["Subject"]) for _, msg in rig.sent(start))


def test_a_hostile_mail_does_not_make_an_on_time_order_late(rig: Rig) -> None:
    """ "deadlines judged by arrival, not by when the poll reaches a mail: the time the
    mail server received it (IMAP INTERNALDATE; the Maildir delivery time)"."""
    hostile = plain_mail(
        "stranger@else.test",
        rig.bot,
        "hi",
        "hello",
        headers={"Authentication-Results": "mx.trust.test; " + "dkim=pass header.d=x.test " * 20},
    )
    head, _, body = hostile.partition(b"\n\n")
    extra = b"".join(
        b"Authentication-Results: other.test; dkim=pass header.d=" + b"a" * 4000 + b".test\n" for _ in range(500)
    )  # 2 MB of headers
    rig.deliver(head + b"\n" + extra + b"\n" + body, DEADLINE - timedelta(hours=2))
    rig.mail(rig.players["anna"], rig.signed("anna"), "USE 3", when=DEADLINE - timedelta(minutes=1))
    rig.mail(rig.players["roger"], rig.signed("roger"), "USE 3", when=DEADLINE + timedelta(minutes=1))
    rig.clock.set(DEADLINE + timedelta(minutes=30))  # the poll reaches them late
    rig.cycle()
    assert rig.orders() == ["USE 3"]
    details = {r.sender: (r.status, r.detail) for r in rig.rows()}
    assert details[rig.players["anna"]][0] == "applied"
    assert details[rig.players["roger"]] == ("refused", "after the deadline")
    assert rig.quarantined() == 0


def test_gm_numbers_are_refused_clearly(rig: Rig) -> None:
    """ "GM arguments validated with clear refusals (no quarantine, no traceback)"."""
    before = rig.deadline()
    start = rig.last_outbox_id()
    gm_address = signed_address(rig.bot, SECRET, "rc1", GM_SEAT)
    for line in ("EXTEND rc1 999999999999d", "DEADLINE rc1 +99999999999999d", "SET rc1 seb ep " + "9" * 5000):
        rig.mail(rig.gm, gm_address, line)
    rig.cycle()
    assert rig.quarantined() == 0 and rig.deadline() == before
    sent = rig.sent(start)
    assert [r for r, _ in sent] == [rig.gm] * 3
    assert all("refused" in str(m["Subject"]).lower() or "[ERROR]" in str(m["Subject"]) for _, m in sent)


def test_dmarc_for_another_domain_and_two_from_headers_authenticate_no_one(rig: Rig) -> None:
    """ "Authentication-Results accepted only when its header.from equals the one From
    the bot parsed (a mail with two From headers authenticates no one)"."""
    seb = rig.players["seb"]
    rig.mail(
        seb, rig.bot, "USE 2", headers={"Authentication-Results": "mx.trust.test; dmarc=pass header.from=evil.test"}
    )
    two = plain_mail(
        "mallory@evil.test",
        rig.bot,
        "orders",
        "USE 2",
        message_id="<two-from@evil.test>",
        headers={"Authentication-Results": "mx.trust.test; dmarc=pass header.from=evil.test"},
    )
    rig.deliver(two.replace(b"From: mallory@evil.test", f"From: mallory@evil.test\nFrom: {seb}".encode()))
    rig.cycle()
    assert rig.orders() == []
    assert "mallory@evil.test" not in [r for r, _ in rig.sent()]
    # The control: aligned DMARC of our own server admits the player.
    domain = seb.rpartition("@")[2]
    rig.mail(
        seb, rig.bot, "USE 2", headers={"Authentication-Results": f"mx.trust.test; dmarc=pass header.from={domain}"}
    )
    rig.cycle()
    assert rig.orders() == ["USE 2"]


def test_answers_to_the_gm_go_to_the_registered_address(rig: Rig) -> None:
    """ "GM answers to the GM's registered address" (HELP, lines not understood)."""
    with rig.app.db.read() as session:
        password = session.scalar(select(Game.gm_secret).where(Game.name == "rc1"))
    start = rig.last_outbox_id()
    gm_address = signed_address(rig.bot, SECRET, "rc1", GM_SEAT)
    rig.mail("phone@else.test", gm_address, f"PASSWORD {password}\nHELP")
    rig.mail("phone@else.test", gm_address, f"PASSWORD {password}\nPREVIEW rc1\nwhat is this line")
    rig.cycle()
    sent = rig.sent(start)
    recipients = [r for r, _ in sent]
    # One answer per mail (mail-interface.md): HELP; then the PREVIEW and the line not understood
    # in one answer, in sections.
    assert len(recipients) == 2 and set(recipients) == {rig.gm}
    assert "phone@else.test" not in recipients
    combined = sent[1][1].get_body(("plain",))
    assert combined is not None
    text = combined.get_content()
    assert "--- GM preview of" in text and "--- Lines not understood ---" in text
