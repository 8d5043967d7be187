"""SmtpMailer against a real SMTP server (aiosmtpd) that misbehaves on request."""

from __future__ import annotations

import itertools
import ssl
from collections.abc import Iterator
from dataclasses import replace

import pytest

from bot.mail_out.mailer import OutgoingMail, SendStatus
from bot.mail_out.smtp import SmtpMailer
from tests.servers import Dovecot, Fault, SmtpSink, free_port

pytestmark = pytest.mark.e2e

_serial = itertools.count(1)


def outgoing(to: str = "alice@players.test", n: int | None = None) -> OutgoingMail:
    n = next(_serial) if n is None else n
    mid = f"<results-{n}@flagman.test>"
    data = (
        f"From: Flagman <flagman@flagman.test>\r\nTo: {to}\r\nSubject: Turn {n}\r\n"
        f"Message-ID: {mid}\r\n\r\nYour car moved 3 spaces.\r\n"
    ).encode()
    # VERP: the service encodes the outbox row in the envelope sender.
    return OutgoingMail(mid, f"bounces+{n}@flagman.test", (to,), data)


@pytest.fixture
def sink(smtp_sink: SmtpSink) -> SmtpSink:
    smtp_sink.reset()
    return smtp_sink


@pytest.fixture
def mailer(sink: SmtpSink) -> SmtpMailer:
    return SmtpMailer(sink.host, sink.port, security="none", timeout=10)


def test_a_batch_is_sent_over_one_connection_with_the_given_envelope(sink: SmtpSink, mailer: SmtpMailer) -> None:
    """Three mails: all SENT, in order, one SMTP session, envelope and bytes as given."""
    mails = [outgoing(f"p{i}@players.test") for i in range(3)]
    results = mailer.send(mails)
    assert [(r.message_id, r.status) for r in results] == [(m.message_id, SendStatus.SENT) for m in mails]
    received = sink.messages
    assert sink.greetings == 1
    assert [r.message_id for r in received] == [m.message_id for m in mails]
    assert [(r.mail_from, r.rcpt_tos) for r in received] == [(m.envelope_from, m.recipients) for m in mails]
    assert all(m.data.rstrip(b"\r\n") in r.data for m, r in zip(mails, received, strict=True))
    assert mailer.send([]) == []


@pytest.mark.parametrize(
    ("stage", "reply", "expected"),
    [
        ("rcpt", "451 4.3.0 Try again later", SendStatus.TEMPORARY),
        ("rcpt", "550 5.1.1 No such user", SendStatus.PERMANENT),
        ("data", "452 4.3.1 Insufficient storage", SendStatus.TEMPORARY),
        ("data", "554 5.6.0 Message rejected", SendStatus.PERMANENT),
        ("mail", "451 4.7.1 Greylisted", SendStatus.TEMPORARY),
        ("mail", "553 5.7.1 Sender not allowed", SendStatus.PERMANENT),
    ],
)
def test_a_refusal_decides_that_mail_only(
    sink: SmtpSink, mailer: SmtpMailer, stage: str, reply: str, expected: SendStatus
) -> None:
    """4xx -> TEMPORARY, 5xx -> PERMANENT, for the refused mail; the rest of the batch goes."""
    mails = [outgoing(f"p{i}@players.test") for i in range(3)]
    if stage == "mail":
        sink.fail_mail(reply, times=1)
        refused = 0
    else:
        add = sink.fail_rcpt if stage == "rcpt" else sink.fail_data
        add(reply, recipients=["p1@players.test"], times=None)
        refused = 1
    results = mailer.send(mails)
    statuses = [r.status for r in results]
    assert statuses[refused] is expected
    assert reply.split()[0] in results[refused].detail
    assert [s for i, s in enumerate(statuses) if i != refused] == [SendStatus.SENT] * 2
    assert sorted(m.message_id or "" for m in sink.messages) == sorted(
        m.message_id for i, m in enumerate(mails) if i != refused
    )


