"""The jobs run by hand (`poll`, `tick`, `send`) refuse what they cannot work on, rather than
report nothing done ("`flagman poll` prints "fetched 0" and exits 0 on an unusable
database ... a vanished Maildir is silently recreated"). `run` (the service) runs as a process
of its own, as an operator runs it; the jobs in the test's process (`tests.helpers.flagman_command`:
the same status, stdout and stderr)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import damage_header, flagman_command, flagman_process, init_site


@pytest.mark.parametrize("command", ["poll", "tick", "send"])
def test_a_job_on_a_database_that_is_not_there_is_refused_and_none_is_made(tmp_path: Path, command: str) -> None:
    config = init_site(tmp_path / "site")
    database = tmp_path / "site" / "flagman.sqlite"
    database.unlink()
    done = flagman_command(config, command)
    assert done.returncode != 0 and "fetched 0" not in done.stdout, (done.returncode, done.stdout)
    (line,) = done.stderr.strip().splitlines()
    assert f"no database at {database}" in line and "flagman migrate" in line, line
    assert not database.exists(), "SQLite made no empty database in its place"


@pytest.mark.parametrize("command", ["poll", "send"])
def test_a_job_on_an_empty_database_says_migrate(tmp_path: Path, command: str) -> None:
    config = init_site(tmp_path / "site")
    database = tmp_path / "site" / "flagman.sqlite"
    database.unlink()
    database.touch()
    done = flagman_command(config, command)
    assert done.returncode != 0 and "fetched 0" not in done.stdout, (done.returncode, done.stdout)
    (line,) = done.stderr.strip().splitlines()
    assert "no schema" in line and "flagman migrate" in line, line


def test_poll_on_a_damaged_database_with_an_empty_inbox_is_status_4(tmp_path: Path) -> None:
    config = init_site(tmp_path / "site")
    damage_header(tmp_path / "site" / "flagman.sqlite")
    done = flagman_command(config, "poll")
    assert done.returncode == 4 and "fetched" not in done.stdout, (done.returncode, done.stdout)
    assert "is damaged" in done.stderr


@pytest.mark.parametrize("command", ["poll", "run"])
def test_a_vanished_inbox_maildir_is_reported_not_made_again(tmp_path: Path, command: str) -> None:
    """Mail was read from the Maildir, then it went (deleted, or its disk not mounted): the
    command says so and makes no empty one in its place (a Maildir is made on first use only)."""
    from bot.mail_in.inbox import deliver_to_maildir
    from bot.testing import plain_mail

    config = init_site(tmp_path / "site")
    inbox = tmp_path / "site" / "mail" / "inbox"
    deliver_to_maildir(inbox, plain_mail("p@players.test", "flagman@localhost", "hi", "HELP", message_id="<v1@p.test>"))
    assert flagman_command(config, "poll").returncode == 0
    shutil.rmtree(inbox)
    done = (flagman_process if command == "run" else flagman_command)(config, command)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    assert f"the inbox Maildir {inbox} is not there" in line, line
    assert not inbox.exists(), "no empty Maildir in its place"


def test_a_maildir_inbox_never_used_is_made_on_first_use(tmp_path: Path) -> None:
    config = init_site(tmp_path / "site")
    inbox = tmp_path / "site" / "mail" / "inbox"
    shutil.rmtree(inbox)
    done = flagman_command(config, "poll")
    assert done.returncode == 0 and "fetched 0" in done.stdout, done.stderr
    assert (inbox / "new").is_dir()
