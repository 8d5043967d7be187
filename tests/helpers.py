"""Helpers shared by the shell's and the end-to-end tests."""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pytest

from bot.db import migrate
from bot.testing import FakeClock, FakeInbox

if TYPE_CHECKING:
    from datetime import datetime

    from bot.app import App
    from bot.models import Outbox

_serial = itertools.count(1)


def fresh_database(kind: str, tmp_path: Path, postgres: Any = None) -> str:
    """A migrated database URL: a SQLite file in tmp_path, or a new database on `postgres`.

    Both are copies of a database that `migrate` brought to head once in this process (a SQLite
    file; a PostgreSQL template database): the same schema and rows as migrating each one, without
    running every migration again for every test (tests/test_test_databases.py compares them)."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / f'flagman-{next(_serial)}.sqlite'}"
        migrated_sqlite(url)
        return url
    return str(postgres.create_database(f"flagman_test_{next(_serial)}", template=_postgres_template(postgres)))


_sqlite_template: list[Path] = []
_postgres_templates: set[tuple[str, int]] = set()
POSTGRES_TEMPLATE = "flagman_template"


def process_folder(prefix: str) -> Path:
    """A new folder under the system's temporary one, for what a test process makes once and
    copies for its tests (a migrated database, a played site), removed when the process ends:
    a test run leaves none of them behind. Only the process that made it removes it (a child
    forked from it, which inherits its exit handlers, leaves it to its parent)."""
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    maker = os.getpid()

    def remove() -> None:
        if os.getpid() == maker:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    return folder


def migrated_sqlite(url: str) -> None:
    """The SQLite database of `url` at the head revision: a new (or empty) file is a copy of one
    file migrated once in this process, with the mode `migrate` gives a new file (0600); a file
    with a database in it is migrated as it is."""
    import shutil
    import sqlite3

    from bot.db import prepare_sqlite_file

    if not _sqlite_template:
        template = process_folder("fm-schema-") / "head.sqlite"
        migrate(f"sqlite:///{template}")
        with sqlite3.connect(template) as conn:  # every page in the file itself, none in a -wal
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        _sqlite_template.append(template)
    path = Path(url.removeprefix("sqlite:///"))
    if path.exists() and path.stat().st_size > 0:
        migrate(url)
        return
    prepare_sqlite_file(url)
    shutil.copyfile(_sqlite_template[0], path)


def init_site(directory: Path, address: str = "flagman@localhost") -> Path:
    """What `bot.cli.init_dir` makes in `directory` (a configuration on the embedded default, the
    site secret, the Maildir folders, a migrated database), the database a copy of the file
    migrated once in this process (`migrated_sqlite`), which `init_dir` then finds at the head
    revision: the same site without running every migration for every test. A directory that
    already has a configuration is left to `init_dir` as it is (tests/test_test_databases.py
    compares the two sites' databases)."""
    import tomllib

    from bot.cli import init_dir
    from bot.cli.init import CONFIG_TEMPLATE

    if not (directory / "flagman.toml").exists():
        directory.mkdir(parents=True, exist_ok=True)
        url = tomllib.loads(CONFIG_TEMPLATE.format(address=address))["database"]["url"]
        migrated_sqlite(f"sqlite:///{directory / url.removeprefix('sqlite:///')}")
    return init_dir(directory, address)


def migrated(url: str) -> None:
    """The database of `url` (new, or empty) brought to the head revision: a copy of a migrated
    file for SQLite (`migrated_sqlite`), `migrate` itself for any other database."""
    if url.startswith("sqlite:///"):
        migrated_sqlite(url)
    else:
        migrate(url)


def _postgres_template(postgres: Any) -> str:
    """The name of a database on `postgres` migrated to head once in this process, to copy."""
    key = (str(postgres.root), int(postgres.port))
    if key not in _postgres_templates:
        migrate(postgres.create_database(POSTGRES_TEMPLATE))
        _postgres_templates.add(key)
    return POSTGRES_TEMPLATE


def unavailable(what: str, why: object) -> None:
    """A server or test data that a test needs is missing: the test FAILS (CI must never pass by
    skipping). FLAGMAN_ALLOW_SKIP_SERVERS=1 turns that into a skip on a developer's machine, unless
    FLAGMAN_REQUIRE_SERVERS=1 (which tests/run sets) says otherwise."""
    message = f"{what} could not be started:\n{why}" if isinstance(why, BaseException) else f"{what}: {why}"
    allow_skip = os.environ.get("FLAGMAN_ALLOW_SKIP_SERVERS") == "1"
    required = os.environ.get("FLAGMAN_REQUIRE_SERVERS") == "1"
    if allow_skip and not required:
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


# -- storage faults made for real ---------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
# Root ignores file modes (CAP_DAC_OVERRIDE): a command that must meet a file it may not write
# runs without those capabilities, as root still (the interpreter under /root stays readable),
# so the modes count as they do for the service's own user.
NO_OVERRIDE = "-dac_override,-dac_read_search,-fowner"


def as_unprivileged(argv: list[str]) -> list[str]:
    """`argv` run so that file modes apply to it: as root, without the capabilities that
    override them (setpriv, util-linux); as any other user, as it is."""
    if os.geteuid() != 0:
        return argv
    import shutil

    setpriv = shutil.which("setpriv")
    if setpriv is None:
        unavailable("setpriv (util-linux)", "needed to run a command as root without CAP_DAC_OVERRIDE")
    return [str(setpriv), f"--bounding-set={NO_OVERRIDE}", f"--inh-caps={NO_OVERRIDE}", *argv]


def flagman_process(config: Path, *args: str, unprivileged: bool = False, env: dict[str, str] | None = None) -> Any:
    """`flagman --config CONFIG ARGS...` as a process of its own (its exit status, stdout and
    stderr as a user sees them), the site secret from the environment left out."""
    import subprocess
    import sys

    argv = [sys.executable, "-m", "bot.cli", "--config", str(config), *args]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FLAGMAN_") or k == "FLAGMAN_CONFIG"}
    environment.pop("JOURNAL_STREAM", None)
    environment.update(env or {})
    return subprocess.run(
        as_unprivileged(argv) if unprivileged else argv,
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@dataclass(frozen=True)
class Done:
    """What a command run in this process left: its exit status, stdout and stderr (as
    `subprocess.CompletedProcess` has them, `args` the command's arguments)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def flagman_command(
    config: Path | None,
    *args: str,
    env: dict[str, str] | None = None,
    streams: tuple[TextIO, TextIO] | None = None,
) -> Done:
    """`flagman [--config CONFIG] ARGS...` run in this process (`bot.cli.main`), as
    `flagman_process` runs it in one of its own, without the cost of starting Python: the same
    environment (the FLAGMAN_ variables but FLAGMAN_CONFIG left out, `env` added), its stdout
    and stderr captured, the log set up as the command sets it up (on its stdout), the status
    it returns or exits with; an exception it lets out is a traceback on stderr and status 1, as
    Python's own. For what a command says and its status; what only a process shows (file modes
    without root's override, the interpreter's start, signals) stays with `flagman_process`.
    `streams` (files with descriptors of their own, stdout's and stderr's) are written instead
    of the captures, whose text is then empty: a command that tells its streams by their file
    (the journal's, `bot.cli.logs.is_journal`) meets them as it would in its process."""
    import contextlib
    import io
    import logging
    import traceback

    from bot.cli import main

    saved_env = dict(os.environ)
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    quietened = [logging.getLogger(name) for name in ("alembic", "apscheduler", "imapclient", "sqlalchemy")]
    saved_levels = [logger.level for logger in quietened]  # the command sets them for its process
    out, err = io.StringIO(), io.StringIO()
    written: tuple[TextIO, TextIO] = (out, err) if streams is None else streams
    argv = [*(["--config", str(config)] if config is not None else []), *args]
    try:
        for key in [k for k in os.environ if k.startswith("FLAGMAN_") and k != "FLAGMAN_CONFIG"]:
            del os.environ[key]
        os.environ.pop("JOURNAL_STREAM", None)
        os.environ.update(env or {})
        root.handlers = []  # the command's own log on its stdout, as in its process
        with contextlib.redirect_stdout(written[0]), contextlib.redirect_stderr(written[1]):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
                if not isinstance(exc.code, int | None):
                    print(exc.code, file=sys.stderr)
            except Exception:  # noqa: BLE001 - what the interpreter would print, and its status
                traceback.print_exc()
                code = 1
            for stream in written:
                stream.flush()
    finally:
        for handler in root.handlers:
            if handler not in saved_handlers:
                handler.close()
        root.handlers, root.level = saved_handlers, saved_level
        for logger, level in zip(quietened, saved_levels, strict=True):
            logger.setLevel(level)
        os.environ.clear()
        os.environ.update(saved_env)
    return Done(["flagman", *argv], code, out.getvalue(), err.getvalue())


class SmallDisk:
    """A file system of a few hundred KiB (tmpfs) mounted at `root` for one test: a disk that
    fills up, or is made read-only, for real. Mounting needs root (mount(2)): the test fails
    otherwise."""

    def __init__(self, root: Path, size_kib: int) -> None:
        self.root = root
        self.size_kib = size_kib
        self.filler: Path | None = None

    def __enter__(self) -> SmallDisk:
        import subprocess

        if os.geteuid() != 0:
            unavailable("a small file system (tmpfs)", "mounting one needs root")
        self.root.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size_kib}k,mode=0755", "flagman-test", str(self.root)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            unavailable("a small file system (tmpfs)", done.stderr.strip() or done.returncode)
        return self

    def fill(self) -> None:
        """Write a file until the file system has no byte left (ENOSPC)."""
        import errno

        self.filler = self.root / "filler"
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (65536, 4096, 1):  # down to the last byte
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
        finally:
            os.close(fd)

    def free(self) -> None:
        """The room made again: the filler removed."""
        if self.filler is not None:
            self.filler.unlink()
            self.filler = None

    def remount(self, *, read_only: bool) -> None:
        import subprocess

        subprocess.run(
            ["mount", "-o", f"remount,{'ro' if read_only else 'rw'}", str(self.root)], check=True, capture_output=True
        )

    def __exit__(self, *exc: object) -> None:
        import subprocess

        subprocess.run(["umount", "--lazy", str(self.root)], capture_output=True)


def damage_header(database: Path) -> None:
    """The SQLite file's first 100 bytes (its header) overwritten: "file is not a database"."""
    with open(database, "r+b") as handle:
        handle.write(b"\x5a" * 100)


def damage_pages(database: Path, first: int = 2, count: int = 4) -> None:
    """Pages `first`.. of the SQLite file (its header and schema page left) overwritten: the
    schema reads, the tables' b-trees are garbage ("database disk image is malformed")."""
    import sqlite3

    with sqlite3.connect(database) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(database, "r+b") as handle:
        handle.seek(page_size * (first - 1))
        handle.write(b"\x5a" * page_size * count)


def moving_clock(app: App) -> FakeClock:
    """The clock of an App the tests built on a `FakeClock`, as one: the test sets and advances it."""
    clock = app.clock
    assert isinstance(clock, FakeClock), clock
    return clock


def fake_inbox(app: App) -> FakeInbox:
    """The inbox of an App the tests built on a `FakeInbox`, as one: the test delivers to it."""
    inbox = app.inbox
    assert isinstance(inbox, FakeInbox), inbox
    return inbox


def wait_until(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Until `done()`, looked at every 50 ms, for another process or a server to act: the
    harness's own wait. The test fails with `what` if `timeout` seconds pass first (a hang,
    never a figure the test judges)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.05)


