"""The [metrics] file as the service writes it: after every job while it runs, and while it has
no jobs yet (waiting to start, or on standby). The figures and the format are bot.ops.metrics'."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

from bot.db import Database
from bot.ops import metrics
from bot.settings import Settings

log = logging.getLogger("flagman.service")


class MetricsFile:
    """The running service's [metrics] file, rewritten whole; a failure to write it is logged
    once (and once when it is written again)."""

    def __init__(self, path: Path, version: str) -> None:
        self.path = path
        self.version = version or "unknown"
        self._lock = threading.Lock()
        self._failed = False

    def write(
        self,
        db: Database,
        settings: Settings,
        tally: metrics.Tally,
        failing: tuple[tuple[str, int], ...],
        healthy: bool,
        *,
        up: bool,
    ) -> None:
        """The figures now; those read from the database are left out while it is failing."""
        now = datetime.now(UTC)
        queues = None
        size = None
        if "database" not in {what for what, _ in failing}:
            try:
                queues = metrics.queue_depths(db, now)
                size = metrics.database_bytes(db)
            except Exception:  # the figures from the database are left out, the rest written
                log.debug("metrics: the queues could not be read", exc_info=True)
        health = metrics.Health(up=up, healthy=healthy and up, failing=failing)
        text = metrics.render(
            tally.snapshot(),
            queues,
            health,
            version=self.version,
            now=now,
            bot=settings.bot.address,
            database_bytes=size,
        )
        with self._lock:
            try:
                metrics.write_atomically(self.path, text)
            except OSError as exc:
                if not self._failed:
                    from bot.safe_text import error_text

                    log.error(
                        "cannot write the metrics file %s: %s (said once; the service runs on)",
                        self.path,
                        error_text(exc),
                    )
                self._failed = True
            else:
                if self._failed:
                    log.warning("the metrics file %s is written again", self.path)
                self._failed = False


class RoleMetrics:
    """The [metrics] file while `flagman run` has no jobs yet: waiting to start, or on standby
    (an instance that writes nothing there would look like one that is gone). Failures to write
    it are logged once, as the running service's."""

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
