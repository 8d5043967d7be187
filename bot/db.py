"""The database: engine, sessions (the unit of work) and migrations."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVarTuple

from sqlalchemy import (
    Connection,
    Engine,
    Insert,
    PoolProxiedConnection,
    Row,
    Select,
    Table,
    and_,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    select,
    tuple_,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import DeclarativeBase, QueryableAttribute, Session, sessionmaker

from bot.resources import alembic_ini_path, migrations_path

if TYPE_CHECKING:  # alembic is imported when a migration runs, not with the bot
    from alembic.config import Config
    from alembic.script import ScriptDirectory
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
    engine = create_engine(url, **kwargs)
    if not kwargs.get("pool_pre_ping"):
        _ping_when_idle(engine)
    if engine.dialect.driver == "psycopg":

        @event.listens_for(engine, "connect")
        def _binary_bytes(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
            # psycopg sends a list (an array: `insert_many`) in text form unless told
            # otherwise, every element quoted and escaped, bytes in hex; in binary form as it is.
            from psycopg.types.array import ListBinaryDumper

            dbapi_connection.adapters.register_dumper(list, ListBinaryDumper)

    return engine


# A pooled connection that lay idle this long (seconds) is pinged before it is handed out again.
PING_AFTER_IDLE = 1.0
_IDLE_SINCE = "flagman_idle_since"  # the pool entry's info: when it was handed back (monotonic)


def _ping_when_idle(engine: Engine) -> None:
    """A connection handed out of `engine`'s pool is pinged first (a round trip) when it lay
    in the pool `PING_AFTER_IDLE` seconds or more, and replaced if the server has closed it
    (a restart, an idle timeout): what SQLAlchemy's ``pool_pre_ping`` does for every checkout.
    A connection handed back and out again sooner is handed out as it is (the deadline writes
    each turn in a transaction of its own, one after another: a ping each would be a sixth of
    a turn's round trips on PostgreSQL); a new connection is never pinged (the pool clears its
    entry's info when it connects). Should the server close a connection within that second,
    the statement that finds it closed fails, and the pool replaces every connection older
    than that failure (SQLAlchemy's handling of a disconnect)."""
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _idle_from(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < PING_AFTER_IDLE:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            if dialect.is_disconnect(error, dbapi_connection, None):
                raise DisconnectionError("the connection was closed while it lay in the pool") from error
            raise


_READ_ONLY = "flagman_read_only"
_ONCE_COMMITTED = "flagman_once_committed"  # session.info: the steps `Database.transaction` runs after its commit


def once_committed(session: Session, step: Callable[[], None]) -> None:
    """Have `Database.transaction` run `step` right after `session`'s transaction commits, in
    the committing thread (an explicit step of the transaction, not a session hook); never if
    it rolls back."""
    session.info.setdefault(_ONCE_COMMITTED, []).append(step)


# How long a writer of this process waits for another of its threads to commit before it asks
# SQLite for the write lock anyway (SQLite's own busy timeout then applies, as it would have).
_WRITER_PATIENCE = 30.0


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
        # snapshot, `bot.games.deadline`) stays in memory and is thrown away with it.
        self.readers = sessionmaker(self.engine.execution_options(**options), expire_on_commit=False, autoflush=False)
        # SQLite has one write lock per database file. A writer that finds it taken waits in
        # SQLite's busy handler, which sleeps 1, 2, 5 ... up to 100 ms between tries, however
        # soon the lock is free (a sender's outcome commit would wait tens of milliseconds
        # behind a turn written in a few). The threads of this process take turns on a lock of
        # their own instead, each woken as soon as the one before has committed.
        self._writers = threading.RLock() if url.startswith("sqlite") else None

    @contextmanager
    def writing(self) -> Iterator[None]:
        """This process's turn to write (SQLite: one writer at a time, the others woken as soon
        as it ends; a no-op elsewhere). The write transaction opens and ends inside it. A thread
        that waited `_WRITER_PATIENCE` seconds goes on without it: SQLite's busy timeout then
        decides, as it does for writers in other processes."""
        if self._writers is None:
            yield
            return
        held = self._writers.acquire(timeout=_WRITER_PATIENCE)
        try:
            yield
        finally:
            if held:
                self._writers.release()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work, committed at the end (rolled back on an exception); then, in this
        thread, the steps its work asked for once it commits (`once_committed`), in order."""
        with self.writing(), self.sessions() as session:
            with session.begin():
                yield session
            for step in session.info.pop(_ONCE_COMMITTED, ()):
                step()

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
        connection nor another process (a turn worker) can see it."""
        url = self.engine.url
        return url.get_backend_name() == "sqlite" and (
            url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"
        )

    def checkpoint(self) -> None:
        """SQLite: the write-ahead log copied into the database file as far as no reader still
        needs it (a PASSIVE checkpoint: it waits for no reader and no writer, takes no write
        lock, and its copying and syncing run outside Python's lock, so this process's other
        threads go on meanwhile). Nothing elsewhere. The deadline calls it once its turns are
        written (`bot.games.deadline.run`): the sender's commits never copy them
        (`without_checkpoints`)."""
        if self.engine.dialect.name != "sqlite" or self.in_memory:
            return
        raw = self.engine.raw_connection()
        try:
            _pragma(raw, "PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            raw.close()

    def dispose(self) -> None:
        self.engine.dispose()


# What SQLite's connections do at a commit that leaves the write-ahead log at this many pages
# or more: copy it into the database file, in that commit (SQLite's own default).
AUTOCHECKPOINT_PAGES = 1000


def without_checkpoints(raw: PoolProxiedConnection) -> None:
    """The SQLite connection `raw`'s commits never copy the write-ahead log into the database
    file (`with_checkpoints` undoes it): a commit of one row then never pays for copying what
    other commits wrote (a deadline's bodies: tens of megabytes, and a sync of the file) while
    a mail waits for it."""
    _pragma(raw, "PRAGMA wal_autocheckpoint=0")


def with_checkpoints(raw: PoolProxiedConnection) -> None:
    """The SQLite connection `raw`'s commits copy the log into the database file again when it
    reaches `AUTOCHECKPOINT_PAGES` pages, as every connection of the bot's does."""
    _pragma(raw, f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")


def _pragma(raw: PoolProxiedConnection, statement: str) -> None:
    """An SQLite PRAGMA run on the driver's connection `raw`, outside any transaction, its
    answer read."""
    cursor = raw.cursor()
    try:
        cursor.execute(statement)
        cursor.fetchall()
    finally:
        cursor.close()


@contextmanager
def autoflushing(session: Session) -> Iterator[Session]:
    """`session` with autoflush on (the opposite of `Session.no_autoflush`), then as it was."""
    before = session.autoflush
    session.autoflush = True
    try:
        yield session
    finally:
        session.autoflush = before


Ts = TypeVarTuple("Ts")

# INSERT ... SELECT FROM unnest(...) statements, made once per table, columns and RETURNING
# (building a statement costs more than running it).
_UNNEST_INSERTS: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Insert] = {}


def model_table(model: type[DeclarativeBase]) -> Table:
    """The table a mapped class is mapped to (as a `Table`: its columns by name, `.c`)."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


def insert_many(
    session: Session, model: type[DeclarativeBase], rows: Sequence[Mapping[str, object]], returning: Sequence[str] = ()
) -> list[tuple[object, ...]]:
    """Insert `rows` of `model`'s table (each with the same keys: every column it sets), in
    their order, in one statement; the `returning` columns of each row inserted (in no
    particular order).

    On PostgreSQL that is one INSERT ... SELECT FROM unnest(one array per column) ORDER BY the
    rows' order: a short statement whatever the number of rows, parsed once, with one
    parameter per column, where executemany would send a statement per row (psycopg) or a
    VALUES list of rows x columns parameters, long enough that neither psycopg nor the server
    keeps it (performance.md: bulk inserts). Elsewhere (SQLite) an executemany."""
    if not rows:
        return []
    table = model_table(model)
    keys = tuple(rows[0])
    if session.get_bind().dialect.name != "postgresql":
        plain = insert(table).returning(*(table.c[c] for c in returning)) if returning else insert(table)
        found = session.execute(plain, list(rows))
        return [tuple(r) for r in found] if returning else []
    key = (table.name, keys, tuple(returning))
    stmt = _UNNEST_INSERTS.get(key)
    if stmt is None:
        # The dialect casts each array to its column's type (psycopg: render_bind_cast).
        arrays = [bindparam(f"p{i}", type_=ARRAY(table.c[k].type)) for i, k in enumerate(keys)]
        rowset = (
            func.unnest(*arrays)
            .table_valued(*(f"c{i}" for i in range(len(keys))), with_ordinality="n")
            .render_derived()
        )
        stmt = insert(table).from_select(
            list(keys), select(*(rowset.c[f"c{i}"] for i in range(len(keys)))).order_by(rowset.c.n)
        )
        if returning:
            stmt = stmt.returning(*(table.c[c] for c in returning))
        _UNNEST_INSERTS[key] = stmt
    found = session.execute(stmt, {f"p{i}": [row[k] for row in rows] for i, k in enumerate(keys)})
    return [tuple(r) for r in found] if returning else []


# The same for a table's rows with a part of each in a table of its own (`insert_with_parts`).
_PARTED_INSERTS: dict[tuple[str, str, str, tuple[str, ...], tuple[str, ...], str], Insert] = {}


def insert_with_parts(
    session: Session,
    model: type[DeclarativeBase],
    part: type[DeclarativeBase],
    rows: Sequence[Mapping[str, object]],
    moved: Sequence[str],
    link: str,
) -> None:
    """Insert `rows` (each with the same keys) into `model`'s table, in their order, but their
    `moved` keys, which go into `part`'s table: one row there for each, under the ``id`` the
    row was given (the part's primary key, a reference to the row). `link`, a unique column of
    `model` every row sets, tells which id each row was given.

    On PostgreSQL that is one statement: the rows unnested once (one array a column, as
    `insert_many`), the INSERT into `model` returning each id with its `link`, and the INSERT
    into `part` from the two joined, in a WITH. Elsewhere (SQLite) two executemany: the rows,
    then their parts, each under the id of the row its `link` finds (no id comes back to
    Python)."""
    if not rows:
        return
    keys = tuple(rows[0])
    kept = [key for key in keys if key not in moved]
    table, part_table = model_table(model), model_table(part)
    dialect = session.get_bind().dialect.name
    cache_key = (dialect, table.name, part_table.name, keys, tuple(moved), link)
    stmt = _PARTED_INSERTS.get(cache_key)
    if dialect != "postgresql":
        insert_many(session, model, [{key: row[key] for key in kept} for row in rows])
        if stmt is None:
            found = select(table.c.id, *(bindparam(f"part_{key}", type_=part_table.c[key].type) for key in moved))
            stmt = insert(part_table).from_select(["id", *moved], found.where(table.c[link] == bindparam("link")))
            _PARTED_INSERTS[cache_key] = stmt
        session.execute(stmt, [{"link": row[link], **{f"part_{key}": row[key] for key in moved}} for row in rows])
        return
    if stmt is None:
        column = {key: f"c{i}" for i, key in enumerate(keys)}
        types = {key: (table.c[key].type if key in kept else part_table.c[key].type) for key in keys}
        arrays = [bindparam(f"p{i}", type_=ARRAY(types[key])) for i, key in enumerate(keys)]
        rowset = func.unnest(*arrays).table_valued(*column.values(), with_ordinality="n").render_derived()
        given = select(rowset).cte("given")
        made = (
            insert(table)
            .from_select(kept, select(*(given.c[column[key]] for key in kept)).order_by(given.c.n))
            .returning(table.c.id, table.c[link])
            .cte("made")
        )
        stmt = insert(part_table).from_select(
            ["id", *moved],
            select(made.c.id, *(given.c[column[key]] for key in moved)).join(
                given, given.c[column[link]] == made.c[link]
            ),
        )
        _PARTED_INSERTS[cache_key] = stmt
    session.execute(stmt, {f"p{i}": [row[key] for row in rows] for i, key in enumerate(keys)})


def among(
    session: Session,
    query: Select[*Ts],
    columns: tuple[QueryableAttribute[object], ...],
    values: Sequence[tuple[object, ...]],
) -> Iterator[Row[*Ts]]:
    """The rows of `query` whose `columns` hold one of `values` (tuples, one value per column),
    each once.

    On PostgreSQL one statement, `query` joined with unnest(one array per column): one
    parameter per column however many values, and a plan that stays good when the server
    keeps it for the next time (psycopg prepares a statement run a few times): a kept plan for
    `IN (...)` is made for no values in particular and compares each row with every value, so
    it grows with the table times the values. Elsewhere (SQLite) `IN`, 500 values a statement,
    and for several columns the first column's `IN` beside the tuples' (SQLite looks a row
    value up in no index: the first column's lets it use that column's)."""
    values = list(dict.fromkeys(values))  # each row once, however often its value is given
    if not values:
        return
    if session.get_bind().dialect.name == "postgresql":
        arrays = [bindparam(f"among{i}", [v[i] for v in values], type_=ARRAY(c.type)) for i, c in enumerate(columns)]
        wanted = (
            func.unnest(*arrays).table_valued(*(f"v{i}" for i in range(len(columns)))).render_derived().alias("among")
        )
        yield from session.execute(query.join(wanted, and_(*(c == wanted.c[f"v{i}"] for i, c in enumerate(columns)))))
        return
    for start in range(0, len(values), 500):
        chunk = values[start : start + 500]
        first = columns[0].in_(list(dict.fromkeys(v[0] for v in chunk)))
        yield from session.execute(
            query.where(first) if len(columns) == 1 else query.where(first, tuple_(*columns).in_(chunk))
        )


def send_unanswered(
    raw: PoolProxiedConnection, sql: bytes, parameters: Sequence[bytes | None], name: bytes | None = None
) -> None:
    """PostgreSQL (psycopg): send statement `sql` ($1, $2 ... placeholders, each parameter in
    its text form) on the driver connection of `raw`, in autocommit, without waiting for its
    answer; `read_answer` reads it, and nothing else may use the connection between the two.
    With a `name`, the statement `prepare` prepared under it on this connection is run instead
    (`sql` is then not sent)."""
    pgconn = _pgconn(raw)
    if name is None:
        pgconn.send_query_params(sql, list(parameters))
    else:
        pgconn.send_query_prepared(name, list(parameters))
    _flushed(pgconn)


def prepare(raw: PoolProxiedConnection, name: bytes, sql: bytes) -> None:
    """PostgreSQL (psycopg): prepare `sql` under `name` on the driver connection of `raw` (one
    round trip, answered before this returns; an error raised as `read_answer` raises it), for
    `send_unanswered`. psycopg knows nothing of it: its own statement cache may deallocate every
    prepared statement of the connection when it runs a ROLLBACK, DROP or ALTER there, so the
    caller keeps the connection to itself while it uses the name, and `deallocate`s it before
    the connection goes back to the pool."""
    pgconn = _pgconn(raw)
    pgconn.send_prepare(name, sql)
    _flushed(pgconn)
    read_answer(raw)


def deallocate(raw: PoolProxiedConnection, name: bytes) -> None:
    """PostgreSQL (psycopg): the statement `prepare` prepared under `name` on `raw` forgotten
    by the server (one round trip; an error raised as `read_answer` raises it)."""
    pgconn = _pgconn(raw)
    pgconn.send_query_params(b"DEALLOCATE " + name, [])
    _flushed(pgconn)
    read_answer(raw)


def _flushed(pgconn: Any) -> None:
    """What libpq holds of the statement just sent written whole to the server (a few hundred
    bytes: at once), waiting for the socket to take more where it must."""
    import select

    while pgconn.flush():
        select.select([], [pgconn.socket], [])


def _pgconn(raw: PoolProxiedConnection) -> Any:
    """libpq's connection under `raw`'s psycopg connection."""
    driver = raw.driver_connection
    assert driver is not None, "a connection the pool has closed"
    return driver.pgconn


def read_answer(raw: PoolProxiedConnection) -> None:
    """The answer to the statement `send_unanswered` sent, read whole; its error raised
    (`RuntimeError`, the server's message)."""
    import select

    from psycopg import pq

    pgconn = _pgconn(raw)
    while True:
        pgconn.consume_input()
        if not pgconn.is_busy():
            break
        select.select([pgconn.socket], [], [])
    error = ""
    while (answer := pgconn.get_result()) is not None:
        if answer.status != pq.ExecStatus.COMMAND_OK and not error:
            error = (answer.error_message or b"").decode("utf-8", "replace").strip() or f"status {answer.status}"
    if error:
        raise RuntimeError(error)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config(str(alembic_ini_path()))
    config.set_main_option("script_location", str(migrations_path()))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["flagman_url"] = url
    return config


def prepare_sqlite_file(url: str) -> None:
    """Before the first migration of an SQLite database: its folder, and an empty file of mode
    0600 (SQLite would make it 0644 less the umask: readable by every user of the machine, with
    every player's address in it). SQLite makes its -wal and -shm files with the database file's
    mode. An existing file is left as it is."""
    if not url.startswith("sqlite:///"):
        return
    name = url.removeprefix("sqlite:///").split("?", 1)[0]
    if not name or name == ":memory:":
        return
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def migrate(url: str, revision: str = "head") -> None:
    """Bring the schema to `revision` (the only way the schema is made)."""
    from alembic import command

    prepare_sqlite_file(url)
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        rev: str | None = MigrationContext.configure(conn).get_current_revision()
        return rev


class MigrationFilesMissing(ValueError):  # noqa: N818 - named for what happened, as Refused
    """A migration file this flagman ships is not there (a damaged or partial install): every
    command that needs the schema's revisions says so in one line, naming it."""


def revisions(url: str = "sqlite://") -> ScriptDirectory:
    """The migrations' ScriptDirectory, every revision of its chain checked to be there;
    MigrationFilesMissing names the first that is not."""
    import warnings

    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config(url))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Alembic warns, then raises KeyError: said once, below
            list(script.walk_revisions())
    except KeyError as exc:
        missing = str(exc.args[0]) if exc.args else "?"
        raise MigrationFilesMissing(
            f"the migration of revision {missing} is missing from {migrations_path() / 'versions'} "
            "(an incomplete install): nothing was migrated; reinstall this version of flagman"
        ) from exc
    return script


def head_revision() -> str:
    head = revisions().get_current_head()
    assert head is not None
    return str(head)
