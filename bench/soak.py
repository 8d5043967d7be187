"""soak: thousands of mixed mails -- orders, spoofs, strangers, auto-replies, bounces, broken
MIME, over-cap mail, duplicates -- through the real Dovecot into the bot, in this process, with
the memory measured after a warm-up and at the end: it must stay flat.

The warm-up fills the caches every kind of mail and the first deadlines fill; between the two
measurements the memory the bot holds (tracemalloc, with the caches bounded by design emptied)
may grow by less than LEAK bytes a mail, and its resident set by less than RSS_TARGET_MIB. The
outgoing side is a mailer that counts and drops (a sink would keep every mail in this process
and blur the measurement). ``python -m bench --only soak`` runs 2,000 mails (``--size`` to
change); tests/e2e/test_soak.py runs a smaller case of the same code.
"""

from __future__ import annotations

import gc
import itertools
import logging
import random
import re
import resource
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select

from bot.app import build_app
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.mail_out.mailer import OutgoingMail, SendResult, SendStatus
from bot.models import InboundMessage, Quarantine, Seat
from bot.settings import parse_settings
from bot.testing import FakeClock, plain_mail
from tests.servers import Dovecot

TOTAL = 2000
WARM_UP = 1000
RSS_TARGET_MIB = 16
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
        mails: Iterable[OutgoingMail],
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
    """Empty the caches that are bounded by design, so that what memory remains between two
    measurements is what a leak would hold, not how full a cache is: every ``functools`` cache of
    the bot's and the rules' modules (pictures, text widths, schedules, robots' tables), the memos
    of headers, words, encoded pictures, encoded and composed parts and filled blocks
    (bot.mail_in.parse, bot.letters.words, bot.mail_out.compose, bot.mail_out.render), the regular expressions compiled on the way, SQLAlchemy's cache of
    compiled statements, and the pooled connections with the statements each keeps prepared.
    Emptied, they fill again from the next mail: a warm-up of a few hundred mails is enough."""
    engine.clear_compiled_cache()
    engine.dispose()
    re.purge()
    from bot.letters import words
    from bot.mail_in import parse as inbound
    from bot.mail_out import compose as mailout

    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("bot.", "rules.")):
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_info"):
                value.cache_clear()
    memo = getattr(getattr(inbound._POLICY, "header_factory", None), "_memo", None)
    if memo is not None:
        memo.cache_clear()
    registry = getattr(mailout, "_REGISTRY", None)
    for name in ("_values", "shared"):
        cache = getattr(registry, name, None)
        if cache is not None:
            cache.clear()
    from bot.mail_out import render

    memos = (
        getattr(mailout, "_FOLDED", None),
        getattr(mailout, "_ENCODED_IMAGES", None),
        getattr(mailout, "_ENCODED", None),
        getattr(render, "_FILLED", None),
        words._SAID,
    )
    for memo_dict in memos:
        if memo_dict is not None:
            memo_dict.clear()


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


_serial = itertools.count(1)


@dataclass
class Soak:
    """What a soak did: the mails read, their outcomes, the rows and folders after it, and the
    memory (traced bytes, RSS KiB) after the warm-up and at the end."""

    total: int
    warm_up: int
    processed: int = 0
    duplicates: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    quarantined: int = -1
    recorded: int = -1
    left_in_inbox: int = -1
    in_processed: int = -1
    memory: list[tuple[int, int]] = field(default_factory=list)
    top: str = ""  # the biggest growths between the first measurement and the last

    @property
    def growth(self) -> int:
        """Traced bytes held at the end less after the warm-up."""
        return self.memory[-1][0] - self.memory[0][0]

    @property
    def rss_growth_kib(self) -> int:
        return self.memory[-1][1] - self.memory[0][1]

    @property
    def leak_bound(self) -> int:
        """The growth a leak of LEAK bytes a mail would make over the mails after the warm-up."""
        return LEAK * (self.total - self.warm_up)

    def line(self) -> str:
        return (
            f"soak     {self.total} mails: outcomes { ({str(k): n for k, n in self.outcomes.items()}) }, "
            f"duplicates {self.duplicates}, "
            f"sent {self.sent}; traced {self.memory[0][0] / 2**20:.1f} -> {self.memory[-1][0] / 2**20:.1f} MiB "
            f"({self.growth / 1024:+.0f} KiB, target < {self.leak_bound / 1024:.0f}), RSS "
            f"{self.memory[0][1] / 1024:.0f} -> {self.memory[-1][1] / 1024:.0f} MiB (target < +{RSS_TARGET_MIB})"
        )