@pytest.mark.parametrize("stage", ["mail", "rcpt", "data"])
def test_a_421_closing_the_connection_sends_the_same_mail_again_on_a_new_one(
    sink: SmtpSink, mailer: SmtpMailer, stage: str
) -> None:
    """RFC 5321 3.8: a relay that answers 421 closes the channel and took nothing: the mail goes
    again at once on a new connection, and each mail arrives once."""
    mails = [outgoing(f"p{i}@players.test") for i in range(3)]
    reply = "421 4.3.2 Shutting down"
    if stage == "mail":
        sink.fail_mail(reply, times=1)
    else:
        add = sink.fail_rcpt if stage == "rcpt" else sink.fail_data
        add(reply, recipients=["p0@players.test"], times=1)
    results = mailer.send(mails)
    assert [r.status for r in results] == [SendStatus.SENT] * 3
    assert sink.greetings == 2
    assert sink.message_ids() == [m.message_id for m in mails]


def test_a_connection_lost_before_the_final_dot_sends_the_same_mail_again_on_a_new_one(
    sink: SmtpSink, mailer: SmtpMailer
) -> None:
    """Lost at RCPT (the relay holds nothing of the mail, RFC 5321 4.1.1.4): sent again at once."""
    mails = [outgoing(f"p{i}@players.test") for i in range(3)]
    sink.drop_connection("rcpt", recipients=["p1@players.test"], times=1)
    results = mailer.send(mails)
    assert [r.status for r in results] == [SendStatus.SENT] * 3
    assert sink.greetings == 2
    assert sink.message_ids() == [m.message_id for m in mails]


def test_a_connection_the_relay_closed_while_idle_is_opened_again_for_the_next_mail(
    sink: SmtpSink, mailer: SmtpMailer
) -> None:
    """The mails are taken one at a time (the drain reads a batch meanwhile): a relay that drops
    the idle connection between two mails costs a new connection, not a mail."""
    first, second = outgoing("p0@players.test"), outgoing("p1@players.test")

    def mails() -> Iterator[OutgoingMail]:
        yield first
        sink.wait_for(1)
        assert sink.drop_connections() == 1
        yield second

    results = mailer.send(mails())
    assert [r.status for r in results] == [SendStatus.SENT] * 2
    assert sink.greetings == 2
    assert sink.message_ids() == [first.message_id, second.message_id]


def test_a_dropped_connection_is_temporary_and_the_rest_of_the_batch_is_still_sent(
    sink: SmtpSink, mailer: SmtpMailer
) -> None:
    """The relay drops the connection after mail 2's final "." (it may have taken it): mail 2
    TEMPORARY (the outbox sends it again later, with its Message-ID), 1 and 3 SENT."""
    mails = [outgoing(f"p{i}@players.test") for i in range(3)]
    sink.drop_connection("data", recipients=["p1@players.test"], times=1)
    results = mailer.send(mails)
    assert [r.status for r in results] == [
        SendStatus.SENT,
        SendStatus.TEMPORARY,
        SendStatus.SENT,
    ]
    assert "connection lost" in results[1].detail
    assert [m.message_id for m in sink.messages] == [mails[0].message_id, mails[2].message_id]


# What the relay does to one mail, and the verdict the mail must get: a relay that answers 421
# (RFC 5321 3.8) or drops the connection before the final "." took nothing, so the mail goes
# again at once and arrives once; a connection lost after the final "." may have delivered it,
# so it is TEMPORARY (sent again later by the outbox, never twice here); other replies decide it.
_RELAY_DOES: dict[str, tuple[Fault | None, SendStatus]] = {
    "accepts": (None, SendStatus.SENT),
    "421 at RCPT": (Fault("rcpt", "421 4.3.2 Shutting down"), SendStatus.SENT),
    "421 after the content": (Fault("data", "421 4.3.2 Shutting down"), SendStatus.SENT),
    "drops the connection at RCPT": (Fault("rcpt", drop=True), SendStatus.SENT),
    "drops the connection after the final dot": (Fault("data", drop=True), SendStatus.TEMPORARY),
    "451 at RCPT": (Fault("rcpt", "451 4.3.0 Try again later"), SendStatus.TEMPORARY),
    "550 at RCPT": (Fault("rcpt", "550 5.1.1 No such user"), SendStatus.PERMANENT),
}


