"""One service per mailbox: the instance lock and standby takeover."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot.host.instance import (
    FileLock,
    PostgresLock,
    advisory_key,
    lock_for,
    mailbox_name,
    sqlite_path,
    wait_for_lock,
)
from bot.settings import parse_settings
from tests.helpers import wait_until
from tests.servers import Postgres


def test_a_second_file_lock_is_refused_until_the_first_is_released(tmp_path: Path) -> None:
    """flock is exclusive between two opens of the lock file, even in one process."""
    first, second = FileLock(tmp_path / "db.lock"), FileLock(tmp_path / "db.lock")
    assert first.try_acquire()
    assert not second.try_acquire()
    first.release()
    assert second.try_acquire()
    second.release()


def test_standby_takes_over_when_the_holder_dies(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A second instance logs that it is on standby and gets the lock once the holder is killed."""
    lock_path = tmp_path / "flagman.sqlite.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from bot.host.instance import FileLock; "
            f"assert FileLock(__import__('pathlib').Path({str(lock_path)!r})).try_acquire(); "
            "print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        standby = FileLock(lock_path)
        got: list[bool] = []
        retries: list[None] = []  # on_wait comes before each retry: the second, after one failed
        stop = threading.Event()
        with caplog.at_level(logging.WARNING, logger="flagman.instance"):
            waiter = threading.Thread(
                target=lambda: got.append(
                    wait_for_lock(standby, stop, retry=0.05, on_wait=lambda: retries.append(None))
                )
            )
            waiter.start()
            wait_until(lambda: len(retries) >= 2, "the standby never tried again")
            assert not got, "the standby must wait while the holder lives"
            holder.kill()
            holder.wait(5)
            waiter.join(5)
        assert got == [True]
        assert "standby" in caplog.text and "took over" in caplog.text
        standby.release()
    finally:
        holder.kill()
        holder.wait(5)


def test_a_stop_request_ends_the_standby(tmp_path: Path) -> None:
    """SIGTERM while on standby: wait_for_lock returns False without the lock."""
    holder = FileLock(tmp_path / "x.lock")
    assert holder.try_acquire()
    stop = threading.Event()
    stop.set()
    assert wait_for_lock(FileLock(tmp_path / "x.lock"), stop, retry=0.01) is False
    holder.release()


def test_lock_beside_the_sqlite_database(tmp_path: Path) -> None:
    """SQLite: the lock file sits beside the database; PostgreSQL: an advisory lock keyed by the mailbox."""
    settings = parse_settings({"database": {"url": "sqlite:///data/f.sqlite"}}, env={}, base_dir=tmp_path, source="t")
    lock = lock_for(settings)
    assert isinstance(lock, FileLock) and lock.path == tmp_path / "data" / "f.sqlite.lock"
    pg = parse_settings(
        {
            "database": {"url": "postgresql+psycopg://u@h/db"},
            "inbox": {"kind": "imap", "host": "imap.example", "username": "bot"},
        },
        env={},
        base_dir=tmp_path,
        source="t",
    )
    pg_lock = lock_for(pg)
    assert isinstance(pg_lock, PostgresLock) and pg_lock.key == advisory_key(mailbox_name(pg))
    assert lock_for(parse_settings({"database": {"url": "sqlite://"}}, env={}, base_dir=tmp_path, source="t")) is None
    assert sqlite_path("sqlite:////abs/x.db") == Path("/abs/x.db")


def test_advisory_keys_differ_per_mailbox_and_fit_bigint() -> None:
    """Two mailboxes sharing one database lock independently."""
    a, b = advisory_key("imap://a@h:993/INBOX"), advisory_key("imap://b@h:993/INBOX")
    assert a != b
    assert -(2**63) <= a < 2**63 and a == advisory_key("imap://a@h:993/INBOX")


@pytest.mark.e2e
def test_postgres_advisory_lock_is_single_and_freed_with_its_session(postgres: Postgres) -> None:
    """pg_try_advisory_lock: one holder; the server frees it when the holder's session ends."""
    url = postgres.create_database("lock_test")
    first, second = PostgresLock(url, "mbox"), PostgresLock(url, "mbox")
    other = PostgresLock(url, "another mailbox")
    try:
        assert first.try_acquire()
        assert first.held()
        assert not second.try_acquire()
        assert other.try_acquire(), "a different mailbox has its own lock"
        # The holder's session dies (a crash, a network cut): the server frees the lock.
        import psycopg

        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
            conn.execute(
                "select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and objid = %s",
                (first.key & 0xFFFFFFFF,),
            )
        wait_until(second.try_acquire, "the lock was not freed with its session")
        assert not first.held(), "the old holder must notice it lost the lock"
    finally:
        for lock in (first, second, other):
            lock.release()
