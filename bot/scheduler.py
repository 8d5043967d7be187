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
restart: [database], [inbox], [outbox], [log] and [metrics] (set up once) and [schedule]
resolve_workers (the turn worker is built once); a reload that changes them says so in the log
and keeps the old ones.

A failure that persists (the database, the disk, the IMAP server; or a bug in one job) is not
logged at every run of every job: the jobs that met it wait and try again with back-off
(BACKOFF_FIRST seconds, doubling, at most BACKOFF_MAX), one of them at a time, one log line
per step (what failed, the fix, when the next try is), and one line when it works again.
systemd's ``STATUS=`` says the same ("failing since ..."). The watchdog is still fed while the
jobs fail and wait: the service is doing the right thing (a restart would not bring the
database back, and would use up the unit's start limit); only a job that hangs stops it.

Start: before the lock, the database must answer, be at the schema's head revision, take a
write (rolled back) and, on SQLite, pass its quick_check. A fault that waiting mends (the
database server down, a read-only database or file system, a full disk) is waited out in the
process: one log line per kind of fault, ``STATUS=`` saying why, tries backing off from
START_RETRY_FIRST to START_RETRY_MAX seconds, and one line when it works again. A fault that
waiting does not mend stops it: a damaged database (two lines, status 4: restore a backup), one
not migrated (status 1).

With [metrics] file set, the figures an operator watches are rewritten after every job
(bot.ops.metrics).
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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from apscheduler.schedulers.background import BackgroundScheduler

from bot.answers import PollReport
from bot.app import App, build_app, build_inbox
from bot.ops.instance import InstanceLock, lock_for, wait_for_lock
from bot.ops.metrics import Tally
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

# How often the service applies the [retention] policy.
PRUNE_HOURS = 24

# A failure that persists: the jobs that met it try again after BACKOFF_FIRST seconds, then
# twice as long each time, at most BACKOFF_MAX (one log line each time).
BACKOFF_FIRST = 10.0
BACKOFF_MAX = 300.0


class Failing:
    """What is failing now (the database, the disk, the inbox, or one job), since when, how
    often in a row, which jobs met it, and when the next of them may try again."""

    def __init__(self, what: str, summary: str, since: datetime) -> None:
        self.what = what  # "database", "disk", "inbox", "job digest"
        self.summary = summary  # what failed, one line (for STATUS=)
        self.since = since
        self.failures = 0
        self.delay = 0.0
        self.next_try = 0.0  # time.monotonic()
        self.jobs: set[str] = set()  # the jobs that failed with it: they wait for the next try
        self.trying: str | None = None  # the job trying again now (the others wait for its outcome)


# At a deadline the tick renders one game's mail after another (CPU, holding the GIL) while
# the send job's thread sends the games already committed, waiting on the relay's answers (four
# a mail). At the interpreter's default switch interval (5 ms) each answer waits up to that long
# for the GIL, so the relay idles while the tick renders; at 0.2 ms the sender keeps it busy
# (bench: deadline, figures in bench/README.md). The other threads of the service are idle.
SWITCH_INTERVAL = 0.0002


class SchedulerSkips(logging.Filter):
    """APScheduler says at WARNING that a run of a job was skipped because that job still runs
    (one instance at a time), or came late: here both are normal (`wake` asks a running job to
    run again, `want_poll`/`want_send` remember it; a long deadline's tick delays the next), and
    `journalctl -p warning` must show only what needs an operator. Such a line is said at
    DEBUG (and only when DEBUG is on)."""

    NORMAL = ("skipped: maximum number of running instances reached", "was missed by")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and any(words in record.getMessage() for words in self.NORMAL):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger("flagman").isEnabledFor(logging.DEBUG)
        return True


_SKIPS = SchedulerSkips()


def quiet_scheduler_skips() -> None:
    """Install `SchedulerSkips` on APScheduler's loggers (once)."""
    for name in ("apscheduler.scheduler", "apscheduler.executors.default"):
        logger = logging.getLogger(name)
        if _SKIPS not in logger.filters:
            logger.addFilter(_SKIPS)


def share_the_interpreter() -> None:
    """Let the service's threads take turns often (SWITCH_INTERVAL)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


class Runner:
    def __init__(
        self,
        app: App,
        *,
        config_path: Path | None = None,
        notifier: Notifier | None = None,
        version: str = "",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.monotonic = monotonic  # the back-off's clock (a test's own, to step through it)
        self.version = version  # of this flagman, for the metrics file
        self.config_path = config_path
        self.notifier = notifier or Notifier(env={})
        self.stop_event = threading.Event()
        self.scheduler = BackgroundScheduler(job_defaults=JOB_DEFAULTS, timezone=UTC)
        quiet_scheduler_skips()
        # One reader of the inbox at a time: the poll job, or the tick reading before it resolves.
        self.intake = threading.Lock()
        self.waking = threading.Lock()  # see wake()
        # Set by want_send: the send job sends again when the send in hand is over (a wake
        # while the job runs would otherwise be dropped: one instance at a time).
        self.send_wanted = threading.Event()
        # Set by want_poll (the IDLE thread saw new mail): the same for the poll job.
        self.poll_wanted = threading.Event()
        self.hooks: list[
            Callable[[str], None]
        ] = []  # called with the job's name after each job (e.g. the systemd watchdog)
        self.finished: dict[str, float] = {}  # job -> time.monotonic() it last finished
        self.running: dict[str, float] = {}  # job -> time.monotonic() it started, while it runs
        self.idle_alive = 0.0  # the IDLE loop's last sign of life
        self.idle_thread: threading.Thread | None = None
        self.hooks.append(self._record_finished)
        self.failing: dict[str, Failing] = {}  # what is failing now (see Failing), under `self.health`
        self.health = threading.Lock()
        self.stuck = False  # a watched job hangs (the main loop withholds the watchdog ping)
        self.tally = Tally()  # what the metrics file counts
        self.running_status = "running"  # STATUS= while nothing fails (run_service sets it)
        self.metrics_path = app.settings.resolve_path(app.settings.metrics.file) if app.settings.metrics.file else None
        self._metrics_lock = threading.Lock()
        self._metrics_failed = False
        if self.metrics_path is not None:
            self.hooks.append(lambda _name: self.write_metrics())

    # -- jobs --------------------------------------------------------------------------------
    def _guard(self, name: str, func: Callable[[], None]) -> Callable[[], None]:
        def job() -> None:
            if self.stop_event.is_set():
                return
            if not self._may_run(name):
                # Waiting for the next try after a failure: the job came due and waits, which
                # is no hang (the watchdog's record is kept), and nothing is logged.
                for hook in self.hooks:
                    hook(name)
                return
            self.running[name] = time.monotonic()
            try:
                func()
            except Exception as exc:  # noqa: BLE001 - a failed job is logged and retried with back-off; the service runs on
                self._failed(name, exc)
            else:
                self._succeeded(name)
            finally:
                self.running.pop(name, None)
            for hook in self.hooks:
                hook(name)

        return job

    # -- failures and back-off -------------------------------------------------------------
    def _may_run(self, name: str) -> bool:
        """May the job run now? Not while something it failed with waits for its next try, nor
        while another job is trying again (one try at a time, one line per step)."""
        now = self.monotonic()
        with self.health:
            waiting = [f for f in self.failing.values() if name in f.jobs]
            if any(now < f.next_try or (f.trying is not None and f.trying != name) for f in waiting):
                return False
            for failing in waiting:
                failing.trying = name
            return True

    def _what_failed(self, name: str, exc: BaseException) -> tuple[str, str, str]:
        """(what failed: the key of its Failing, what to say, the fix) for a job's exception."""
        from bot.ops.storage import breakdown
        from bot.safe_text import error_text

        found = breakdown(exc, self.app.settings.database_url)
        if found is not None:
            return found.area, found.text, found.fix
        imap_error = getattr(sys.modules.get("bot.mail_in.imap"), "ImapError", None)
        if isinstance(imap_error, type) and isinstance(exc, imap_error):
            from bot.ops.reach import first_line

            cfg = self.app.settings.inbox
            return (
                "inbox",
                f"the IMAP server {cfg.host}:{cfg.port} cannot be used: {first_line(exc)}",
                "check [inbox] and the server (`flagman doctor` says what is wrong)",
            )
        return f"job {name}", f"job {name} failed: {error_text(exc)}", "a bug: report it with this log"

    def _failed(self, name: str, exc: BaseException) -> None:
        what, text, fix = self._what_failed(name, exc)
        self.tally.failed(name)
        now = self.monotonic()
        with self.health:
            for other in self.failing.values():  # this job's try is over, whatever it met
                if other.trying == name:
                    other.trying = None
            failing = self.failing.get(what)
            if failing is None:
                failing = self.failing[what] = Failing(what, text, datetime.now(UTC))
            joined = name not in failing.jobs and failing.failures > 0 and now < failing.next_try
            failing.jobs.add(name)
            failing.summary = text
            if joined:
                # Another job met the same failure within the same step: it waits with them, unsaid.
                return
            failing.failures += 1
            failing.delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (failing.failures - 1))
            failing.next_try = now + failing.delay
            count, since, delay, jobs = failing.failures, failing.since, failing.delay, sorted(failing.jobs)
        waiting = ", ".join(jobs)
        when = f"failure {count} in a row, since {since:%Y-%m-%d %H:%M:%S} UTC" if count > 1 else "first failure"
        if what.startswith("job ") and count == 1:
            log.error("%s (%s); %s waits: trying again in %g s", text, when, waiting, delay, exc_info=exc)
        else:
            log.error(
                "%s; %s; %s wait%s: trying again in %g s (%s)",
                text,
                fix,
                waiting,
                "s" if len(jobs) == 1 else "",
                delay,
                when,
            )
            log.debug("the failure of job %s", name, exc_info=exc)
        self._say_status()

    def _succeeded(self, name: str) -> None:
        self.tally.succeeded(name)
        recovered: list[Failing] = []
        with self.health:
            for what, failing in list(self.failing.items()):
                if failing.trying == name:
                    failing.trying = None
                if name in failing.jobs:
                    del self.failing[what]
                    recovered.append(failing)
        for failing in recovered:
            log.warning(
                "%s works again (job %s succeeded) after %d failure%s since %s UTC; the jobs run on their schedule",
                failing.what,
                name,
                failing.failures,
                "" if failing.failures == 1 else "s",
                f"{failing.since:%Y-%m-%d %H:%M:%S}",
            )
        if recovered:
            self._say_status()

    def status_text(self) -> str:
        """What STATUS= says now: running, failing (what, since when, next try) or stuck."""
        with self.health:
            failing = sorted(self.failing.values(), key=lambda f: f.since)
            now = self.monotonic()
            if self.stuck:
                return "stuck: a job hangs; the watchdog is not fed"
            if not failing:
                return self.running_status
            first = failing[0]
            wait = max(0.0, first.next_try - now)
            more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
            return (
                f"failing since {first.since:%Y-%m-%d %H:%M} UTC, {first.failures} time(s): {first.summary}{more}; "
                f"next try in {wait:.0f} s"
            )

    def _say_status(self) -> None:
        self.notifier.status(self.status_text())

    def is_failing(self) -> bool:
        with self.health:
            return bool(self.failing)

    # -- the metrics file ----------------------------------------------------------------------
    def write_metrics(self, *, up: bool = True) -> None:
        """Rewrite the [metrics] file (bot.ops.metrics); a failure to write it is logged once."""
        if self.metrics_path is None:
            return
        from bot.ops import metrics

        now = datetime.now(UTC)
        queues = None
        size = None
        if "database" not in self.failing:
            try:
                queues = metrics.queue_depths(self.app.db, now)
                size = metrics.database_bytes(self.app.db)
            except Exception:  # noqa: BLE001 - the figures from the database are left out, the rest written
                log.debug("metrics: the queues could not be read", exc_info=True)
        with self.health:
            failing = tuple(sorted((f.what, f.failures) for f in self.failing.values()))
            healthy = not failing and not self.stuck
        health = metrics.Health(up=up, healthy=healthy and up, failing=failing)
        text = metrics.render(
            self.tally.snapshot(),
            queues,
            health,
            version=self.version or "unknown",
            now=now,
            bot=self.app.settings.bot.address,
            database_bytes=size,
        )
        with self._metrics_lock:
            try:
                metrics.write_atomically(self.metrics_path, text)
            except OSError as exc:
                if not self._metrics_failed:
                    from bot.safe_text import error_text

                    log.error(
                        "cannot write the metrics file %s: %s (said once; the service runs on)",
                        self.metrics_path,
                        error_text(exc),
                    )
                self._metrics_failed = True
            else:
                if self._metrics_failed:
                    log.warning("the metrics file %s is written again", self.metrics_path)
                self._metrics_failed = False

    def _record_finished(self, name: str) -> None:
        self.finished[name] = time.monotonic()

    def poll(self) -> None:
        """Read the inbox until it is empty; again while new mail was seen during the pass (a
        wake of the poll job while it runs is dropped by the scheduler, see `want_poll`)."""
        while True:
            self.poll_wanted.clear()
            with self.intake:
                self._poll()
            if not self.poll_wanted.is_set() or self.stop_event.is_set():
                break

    def want_poll(self) -> None:
        """New mail came: the poll job runs now, or again once the pass in hand is over."""
        self.poll_wanted.set()
        self.wake("poll")

    def _poll(self) -> None:
        # A stop request waits for the batch in hand, not for the whole inbox; each batch done
        # is progress: a long inbox keeps the watchdog fed.
        if self.stop_event.is_set():
            return
        counted = PollReport()

        def batch_done(report: PollReport) -> None:
            # Each batch is committed: counted now (a later batch may fail), and it is progress.
            self.tally.received(
                {k: v - counted.outcomes.get(k, 0) for k, v in report.outcomes.items()},
                report.duplicates - counted.duplicates,
            )
            counted.outcomes = dict(report.outcomes)
            counted.duplicates = report.duplicates
            self._record_finished("poll")

        # Each batch's answers go out as soon as it is committed, before it is moved.
        report = self.app.service.poll(stop=self.stop_event.is_set, on_batch=batch_done, on_committed=self.want_send)
        fetched = report.fetched
        if fetched:
            outcomes = ", ".join(f"{count} {outcome}" for outcome, count in sorted(report.outcomes.items()))
            log.info(
                "poll: %d mails: %s",
                fetched,
                outcomes + (f", {report.duplicates} duplicate(s)" if report.duplicates else ""),
            )
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
            self.tally.sent(report.sent, report.retrying, report.failed)
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

    def prune(self) -> None:
        """The [retention] policy: the database in short transactions, the Processed folder on an
        IMAP connection of its own."""
        from bot.ops.retention import prune

        prune(self.app.db, self.app.settings, datetime.now(UTC))

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
        from bot.safe_text import error_text

        inbox = build_inbox(self.app.settings)
        failures = 0
        try:
            while not self.stop_event.is_set():
                self.idle_alive = time.monotonic()
                try:
                    if inbox.wait(min(30.0, self.app.settings.schedule.poll_seconds)):
                        self.want_poll()
                except Exception as exc:  # noqa: BLE001 - reconnect after a pause; polling covers the gap
                    # One line per try, each pause twice the last (5 s up to 5 min), so a server that
                    # is down for hours costs a line every five minutes, not a traceback every five seconds.
                    failures += 1
                    pause = min(BACKOFF_MAX, 5.0 * 2 ** (failures - 1))
                    # The server's outage is said once by bot.mail_in.imap (and its end); the
                    # IDLE loop's own steps are details.
                    log.log(
                        logging.INFO if failures == 1 else logging.DEBUG,
                        "IDLE connection lost (%s); reconnecting in %g s (failure %d in a row)",
                        error_text(exc),
                        pause,
                        failures,
                    )
                    log.debug("IDLE failure", exc_info=True)
                    while not self.stop_event.wait(min(pause, 30.0)):  # alive for the watchdog meanwhile
                        self.idle_alive = time.monotonic()
                        pause -= 30.0
                        if pause <= 0:
                            break
                else:
                    if failures:
                        log.info("IDLE connection back after %d failure(s)", failures)
                    failures = 0
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
        self.scheduler.add_job(
            self._guard("tick", self.tick), "interval", seconds=s.tick_seconds, id="tick", next_run_time=now
        )
        self.scheduler.add_job(
            self._guard("poll", self.poll), "interval", seconds=s.poll_seconds, id="poll", next_run_time=now
        )
        self.scheduler.add_job(
            self._guard("send", self.send), "interval", seconds=s.send_seconds, id="send", next_run_time=now
        )
        self.scheduler.add_job(self._guard("digest", self.digest), "interval", minutes=10, id="digest")
        # [retention]: once a day, the first a minute after the start (bot.ops.retention).
        self.scheduler.add_job(
            self._guard("prune", self.prune),
            "interval",
            hours=PRUNE_HOURS,
            id="prune",
            next_run_time=now + timedelta(minutes=1),
        )
        self.scheduler.start()
        if self.app.settings.inbox.kind == "imap" and self.app.settings.inbox.idle:
            self.idle_alive = time.monotonic()
            self.idle_thread = threading.Thread(target=self._idle_loop, name="idle", daemon=True)
            self.idle_thread.start()
        log.info(
            "flagman running: inbox %s, outbox %s, database %s",
            self.app.settings.inbox.kind,
            self.app.settings.outbox.kind,
            self.app.db.engine.url.render_as_string(hide_password=True),
        )
        self.write_metrics()

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
        kept = [
            f"[{name}]"
            for name in ("database", "inbox", "outbox", "log", "metrics")
            if getattr(new, name) != getattr(old, name)
        ]
        for key in ("resolve_workers", "resolve_niceness"):  # the turn worker is built once
            if getattr(new.schedule, key) != getattr(old.schedule, key):
                kept.append(f"[schedule] {key}")
                new = replace(new, schedule=replace(new.schedule, **{key: getattr(old.schedule, key)}))
        if kept:
            log.warning("changes to %s need a restart (systemctl restart flagman); kept the old ones", ", ".join(kept))
            new = replace(
                new, database=old.database, inbox=old.inbox, outbox=old.outbox, log=old.log, metrics=old.metrics
            )
        self.app.use_settings(new)
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
        self.write_metrics(up=False)
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
        self._before = {
            sig: signal.signal(sig, handler)
            for sig, handler in (
                (signal.SIGTERM, self._on_stop),
                (signal.SIGINT, self._on_stop),
                (signal.SIGHUP, self._on_reload),
            )
        }

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