def test_whatever_the_relay_does_to_each_mail_each_gets_one_verdict_and_arrives_at_most_once(
    sink: SmtpSink,
) -> None:
    """Property: for any mix of what the relay does to each mail of one send, every mail gets one
    result, in order, the one its fault calls for; the relay holds each mail SENT exactly once
    and no other; and a closed connection costs one more only where a mail is left to send.
    (The bound on connections lost in a row is set out of reach: it has a test of its own.)"""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    mailer = SmtpMailer(sink.host, sink.port, security="none", timeout=10, max_reconnects=100)

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(sorted(_RELAY_DOES)), min_size=1, max_size=6))
    def check(doings: list[str]) -> None:
        sink.reset()
        mails = [outgoing(f"p{i}@players.test") for i in range(len(doings))]
        for mail, doing in zip(mails, doings, strict=True):
            fault = _RELAY_DOES[doing][0]
            if fault is not None:
                sink.add_fault(replace(fault, recipients=frozenset(mail.recipients)))
        results = mailer.send(iter(mails))
        assert [r.message_id for r in results] == [m.message_id for m in mails]
        assert [r.status for r in results] == [_RELAY_DOES[d][1] for d in doings]
        sent = [r.message_id for r in results if r.status is SendStatus.SENT]
        assert sink.message_ids() == sent
        # A new connection for each mail sent again, and after a connection lost past the final
        # "." when a mail is left to send.
        again = sum(1 for d in doings if _RELAY_DOES[d][1] is SendStatus.SENT and d != "accepts")
        lost = sum(1 for d in doings[:-1] if d == "drops the connection after the final dot")
        assert sink.greetings == 1 + again + lost

    check()


def test_reconnects_are_bounded_then_the_rest_is_temporary(sink: SmtpSink) -> None:
    """A relay that always drops: max_reconnects + 1 connections, each lost before the first mail
    is taken, then every mail TEMPORARY, no raise."""
    mailer = SmtpMailer(sink.host, sink.port, security="none", timeout=10, max_reconnects=1)
    sink.drop_connection("rcpt", times=None)
    results = mailer.send([outgoing() for _ in range(4)])
    assert [r.status for r in results] == [SendStatus.TEMPORARY] * 4
    assert sink.greetings == 2
    assert "dropped the connection 2 times" in results[3].detail
    assert sink.messages == []


def test_an_unreachable_relay_makes_every_mail_temporary() -> None:
    """Nobody listening: each mail TEMPORARY with the reason; check() names the relay."""
    port = free_port()
    mailer = SmtpMailer("127.0.0.1", port, security="none", timeout=5)
    results = mailer.send([outgoing(), outgoing()])
    assert [r.status for r in results] == [SendStatus.TEMPORARY] * 2
    assert all(f"127.0.0.1:{port}" in r.detail for r in results)
    problems = mailer.check()
    assert len(problems) == 1 and f"127.0.0.1:{port}" in problems[0]


def test_partly_refused_recipients_count_as_sent_with_the_refusals_noted(sink: SmtpSink, mailer: SmtpMailer) -> None:
    """Accepted for one of two recipients: SENT (a retry would duplicate), refusal noted."""
    sink.fail_rcpt("550 5.1.1 No such user", recipients=["gone@players.test"], times=None)
    mail = outgoing()
    both = OutgoingMail(mail.message_id, mail.envelope_from, ("alice@players.test", "gone@players.test"), mail.data)
    (result,) = mailer.send([both])
    assert result.status is SendStatus.SENT
    assert "gone@players.test" in result.detail and "550" in result.detail
    assert sink.messages[0].rcpt_tos == ("alice@players.test",)


def test_non_ascii_addresses_use_smtputf8(sink: SmtpSink, mailer: SmtpMailer) -> None:
    """An internationalised address goes out with SMTPUTF8 when the relay offers it."""
    (result,) = mailer.send([outgoing("zoë@players.test")])
    assert result.status is SendStatus.SENT
    assert sink.messages[0].rcpt_tos == ("zoë@players.test",)


def test_onward_delivery_lands_in_the_players_imap_mailbox(
    sink: SmtpSink, mailer: SmtpMailer, dovecot: Dovecot
) -> None:
    """What the bot sends reaches the player's Dovecot INBOX, readable over IMAP."""
    player = dovecot.add_user(f"player{next(_serial)}@players.test", "pw")
    mail = outgoing(player)
    assert [r.status for r in mailer.send([mail])] == [SendStatus.SENT]
    assert sink.onward_errors == []
    client = dovecot.imap_client(player)
    try:
        (uid,) = client.search("ALL")
        body = client.fetch([uid], ["BODY.PEEK[]"])[uid][b"BODY[]"]
    finally:
        client.logout()
    assert mail.message_id.encode() in body
    assert b"Your car moved 3 spaces." in body


