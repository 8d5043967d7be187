"""`flagman migrate [REVISION]`: the schema brought to a revision (by default the newest).

The systemd unit runs it before every start (``ExecStartPre=``), so an upgrade is: install the
new version, restart. A migration that fails must leave the service stopped with one clear
line in the journal, so every failure here is a `MigrationError`: one line saying what failed,
at which revision the database is left, and what to do, and a non-zero exit status
(bot.cli.init.cmd_migrate): 1 a migration failed or the database is from a newer flagman,
2 no such revision, 3 the database cannot be reached (as every command, bot.cli.servers), 4 the
database is damaged, cannot be written, or its disk is full (bot.host.storage).

Nothing of a failed step is kept: each migration is a transaction (Alembic runs SQLite's one
by one, PostgreSQL's all in one), so the database stays at a revision this or the previous
flagman knows, and the games on it are as they were.

A REVISION older than the database's migrates down (the way back to an older flagman:
migrate down with the newer one, then install the older one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alembic.script import Script
    from sqlalchemy.pool import ConnectionPoolEntry

UNREACHABLE = 3  # as bot.cli.servers.UNREACHABLE: the exit status of a server that cannot be reached


class MigrationError(Exception):
    """The schema could not be brought to the revision asked for; `status` is the exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Migrated:
    """What `migrate_to` did: the revision before and after, the way, and the steps run."""

    before: str | None
    after: str
    down: bool
    steps: tuple[str, ...]  # "0003 -> 0004" (or "0004 -> 0003" going down), in the order run

    def summary(self) -> str:
        if not self.steps:
            return f"database at revision {self.after}: up to date, nothing to migrate"
        return (
            f"database migrated {'down' if self.down else 'up'} from revision {self.before or '(empty)'} "
            f"to {self.after}: " + ", ".join(self.steps)
        )


def _reason(exc: BaseException) -> str:
    """The driver's or Alembic's own words, one line (SQLAlchemy adds the statement after them)."""
    inner = getattr(exc, "orig", None) or exc
    text = " ".join(str(inner).split()) or type(inner).__name__
    return text[:400]


def _revision_of(url: str, *, intact: bool = False) -> str | None:
    """The database's revision; with `intact`, after SQLite's quick_check passed (StorageFault)."""
    from bot.db import current_revision, make_engine
    from bot.host.storage import check_intact

    engine = make_engine(url)
    try:
        if intact:
            check_intact(engine, url)
        return current_revision(engine)
    finally:
        engine.dispose()


