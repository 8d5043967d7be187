"""Damage, read-only files and full disks, made for real: what each command says and its status.

Every database and disk failure is told in two lines (what failed, what to do) on
stderr, never a traceback, with the status of its kind (bot.host.storage): 3 a server that
cannot be reached, 4 storage (a damaged database, something this user may not write, a
read-only file system, a full disk). Each fault is made as it happens on a machine: a SQLite
file overwritten by the test, files of mode 0444 met by a command without root's override of
file modes, a tmpfs of a few hundred KiB filled to its last byte or remounted read-only, a
PostgreSQL server stopped. A command that meets file modes (run without root's override), the
unit's `migrate` and `run` run as processes of their own, as an operator runs them; the others
run in this process (`tests.helpers.flagman_command`: the same status, stdout and stderr).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

from bot.app import build_app
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.inbox import deliver_to_maildir
from bot.settings import load_settings
from bot.testing import plain_mail
from tests.helpers import (
    Done,
    SmallDisk,
    damage_header,
    damage_pages,
    flagman_command,
    flagman_process,
    init_site,
    process_folder,
)

ADDRESS = "flagman@disk.test"
PLAYERS = [PlayerSpec(n, f"{n}@players.test", n.title()) for n in ("kelly", "seb", "steve", "roger", "anna")]


def _play_site(root: Path) -> Path:
    """`flagman init` at `root`, a Racecraft game, its turn sheets sent."""
    config = init_site(root, ADDRESS)
    app = build_app(load_settings(config, env={}))
    try:
        with app.db.transaction() as session:
            create_game(app.shell, session, kind="racecraft", name="rc1", players=PLAYERS, gm_address="gm@disk.test")
        app.service.send()
    finally:
        app.close()
    return config


_played: list[Path] = []  # the site `_play_site` made once in this process


def make_site(root: Path, *, mails: int = 3) -> Path:
    """`flagman init`, a Racecraft game, its turn sheets sent, and `mails` mails in the inbox. A
    new `root` is a copy of the site `_play_site` made once in this process (its files, modes
    and times; its paths are relative to the site, so the copy is a site of its own); a site
    already at `root` (`flagman init`'s own) is played as it is."""
    if (root / "flagman.toml").exists():
        config = _play_site(root)
    else:
        if not _played:
            made = process_folder("fm-disk-site-") / "site"
            _play_site(made)
            _played.append(made)
        shutil.copytree(_played[0], root)
        config = root / "flagman.toml"
    for n in range(mails):
        deliver_to_maildir(
            root / "mail" / "inbox",
            plain_mail(f"stranger{n}@elsewhere.test", ADDRESS, "hello", "HELP", message_id=f"<m{n}@elsewhere.test>"),
        )
    return config


def inbox_waiting(root: Path) -> int:
    return len(list((root / "mail" / "inbox" / "new").iterdir()))


def assert_told(done: Done | subprocess.CompletedProcess[str], status: int, *words: str) -> None:
    """Exit `status`, at most two lines on stderr holding `words`, no traceback."""
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2, done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)


def test_init_makes_the_database_readable_by_its_owner_only(tmp_path: Path) -> None:
    """`flagman init` makes the database 0600 (every player's address in it is for the
    service alone), and SQLite's -wal and -shm files follow its mode."""
    from bot.cli import init_dir

    init_dir(tmp_path / "site", ADDRESS)  # init's own database, which make_site then keeps
    config = make_site(tmp_path / "site", mails=1)
    assert flagman_command(config, "poll").returncode == 0
    database = tmp_path / "site" / "flagman.sqlite"
    with sqlite3.connect(database) as conn:  # while a connection is open, the -wal and -shm are there
        conn.execute("select count(*) from game").fetchone()
        for path in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    conn.close()


# -- a damaged database ------------------------------------------------------------------------


@pytest.fixture
def damaged_header(tmp_path: Path) -> Path:
    config = make_site(tmp_path / "site")
    damage_header(tmp_path / "site" / "flagman.sqlite")
    return config


