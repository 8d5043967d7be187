"""Fixtures for the shell's tests: a real SQLite database, fake inbox/mailer/clock."""

from __future__ import annotations

import copy
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import bot.db
from bot.db import Database
from bot.dice import SeededEntropy
from bot.games.turns import PlayerSpec, create_game
from bot.mail_out.render import Renderer
from bot.settings import BotSettings, DatabaseSettings, Secrets, Settings
from bot.store import find_game_row
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp
from tests.compiled_sql import sharing_compiled
from tests.helpers import fresh_database, process_folder

RACERS = (
    PlayerSpec("kelly", "kelly@example.org", "Kelly", "Europe/London"),
    PlayerSpec("seb", "seb@example.org", "Seb", "Europe/Paris"),
    PlayerSpec("steve", "steve@example.org", "Steve", "America/New_York"),
    PlayerSpec("roger", "roger@example.org", "Roger", "Australia/Sydney"),
    PlayerSpec("anna", "anna@example.org", "Anna", "UTC"),
)
GM = "gm@example.org"
BOT = "flagman@example.org"


@pytest.fixture(scope="session", autouse=True)
def _sqlite_engines_share_compiled_statements() -> Iterator[None]:
    """The SQLite engines `bot.db.Database` makes in this process share the statements they
    compiled (tests/compiled_sql.py): each test's own database, without compiling every
    statement again for each."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bot.db, "make_engine", sharing_compiled(bot.db.make_engine))
        yield


def make_settings(tmp_path: Path) -> Settings:
    return Settings(
        bot=BotSettings(address=BOT, timezone="Europe/London"),
        database=DatabaseSettings(url=f"sqlite:///{tmp_path / 'flagman.sqlite'}"),
        secrets=Secrets(site_secret="test-site-secret"),
        base_dir=tmp_path,
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test on `db_url` runs on SQLite; marked `both_databases` (where the database can change
    the result: the store, locking, snapshots, duplicates, time arithmetic in queries) it runs on
    the private PostgreSQL as well."""
    if "db_url" in metafunc.fixturenames:
        both = metafunc.definition.get_closest_marker("both_databases") is not None
        metafunc.parametrize("db_url", ["sqlite", "postgresql"] if both else ["sqlite"], indirect=True)


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A freshly migrated database: a SQLite file, or a database on the private PostgreSQL."""
    postgres = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    return fresh_database(request.param, tmp_path, postgres)


def _test_app(settings: Settings, mailer: FakeMailer | None = None) -> TestApp:
    return TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=FakeInbox(max_size=settings.limits.max_mail_bytes),
        mailer=mailer if mailer is not None else FakeMailer(),
        entropy=SeededEntropy(0),
    )


def _start_racecraft(app: TestApp) -> None:
    """A Racecraft game `rc1` with five players, started, turn sheets sent."""
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=7,
        )
    app.service.send()


_racecraft_started: list[tuple[Path, FakeMailer]] = []  # its SQLite file and mailer, once a process


def _racecraft_copy(url: str) -> FakeMailer:
    """The SQLite database of `url` made a copy of `_start_racecraft`'s, which runs once in this
    process (the clock does not move in it); the mailer holding the turn sheets it sent."""
    if not _racecraft_started:
        directory = process_folder("fm-rc1-")
        settings = make_settings(directory)
        started = _test_app(replace(settings, database=DatabaseSettings(url=fresh_database("sqlite", directory))))
        try:
            _start_racecraft(started)
        finally:
            started.close()
        path = Path(started.settings.database_url.removeprefix("sqlite:///"))
        with sqlite3.connect(path) as conn:  # every page in the file itself, none in a -wal
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        _racecraft_started.append((path, started.mailer))
    path, mailer = _racecraft_started[0]
    shutil.copyfile(path, url.removeprefix("sqlite:///"))
    return copy.deepcopy(mailer)


@pytest.fixture
def app(tmp_path: Path, db_url: str, request: pytest.FixtureRequest) -> Iterator[TestApp]:
    """A TestApp on the database of `db_url`; for a test that asks for `racecraft` on SQLite, that
    database a copy of `rc1` started (`_racecraft_copy`)."""
    settings = replace(make_settings(tmp_path), database=DatabaseSettings(url=db_url))
    started = "racecraft" in request.fixturenames and db_url.startswith("sqlite:///")
    application = _test_app(settings, _racecraft_copy(db_url) if started else None)
    yield application
    application.close()


@pytest.fixture
def racecraft(app: TestApp) -> TestApp:
    """A Racecraft game `rc1` with five players, started, turn sheets sent (`_start_racecraft`;
    on SQLite the app's database is a copy of it)."""
    if not app.settings.database_url.startswith("sqlite:///"):
        _start_racecraft(app)
    with app.db.read() as session:
        assert find_game_row(session, "rc1") is not None
    return app
