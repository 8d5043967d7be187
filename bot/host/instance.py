"""One running service per mailbox: an instance lock, and standby until it is free.

Two services reading the same mailbox into the same database would both answer each mail
(the Message-ID dedupe makes that safe, but the moves and replies would race). So `flagman
run` takes a lock before it starts its jobs; a second one waits on standby, saying so in the
log, and takes over as soon as the first one dies (the kernel or the database server frees
the lock with its holder, so there is no stale lock to clean up):

- SQLite: ``fcntl.flock`` on ``<database>.lock`` beside the database file. Only processes on
  the same machine share a SQLite file, and the kernel drops a flock when its holder exits,
  however it exits.
- PostgreSQL: ``pg_try_advisory_lock`` on a dedicated connection kept open for the whole
  run; the server drops it when that session ends. The key is derived from the mailbox, so
  two services with different mailboxes may share one database. If the lock connection is
  lost, the lock may already be someone else's: `held()` turns False and the service stops
  (systemd restarts it, and it queues on standby behind the new holder).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from bot.settings import Settings

log = logging.getLogger("flagman.instance")


class InstanceLock(Protocol):
    description: str

    def try_acquire(self) -> bool: ...
    def held(self) -> bool: ...
    def release(self) -> None: ...


class FileLock:
    """An exclusive ``flock`` on a file; the file itself is left in place (it is harmless)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.description = f"lock file {self.path}"
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            os.close(fd)
            raise
        # Who holds it, for the operator reading the file: informative only, never trusted.
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def advisory_key(name: str) -> int:
    """A stable signed 64-bit key for pg_advisory_lock from a name."""
    digest = hashlib.sha256(f"flagman-instance:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresLock:
    """``pg_try_advisory_lock`` on a connection of its own, held until `release`."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.key = advisory_key(name)
        self.description = f"PostgreSQL advisory lock {self.key} ({name})"
        self._engine: Engine | None = None
        self._conn: Connection | None = None

    def _connect(self) -> Connection:
        from sqlalchemy import create_engine
        from sqlalchemy.pool import NullPool

        if self._engine is None:
            # NullPool: the lock lives and dies with this one session, never recycled.
            self._engine = create_engine(self.url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        return self._engine.connect()

    def try_acquire(self) -> bool:
        from sqlalchemy import text

        if self._conn is not None:
            return True
        conn = self._connect()
        try:
            got = bool(conn.execute(text("select pg_try_advisory_lock(:key)"), {"key": self.key}).scalar())
        except Exception:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def held(self) -> bool:
        """Is the session that holds the lock still alive? (a cheap round trip)"""
        from sqlalchemy import text

        if self._conn is None:
            return False
        try:
            self._conn.execute(text("select 1"))
        except Exception:  # noqa: BLE001 - any failure means the session, and the lock, may be gone
            log.error("the connection holding %s is lost", self.description)
            self._drop()
            return False
        return True

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # it is gone already
                log.debug("closing the lock connection failed", exc_info=True)

    def release(self) -> None:
        from sqlalchemy import text

        if self._conn is not None:
            try:
                self._conn.execute(text("select pg_advisory_unlock(:key)"), {"key": self.key})
            except Exception:  # closing the session frees it anyway
                log.debug("pg_advisory_unlock failed", exc_info=True)
            self._drop()
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def mailbox_name(settings: Settings) -> str:
    """What identifies the mailbox this service reads."""
    inbox = settings.inbox
    if inbox.kind == "imap":
        return f"imap://{inbox.username}@{inbox.host}:{inbox.port}/{inbox.folder}"
    return f"maildir:{settings.resolve_path(inbox.path).resolve()}"


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for other databases and :memory:)."""
    if not url.startswith("sqlite"):
        return None
    rest = url.split("///", 1)[1] if "///" in url else ""
    rest = rest.split("?", 1)[0]
    if not rest or rest == ":memory:":
        return None
    return Path(rest)


def lock_for(settings: Settings) -> InstanceLock | None:
    """The instance lock for these settings (None for an in-memory database)."""
    url = settings.database_url
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        return FileLock(path.with_name(path.name + ".lock")) if path is not None else None
    return PostgresLock(url, mailbox_name(settings))


class StopSignal(Protocol):
    """What `wait_for_lock` waits on: a `threading.Event`, or the service's signal flag."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


LOCK_RETRY_MAX = 60.0  # seconds between tries while the lock cannot even be tried (the database is down)


def wait_for_lock(
    lock: InstanceLock, stop: StopSignal, *, retry: float = 5.0, on_wait: Callable[[], object] | None = None
) -> bool:
    """Take the lock, waiting on standby while another instance holds it.

    Returns True once held, False if `stop` was set first. `on_wait()` is called on every
    retry (the service pings the systemd watchdog from it while on standby). While the lock
    cannot be tried at all (e.g. PostgreSQL is restarting), the tries back off (twice as long
    each time, at most LOCK_RETRY_MAX) with one log line each, no traceback.
    """
    from bot.safe_text import error_text

    failures = 0
    next_try = 0.0
    try:
        if lock.try_acquire():
            return True
        log.warning("standby: another flagman holds %s; waiting to take over when it stops", lock.description)
    except Exception as exc:  # noqa: BLE001 - as below: wait, and say why
        failures = 1
        next_try = time.monotonic() + retry
        log.warning("cannot try %s: %s; on standby, trying again in %g s", lock.description, error_text(exc), retry)
    while not stop.wait(retry):
        if on_wait is not None:
            on_wait()
        if time.monotonic() < next_try:
            continue
        try:
            got = lock.try_acquire()
        except Exception as exc:  # e.g. the database is restarting: keep waiting, say why
            failures += 1
            pause = min(LOCK_RETRY_MAX, retry * 2**failures)
            next_try = time.monotonic() + pause
            log.warning(
                "cannot try %s: %s; still on standby, trying again in %g s (failure %d in a row)",
                lock.description,
                error_text(exc),
                pause,
                failures,
            )
            log.debug("the lock's failure", exc_info=True)
            continue
        if failures:
            log.warning("%s can be tried again (after %d failure(s))", lock.description, failures)
            failures = 0
        if got:
            log.warning("took over: %s is ours now", lock.description)
            return True
    return False


# -- the mailbox lock: the poll and the prune of the Processed folder, one at a time ------------

_IN_PROCESS: dict[str, threading.Lock] = {}
_IN_PROCESS_GUARD = threading.Lock()


def mailbox_lock_path(database_url: str) -> Path | None:
    """The mailbox lock's file on SQLite: ``<database>.mailbox.lock`` beside the database file
    (None for PostgreSQL and for an in-memory database)."""
    path = sqlite_path(database_url)
    return path.with_name(path.name + ".mailbox.lock") if path is not None else None


@contextmanager
def holding_mailbox(database_url: str, mailbox: str, *, on_wait: Callable[[], object] | None = None) -> Iterator[None]:
    """Hold the lock of `mailbox` (`mailbox_name`) on the database at `database_url` for the block: a poll pass (reading the inbox and moving its mail
    to Processed or Failed) and a prune of the Processed folder never run at the same time,
    whichever process runs them (`flagman run`'s jobs, `flagman poll`, `tick`, `prune`).

    While another holds it, `on_wait()` is called once and the block waits (one pass or one
    prune: both end on their own). The lock is held by the kernel or the database server for
    its holder and dropped with it however it ends, so there is no stale lock:

    - SQLite: ``flock`` on ``<database>.mailbox.lock`` (`mailbox_lock_path`), opened for
      reading only, so that the service's user and root (`flagman prune` by hand) share it
      whoever made the file;
    - PostgreSQL: ``pg_advisory_lock`` on a connection of its own, keyed by the mailbox;
    - an in-memory database: a lock of this process.
    """
    url, name = database_url, mailbox
    if url.startswith("sqlite"):
        path = mailbox_lock_path(url)
        if path is None:
            with _IN_PROCESS_GUARD:
                lock = _IN_PROCESS.setdefault(name, threading.Lock())
            if not lock.acquire(blocking=False):
                _waiting(name, on_wait)
                lock.acquire()
            try:
                yield
            finally:
                lock.release()
            return
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                _waiting(name, on_wait)
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the last descriptor drops the flock
        return
    from sqlalchemy import text

    key = advisory_key(f"mailbox:{name}")
    # A connection of its own each time (NullPool: closed, never pooled, so the lock never
    # outlives the block), from one engine per URL (making an engine costs more than connecting).
    with _lock_engine(url).connect() as conn:
        if not conn.execute(text("select pg_try_advisory_lock(:key)"), {"key": key}).scalar():
            _waiting(name, on_wait)
            conn.execute(text("select pg_advisory_lock(:key)"), {"key": key})
        try:
            yield
        finally:
            try:
                conn.execute(text("select pg_advisory_unlock(:key)"), {"key": key})
            except Exception:  # closing the session frees it anyway
                log.debug("pg_advisory_unlock failed", exc_info=True)


_LOCK_ENGINES: dict[str, Engine] = {}


def _lock_engine(url: str) -> Engine:
    """The engine of the mailbox lock's connections to `url` (NullPool, AUTOCOMMIT), made once."""
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    with _IN_PROCESS_GUARD:
        engine = _LOCK_ENGINES.get(url)
        if engine is None:
            engine = _LOCK_ENGINES[url] = create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        return engine


def _waiting(name: str, on_wait: Callable[[], object] | None) -> None:
    log.info("waiting for the mailbox lock of %s: a poll or a prune of its Processed folder is running", name)
    if on_wait is not None:
        on_wait()
