"""The service's figures as a Prometheus text-format file, for node_exporter's textfile collector.

`flagman run` rewrites the file (`[metrics] file`) after every job, atomically (written beside
it under a temporary name, then renamed over it: node_exporter never reads half a file), mode
0644 (node_exporter runs as another user). deploy/OPERATING.md, "Monitoring", lists what each
figure means and example alerts. The figures:

- what the service did since it started (counters, reset by a restart: Prometheus's rate()
  and increase() handle that): mails received by outcome, mails handed to the relay by
  outcome, job failures;
- when each job last succeeded (a timestamp);
- what waits (from the database, each time): the outbox's pending mail (and how much of it
  is due now), mail that failed for good, mail quarantined (and not yet in a digest), turns
  past their closing time that the tick has not resolved;
- whether the service is healthy (nothing failing, no job stuck), what is failing, and
  whether it runs at all (`flagman_up` 0 in the file written as it stops).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

if TYPE_CHECKING:
    from bot.db import Database

JOBS = ("poll", "tick", "send", "digest", "prune")
MAIL_IN = ("applied", "refused", "ignored", "quarantined", "duplicate")
MAIL_OUT = ("sent", "deferred", "failed")


@dataclass
class Tally:
    """What the service counts as it runs (thread-safe: the jobs run in threads of their own)."""

    started: float = field(default_factory=lambda: datetime.now(UTC).timestamp())
    last_success: dict[str, float] = field(default_factory=dict)  # job -> Unix time
    failures: Counter[str] = field(default_factory=Counter)  # job -> failures
    mails_in: Counter[str] = field(default_factory=Counter)  # outcome -> mails
    mails_out: Counter[str] = field(default_factory=Counter)  # outcome -> mails
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def succeeded(self, job: str, when: float | None = None) -> None:
        with self.lock:
            self.last_success[job] = datetime.now(UTC).timestamp() if when is None else when

    def failed(self, job: str) -> None:
        with self.lock:
            self.failures[job] += 1

    def received(self, outcomes: dict[str, int], duplicates: int = 0) -> None:
        with self.lock:
            for outcome, count in outcomes.items():
                self.mails_in[str(outcome)] += count
            self.mails_in["duplicate"] += duplicates

    def sent(self, sent: int, deferred: int, failed: int) -> None:
        with self.lock:
            self.mails_out["sent"] += sent
            self.mails_out["deferred"] += deferred
            self.mails_out["failed"] += failed

    def snapshot(self) -> Tally:
        with self.lock:
            return Tally(
                self.started,
                dict(self.last_success),
                Counter(self.failures),
                Counter(self.mails_in),
                Counter(self.mails_out),
            )


@dataclass(frozen=True, slots=True)
class Queues:
    """What waits, as the database says now."""

    outbox_pending: int
    outbox_due: int
    outbox_failed: int
    quarantined: int
    quarantine_unreported: int
    turns_due: int


@dataclass(frozen=True, slots=True)
class Health:
    up: bool
    healthy: bool
    failing: tuple[tuple[str, int], ...] = ()  # (what, failures in a row) for each failure backing off


def queue_depths(db: Database, now: datetime) -> Queues:
    """The queues, in a few small queries (the outbox's status is indexed)."""
    from sqlalchemy import func, select

    from bot.clock import as_utc
    from bot.models import Game, GameStatus, Outbox, OutboxStatus, Quarantine, Turn

    with db.read() as session:
        by_status: dict[str, int] = {
            str(status): int(count)
            for status, count in session.execute(
                select(Outbox.status, func.count())
                .where(Outbox.status.in_([OutboxStatus.PENDING, OutboxStatus.FAILED]))
                .group_by(Outbox.status)
            )
        }
        due = (
            session.scalar(
                select(func.count())
                .select_from(Outbox)
                .where(Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= now)
            )
            or 0
        )
        quarantined = session.scalar(select(func.count()).select_from(Quarantine)) or 0
        unreported = (
            session.scalar(select(func.count()).select_from(Quarantine).where(Quarantine.reported.is_(False))) or 0
        )
        # Turns past their closing time (deadline plus grace) in games under way, not resolved:
        # the tick resolves each within a tick of it, so more than 0 for long means it does not.
        closing = session.execute(
            select(Turn.deadline, Game.grace_minutes)
            .join(Game, Game.id == Turn.game_id)
            .where(
                Game.status == GameStatus.ACTIVE,
                Turn.resolved_at.is_(None),
                Turn.deadline.is_not(None),
                Turn.deadline <= now,
            )
        ).all()
    turns_due = sum(
        1
        for deadline, grace in closing
        if deadline is not None and as_utc(deadline) + timedelta(minutes=grace or 0) <= now
    )
    return Queues(
        by_status.get(str(OutboxStatus.PENDING), 0),
        int(due),
        by_status.get(str(OutboxStatus.FAILED), 0),
        int(quarantined),
        int(unreported),
        turns_due,
    )


class _Figures:
    """Metric families, written in Prometheus's text format (version 0.0.4) by prometheus_client
    itself: names, HELP text, label values escaped and numbers as Prometheus reads them. Every
    sample is labelled `bot` (when there is one, or always with `always_labelled`)."""

    def __init__(self, bot: str, *, always_labelled: bool = False) -> None:
        self.own = {"bot": bot} if bot or always_labelled else {}
        self.families: list[Metric] = []

    def add(self, name: str, kind: str, text: str, samples: list[tuple[dict[str, str], float]]) -> None:
        """A family; a counter's samples are named ``<name>_total``."""
        names = [*self.own, *(samples[0][0] if samples else {})]
        family: CounterMetricFamily | GaugeMetricFamily = (
            CounterMetricFamily(name, text, labels=names)
            if kind == "counter"
            else GaugeMetricFamily(name, text, labels=names)
        )
        for labels, value in samples:
            values = {**self.own, **labels}
            family.add_metric([values[key] for key in names], value)
        self.families.append(family)

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)

    def text(self) -> str:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        return generate_latest(registry).decode("utf-8")