def test_check_is_clean_against_a_working_relay(mailer: SmtpMailer) -> None:
    """check() against the sink on localhost: no problems."""
    assert mailer.check() == []


@pytest.fixture(scope="module", params=["starttls", "tls"])
def tls_sink(request: pytest.FixtureRequest) -> Iterator[SmtpSink]:
    """A relay with a self-signed certificate that wants AUTH (bot / pw)."""
    with SmtpSink(security=request.param, users={"bot": "pw"}) as server:
        yield server


def _tls_mailer(sink: SmtpSink, password: str = "pw", trusted: bool = True) -> SmtpMailer:
    context = ssl.create_default_context(cafile=str(sink.cert)) if trusted else None
    return SmtpMailer(
        sink.host,
        sink.port,
        security=sink.security,
        username="bot",
        password=password,
        timeout=10,
        ssl_context=context,
    )


def test_tls_or_starttls_with_login_sends(tls_sink: SmtpSink) -> None:
    """STARTTLS and implicit TLS, certificate verified, AUTH: SENT; check() is clean."""
    tls_sink.reset()
    mailer = _tls_mailer(tls_sink)
    assert mailer.check() == []
    mail = outgoing()
    assert [r.status for r in mailer.send([mail])] == [SendStatus.SENT]
    assert tls_sink.message_ids() == [mail.message_id]


def test_a_refused_login_makes_the_batch_temporary_and_check_says_why(tls_sink: SmtpSink) -> None:
    """Wrong password: every mail TEMPORARY (a config problem is not the mail's fault)."""
    tls_sink.reset()
    mailer = _tls_mailer(tls_sink, password="wrong")
    results = mailer.send([outgoing(), outgoing()])
    assert [r.status for r in results] == [SendStatus.TEMPORARY] * 2
    assert "535" in results[0].detail
    (problem,) = mailer.check()
    assert "login as 'bot'" in problem and "refused" in problem
    assert tls_sink.messages == []


def test_an_untrusted_certificate_is_reported(tls_sink: SmtpSink) -> None:
    """The system CAs do not trust the test certificate: TEMPORARY, and check() names it."""
    mailer = _tls_mailer(tls_sink, trusted=False)
    (result,) = mailer.send([outgoing()])
    assert result.status is SendStatus.TEMPORARY
    (problem,) = mailer.check()
    assert "CERTIFICATE_VERIFY_FAILED" in problem


def test_the_verdict_follows_the_reply_class(sink: SmtpSink, mailer: SmtpMailer) -> None:
    """Property: any 4yz at RCPT or DATA gives TEMPORARY, any 5yz PERMANENT (RFC 5321 4.2.1)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        code=st.integers(min_value=400, max_value=599).filter(lambda c: c != 421),
        stage=st.sampled_from(["rcpt", "data"]),
    )
    def check(code: int, stage: str) -> None:
        sink.reset()
        add = sink.fail_rcpt if stage == "rcpt" else sink.fail_data
        add(f"{code} test reply", times=1)
        (result,) = mailer.send([outgoing()])
        expected = SendStatus.TEMPORARY if code < 500 else SendStatus.PERMANENT
        assert result.status is expected and str(code) in result.detail

    check()


def test_each_result_is_reported_as_soon_as_the_relay_answers(sink: SmtpSink, mailer: SmtpMailer) -> None:
    """on_result sees mail n's verdict before mail n+1 reaches the relay, in order."""
    sink.fail_rcpt("550 5.1.1 No such user", recipients=["p1@players.test"], times=None)
    mails = [outgoing(f"p{i}@players.test") for i in range(3)]
    seen: list[tuple[str, SendStatus, int]] = []
    results = mailer.send(mails, on_result=lambda r: seen.append((r.message_id, r.status, len(sink.messages))))
    assert [(mid, status) for mid, status, _ in seen] == [(r.message_id, r.status) for r in results]
    assert [r.status for r in results] == [
        SendStatus.SENT,
        SendStatus.PERMANENT,
        SendStatus.SENT,
    ]
    assert [count for _, _, count in seen] == [1, 1, 2]  # nothing sent ahead of the report
