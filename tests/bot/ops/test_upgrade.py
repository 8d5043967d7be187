"""Upgrades: `flagman migrate` from an earlier release's schema with games
in progress, and a migration that fails.

The database of an earlier release is made the way that release made it, `alembic upgrade
<rev>` (bot.db.migrate), and filled in that schema: the games are played to the middle on
this version, then every row is copied into the old schema, column by column, keeping only
the columns that schema has (a column it lacks is one the old release never wrote; one it
needs that we do not have would fail the copy). Then `flagman migrate`, and the games play on:
orders sent before the upgrade still count, replies to turn sheets mailed before it are taken,
the GM resolves the turn, and every resolved turn replays identically.

A failed migration says so in one line on stderr (the unit's ExecStartPre= puts it in the
journal) and exits non-zero, so systemd never runs ExecStart= on the database; the database
stays at the revision it was, games intact.
"""

from __future__ import annotations

import email
import email.policy
import shutil
import sqlite3
import subprocess
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import FromClause, MetaData, create_engine, func, insert, select, text

from bot.cli import main
from bot.db import (
    Database,
    alembic_config,
    current_revision,
    head_revision,
    make_engine,
    migrate,
    prepare_sqlite_file,
)
from bot.mail_in.inbox import deliver_to_maildir
from bot.settings import load_settings
from bot.testing import reply_to
from tests.helpers import flagman_command, init_site, process_folder
from tests.servers import Postgres

REVISIONS = [
    r.revision for r in reversed(list(ScriptDirectory.from_config(alembic_config("sqlite://")).walk_revisions()))
]
EARLIER = REVISIONS[:-1]  # every schema before this version's
PREVIOUS = REVISIONS[-2]  # the previous release's
PLAYERS = ("kelly", "seb", "steve", "roger", "anna")
ROOT = Path(__file__).resolve().parents[3]


def flagman(config: Path, *args: str) -> int:
    return main(["--config", str(config), *args])


def outbox_mails(config: Path, address: str) -> list[EmailMessage]:
    """What the Maildir outbox holds for `address`, oldest first."""
    settings = load_settings(config, env={})
    box = settings.resolve_path(settings.outbox.path) / address.lower()
    files = sorted((p for p in box.rglob("*") if p.is_file()), key=lambda p: (p.stat().st_mtime_ns, p.name))
    mails = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in files]
    return [m for m in mails if isinstance(m, EmailMessage)]


def reply(config: Path, seat: str, orders: str) -> None:
    """The player answers the newest mail of rc1 in their mailbox, as a mail client would: to
    its signed reply address."""
    address = f"{seat}@players.test"
    sheet = [m for m in outbox_mails(config, address) if "+rc1." in str(m["Reply-To"] or "")][-1]
    settings = load_settings(config, env={})
    deliver_to_maildir(settings.resolve_path(settings.inbox.path), reply_to(sheet, orders, sender=address))


def play_to_the_middle(site: Path) -> Path:
    """A site on this version's schema with two games in the middle: rc1 (Racecraft) at turn 2
    with two orders in of five, sc1 (Speed Circuit) at turn 2 with none."""
    config = init_site(site, "flagman@race.test")
    for kind, name in (("racecraft", "rc1"), ("speed_circuit", "sc1")):
        args = ["game", "new", kind, "--name", name, "--gm", "gm@race.test", "--deadline", "48h"]
        for seat in PLAYERS:
            args += ["--player", f"{seat}={seat}@players.test"]
        assert flagman(config, *args) == 0
    assert flagman(config, "send") == 0
    for seat in ("kelly", "seb", "steve"):
        reply(config, seat, "USE 1")
    assert flagman(config, "poll") == 0
    assert flagman(config, "gm", "process", "rc1", "--as", "operator") == 0
    assert flagman(config, "gm", "process", "sc1", "--as", "operator") == 0
    assert flagman(config, "send") == 0
    reply(config, "kelly", "USE 2")
    reply(config, "seb", "USE 3")
    assert flagman(config, "poll") == 0
    assert flagman(config, "send") == 0
    return config


