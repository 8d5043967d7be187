"""The send right after the tick, in the process that ticked: what the outbox's handoff saves.

``python -m bench.handoff [--games 50] [--runs 3] [--db postgresql]``

Set-up (not timed): `--games` Racecraft games of 8 on a fresh database (SQLite, or a private
PostgreSQL server), orders on file, the database kept. An SMTP sink (aiosmtpd) in a thread of
this process. Then `--runs` times, alternated, with the handoff on (as the service has it) and
off (`Handoff.capacity` 0: every body read back from the database, as before it): the database
put back, the application built, `Service.tick()` in this process (not timed, the turn worker
off), then `Service.send()` timed: the CPU seconds of the thread that sends (`time.thread_time`:
the drain reads, sends and records each outcome in it) and, on PostgreSQL, of the server's
processes meanwhile (`bench.usage`, /proc). No wall seconds decide anything.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.handoff", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args(argv)

    from bench.deadline import put_orders_on_file
    from bench.harness import fresh_database, keep, put_back
    from bench.tick import SET_UP, spec_for
    from bench.usage import processes
    from bench.worker import _children
    from bench.world import load_settings, setup_games
    from bot.app import build_app
    from bot.clock import FixedClock
    from bot.daemon.jobs import share_the_interpreter
    from bot.dice import SeededEntropy
    from bot.mail_in.inbox import MaildirInbox
    from bot.mail_out.handoff import handoff_for
    from tests.servers import Postgres, SmtpSink

    root = Path(tempfile.mkdtemp(prefix="fm-handoff-"))
    sink = SmtpSink()
    postgres = None
    try:
        sink.start()
        url = None
        if args.db == "postgresql":
            postgres = Postgres()
            postgres.start()
            url = postgres.create_database("bench_handoff")
        url = fresh_database(root, url)
        spec = spec_for(root, url)
        spec["data"]["schedule"] = {"resolve_workers": 0}
        setup_games(spec, args.games, prefix="ho", clock=FixedClock(SET_UP))
        put_orders_on_file(spec)
        pristine = keep(root, url)
        spec["data"]["outbox"] = {"kind": "smtp", "host": sink.host, "port": sink.port, "security": "none"}
        settings = load_settings(spec)
        share_the_interpreter()
        results: dict[str, list[tuple[float, float, int]]] = {"on": [], "off": []}
        for _ in range(args.runs):
            for mode in ("on", "off"):
                put_back(root, url, pristine)
                sink.reset()
                app = build_app(
                    settings,
                    clock=FixedClock(SET_UP + timedelta(days=2, hours=1)),
                    inbox=MaildirInbox(root / "inbox"),
                    entropy=SeededEntropy(2026),
                )
                try:
                    handoff = handoff_for(app.db.engine)
                    handoff.capacity = 0 if mode == "off" else type(handoff)().capacity
                    app.service.tick()

                    def server_cpu() -> float:
                        # Every process of the server now (a backend that ended is not counted).
                        if postgres is None or postgres.proc is None:
                            return 0.0
                        return processes([postgres.proc.pid, *_children(postgres.proc.pid)]).cpu

                    s0, c0 = server_cpu(), time.thread_time()
                    report = app.service.send()
                    cpu, server = time.thread_time() - c0, server_cpu() - s0
                finally:
                    app.close()
                results[mode].append((cpu, server, report.sent))
        for mode, runs in results.items():
            sent = runs[-1][2]
            cpu = statistics.median(r[0] for r in runs)
            server = statistics.median(r[1] for r in runs)
            print(
                f"handoff {mode:3}: {sent} mails on {args.db}: sender CPU {cpu:.3f} s ({1000 * cpu / sent:.3f} ms a mail;"
                f" runs {', '.join(f'{r[0]:.3f}' for r in runs)})"
                + (
                    f", server CPU {server:.3f} s ({1000 * server / sent:.3f} ms a mail;"
                    f" runs {', '.join(f'{r[1]:.3f}' for r in runs)})"
                    if postgres is not None
                    else ""
                )
            )
        return 0
    finally:
        sink.stop()
        if postgres is not None:
            postgres.stop()
            postgres.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