# What `flagman run` is doing, as flagman_role{role} says (1 for the one it is in, 0 the others):
# "active" runs the jobs; "standby" waits for another instance's lock; "waiting" waits for a
# database it cannot use yet (bot.daemon.startup.wait_for_database).
ROLES = ("active", "standby", "waiting")


def render(
    tally: Tally,
    queues: Queues | None,
    health: Health,
    *,
    version: str,
    now: datetime,
    bot: str = "",
    role: str = "active",
    database_bytes: int | None = None,
) -> str:
    """The figures in Prometheus's text format (version 0.0.4). Every sample is labelled
    `bot` (the [bot] address), so that two instances on one host (two files in node_exporter's
    textfile directory) never write the same series, and an alert names the bot."""
    figures = _Figures(bot)
    metric = figures.add

    metric(
        "flagman_up",
        "gauge",
        "1 while flagman run works (active, on standby or waiting to start), 0 in the file written as it stops.",
        [({}, 1 if health.up else 0)],
    )
    metric(
        "flagman_role",
        "gauge",
        "1 for what flagman run does now: active (runs the jobs), standby (another instance holds the "
        "lock), waiting (for a database it cannot use yet).",
        [({"role": name}, 1 if name == role and health.up else 0) for name in ROLES],
    )
    if database_bytes is not None:
        metric(
            "flagman_database_bytes",
            "gauge",
            "The database's size on disk (SQLite: the file and its -wal; PostgreSQL: pg_database_size).",
            [({}, database_bytes)],
        )
    metric("flagman_info", "gauge", "The running version.", [({"version": version}, 1)])
    metric("flagman_healthy", "gauge", "1 when no job is failing or stuck.", [({}, 1 if health.healthy else 0)])
    metric(
        "flagman_failing",
        "gauge",
        "Failures in a row of what is failing now (the jobs that need it wait and retry with back-off).",
        [({"what": what}, count) for what, count in health.failing],
    )
    metric("flagman_start_time_seconds", "gauge", "When the service started (Unix time).", [({}, tally.started)])
    metric("flagman_metrics_time_seconds", "gauge", "When this file was written (Unix time).", [({}, now.timestamp())])
    metric(
        "flagman_last_success_time_seconds",
        "gauge",
        "When each job last finished without error (Unix time).",
        [({"job": job}, tally.last_success[job]) for job in JOBS if job in tally.last_success],
    )
    metric(
        "flagman_job_failures",
        "counter",
        "Job runs that failed, since the start.",
        [({"job": job}, tally.failures.get(job, 0)) for job in JOBS],
    )
    metric(
        "flagman_mails_received",
        "counter",
        "Mails read from the inbox by outcome, since the start.",
        [({"outcome": outcome}, tally.mails_in.get(outcome, 0)) for outcome in MAIL_IN],
    )
    metric(
        "flagman_mails_sent",
        "counter",
        "Mails handed to the relay by outcome (deferred: a temporary "
        "failure, tried again later; failed: given up), since the start.",
        [({"outcome": outcome}, tally.mails_out.get(outcome, 0)) for outcome in MAIL_OUT],
    )
    if queues is not None:
        _queue_figures(figures, queues)
    return figures.text()


