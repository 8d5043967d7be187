"""The deadline's tick alone, in this process, with no servers: CPU seconds and what it wrote.

``python -m bench.tick [--games 100] [--runs 3] [--profile FILE] [--url URL]``

Set-up (not timed): `--games` Racecraft games of 8 started on a fresh database (SQLite in a
temporary folder, or the PostgreSQL database `--url` names, which is emptied first), a valid
``USE n`` on file for every seat, the database kept as it is then. Each run puts that
database back, builds the application on a fixed clock (two days after the set-up, so every
turn is due) and times `Service.tick()`: CPU seconds of this process (the steadiest figure on
a shared machine) and wall seconds. It then hashes every outbox row the tick wrote, the
random parts of a mail (tokens in Message-IDs and bounce addresses, MIME boundaries, the Date
header) masked, so that a change meant to keep the mail byte-identical can show it did:
equal hashes before and after.

The benchmark proper (`python -m bench --only deadline`) times the tick and the send against
real servers and a same-run reference; this is the harness for working on the tick's CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.deadline import put_orders_on_file
from bench.harness import fresh_database, keep, put_back
from bench.overrides import overrides
from bench.world import SECRET, load_settings, setup_games
from bot.clock import FixedClock

_RANDOM = (
    re.compile(rb"[a-z_]+-[0-9a-f]{16}"),  # outbox tokens: Message-IDs, VERP bounce addresses
    re.compile(rb"=+[0-9]{10,}=+"),  # MIME boundaries
    re.compile(rb"^Date: .*$", re.M),
)


SET_UP = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)  # the games' start: the same mail in every run


def masked(data: bytes) -> bytes:
    for pattern in _RANDOM:
        data = pattern.sub(b"*", data)
    return data


def spec_for(root: Path, url: str) -> dict[str, Any]:
    return {
        "data": {
            "bot": {"address": "flagman@bench.test", "timezone": "Europe/London"},
            "database": {"url": url},
            "inbox": {"kind": "maildir", "path": str(root / "inbox")},
            "outbox": {"kind": "maildir", "path": str(root / "outbox")},
        },
        "env": {"FLAGMAN_SECRET": SECRET},
        "base_dir": str(root),
    }


def outbox_digest(app: Any) -> tuple[int, str]:
    from sqlalchemy import select

    from bot.models import Outbox, OutboxBody, OutboxStatus

    digest = hashlib.sha256()
    count = 0
    with app.db.read() as session:
        for kind, recipient, data in session.execute(
            select(Outbox.kind, Outbox.recipient, OutboxBody.data)
            .join(OutboxBody, OutboxBody.id == Outbox.id)
            .where(Outbox.status == OutboxStatus.PENDING)
            .order_by(Outbox.id)
        ):
            digest.update(f"{kind}\0{recipient}\0".encode())
            digest.update(masked(data))
            count += 1
    return count, digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tick", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="cProfile the last run into this file")
    parser.add_argument("--url", help="a PostgreSQL database to use (emptied first) instead of SQLite")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a bot setting, as in config.toml (schedule.resolve_workers=0: the whole tick in this process)",
    )
    args = parser.parse_args(argv)
    try:
        settings_overrides = overrides(args.set)
    except ValueError as exc:
        parser.error(str(exc))

    from bot.app import build_app
    from bot.daemon.jobs import share_the_interpreter
    from bot.dice import SeededEntropy
    from bot.mail_in.inbox import MaildirInbox
    from bot.mail_out.mailer import MaildirMailer

    root = Path(tempfile.mkdtemp(prefix="fm-tick-"))
    try:
        url = fresh_database(root, args.url)
        spec = spec_for(root, url)
        for section, values in settings_overrides.items():
            spec["data"].setdefault(section, {}).update(values)
        setup_games(spec, args.games, prefix="tk", clock=FixedClock(SET_UP))
        put_orders_on_file(spec)
        pristine = keep(root, url)
        settings = load_settings(spec)
        moment = SET_UP + timedelta(days=2, hours=1)
        cpu: list[float] = []
        worker_cpu: list[float] = []  # the turn worker's (bot.games.workers)
        wall: list[float] = []
        digests: set[tuple[int, str]] = set()
        share_the_interpreter()  # this process as the service's is (Runner.start)
        for run in range(args.runs):
            put_back(root, url, pristine)
            app = build_app(
                settings,
                clock=FixedClock(moment),
                inbox=MaildirInbox(root / "inbox"),
                mailer=MaildirMailer(root / "outbox"),
                entropy=SeededEntropy(2026),
            )
            try:
                profiler = cProfile.Profile(time.process_time) if args.profile and run == args.runs - 1 else None
                c0, w0, k0 = time.process_time(), time.perf_counter(), _children_cpu()
                if profiler is not None:
                    profiler.enable()
                resolved = app.service.tick()
                if profiler is not None:
                    profiler.disable()
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
                if profiler is not None:
                    profiler.dump_stats(str(args.profile))
                if len(resolved) != args.games:
                    print(f"tick resolved {len(resolved)} turns, not {args.games}", file=sys.stderr)
                    return 1
                digests.add(outbox_digest(app))
            finally:
                app.close()  # waits for the turn worker to end, so its CPU is counted below
            worker_cpu.append(_children_cpu() - k0)
        mails, digest = sorted(digests)[0]
        print(
            f"tick {args.games} games: CPU {statistics.median(cpu):.3f} s (runs {', '.join(f'{c:.3f}' for c in cpu)}) "
            f"+ {statistics.median(worker_cpu):.3f} s in the turn worker, "
            f"wall {statistics.median(wall):.3f} s; {mails} mails, outbox {digest[:16]}"
            + ("" if len(digests) == 1 else f" (runs differ: {len(digests)} digests)")
        )
        return 0 if len(digests) == 1 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended (the turn worker, once closed)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
