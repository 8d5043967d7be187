"""The service: APScheduler 3 runs the jobs; IMAP IDLE wakes the poll at once.

Jobs are thin and idempotent (each is also a CLI subcommand): poll, tick, send, and the
daily digest. Deadlines live in our tables, not in the job store, so a restart loses
nothing; a tick runs at start-up, so a deadline that passed while the service was down is
handled at once.

Life cycle under systemd (deploy/flagman.service, ``Type=notify``)::

    start -> instance lock (standby while another instance holds it, see bot.instance)
          -> jobs scheduled -> READY=1
    every second: WATCHDOG=1, but only while the jobs are healthy (each of poll and tick
          finished within its interval plus WatchdogSec; the IDLE loop alive), so a hung
          job stops the pings and systemd restarts the service
    SIGHUP  -> RELOADING=1, re-read the configuration and the templates, READY=1
    SIGTERM -> STOPPING=1, no new job starts; the mail batch or turn in progress is finished
          and committed; exit 0

What SIGHUP reloads: the templates; the schedule (intervals of poll, tick and send); every
option of [bot], [auth], [limits] and the secrets (credentials are re-read). What needs a
restart: [database], [inbox], [outbox] (the connections are built once) and [schedule]
resolve_workers (the turn worker is built once); a reload that changes them says so in the log
and keeps the old ones.
"""

from __future__ import annotations

import logging
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from apscheduler.schedulers.background import BackgroundScheduler

from bot.app import App, build_app, build_inbox
from bot.ops.instance import InstanceLock, lock_for, wait_for_lock
from bot.ops.notify import Notifier
from bot.settings import Settings, load_settings

if TYPE_CHECKING:
    from types import FrameType

    _Handler: TypeAlias = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
    """A signal's handler, as `signal.signal` takes and returns it."""

log = logging.getLogger("flagman.service")

JOB_DEFAULTS = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}

# The jobs whose health the watchdog vouches for (the digest runs rarely and may be absent).
WATCHED = ("poll", "tick")


# At a deadline the tick renders one game's mail after another (CPU, holding the GIL) while
# the send job's thread sends the games already committed, waiting on the relay's answers (four
# a mail). At the interpreter's default switch interval (5 ms) each answer waits up to that long
# for the GIL, so the relay idles while the tick renders; at 0.2 ms the sender keeps it busy
# (bench: deadline, figures in bench/README.md). The other threads of the service are idle.
SWITCH_INTERVAL = 0.0002