class NotMigrated(Exception):
    """`flagman run` on a database that is not at this flagman's schema."""


def check_database(settings: Settings) -> None:
    """Can the service start on this database? It answers, is at the head revision, takes a
    write (rolled back) and is intact (SQLite's quick_check). Raises what the database says (bot.cli explains it: status 3 or 4), or
    NotMigrated."""
    from bot.app import open_database
    from bot.db import current_revision, head_revision
    from bot.ops.instance import sqlite_path
    from bot.ops.storage import check_intact, safe_url, write_probe

    path = sqlite_path(settings.database_url)
    if path is not None and not path.exists():  # not made here: `flagman migrate` makes it, private
        raise NotMigrated(f"no database at {path}: run `flagman migrate` (the unit does, before each start)")
    with open_database(settings.database_url, connect_timeout=10) as db:
        current, head = current_revision(db.engine), head_revision()
        if current != head:
            raise NotMigrated(
                f"the database {safe_url(settings.database_url)} is at revision {current or '(empty)'}, "
                f"this flagman needs {head}: run `flagman migrate` (the unit does, before each start)"
            )
        write_probe(db.engine)
        check_intact(db.engine, settings.database_url)


class RoleMetrics:
    """The [metrics] file while `flagman run` has no jobs yet: waiting to start, or on standby
    (an instance that writes nothing there would look like one that is gone). Failures to write
    it are logged once, as the Runner's."""

    def __init__(self, settings: Settings, version: str) -> None:
        self.path = settings.resolve_path(settings.metrics.file) if settings.metrics.file else None
        self.bot = settings.bot.address
        self.version = version or "unknown"
        self.failed = False

    def standby_path(self) -> Path | None:
        """Where a standby writes: a file of its own beside the active instance's (which may be
        on this host, with the same configuration), `-standby` added to its name."""
        if self.path is None:
            return None
        return self.path.with_name(f"{self.path.stem}-standby{self.path.suffix}")

    def leave_standby(self) -> None:
        """The standby's file goes once it takes over or stops: it says nothing true any more."""
        path = self.standby_path()
        if path is not None:
            path.unlink(missing_ok=True)

    def write(self, role: str, *, healthy: bool, failing: tuple[tuple[str, int], ...] = ()) -> None:
        path = self.standby_path() if role == "standby" else self.path
        if path is None:
            return
        from bot.ops import metrics

        health = metrics.Health(up=True, healthy=healthy, failing=failing)
        text = metrics.render(
            metrics.Tally(), None, health, version=self.version, now=datetime.now(UTC), bot=self.bot, role=role
        )
        try:
            metrics.write_atomically(path, text)
        except OSError as exc:
            if not self.failed:
                from bot.safe_text import error_text

                log.error("cannot write the metrics file %s: %s (said once)", path, error_text(exc))
            self.failed = True


