"""The ingest's bot side alone, in this process, with no servers: CPU a mail and what it wrote.

``python -m bench.ingest_cpu [--size 2000] [--runs 3] [--profile FILE] [--url URL] [--set S.K=V]``

Set-up (not timed): the games `python -m bench --only ingest` makes for `--size` mails
(Racecraft games of 8, every turn waiting for its deadline) on a fresh database (SQLite in a
temporary folder, or the PostgreSQL database `--url` names, which is emptied first), kept as
it is then. Each run puts that database back, builds the application on a fixed clock (an
hour after the set-up) with a `FakeInbox` holding the bench's order mails, starts the parse
worker (when `[inbox] parse_workers` is not 0: its start is not counted, as in the benchmark)
and times `Service.poll()` until the inbox is empty: CPU seconds of this process, the parse
worker's (read from /proc while it runs), the database statements (`count_statements`, as the
benchmark counts them) and how many mails ended applied. It then hashes every outbox row the
poll wrote (the confirmations), the random parts of a mail masked as `bench.tick` masks them:
a change meant to keep the mail byte-identical must leave the hash as it was.
`--set inbox.parse_workers=0` parses in this process (in the read-ahead thread: cProfile sees
only the poll's own thread, so profile with it and read the parse from `parse_inbound` alone).

The benchmark proper (`python -m bench --only ingest`) times the same poll against a real
Dovecot and a same-run reference; this is the harness for working on the ingest's CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench.harness import fresh_database, keep, put_back
from bench.ingest import MAILS_PER_SEAT
from bench.mails import order_mails
from bench.overrides import overrides
from bench.tick import SET_UP, outbox_digest, spec_for
from bench.worker import count_statements, process_usage
from bench.world import load_settings, setup_games
from bot.clock import FixedClock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest_cpu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="cProfile the last run into this file")
    parser.add_argument("--url", help="a PostgreSQL database to use (emptied first) instead of SQLite")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a bot setting, as in config.toml (inbox.parse_workers=0: parse in this process)",
    )
    args = parser.parse_args(argv)
    try:
        settings_overrides = overrides(args.set)
    except ValueError as exc:
        parser.error(str(exc))

    from bot.app import build_app
    from bot.daemon.jobs import share_the_interpreter
    from bot.dice import SeededEntropy
    from bot.mail_in.parse_worker import WorkerParser
    from bot.mail_out.mailer import MaildirMailer
    from bot.testing import FakeInbox

    root = Path(tempfile.mkdtemp(prefix="fm-ingest-"))
    try:
        url = fresh_database(root, args.url)
        spec = spec_for(root, url)
        for section, values in settings_overrides.items():
            spec["data"].setdefault(section, {}).update(values)
        games = max(1, -(-args.size // (8 * MAILS_PER_SEAT)))
        seats = setup_games(spec, games, prefix="in", clock=FixedClock(SET_UP), early_resolution=False)
        mails = [data for _, _, data in order_mails(seats, args.size)]
        pristine = keep(root, url)
        settings = load_settings(spec)
        moment = SET_UP + timedelta(hours=1)
        cpu: list[float] = []
        worker_cpu: list[float] = []
        digests: set[tuple[int, str]] = set()
        statements: list[int] = []
        share_the_interpreter()  # this process as the service's is (Runner.start)
        for run in range(args.runs):
            put_back(root, url, pristine)
            inbox = FakeInbox(max_size=settings.limits.max_mail_bytes)
            for data in mails:
                inbox.deliver(data, received_at=moment)
            app = build_app(
                settings,
                clock=FixedClock(moment),
                inbox=inbox,
                mailer=MaildirMailer(root / "outbox"),
                entropy=SeededEntropy(2026),
            )
            counted = count_statements(app.db.engine)
            try:
                # The parse worker started before the clock, as the benchmark starts it.
                mail_parser = app.parser
                started = (
                    mail_parser.start(app.service.parse_options()) if isinstance(mail_parser, WorkerParser) else False
                )
                pids = mail_parser.worker_pids() if isinstance(mail_parser, WorkerParser) else ()
                start_cpu, _ = process_usage(pids)
                profiler = cProfile.Profile(time.process_time) if args.profile and run == args.runs - 1 else None
                counted.clear()
                c0 = time.process_time()
                if profiler is not None:
                    profiler.enable()
                report = app.service.poll()
                if profiler is not None:
                    profiler.disable()
                cpu.append(time.process_time() - c0)
                worker_cpu.append(process_usage(pids)[0] - start_cpu if started else 0.0)
                statements.append(sum(counted.values()))
                if profiler is not None:
                    profiler.dump_stats(str(args.profile))
                applied = report.outcomes.get("applied", 0)
                if applied != args.size or inbox.pending:
                    print(
                        f"{applied} of {args.size} applied, {len(inbox.pending)} left: {report.outcomes}",
                        file=sys.stderr,
                    )
                    return 1
                digests.add(outbox_digest(app))
            finally:
                app.close()
        count, digest = sorted(digests)[0]
        per_mail = [1000 * (c + w) / args.size for c, w in zip(cpu, worker_cpu, strict=True)]
        print(
            f"ingest {args.size} mails: CPU {statistics.median(per_mail):.3f} ms a mail "
            f"(runs {', '.join(f'{c:.3f}' for c in per_mail)}; "
            f"{1000 * statistics.median(worker_cpu) / args.size:.3f} of it in the parse worker, its start not counted); "
            f"{statistics.median(statements) / args.size:.3f} statements a mail; "
            f"{count} mails, outbox {digest[:16]}"
            + ("" if len(digests) == 1 else f" (runs differ: {len(digests)} digests)")
        )
        return 0 if len(digests) == 1 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