@pytest.fixture(scope="module")
def played_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site directory of `play_to_the_middle`, played once for the module's tests to copy."""
    return play_to_the_middle(tmp_path_factory.mktemp("played") / "site").parent


def games_in_progress(tmp_path: Path, played: Path) -> Path:
    """A copy of `played_site` at tmp_path/site (its files, modes and times: the database, the
    site secret, the outbox in the order it was written), the configuration returned: what
    `play_to_the_middle` makes there, without playing the games again for every test (its
    paths are relative to the site, so the copy is a site of its own)."""
    shutil.copytree(played, tmp_path / "site")
    return tmp_path / "site" / "flagman.toml"


# Columns an earlier schema kept in a table that this version keeps in a table of its own,
# keyed by the row's id: (table, column) -> the table that holds the column now (no row: empty).
MOVED = {("outbox", "data"): "outbox_body"}


_empty_at: dict[str, Path] = {}  # revision -> an empty SQLite file at it, made in this process


def empty_schema_at(url: str, revision: str) -> None:
    """The database of `url` at `revision` (an earlier one), empty, as `alembic upgrade
    <revision>` makes it: for SQLite a copy of a file made once in this process, every earlier
    revision's file made on one walk up the chain (one migration each, not every migration up
    to it for each revision)."""
    if not url.startswith("sqlite:///"):
        migrate(url, revision)
        return
    if not _empty_at:
        walk = process_folder("fm-revisions-")
        for step in EARLIER:
            migrate(f"sqlite:///{walk / 'walk.sqlite'}", step)
            with sqlite3.connect(walk / "walk.sqlite") as conn:  # every page in the file itself
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            _empty_at[step] = shutil.copyfile(walk / "walk.sqlite", walk / f"{step}.sqlite")
    prepare_sqlite_file(url)
    shutil.copyfile(_empty_at[revision], url.removeprefix("sqlite:///"))


def copy_into_schema(source_url: str, target_url: str, revision: str) -> None:
    """A database at `revision` (as that release's `alembic upgrade` made it), holding the rows
    of `source_url` in that schema: the columns it has (a column moved since read from where it
    is now, `MOVED`), nothing else."""
    empty_schema_at(target_url, revision)
    source, target = make_engine(source_url), make_engine(target_url)
    try:
        old, new = MetaData(), MetaData()
        old.reflect(target)
        new.reflect(source)
        with source.connect() as reading, target.begin() as writing:
            for table in old.sorted_tables:
                if table.name == "alembic_version":
                    continue
                assert table.name in new.tables, f"{table.name}: a table this version dropped (copy it by hand)"
                here = new.tables[table.name]
                moved = {
                    column: new.tables[holder]
                    for (name, column), holder in MOVED.items()
                    if name == table.name and column in table.columns and column not in here.columns
                }
                have = set(here.columns.keys()) | set(moved)
                needed = {
                    c.name for c in table.columns if not c.nullable and c.server_default is None and not c.primary_key
                }
                assert needed <= have, f"{table.name}: {needed - have} are needed by revision {revision}"
                columns = [c for c in table.columns.keys() if c in have]
                source_table: FromClause = here
                for holder in moved.values():
                    source_table = source_table.outerjoin(holder, holder.c.id == here.c.id)
                read = [func.coalesce(moved[c].c[c], b"").label(c) if c in moved else here.c[c] for c in columns]
                rows = [dict(r._mapping) for r in reading.execute(select(*read).select_from(source_table))]
                if rows:
                    writing.execute(insert(table), rows)
                if target.dialect.name == "postgresql" and "id" in table.columns:
                    # The ids were given: the sequence moves past them, as that release's inserts moved it.
                    writing.execute(
                        text(
                            f"select setval(pg_get_serial_sequence('{table.name}', 'id'), "
                            f'coalesce((select max(id) from "{table.name}"), 0) + 1, false)'
                        )
                    )
    finally:
        source.dispose()
        target.dispose()