def with_secret_lines(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Every player's view of game `kind` given a private line naming them
    (``SECRET-LINE-OF-<seat>``), whether worked out whole (`view`) or from the public view
    (`player_view`), so that a private part shown where it must not be shows."""
    from rules import find_game
    from rules.api import Viewer

    game_type = type(find_game(kind))
    original, original_player = game_type.view, game_type.player_view

    def secret(view: Any, viewer: Any) -> Any:
        data = dict(view)
        private = data["private"]
        assert isinstance(private, list | tuple)
        data["private"] = [*private, f"SECRET-LINE-OF-{viewer}"]
        return data

    def view(self: Any, state: Any, resolution: Any, viewer: Any) -> Any:
        data = original(self, state, resolution, viewer)
        return data if isinstance(viewer, Viewer) else secret(data, viewer)

    def player_view(self: Any, state: Any, public: Any, player: Any) -> Any:
        return secret(original_player(self, state, public, player), player)

    monkeypatch.setattr(game_type, "view", view)
    monkeypatch.setattr(game_type, "player_view", player_view)


def pending_outbox_row(n: int, at: datetime, size: int = 30_000) -> Outbox:
    """A pending mail numbered `n`, due at `at`, its body `size` bytes."""
    from bot.models import Outbox, OutboxBody, OutboxStatus

    return Outbox(
        message_id=f"<w{n}@flagman.test>",
        kind="notice",
        recipient=f"p{n}@players.test",
        envelope_from="bot@flagman.test",
        subject=f"Mail {n}",
        body=OutboxBody(data=b"x" * size),
        status=OutboxStatus.PENDING,
        attempts=0,
        next_attempt_at=at,
        last_error="",
        created_at=at,
    )
