"""The outbox's drain over a real SMTP relay: each mail's outcome is committed before the relay
may accept the next mail (bot.mail_out.drain: "a crash can resend at most the one mail that
was in flight")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.clock import FixedClock
from bot.db import Database
from bot.mail_out.drain import drain
from bot.mail_out.mailer import OutgoingMail, SendResult
from bot.mail_out.smtp import SmtpMailer
from bot.models import Outbox, OutboxBody, OutboxStatus
from bot.settings import DatabaseSettings
from tests.bot.conftest import make_settings
from tests.servers import SmtpSink

T0 = datetime(2026, 12, 7, 5, 0, tzinfo=UTC)
MAILS = 7


def _row(n: int) -> Outbox:
    mid = f"<d{n}@flagman.test>"
    data = (
        f"From: Flagman <flagman@flagman.test>\r\nTo: p{n}@players.test\r\nSubject: Mail {n}\r\n"
        f"Message-ID: {mid}\r\n\r\nYour car moved {n} spaces.\r\n"
    ).encode()
    return Outbox(
        message_id=mid,
        kind="notice",
        recipient=f"p{n}@players.test",
        envelope_from="bounces@flagman.test",
        subject=f"Mail {n}",
        body=OutboxBody(data=data),
        status=OutboxStatus.PENDING,
        attempts=0,
        next_attempt_at=T0,
        last_error="",
        created_at=T0,
    )


class _Watching:
    """The relay's mailer, noting at each `settle` (the moment before the relay may accept a
    mail) how many outbox rows the database says are sent, read on a connection of its own."""

    settles = True

    def __init__(self, mailer: SmtpMailer, db: Database) -> None:
        self.mailer, self.db = mailer, db
        self.sent_before_each: list[int] = []

    def send(
        self,
        mails: Sequence[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        assert settle is not None

        def watched() -> None:
            settle()
            with self.db.engine.connect() as conn:
                self.sent_before_each.append(
                    conn.execute(
                        select(func.count()).select_from(Outbox).where(Outbox.status == OutboxStatus.SENT)
                    ).scalar_one()
                )

        return self.mailer.send(mails, on_result=on_result, settle=watched)

    def close(self) -> None:
        self.mailer.close()


@pytest.mark.both_databases
def test_each_outcome_is_committed_by_the_sender_before_the_next_mail_can_be_accepted(
    tmp_path: Path, db_url: str, smtp_sink: SmtpSink
) -> None:
    smtp_sink.reset()
    settings = replace(make_settings(tmp_path), database=DatabaseSettings(url=db_url))
    db = Database(db_url)
    try:
        with db.transaction() as session:
            session.add_all([_row(n) for n in range(MAILS)])
        mailer = _Watching(SmtpMailer(smtp_sink.host, smtp_sink.port, security="none", timeout=10), db)
        report = drain(db, mailer, FixedClock(T0), settings)
        assert report.sent == MAILS and report.retrying == report.failed == 0
        # Before mail k's final ".", the k mails before it are committed as sent: no more, no fewer.
        assert mailer.sent_before_each == list(range(MAILS))
        with db.read() as session:
            rows = session.execute(select(Outbox.status, Outbox.attempts, Outbox.sent_at)).all()
        assert [(status, attempts) for status, attempts, _ in rows] == [(OutboxStatus.SENT, 1)] * MAILS
        assert all(sent_at is not None and sent_at.replace(tzinfo=UTC) == T0 for _, _, sent_at in rows)
        assert len(smtp_sink.messages) == MAILS
    finally:
        db.dispose()
