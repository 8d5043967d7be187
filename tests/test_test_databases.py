"""The tests' databases (tests/helpers.py `fresh_database`, `migrated`, `init_site`) are copies of one database
migrated once: each copy must be what `migrate` itself makes of an empty database, schema, rows
and file mode, or the tests would check a database the bot never has."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from bot.cli import init_dir
from bot.db import migrate
from tests.helpers import fresh_database, init_site, migrated
from tests.servers import Postgres


def _clauses(sql: str | None) -> tuple[str, ...]:
    """A CREATE statement's clauses in sorted order: Alembic's batch mode writes a rebuilt table's
    constraints in an order that changes from one process to the next (a set's order)."""
    return tuple(sorted(line.strip().rstrip(",") for line in (sql or "").splitlines()))


def _sqlite_content(path: Path) -> list[tuple[str, object]]:
    with sqlite3.connect(path) as conn:
        schema = [
            (kind, name, table, _clauses(sql))
            for kind, name, table, sql in conn.execute(
                "select type, name, tbl_name, sql from sqlite_master order by type, name"
            )
        ]
        rows: list[tuple[str, object]] = [("schema", tuple(schema))]
        for (table,) in conn.execute("select name from sqlite_master where type = 'table' order by name"):
            rows.append((table, tuple(conn.execute(f'select * from "{table}" order by 1').fetchall())))
    conn.close()
    return rows


def test_a_copied_sqlite_database_is_what_migrate_makes(tmp_path: Path) -> None:
    made = tmp_path / "made.sqlite"
    migrate(f"sqlite:///{made}")
    copied = Path(fresh_database("sqlite", tmp_path).removeprefix("sqlite:///"))
    again = tmp_path / "again.sqlite"
    migrated(f"sqlite:///{again}")

    assert _sqlite_content(copied) == _sqlite_content(made)
    assert _sqlite_content(again) == _sqlite_content(made)
    assert dict(_sqlite_content(copied))["alembic_version"] != ()
    for path in (made, copied, again):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_database_with_rows_is_migrated_as_it_is_never_replaced(tmp_path: Path) -> None:
    url = fresh_database("sqlite", tmp_path)
    path = Path(url.removeprefix("sqlite:///"))
    with sqlite3.connect(path) as conn:
        conn.execute("create table kept (x integer)")
        conn.execute("insert into kept values (1)")
    conn.close()

    migrated(url)

    with sqlite3.connect(path) as conn:
        assert conn.execute("select x from kept").fetchall() == [(1,)]
    conn.close()


def test_a_site_of_init_site_is_what_init_dir_makes(tmp_path: Path) -> None:
    made = init_dir(tmp_path / "made", "flagman@site.test")
    copied = init_site(tmp_path / "copied", "flagman@site.test")

    assert copied.read_text() == made.read_text()
    assert _sqlite_content(copied.parent / "flagman.sqlite") == _sqlite_content(made.parent / "flagman.sqlite")
    assert dict(_sqlite_content(copied.parent / "flagman.sqlite"))["alembic_version"] != ()
    for site in (made.parent, copied.parent):
        found = sorted(str(p.relative_to(site)) for p in site.rglob("*") if not p.name.startswith("flagman.sqlite-"))
        assert found == ["flagman.sqlite", "flagman.toml", "mail", "mail/inbox", "mail/outbox", "site-secret"], found
        for name, mode in (("flagman.sqlite", 0o600), ("site-secret", 0o600)):
            assert stat.S_IMODE((site / name).stat().st_mode) == mode, site / name


def _postgres_content(url: str) -> list[tuple[object, ...]]:
    parts = make_url(url)
    with psycopg.connect(host=parts.host, port=parts.port, user=parts.username, dbname=parts.database) as conn:
        columns = conn.execute(
            "select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns"
            " where table_schema = 'public' order by table_name, column_name"
        ).fetchall()
        indexes = conn.execute(
            "select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname"
        ).fetchall()
        constraints = conn.execute(
            "select conname, pg_get_constraintdef(oid) from pg_constraint"
            " where connamespace = 'public'::regnamespace order by conname"
        ).fetchall()
        version = conn.execute("select version_num from alembic_version").fetchall()
    return [tuple(columns), tuple(indexes), tuple(constraints), tuple(version)]


def test_a_copied_postgresql_database_is_what_migrate_makes(tmp_path: Path, postgres: Postgres) -> None:
    made = postgres.create_database("flagman_made_here")
    migrate(made)
    copied = fresh_database("postgresql", tmp_path, postgres)

    assert _postgres_content(copied) == _postgres_content(made)
    assert _postgres_content(copied)[3] != ()


def test_a_folder_a_test_process_makes_once_is_gone_when_the_process_ends(tmp_path: Path) -> None:
    """`process_folder` (the migrated database, the played sites the tests copy): a test run
    leaves none of them in the system's temporary folder."""
    import subprocess
    import sys

    made = tmp_path / "made"
    script = (
        "import sys; from pathlib import Path; from tests.helpers import process_folder; "
        "folder = process_folder('fm-test-'); (folder / 'head.sqlite').write_bytes(b'x'); "
        "Path(sys.argv[1]).write_text(str(folder)); assert folder.is_dir()"
    )
    done = subprocess.run([sys.executable, "-c", script, str(made)], cwd=Path(__file__).parent.parent, check=False)
    assert done.returncode == 0
    folder = Path(made.read_text())
    assert folder.name.startswith("fm-test-") and not folder.exists()

    # A child forked from the maker, ending first, leaves the folder to the maker.
    forked = (
        "import os, sys; from pathlib import Path; from tests.helpers import process_folder; "
        "folder = process_folder('fm-test-'); pid = os.fork()\n"
        "if pid == 0: sys.exit(0)\n"
        "os.waitpid(pid, 0); Path(sys.argv[1]).write_text(str(folder) + ' ' + str(folder.is_dir()))"
    )
    done = subprocess.run([sys.executable, "-c", forked, str(made)], cwd=Path(__file__).parent.parent, check=False)
    assert done.returncode == 0
    name, kept = made.read_text().split()
    assert kept == "True" and not Path(name).exists()
