"""A bot process for the fault-injection tests: works until nothing is left, then exits 0.

    python -m tests.e2e.bot_worker CONFIG NOW [POINT:N] [overlapped]

or `serve(CONFIG, NOW, POINT:N, LOG, overlapped)` as the target of a process forked from a server that has
this module (and so the bot) imported already (tests/e2e/test_faults.py): the same process,
without paying for the imports each time. It runs the real jobs (poll over IMAP, tick, send over SMTP) on the configuration's
database, with the clock fixed at NOW (ISO 8601), so a test can kill it at any moment and
start it again. With POINT:N (a `bot.faults.CrashPoint` value and a count), the process kills
itself with SIGKILL the N-th time it reaches that crash point: a kill exactly there, whatever
the machine's speed. A run that never reaches it N times ends normally (exit 0).

By default the jobs take turns (poll, tick, send). `overlapped` runs them as the service does
(`bot.daemon.jobs.Runner`): the send in a thread of its own, woken as each batch of mail is
committed and as each turn is resolved, sending while the poll and the tick go on.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select

from bot.app import build_app
from bot.faults import NO_FAULTS, CrashPoint, Faults
from bot.games.turns import due_turns, practice_pace
from bot.models import Outbox, OutboxStatus
from bot.service import Service
from bot.settings import load_settings
from bot.testing import FakeClock


class KillAt:
    """Faults that SIGKILL this process the `nth` time `point` is reached (nothing is flushed)."""

    def __init__(self, point: CrashPoint, nth: int) -> None:
        self.point, self.nth, self.seen = point, nth, 0

    def reached(self, point: CrashPoint) -> None:
        if point is self.point:
            self.seen += 1
            if self.seen == self.nth:
                os.kill(os.getpid(), signal.SIGKILL)


def parse_kill(spec: str) -> KillAt:
    point, _, nth = spec.partition(":")
    return KillAt(CrashPoint(point), int(nth or "1"))


def overlapped(service: Service) -> int:
    """One poll and one tick with the send beside them in a thread of its own, woken as each
    batch is committed and each turn resolved, and sending again while it is wanted (as
    `Runner.want_send` has it); returns how many mails the poll fetched. An error in the
    sender is raised here once the poll and the tick are over."""
    wanted, over = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def sender() -> None:
        try:
            while True:
                wanted.wait()
                wanted.clear()
                service.send()
                if over.is_set() and not wanted.is_set():
                    return
        except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
            failed.append(exc)

    thread = threading.Thread(target=sender, name="send")
    thread.start()
    try:
        fetched = service.poll(on_committed=wanted.set).fetched
        service.tick(on_resolved=wanted.set)
    finally:
        over.set()
        wanted.set()
        thread.join()
    if failed:
        raise failed[0]
    return fetched


def main(config: str, now: str, kill: str | None = None, mode: str = "") -> int:
    clock = FakeClock(datetime.fromisoformat(now))
    faults: Faults = parse_kill(kill) if kill else NO_FAULTS
    app = build_app(load_settings(Path(config)), clock=clock, faults=faults)
    service = app.service
    for _ in range(200):
        if mode == "overlapped":
            fetched = overlapped(service)
        else:
            fetched = service.poll().fetched
            service.tick()
            service.send()
        with app.db.read() as session:
            pending = (
                session.scalar(
                    select(func.count())
                    .select_from(Outbox)
                    .where(Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= clock.now())
                )
                or 0
            )
            due = due_turns(session, clock.now(), pace=practice_pace(app.settings.practice))
        if fetched == 0 and pending == 0 and not due:
            app.close()
            return 0
    app.close()
    return 1


def serve(config: str, now: str, kill: str | None, log: str, mode: str = "") -> None:
    """`main` in a process of its own, its standard error written to the file `log` (a
    traceback, if it fails); its exit status is main's (SIGKILL at the crash point)."""
    with open(log, "ab", buffering=0) as errors:
        os.dup2(errors.fileno(), 2)
    sys.stderr = open(2, "w", closefd=False)  # the process's stderr until it ends
    os.environ["FLAGMAN_IMAP_PASSWORD"] = "bot-pw"
    raise SystemExit(main(config, now, kill, mode))


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:5]))
