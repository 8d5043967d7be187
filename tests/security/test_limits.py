"""Limits (testing.md "Fault injection"): size cap before fetching, line cap, deep
MIME nesting, auto-reply storms and the per-sender rate limit -- a clear outcome for each,
cheaply, and never a reply that could feed a loop."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.mail_in.inbox import MaildirInbox, deliver_to_maildir, header_section
from bot.testing import plain_mail
from tests.security.conftest import ADDRESS, BOT, MAX_MAIL_BYTES, Bot


def big_mail(sender: str, to: str, size: int, *, message_id: str, headers: dict[str, str] | None = None) -> bytes:
    """A mail of about `size` bytes: orders on top, then a base64 attachment."""
    head = plain_mail(sender, to, "orders with a photo", "USE 2", message_id=message_id, headers=headers)
    return head + b"\r\n" + b"QUFBQUFBQUFB" * (size // 12)


def test_a_5_mb_mail_from_a_player_is_not_read_and_the_player_is_told_once(bot: Bot) -> None:
    """mail-interface.md: mail over the size limit is answered once, briefly, if the sender is a player
    -- at the registered address, once a day, and its body is never stored."""
    five_mb = 5 * 1024 * 1024
    bot.deliver(big_mail(ADDRESS["seb"], bot.signed("seb"), five_mb, message_id="<big-1@client.example>"))
    bot.deliver(big_mail(ADDRESS["seb"], bot.signed("seb"), five_mb, message_id="<big-2@client.example>"))
    report = bot.poll()
    assert report.fetched == 2
    first, second = bot.rows()
    assert (first.status, second.status) == ("refused", "ignored")
    assert "over the size limit" in first.detail and "told" in first.detail
    assert first.sender == ADDRESS["seb"] and first.text == "" and second.text == ""
    assert bot.recipients() == [ADDRESS["seb"]]
    note = bot.mailer.messages(ADDRESS["seb"])[-1]
    assert "too big" in str(note["Subject"]) and note["Auto-Submitted"] == "auto-replied"
    assert bot.orders() == 0 and bot.quarantined() == []


def test_a_5_mb_mail_from_a_stranger_or_an_auto_responder_is_never_answered(bot: Bot) -> None:
    """Over the size limit and not a player (or auto-submitted): logged, never answered."""
    five_mb = 5 * 1024 * 1024
    bot.deliver(big_mail("mallory@evil.example", BOT, five_mb, message_id="<big-s@evil.example>"))
    bot.deliver(
        big_mail(
            ADDRESS["seb"],
            BOT,
            five_mb,
            message_id="<big-a@client.example>",
            headers={"Auto-Submitted": "auto-replied"},
        )
    )
    bot.poll()
    assert [r.status for r in bot.rows()] == ["ignored", "ignored"]
    assert "auto-reply" in bot.rows()[1].detail
    assert bot.recipients() == []


def test_the_same_over_cap_mail_fetched_again_is_a_duplicate(bot: Bot) -> None:
    """A crash before the move: the over-cap mail comes back, and is not answered twice."""
    data = big_mail(ADDRESS["seb"], bot.signed("seb"), 2 * MAX_MAIL_BYTES, message_id="<big-again@client.example>")
    bot.deliver(data)
    bot.poll()
    bot.deliver(data)
    report = bot.poll()
    assert report.duplicates == 1 and len(bot.rows()) == 1 and len(bot.recipients()) == 1


def test_the_maildir_inbox_reads_only_the_header_of_an_over_cap_mail(tmp_path: Path) -> None:
    """The size cap applies before reading: an over-cap file gives its header section only."""
    data = big_mail(ADDRESS["seb"], BOT, 300_000, message_id="<big-m@client.example>")
    deliver_to_maildir(tmp_path / "inbox", data)
    deliver_to_maildir(tmp_path / "inbox", b"From: a@b.example\r\n\r\nsmall")
    mails = MaildirInbox(tmp_path / "inbox", max_size=100_000).fetch_new()
    big = next(m for m in mails if m.size == len(data))
    small = next(m for m in mails if m.size != len(data))
    assert big.data is None and big.headers is not None and big.headers.endswith(b"\n\n")
    assert b"Message-ID: <big-m@client.example>" in big.headers and b"QUFB" not in big.headers
    assert small.data == b"From: a@b.example\r\n\r\nsmall" and small.headers is None


def test_header_section_is_capped_and_ends_at_the_blank_line() -> None:
    """header_section: up to and including the first blank line (CRLF or LF), never past the cap."""
    assert header_section(b"A: 1\r\nB: 2\r\n\r\nbody\r\n\r\nmore") == b"A: 1\r\nB: 2\r\n\r\n"
    assert header_section(b"A: 1\nB: 2\n\nbody") == b"A: 1\nB: 2\n\n"
    assert header_section(b"X: " + b"y" * 100, cap=10) == b"X: yyyyyyy"


def test_a_100000_line_mail_is_cut_at_the_line_cap_and_answered_small(bot: Bot) -> None:
    """[limits] max_lines: a mail of 100,000 lines is cut at the cap and applied, and the answer
    stays small. What its poll costs (under 20 s) is `python -m bench --only budgets`, "poll
    long-mail" (the same mail)."""
    body = "USE 2\n" + "".join(f"> {n}\n" for n in range(50_000)) + "x\n" * 50_000
    bot.deliver(plain_mail(ADDRESS["seb"], bot.signed("seb"), "orders", body, message_id="<lines@client.example>"))
    bot.poll()
    (row,) = bot.rows()
    assert row.status == "applied", row.detail
    assert len(row.text.splitlines()) <= bot.app.settings.limits.max_lines
    (answer,) = bot.outbox()
    assert len(answer.data) < 400_000, "the reply to a huge mail stays small"


