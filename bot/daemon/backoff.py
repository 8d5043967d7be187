"""A failure that persists, waited out: which jobs met it, when the next try is, what STATUS= says.

A failure of the database, the disk, the IMAP server, or a bug in one job, is not logged at
every run of every job: the jobs that met it wait and try again with back-off (BACKOFF_FIRST
seconds, doubling, at most BACKOFF_MAX), one of them at a time, one log line per step (what
failed, the fix, when the next try is), and one line when it works again. systemd's
``STATUS=`` says the same ("failing since ...").
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from bot.ops.metrics import Tally
from bot.ops.notify import Notifier
from bot.settings import Settings

log = logging.getLogger("flagman.service")

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
        self.next_try = 0.0  # monotonic seconds
        self.jobs: set[str] = set()  # the jobs that failed with it: they wait for the next try
        self.trying: str | None = None  # the job trying again now (the others wait for its outcome)


class Backoff:
    """What is failing now, under one lock: whether a job may run, what its failure or success
    changes, and the status line that says so."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        notifier: Notifier,
        tally: Tally,
        monotonic: Callable[[], float],
    ) -> None:
        self.settings = settings  # the settings in force (a reload replaces them)
        self.notifier = notifier
        self.tally = tally
        self.monotonic = monotonic  # the back-off's clock (a test's own, to step through it)
        self.failing: dict[str, Failing] = {}  # what is failing now, under `self.lock`
        self.lock = threading.Lock()
        self.stuck = False  # a watched job hangs (the main loop withholds the watchdog ping)
        self.running_status = "running"  # STATUS= while nothing fails (run_service sets it)

    def may_run(self, name: str) -> bool:
        """May the job run now? Not while something it failed with waits for its next try, nor
        while another job is trying again (one try at a time, one line per step)."""
        now = self.monotonic()
        with self.lock:
            waiting = [f for f in self.failing.values() if name in f.jobs]
            if any(now < f.next_try or (f.trying is not None and f.trying != name) for f in waiting):
                return False
            for failing in waiting:
                failing.trying = name
            return True

    def what_failed(self, name: str, exc: BaseException) -> tuple[str, str, str]:
        """(what failed: the key of its Failing, what to say, the fix) for a job's exception."""
        from bot.host.storage import breakdown
        from bot.safe_text import error_text

        settings = self.settings()
        found = breakdown(exc, settings.database_url)
        if found is not None:
            return found.area, found.text, found.fix
        imap_error = getattr(sys.modules.get("bot.mail_in.imap"), "ImapError", None)
        if isinstance(imap_error, type) and isinstance(exc, imap_error):
            from bot.ops.reach import first_line

            cfg = settings.inbox
            return (
                "inbox",
                f"the IMAP server {cfg.host}:{cfg.port} cannot be used: {first_line(exc)}",
                "check [inbox] and the server (`flagman doctor` says what is wrong)",
            )
        return f"job {name}", f"job {name} failed: {error_text(exc)}", "a bug: report it with this log"

    def failed(self, name: str, exc: BaseException) -> None:
        """The job met `exc`: it (and any job that meets the same) waits for the next step."""
        what, text, fix = self.what_failed(name, exc)
        self.tally.failed(name)
        now = self.monotonic()
        with self.lock:
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
        self.say_status()

    def succeeded(self, name: str) -> None:
        """The job worked: what it had failed with works again."""
        self.tally.succeeded(name)
        recovered: list[Failing] = []
        with self.lock:
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
            self.say_status()

    def status_text(self) -> str:
        """What STATUS= says now: running, failing (what, since when, next try) or stuck."""
        with self.lock:
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

    def say_status(self) -> None:
        self.notifier.status(self.status_text())

    def is_failing(self) -> bool:
        with self.lock:
            return bool(self.failing)

    def health(self) -> tuple[tuple[tuple[str, int], ...], bool]:
        """(what fails and how often in a row, by name; healthy: nothing fails, no job hangs)."""
        with self.lock:
            failing = tuple(sorted((f.what, f.failures) for f in self.failing.values()))
            return failing, not failing and not self.stuck