def point_at(config: Path, url: str) -> None:
    config.write_text(config.read_text().replace('url = "sqlite:///flagman.sqlite"', f'url = "{url}"'))


def turn_rows(url: str, game: str) -> list[tuple[int, bool]]:
    db = Database(url)
    try:
        with db.read() as session:
            rows = session.execute(
                text(
                    "select t.number, t.resolved_at is not null from turn t join game g "
                    "on g.id = t.game_id where g.name = :g order by t.number"
                ),
                {"g": game},
            ).all()
            return [(int(n), bool(done)) for n, done in rows]
    finally:
        db.dispose()


def sources_of_turn(url: str, game: str, number: int) -> dict[str, set[str]]:
    db = Database(url)
    try:
        with db.read() as session:
            rows = session.execute(
                text(
                    "select s.name, o.source from order_submission o join turn t on t.id = o.turn_id "
                    "join seat s on s.id = o.seat_id join game g on g.id = t.game_id "
                    "where g.name = :g and t.number = :n"
                ),
                {"g": game, "n": number},
            ).all()
    finally:
        db.dispose()
    found: dict[str, set[str]] = {}
    for seat, source in rows:
        found.setdefault(str(seat), set()).add(str(source))
    return found


def old_database(
    tmp_path: Path, played: Path, kind: str, revision: str, postgres: Postgres | None = None
) -> tuple[Path, str]:
    config = games_in_progress(tmp_path, played)
    here = load_settings(config, env={}).database_url
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'site' / f'at-{revision}.sqlite'}"
    else:
        assert postgres is not None, "a PostgreSQL database needs the private PostgreSQL"
        url = postgres.create_database(f"flagman_upgrade_{revision}")
    copy_into_schema(here, url, revision)
    point_at(config, url)
    return config, url


