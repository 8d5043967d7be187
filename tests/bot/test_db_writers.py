"""bot.db's writers on SQLite: the threads of one process take turns on a lock of the process
(`Database.writing`), not on SQLite's busy handler, which sleeps up to 100 ms between tries."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import pytest
from sqlalchemy import select

from bot import db as db_module
from bot.db import Database, migrate
from bot.models import Outbox
from tests.helpers import pending_outbox_row

T0 = datetime(2026, 12, 6, 20, 0, tzinfo=UTC)
PATIENCE = 30  # seconds an event is waited for before the test fails (never reached when it passes)


def _row(n: int) -> Outbox:
    return pending_outbox_row(n, T0)


class _Watched:
    """The process's writer lock, telling `asking` when another thread than the first asks for it."""

    def __init__(self, inner: threading.RLock, asking: threading.Event, first: int) -> None:
        self.inner, self.asking, self.first = inner, asking, first

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if threading.get_ident() != self.first:
            self.asking.set()
        return self.inner.acquire(blocking, timeout)

    def release(self) -> None:
        self.inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.release()


def test_a_second_writer_of_the_process_waits_for_the_first_to_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's own waiting is off here (busy timeout 0): a second writer that reached SQLite's
    write lock while the first holds it would fail at once with "database is locked". It waits
    on the process's lock instead, and writes once the first has committed."""
    url = f"sqlite:///{tmp_path / 'w.sqlite'}"
    migrate(url)
    db = Database(url, connect_args={"timeout": 0})
    asking, first_writing = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def second() -> None:
        first_writing.wait(PATIENCE)
        try:
            with db.transaction() as session:
                session.add(_row(2))
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            errors.append(exc)

    try:
        assert db._writers is not None
        monkeypatch.setattr(db, "_writers", _Watched(db._writers, asking, threading.get_ident()))
        thread = threading.Thread(target=second)
        thread.start()
        with db.transaction() as session:
            session.add(_row(1))
            session.flush()  # SQLite's write lock is held from here to the commit
            first_writing.set()
            assert asking.wait(PATIENCE), "the second writer never asked for its turn"
        thread.join(PATIENCE)
        assert not thread.is_alive()
        assert errors == []
        with db.read() as session:
            assert list(session.scalars(select(Outbox.message_id).order_by(Outbox.id))) == [
                "<w1@flagman.test>",
                "<w2@flagman.test>",
            ]
    finally:
        db.dispose()


def test_a_writer_that_waited_past_its_patience_goes_on_to_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No thread waits forever on the process's lock: past `_WRITER_PATIENCE` it goes on, and
    SQLite's busy timeout decides, as for a writer in another process."""
    monkeypatch.setattr(db_module, "_WRITER_PATIENCE", 0.0)
    url = f"sqlite:///{tmp_path / 'w.sqlite'}"
    migrate(url)
    db = Database(url)
    holding, done = threading.Event(), threading.Event()

    def holder() -> None:
        with db.writing():
            holding.set()
            done.wait(PATIENCE)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert holding.wait(PATIENCE)
        with db.writing():  # not this thread's turn: it goes on without it, and ends without error
            entered = True
        assert entered
    finally:
        done.set()
        thread.join(PATIENCE)
        db.dispose()


def test_the_same_thread_may_open_a_write_inside_its_own(tmp_path: Path) -> None:
    """The lock is the thread's once it holds it: a nested `writing()` does not wait for itself."""
    url = f"sqlite:///{tmp_path / 'w.sqlite'}"
    migrate(url)
    db = Database(url)
    try:
        with db.writing(), db.writing():
            pass
        with db.transaction() as session:
            session.add(_row(1))
    finally:
        db.dispose()
