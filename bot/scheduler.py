"""The service: APScheduler 3 runs the jobs; IMAP IDLE wakes the poll at once.

Jobs are thin and idempotent (each is also a CLI subcommand): poll, tick, send, and the
daily digest. Deadlines live in our tables, not in the job store, so a restart loses
nothing; a tick runs at start-up, so a deadline that passed while the service was down is
handled at once.
"""

from __future__ import annotations

import logging
import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler

from bot.app import App, build_app, build_inbox
from bot.settings import Settings, load_settings

log = logging.getLogger("flagman.service")

JOB_DEFAULTS = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}


class Runner:
    def __init__(self, app: App, *, config_path: Path | None = None) -> None:
        self.app = app
        self.config_path = config_path
        self.stop_event = threading.Event()
        self.scheduler = BackgroundScheduler(job_defaults=JOB_DEFAULTS, timezone=UTC)
        self.lock = threading.Lock()
        self.hooks: list[Any] = []  # called after each job (e.g. the systemd watchdog)

    # -- jobs --------------------------------------------------------------------------------
    def _guard(self, name: str, func: Any) -> Any:
        def job() -> None:
            if self.stop_event.is_set():
                return
            try:
                func()
            except Exception:  # noqa: BLE001 - a failed job is logged and retried next time; the service runs on
                log.exception("job %s failed; it runs again on its schedule", name)
            for hook in self.hooks:
                hook(name)

        return job

    def poll(self) -> None:
        report = self.app.service.poll()
        if report.fetched:
            log.info("poll: %d mails: %s", report.fetched, report.outcomes)
            self.wake("send")
            self.wake("tick")

    def tick(self) -> None:
        done = self.app.service.tick()
        if done:
            log.info("tick: resolved %s", done)
            self.wake("send")

    def send(self) -> None:
        report = self.app.service.send()
        if report.sent or report.failed or report.retrying:
            log.info("send: sent %d, retrying %d, failed %d", report.sent, report.retrying, report.failed)

    def digest(self) -> None:
        from bot import digest

        digest.send_due_digests(self.app.shell)
        self.wake("send")

    def wake(self, job_id: str) -> None:
        job = self.scheduler.get_job(job_id)
        if job is not None:
            job.modify(next_run_time=datetime.now(UTC))

    def _idle_loop(self) -> None:
        """Wait on IMAP IDLE (a connection of its own) and wake the poll when mail comes."""
        inbox = build_inbox(self.app.settings)
        try:
            while not self.stop_event.is_set():
                try:
                    if inbox.wait(min(30.0, self.app.settings.schedule.poll_seconds)):
                        self.wake("poll")
                except Exception:  # noqa: BLE001 - reconnect after a pause; polling covers the gap
                    log.warning("IDLE connection lost; reconnecting", exc_info=True)
                    self.stop_event.wait(5)
        finally:
            inbox.close()

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        s = self.app.settings.schedule
        now = datetime.now(UTC)
        self.scheduler.add_job(self._guard("tick", self.tick), "interval", seconds=s.tick_seconds, id="tick", next_run_time=now)
        self.scheduler.add_job(self._guard("poll", self.poll), "interval", seconds=s.poll_seconds, id="poll", next_run_time=now)
        self.scheduler.add_job(self._guard("send", self.send), "interval", seconds=s.send_seconds, id="send", next_run_time=now)
        self.scheduler.add_job(self._guard("digest", self.digest), "interval", minutes=10, id="digest")
        self.scheduler.start()
        if self.app.settings.inbox.kind == "imap" and self.app.settings.inbox.idle:
            threading.Thread(target=self._idle_loop, name="idle", daemon=True).start()
        log.info("flagman running: inbox %s, outbox %s, database %s", self.app.settings.inbox.kind,
                 self.app.settings.outbox.kind, self.app.db.engine.url.render_as_string(hide_password=True))

    def reload(self) -> None:
        """SIGHUP: re-read templates (and the configuration's schedule)."""
        self.app.renderer.reload()
        log.info("templates reloaded")

    def stop(self) -> None:
        """Finish the job in progress, then stop."""
        self.stop_event.set()
        self.scheduler.shutdown(wait=True)
        self.app.close()
        log.info("flagman stopped")


def run_service(settings: Settings, *, config_path: Path | None = None) -> int:
    app = build_app(settings)
    runner = Runner(app, config_path=config_path)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGHUP, lambda *_: runner.reload())
    runner.start()
    try:
        while not stop.wait(1.0):
            pass
    finally:
        runner.stop()
    return 0


def load(config: Path | None) -> Settings:
    return load_settings(config)