def migrated_up_with_the_games_as_they_were(
    config: Path, url: str, revision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flagman migrate` brings the database at `revision` to the head; `doctor` passes, the
    games are where they were (rc1's orders of turn 2 on file, turn 2 of both open) and every
    turn played replays to the same outcome."""
    engine = make_engine(url)
    assert current_revision(engine) == revision
    engine.dispose()
    capsys.readouterr()
    assert flagman(config, "migrate") == 0
    said = capsys.readouterr().out
    assert f"database migrated up from revision {revision} to {head_revision()}" in said, said
    assert flagman(config, "doctor") == 0, capsys.readouterr().out
    capsys.readouterr()
    # Orders sent before the upgrade are still on file.
    assert flagman(config, "game", "show", "rc1") == 0
    shown = capsys.readouterr().out
    assert [line.split()[0] for line in shown.splitlines() if "orders in" in line] == ["kelly", "seb"], shown
    assert turn_rows(url, "rc1") == [(1, True), (2, False)]
    assert turn_rows(url, "sc1") == [(1, True), (2, False)]
    for game in ("rc1", "sc1"):
        assert flagman(config, "replay", game) == 0
        assert "all identical" in capsys.readouterr().out


def plays_on_after_migrate(config: Path, url: str, revision: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`migrated_up_with_the_games_as_they_were`, and the games go on: the seats that had not
    ordered reply to sheets mailed before the upgrade, both games' turn 2 is resolved with the
    orders from before and after it, the results are mailed, and every turn replays the same."""
    migrated_up_with_the_games_as_they_were(config, url, revision, capsys)
    # The others reply to sheets mailed before the upgrade.
    for seat in ("steve", "roger"):
        reply(config, seat, "CRUISE")
    assert flagman(config, "poll") == 0
    assert "applied 2" in capsys.readouterr().out
    assert flagman(config, "gm", "process", "rc1", "--as", "operator") == 0
    assert flagman(config, "gm", "process", "sc1", "--as", "operator") == 0
    assert flagman(config, "send") == 0
    assert turn_rows(url, "rc1") == [(1, True), (2, True), (3, False)]
    assert turn_rows(url, "sc1") == [(1, True), (2, True), (3, False)]
    results = [m for m in outbox_mails(config, "kelly@players.test") if "Turn 2" in str(m["Subject"])]
    assert results, "kelly got the results of turn 2"
    # Turn 2 of rc1 was played with the orders from before the upgrade and after it; only anna,
    # who sent none, got the NMR default.
    assert sources_of_turn(url, "rc1", 2) == {
        "kelly": {"mail"},
        "seb": {"mail"},
        "steve": {"mail"},
        "roger": {"mail"},
        "anna": {"default"},
    }
    capsys.readouterr()
    for game in ("rc1", "sc1"):
        assert flagman(config, "replay", game) == 0
        assert "all identical" in capsys.readouterr().out


# Played on after the upgrade: from the first schema (every migration on the way up) and from
# the previous release's; from every other earlier schema the games are checked as they were
# (on file, replaying the same), which is what a migration could break in them.
PLAYED_ON = (EARLIER[0], PREVIOUS)


@pytest.mark.parametrize("revision", PLAYED_ON)
def test_migrate_from_an_earlier_schema_with_games_in_progress_and_they_play_on(
    tmp_path: Path, played_site: Path, revision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite at the first revision and the previous release's, games in the middle: `flagman
    migrate` brings it to the head, and the games go on where they were."""
    config, url = old_database(tmp_path, played_site, "sqlite", revision)
    plays_on_after_migrate(config, url, revision, capsys)


@pytest.mark.parametrize("revision", [r for r in EARLIER if r not in PLAYED_ON])
def test_migrate_from_any_other_earlier_schema_keeps_the_games_in_progress_as_they_were(
    tmp_path: Path, played_site: Path, revision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite at every other earlier revision, games in the middle: `flagman migrate` brings it
    to the head with the games on file where they were, every turn replaying the same."""
    config, url = old_database(tmp_path, played_site, "sqlite", revision)
    migrated_up_with_the_games_as_they_were(config, url, revision, capsys)


@pytest.mark.e2e
def test_migrate_from_the_previous_release_on_postgresql(
    tmp_path: Path, played_site: Path, postgres: Postgres, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same on PostgreSQL (all of an upgrade in one transaction there), from the previous release."""
    config, url = old_database(tmp_path, played_site, "postgresql", PREVIOUS, postgres)
    plays_on_after_migrate(config, url, PREVIOUS, capsys)


def test_migrate_down_and_up_again_keeps_the_games(
    tmp_path: Path, played_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flagman migrate <older revision>` goes down (the way back to the previous release), and
    `flagman migrate` up again; the games are still there and replay the same."""
    config = games_in_progress(tmp_path, played_site)
    capsys.readouterr()
    assert flagman(config, "migrate", PREVIOUS) == 0
    assert f"database migrated down from revision {head_revision()} to {PREVIOUS}" in capsys.readouterr().out
    assert flagman(config, "migrate") == 0
    assert f"migrated up from revision {PREVIOUS}" in capsys.readouterr().out
    assert flagman(config, "migrate") == 0
    assert "up to date, nothing to migrate" in capsys.readouterr().out
    assert flagman(config, "replay", "rc1") == 0


def sabotaged(tmp_path: Path, played: Path) -> tuple[Path, str]:
    """Games at the previous release's schema, where the last migration cannot finish: a
    trigger refuses the update of the schema's revision at the end of the step (whatever the
    step does before that, it is then rolled back)."""
    config, url = old_database(tmp_path, played, "sqlite", PREVIOUS)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "create trigger refuse_upgrade before update on alembic_version "
                "begin select raise(abort, 'the disk said no'); end"
            )
        )
    engine.dispose()
    return config, url


def schema_of(url: str) -> dict[str, list[str]]:
    metadata = MetaData()
    engine = make_engine(url)
    metadata.reflect(engine)
    engine.dispose()
    return {name: sorted(table.columns.keys()) for name, table in sorted(metadata.tables.items())}


def test_a_failed_migration_is_one_line_on_stderr_and_a_non_zero_exit(
    tmp_path: Path, played_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last migration fails: one line on stderr naming the revisions, where the database
    stays and what to do; exit 1; the database is still at the previous revision with its games,
    and once the cause is gone `flagman migrate` succeeds."""
    config, url = sabotaged(tmp_path, played_site)
    schema = schema_of(url)
    capsys.readouterr()
    assert flagman(config, "migrate") == 1
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert len(lines) == 1, out.err
    line = lines[0]
    assert (
        line.startswith("flagman migrate: migrating ")
        and f"from revision {PREVIOUS} to {head_revision()} failed: " in line
    )
    assert "the disk said no" in line
    assert f"the database is at revision {PREVIOUS}" in line and "restore the backup" in line
    assert "Traceback" not in out.err + out.out
    engine = make_engine(url)
    assert current_revision(engine) == PREVIOUS
    with engine.begin() as conn:
        conn.execute(text("drop trigger refuse_upgrade"))
    engine.dispose()
    assert schema_of(url) == schema, "nothing of the failed step was kept"
    assert turn_rows(url, "rc1") == [(1, True), (2, False)]
    assert flagman(config, "migrate") == 0
    assert turn_rows(url, "rc1") == [(1, True), (2, False)]