def nested(depth: int, text: str) -> bytes:
    head = b"From: seb@example.net\r\nTo: %s\r\nSubject: deep\r\nMessage-ID: <deep-%d@client.example>\r\n" % (
        text.encode(),
        depth,
    )
    body = b"USE 2\r\n"
    for level in range(depth):
        body = (
            b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (level, level)
            + body
            + b"\r\n--b%d--\r\n" % level
        )
    return head + b"MIME-Version: 1.0\r\n" + body


def test_deeply_nested_mime_has_a_clear_outcome(bot: Bot) -> None:
    """MIME nested 5,000 deep (past the parser's recursion): ignored as unparseable, never a crash."""
    bot.deliver(nested(5000, bot.signed("seb")))
    bot.deliver(nested(20, bot.signed("seb")))
    bot.poll()
    deep, shallow = bot.rows()
    assert (deep.status, deep.detail) == ("ignored", "unparseable: MIME structure not readable: RecursionError")
    assert shallow.status == "applied", "20 levels are still a mail: its text part is read"
    assert bot.quarantined() == []
    assert bot.recipients() == [ADDRESS["seb"]]


def test_an_auto_reply_storm_of_500_mails_in_one_batch_is_never_answered(bot: Bot) -> None:
    """500 out-of-office replies to the signed address in one batch: all ignored, no mail. What
    the poll costs (under 30 s) is `python -m bench --only budgets`, "poll auto-replies"."""
    for n in range(500):
        bot.deliver(
            plain_mail(
                ADDRESS["seb"],
                bot.signed("seb"),
                "Automatic reply: [rc1] Turn 1",
                "I am away",
                message_id=f"<ooo-{n}@client.example>",
                headers={"Auto-Submitted": "auto-replied"},
            )
        )
    report = bot.poll()
    assert report.fetched == 500 and report.outcomes == {"ignored": 500}
    assert bot.recipients() == []