def migrate_to(url: str, revision: str = "head") -> Migrated:
    """Bring the database at `url` to `revision` (up, or down if it is older); MigrationError
    with one line if that cannot be done."""
    from sqlalchemy.exc import DBAPIError

    from bot.db import revisions
    from bot.host.storage import Cause, StorageFault, breakdown, database_hint, safe_url

    shown = safe_url(url)
    sqlite = url.startswith("sqlite")
    try:
        before = None if sqlite and not _sqlite_file_exists(url) else _revision_of(url, intact=True)
    except (DBAPIError, StorageFault) as exc:
        found = breakdown(exc, url)
        if found is None:
            raise
        if found.cause is not Cause.UNREACHABLE:  # damaged, read-only, a full disk: one line, status 4
            raise MigrationError(
                f"{found.text}; nothing was migrated and the service does not start on it: {found.fix}", found.status
            ) from exc
        reason = _reason(exc)
        raise MigrationError(
            f"cannot reach the database {shown}: {reason}; nothing was migrated; " + database_hint(reason, sqlite),
            UNREACHABLE,
        ) from exc
    script = revisions(url)
    known = {r.revision: r for r in script.walk_revisions()}
    head = script.get_current_head()
    if before is not None and before not in known:
        raise MigrationError(
            f"the database {shown} is at revision {before}, which this flagman does not know (its newest is "
            f"{head}): a newer flagman migrated it; install that version again, or restore the backup taken "
            "before the upgrade"
        )
    target = head if revision == "head" else revision
    if target not in known:
        raise MigrationError(
            f"no revision {revision!r}: the revisions are {', '.join(sorted(known))} (or head, the newest)", 2
        )
    down = before is not None and target in _ancestors(known, before)
    if down:
        assert before is not None
        steps = tuple(f"{b} -> {a}" for a, b in reversed(_path(known, before, target)))
    else:
        steps = tuple(f"{a} -> {b}" for a, b in _path(known, target, before))
    try:
        _run(url, target, down=down)
    except Exception as exc:  # any failure is said in one line, below (CommandError too)
        try:
            now = _revision_of(url)
        except Exception:  # noqa: BLE001 - the database may be what failed
            now = before
        found = breakdown(exc, url)
        storage = found is not None and found.cause is not Cause.UNREACHABLE
        what = found.text if found is not None and storage else _reason(exc)
        fix = (
            f"{found.fix}, then `systemctl restart flagman`"
            if found is not None and storage
            else "fix the cause, or restore the backup taken before the upgrade, then `systemctl restart flagman`"
        )
        raise MigrationError(
            f"migrating {shown} {'down' if down else 'up'} from revision {before or '(empty)'} to {target} failed: "
            f"{what}; the database is at revision {now or '(empty)'} (a failed step is rolled back) and "
            f"the service does not start on it: {fix} (`flagman --verbose migrate` shows the steps)",
            found.status if found is not None and storage else 1,
        ) from exc
    return Migrated(before, target, down, steps)


def _run(url: str, target: str, *, down: bool) -> None:
    """Alembic's upgrade or downgrade on a connection of our own (migrations/env.py takes a
    connection handed over in the configuration's attributes).

    On SQLite that connection has foreign keys off, as Alembic's batch mode needs: it rebuilds
    a table to drop or change a column (copy, DROP TABLE, rename), and with foreign keys on,
    dropping a table that other rows point at fails ("FOREIGN KEY constraint failed": a
    downgrade of a database with games in it, found by tests/bot/ops/test_upgrade.py). The
    migrations keep every row, so the keys are as right afterwards as they were before.
    """
    from alembic import command
    from sqlalchemy import event

    from bot.db import alembic_config, make_engine, prepare_sqlite_file

    prepare_sqlite_file(url)
    config = alembic_config(url)
    engine = make_engine(url)
    if url.startswith("sqlite"):

        @event.listens_for(engine, "connect")
        def _foreign_keys_off(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:  # after make_engine's own
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=OFF")
            cursor.close()

    try:
        with engine.connect() as conn:
            config.attributes["connection"] = conn
            (command.downgrade if down else command.upgrade)(config, target)
    finally:
        engine.dispose()


def _sqlite_file_exists(url: str) -> bool:
    from bot.host.instance import sqlite_path

    path = sqlite_path(url)
    return path is None or path.exists()


def _below(known: Mapping[str, Script], revision: str) -> str | None:
    """The revision `revision` comes after (the history is one line: no merges)."""
    down = known[revision].down_revision
    if down is not None and not isinstance(down, str):
        raise MigrationError(f"revision {revision} merges {', '.join(down)}: `flagman migrate` follows one line only")
    return down


def _ancestors(known: Mapping[str, Script], revision: str) -> set[str]:
    """Every revision below `revision` (its down_revisions, all the way)."""
    found: set[str] = set()
    current = _below(known, revision)
    while current is not None:
        found.add(current)
        current = _below(known, current)
    return found


def _path(known: Mapping[str, Script], upper: str, lower: str | None) -> list[tuple[str, str]]:
    """The steps from `lower` up to `upper`, as (from, to) pairs, lowest first."""
    steps: list[tuple[str, str]] = []
    current: str | None = upper
    while current is not None and current != lower:
        below = _below(known, current)
        steps.append((below or "(empty)", current))
        current = below
    return list(reversed(steps))