def test_the_failed_migration_line_is_what_the_unit_would_log(tmp_path: Path, played_site: Path) -> None:
    """As the unit runs it (`flagman run --migrate`, a process of its own) and as an operator
    does (`flagman migrate`): stderr one line, no traceback, exit status 1 (systemd then fails
    the start; the service never runs on the database left behind)."""
    config, _ = sabotaged(tmp_path, played_site)
    run = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--config", str(config), "run", "--migrate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for done, prefix in (
        (flagman_command(config, "migrate"), "flagman migrate: migrating "),
        (run, "flagman run: migrating "),
    ):
        assert done.returncode == 1, done.stderr
        errors = [line for line in done.stderr.splitlines() if "migrating " in line]
        assert len(errors) == 1 and errors[0].startswith(prefix) and "Traceback" not in done.stderr, done.stderr
    unit = (ROOT / "deploy" / "flagman.service").read_text()
    (start,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert start == "ExecStart=/opt/flagman/bin/flagman run --migrate", "the unit migrates as it starts"
    assert not [line for line in unit.splitlines() if line.startswith("ExecStartPre=")]


def test_a_database_from_a_newer_flagman_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A revision this version does not know (a newer flagman migrated it): nothing is done,
    one line says to install that version again; exit 1."""
    config = init_site(tmp_path / "site")
    url = load_settings(config, env={}).database_url
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("update alembic_version set version_num = '9999'"))
    engine.dispose()
    capsys.readouterr()
    assert flagman(config, "migrate") == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "is at revision 9999, which this flagman does not know" in line and "install that version" in line


def test_an_unreachable_database_is_one_line_and_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PostgreSQL not there: one line with the fix for a refused connection; exit 3 (a server
    cannot be reached, as every command)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = init_site(tmp_path / "site")
    point_at(config, f"postgresql+psycopg://flagman@127.0.0.1:{port}/flagman")
    capsys.readouterr()
    assert flagman(config, "migrate") == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert (
        "cannot reach the database" in line and "nothing was migrated" in line and "systemctl status postgresql" in line
    )


def test_an_unknown_revision_is_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = init_site(tmp_path / "site")
    capsys.readouterr()
    assert flagman(config, "migrate", "nosuch") == 2
    assert "no revision 'nosuch'" in capsys.readouterr().err
