"""bot.db on PostgreSQL: a pooled connection is pinged before it is handed out again only when
it lay idle in the pool (`PING_AFTER_IDLE`), and one the server closed meanwhile is replaced.
The idle time is set to nothing or to an hour here: no test waits on the clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import bot.db
from bot.db import Database
from tests.helpers import fresh_database


@pytest.fixture
def pg(postgres: Any, tmp_path: Path) -> Iterator[tuple[Database, list[int]]]:
    """A Database on the private PostgreSQL, and the pings its dialect made (one entry each)."""
    db = Database(fresh_database("postgresql", tmp_path, postgres))
    pings: list[int] = []
    ping = db.engine.dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        pings.append(1)
        return ping(dbapi_connection)

    setattr(db.engine.dialect, "do_ping", counted)  # noqa: B010 - an instance's method, counted
    try:
        yield db, pings
    finally:
        db.dispose()


def _backend_pid(db: Database) -> int:
    with db.transaction() as session:
        pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
    assert isinstance(pid, int)
    return pid


def test_a_connection_back_in_the_pool_a_moment_is_not_pinged(
    pg: tuple[Database, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, pings = pg
    monkeypatch.setattr(bot.db, "PING_AFTER_IDLE", 3600.0)
    first = _backend_pid(db)  # a new connection: never pinged
    assert [_backend_pid(db) for _ in range(5)] == [first] * 5
    with db.read() as session:
        session.execute(text("SELECT 1"))
    assert pings == []


def test_a_connection_that_lay_idle_is_pinged_and_one_the_server_closed_is_replaced(
    pg: tuple[Database, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, pings = pg
    monkeypatch.setattr(bot.db, "PING_AFTER_IDLE", 0.0)  # every connection handed back counts as idle
    first = _backend_pid(db)
    assert pings == []  # new
    assert _backend_pid(db) == first
    assert len(pings) == 1
    other = Database(db.url)
    try:
        with other.transaction() as session:  # the server closes the pooled connection
            assert session.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first}).scalar_one()
    finally:
        other.dispose()
    replaced = _backend_pid(db)  # the ping finds it closed: a new connection, and no error
    assert replaced != first
    assert len(pings) == 2
