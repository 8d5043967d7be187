"""What an operator meets, each shown on the INSTALLED wheel (the `installed` venv of
tests/e2e/wheel.py, away from the source tree), as an operator meets them: a configuration
that cannot be wrong, a database URL spelled as libpq spells it, an install missing a
migration, a poll on an unusable database, a backup checked after the fact, the retention
policy applied by hand. Each command is a process of the installed `flagman`, in a directory
of its own (nothing found by accident in the source tree or the working directory)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from bot.mail_in.inbox import deliver_to_maildir
from bot.testing import plain_mail
from tests.e2e.wheel import clean_env, run
from tests.helpers import as_unprivileged, damage_header, damage_pages
from tests.servers import Postgres

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

ADDRESS = "flagman@wheel.test"


def flagman(
    installed: Path, config: Path, *args: str | Path, unprivileged: bool = False
) -> subprocess.CompletedProcess[str]:
    """`flagman --config CONFIG ARGS...` of the installed wheel: its status and words, as an
    operator sees them (run from the configuration's directory)."""
    argv = [str(installed / "flagman"), "--config", str(config), *(str(a) for a in args)]
    return subprocess.run(
        as_unprivileged(argv) if unprivileged else argv,
        cwd=config.parent,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def initialized(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `flagman init --address ADDRESS` of the installed wheel (its migrations from the
    wheel), copied by `site` for each test: its configuration names its files relative to itself."""
    root = tmp_path_factory.mktemp("initialized") / "site"
    run(installed / "flagman", "init", root, "--address", ADDRESS, cwd=root.parent)
    return root


def site(initialized: Path, root: Path) -> Path:
    """A site as `flagman init` of the installed wheel made it, at `root`: its configuration."""
    shutil.copytree(initialized, root)
    return root / "flagman.toml"


def one_line(done: subprocess.CompletedProcess[str], status: int, *words: str) -> str:
    """Exit `status`, no traceback, one line on stderr holding `words`; the line."""
    assert done.returncode == status, (done.args, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    (line,) = done.stderr.strip().splitlines()
    for word in words:
        assert word in line, (word, line)
    return line


def doctor_problem(done: subprocess.CompletedProcess[str], check: str, *words: str) -> None:
    """`flagman doctor`: status 1, no traceback, its first PROBLEM is of `check` and holds `words`."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout and "unexpectedly" not in done.stdout, done.stdout
    problems = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM")]
    assert problems and problems[0].split()[1] == check, done.stdout
    for word in words:
        assert word in problems[0], (word, problems[0])


def with_lines(config: Path, section: str, *lines: str) -> Path:
    """`config` with `lines` added at the top of its `[section]` (or in a new one at the end)."""
    text = config.read_text(encoding="utf-8")
    header = f"[{section}]\n"
    added = "".join(line + "\n" for line in lines)
    text = text.replace(header, header + added, 1) if header in text else text + f"\n{header}{added}"
    config.write_text(text, encoding="utf-8")
    return config


# -- a configuration that cannot be wrong --------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("poll_seconds = -5", "[schedule] poll_seconds = -5 is out of range"),
        ('digest_time = "25:99"', "[schedule] digest_time '25:99' is not a time of day"),
    ],
)
def test_the_installed_flagman_refuses_a_setting_out_of_range_in_one_line(
    installed: Path, initialized: Path, tmp_path: Path, line: str, words: str
) -> None:
    """Every setting's range and type is checked when the config is read: a negative interval
    (`poll_seconds = -5`) or `digest_time = "25:99"` stops the installed flagman in one line, exit 2."""
    config = with_lines(site(initialized, tmp_path / "site"), "schedule", line)
    one_line(flagman(installed, config, "run"), 2, words)
    doctor_problem(flagman(installed, config, "doctor"), "config", words)


def test_the_installed_flagman_requires_the_bots_address(installed: Path, initialized: Path, tmp_path: Path) -> None:
    """ "A missing `[bot] address` silently becomes `flagman@localhost`; doctor calls
    the config fine and its probe blames the mail server". Required keys are required."""
    config = site(initialized, tmp_path / "site")
    config.write_text(config.read_text(encoding="utf-8").replace(f'address = "{ADDRESS}"\n', ""), encoding="utf-8")
    one_line(flagman(installed, config, "run"), 2, "[bot] address is required")
    doctor_problem(flagman(installed, config, "doctor"), "config", "[bot] address is required")


def test_the_installed_flagman_requires_the_database_section(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "A missing `[database]` silently uses `sqlite:///flagman.sqlite`. A config cut at
    a section boundary starts with an outbox it cannot write". No database is made where nobody
    chose one (the working directory is the configuration's)."""
    config = site(initialized, tmp_path / "site")
    text = config.read_text(encoding="utf-8")
    config.write_text(text[: text.index("[database]")], encoding="utf-8")
    (config.parent / "flagman.sqlite").unlink()
    for command in ("run", "migrate"):
        one_line(flagman(installed, config, command), 2, "the section [database] is required")
    assert not (config.parent / "flagman.sqlite").exists(), "no database made where nobody chose one"


def test_the_installed_flagman_opens_postgres_as_libpq_spells_it(
    installed: Path, initialized: Path, tmp_path: Path, postgres: Postgres
) -> None:
    """ "`postgres://` (libpq's and many hosts' spelling) ... print[s] tracebacks (exit 1):
    accept `postgres://`". A real PostgreSQL: migrate, then the doctor finds the database at its
    head and `game list` reads it."""
    url = postgres.create_database("flagman_wheel_libpq").replace("postgresql+psycopg://", "postgres://")
    config = site(initialized, tmp_path / "site")
    text = config.read_text(encoding="utf-8").replace('url = "sqlite:///flagman.sqlite"', f'url = "{url}"')
    config.write_text(text, encoding="utf-8")
    migrated = flagman(installed, config, "migrate")
    assert migrated.returncode == 0 and "Traceback" not in migrated.stderr, migrated.stderr
    listed = flagman(installed, config, "game", "list")
    assert listed.returncode == 0, listed.stderr
    doctor = flagman(installed, config, "doctor")
    assert not [line for line in doctor.stdout.splitlines() if line.startswith("PROBLEM database")], doctor.stdout


def test_the_installed_flagman_refuses_another_database_in_one_line(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "`postgres://` ... and `mysql://` print tracebacks (exit 1): ... refuse others in
    one line" (and never the password the URL holds)."""
    config = site(initialized, tmp_path / "site")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('url = "sqlite:///flagman.sqlite"', 'url = "mysql://u:hush@db/f"'))
    for command in (("migrate",), ("run",)):
        done = flagman(installed, config, *command)
        one_line(done, 2, "[database] url: 'mysql' is not a database Flagman opens")
        assert "hush" not in done.stderr + done.stdout


def test_the_installed_flagman_says_an_unreadable_configuration_is_unreadable(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "An unreadable 0600 root config is reported as "may not write", with advice to
    give /etc/flagman to the service user, exit 4 instead of 2". The file is another user's,
    mode 0600, and the installed flagman runs without root's override of file modes."""
    import os

    config = site(initialized, tmp_path / "site")
    os.chown(config, 65534, 65534)
    config.chmod(0o600)
    for command in ("run", "migrate"):
        done = flagman(installed, config, command, unprivileged=True)
        one_line(done, 2, f"{config} is unreadable", "read it")
        assert "may not write" not in done.stderr
    doctor = flagman(installed, config, "doctor", unprivileged=True)
    doctor_problem(doctor, "config", f"{config} is unreadable")


# -- an install missing a migration ---------------------------------------------------------------


def test_an_install_missing_a_migration_file_says_which_in_one_line(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "A missing migration file: `flagman migrate` prints a 44-line traceback
    (`KeyError: '0011'`), doctor says "a check failed unexpectedly"". The installed wheel
    with 0011's file missing: migrate and run name the revision in one line (status 2); the
    doctor names it as a database problem. The installed venv itself, the file taken away for
    the test and put back after it (no second install)."""
    config = site(initialized, tmp_path / "site")
    (migration,) = installed.parent.glob("lib/python3*/site-packages/bot/_resources/migrations/versions/0011_*.py")
    kept = tmp_path / migration.name
    shutil.move(migration, kept)
    try:
        for command in ("migrate", "run"):
            one_line(flagman(installed, config, command), 2, "revision 0011 is missing from", "reinstall")
        doctor = flagman(installed, config, "doctor")
    finally:
        shutil.move(kept, migration)
    assert doctor.returncode == 1 and "unexpectedly" not in doctor.stdout, doctor.stdout
    problems = [line for line in doctor.stdout.splitlines() if line.startswith("PROBLEM")]
    assert any(" database " in p and "revision 0011 is missing" in p for p in problems), doctor.stdout


# -- the database: unusable, backed up, pruned -----------------------------------------------------


def test_the_installed_poll_stops_on_an_unusable_database_and_leaves_the_mail(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "`flagman poll` prints "fetched 0" and exits 0 on an unusable database; ... a
    vanished Maildir is silently recreated". A damaged database: status 4, nothing fetched, the
    mail waits in the inbox. A Maildir gone after mail was read from it: named, not made again."""
    config = site(initialized, tmp_path / "site")
    inbox = tmp_path / "site" / "mail" / "inbox"
    deliver_to_maildir(inbox, plain_mail("p@players.test", ADDRESS, "hi", "HELP", message_id="<w1@p.test>"))
    assert flagman(installed, config, "poll").returncode == 0
    deliver_to_maildir(inbox, plain_mail("p@players.test", ADDRESS, "hi", "HELP", message_id="<w2@p.test>"))
    database = tmp_path / "site" / "flagman.sqlite"
    kept = database.read_bytes()
    damage_header(database)
    done = flagman(installed, config, "poll")
    assert done.returncode == 4 and "fetched" not in done.stdout, (done.returncode, done.stdout, done.stderr)
    assert "is damaged" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(list((inbox / "new").iterdir())) == 1, "the mail waits in the inbox"
    database.write_bytes(kept)
    for leftover in tmp_path.glob("site/flagman.sqlite-*"):
        leftover.unlink()
    import shutil

    shutil.rmtree(inbox)
    one_line(flagman(installed, config, "poll"), 2, f"the inbox Maildir {inbox} is not there")
    assert not inbox.exists(), "no empty Maildir in its place"


def test_the_installed_check_backup_tells_a_good_backup_from_a_damaged_one(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "A command that checks an existing backup file (not only at creation)". A backup
    the installed flagman wrote is good (status 0); the same damaged since, status 2 and why;
    the database itself is never touched."""
    config = site(initialized, tmp_path / "site")
    good = tmp_path / "backups" / "good.sqlite"
    assert flagman(installed, config, "backup", good).returncode == 0
    database = tmp_path / "site" / "flagman.sqlite"
    before = database.read_bytes()
    done = flagman(installed, config, "check-backup", good)
    assert done.returncode == 0 and f"{good}: a good flagman backup" in done.stdout, (done.stdout, done.stderr)
    bad = tmp_path / "backups" / "bad.sqlite"
    bad.write_bytes(good.read_bytes())
    damage_pages(bad)
    done = flagman(installed, config, "check-backup", bad)
    assert done.returncode == 2 and "is not a good flagman backup" in done.stderr, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert database.read_bytes() == before


def test_the_installed_prune_applies_the_retention_policy(installed: Path, initialized: Path, tmp_path: Path) -> None:
    """ "The database only grows ... no retention ...; the IMAP Processed folder grows
    forever. A retention policy ... run by the service or the timer". A game made and its turn
    sheets sent by the installed flagman, their mail dated 100 days back, a mail of the Processed
    folder delivered 40 days back and one today: `flagman prune` deletes the old bodies, deletes
    the old Processed mail, keeps the rest, and says what it pruned."""
    config = site(initialized, tmp_path / "site")
    players = [f"--player={n}={n}@players.test" for n in ("kelly", "seb", "steve", "roger", "anna")]
    assert flagman(installed, config, "game", "new", "racecraft", "--name", "rc1", *players).returncode == 0
    assert flagman(installed, config, "send").returncode == 0
    database = tmp_path / "site" / "flagman.sqlite"
    with sqlite3.connect(database) as conn:
        sent = conn.execute(
            "select count(*) from outbox join outbox_body using (id) where status = 'sent' and length(data) > 0"
        ).fetchone()[0]
        conn.execute("update outbox set created_at = datetime(created_at, '-100 days')")
    conn.close()
    assert sent >= 5
    processed = tmp_path / "site" / "mail" / "inbox" / ".Processed"
    old = deliver_to_maildir(
        processed, plain_mail("a@p.test", ADDRESS, "x", "HELP"), clock_ns=time.time_ns() - 40 * 86400 * 10**9
    )
    new = deliver_to_maildir(processed, plain_mail("b@p.test", ADDRESS, "y", "HELP"))
    doctor = flagman(installed, config, "doctor")
    assert doctor.returncode == 0, doctor.stdout
    warned = [line for line in doctor.stdout.splitlines() if line.startswith("warning  retention")]
    assert (
        len(warned) == 2 and f"{sent} sent mail bodies" in warned[0] and "holds 1 mail older than 32 days" in warned[1]
    ), warned
    done = flagman(installed, config, "prune")
    assert done.returncode == 0, done.stderr
    assert f"pruned: {sent} sent mail bodies" in done.stdout and "1 mail of the Processed folder" in done.stdout, (
        done.stdout
    )
    assert not old.exists() and new.exists()
    with sqlite3.connect(database) as conn:
        left = conn.execute("select count(*) from outbox_body where length(data) > 0").fetchone()[0]
        games = conn.execute("select count(*) from game").fetchone()[0]
    conn.close()
    assert left == 0 and games == 1
    again = flagman(installed, config, "prune")
    assert again.returncode == 0 and "pruned: 0 sent mail bodies" in again.stdout, again.stdout
    doctor = flagman(installed, config, "doctor")
    assert "warning  retention" not in doctor.stdout and doctor.stdout.count("ok       retention") == 3, doctor.stdout


def test_the_installed_flagman_refuses_damaged_pages_and_says_so_in_the_backup_metric(
    installed: Path, initialized: Path, tmp_path: Path
) -> None:
    """ "Two overwritten database pages: `migrate` exits 0 and `run` starts; only doctor
    and the nightly backup notice, and nothing alerts when a backup fails (a metric and a log
    line at error)". From the installed wheel: migrate refuses (status 4), the backup refuses
    and writes flagman_backup_ok 0 beside the metrics file."""
    config = with_lines(
        site(initialized, tmp_path / "site"), "metrics", f'file = "{tmp_path / "metrics" / "flagman.prom"}"'
    )
    assert flagman(installed, config, "backup", tmp_path / "backups" / "good.sqlite").returncode == 0
    damage_pages(tmp_path / "site" / "flagman.sqlite")
    for command in (("migrate",), ("backup", str(tmp_path / "backups" / "bad.sqlite"))):
        done = flagman(installed, config, *command)
        assert done.returncode == 4 and "is damaged" in done.stderr, (command, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr
    figures = (tmp_path / "metrics" / "flagman-backup.prom").read_text(encoding="utf-8")
    (ok_line,) = [line for line in figures.splitlines() if line.startswith("flagman_backup_ok")]
    assert float(ok_line.rsplit(" ", 1)[1]) == 0, figures
