"""The bot on one of the two real pipelines, with a game under way and one open for sign-ups:
the Maildir inbox and outbox of the embedded default, or Dovecot (IMAP, LMTP) with the SMTP
relay. The trust-hole tests and the abuse-by-volume tests run on it (`rig`, a fixture
of tests/e2e/conftest.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.mail_in.inbox import deliver_to_maildir
from bot.models import Game, InboundMessage, OrderSubmission, Outbox, OutboxBody, OutboxStatus, Quarantine, Turn
from bot.settings import parse_settings
from bot.testing import FakeClock, plain_mail
from tests.helpers import migrated
from tests.servers import Dovecot, SmtpSink

_serial = itertools.count(1)
SECRET = "trust-holes-secret"
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DEADLINE = START + timedelta(hours=48)


@dataclass
class Rig:
    """The bot on one of the two real pipelines, with its players' addresses."""

    app: App
    clock: FakeClock
    bot: str
    domain: str
    gm: str
    players: dict[str, str]
    deliver_at: Callable[[bytes, datetime | None], None]
    _n: Iterator[int]

    def deliver(self, data: bytes, when: datetime | None = None) -> None:
        self.deliver_at(data, when)

    def mail(
        self,
        sender: str,
        to: str,
        text: str,
        subject: str = "orders",
        *,
        when: datetime | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.deliver(
            plain_mail(
                sender,
                to,
                subject,
                text,
                message_id=f"<t{next(self._n)}@client.example>",
                headers=dict(headers) if headers else None,
            ),
            when,
        )

    def signed(self, seat: str) -> str:
        return signed_address(self.bot, SECRET, "rc1", seat)

    def cycle(self) -> None:
        self.app.service.poll()
        self.app.service.send()

    def sent(self, since: int = 0) -> list[tuple[str, EmailMessage]]:
        """(recipient, mail) of every mail that left the bot, in order."""
        with self.app.db.read() as session:
            rows = session.execute(
                select(Outbox.id, Outbox.recipient, OutboxBody.data)
                .join(OutboxBody, OutboxBody.id == Outbox.id)
                .where(Outbox.status == OutboxStatus.SENT, Outbox.id > since)
                .order_by(Outbox.id)
            ).all()
        out = []
        for _id, recipient, data in rows:
            msg = message_from_bytes(data, policy=policy.default)
            assert isinstance(msg, EmailMessage)
            out.append((recipient, msg))
        return out

    def last_outbox_id(self) -> int:
        with self.app.db.read() as session:
            return session.scalar(select(Outbox.id).order_by(Outbox.id.desc()).limit(1)) or 0

    def rows(self) -> list[InboundMessage]:
        with self.app.db.read() as session:
            rows = list(session.scalars(select(InboundMessage).order_by(InboundMessage.id)))
            session.expunge_all()
            return rows

    def orders(self) -> list[str]:
        with self.app.db.read() as session:
            return list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.source == "mail")))

    def quarantined(self) -> int:
        with self.app.db.read() as session:
            return len(session.scalars(select(Quarantine.id)).all())

    def deadline(self) -> datetime | None:
        with self.app.db.read() as session:
            turn = session.scalar(select(Turn).join(Game).where(Game.name == "rc1", Turn.resolved_at.is_(None)))
            return turn.deadline.replace(tzinfo=UTC) if turn is not None and turn.deadline is not None else None


def text_of(msg: EmailMessage) -> str:
    parts = [f"{k}: {v}" for k, v in msg.items()]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            parts.append(str(part.get_content()))
    return "\n".join(parts)


def _game(app: App, domain: str) -> tuple[str, dict[str, str]]:
    players = {s: f"{s}@players-{domain}" for s in ("kelly", "seb", "steve", "roger", "anna")}
    gm = f"gm@players-{domain}"
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=[PlayerSpec(s, a, s.title()) for s, a in players.items()],
            gm_address=gm,
            deadline="48h",
            timezone="Europe/London",
            seed=5,
        )
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc9",
            players=(),
            gm_address=gm,
            deadline="48h",
            timezone="Europe/London",
            signup=True,
            seed=6,
        )
    app.service.send()
    return gm, players


@pytest.fixture(params=["maildir", "dovecot"])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    n = next(_serial)
    domain = f"trust{n}.test"
    env = {"FLAGMAN_SECRET": SECRET}
    auth = {"accept": ["password", "dmarc"], "authserv_id": "mx.trust.test"}
    if request.param == "maildir":
        bot = f"flagman@{domain}"
        settings = parse_settings(
            {
                "bot": {"address": bot, "timezone": "Europe/London"},
                "auth": auth,
                "database": {"url": f"sqlite:///{tmp_path}/bot.sqlite"},
                "inbox": {"kind": "maildir", "path": str(tmp_path / "inbox")},
                "outbox": {"kind": "maildir", "path": str(tmp_path / "outbox")},
            },
            env=env,
            base_dir=tmp_path,
            source="trust",
        )
        inbox_dir = tmp_path / "inbox"

        def deliver_at(data: bytes, when: datetime | None) -> None:
            deliver_to_maildir(inbox_dir, data, clock_ns=int(when.timestamp() * 1e9) if when is not None else None)
    else:
        dovecot: Dovecot = request.getfixturevalue("dovecot")
        sink: SmtpSink = request.getfixturevalue("smtp_sink")
        bot = dovecot.add_user(f"flagman@{domain}", "bot-password")
        settings = parse_settings(
            {
                "bot": {"address": bot, "timezone": "Europe/London"},
                "auth": auth,
                "database": {"url": f"sqlite:///{tmp_path}/bot.sqlite"},
                "inbox": {
                    "kind": "imap",
                    "host": dovecot.host,
                    "port": dovecot.imap_port,
                    "security": "none",
                    "username": bot,
                    "timeout": 10.0,
                },
                "outbox": {"kind": "smtp", "host": sink.host, "port": sink.port, "security": "none", "timeout": 10.0},
            },
            env={**env, "FLAGMAN_IMAP_PASSWORD": "bot-password"},
            base_dir=tmp_path,
            source="trust",
        )
        sink.reset()

        def deliver_at(data: bytes, when: datetime | None) -> None:
            if when is None:
                dovecot.deliver(bot, data)
                return
            client = dovecot.imap_client(bot, folder=None)
            try:
                client.append("INBOX", data, flags=(), msg_time=when)
            finally:
                client.logout()

    migrated(settings.database_url)
    clock = FakeClock(START)
    app = build_app(settings, clock=clock)
    try:
        gm, players = _game(app, domain)
        yield Rig(app, clock, bot, domain, gm, players, deliver_at, itertools.count(1))
    finally:
        app.close()


__all__ = ["DEADLINE", "SECRET", "START", "Rig", "rig", "text_of"]
