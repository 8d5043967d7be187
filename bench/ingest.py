"""ingest: N order mails in the inbox; the bot works through all of them.

The same N mails are delivered over LMTP into two fresh mailboxes: one for the reference
(a minimal imapclient loop), one for the bot (`Service.poll` with the real `ImapInbox`; the
confirmations land in the outbox table, no SMTP needed). Throughput = mails / seconds.
Each side runs `RUNS` times, alternated (bot, reference, bot, ...), over the same mails moved
back into its INBOX, the bot's database put back as set up before each of its runs; the median
run of each side counts. Target: bot >= 0.55 x reference (performance.md asked 0.5).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from bench.mails import order_mails
from bench.world import (
    BOT_PASSWORD,
    World,
    deliver_all,
    inbox_count,
    median_run,
    move_back,
    run_beside,
    setup_games,
)

MAILS_PER_SEAT = 10  # a seat sends at most this many (the default limit is 30 an hour)
TARGET = 0.55
RUNS = 3  # runs of each side, alternated; the median of each counts


def prepare(world: World, size: int) -> dict[str, Any]:
    """Games, mailboxes, mails delivered (not timed). Returns what the runs need."""
    games = max(1, math.ceil(size / (8 * MAILS_PER_SEAT)))
    bot_box, ref_box = world.mailbox("flagman"), world.mailbox("reference")
    spec = world.settings_spec(address=bot_box, url=world.database_url("ingest"))
    t0 = time.perf_counter()
    seats = setup_games(spec, games, early_resolution=False)
    setup_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    delivered = deliver_all(
        world.dovecot, ((mid, data) for _, mid, data in order_mails(seats, size)), [ref_box, bot_box]
    )
    deliver_seconds = time.perf_counter() - t0
    for box in (ref_box, bot_box):
        if inbox_count(world.dovecot, box) != size:
            raise RuntimeError(f"{box}: {inbox_count(world.dovecot, box)} mails in the INBOX, not {size}")
    return {
        "spec": spec,
        "bot_box": bot_box,
        "ref_box": ref_box,
        "games": games,
        "delivered": delivered,
        "setup_seconds": setup_seconds,
        "lmtp_rate": 2 * delivered / deliver_seconds,
    }


def run(world: World, size: int = 5000, *, profile: Path | None = None) -> dict[str, Any]:
    prep = prepare(world, size)
    url = prep["spec"]["data"]["database"]["url"]
    kept = world.kept(url)  # the games as set up: each of the bot's runs starts from them
    bots: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    filed: list[tuple[int, int]] = []  # after each bot run: the mails left in its INBOX, and in Processed
    # RUNS runs of each side, alternated (bot, reference, bot, ...), over the same mails, the
    # median of each counting: the reference is short and Dovecot-bound, and the machine's speed
    # moves from one minute to the next, so a busy moment moves one run of one side, not the ratio.
    for attempt in range(RUNS):
        if attempt:
            world.put_back(url, kept)
            move_back(world.dovecot, prep["bot_box"])
            move_back(world.dovecot, prep["ref_box"])
        bots.append(
            run_beside(
                world,
                "ingest-bot",
                {"settings": prep["spec"], "log_file": str(world.root / "ingest-bot.log")},
                profile=profile if not attempt else None,
            )
        )
        filed.append(
            (inbox_count(world.dovecot, prep["bot_box"]), inbox_count(world.dovecot, prep["bot_box"], "Processed"))
        )
        refs.append(
            run_beside(
                world,
                "ingest-ref",
                {
                    "host": world.dovecot.host,
                    "port": world.dovecot.imap_port,
                    "user": prep["ref_box"],
                    "password": BOT_PASSWORD,
                },
            )
        )
    bot = median_run(bots)
    ref = median_run(refs)
    ref_rate = ref["fetched"] / ref["seconds"]
    bot_rate = bot["fetched"] / bot["seconds"]
    ratio = bot_rate / ref_rate
    problems = []
    if any(r["fetched"] != size for r in refs):
        problems.append(f"reference fetched {[r['fetched'] for r in refs]}, not {size}")
    if any(r["fetched"] != size for r in bots) or filed != [(0, size)] * len(bots):
        problems.append(
            f"bot fetched {[r['fetched'] for r in bots]}; left in INBOX and in Processed after each run: {filed}"
        )
    applied = [r["outcomes"].get("applied", 0) for r in bots]
    if applied != [size] * len(bots):
        problems.append(f"applied {applied} of {size}: {[r['outcomes'] for r in bots]}")
    return {
        "benchmark": "ingest",
        "size": size,
        "games": prep["games"],
        "bot": {
            **bot,
            "mails_per_second": bot_rate,
            # The parse worker's CPU and memory are the bot's too (bot.mail_in.parse_worker).
            "cpu_ms_per_mail": 1000 * (bot["cpu_seconds"] + bot["worker_cpu_seconds"]) / size,
            "service_cpu_ms_per_mail": 1000 * bot["cpu_seconds"] / size,
            "peak_rss_mb": bot["peak_rss_mb"] + bot["worker_peak_rss_mb"],
            "service_peak_rss_mb": bot["peak_rss_mb"],
        },
        "reference": {**ref, "mails_per_second": ref_rate},
        "lmtp_deliveries_per_second": prep["lmtp_rate"],
        "ratio": ratio,
        "target": f">= {TARGET} x reference",
        "met": ratio >= TARGET and not problems,
        "problems": problems,
        "line": (
            f"ingest   {size:>6} mails: bot {bot_rate:8.1f} mails/s, reference {ref_rate:8.1f} mails/s, "
            f"ratio {ratio:.3f} (target >= {TARGET}) {'OK' if ratio >= TARGET and not problems else 'MISSED'}"
            f"; bot CPU {1000 * (bot['cpu_seconds'] + bot['worker_cpu_seconds']) / size:.2f} ms/mail "
            f"({1000 * bot['worker_cpu_seconds'] / size:.2f} in {bot['parse_workers']} parse worker, started "
            f"ahead: {bot.get('worker_start_cpu_seconds', 0):.2f} s CPU not timed), "
            f"peak RSS {bot['peak_rss_mb'] + bot['worker_peak_rss_mb']:.0f} MB "
            f"(parse worker {bot['worker_peak_rss_mb']:.0f} MB), "
            f"{sum(bot['statements'].values()) / size:.3f} statements/mail "
            f"({', '.join(f'{k} {v}' for k, v in sorted(bot['statements'].items()))})"
            + (f" [{'; '.join(problems)}]" if problems else "")
            + f"\n  {len(bots)} runs of each side, alternated (the median run of each above): bot "
            + ", ".join(f"{size / seconds:.1f}" for seconds in bot["runs_seconds"])
            + " mails/s; reference "
            + ", ".join(f"{size / seconds:.1f}" for seconds in ref["runs_seconds"])
            + " mails/s"
        ),
    }
