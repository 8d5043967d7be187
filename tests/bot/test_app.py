"""The composition root (bot.app): an App owns its adapters and closes them on every path."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import text

from bot import app as composition
from bot.app import build_app, build_imap_inbox, build_inbox, build_smtp_mailer, open_database
from bot.db import Database
from bot.mail_in.imap import ImapInbox
from bot.mail_out.render import Renderer
from bot.settings import BotSettings, InboxSettings, OutboxSettings, Secrets, Settings
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp
from tests.bot.conftest import make_settings


class ClosingInbox(FakeInbox):
    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.closed = 0
        self.fail = fail

    def close(self) -> None:
        self.closed += 1
        if self.fail:
            raise OSError("the IMAP server hung up")


class ClosingMailer(FakeMailer):
    closed = 0

    def close(self) -> None:
        self.closed += 1


class DisposedDatabase(Database):
    disposed = 0

    def dispose(self) -> None:
        self.disposed += 1
        super().dispose()


def make_app(
    tmp_path: Path, inbox: ClosingInbox | None = None
) -> tuple[TestApp, ClosingInbox, ClosingMailer, DisposedDatabase]:
    settings = make_settings(tmp_path)
    inbox = inbox or ClosingInbox()
    mailer = ClosingMailer()
    db = DisposedDatabase(settings.database_url)
    return (
        TestApp(settings=settings, db=db, clock=FakeClock(), renderer=Renderer(), inbox=inbox, mailer=mailer),
        inbox,
        mailer,
        db,
    )


def test_the_with_block_closes_inbox_mailer_and_database_even_on_an_exception(tmp_path: Path) -> None:
    """``with build_app(...) as app:`` leaves nothing open, however the block ends."""
    app, inbox, mailer, db = make_app(tmp_path)
    with pytest.raises(RuntimeError), app:
        raise RuntimeError("a command failed half way")
    assert (inbox.closed, mailer.closed, db.disposed) == (1, 1, 1)


def test_close_is_idempotent(tmp_path: Path) -> None:
    """An explicit close inside the block (the scheduler's stop) and the block's exit close once."""
    app, inbox, mailer, db = make_app(tmp_path)
    with app:
        app.close()
    app.close()
    assert (inbox.closed, mailer.closed, db.disposed) == (1, 1, 1)


def test_an_adapter_that_fails_to_close_does_not_keep_the_others_open(tmp_path: Path) -> None:
    """The inbox's close raising still closes the mailer and the database, then re-raises."""
    app, inbox, mailer, db = make_app(tmp_path, ClosingInbox(fail=True))
    with pytest.raises(OSError, match="hung up"):
        app.close()
    assert (inbox.closed, mailer.closed, db.disposed) == (1, 1, 1)


def test_the_shell_and_the_service_are_built_once(tmp_path: Path) -> None:
    """One Shell per App, and the Service works on that same Shell."""
    app, *_ = make_app(tmp_path)
    with app:
        assert app.shell is app.shell
        assert app.service is app.service
        assert app.service.shell is app.shell


def test_new_settings_reach_the_shell_and_the_service_built_before(tmp_path: Path) -> None:
    """The SIGHUP reload gives the App new settings (`use_settings`): the jobs that run after
    it see the new ones; each value is held once (the App reads it from the Shell or the
    Service), so there is no copy to fall behind."""
    app, *_ = make_app(tmp_path)
    with app:
        service = app.service
        new = replace(app.settings, bot=replace(app.settings.bot, public_url="https://races.example.org/"))
        app.use_settings(new)
        assert app.settings is new and app.shell.settings is new and service.shell.settings is new
        other = FakeInbox()
        app.use_inbox(other)
        assert app.inbox is other and service.inbox is other


def test_the_app_is_told_of_a_new_value_not_assigned_one(tmp_path: Path) -> None:
    """No hidden forwarding: the App's values are read-only properties; assigning
    one fails at once instead of silently reaching (or missing) the Shell and the Service."""
    app, *_ = make_app(tmp_path)
    with app, pytest.raises(AttributeError):
        app.settings = app.settings  # type: ignore[misc]


def test_build_app_closes_what_it_built_when_a_later_adapter_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No half-built App leaks a database or an inbox connection."""
    inbox = ClosingInbox()
    disposed: list[Database] = []
    original = Database.dispose

    def dispose(self: Database) -> None:
        disposed.append(self)
        original(self)

    def no_mailer(settings: Settings) -> None:
        raise OSError("no outbox")

    monkeypatch.setattr(Database, "dispose", dispose)
    monkeypatch.setattr(composition, "build_inbox", lambda settings, create=True: inbox)
    monkeypatch.setattr(composition, "build_mailer", no_mailer)
    with pytest.raises(OSError, match="no outbox"):
        build_app(make_settings(tmp_path))
    assert inbox.closed == 1 and len(disposed) == 1


def test_build_app_leaves_the_adapters_it_was_given_to_the_app(tmp_path: Path) -> None:
    """Given adapters are used as they are, and closed with the App."""
    inbox, mailer = ClosingInbox(), ClosingMailer()
    with build_app(make_settings(tmp_path), clock=FakeClock(), inbox=inbox, mailer=mailer) as app:
        assert app.inbox is inbox and app.mailer is mailer
    assert (inbox.closed, mailer.closed) == (1, 1)


def test_open_database_disposes_of_the_database_on_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``with open_database(url) as db:`` for the commands that need only the database."""
    disposed: list[Database] = []
    original = Database.dispose

    def dispose(self: Database) -> None:
        disposed.append(self)
        original(self)

    monkeypatch.setattr(Database, "dispose", dispose)
    with pytest.raises(LookupError), open_database(f"sqlite:///{tmp_path / 'x.sqlite'}") as db:
        raise LookupError("no such game")
    assert disposed == [db]


def test_a_connect_timeout_is_for_postgresql_only(tmp_path: Path) -> None:
    """SQLite has no connection to wait for (and sqlite3 would refuse the argument)."""
    with open_database(f"sqlite:///{tmp_path / 'x.sqlite'}", connect_timeout=1) as db, db.engine.connect() as conn:
        assert conn.execute(text("select 1")).scalar() == 1


IMAP = Settings(
    bot=BotSettings(address="bot@club.example"),
    inbox=InboxSettings(kind="imap", host="imap.club.example", username="bot", timeout=30.0, batch_size=7),
    outbox=OutboxSettings(kind="smtp", host="smtp.club.example", username="bot", timeout=30.0),
    secrets=Secrets(imap_password="imap-pw", smtp_password="smtp-pw"),
)


def test_the_service_inbox_takes_the_configured_timeout_retries_and_makes_folders() -> None:
    """build_inbox: the [inbox] account as the service uses it (no connection is opened yet)."""
    inbox = build_inbox(IMAP)
    assert isinstance(inbox, ImapInbox)
    assert (inbox.timeout, inbox.create_folders, inbox.reconnect_attempts, inbox.batch_size) == (30.0, True, 5, 7)


def test_the_doctors_probes_take_its_short_timeout_and_one_attempt() -> None:
    """flagman doctor builds its probes here too, with its own patience."""
    inbox = build_imap_inbox(IMAP, timeout=15.0, create_folders=False, reconnect_attempts=1)
    assert (inbox.host, inbox.username, inbox.password) == ("imap.club.example", "bot", "imap-pw")
    assert (inbox.timeout, inbox.create_folders, inbox.reconnect_attempts) == (15.0, False, 1)
    mailer = build_smtp_mailer(IMAP, timeout=15.0)
    assert (mailer.host, mailer.username, mailer.password, mailer.timeout) == (
        "smtp.club.example",
        "bot",
        "smtp-pw",
        15.0,
    )
    assert build_smtp_mailer(IMAP).timeout == 30.0
