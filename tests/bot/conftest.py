"""Fixtures for the shell's tests: a real SQLite database, fake inbox/mailer/clock."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bot.db import Database
from bot.dice import SeededEntropy
from bot.games.turns import PlayerSpec, create_game
from bot.mail_out.render import Renderer
from bot.settings import BotSettings, DatabaseSettings, Secrets, Settings
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp
from tests.helpers import fresh_database

RACERS = (
    PlayerSpec("kelly", "kelly@example.org", "Kelly", "Europe/London"),
    PlayerSpec("seb", "seb@example.org", "Seb", "Europe/Paris"),
    PlayerSpec("steve", "steve@example.org", "Steve", "America/New_York"),
    PlayerSpec("roger", "roger@example.org", "Roger", "Australia/Sydney"),
    PlayerSpec("anna", "anna@example.org", "Anna", "UTC"),
)
GM = "gm@example.org"
BOT = "flagman@example.org"


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


@pytest.fixture
def app(tmp_path: Path, db_url: str) -> Iterator[TestApp]:
    settings = replace(make_settings(tmp_path), database=DatabaseSettings(url=db_url))
    application = TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=FakeInbox(max_size=settings.limits.max_mail_bytes),
        mailer=FakeMailer(),
        entropy=SeededEntropy(0),
    )
    yield application
    application.close()


@pytest.fixture
def racecraft(app: TestApp) -> TestApp:
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
    return app