@pytest.mark.parametrize(
    "argv",
    [("migrate",), ("game", "list"), ("poll",), ("backup", "BACKUP")],
    ids=["migrate", "game-list", "poll", "backup"],
)
def test_a_damaged_database_file_is_one_refusal_with_status_4(
    damaged_header: Path, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """A database whose header is garbage: `migrate` (the unit's pre-start step), `game list`,
    `poll` and `backup` each say it is damaged and how to restore, status 4; no backup is
    written; the mail stays in the inbox."""
    target = tmp_path / "backups" / "b.sqlite"
    # `migrate` as the unit's pre-start step runs it, a process; the others in this one.
    command = flagman_process if argv[0] == "migrate" else flagman_command
    done = command(damaged_header, *(str(target) if a == "BACKUP" else a for a in argv))
    assert_told(done, 4, "is damaged", "file is not a database", "restore")
    assert not target.exists()
    if target.parent.exists():
        assert list(target.parent.iterdir()) == [], "nothing half written"
    assert inbox_waiting(tmp_path / "site") == 3


def test_damaged_pages_are_found_by_doctor_and_refused_by_backup(tmp_path: Path) -> None:
    """Pages in the middle of the file overwritten (the header and schema intact): the doctor's
    integrity check finds it; `backup` refuses to copy it (status 4) and the backup taken before
    stays the one to restore."""
    config = make_site(tmp_path / "site")
    good = tmp_path / "backups" / "good.sqlite"
    assert flagman_command(config, "backup", str(good)).returncode == 0
    damage_pages(tmp_path / "site" / "flagman.sqlite")
    doctor = flagman_command(config, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    problems = [line for line in doctor.stdout.splitlines() if line.startswith("PROBLEM")]
    assert problems and all(" database " in p for p in problems), doctor.stdout
    assert "damaged" in doctor.stdout and "flagmanctl restore" in doctor.stdout
    done = flagman_command(config, "backup", str(tmp_path / "backups" / "bad.sqlite"))
    assert_told(done, 4, "is damaged", "no backup written")
    assert sorted(p.name for p in good.parent.iterdir()) == ["good.sqlite"]
    # The backup taken before puts it right.
    restored = flagman_command(config, "restore", str(good))
    assert restored.returncode == 0, restored.stderr
    assert flagman_command(config, "doctor").returncode == 0


# -- files this user may not write ---------------------------------------------------------------


def test_a_read_only_database_stops_poll_with_the_files_named(tmp_path: Path) -> None:
    """The database file mode 0444 (restored by hand, say): `poll` and `doctor` name the file and
    what to do; status 4; the mail waits in the inbox. SQLite then leaves its -wal and -shm
    read-only too (it gives them the database's mode): with the database writable again, the
    -shm still stops the poll, and the message names it; once all are
    writable, the poll works."""
    root = tmp_path / "site"
    config = make_site(root)
    database = root / "flagman.sqlite"
    database.chmod(0o444)
    done = flagman_process(config, "poll", unprivileged=True)
    assert_told(done, 4, f"{database} (owner", "mode 0444", "cannot be written", "chmod u+rw")
    assert inbox_waiting(root) == 3
    doctor = flagman_process(config, "doctor", unprivileged=True)
    assert doctor.returncode == 1 and "cannot be written" in doctor.stdout, doctor.stdout
    shm = Path(f"{database}-shm")
    assert stat.S_IMODE(shm.stat().st_mode) == 0o444, "SQLite left its -shm read-only"
    database.chmod(0o600)
    done = flagman_process(config, "poll", unprivileged=True)
    assert_told(done, 4, f"{shm} (owner", "-wal and -shm")
    assert f"{database} (owner" not in done.stderr
    for path in root.glob("flagman.sqlite*"):
        path.chmod(0o600)
    done = flagman_process(config, "poll", unprivileged=True)
    assert done.returncode == 0, done.stderr
    assert inbox_waiting(root) == 0


def test_run_does_not_start_on_a_database_that_is_not_migrated(tmp_path: Path) -> None:
    """`flagman run` checks the database before it starts its jobs: one that does not exist yet
    (or is behind) is "run flagman migrate", status 1, and is not made. (One it may not write
    yet is waited out: tests/e2e/test_start_faults.py.)"""
    root = tmp_path / "site"
    config = make_site(root, mails=0)
    config.write_text(config.read_text().replace("sqlite:///flagman.sqlite", "sqlite:///other.sqlite"))
    done = flagman_process(config, "run")
    assert_told(done, 1, f"no database at {root / 'other.sqlite'}", "flagman migrate")
    assert not (root / "other.sqlite").exists()


def test_a_database_folder_this_user_may_not_write_is_named(tmp_path: Path) -> None:
    """The folder of the database (where SQLite makes its -wal and -shm) not writable: named."""
    root = tmp_path / "site"
    config = make_site(root)
    for path in root.glob("flagman.sqlite-*"):
        path.unlink()
    root.chmod(0o555)
    try:
        done = flagman_process(config, "game", "list", unprivileged=True)
    finally:
        root.chmod(0o755)
    assert_told(done, 4, f"the folder {root} (owner", "mode 0555")


# -- a read-only file system and a full disk ----------------------------------------------------


def test_a_read_only_file_system_is_said_as_such(tmp_path: Path) -> None:
    """The file system of the database remounted read-only (as the kernel does after disk
    errors): `poll` says so, status 4."""
    with SmallDisk(tmp_path / "disk", 4096) as disk:
        config = make_site(disk.root / "site")
        disk.remount(read_only=True)
        done = flagman_command(config, "poll")
        assert_told(done, 4, "mounted read-only")
        assert inbox_waiting(disk.root / "site") == 3


def test_a_full_disk_is_a_full_disk_with_status_4_not_a_database_url_with_status_3(tmp_path: Path) -> None:
    """The database's file system filled to its last byte: `poll` says the disk is full and
    where to make room (not "check [database] url", not status 3, which is a server that
    cannot be reached); the mail stays in the inbox and is read once there is room. `send`
    into the Maildir outbox on the same disk: the same. The doctor's disk check reports it."""
    with SmallDisk(tmp_path / "disk", 4096) as disk:
        root = disk.root / "site"
        config = make_site(root)
        with sqlite3.connect(root / "flagman.sqlite") as conn:  # the WAL emptied: a write must grow it
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        disk.fill()
        done = flagman_command(config, "poll")
        assert_told(done, 4, "the disk is full", f"df -h {root}")
        assert "[database] url" not in done.stderr
        assert inbox_waiting(root) == 3
        doctor = flagman_command(config, "doctor")
        assert doctor.returncode == 1 and "PROBLEM  disk" in doctor.stdout, doctor.stdout
        disk.free()
        assert flagman_command(config, "poll").returncode == 0
        assert inbox_waiting(root) == 0


def test_a_full_maildir_outbox_is_a_full_disk_and_the_mail_waits(tmp_path: Path) -> None:
    """The Maildir outbox on a disk of its own, full: `send` names the file it could not write and
    says the disk is full, status 4; the mail stays queued and goes once there is room."""
    config = make_site(tmp_path / "site", mails=2)
    assert flagman_command(config, "poll").returncode == 0  # two answers queued
    with SmallDisk(tmp_path / "outbox-disk", 256) as disk:
        config.write_text(config.read_text().replace('path = "mail/outbox"', f'path = "{disk.root / "outbox"}"'))
        disk.fill()
        done = flagman_command(config, "send")
        assert_told(done, 4, "the disk is full", f"cannot write {disk.root}/outbox/", f"df -h {disk.root}/outbox")
        disk.free()
        done = flagman_command(config, "send")
        assert done.returncode == 0 and "sent 2, retrying 0, failed 0" in done.stdout, (done.stdout, done.stderr)


# -- PostgreSQL down --------------------------------------------------------------------------------


@pytest.mark.e2e
def test_poll_with_postgresql_down_is_two_lines_and_status_3(tmp_path: Path) -> None:
    """`flagman poll` with the database server stopped (a private PostgreSQL the test starts and
    stops): what cannot be reached and what to check, status 3, no traceback. (`flagman run`
    waits for it instead: tests/e2e/test_start_faults.py.)"""
    from bot.db import migrate
    from tests.servers import Postgres

    config = init_site(tmp_path / "site", ADDRESS)
    with Postgres() as server:
        url = server.create_database("down")
        migrate(url)
        config.write_text(config.read_text().replace('url = "sqlite:///flagman.sqlite"', f'url = "{url}"'))
        server.stop()
        done = flagman_command(config, "poll")
    assert_told(done, 3, "cannot use the database postgresql", "Connection refused", "PostgreSQL runs")


# -- restore: the real reason -------------------------------------------------------------------


@pytest.fixture
def backed_up(tmp_path: Path) -> tuple[Path, Path]:
    config = make_site(tmp_path / "site", mails=0)
    backup = tmp_path / "backups" / "b.sqlite"
    assert flagman_command(config, "backup", str(backup)).returncode == 0
    return config, backup


def test_restore_of_a_missing_file_says_there_is_none(backed_up: tuple[Path, Path], tmp_path: Path) -> None:
    config, _ = backed_up
    done = flagman_command(config, "restore", str(tmp_path / "backups" / "nosuch.sqlite"))
    assert_told(done, 2, "no file at")
    assert "not a flagman" not in done.stderr


def test_restore_of_a_file_this_user_may_not_read_says_so(backed_up: tuple[Path, Path]) -> None:
    config, backup = backed_up
    backup.chmod(0o000)
    done = flagman_process(config, "restore", str(backup), unprivileged=True)
    assert_told(done, 2, "may not read", str(backup), "mode 0000")
    assert "not a flagman" not in done.stderr


def test_restore_into_a_folder_this_user_may_not_write_says_so(backed_up: tuple[Path, Path]) -> None:
    """A good backup, and the database's folder not writable by the user restoring: the folder
    is named (not "not a flagman backup"), nothing is changed, status 4."""
    config, backup = backed_up
    root = config.parent
    before = (root / "flagman.sqlite").read_bytes()
    root.chmod(0o555)
    try:
        done = flagman_process(config, "restore", str(backup), unprivileged=True)
    finally:
        root.chmod(0o755)
    assert_told(done, 4, "may not write where the database goes", f"the folder {root}")
    assert "not a flagman" not in done.stderr
    assert (root / "flagman.sqlite").read_bytes() == before


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "it is empty"),
        (b"not a database at all\n" * 50, "not an SQLite database"),
        (b"PGDMP\x01\x0e\x00" + b"\0" * 100, "pg_dump archive"),
    ],
    ids=["empty", "text", "pg_dump"],
)
def test_restore_of_something_else_says_what_it_is(
    backed_up: tuple[Path, Path], tmp_path: Path, content: bytes, says: str
) -> None:
    config, _ = backed_up
    other = tmp_path / "other.file"
    other.write_bytes(content)
    assert_told(flagman_command(config, "restore", str(other)), 2, says)