def _queue_figures(figures: _Figures, queues: Queues) -> None:
    """What waits, as the database says: the outbox, the quarantine, the turns due."""
    metric = figures.add
    metric(
        "flagman_outbox_mails",
        "gauge",
        "Mails in the outbox waiting to be sent (pending) or given up (failed).",
        [({"status": "pending"}, queues.outbox_pending), ({"status": "failed"}, queues.outbox_failed)],
    )
    metric(
        "flagman_outbox_due_mails",
        "gauge",
        "Pending mails whose time to be sent has come.",
        [({}, queues.outbox_due)],
    )
    metric(
        "flagman_quarantined_mails",
        "gauge",
        "Mails whose handling failed, kept aside (all of them, and those not yet in a GM digest).",
        [({"reported": "any"}, queues.quarantined), ({"reported": "no"}, queues.quarantine_unreported)],
    )
    metric("flagman_turns_due", "gauge", "Turns past their closing time, not resolved yet.", [({}, queues.turns_due)])


def write_atomically(path: Path, text: str) -> None:
    """`text` at `path`, mode 0644, by a rename: a reader sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        os.fchmod(fd, 0o644)  # the unit's UMask=0077 would leave it unreadable to node_exporter
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def database_bytes(db: Database) -> int:
    """The database's size on disk: SQLite's file and its -wal, or PostgreSQL's pg_database_size."""
    from sqlalchemy import text

    url = db.url
    if url.startswith("sqlite"):
        from bot.host.instance import sqlite_path

        path = sqlite_path(url)
        if path is None:
            return 0
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    with db.engine.connect() as conn:
        return int(conn.execute(text("select pg_database_size(current_database())")).scalar() or 0)


# -- the backup's figures, in a file of their own beside [metrics] file ---------------------------


def backup_metrics_path(metrics_file: Path) -> Path:
    """Where `flagman backup` writes its figures: beside the service's file, `-backup` added to
    its name (flagman.prom -> flagman-backup.prom), so node_exporter reads both."""
    return metrics_file.with_name(f"{metrics_file.stem}-backup{metrics_file.suffix or '.prom'}")


def render_backup(*, bot: str, ok: bool, now: datetime, last_success: float | None, size: int | None) -> str:
    figures = _Figures(bot, always_labelled=True)

    def metric(name: str, text: str, value: float) -> None:
        figures.add(name, "gauge", text, [({}, value)])

    metric("flagman_backup_ok", "1 if the last backup was written and checked, 0 if it failed.", 1 if ok else 0)
    metric("flagman_backup_last_attempt_time_seconds", "When the last backup was tried (Unix time).", now.timestamp())
    if last_success is not None:
        metric("flagman_backup_last_success_time_seconds", "When a backup last succeeded (Unix time).", last_success)
    if size is not None:
        metric("flagman_backup_bytes", "The size of the last good backup.", size)
    return figures.text()


def last_backup_success(path: Path) -> float | None:
    """flagman_backup_last_success_time_seconds from the backup file written before, if any."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flagman_backup_last_success_time_seconds"):
            try:
                return float(line.rsplit(" ", 1)[1])
            except ValueError:
                return None
    return None