def soak(dovecot: Dovecot, url: str, base_dir: Path, total: int = TOTAL, warm_up: int = WARM_UP) -> Soak:
    """`total` mixed mails delivered to a fresh bot mailbox on `dovecot` and read by the bot
    (on the migrated database `url`, its files under `base_dir`, a batch of 100 read at a time), the memory measured once the first
    `warm_up` of them are read and again at the end."""
    domain = f"soak{next(_serial)}.test"
    bot = dovecot.add_user(f"flagman@{domain}", "bot-password")
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
        base_dir=base_dir,
        source="soak",
    )
    mailer = CountingMailer()
    clock = FakeClock()
    app = build_app(settings, clock=clock, mailer=mailer)
    found = Soak(total, warm_up)
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
            for n in range(total):
                dovecot.deliver(bot, mixed_mail(rng, n, bot, domain, secrets), lmtp=lmtp)

        service = app.service
        first: tracemalloc.Snapshot | None = None
        tracemalloc.start(1)
        try:
            while found.processed < total:
                report = service.poll(max_batches=1)
                if report.fetched == 0:
                    break
                found.processed += report.fetched
                found.duplicates += report.duplicates
                found.outcomes.update(report.outcomes)
                clock.advance(minutes=30)  # rate limits and deadlines move on: a day in a few batches
                service.tick(read_first=False)  # the loop reads one batch at a time itself
                service.send()
                if found.processed >= total or (found.processed >= warm_up and not found.memory):
                    clear_bounded_caches(app.db.engine)
                    gc.collect()
                    snapshot = held(tracemalloc.take_snapshot())
                    found.memory.append((sum(s.size for s in snapshot.statistics("filename")), rss_kib()))
                    first = first or snapshot
            last = held(tracemalloc.take_snapshot())
        finally:
            tracemalloc.stop()
        if first is not None:
            found.top = "\n".join(str(s) for s in last.compare_to(first, "lineno")[:8])
        found.sent = mailer.sent
        with app.db.read() as session:
            found.quarantined = session.scalar(select(func.count()).select_from(Quarantine)) or 0
            found.recorded = session.scalar(select(func.count()).select_from(InboundMessage)) or 0
        client = dovecot.imap_client(bot)
        try:
            found.left_in_inbox = len(client.search("ALL"))
            found.in_processed = int(client.folder_status("Processed", [b"MESSAGES"])[b"MESSAGES"])
        finally:
            client.logout()
    finally:
        app.close()
    return found


def problems(found: Soak) -> list[str]:
    """What is wrong with a soak: every mail read and ending applied, refused or ignored (or a
    duplicate), none quarantined, the inbox emptied into Processed, the memory flat."""
    wrong = []
    if found.processed != found.total or found.in_processed != found.total or found.left_in_inbox != 0:
        wrong.append(
            f"read {found.processed} of {found.total}; {found.left_in_inbox} left in INBOX, "
            f"{found.in_processed} in Processed"
        )
    if not set(found.outcomes) <= {"applied", "refused", "ignored"}:
        wrong.append(f"outcomes {dict(found.outcomes)}")
    if sum(found.outcomes.values()) + found.duplicates != found.total or found.recorded != sum(found.outcomes.values()):
        wrong.append(f"{sum(found.outcomes.values())} outcomes, {found.duplicates} duplicates, {found.recorded} rows")
    if found.quarantined:
        wrong.append(f"{found.quarantined} quarantined")
    if len(found.memory) != 2:
        wrong.append(f"{len(found.memory)} measurements")
        return wrong
    if found.growth >= found.leak_bound:
        wrong.append(
            f"memory grew {found.growth / 2**20:.1f} MiB over {found.total - found.warm_up} mails:\n{found.top}"
        )
    if found.rss_growth_kib >= RSS_TARGET_MIB * 1024:
        wrong.append(f"RSS grew {found.rss_growth_kib / 1024:.0f} MiB")
    return wrong


def run(world: Any, total: int = TOTAL) -> dict[str, Any]:
    """The soak at `total` mails (the first half the warm-up), on the benchmark's Dovecot."""
    quiet = logging.getLogger("flagman")  # a line a mail on the terminal otherwise (the clocks disagree)
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        found = soak(world.dovecot, world.database_url("soak"), world.root, total, total // 2)
    finally:
        quiet.setLevel(level)
    wrong = problems(found)
    return {
        "benchmark": "soak",
        "mails": found.total,
        "outcomes": {str(k): n for k, n in found.outcomes.items()},
        "duplicates": found.duplicates,
        "traced_growth_bytes": found.growth if found.memory else None,
        "leak_bound_bytes": found.leak_bound,
        "rss_growth_kib": found.rss_growth_kib if found.memory else None,
        "met": not wrong,
        "problems": wrong,
        "line": found.line() if found.memory else f"soak     {found.total} mails: " + "; ".join(wrong),
    }
