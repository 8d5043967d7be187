"""The database: engine, sessions (the unit of work) and migrations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from bot.resources import alembic_ini_path, migrations_path

if TYPE_CHECKING:  # alembic is imported when a migration runs, not with the bot
    from alembic.config import Config
    from sqlalchemy.pool import ConnectionPoolEntry


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine; SQLite gets WAL, a busy timeout and foreign keys.

    SQL parameters are never logged or put in error messages: they hold mail text, which may
    hold a seat password.
    """
    kwargs.setdefault("hide_parameters", True)
    if url.startswith("sqlite"):
        kwargs.setdefault("connect_args", {"timeout": 30})
        engine = create_engine(url, **kwargs)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
            # WAL lets the poller and the sender read while another writes; NORMAL sync in
            # WAL mode is still crash-safe for the database (only the last commits may be
            # lost on power failure, never corrupted).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            # pysqlite's own transaction handling is off (isolation_level=None above), so
            # SAVEPOINTs work; IMMEDIATE takes the write lock up front, avoiding deadlocks
            # between two writers that both started by reading. A session that only reads
            # (`Database.read`) begins DEFERRED: in WAL mode it reads a snapshot and never
            # waits for, or holds up, a writer.
            conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(_READ_ONLY) else "BEGIN IMMEDIATE")

        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


_READ_ONLY = "flagman_read_only"


class Database:
    """The engine and a session factory: `with db.transaction() as session:` is one unit of work."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = make_engine(url, **engine_kwargs)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        # Reads: on SQLite a deferred transaction (a snapshot, no write lock); on PostgreSQL
        # REPEATABLE READ, so that every query of the session sees the same snapshot too.
        options: dict[str, Any] = {_READ_ONLY: True}
        if not url.startswith("sqlite"):
            options["isolation_level"] = "REPEATABLE READ"
        # A read session never flushes: what is changed in it (e.g. a turn worked out on a
        # snapshot, `turns.tick`) stays in memory and is thrown away with it.
        self.readers = sessionmaker(self.engine.execution_options(**options), expire_on_commit=False, autoflush=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session that reads one snapshot of the database and writes nothing: it never
        flushes and is rolled back at the end (on SQLite it holds no write lock, so a writer
        never waits for it)."""
        with self.readers() as session:
            yield session

    @property
    def in_memory(self) -> bool:
        """An in-memory SQLite database: one per connection, so neither another thread's
        connection (the send's recorder) nor another process (a turn worker) can see it."""
        url = self.engine.url
        return url.get_backend_name() == "sqlite" and (url.database in (None, "", ":memory:")
                                                       or url.query.get("mode") == "memory")

    def dispose(self) -> None:
        self.engine.dispose()


@contextmanager
def autoflushing(session: Session) -> Iterator[Session]:
    """`session` with autoflush on (the opposite of `Session.no_autoflush`), then as it was."""
    before = session.autoflush
    session.autoflush = True
    try:
        yield session
    finally:
        session.autoflush = before


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config(str(alembic_ini_path()))
    config.set_main_option("script_location", str(migrations_path()))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["flagman_url"] = url
    return config


def migrate(url: str, revision: str = "head") -> None:
    """Bring the schema to `revision` (the only way the schema is made)."""
    from alembic import command

    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        rev: str | None = MigrationContext.configure(conn).get_current_revision()
        return rev


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head is not None
    return head
