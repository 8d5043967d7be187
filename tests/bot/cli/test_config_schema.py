"""A configuration that cannot be wrong: every command reads it through one schema,
and a wrong one is refused in one line on stderr with status 2, never a traceback, never a run
that spins or falls back to a mailbox or database nobody chose. `run` (the service) and a command
that meets file modes run as processes of their own, as an operator runs them; the others in the
test's process (`tests.helpers.flagman_command`: the same status, stdout and stderr)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, flagman_command, flagman_process, init_site


def flagman(config: Path, *command: str) -> Any:
    """`run` as a process of its own (the service), any other command in this process."""
    return (flagman_process if command[0] == "run" else flagman_command)(config, *command)


def refused_in_one_line(done: Any, *words: str) -> None:
    """Status 2 and one line on stderr; `flagman doctor` tells it as its one config PROBLEM
    (status 1, its findings on stdout). `done`: a process's `CompletedProcess` or a `Done`."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    if "doctor" in done.args:
        assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
        lines = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM")]
        assert lines and lines[0].split()[1] == "config", done.stdout
    else:
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], (word, lines[0])


def with_option(config: Path, section: str, line: str) -> Path:
    """`config` with `line` added at the top of its `[section]`."""
    text = config.read_text(encoding="utf-8")
    header = f"[{section}]\n"
    if header in text:
        text = text.replace(header, header + line + "\n", 1)
    else:
        text += f"\n{header}{line}\n"
    config.write_text(text, encoding="utf-8")
    return config


@pytest.mark.parametrize(
    ("section", "line", "words"),
    [
        ("schedule", "poll_seconds = -5", ("[schedule] poll_seconds = -5 is out of range",)),
        ("schedule", 'digest_time = "25:99"', ("[schedule] digest_time '25:99' is not a time of day",)),
        ("outbox", "max_attempts = 0", ("[outbox] max_attempts = 0 is out of range",)),
        ("inbox", 'batch_size = "100"', ("[inbox] batch_size must be a whole number",)),
    ],
)
@pytest.mark.parametrize("command", [("run",), ("poll",), ("doctor",), ("game", "list")])
def test_a_setting_out_of_range_stops_every_command_in_one_line_with_status_2(
    tmp_path: Path, section: str, line: str, words: tuple[str, ...], command: tuple[str, ...]
) -> None:
    """Every setting's range and type is checked when the config is read: a negative interval
    (`poll_seconds = -5`) or `digest_time = "25:99"` stops every command in one line, exit 2."""
    config = with_option(init_site(tmp_path / "site"), section, line)
    done = flagman(config, *command)
    refused_in_one_line(done, *words)


def test_a_configuration_without_the_bots_address_is_refused_by_doctor_and_run(tmp_path: Path) -> None:
    """A missing `[bot] address` is required, never silently `flagman@localhost`: doctor
    and run refuse the config in one line."""
    config = init_site(tmp_path / "site", "flagman@example.org")
    config.write_text(config.read_text(encoding="utf-8").replace('address = "flagman@example.org"\n', ""))
    for command in (("doctor",), ("run",)):
        refused_in_one_line(flagman(config, *command), "[bot] address is required")


def test_a_configuration_cut_at_a_section_boundary_is_refused(tmp_path: Path) -> None:
    """A config cut at a section boundary (no `[database]`) is refused in one line; no
    `sqlite:///flagman.sqlite` is made where nobody chose one."""
    config = init_site(tmp_path / "site")
    text = config.read_text(encoding="utf-8")
    config.write_text(text[: text.index("[database]")], encoding="utf-8")
    refused_in_one_line(flagman_process(config, "run"), "the section [database] is required")
    assert not (ROOT / "flagman.sqlite").exists(), "no database made where nobody chose one"


@pytest.mark.parametrize("scheme", ["mysql", "mariadb", "oracle"])
def test_a_database_other_than_sqlite_or_postgresql_is_refused_in_one_line(tmp_path: Path, scheme: str) -> None:
    """A database URL other than SQLite's or PostgreSQL's is refused in one line, no traceback,
    and the line never shows the URL's password."""
    config = init_site(tmp_path / "site")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('url = "sqlite:///flagman.sqlite"', f'url = "{scheme}://u:hush@db/f"'))
    for command in (("migrate",), ("game", "list")):
        done = flagman(config, *command)
        refused_in_one_line(done, f"[database] url: '{scheme}' is not a database Flagman opens")
        assert "hush" not in done.stderr


def test_postgres_spelled_as_libpq_spells_it_reaches_postgresql(tmp_path: Path) -> None:
    """ "`postgres://` (libpq's and many hosts' spelling) ... print[s] tracebacks":
    accepted; with no server there, the database is named unreachable (status 3), no traceback."""
    config = init_site(tmp_path / "site")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('url = "sqlite:///flagman.sqlite"', 'url = "postgres://u@127.0.0.1:9/f"'))
    done = flagman(config, "game", "list")
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "cannot use the database" in done.stderr, done.stderr


def test_an_unreadable_root_configuration_is_reported_unreadable_with_status_2(tmp_path: Path) -> None:
    """ "An unreadable 0600 root config is reported as "may not write", with advice to
    give /etc/flagman to the service user, exit 4 instead of 2". The file belongs to another
    user, mode 0600, and the command runs without root's override of file modes."""
    config = init_site(tmp_path / "site")
    os.chown(config, 65534, 65534)
    config.chmod(0o600)
    for command in (("run",), ("doctor",), ("migrate",)):
        done = flagman_process(config, *command, unprivileged=True)
        refused_in_one_line(done, f"{config} is unreadable", "read it")
        assert "may not write" not in done.stderr
