"""Soak: two thousand mixed mails -- orders, spoofs, strangers, auto-replies,
bounces, broken MIME, over-cap mail, duplicates -- through a real Dovecot into the bot, with
the memory measured after the first thousand and after the last: it must stay flat.

The outgoing side is a mailer that counts and drops (the SMTP sink would keep every mail in
this process and blur the measurement); sending is tested elsewhere.
"""

from __future__ import annotations

import gc
import logging
import random
import resource
import tracemalloc
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from bot.app import build_app
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.mail_out.mailer import OutgoingMail, SendResult, SendStatus
from bot.models import InboundMessage, Quarantine, Seat
from bot.settings import parse_settings
from bot.testing import FakeClock, plain_mail
from tests.helpers import fresh_database
from tests.servers import Dovecot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOTAL = 2000
CHUNK = 1000
# A leak of LEAK bytes a mail fails: the memory held may grow by less than that for each mail
# between the first measurement and the last.
LEAK = 256
SECRET = "soak-site-secret-4b1f"
MAX_MAIL = 64 * 1024
PLAYERS = ("kelly", "seb", "steve", "roger", "anna")


class CountingMailer:
    """A Mailer that accepts everything and keeps only a count."""

    settles = False

    def __init__(self) -> None:
        self.sent = 0

    def send(
        self,
        mails: Sequence[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        results = []
        for mail in mails:
            self.sent += 1
            results.append(SendResult(mail.message_id, SendStatus.SENT))
            if on_result is not None:
                on_result(results[-1])
        return results

    def close(self) -> None:
        pass


def clear_bounded_caches(engine: Engine) -> None:
    """Empty the caches that are bounded by design (header memos of bot.mail_in.parse and bot.mail_out.compose,
    whose entries include every mail's unique Message-ID until the cap; SQLAlchemy's cache of
    compiled statements, which fills as new kinds of mail take new paths), so that what memory
    remains between two measurements is what a leak would hold, not how full a cache is."""
    engine.clear_compiled_cache()
    from bot.mail_in import parse as inbound
    from bot.mail_out import compose as mailout

    memo = getattr(getattr(inbound._POLICY, "header_factory", None), "_memo", None)
    if memo is not None:
        memo.cache_clear()
    registry = getattr(mailout, "_REGISTRY", None)
    for name in ("_values", "shared"):
        cache = getattr(registry, name, None)
        if cache is not None:
            cache.clear()
    folded = getattr(mailout, "_FOLDED", None)
    if folded is not None:
        folded.clear()


def held(snapshot: tracemalloc.Snapshot) -> tracemalloc.Snapshot:
    """What the bot holds: without the log records pytest keeps for its report (one a mail)."""
    return snapshot.filter_traces(
        [
            tracemalloc.Filter(False, logging.__file__),
            tracemalloc.Filter(False, "*/_pytest/*"),
            tracemalloc.Filter(False, tracemalloc.__file__),
        ]
    )


def rss_kib() -> int:
    """Resident set size now, in KiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def mixed_mail(rng: random.Random, n: int, bot: str, domain: str, secrets: dict[str, str]) -> bytes:
    """One mail of the mix; the weights follow what a live bot sees (mostly orders, much noise)."""
    seat = rng.choice(PLAYERS)
    player = f"{seat}@players.{domain}"
    signed = signed_address(bot, SECRET, "rc1", seat)
    mid = f"<soak-{n}@{domain}>"
    kind = rng.choices(
        [
            "order",
            "password",
            "command",
            "spoof",
            "stranger",
            "auto",
            "bounce",
            "html",
            "broken",
            "garbage",
            "oversize",
            "duplicate",
        ],
        [30, 8, 6, 8, 12, 10, 5, 6, 5, 4, 2, 4],
    )[0]
    if kind == "order":
        return plain_mail(player, signed, "Re: [rc1] turn", f"USE {rng.randint(0, 10)}\n\n> USE 3\n", message_id=mid)
    if kind == "password":
        return plain_mail(
            player, bot, "[rc1] orders", f"USE {rng.randint(0, 10)}\nPASSWORD {secrets[seat]}", message_id=mid
        )
    if kind == "command":
        return plain_mail(player, signed, "Re: [rc1]", rng.choice(["STATUS", "ORDERS", "HELP"]), message_id=mid)
    if kind == "spoof":
        return plain_mail(
            player,
            bot,
            "[rc1] orders",
            "USE 10",
            message_id=mid,
            headers={"Authentication-Results": "evil.example; dmarc=pass"},
        )
    if kind == "stranger":
        return plain_mail(f"stranger{rng.randint(0, 300)}@else.{domain}", bot, "hello", "what is this?", message_id=mid)
    if kind == "auto":
        return plain_mail(
            player, signed, "Out of office", "I am away", message_id=mid, headers={"Auto-Submitted": "auto-replied"}
        )
    if kind == "bounce":
        return (
            f"From: MAILER-DAEMON@mx.{domain}\r\nTo: {bot}\r\nSubject: Undelivered\r\nMessage-ID: {mid}\r\n"
            "Return-Path: <>\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
            "--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--b--\r\n"
        ).encode()
    if kind == "html":
        return (
            f"From: {player}\r\nTo: {signed}\r\nSubject: Re: rc1\r\nMessage-ID: {mid}\r\n"
            "Content-Type: text/html; charset=utf-8\r\n\r\n<div>USE 2</div><blockquote>USE 9</blockquote>\r\n"
        ).encode()
    if kind == "broken":
        return (
            f"From: {player}\r\nTo: {signed}\r\nSubject: =?x-bad?q?=FF?=\r\nMessage-ID: {mid}\r\n"
            "Content-Type: multipart/mixed\r\n\r\n--x\r\nContent-Type: text/plain; charset=x-none\r\n\r\n"
            "USE 1\r\n"
        ).encode()
    if kind == "garbage":
        junk = bytes(rng.randrange(32, 127) for _ in range(rng.randint(10, 400)))
        return b"From: " + player.encode() + b"\r\nMessage-ID: " + mid.encode() + b"\r\n\r\n" + junk + b"\r\n"
    if kind == "oversize":
        return plain_mail(player, signed, "photo", "USE 2", message_id=mid) + b"QUFB" * (MAX_MAIL // 3)
    # duplicate: an earlier order mail delivered again, Message-ID and all
    earlier = rng.randint(0, max(0, n - 1))
    return plain_mail(player, signed, "Re: [rc1] turn", "USE 4\n", message_id=f"<soak-dup-{earlier % 50}@{domain}>")


def test_thousands_of_mixed_mails_through_dovecot_keep_memory_flat(tmp_path: Path, dovecot: Dovecot) -> None:
    """2,000 mixed mails through Dovecot: every one ends applied, refused or ignored (or as a duplicate),
    none crashes, the inbox empties into Processed, and the memory held after the second thousand is
    no more than after the first (the first warms the caches every kind of mail fills): tracemalloc,
    with the bounded caches emptied, < 256 KiB growth over 1,000 mails (a leak of 256 bytes a mail
    fails); RSS < 16 MiB."""
    domain = "soak.test"
    bot = dovecot.add_user(f"flagman@{domain}", "bot-password")
    url = fresh_database("sqlite", tmp_path)
    settings = parse_settings(
        {
            "bot": {"address": bot, "timezone": "Europe/London"},
            "database": {"url": url},
            "inbox": {
                "kind": "imap",
                "host": dovecot.host,
                "port": dovecot.imap_port,
                "security": "none",
                "username": bot,
                "timeout": 20.0,
                "batch_size": 100,
            },
            "limits": {"max_mail_bytes": MAX_MAIL},
        },
        env={"FLAGMAN_SECRET": SECRET, "FLAGMAN_IMAP_PASSWORD": "bot-password"},
        base_dir=tmp_path,
        source="soak",
    )
    mailer = CountingMailer()
    clock = FakeClock()
    app = build_app(settings, clock=clock, mailer=mailer)
    try:
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind="racecraft",
                name="rc1",
                gm_address=f"gm@{domain}",
                players=[PlayerSpec(p, f"{p}@players.{domain}", p.title()) for p in PLAYERS],
                seed=3,
            )
        with app.db.read() as session:
            secrets = {s.name: s.secret for s in session.scalars(select(Seat))}

        rng = random.Random(20261130)
        with dovecot.lmtp_connection() as lmtp:
            for n in range(TOTAL):
                dovecot.deliver(bot, mixed_mail(rng, n, bot, domain, secrets), lmtp=lmtp)

        service = app.service
        outcomes: Counter[str] = Counter()
        memory: list[tuple[int, int]] = []
        processed = duplicates = 0
        snapshot_first: tracemalloc.Snapshot | None = None
        last: tracemalloc.Snapshot | None = None
        tracemalloc.start(1)
        try:
            while processed < TOTAL:
                report = service.poll(max_batches=1)
                if report.fetched == 0:
                    break
                processed += report.fetched
                duplicates += report.duplicates
                outcomes.update(report.outcomes)
                clock.advance(minutes=30)  # rate limits and deadlines move on: a day in a few batches
                service.tick(read_first=False)  # the loop reads one batch at a time itself
                service.send()
                if processed % CHUNK == 0:
                    clear_bounded_caches(app.db.engine)
                    gc.collect()
                    snapshot = held(tracemalloc.take_snapshot())
                    memory.append((sum(s.size for s in snapshot.statistics("filename")), rss_kib()))
                    if snapshot_first is None:
                        snapshot_first = snapshot
            last = held(tracemalloc.take_snapshot())
        finally:
            tracemalloc.stop()

        assert processed == TOTAL
        assert set(outcomes) <= {"applied", "refused", "ignored"}, outcomes
        assert outcomes["applied"] and outcomes["refused"] and outcomes["ignored"], outcomes
        assert sum(outcomes.values()) + duplicates == TOTAL
        with app.db.read() as session:
            assert session.scalar(select(func.count()).select_from(Quarantine)) == 0
            assert session.scalar(select(func.count()).select_from(InboundMessage)) == sum(outcomes.values())
        client = dovecot.imap_client(bot)
        try:
            assert client.search("ALL") == []
            assert (
                len(client.folder_status("Processed", [b"MESSAGES"]))
                and client.folder_status("Processed", [b"MESSAGES"])[b"MESSAGES"] == TOTAL
            )
        finally:
            client.logout()

        assert len(memory) == TOTAL // CHUNK
        (traced_first, rss_first), (traced_last, rss_last) = memory[0], memory[-1]
        growth = traced_last - traced_first
        assert snapshot_first is not None and last is not None
        top = "\n".join(str(s) for s in last.compare_to(snapshot_first, "lineno")[:8])
        print(
            f"\nsoak: {TOTAL} mails, outcomes {dict(outcomes)}, duplicates {duplicates}, sent {mailer.sent}; "
            f"traced {traced_first / 2**20:.1f} -> {traced_last / 2**20:.1f} MiB ({growth / 1024:+.0f} KiB), "
            f"RSS {rss_first / 1024:.0f} -> {rss_last / 1024:.0f} MiB"
        )
        assert growth < LEAK * (TOTAL - CHUNK), (
            f"memory grew {growth / 2**20:.1f} MiB over {TOTAL - CHUNK} mails:\n{top}"
        )
        assert rss_last - rss_first < 16 * 1024, f"RSS grew {(rss_last - rss_first) / 1024:.0f} MiB"
    finally:
        app.close()


def test_the_imap_connection_keeps_nothing_per_mail_moved(tmp_path: Path, dovecot: Dovecot) -> None:
    """imaplib keeps untagged responses nobody asks for (one EXPUNGE per mail a UID MOVE moves) until
    the connection closes; the inbox drops them, so a service that stays connected does not grow."""
    from bot.mail_in.imap import ImapInbox
    from bot.mail_in.inbox import Folder

    user = dovecot.add_user("keeps-nothing@soak.test", "pw")
    with dovecot.lmtp_connection() as lmtp:
        for n in range(300):
            dovecot.deliver(user, plain_mail("p@x.test", user, f"m{n}", "USE 1", message_id=f"<k{n}@x>"), lmtp=lmtp)
    inbox = ImapInbox(dovecot.host, dovecot.imap_port, user, "pw", security="none", timeout=10.0)
    try:
        while mails := inbox.fetch_new(100):
            inbox.mark_done([m.key for m in mails], Folder.PROCESSED)
        assert inbox._client is not None
        kept = inbox._client._imap.untagged_responses
        assert sum(len(v) for v in kept.values()) < 10, {k: len(v) for k, v in kept.items()}
    finally:
        inbox.close()


def test_an_over_cap_mail_comes_from_dovecot_with_its_header_only(tmp_path: Path, dovecot: Dovecot) -> None:
    """Gap (a): the size cap applies before fetching; an over-cap mail brings only its header section
    (BODY.PEEK[HEADER], capped), so the service can tell a registered player, and stays unseen."""
    from bot.mail_in.imap import ImapInbox

    user = dovecot.add_user("over-cap@soak.test", "pw")
    big = plain_mail("seb@players.test", user, "photo", "USE 2", message_id="<big@players.test>") + b"QUFB" * 50_000
    dovecot.deliver(user, big)
    dovecot.deliver(user, plain_mail("seb@players.test", user, "small", "USE 2", message_id="<small@players.test>"))
    inbox = ImapInbox(dovecot.host, dovecot.imap_port, user, "pw", security="none", timeout=10.0, max_size=100_000)
    try:
        first, second = inbox.fetch_new(10)
        assert first.data is None and first.size > 100_000 and first.headers is not None
        assert b"Message-ID: <big@players.test>" in first.headers and b"QUFB" not in first.headers
        assert len(first.headers) < 2000
        assert second.data is not None and second.headers is None
    finally:
        inbox.close()
    client = dovecot.imap_client(user)
    try:
        assert all(b"\\Seen" not in f[b"FLAGS"] for f in client.fetch(client.search("ALL"), ["FLAGS"]).values())
    finally:
        client.logout()
