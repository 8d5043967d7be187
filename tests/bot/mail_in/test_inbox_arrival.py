"""Every fetched mail says when the mail server received it (`RawMail.received_at`).

mail-interface.md: "Deadlines are judged by when the mail server received the mail (IMAP
INTERNALDATE, the Maildir delivery time), not by when the bot reads it."

Here: the Maildir inbox, `FakeInbox`, and the INTERNALDATE conversion of the IMAP inbox
(which is tested against a real Dovecot in tests/e2e/test_imap_inbox.py).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.mail_in.imap import _received_at
from bot.mail_in.inbox import (
    MaildirInbox,
    RawMail,
    ReadAhead,
    deliver_to_maildir,
    maildir_delivery_time,
)
from bot.testing import FakeInbox

SMALL = b"From: kelly@players.test\r\nSubject: rc1 orders\r\n\r\nUSE 3\r\n"
BIG = b"From: seb@players.test\r\nSubject: rc1 orders\r\n\r\n" + b"x" * 5000
# 2026-03-14 17:59:58.123456789 UTC: two seconds before an 18:00 deadline.
CLOCK_NS = 1_773_511_198_123_456_789
AT = datetime(2026, 3, 14, 17, 59, 58, 123456, tzinfo=UTC)


def test_a_mail_delivered_to_the_maildir_comes_back_with_its_delivery_time(tmp_path: Path) -> None:
    """Judged by "the Maildir delivery time": the time `deliver_to_maildir` wrote into the
    name (to the microsecond), not when the bot reads the file."""
    path = deliver_to_maildir(tmp_path, SMALL, clock_ns=CLOCK_NS)
    assert path.name.startswith("1773511198.M123456789P")
    (mail,) = MaildirInbox(tmp_path).fetch_new()
    assert mail.received_at == AT
    assert mail.received_at.tzinfo is UTC


def test_an_over_cap_maildir_mail_carries_its_delivery_time_too(tmp_path: Path) -> None:
    """A mail over the size cap is not read, but its arrival still counts for the deadline."""
    deliver_to_maildir(tmp_path, BIG, clock_ns=CLOCK_NS)
    (mail,) = MaildirInbox(tmp_path, max_size=1000).fetch_new()
    assert mail.data is None and mail.headers is not None
    assert mail.received_at == AT


def test_a_foreign_named_maildir_file_falls_back_to_its_mtime(tmp_path: Path) -> None:
    """A file not named "<seconds>.<unique>.<host>" was delivered when it was last written."""
    MaildirInbox(tmp_path)
    path = tmp_path / "new" / "order-from-kelly.eml"
    path.write_bytes(SMALL)
    os.utime(path, ns=(CLOCK_NS, CLOCK_NS))
    (mail,) = MaildirInbox(tmp_path).fetch_new()
    assert mail.received_at == AT and mail.received_at.tzinfo is UTC
    # Over the cap the same.
    (big,) = MaildirInbox(tmp_path, max_size=10).fetch_new()
    assert big.data is None and big.received_at == AT


def test_a_dovecot_named_file_in_cur_gives_the_time_in_its_name_not_its_mtime(tmp_path: Path) -> None:
    """Dovecot's names carry microseconds ("M<us>") and, in cur/, ":2,<flags>" after them."""
    MaildirInbox(tmp_path)
    path = tmp_path / "cur" / "1773511198.M123456P9544.mx.example.org,S=60,W=62:2,S"
    path.write_bytes(SMALL)
    os.utime(path, ns=(CLOCK_NS + 3600 * 10**9, CLOCK_NS + 3600 * 10**9))
    (mail,) = MaildirInbox(tmp_path).fetch_new()
    assert mail.received_at == AT


def test_maildir_order_is_unchanged_by_arrival_times(tmp_path: Path) -> None:
    """Oldest first, as before: by file time, then name (arrival times are only reported)."""
    first = deliver_to_maildir(tmp_path, SMALL, clock_ns=CLOCK_NS)
    second = deliver_to_maildir(tmp_path, SMALL, clock_ns=CLOCK_NS - 10**9)
    os.utime(first, ns=(10**18, 10**18))
    os.utime(second, ns=(2 * 10**18, 2 * 10**18))
    mails = MaildirInbox(tmp_path).fetch_new()
    assert [m.key for m in mails] == [first.name, second.name]
    assert [m.received_at for m in mails] == [AT, AT - timedelta(seconds=1)]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("1773511198.M123456789P77Q3.flagman", AT),  # deliver_to_maildir: nanoseconds
        ("1773511198.M000000005P77Q3.flagman", AT.replace(microsecond=0)),  # 5 ns
        ("1773511198.M123456P9544.host,S=268,W=279:2,", AT),  # Dovecot: microseconds
        ("1773511198.M5P9544.host", AT.replace(microsecond=5)),  # unpadded microseconds
        ("1773511198.V803I1a2bM123456P44.host.example", AT),  # other unique parts around M
        ("1773511198.12345_1.host", AT.replace(microsecond=0)),  # old form: no fraction
        ("1773511198.M1234567P1.host", AT.replace(microsecond=0)),  # neither width: ignored
        ("order.eml", None),
        ("1773511198.eml", None),  # no host part
        ("1773511198..host", None),
        ("999999999999.M1P1.host", None),  # beyond year 9999
    ],
)
def test_maildir_delivery_time_reads_the_name(name: str, expected: datetime | None) -> None:
    """The seconds a Maildir name starts with, plus its M fraction where one is readable."""
    assert maildir_delivery_time(name) == expected


