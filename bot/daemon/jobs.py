"""The jobs: APScheduler 3 runs poll, tick, send, the GM digest and the [retention] prune, each
guarded (a failure is waited out with back-off, bot.daemon.backoff), one instance of each at a
time, woken early when there is work (new mail, mail queued), and watched for a hang.

Jobs are thin and idempotent (each is also a CLI subcommand). Deadlines live in our tables, not
in the job store, so a restart loses nothing; a tick runs at start-up, so a deadline that passed
while the service was down is handled at once.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from apscheduler.schedulers.background import BackgroundScheduler

from bot.app import App
from bot.daemon.backoff import Backoff
from bot.daemon.idle import IdleWatch
from bot.daemon.metrics import MetricsFile
from bot.daemon.reload import reloaded
from bot.fate import PollReport
from bot.ops.metrics import Tally
from bot.ops.notify import Notifier
from bot.processes import tune_the_collector
from bot.settings import Settings, load_settings

log = logging.getLogger("flagman.service")

JOB_DEFAULTS = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}

# The jobs whose health the watchdog vouches for (the digest runs rarely and may be absent).
WATCHED = ("poll", "tick")

# How often the service applies the [retention] policy.
PRUNE_HOURS = 24

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
    """Let the service's threads take turns often (SWITCH_INTERVAL), with the collector tuned
    as in its workers (`bot.processes.tune_the_collector`)."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    tune_the_collector()


class Runner:
    """The service's jobs on one App: scheduled, guarded, woken, watched, reloaded, stopped."""

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
        self.config_path = config_path
        # The runner's clock for how long ago a job finished (the watchdog's health) and for the
        # back-off: `time.monotonic`, or the test's
        self.monotonic = monotonic
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
        # Called with the job's name after each job (e.g. the systemd watchdog).
        self.hooks: list[Callable[[str], None]] = []
        self.finished: dict[str, float] = {}  # job -> self.monotonic() it last finished
        self.running: dict[str, float] = {}  # job -> self.monotonic() it started, while it runs
        self.started_at = 0.0
        self.hooks.append(self._record_finished)
        self.tally = Tally()  # what the metrics file counts
        self.backoff = Backoff(lambda: self.app.settings, self.notifier, self.tally, monotonic)
        self.idle = IdleWatch(lambda: self.app.settings, self.stop_event, self.want_poll)
        metrics = app.settings.metrics.file
        self.metrics = MetricsFile(app.settings.resolve_path(metrics), version) if metrics else None
        if self.metrics is not None:
            self.hooks.append(lambda _name: self.write_metrics())

    # -- jobs --------------------------------------------------------------------------------
    def _guard(self, name: str, func: Callable[[], None]) -> Callable[[], None]:
        def job() -> None:
            if self.stop_event.is_set():
                return
            if not self.backoff.may_run(name):
                # Waiting for the next try after a failure: the job came due and waits, which
                # is no hang (the watchdog's record is kept), and nothing is logged.
                for hook in self.hooks:
                    hook(name)
                return
            self.running[name] = self.monotonic()
            try:
                func()
            except Exception as exc:  # noqa: BLE001 - a failed job is logged and retried with back-off; the service runs on
                self.backoff.failed(name, exc)
            else:
                self.backoff.succeeded(name)
            finally:
                self.running.pop(name, None)
            for hook in self.hooks:
                hook(name)

        return job

    def write_metrics(self, *, up: bool = True) -> None:
        """Rewrite the [metrics] file (bot.daemon.metrics), if one is set."""
        if self.metrics is not None:
            failing, healthy = self.backoff.health()
            self.metrics.write(self.app.db, self.app.settings, self.tally, failing, healthy, up=up)

    def _record_finished(self, name: str) -> None:
        self.finished[name] = self.monotonic()

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
            except Exception:  # the scheduler is shutting down: the job runs next start
                log.debug("cannot wake %s", job_id, exc_info=True)

    # -- health (the watchdog) ---------------------------------------------------------------
    def _intervals(self) -> dict[str, float]:
        s = self.app.settings.schedule
        return {"poll": s.poll_seconds, "tick": s.tick_seconds, "send": s.send_seconds}

    def healthy(self, grace: float) -> bool:
        """Has every watched job finished within its interval plus `grace` seconds, and is the
        IDLE loop alive?

        A job that hangs (a dead server without a timeout, a lock wait) stops finishing, so
        this turns False and the watchdog pings stop. Before its first run a job counts from
        the service start.
        """
        now = self.monotonic()
        intervals = self._intervals()
        for name in WATCHED:
            last = self.finished.get(name, self.started_at)
            if now - last > intervals[name] + grace:
                return False
        return self.idle.healthy(now, grace)

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        s = self.app.settings.schedule
        now = datetime.now(UTC)
        self.started_at = self.monotonic()
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
            self.idle.start()
        log.info(
            "flagman running: inbox %s, outbox %s, database %s",
            self.app.settings.inbox.kind,
            self.app.settings.outbox.kind,
            self.app.db.engine.url.render_as_string(hide_password=True),
        )
        self.write_metrics()

    def reload(self) -> None:
        """SIGHUP: re-read templates and the configuration (bot.daemon.reload)."""
        self.app.renderer.reload()
        log.info("templates reloaded")
        if self.config_path is None:
            return
        try:
            read: Settings = load_settings(self.config_path)
        except Exception as exc:  # noqa: BLE001 - a broken file must not stop a running service
            log.error("configuration not reloaded, the old one stays in force: %s", exc)
            return
        old = self.app.settings
        new, kept = reloaded(old, read)
        if kept:
            log.warning("changes to %s need a restart (systemctl restart flagman); kept the old ones", ", ".join(kept))
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
