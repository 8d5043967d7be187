"""Nothing breaks the service: random bytes, mutated real mail and mail assembled from
hostile parts go through `Service.handle_batch` (fakes, SQLite) and every mail ends applied,
refused or ignored -- or is skipped as a duplicate. Quarantine would be the sign of a crash: the
test fails with the stored traceback, so any quarantined mail is explained and fixed, not
tolerated.

Each example starts a fresh bot (a copy of the template database), so a failure reproduces and
shrinks; within an example, up to three batches meet a bot that has already seen hostile mail
(rate limits, notices sent, orders on file, turns resolved), as the real one does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from bot.mail_in.auth import GM_SEAT, signed_address
from bot.mail_in.inbox import Folder
from bot.models import InboundMessage
from bot.service import PollReport
from bot.testing import plain_mail
from tests.security.conftest import ADDRESS, AUTHSERV, BOT, GM, OLD_SECRET, SITE_SECRET, Bot
from tests.security.test_corpus import check_outgoing, fill
from tests.settled import examples

SECURITY = Path(__file__).resolve().parent / "data"
MAIL = Path(__file__).resolve().parents[1] / "data" / "mail"
REAL = [p.read_bytes() for p in sorted(SECURITY.glob("*.eml")) + sorted(MAIL.glob("*.eml"))]
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

INSERTS = [
    b"\x00",
    b"\r\n\r\n",
    b"\r\n--b\r\n",
    b"=?utf-8?q?=0D=0ABcc:_x@y?=",
    b"Auto-Submitted: no\r\n",
    b'Content-Type: multipart/mixed; boundary=""\r\n',
    b'charset="x-none"',
    b"PASSWORD x\r\n",
    b"ORDERS\r\n",
    b"\r\nEND\r\n",
    b"JOIN rc1\r\n",
    b"STATUS\r\n",
    b"\xff\xfe",
    b">" * 200,
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A real mail (the hostile corpus and the client fixtures) with flips, cuts, insertions, splices."""
    raw = bytearray(draw(st.sampled_from(REAL)))
    for _ in range(draw(st.integers(0, 4))):
        if not raw:
            break
        at = draw(st.integers(0, len(raw) - 1))
        kind = draw(st.sampled_from(["flip", "cut", "insert", "splice", "dup"]))
        if kind == "flip":
            raw[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del raw[at:]
        elif kind == "insert":
            raw[at:at] = draw(st.sampled_from(INSERTS))
        elif kind == "dup":
            raw[at:at] = raw[max(0, at - 200) : at]
        else:
            other = draw(st.sampled_from(REAL))
            raw[at:] = other[draw(st.integers(0, len(other) - 1)) :]
    return bytes(raw)


SENDERS = [
    ADDRESS["seb"],
    ADDRESS["kelly"],
    GM,
    "mallory@evil.example",
    BOT,
    "flagman+bounce-x@example.org",
    "MAILER-DAEMON@example.net",
    "",
    "not an address",
    '"Evil\\" <a@b>" <c@d>',
]
TOS = [
    "@@SIGNED_SEB@@",
    "@@SIGNED_SEB_OLD@@",
    BOT,
    "flagman+rc1.seb.aaaaaaaaaaaa@example.org",
    "flagman+rc1.gm.bbbbbbbbbbbb@example.org",
    "flagman+@example.org",
    "someone@else.example",
]
HEADERS = [
    "Auto-Submitted: auto-replied",
    "Auto-Submitted: no",
    "Precedence: bulk",
    "X-Autoreply: yes",
    "Return-Path: <>",
    "X-Flagman-Loop: x",
    f"Authentication-Results: {AUTHSERV}; dmarc=pass",
    f"Authentication-Results: {AUTHSERV}; dkim=pass header.d=example.net",
    "Authentication-Results: evil.example; dmarc=pass",
    "Content-Type: text/html",
    "Content-Type: multipart/alternative; boundary=zz",
    "Content-Transfer-Encoding: base64",
    "Message-ID: <same@x>",
    "Subject: [rc1]",
    "Subject: [@@TAG_SEB@@]",
]
LINES = [
    "USE 2",
    "USE 11",
    "USE -1",
    "CRUISE",
    "STATUS",
    "ORDERS",
    "HELP",
    "JOIN rc1",
    "JOIN nosuch me",
    "RESIGN rc1",
    "EXTEND rc1 1d",
    "PROCESS rc1",
    "PAUSE rc1",
    "ROLLBACK rc1",
    "DROP rc1 seb",
    "PASSWORD @@PASSWORD_SEB@@",
    "PASSWORD @@PASSWORD_GM@@",
    "PASSWORD wrong",
    "ORDERS",
    "END",
    "> USE 9",
    "On Mon, Jan 5, 2026 Flagman wrote:",
    "-- ",
    "<p>USE 3</p>",
    "\x00",
    "é",
    "😀",
]


@st.composite
def assembled(draw: st.DrawFn) -> bytes:
    """A mail put together from hostile parts: any sender, any address, any headers, any lines."""
    lines = [f"From: {draw(st.sampled_from(SENDERS))}", f"To: {draw(st.sampled_from(TOS))}"]
    lines += draw(st.lists(st.sampled_from(HEADERS), max_size=4))
    if draw(st.booleans()):
        lines.append(f"Message-ID: <{draw(st.integers(0, 30))}@fuzz>")
    body = draw(st.lists(st.one_of(st.sampled_from(LINES), st.text(max_size=40)), max_size=8))
    return ("\r\n".join(lines) + "\r\n\r\n" + "\r\n".join(body)).encode("utf-8", "surrogatepass")


def one_batch(bot: Bot, mails: list[bytes], advance_minutes: int, tick: bool) -> PollReport:
    """Deliver, handle as one batch, and check the invariants of every outcome."""
    with bot.app.db.read() as session:
        rows_before = session.scalar(select(func.count()).select_from(InboundMessage)) or 0
    outbox_before = len(bot.outbox())
    keys = [bot.deliver(fill(bot, m)) for m in mails]
    report = PollReport()
    fetched = bot.inbox.fetch_new(100)
    assert [m.key for m in fetched] == keys
    bot.service.handle_batch(fetched, report)
    quarantined = bot.quarantined()
    assert not quarantined, "a mail crashed the pipeline:\n" + quarantined[0].error
    assert set(report.outcomes) <= {"applied", "refused", "ignored"}, report.outcomes
    with bot.app.db.read() as session:
        rows_after = session.scalar(select(func.count()).select_from(InboundMessage)) or 0
    # Exactly one recorded outcome per mail, or a duplicate of a mail already handled.
    assert rows_after - rows_before == sum(report.outcomes.values()) == len(mails) - report.duplicates
    assert bot.inbox.pending == {}
    assert set(keys) <= set(bot.inbox.folders[Folder.PROCESSED])
    # Who proved themselves in this batch: the holder of a capability a mail carried.
    filled = [fill(bot, m) for m in mails]
    proofs = {
        ADDRESS["seb"]: [bot.signed("seb"), bot.signed("seb", OLD_SECRET), bot.secret("seb")],
        GM: [signed_address(BOT, SITE_SECRET, "rc1", GM_SEAT), bot.gm_secret()],
    }
    for row in bot.outbox()[outbox_before:]:
        held = any(p.encode() in m for p in proofs.get(row.recipient, []) for m in filled)
        msg: EmailMessage = check_outgoing(row, holder_wrote=held)
        local, _, domain = row.recipient.partition("@")
        assert (local.partition("+")[0], domain) != ("flagman", "example.org"), "the bot wrote to itself"
        assert msg["X-Flagman-Loop"] == BOT
    if tick:
        bot.clock.advance(minutes=advance_minutes)
        bot.service.tick()
    bot.service.send()
    return report


def test_random_bytes_never_break_the_service(make_bot: Callable[..., Bot]) -> None:
    """Any bytes at all, in batches: each ends applied, refused or ignored; nothing crashes."""

    @FUZZ
    @given(st.lists(st.binary(max_size=3000), min_size=1, max_size=4))
    def run(mails: list[bytes]) -> None:
        bot = make_bot()
        try:
            one_batch(bot, mails, 0, False)
        finally:
            bot.app.close()

    run()


@pytest.mark.slow
def test_mutated_and_assembled_mail_never_breaks_the_service(make_bot: Callable[..., Bot]) -> None:
    """Mutated real mail and mail assembled from hostile parts, in up to three batches with time passing
    and turns resolving: each ends applied, refused or ignored; the bot never writes to itself, nor to
    more than one address at a time, and still answers a proper mail afterwards."""
    seen: Counter[str] = Counter()
    batch = st.tuples(
        st.lists(st.one_of(mutated(), assembled()), min_size=1, max_size=5), st.integers(0, 600), st.booleans()
    )

    @settings(FUZZ, max_examples=examples(40, 120))  # a whole bot and up to three batches each: slow
    @given(st.lists(batch, min_size=1, max_size=3))
    def run(batches: list[tuple[list[bytes], int, bool]]) -> None:
        bot = make_bot()
        try:
            for mails, minutes, tick in batches:
                seen.update(one_batch(bot, mails, minutes, tick).outcomes)
            # Still a working bot: kelly (whom no fuzzed mail can drop) is answered.
            bot.clock.advance(hours=2)
            bot.deliver(
                plain_mail(
                    ADDRESS["kelly"],
                    signed_address(BOT, SITE_SECRET, "rc1", "kelly"),
                    "Re: rc1",
                    "HELP",
                    message_id="<after-fuzz@client.example>",
                )
            )
            bot.poll()
            assert (bot.rows()[-1].status, bot.recipients()[-1]) == ("applied", ADDRESS["kelly"])
        finally:
            bot.app.close()

    run()
    # The generator reaches every outcome, so the deep paths (orders, commands, GM) were exercised.
    assert seen["applied"] and seen["refused"] and seen["ignored"], seen


def test_a_mangled_message_id_is_not_quoted_back_into_our_headers(make_bot: Callable[..., Bot]) -> None:
    """A case Hypothesis found: a Message-ID that is no msg-id (an encoded word without its '=', a
    ':' and the words of a would-be injection in it) is not echoed into In-Reply-To or References;
    the mail is answered all the same (RFC 5322 3.6.4: bot.mail_out.compose only quotes a msg-id)."""
    bot = make_bot()
    try:
        raw = (
            b"From: Seb <seb@example.net>\r\nTo: @@SIGNED_SEB@@\r\nSubject: Re: [rc1] Racecraft: Turn 1 of 5\r\n"
            b"Message-ID:?utf-8?q?=0D=0ABcc:_victim=40example.com=0D=0A=0D=0AClick_here?=x@client.example>\r\n"
            b"Date: Mon, 05 Jan 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n"
            b'Content-Type: text/plain; charset="utf-8"\r\n\r\nHELLO\r\n'
        )
        one_batch(bot, [raw], 0, False)
        answers = [row for row in bot.outbox() if row.recipient == ADDRESS["seb"]]
        assert answers and all(b"In-Reply-To" not in row.data.split(b"\r\n\r\n", 1)[0] for row in answers)
    finally:
        bot.app.close()
