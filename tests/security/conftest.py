"""Fixtures for the hostile-input tests: the bot on SQLite with fake inbox, mailer and clock.

One Racecraft game `rc1` (five players, turn sheets sent) is created once per session in a
template database; each test gets a copy of that file, so a test starts from the same state in
a few milliseconds. Authentication accepts both the seat password and DMARC/aligned DKIM of
our own server, `mx.example.org` (the strictest configuration that can still be tested both
ways; `accept` is overridden where a test says so).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from bot.db import Database, migrate
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.mail_out.render import Renderer
from bot.models import Game, InboundMessage, OrderSubmission, Outbox, Quarantine, Seat
from bot.service import PollReport, Service
from bot.settings import (
    AuthSettings,
    BotSettings,
    DatabaseSettings,
    LimitSettings,
    Secrets,
    Settings,
)
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp, plain_mail

BOT = "flagman@example.org"
GM = "gm@example.org"
AUTHSERV = "mx.example.org"
SITE_SECRET = "security-site-secret-3f9a1c"
OLD_SECRET = "security-old-secret-77b2e0"
MAX_MAIL_BYTES = 1024 * 1024
RACERS = (
    PlayerSpec("kelly", "kelly@example.org", "Kelly", "Europe/London"),
    PlayerSpec("seb", "seb@example.net", "Seb", "Europe/Paris"),
    PlayerSpec("steve", "steve@example.com", "Steve", "America/New_York"),
    PlayerSpec("roger", "roger@example.org", "Roger", "Australia/Sydney"),
    PlayerSpec("anna", "anna@example.org", "Anna", "UTC"),
)
ADDRESS = {p.seat: p.address for p in RACERS}


def security_settings(
    tmp_path: Path, url: str, *, accept: tuple[str, ...] = ("password", "dmarc"), authserv_id: str = AUTHSERV
) -> Settings:
    return Settings(
        bot=BotSettings(address=BOT, timezone="Europe/London"),
        database=DatabaseSettings(url=url),
        auth=AuthSettings(accept=accept, authserv_id=authserv_id),
        limits=LimitSettings(max_mail_bytes=MAX_MAIL_BYTES),
        secrets=Secrets(site_secret=SITE_SECRET, previous_secrets=(OLD_SECRET,)),
        base_dir=tmp_path,
    )


@pytest.fixture(scope="session")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file holding the started game rc1, its turn sheets already sent."""
    root = tmp_path_factory.mktemp("security-template")
    path = root / "template.sqlite"
    url = f"sqlite:///{path}"
    migrate(url)
    settings = security_settings(root, url)
    db = Database(url)
    app = TestApp(
        settings=settings, db=db, clock=FakeClock(), renderer=Renderer(), inbox=FakeInbox(), mailer=FakeMailer()
    )
    with db.transaction() as session:
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
    db.dispose()
    return path


@dataclass
class Bot:
    """The bot under attack, and what the tests ask of it."""

    app: TestApp
    inbox: FakeInbox
    mailer: FakeMailer
    clock: FakeClock
    baseline: int  # the last outbox row of the template (the turn sheets of turn 1)

    @property
    def service(self) -> Service:
        return self.app.service

    def deliver(self, data: bytes | str) -> str:
        return self.inbox.deliver(data)

    def poll(self) -> PollReport:
        report = self.service.poll()
        self.service.send()
        return report

    def secret(self, seat: str) -> str:
        with self.app.db.read() as session:
            return session.scalars(select(Seat.secret).where(Seat.name == seat)).one()

    def gm_secret(self) -> str:
        with self.app.db.read() as session:
            return session.scalars(select(Game.gm_secret).where(Game.name == "rc1")).one()

    def signed(self, seat: str, secret: str = SITE_SECRET) -> str:
        return signed_address(BOT, secret, "rc1", seat)

    def rows(self) -> list[InboundMessage]:
        with self.app.db.read() as session:
            rows = list(session.scalars(select(InboundMessage).order_by(InboundMessage.id)))
            session.expunge_all()
            return rows

    def orders(self) -> int:
        with self.app.db.read() as session:
            return session.scalar(select(func.count()).select_from(OrderSubmission)) or 0

    def quarantined(self) -> list[Quarantine]:
        with self.app.db.read() as session:
            rows = list(session.scalars(select(Quarantine)))
            session.expunge_all()
            return rows

    def outbox(self, *, since_start: bool = True) -> list[Outbox]:
        """The outbox rows written during the test (or all of them, turn sheets included)."""
        with self.app.db.read() as session:
            rows = list(
                session.scalars(
                    select(Outbox)
                    .options(selectinload(Outbox.body))
                    .where(Outbox.id > (self.baseline if since_start else 0))
                    .order_by(Outbox.id)
                )
            )
            session.expunge_all()
            return rows

    def code_sent_to(self, address: str) -> str:
        """The confirmation code of the last mail with one (OBSERVE, JOIN, ADDRESS) to `address`."""
        codes = [re.search(r"\[confirm ([^\]]+)\]", row.subject) for row in self.outbox() if row.recipient == address]
        found = [c.group(1) for c in codes if c is not None]
        assert found, f"no confirmation code was mailed to {address}"
        return found[-1]

    def confirm(self, address: str, *, message_id: str = "") -> None:
        """`address` answers its last confirmation mail, as a reply does (the code in the subject)."""
        code = self.code_sent_to(address)
        self.deliver(
            plain_mail(
                address,
                BOT,
                f"Re: [confirm {code}] Confirm",
                "Yes please",
                message_id=message_id or f"<confirm-{code}@client.example>",
            )
        )

    def recipients(self) -> list[str]:
        """Everyone the bot has mailed since the test began (sent or still queued)."""
        return [row.recipient for row in self.outbox()]


@pytest.fixture(scope="session")
def renderer() -> Renderer:
    """One template environment for all (compiling the templates is most of a bot's start-up)."""
    return Renderer()


@pytest.fixture
def make_bot(template_db: Path, tmp_path: Path, renderer: Renderer) -> Iterator[Callable[..., Bot]]:
    made: list[TestApp] = []

    def make(*, accept: tuple[str, ...] = ("password", "dmarc"), authserv_id: str = AUTHSERV) -> Bot:
        path = tmp_path / f"bot-{len(made)}.sqlite"
        shutil.copyfile(template_db, path)
        url = f"sqlite:///{path}"
        settings = security_settings(tmp_path, url, accept=accept, authserv_id=authserv_id)
        settings = replace(settings, database=DatabaseSettings(url=url))
        clock = FakeClock()
        inbox = FakeInbox(max_size=MAX_MAIL_BYTES)
        mailer = FakeMailer()
        app = TestApp(settings=settings, db=Database(url), clock=clock, renderer=renderer, inbox=inbox, mailer=mailer)
        made.append(app)
        with app.db.read() as session:  # the turn sheets of the template are history
            baseline = session.scalar(select(func.max(Outbox.id))) or 0
        return Bot(app, inbox, mailer, clock, baseline)

    yield make
    for app in made:
        app.close()


@pytest.fixture
def bot(make_bot: Callable[..., Bot]) -> Bot:
    return make_bot()
