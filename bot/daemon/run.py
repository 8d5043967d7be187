"""`flagman run`: the service under systemd, from the start to a clean stop.

Life cycle (deploy/flagman.service, ``Type=notify``)::

    start -> the database checked (bot.daemon.startup) -> instance lock (standby while another
          instance holds it, see bot.host.instance) -> jobs scheduled (bot.daemon.jobs) -> READY=1
    every second: WATCHDOG=1, but only while the jobs are healthy (each of poll and tick
          finished within its interval plus WatchdogSec; the IDLE loop alive), so a hung
          job stops the pings and systemd restarts the service
    SIGHUP  -> RELOADING=1, re-read the configuration and the templates (bot.daemon.reload), READY=1
    SIGTERM -> STOPPING=1, no new job starts; the mail batch or turn in progress is finished
          and committed; exit 0

The watchdog is still fed while the jobs fail and wait (bot.daemon.backoff): the service is
doing the right thing (a restart would not bring the database back, and would use up the unit's
start limit); only a job that hangs stops it. With [metrics] file set, the figures an operator
watches are rewritten after every job (bot.daemon.metrics).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

from bot.app import build_app
from bot.daemon.jobs import Runner
from bot.daemon.metrics import RoleMetrics
from bot.daemon.signals import Signals
from bot.daemon.startup import NotMigrated, wait_for_database
from bot.host.instance import InstanceLock, lock_for, wait_for_lock
from bot.ops.notify import Notifier
from bot.settings import Settings

log = logging.getLogger("flagman.service")


def run_service(
    settings: Settings,
    *,
    config_path: Path | None = None,
    notifier: Notifier | None = None,
    lock: InstanceLock | None = None,
    version: str = "",
    migrate: bool = False,
) -> int:
    """`flagman run`: the service until SIGTERM/SIGINT. 0 on a clean stop, 1 if the lock was lost
    or the database needs migrating. A database that cannot be used at the start raises (the
    CLI says why: bot.cli.servers)."""
    notifier = notifier or Notifier()
    signals = Signals()
    signals.install()
    role = RoleMetrics(settings, version)
    try:
        if not wait_for_database(settings, signals, notifier, migrate=migrate, role=role):
            notifier.stopping("stopped while waiting to start")
            signals.uninstall()
            return 0
    except BaseException as exc:
        signals.uninstall()
        if isinstance(exc, NotMigrated):
            print(f"flagman run: {exc}", file=sys.stderr)
            return 1
        raise
    lock = lock if lock is not None else lock_for(settings)
    if lock is not None and not _take_lock(lock, signals, notifier, role):
        notifier.stopping("stopped while on standby")
        lock.release()
        signals.uninstall()
        return 0
    app = build_app(settings)
    runner = Runner(app, config_path=config_path, notifier=notifier, version=version)
    runner.backoff.running_status = f"running: inbox {settings.inbox.kind}, outbox {settings.outbox.kind}"
    try:
        runner.start()
        notifier.ready(runner.backoff.status_text())
        return _until_stopped(runner, signals, notifier, lock)
    finally:
        notifier.stopping("finishing the work in progress")
        log.info("stopping: finishing the job in progress")
        runner.stop()
        if lock is not None:
            lock.release()
        signals.uninstall()


def _take_lock(lock: InstanceLock, signals: Signals, notifier: Notifier, role: RoleMetrics) -> bool:
    """The instance lock, at once or after waiting on standby for it: True once held, False if a
    stop came first."""
    notifier.status("waiting for the instance lock")
    try:
        got = lock.try_acquire()
        waiting = f"standby: another instance holds {lock.description}"
    except Exception as exc:  # noqa: BLE001 - e.g. PostgreSQL restarting: wait on standby, retrying
        from bot.safe_text import error_text

        log.warning("cannot take %s yet: %s; waiting on standby", lock.description, error_text(exc))
        got = False
        waiting = f"standby: cannot take {lock.description} yet: {error_text(exc)}"
    if got:
        return True
    # On standby systemd must see us started (or TimeoutStartSec kills us), and
    # alive: READY now, watchdog pings while waiting.
    notifier.ready(waiting)
    role.write("standby", healthy=True)

    def on_standby() -> None:
        notifier.watchdog()
        role.write("standby", healthy=True)

    took_over = wait_for_lock(lock, signals.stop, retry=2.0, on_wait=on_standby)
    role.leave_standby()
    return took_over


def _until_stopped(runner: Runner, signals: Signals, notifier: Notifier, lock: InstanceLock | None) -> int:
    """The main loop while the jobs run: reloads on SIGHUP, the watchdog fed while the jobs are
    healthy, the lock checked every 10 s. 0 on a stop, 1 once the lock is lost."""
    grace = notifier.watchdog_seconds or 60.0
    lock_checked = time.monotonic()
    while not signals.stopping:
        signals.wait(1.0)
        if signals.reloading and not signals.stopping:
            signals.reloading = False
            notifier.reloading()
            runner.reload()
            notifier.ready(runner.backoff.status_text())
        stuck = not runner.healthy(grace)
        if stuck != runner.backoff.stuck:
            # Said once as it happens, and once as it ends; not at every turn of the loop.
            runner.backoff.stuck = stuck
            if stuck:
                log.error("a job is stuck (no poll or tick finished in time): withholding the watchdog ping")
            else:
                log.warning("the jobs finish again: feeding the watchdog")
            notifier.status(runner.backoff.status_text())
        if notifier.watchdog_due() and not stuck:
            notifier.watchdog()
        if lock is not None and time.monotonic() - lock_checked >= 10.0:
            lock_checked = time.monotonic()
            if not lock.held():
                log.error("lost %s: stopping so that only one instance runs", lock.description)
                return 1
    return 0