@given(st.integers(min_value=0, max_value=253_402_300_799 * 10**9))
def test_deliver_to_maildir_names_give_back_their_clock(clock_ns: int) -> None:
    """Property: any `clock_ns` written into a name reads back, truncated to the microsecond."""
    name = f"{clock_ns // 10**9}.M{clock_ns % 10**9:09d}P1Q1.flagman"
    expected = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=clock_ns // 1000)
    assert maildir_delivery_time(name) == expected


def test_fake_inbox_passes_on_when_the_server_received_the_mail() -> None:
    """`FakeInbox.deliver(data, received_at=...)` comes back from fetch_new, in UTC, also
    over the cap; without one the server "did not say" (None)."""
    inbox = FakeInbox(max_size=1000)
    paris = AT.astimezone(timezone(timedelta(hours=1)))
    on_time = inbox.deliver(SMALL, received_at=paris)
    too_big = inbox.deliver(BIG, received_at=AT)
    unknown = inbox.deliver(SMALL)
    mails = {m.key: m for m in inbox.fetch_new()}
    arrived = mails[on_time].received_at
    assert arrived == AT and arrived is not None and arrived.tzinfo is UTC
    assert mails[too_big].data is None and mails[too_big].received_at == AT
    assert mails[unknown].received_at is None
    inbox.mark_done([on_time])
    assert [m.key for m in inbox.fetch_new()] == [too_big, unknown]


def test_a_naive_arrival_time_is_refused() -> None:
    """Aware UTC datetimes only: a naive time is an error where it is made, not at the deadline."""
    with pytest.raises(ValueError, match="timezone-aware"):
        FakeInbox().deliver(SMALL, received_at=datetime(2026, 3, 14, 17, 59, 58))  # noqa: DTZ001
    with pytest.raises(ValueError, match="timezone-aware"):
        RawMail("1", SMALL, len(SMALL), received_at=datetime(2026, 3, 14, 17, 59, 58))  # noqa: DTZ001
    assert RawMail("1", SMALL, len(SMALL)).received_at is None


def test_an_internaldate_becomes_utc_or_none() -> None:
    """IMAP INTERNALDATE (imapclient, normalise_times off: aware, the server's offset) in UTC;
    none sent, unparseable (imapclient gives None) or without a zone: None."""
    sent = datetime(2026, 3, 14, 19, 59, 58, tzinfo=timezone(timedelta(hours=2)))
    got = _received_at(sent)
    assert got == AT.replace(microsecond=0) and got is not None and got.tzinfo is UTC
    assert _received_at(None) is None
    assert _received_at(b"14-Mar-2026 19:59:58 +0200") is None
    assert _received_at(datetime(2026, 3, 14, 17, 59, 58)) is None  # noqa: DTZ001
    assert _received_at(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1)))) is None


def test_imapclient_parses_internaldate_with_its_offset_when_not_normalising() -> None:
    """What `_received_at` relies on: imapclient's FETCH parser with normalise_times=False
    keeps the zone; an unparseable INTERNALDATE comes back as None, not an exception."""
    from imapclient.response_parser import parse_fetch_response

    parsed = parse_fetch_response(
        [
            b'7 (UID 42 INTERNALDATE "14-Mar-2026 19:59:58 +0200" RFC822.SIZE 60)',
            b'8 (UID 43 INTERNALDATE "yesterday-ish" RFC822.SIZE 60)',
        ],
        normalise_times=False,
    )
    assert _received_at(parsed[42][b"INTERNALDATE"]) == AT.replace(microsecond=0)
    assert parsed[43][b"INTERNALDATE"] is None


def test_a_batch_in_hand_is_skipped_in_a_maildir_and_the_fake_inbox(tmp_path: Path) -> None:
    """`fetch_new(skip=...)` (the read-ahead of the next batch): the mails after the ones in
    hand, oldest first, in every inbox."""
    for n in range(5):
        deliver_to_maildir(tmp_path, SMALL, clock_ns=CLOCK_NS + n * 10**9)
    maildir = MaildirInbox(tmp_path)
    fake = FakeInbox()
    for _ in range(5):
        fake.deliver(SMALL)
    for inbox in (maildir, fake):
        everything = [m.key for m in inbox.fetch_new()]
        assert len(everything) == 5
        assert [m.key for m in inbox.fetch_new(2, skip=everything[:2])] == everything[2:4]
        assert [m.key for m in ReadAhead(inbox, 10, skip=everything[1:4]).result()] == [everything[0], everything[4]]