def test_a_responder_without_auto_headers_is_stopped_by_the_rate_limit(bot: Bot) -> None:
    """A broken auto-responder (no RFC 3834 headers) replying to the signed address 500 times in one
    batch: answered at most [limits] mails_per_sender_per_hour times; every mail is still read and
    recorded (caps withhold answers, never actions), the rest with its answer withheld."""
    limit = bot.app.settings.limits.mails_per_sender_per_hour
    for n in range(500):
        bot.deliver(
            plain_mail(
                ADDRESS["seb"],
                bot.signed("seb"),
                "Re: [rc1] Turn 1",
                f"I am away ({n})",
                message_id=f"<loop-{n}@client.example>",
            )
        )
    report = bot.poll()
    assert report.fetched == 500
    assert len(bot.recipients()) == limit
    rows = bot.rows()
    assert sum(1 for r in rows if r.answer == "rate limit") == 500 - limit
    assert all(r.status == "refused" for r in rows)  # each was read, as orders, and refused
    # An hour later the sender is heard again.
    bot.clock.advance(hours=1, minutes=1)
    bot.deliver(plain_mail(ADDRESS["seb"], bot.signed("seb"), "Re: [rc1] Turn 1", "USE 2", message_id="<after@x>"))
    bot.poll()
    assert bot.rows()[-1].status == "applied"


def test_forged_joins_cannot_make_the_bot_mail_a_third_party_repeatedly(bot: Bot) -> None:
    """Gap (e): JOIN is answered even when refused; with a forged From that would be a mail stream to
    a victim. A stranger's address gets at most a few replies a day, whatever it sends."""
    for n in range(20):
        bot.deliver(plain_mail("victim@else.example", BOT, "join", f"JOIN nosuchgame{n}", message_id=f"<j{n}@x>"))
    for n in range(20):
        bot.deliver(plain_mail("victim@else.example", BOT, "hello", f"hello {n}", message_id=f"<h{n}@x>"))
    bot.poll()
    assert 1 <= bot.recipients().count("victim@else.example") <= 3


def test_many_forged_strangers_get_a_bounded_number_of_notices(bot: Bot, make_bot: Callable[..., Bot]) -> None:
    """Backscatter: mail from 200 different unknown addresses in an hour gets at most 50 notices."""
    for n in range(200):
        bot.deliver(plain_mail(f"victim{n}@else.example", BOT, "hi", "what is this", message_id=f"<s{n}@x>"))
    bot.poll()
    assert len(bot.recipients()) == 50
    assert sum(1 for r in bot.rows() if "answers to unknown senders" in r.detail) == 150


def test_an_over_cap_reply_from_another_address_is_told_to_the_registered_one(bot: Bot) -> None:
    """Gap (a): over the cap through the signed reply address, from any From: the seat is known from
    the header alone, and the note goes to the seat's registered address."""
    bot.deliver(
        big_mail(
            "seb.phone@elsewhere.example",
            bot.signed("seb"),
            2 * MAX_MAIL_BYTES,
            message_id="<big-phone@elsewhere.example>",
        )
    )
    bot.poll()
    (row,) = bot.rows()
    assert row.status == "refused" and "told" in row.detail
    assert bot.recipients() == [ADDRESS["seb"]]


def test_forged_and_over_cap_mail_is_listed_in_the_gms_digest(bot: Bot) -> None:
    """mail-interface.md: a From that fails the policy is shown in the digest, told or not; so is mail
    over the size limit."""
    from bot.gm.digest import send_digest
    from bot.testing import body_of

    for n in range(3):
        bot.deliver(plain_mail(ADDRESS["seb"], BOT, "[rc1]", "USE 10", message_id=f"<forged-d{n}@evil>"))
    bot.deliver(big_mail(ADDRESS["kelly"], BOT, 2 * MAX_MAIL_BYTES, message_id="<big-d@client.example>"))
    bot.poll()
    with bot.app.db.transaction() as session:
        assert send_digest(bot.app.shell, session, "gm@example.org", force=True)
    bot.service.send()
    digest = body_of(bot.mailer.messages("gm@example.org")[-1])
    failed = digest.split("Failed authentication", 1)[1].split("Unknown senders", 1)[0]
    assert failed.count(ADDRESS["seb"]) == 3
    assert "over the size limit" in digest and ADDRESS["kelly"] in digest