def share_the_interpreter() -> None:
    """Let the service's threads take turns often (SWITCH_INTERVAL)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


class Runner:
    def __init__(self, app: App, *, config_path: Path | None = None, notifier: Notifier | None = None) -> None:
        self.app = app
        self.config_path = config_path
        self.notifier = notifier or Notifier(env={})
        self.stop_event = threading.Event()
        self.scheduler = BackgroundScheduler(job_defaults=JOB_DEFAULTS, timezone=UTC)
        # One reader of the inbox at a time: the poll job, or the tick reading before it resolves.
        self.intake = threading.Lock()
        self.waking = threading.Lock()  # see wake()
        # Set by want_send: the send job sends again when the send in hand is over (a wake
        # while the job runs would otherwise be dropped: one instance at a time).
        self.send_wanted = threading.Event()
        self.hooks: list[Callable[[str], None]] = []  # called with the job's name after each job (e.g. the systemd watchdog)
        self.finished: dict[str, float] = {}  # job -> time.monotonic() it last finished
        self.running: dict[str, float] = {}  # job -> time.monotonic() it started, while it runs
        self.idle_alive = 0.0  # the IDLE loop's last sign of life
        self.idle_thread: threading.Thread | None = None
        self.hooks.append(self._record_finished)

    # -- jobs --------------------------------------------------------------------------------
    def _guard(self, name: str, func: Callable[[], None]) -> Callable[[], None]:
        def job() -> None:
            if self.stop_event.is_set():
                return
            self.running[name] = time.monotonic()
            try:
                func()
            except Exception:  # noqa: BLE001 - a failed job is logged and retried next time; the service runs on
                log.exception("job %s failed; it runs again on its schedule", name)
            finally:
                self.running.pop(name, None)
            for hook in self.hooks:
                hook(name)

        return job

    def _record_finished(self, name: str) -> None:
        self.finished[name] = time.monotonic()

    def poll(self) -> None:
        with self.intake:
            self._poll()

    def _poll(self) -> None:
        # A stop request waits for the batch in hand, not for the whole inbox; each batch done
        # is progress: a long inbox keeps the watchdog fed.
        if self.stop_event.is_set():
            return
        report = self.app.service.poll(stop=self.stop_event.is_set,
                                       on_batch=lambda _report: self._record_finished("poll"))
        fetched = report.fetched
        if fetched:
            log.info("poll: %d mails: %s", fetched, dict(report.outcomes))
            self.want_send()
            self.wake("tick")

    def tick(self) -> None:
        # The mail that arrived by a deadline is read before the turn is resolved
        # (mail-interface.md: deadlines are judged by arrival, not by when the bot reads).
        self.poll()
        if self.stop_event.is_set():
            return
        # Each game's results go out as soon as its turn is committed, while the next resolves.
        done = self.app.service.tick(on_resolved=self.want_send)
        if done:
            log.info("tick: resolved a turn of %s", ", ".join(sorted({game for game, _ in done})))
            self.want_send()

    def send(self) -> None:
        while True:
            self.send_wanted.clear()
            report = self.app.service.send()
            if report.sent or report.failed or report.retrying:
                log.info("send: sent %d, retrying %d, failed %d", report.sent, report.retrying, report.failed)
            if not self.send_wanted.is_set() or self.stop_event.is_set():
                break

    def want_send(self) -> None:
        """Mail was queued: the send job runs now, or again once the send in hand is over."""
        self.send_wanted.set()
        self.wake("send")

    def digest(self) -> None:
        from bot.gm import digest

        digest.send_due_digests(self.app.shell)
        self.want_send()

    def wake(self, job_id: str) -> None:
        # Under `waking`, so that stop() never shuts the scheduler down while a job is between
        # this check and the scheduler call: APScheduler 3's shutdown(wait=True) holds the job
        # stores' lock while it waits for the running jobs, and get_job/modify need that lock
        # (a job waking another at that moment would never finish, and neither would the stop).
        with self.waking:
            if self.stop_event.is_set():
                return
            try:
                job = self.scheduler.get_job(job_id)
                if job is not None:
                    job.modify(next_run_time=datetime.now(UTC))
            except Exception:  # noqa: BLE001 - the scheduler is shutting down: the job runs next start
                log.debug("cannot wake %s", job_id, exc_info=True)

    def _idle_loop(self) -> None:
        """Wait on IMAP IDLE (a connection of its own) and wake the poll when mail comes."""
        inbox = build_inbox(self.app.settings)
        try:
            while not self.stop_event.is_set():
                self.idle_alive = time.monotonic()
                try:
                    if inbox.wait(min(30.0, self.app.settings.schedule.poll_seconds)):
                        self.wake("poll")
                except Exception:  # noqa: BLE001 - reconnect after a pause; polling covers the gap
                    log.warning("IDLE connection lost; reconnecting", exc_info=True)
                    self.stop_event.wait(5)
        finally:
            inbox.close()

    # -- health (the watchdog) ---------------------------------------------------------------
    def _intervals(self) -> dict[str, float]:
        s = self.app.settings.schedule
        return {"poll": s.poll_seconds, "tick": s.tick_seconds, "send": s.send_seconds}

    def healthy(self, grace: float) -> bool:
        """Has every watched job finished within its interval plus `grace` seconds?

        A job that hangs (a dead server without a timeout, a lock wait) stops finishing, so
        this turns False and the watchdog pings stop. Before its first run a job counts from
        the service start.
        """
        now = time.monotonic()
        intervals = self._intervals()
        for name in WATCHED:
            last = self.finished.get(name, self.started_at)
            if now - last > intervals[name] + grace:
                return False
        if self.idle_thread is not None:
            # The IDLE loop waits at most 30 s per cycle (plus its reconnect backoff).
            if not self.idle_thread.is_alive() or now - self.idle_alive > 60.0 + grace:
                return False
        return True

    # -- life cycle --------------------------------------------------------------------------
    started_at = 0.0

    def start(self) -> None:
        s = self.app.settings.schedule
        now = datetime.now(UTC)
        self.started_at = time.monotonic()
        share_the_interpreter()
        self.scheduler.add_job(self._guard("tick", self.tick), "interval", seconds=s.tick_seconds, id="tick", next_run_time=now)
        self.scheduler.add_job(self._guard("poll", self.poll), "interval", seconds=s.poll_seconds, id="poll", next_run_time=now)
        self.scheduler.add_job(self._guard("send", self.send), "interval", seconds=s.send_seconds, id="send", next_run_time=now)
        self.scheduler.add_job(self._guard("digest", self.digest), "interval", minutes=10, id="digest")
        self.scheduler.start()
        if self.app.settings.inbox.kind == "imap" and self.app.settings.inbox.idle:
            self.idle_alive = time.monotonic()
            self.idle_thread = threading.Thread(target=self._idle_loop, name="idle", daemon=True)
            self.idle_thread.start()
        log.info("flagman running: inbox %s, outbox %s, database %s", self.app.settings.inbox.kind,
                 self.app.settings.outbox.kind, self.app.db.engine.url.render_as_string(hide_password=True))

    def reload(self) -> None:
        """SIGHUP: re-read templates and the configuration (see the module docstring)."""
        self.app.renderer.reload()
        log.info("templates reloaded")
        if self.config_path is None:
            return
        try:
            new = load_settings(self.config_path)
        except Exception as exc:  # noqa: BLE001 - a broken file must not stop a running service
            log.error("configuration not reloaded, the old one stays in force: %s", exc)
            return
        old = self.app.settings
        kept = [f"[{name}]" for name in ("database", "inbox", "outbox") if getattr(new, name) != getattr(old, name)]
        if new.schedule.resolve_workers != old.schedule.resolve_workers:  # the turn worker is built once
            kept.append("[schedule] resolve_workers")
            new = replace(new, schedule=replace(new.schedule, resolve_workers=old.schedule.resolve_workers))
        if kept:
            log.warning("changes to %s need a restart (systemctl restart flagman); kept the old ones", ", ".join(kept))
            new = replace(new, database=old.database, inbox=old.inbox, outbox=old.outbox)
        self.app.settings = new
        self.app.renderer.reload()
        for job_id, seconds in self._intervals().items():
            if seconds != getattr(old.schedule, f"{job_id}_seconds"):
                self.scheduler.reschedule_job(job_id, trigger="interval", seconds=seconds)
                log.info("job %s now runs every %g s", job_id, seconds)
        log.info("configuration reloaded from %s", self.config_path)

    def stop(self) -> None:
        """Finish the job in progress, then stop."""
        self.stop_event.set()
        with self.waking:
            pass  # a wake under way has finished; any later one sees the stop and does nothing
        if self.scheduler.running:
            self.scheduler.shutdown(wait=True)
        self.app.close()
        log.info("flagman stopped")


class _Signals:
    """Signal handlers only note what came, in plain attributes; the main loop acts on it.

    A Python signal handler runs in the main thread between two of its bytecodes, possibly
    while that thread holds a lock: `threading.Event.wait` holds its Condition's lock for a
    moment on every wake-up, so an `Event.set()` in the handler can wait for a lock its own
    thread holds, forever (SIGTERM during the main loop's wait hung the service so). So the
    handlers take no lock; the main loop waits on a socket that `signal.set_wakeup_fd` writes a
    byte to when a signal comes (from C, before the handler runs), and wakes at once.
    """

    def __init__(self) -> None:
        self.stopping = False
        self.reloading = False
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self.stop = _StopFlag(self)
        self._before: dict[signal.Signals, _Handler] = {}
        self._before_fd = -1

    def install(self) -> None:
        self._before_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._before = {sig: signal.signal(sig, handler) for sig, handler in (
            (signal.SIGTERM, self._on_stop), (signal.SIGINT, self._on_stop), (signal.SIGHUP, self._on_reload))}

    def uninstall(self) -> None:
        """The handlers (and wake-up fd) there were before `install`."""
        for sig, handler in self._before.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(self._before_fd)
        self._read.close()
        self._write.close()

    def _on_stop(self, *_: object) -> None:
        self.stopping = True

    def _on_reload(self, *_: object) -> None:
        self.reloading = True

    def wait(self, timeout: float) -> None:
        """Up to `timeout` seconds, less if a signal comes (or came since the last wait)."""
        if not (self.stopping or self.reloading):
            select.select([self._read], [], [], timeout)
        try:
            while self._read.recv(512):
                pass
        except (BlockingIOError, InterruptedError):
            pass


class _StopFlag:
    """`_Signals.stopping` as the `is_set`/`wait` pair `wait_for_lock` waits on."""

    def __init__(self, signals: _Signals) -> None:
        self._signals = signals

    def is_set(self) -> bool:
        return self._signals.stopping

    def wait(self, timeout: float | None = None) -> bool:
        self._signals.wait(60.0 if timeout is None else timeout)
        return self._signals.stopping


def run_service(settings: Settings, *, config_path: Path | None = None, notifier: Notifier | None = None,
                lock: InstanceLock | None = None) -> int:
    """`flagman run`: the service until SIGTERM/SIGINT. 0 on a clean stop, 1 if the lock was lost."""
    notifier = notifier or Notifier()
    signals = _Signals()
    signals.install()
    lock = lock if lock is not None else lock_for(settings)
    if lock is not None:
        notifier.status("waiting for the instance lock")
        try:
            got = lock.try_acquire()
        except Exception:  # noqa: BLE001 - e.g. PostgreSQL still starting: wait on standby, retrying
            log.warning("cannot take %s yet", lock.description, exc_info=True)
            got = False
        if not got:
            # On standby systemd must see us started (or TimeoutStartSec kills us), and
            # alive: READY now, watchdog pings while waiting.
            notifier.ready(f"standby: another instance holds {lock.description}")
            if not wait_for_lock(lock, signals.stop, retry=2.0, on_wait=notifier.watchdog):
                notifier.stopping("stopped while on standby")
                lock.release()
                signals.uninstall()
                return 0
    code = 0
    app = build_app(settings)
    runner = Runner(app, config_path=config_path, notifier=notifier)
    try:
        runner.start()
        notifier.ready("running: " + f"inbox {settings.inbox.kind}, outbox {settings.outbox.kind}")
        grace = notifier.watchdog_seconds or 60.0
        lock_checked = time.monotonic()
        while not signals.stopping:
            signals.wait(1.0)
            if signals.reloading and not signals.stopping:
                signals.reloading = False
                notifier.reloading()
                runner.reload()
                notifier.ready("running (reloaded)")
            if notifier.watchdog_due():
                if runner.healthy(grace):
                    notifier.watchdog()
                else:
                    log.error("a job is stuck (no poll or tick finished in time): withholding the watchdog ping")
            if lock is not None and time.monotonic() - lock_checked >= 10.0:
                lock_checked = time.monotonic()
                if not lock.held():
                    log.error("lost %s: stopping so that only one instance runs", lock.description)
                    code = 1
                    break
    finally:
        notifier.stopping("finishing the work in progress")
        log.info("stopping: finishing the job in progress")
        runner.stop()
        if lock is not None:
            lock.release()
        signals.uninstall()
    return code
