"""The measured side of each benchmark, in a process of its own.

``python -m bench.worker MODE [--profile FILE] < args.json`` prints one JSON line. Start-up
(imports, settings) is not timed; each mode times only its work. Peak RSS is the process's
``VmHWM`` at the end (imports included: that is what the service costs).

Modes:
  ingest-bot     Service.poll over the real ImapInbox until the inbox is empty (the parse
                 worker started before the clock)
  ingest-ref     the reference: imapclient, batches of 100 UIDs, FETCH BODY.PEEK[], parse
                 each with email.message_from_bytes(policy=default), one UID MOVE per batch
  deadline-bot   Service.tick (every game resolves) with Service.send over SmtpMailer in a
                 thread, woken as each game is committed (as the service's jobs do it); the
                 turn worker started before the clock
  deadline-ref   the same number of pre-rendered mails of the same sizes over one smtplib
                 connection
  service        the bot's service loop (bot.daemon.jobs.Runner, IDLE on) until stdin closes
"""

from __future__ import annotations

import cProfile
import json
import logging
import os
import resource
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from bench.usage import Usage, processes, task
from bench.world import load_settings


def peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def process_usage(pids: Sequence[int]) -> tuple[float, float]:
    """CPU seconds and peak RSS (MB) of the processes `pids` (the bot's parse worker), added
    up, read from /proc while they run."""
    cpu = rss = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15 of stat)
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    rss += int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            continue
    return cpu, rss


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _switches() -> tuple[int, int]:
    """Context switches of every thread of this process, ended ones included (voluntary, involuntary)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw, usage.ru_nivcsw


# The threads beside this worker, [pid, tid] each, by name (`bench.world.World.beside`): what
# they use while the work is timed is reported with it.
BESIDE: dict[str, list[list[int]]] = {}


def _beside() -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for name, threads in BESIDE.items():
        totals[name] = Usage()
        for pid, tid in threads:
            if tid == -1:  # a server: the process and every child it has now (a child that ended is not counted)
                totals[name] += processes([pid, *_children(pid)])
            else:
                totals[name] += task(pid, tid)
    return totals


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry))
    return found


def _timed(work: Callable[[], dict[str, Any]], profile: str | None) -> dict[str, Any]:
    """`work()` timed: wall and CPU seconds of this process, what its first thread did with the
    cores and the context switches of all its threads (`usage`), and what the threads beside
    it used meanwhile (`beside`: the SMTP sink, the CPU burners; `bench.usage`)."""
    profiler = cProfile.Profile() if profile else None
    beside0 = _beside()
    main0, switches0 = task(os.getpid()), _switches()
    cpu0, t0 = _cpu(), time.perf_counter()
    started_at = time.clock_gettime(time.CLOCK_MONOTONIC)  # the machine's clock, which the bench reads too
    if profiler is not None:
        profiler.enable()
    result = work()
    if profiler is not None:
        profiler.disable()
    elapsed, cpu = time.perf_counter() - t0, _cpu() - cpu0
    main, switches = task(os.getpid()) - main0, _switches()
    beside = {name: (use - beside0[name]).as_dict() for name, use in _beside().items()}
    if profiler is not None and profile:
        profiler.dump_stats(profile)
    return {
        "seconds": elapsed,
        "started_at": started_at,
        "cpu_seconds": cpu,
        "peak_rss_mb": peak_rss_mb(),
        "usage": {
            "first_thread": main.as_dict(),
            "voluntary_switches": switches[0] - switches0[0],
            "involuntary_switches": switches[1] - switches0[1],
        },
        "beside": beside,
        **result,
    }


def count_statements(engine: Engine) -> Counter[str]:
    """Every round trip the engine makes, counted by the statement's first word (an
    executemany is one), with BEGIN, COMMIT and ROLLBACK as the connections report them and
    each connection handed out of the pool (`CHECKOUT`: on PostgreSQL one that lay idle a second
    or more is pinged first, one round trip more: `bot.db.PING_AFTER_IDLE`)."""
    counts: Counter[str] = Counter()

    @event.listens_for(engine, "before_cursor_execute")
    def _statement(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        counts[statement.lstrip().split(None, 1)[0].upper() if statement.strip() else "?"] += 1

    @event.listens_for(engine, "commit")
    def _commit(_conn: Any) -> None:
        counts["COMMIT"] += 1

    @event.listens_for(engine, "rollback")
    def _rollback(_conn: Any) -> None:
        counts["ROLLBACK"] += 1

    @event.listens_for(engine, "checkout")
    def _checkout(*_args: Any) -> None:
        counts["CHECKOUT"] += 1

    return counts


# -- ingest ---------------------------------------------------------------------------------


def ingest_bot(args: dict[str, Any], profile: str | None) -> dict[str, Any]:
    from bot.app import build_app
    from bot.daemon.jobs import share_the_interpreter
    from bot.mail_in.parse_worker import WorkerParser

    settings = load_settings(args["settings"])
    app = build_app(settings)
    service = app.service
    statements = count_statements(app.db.engine)
    # The parse worker started before the clock, as a service that has read a batch has it (a
    # fresh interpreter's start and imports are not timed, as this process's own are not).
    started = app.parser.start(service.parse_options()) if isinstance(app.parser, WorkerParser) else False
    share_the_interpreter()  # as Runner.start does
    ready_pids = app.parser.worker_pids() if isinstance(app.parser, WorkerParser) else ()
    start_cpu, _ = process_usage(ready_pids)
    ready = processes(ready_pids)

    def work() -> dict[str, Any]:
        statements.clear()
        report = service.poll()
        # The parse worker (bot.mail_in.parse_worker) works for the bot too: its CPU and memory count.
        worker_pids = app.parser.worker_pids() if isinstance(app.parser, WorkerParser) else ()
        worker_cpu, worker_rss = process_usage(worker_pids)
        return {
            "fetched": report.fetched,
            "outcomes": report.outcomes,
            "duplicates": report.duplicates,
            "parse_workers": len(worker_pids),
            "worker_started_ahead": started,
            "worker_start_cpu_seconds": start_cpu,
            "worker_cpu_seconds": worker_cpu - start_cpu,
            "worker_peak_rss_mb": worker_rss,
            "worker_usage": (processes(worker_pids) - ready).as_dict(),
            "statements": dict(statements),
        }

    try:
        return _timed(work, profile)
    finally:
        app.close()


def ingest_ref(args: dict[str, Any], profile: str | None) -> dict[str, Any]:
    from email import message_from_bytes, policy

    from imapclient import IMAPClient

    def work() -> dict[str, Any]:
        client = IMAPClient(args["host"], args["port"], ssl=False, timeout=30)
        client.login(args["user"], args["password"])
        client.select_folder("INBOX")
        uids = sorted(client.search(["ALL"]))
        parsed = 0
        for start in range(0, len(uids), 100):
            batch = uids[start : start + 100]
            for _uid, item in client.fetch(batch, ["BODY.PEEK[]"]).items():
                message_from_bytes(item[b"BODY[]"], policy=policy.default)
                parsed += 1
            client.move(batch, "Processed")
        client.logout()
        return {"fetched": parsed}

    return _timed(work, profile)


# -- deadline -------------------------------------------------------------------------------


def deadline_bot(args: dict[str, Any], profile: str | None) -> dict[str, Any]:
    from bot.app import build_app
    from bot.daemon.jobs import share_the_interpreter
    from bot.games.workers import ProcessTurnWorker

    settings = load_settings(args["settings"])
    app = build_app(settings)
    service = app.service
    marks: dict[str, float] = {}
    # The turn worker started before the clock, as a service that has run a deadline has it (a
    # fresh interpreter's start and imports are not timed, as this process's own are not).
    started = app.turn_worker.start(app.shell) if isinstance(app.turn_worker, ProcessTurnWorker) else False
    # This process's templates compiled before the clock too, as a service that has run a
    # deadline has them (each template is compiled once a process and kept).
    app.shell.renderer.compile_all()
    ready_pids = app.turn_worker.worker_pids() if isinstance(app.turn_worker, ProcessTurnWorker) else ()
    start_cpu, _ = process_usage(ready_pids)
    ready = processes(ready_pids)

    def work() -> dict[str, Any]:
        # As the service does it (bot.daemon.jobs.Runner: tick wakes the send job as each turn
        # is committed, and the send job sends again while it is wanted): the sender works in
        # a thread of its own while the tick resolves the next games.
        wanted, ticked = threading.Event(), threading.Event()
        reports: list[Any] = []

        def sender() -> None:
            while True:
                wanted.wait()
                wanted.clear()
                reports.append(service.send())
                if ticked.is_set() and not wanted.is_set():
                    return

        share_the_interpreter()  # as Runner.start does
        thread = threading.Thread(target=sender, name="send")
        thread.start()
        t0 = time.perf_counter()
        try:
            resolved = service.tick(on_resolved=wanted.set)
        finally:
            marks["tick"] = time.perf_counter() - t0
            ticked.set()
            wanted.set()
            thread.join()
        marks["send"] = time.perf_counter() - t0 - marks["tick"]
        # The turn worker (bot.games.workers) works for the bot too: its CPU and memory count.
        worker_pids = app.turn_worker.worker_pids() if isinstance(app.turn_worker, ProcessTurnWorker) else ()
        worker_cpu, worker_rss = process_usage(worker_pids)
        return {
            "resolved": len(resolved),
            "sent": sum(r.sent for r in reports),
            "sends": len(reports),  # Service.send calls (each drains what is committed by then)
            "failed": sum(r.failed for r in reports),
            "retrying": sum(r.retrying for r in reports),
            "turn_workers": len(worker_pids),
            "worker_started_ahead": started,
            "worker_start_cpu_seconds": start_cpu,
            "worker_cpu_seconds": worker_cpu - start_cpu,
            "worker_peak_rss_mb": worker_rss,
            "worker_usage": (processes(worker_pids) - ready).as_dict(),
        }

    try:
        result = _timed(work, profile)
    finally:
        app.close()
    return {**result, "tick_seconds": marks.get("tick"), "send_seconds": marks.get("send")}


def deadline_ref(args: dict[str, Any], profile: str | None) -> dict[str, Any]:
    import smtplib

    mails = [(m["from"], m["to"], Path(m["file"]).read_bytes()) for m in args["mails"]]

    # The files are read before the clock starts: the reference sends pre-rendered mail.
    def work() -> dict[str, Any]:
        conn = smtplib.SMTP(args["host"], args["port"], timeout=30)
        conn.ehlo()
        for sender, to, data in mails:
            conn.sendmail(sender, [to], data)
        conn.quit()
        return {"sent": len(mails), "bytes": sum(len(d) for _, _, d in mails)}

    return _timed(work, profile)


# -- the service (latency) --------------------------------------------------------------------


def service(args: dict[str, Any], profile: str | None) -> dict[str, Any]:
    from bot.app import build_app
    from bot.daemon.jobs import Runner

    settings = load_settings(args["settings"])
    app = build_app(settings)
    runner = Runner(app)
    runner.start()
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
    runner.stop()
    return {"peak_rss_mb": peak_rss_mb()}


MODES: dict[str, Callable[[dict[str, Any], str | None], dict[str, Any]]] = {
    "ingest-bot": ingest_bot,
    "ingest-ref": ingest_ref,
    "deadline-bot": deadline_bot,
    "deadline-ref": deadline_ref,
    "service": service,
}


def main(argv: list[str]) -> int:
    mode = argv[0]
    profile = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    args = json.loads(sys.stdin.readline())
    BESIDE.update(args.get("beside", {}))
    # As the service logs (bot.cli.setup_logging: INFO, one line per mail), into a file.
    log_file = args.get("log_file")
    logging.basicConfig(
        level=logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        **({"filename": log_file} if log_file else {"stream": sys.stderr}),
    )
    for noisy in ("alembic", "apscheduler", "imapclient", "sqlalchemy"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    result = MODES[mode](args, profile)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
