"""End-to-end fixtures: the bot wired to the real Dovecot, SMTP sink and PostgreSQL."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.app import App, build_app
from bot.settings import Settings, parse_settings
from bot.testing import FakeClock
from tests.e2e.rig import rig  # noqa: F401 - the fixture, for the tests of tests/e2e
from tests.helpers import fresh_database, moving_clock
from tests.servers import Dovecot, SmtpSink

_serial = itertools.count(1)


@dataclass
class MailWorld:
    """The bot on real servers, and the players' mailboxes on the same Dovecot."""

    app: App
    dovecot: Dovecot
    sink: SmtpSink
    bot: str
    domain: str

    def player(self, name: str) -> str:
        return self.dovecot.add_user(f"{name}@{self.domain}", "pw")

    @property
    def clock(self) -> FakeClock:
        """The bot's clock, which the test moves (every world is built on a `FakeClock`)."""
        return moving_clock(self.app)


def world_settings(
    tmp_path: Path,
    bot: str,
    url: str,
    dovecot: Dovecot,
    smtp_sink: SmtpSink,
    *,
    sections: dict[str, dict[str, object]] | None = None,
    env: dict[str, str] | None = None,
) -> Settings:
    """The bot's settings on the real servers: `bot`'s IMAP INBOX, the SMTP sink, database `url`;
    `sections` and `env` add to them."""
    return parse_settings(
        {
            "bot": {"address": bot, "timezone": "Europe/London"},
            "database": {"url": url},
            "inbox": {
                "kind": "imap",
                "host": dovecot.host,
                "port": dovecot.imap_port,
                "security": "none",
                "username": bot,
                "timeout": 10.0,
            },
            "outbox": {
                "kind": "smtp",
                "host": smtp_sink.host,
                "port": smtp_sink.port,
                "security": "none",
                "timeout": 10.0,
            },
            **(sections or {}),
        },
        env={"FLAGMAN_SECRET": "e2e-secret", "FLAGMAN_IMAP_PASSWORD": "bot-password", **(env or {})},
        base_dir=tmp_path,
        source="e2e",
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest, tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink) -> Iterator[MailWorld]:
    n = next(_serial)
    domain = f"race{n}.test"
    bot = dovecot.add_user(f"flagman@{domain}", "bot-password")
    postgres = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    url = fresh_database(request.param, tmp_path, postgres)
    settings = world_settings(tmp_path, bot, url, dovecot, smtp_sink)
    smtp_sink.reset()
    app = build_app(settings, clock=FakeClock())
    try:
        yield MailWorld(app, dovecot, smtp_sink, bot, domain)
    finally:
        app.close()


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the flagman wheel installed, away from the source tree; its bin
    directory. One wheel build per test session (tests/e2e/wheel.py)."""
    from tests.e2e.wheel import build_wheel, install_wheel

    work = tmp_path_factory.mktemp("packaging")
    wheels = work / "wheels"
    wheels.mkdir()
    return install_wheel(build_wheel(wheels), work / "venv")