def test_restore_of_an_sqlite_file_that_is_not_flagmans_says_so(backed_up: tuple[Path, Path], tmp_path: Path) -> None:
    config, _ = backed_up
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("create table t (x)")
    conn.close()
    assert_told(flagman_command(config, "restore", str(other)), 2, "not flagman's")


def test_restore_puts_back_a_damaged_database(backed_up: tuple[Path, Path]) -> None:
    """The database so damaged SQLite cannot open it: restore replaces it all the same (and the
    -wal it had is not replayed onto the backup)."""
    config, backup = backed_up
    database = config.parent / "flagman.sqlite"
    damage_header(database)
    done = flagman_command(config, "restore", str(backup))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    assert flagman_command(config, "doctor").returncode == 0
    listed = flagman_command(config, "game", "list")
    assert listed.returncode == 0 and "rc1" in listed.stdout


def test_the_backup_is_verified_and_never_half_written(backed_up: tuple[Path, Path]) -> None:
    """`backup` checks its copy (SQLite's integrity check) before it takes its name: the file is
    a whole flagman database, with no temporary file left beside it."""
    _, backup = backed_up
    assert [p.name for p in backup.parent.iterdir()] == [backup.name]
    with sqlite3.connect(f"file:{backup}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("select count(*) from game").fetchone() == (1,)
    conn.close()


def test_pg_dump_command_says_how_the_password_is_given(tmp_path: Path) -> None:
    """The printed pg_dump command takes the password from the db-password
    credential (never printing it), when the configured url reads it from there."""
    config = init_site(tmp_path / "site", ADDRESS)
    config.write_text(
        config.read_text().replace(
            'url = "sqlite:///flagman.sqlite"',
            'url = "postgresql+psycopg://flagman:{password}@db.example:5432/flagman"',
        )
    )
    done = flagman_command(config, "backup", str(tmp_path / "f.dump"), env={"FLAGMAN_DB_PASSWORD": "pw-zz-91"})
    assert done.returncode == 1
    assert 'PGPASSWORD="$(cat /etc/flagman/credentials/db-password)" pg_dump' in done.stderr
    assert "pw-zz-91" not in done.stderr + done.stdout


def test_no_fault_here_leaves_a_mount_behind(tmp_path: Path) -> None:
    """The small disks are unmounted when their test ends (a guard for the helpers themselves)."""
    with SmallDisk(tmp_path / "d", 256) as disk:
        assert os.path.ismount(disk.root)
    assert not os.path.ismount(tmp_path / "d")
    shutil.rmtree(tmp_path / "d")


# -- backups watched: a metric for each attempt, and a check of a file already written --------------


def backup_figures(path: Path) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    found = {}
    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            assert sample.labels == {"bot": ADDRESS}, sample
            found[sample.name] = sample.value
    return found


def test_a_failed_backup_is_an_error_line_and_a_metric_that_keeps_the_last_success(tmp_path: Path) -> None:
    """ "nothing alerts when a backup fails (a metric and a log line at error)". With
    [metrics] file set, each `flagman backup` writes flagman-backup.prom beside it: ok 1 and
    the time of this success; on the damaged database, ok 0, the earlier success kept, and one
    line on stderr (the journal's error priority under the backup timer)."""
    config = make_site(tmp_path / "site", mails=0)
    metrics_file = tmp_path / "metrics" / "flagman.prom"
    config.write_text(config.read_text() + f'\n[metrics]\nfile = "{metrics_file}"\n')
    backups = tmp_path / "backups"
    assert flagman_command(config, "backup", "--keep", "3", str(backups)).returncode == 0
    figures = backup_figures(tmp_path / "metrics" / "flagman-backup.prom")
    assert figures["flagman_backup_ok"] == 1 and figures["flagman_backup_bytes"] > 0
    success = figures["flagman_backup_last_success_time_seconds"]
    assert success == figures["flagman_backup_last_attempt_time_seconds"]
    damage_pages(tmp_path / "site" / "flagman.sqlite")
    done = flagman_command(config, "backup", "--keep", "3", str(backups))
    assert_told(done, 4, "is damaged", "no backup written")
    figures = backup_figures(tmp_path / "metrics" / "flagman-backup.prom")
    assert figures["flagman_backup_ok"] == 0
    assert figures["flagman_backup_last_success_time_seconds"] == success
    assert figures["flagman_backup_last_attempt_time_seconds"] >= success


def test_check_backup_says_whether_a_file_is_a_good_backup(tmp_path: Path) -> None:
    """ "A command that checks an existing backup file (not only at creation)". A good
    one: its revision and games, status 0; one damaged since, or not a database: status 2 and
    why; the database itself is never touched."""
    from bot.db import head_revision

    config = make_site(tmp_path / "site", mails=0)
    good = tmp_path / "backups" / "good.sqlite"
    assert flagman_command(config, "backup", str(good)).returncode == 0
    before = (tmp_path / "site" / "flagman.sqlite").read_bytes()
    done = flagman_command(config, "check-backup", str(good))
    assert done.returncode == 0, done.stderr
    assert f"{good}: a good flagman backup" in done.stdout and f"at revision {head_revision()}, 1 game" in done.stdout
    bad = tmp_path / "backups" / "bad.sqlite"
    bad.write_bytes(good.read_bytes())
    damage_pages(bad)
    assert_told(flagman_command(config, "check-backup", str(bad)), 2, "is not a good flagman backup", "malformed")
    junk = tmp_path / "backups" / "junk.sqlite"
    junk.write_bytes(b"not a database at all")
    assert_told(flagman_command(config, "check-backup", str(junk)), 2, "not an SQLite database file")
    assert (tmp_path / "site" / "flagman.sqlite").read_bytes() == before