# A database that cannot be used at the start (its server down, read-only, its disk full): the
# service waits in its own process and tries again after START_RETRY_FIRST seconds, then twice as
# long each time, at most START_RETRY_MAX; one log line per kind of fault (and one when it works),
# STATUS= saying why it waits. A restart by systemd would not mend any of them, and would use up
# the unit's start limit (StartLimitBurst) while the fault lasts.
START_RETRY_FIRST = 2.0
START_RETRY_MAX = 60.0


def wait_for_database(
    settings: Settings,
    signals: _Signals,
    notifier: Notifier,
    *,
    migrate: bool = False,
    role: RoleMetrics | None = None,
) -> bool:
    """`check_database` until it passes: True then, False if a stop came first. With `migrate`,
    a database behind this flagman's schema (or not there yet) is migrated once it can be used
    (`flagman migrate`'s MigrationError if that fails). A fault that waiting cannot mend is
    raised as it is: a damaged database (bot.ops.storage, status 4: restore a backup), one not
    migrated (NotMigrated), any other error (a bug)."""
    from bot.ops.storage import Cause, breakdown

    delay = START_RETRY_FIRST
    told: Cause | None = None
    tries = 0
    since = datetime.now(UTC)
    readied = False
    migrated = False
    while True:
        try:
            try:
                check_database(settings)
            except NotMigrated:
                if not migrate or migrated:
                    raise
                from bot.ops.upgrade import MigrationError, migrate_to

                try:
                    log.info("%s", migrate_to(settings.database_url).summary())
                except MigrationError as failed:
                    # A database that cannot be reached, written or grown yet is waited for as
                    # below (what stopped the migration is its cause); any other failure stops.
                    cause = failed.__cause__
                    waitable = breakdown(cause, settings.database_url) if cause is not None else None
                    if cause is None or waitable is None or waitable.cause is Cause.DAMAGED:
                        raise
                    raise cause from None
                migrated = True
                continue
        except NotMigrated:
            raise
        except Exception as exc:
            found = breakdown(exc, settings.database_url)
            if found is None or found.cause is Cause.DAMAGED:
                raise
            tries += 1
            if found.cause is not told:
                log.error(
                    "cannot start yet: %s; %s; waiting, and trying again with back-off (%g s, doubling to %g s)",
                    found.text,
                    found.fix,
                    delay,
                    START_RETRY_MAX,
                )
                told = found.cause
            else:
                log.debug("cannot start yet (try %d): %s", tries, found.text)
            status = f"waiting to start since {since:%Y-%m-%d %H:%M} UTC, {tries} tries: {found.text}; next try in {delay:.0f} s"
            # systemd must see the process up (or TimeoutStartSec= kills it) and alive (the
            # watchdog), as on standby: it is doing the right thing, waiting.
            if readied:
                notifier.status(status)
            else:
                readied = notifier.ready(status) or True
            if role is not None:
                role.write("waiting", healthy=False, failing=((found.area, tries),))
            deadline = time.monotonic() + delay
            while not signals.stopping and time.monotonic() < deadline:
                signals.wait(min(1.0, max(0.0, deadline - time.monotonic())))
                if notifier.watchdog_due():
                    notifier.watchdog()
                signals.reloading = False  # nothing to reload yet; the configuration is read at the start
            if signals.stopping:
                return False
            delay = min(START_RETRY_MAX, delay * 2)
        else:
            if told is not None:
                log.warning("the database works again after %d tries: starting", tries)
            return True


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
    signals = _Signals()
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
    if lock is not None:
        notifier.status("waiting for the instance lock")
        try:
            got = lock.try_acquire()
            waiting = f"standby: another instance holds {lock.description}"
        except Exception as exc:  # noqa: BLE001 - e.g. PostgreSQL restarting: wait on standby, retrying
            from bot.safe_text import error_text

            log.warning("cannot take %s yet: %s; waiting on standby", lock.description, error_text(exc))
            got = False
            waiting = f"standby: cannot take {lock.description} yet: {error_text(exc)}"
        if not got:
            # On standby systemd must see us started (or TimeoutStartSec kills us), and
            # alive: READY now, watchdog pings while waiting.
            notifier.ready(waiting)
            role.write("standby", healthy=True)

            def on_standby() -> None:
                notifier.watchdog()
                role.write("standby", healthy=True)

            took_over = wait_for_lock(lock, signals.stop, retry=2.0, on_wait=on_standby)
            role.leave_standby()
            if not took_over:
                notifier.stopping("stopped while on standby")
                lock.release()
                signals.uninstall()
                return 0
    code = 0
    app = build_app(settings)
    runner = Runner(app, config_path=config_path, notifier=notifier, version=version)
    runner.running_status = f"running: inbox {settings.inbox.kind}, outbox {settings.outbox.kind}"
    try:
        runner.start()
        notifier.ready(runner.status_text())
        grace = notifier.watchdog_seconds or 60.0
        lock_checked = time.monotonic()
        while not signals.stopping:
            signals.wait(1.0)
            if signals.reloading and not signals.stopping:
                signals.reloading = False
                notifier.reloading()
                runner.reload()
                notifier.ready(runner.status_text())
            stuck = not runner.healthy(grace)
            if stuck != runner.stuck:
                # Said once as it happens, and once as it ends; not at every turn of the loop.
                runner.stuck = stuck
                if stuck:
                    log.error("a job is stuck (no poll or tick finished in time): withholding the watchdog ping")
                else:
                    log.warning("the jobs finish again: feeding the watchdog")
                notifier.status(runner.status_text())
            if notifier.watchdog_due() and not stuck:
                notifier.watchdog()
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
