"""bot.db's prepared statements on PostgreSQL (`prepare`, `send_unanswered` with a name,
`deallocate`), and why the drain deallocates its own before the connection goes back to the
pool: psycopg's statement cache deallocates every prepared statement of a connection after a
ROLLBACK it ran there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from bot.db import Database, deallocate, prepare, read_answer, send_unanswered
from tests.helpers import fresh_database

SQL = b"UPDATE flagman_probe SET n = n + $1"
NAME = b"flagman_probe_add"


@pytest.fixture
def pg(postgres: Any, tmp_path: Path) -> Iterator[Database]:
    db = Database(fresh_database("postgresql", tmp_path, postgres))
    with db.transaction() as session:
        session.execute(text("CREATE TABLE flagman_probe (n integer)"))
        session.execute(text("INSERT INTO flagman_probe VALUES (0)"))
    try:
        yield db
    finally:
        db.dispose()


def _autocommit(db: Database) -> Any:
    raw = db.engine.raw_connection()
    driver = raw.driver_connection
    assert driver is not None
    raw.rollback()
    driver.autocommit = True
    return raw


def _prepared(raw: Any) -> list[str]:
    cursor = raw.cursor()
    cursor.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'flagman%' ORDER BY name")
    names = [name for (name,) in cursor.fetchall()]
    cursor.close()
    return names


def _n(db: Database) -> int:
    with db.read() as session:
        return int(session.execute(text("SELECT n FROM flagman_probe")).scalar_one())


def test_a_prepared_statement_runs_each_time_until_deallocated(pg: Database) -> None:
    raw = _autocommit(pg)
    try:
        prepare(raw, NAME, SQL)
        for step in (1, 2, 3):
            send_unanswered(raw, b"", [str(step).encode()], NAME)
            read_answer(raw)
        assert _prepared(raw) == ["flagman_probe_add"]
        deallocate(raw, NAME)
        assert _prepared(raw) == []
        send_unanswered(raw, b"", [b"1"], NAME)
        with pytest.raises(RuntimeError, match="does not exist"):
            read_answer(raw)
    finally:
        raw.invalidate()
        raw.close()
    assert _n(pg) == 6


def test_a_statement_the_server_refuses_to_prepare_raises(pg: Database) -> None:
    raw = _autocommit(pg)
    try:
        with pytest.raises(RuntimeError, match="flagman_nowhere"):
            prepare(raw, NAME, b"UPDATE flagman_nowhere SET n = $1")
        assert _prepared(raw) == []
    finally:
        raw.invalidate()
        raw.close()


def test_psycopg_deallocates_every_prepared_statement_after_a_rollback_once_it_prepared_its_own(
    pg: Database,
) -> None:
    """What the drain guards against (`_Outcomes.close` deallocates its statements, and each
    drain prepares its own): a statement prepared through libpq does not outlive the
    connection's next use by psycopg with its cache in play."""
    raw = _autocommit(pg)
    try:
        prepare(raw, NAME, SQL)
        driver = raw.driver_connection
        driver.autocommit = False
        for _ in range(6):  # past psycopg's prepare_threshold (5): it prepares one of its own
            driver.execute("SELECT n FROM flagman_probe WHERE n >= %s", [0]).fetchall()
        driver.rollback()
        driver.execute("SELECT 1").fetchall()  # psycopg's maintenance: DEALLOCATE ALL
        driver.rollback()
        assert _prepared(raw) == []
    finally:
        raw.invalidate()
        raw.close()
