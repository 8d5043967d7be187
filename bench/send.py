"""The send alone: what the bot does a mail against the reference, and what it costs the SMTP sink.

``python -m bench.send [--games 50] [--runs 3] [--db postgresql] [--set SECTION.KEY=VALUE]``

Set-up (not timed): `--games` Racecraft games of 8 ticked on a fixed clock (as `bench.tick`
does), so the outbox holds their results mails, pending; the database kept as it is then. An
SMTP sink (aiosmtpd, no onward delivery) runs in a thread of this process. Then, `--runs`
times, alternated, each in a process of its own started beside the sink (its start and imports
not timed):

- the bot: the database put back, `Service.send()` over the real `SmtpMailer`: CPU seconds of
  its process (every thread: the sender, the outcomes' recorder), its context switches, its
  database round trips (`bench.worker.count_statements`) and its SMTP connections;
- the reference: the very bytes the bot sent, over one smtplib connection.

For each, the SMTP sink's thread's CPU while it ran (`bench.usage`, from /proc). No wall
seconds decide anything here: CPU a mail and the sink's CPU a mail are the figures, and they
hold on a shared machine. Prints one line each, medians of the runs.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _switches() -> tuple[int, int]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw, usage.ru_nivcsw


def child(mode: str, args: dict[str, Any]) -> dict[str, Any]:
    """One timed send in this process: the bot's (`Service.send`) or the reference's."""
    if mode == "bot":
        from bench.worker import count_statements
        from bench.world import load_settings
        from bot.app import build_app
        from bot.daemon.jobs import share_the_interpreter
        from bot.mail_out.smtp import SmtpMailer

        profiles: list[tuple[str, cProfile.Profile]] = []
        if args.get("profile"):
            # Every thread of the send profiled on its own (the sender here, the outcomes' recorder),
            # on thread CPU time, each into FILE-<thread>.prof.
            run = threading.Thread.run

            def profiled(thread: threading.Thread) -> None:
                profiler = cProfile.Profile(time.thread_time)
                profiles.append((thread.name, profiler))
                profiler.runcall(run, thread)

            threading.Thread.run = profiled  # type: ignore[method-assign,assignment]
            main = cProfile.Profile(time.thread_time)
            profiles.append(("main", main))
        app = build_app(load_settings(args["settings"]))
        statements = count_statements(app.db.engine)
        driver: Counter[str] = Counter()  # SQLite: every statement the driver ran, by its first word
        if app.db.engine.dialect.name == "sqlite":
            from sqlalchemy import event

            def trace(sql: str) -> None:
                driver[sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"] += 1

            @event.listens_for(app.db.engine, "checkout")
            def _traced(dbapi_connection: Any, *_args: Any) -> None:
                dbapi_connection.set_trace_callback(trace)

        share_the_interpreter()  # as the service does (bot.daemon.jobs.Runner.start)
        assert isinstance(app.mailer, SmtpMailer)
        try:
            statements.clear()
            driver.clear()
            switches0, cpu0, t0 = _switches(), _cpu(), time.perf_counter()
            if profiles:
                profiles[0][1].enable()
            report = app.service.send()
            if profiles:
                profiles[0][1].disable()
            wall, cpu, switches = time.perf_counter() - t0, _cpu() - cpu0, _switches()
            app.mailer.close()
        finally:
            app.close()
        for name, profiler in profiles:
            profiler.dump_stats(f"{args['profile']}-{name}.prof")
        return {
            "sent": report.sent,
            "cpu": cpu,
            "wall": wall,
            "voluntary": switches[0] - switches0[0],
            "involuntary": switches[1] - switches0[1],
            "statements": dict(statements),
            "driver_statements": dict(driver),
        }
    import smtplib

    mails = [(m["from"], m["to"], Path(m["file"]).read_bytes()) for m in args["mails"]]
    switches0, cpu0, t0 = _switches(), _cpu(), time.perf_counter()
    conn = smtplib.SMTP(args["host"], args["port"], timeout=30)
    conn.ehlo()
    for sender, to, data in mails:
        conn.sendmail(sender, [to], data)
    conn.quit()
    wall, cpu, switches = time.perf_counter() - t0, _cpu() - cpu0, _switches()
    return {
        "sent": len(mails),
        "cpu": cpu,
        "wall": wall,
        "voluntary": switches[0] - switches0[0],
        "involuntary": switches[1] - switches0[1],
    }


def _run_child(mode: str, args: dict[str, Any]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "bench.send", "--child", mode],
        input=json.dumps(args),
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=3600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"send child {mode} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.send", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument(
        "--profile", type=Path, help="cProfile each thread of the bot's last send into FILE-<thread>.prof"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        # As the service logs (bot.cli.setup_logging: INFO, one line a mail), into a file.
        logging.basicConfig(level=logging.INFO, filename=os.devnull, format="%(levelname)s %(name)s: %(message)s")
        for noisy in ("alembic", "sqlalchemy"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
        print(json.dumps(child(args.child, json.loads(sys.stdin.readline()))), flush=True)
        return 0

    from bench.deadline import put_orders_on_file
    from bench.harness import keep, put_back
    from bench.overrides import overrides
    from bench.tick import SET_UP, spec_for
    from bench.usage import task
    from bench.world import load_settings, setup_games
    from bot.app import build_app
    from bot.clock import FixedClock
    from bot.db import migrate
    from bot.dice import SeededEntropy
    from bot.mail_in.inbox import MaildirInbox
    from bot.mail_out.mailer import MaildirMailer
    from tests.servers import Postgres, SmtpSink

    settings_overrides = overrides(args.set)
    root = Path(tempfile.mkdtemp(prefix="fm-send-"))
    sink = SmtpSink()
    postgres = None
    try:
        sink.start()
        if args.db == "postgresql":
            postgres = Postgres()
            postgres.start()
            url = postgres.create_database("bench_send")
        else:
            url = f"sqlite:///{root / 'work.sqlite'}"
        migrate(url)
        spec = spec_for(root, url)
        setup_games(spec, args.games, prefix="sd", clock=FixedClock(SET_UP))
        put_orders_on_file(spec)
        app = build_app(
            load_settings({**spec, "data": {**spec["data"], "schedule": {"resolve_workers": 0}}}),
            clock=FixedClock(SET_UP + timedelta(days=2, hours=1)),
            inbox=MaildirInbox(root / "inbox"),
            mailer=MaildirMailer(root / "outbox"),
            entropy=SeededEntropy(2026),
        )
        try:
            app.service.tick()
        finally:
            app.close()
        pristine = keep(root, url)
        spec["data"]["outbox"] = {
            "kind": "smtp",
            "host": sink.host,
            "port": sink.port,
            "security": "none",
            "timeout": 30.0,
        }
        for section, values in settings_overrides.items():
            spec["data"].setdefault(section, {}).update(values)
        sink_thread = sink._controller._thread.native_id
        runs: dict[str, list[dict[str, Any]]] = {"bot": [], "reference": []}
        mails: list[dict[str, Any]] = []
        for _ in range(args.runs):
            for mode in ("bot", "reference"):
                if mode == "bot":
                    put_back(root, url, pristine)
                sink.reset()
                use0 = task(os.getpid(), sink_thread)
                last = len(runs[mode]) == args.runs - 1
                result = _run_child(
                    mode,
                    {"settings": spec, "profile": str(args.profile) if args.profile and last else None}
                    if mode == "bot"
                    else {"host": sink.host, "port": sink.port, "mails": mails},
                )
                result["sink_cpu"] = (task(os.getpid(), sink_thread) - use0).cpu
                result["connections"] = sink.greetings
                result["arrived"] = len(sink.messages)
                if mode == "bot" and not mails:
                    (root / "mails").mkdir()
                    for i, mail in enumerate(sink.messages):
                        file = root / "mails" / f"{i}.eml"
                        file.write_bytes(mail.data)
                        mails.append({"from": mail.mail_from, "to": mail.rcpt_tos[0], "file": str(file)})
                runs[mode].append(result)
        count = len(mails)
        for mode, results in runs.items():
            med = {k: statistics.median(r[k] for r in results) for k in ("cpu", "sink_cpu", "voluntary", "wall")}
            cpus = ", ".join(f"{r['cpu']:.3f}" for r in results)
            sinks = ", ".join(f"{r['sink_cpu']:.3f}" for r in results)
            statements = results[-1].get("statements", {})
            trips = ", ".join(f"{k} {v}" for k, v in sorted(statements.items()))
            ran = results[-1].get("driver_statements", {})
            trips += "; SQLite ran " + ", ".join(f"{k} {v}" for k, v in sorted(ran.items())) if ran else ""
            print(
                f"{mode:9} {count} mails on {args.db}: CPU {med['cpu']:.3f} s "
                f"({1000 * med['cpu'] / count:.3f} ms a mail; runs {cpus}), sink CPU {med['sink_cpu']:.3f} s "
                f"({1000 * med['sink_cpu'] / count:.3f} ms a mail; runs {sinks}), voluntary switches "
                f"{med['voluntary'] / count:.1f} a mail, connections {results[-1]['connections']}, "
                f"arrived {results[-1]['arrived']}, wall {med['wall']:.2f} s"
                + (f"; round trips {sum(statements.values()) / count:.2f} a mail ({trips})" if statements else "")
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
