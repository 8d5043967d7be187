"""Retention: the database does not only grow ([retention], config.example.toml).

What only operations need is kept for a while, then pruned; what a game is made of is kept for
ever. Pruned, each after its own number of days (0: never):

- the body of every mail sent or given up (`outbox_body`, most of the database: a turn's results
  mail with its picture is 10 to 30 kB). The outbox row stays (its Message-ID is what a late
  reply answers, its recipient and subject what the digest and `flagman doctor` read): only
  its body row is deleted. Mail still to be sent is never touched.
- the text kept of each mail read (`inbound_message.text`; the row stays, so that the same
  mail coming again is still known as a duplicate), and raw mail kept in quarantine once a GM
  digest has reported it;
- GM audit lines of commands that named no game (a game's own lines are its history: replay
  checks a game's changes against them);
- mail in the inbox's Processed folder (IMAP or Maildir), in `prune_processed`, under the
  mailbox lock the poll holds for each pass (`bot.host.instance.holding_mailbox`).

Never pruned: games, seats, players, turns, orders, dice, states, commitments, a game's GM
audit; a finished game stays whole (its archive and `flagman replay` need all of it).

Each prune works in chunks of `CHUNK` rows, a transaction each, so the service's jobs never
wait long on it. SQLite reuses the pages freed (the file stops growing rather than
shrinking; `VACUUM` with the service stopped gives them back to the disk); on PostgreSQL a
plain VACUUM of the tables pruned makes the space reusable at once (autovacuum would too).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy import ColumnElement

    from bot.db import Database
    from bot.settings import Settings

log = logging.getLogger("flagman.retention")

CHUNK = 500  # rows per transaction


@dataclass(frozen=True, slots=True)
class Pruned:
    """What one prune did."""

    mail_bodies: int = 0  # sent (or given up) mails whose body was emptied
    mail_bytes: int = 0  # the bytes of those bodies
    inbound_texts: int = 0  # mails read whose kept text was emptied
    quarantined: int = 0  # quarantined raw mails deleted (reported already)
    audit_lines: int = 0  # GM audit lines without a game deleted
    processed_mails: int = 0  # mails deleted from the Processed folder

    @property
    def anything(self) -> bool:
        return any((self.mail_bodies, self.inbound_texts, self.quarantined, self.audit_lines, self.processed_mails))

    def summary(self) -> str:
        from bot.ops.findings import counted

        return (
            f"pruned: {counted(self.mail_bodies, 'sent mail body', 'sent mail bodies')} ({self.mail_bytes} bytes), "
            f"{counted(self.inbound_texts, 'text of mail read', 'texts of mail read')}, "
            f"{counted(self.quarantined, 'quarantined mail', 'quarantined mails')}, "
            f"{counted(self.audit_lines, 'audit line', 'audit lines')}, "
            f"{counted(self.processed_mails, 'mail', 'mails')} of the Processed folder"
        )


def _cutoff(now: datetime, days: int) -> datetime | None:
    return now - timedelta(days=days) if days > 0 else None


def _predicates(before: Before) -> dict[str, tuple[ColumnElement[bool], ...]]:
    """What the prune takes of each kind (before its own cutoff): one definition, for the prune
    and for `overdue` (`flagman doctor`). A sent mail's conditions join its outbox row and its
    body (`OutboxBody`)."""

    from bot.models import GmAudit, InboundMessage, Outbox, OutboxBody, OutboxStatus, Quarantine

    found: dict[str, tuple[ColumnElement[bool], ...]] = {}
    if before.sent is not None:
        done = (OutboxStatus.SENT, OutboxStatus.FAILED)
        found["sent"] = (OutboxBody.id == Outbox.id, Outbox.status.in_(done), Outbox.created_at < before.sent)
    if before.read is not None:
        found["read"] = (InboundMessage.received_at < before.read, InboundMessage.text != "")
        found["quarantine"] = (Quarantine.created_at < before.read, Quarantine.reported.is_(True))
    if before.audit is not None:
        found["audit"] = (GmAudit.created_at < before.audit, GmAudit.game_id.is_(None))
    return found


@dataclass(frozen=True, slots=True)
class Before:
    """The cutoff of each kind ([retention] days before a moment; None: kept for ever)."""

    sent: datetime | None
    read: datetime | None
    audit: datetime | None
    processed: datetime | None

    @classmethod
    def of(cls, settings: Settings, moment: datetime) -> Before:
        policy = settings.retention
        return cls(
            _cutoff(moment, policy.sent_mail_days),
            _cutoff(moment, policy.inbound_days),
            _cutoff(moment, policy.audit_days),
            _cutoff(moment, policy.processed_mail_days),
        )


def prune_database(db: Database, settings: Settings, now: datetime) -> Pruned:
    """Prune the database as [retention] says (see the module's docstring)."""
    from sqlalchemy import delete, func, select, update

    from bot.models import GmAudit, InboundMessage, OutboxBody, Quarantine

    where = _predicates(Before.of(settings, now))
    bodies = body_bytes = texts = quarantined = audit = 0
    if "sent" in where:
        while True:
            with db.transaction() as session:
                rows = session.execute(
                    select(OutboxBody.id, func.length(OutboxBody.data)).where(*where["sent"]).limit(CHUNK)
                ).all()
                if not rows:
                    break
                session.execute(delete(OutboxBody).where(OutboxBody.id.in_([r[0] for r in rows])))
            bodies += len(rows)
            body_bytes += sum(int(r[1] or 0) for r in rows)
    if "read" in where:
        while True:
            with db.transaction() as session:
                ids = session.scalars(select(InboundMessage.id).where(*where["read"]).limit(CHUNK)).all()
                if not ids:
                    break
                session.execute(update(InboundMessage).where(InboundMessage.id.in_(ids)).values(text=""))
            texts += len(ids)
        with db.transaction() as session:
            quarantined = _count(session.execute(delete(Quarantine).where(*where["quarantine"])))
    if "audit" in where:
        with db.transaction() as session:
            audit = _count(session.execute(delete(GmAudit).where(*where["audit"])))
    pruned = Pruned(bodies, body_bytes, texts, quarantined, audit)
    if pruned.anything and not db.url.startswith("sqlite"):
        _vacuum(db, ("outbox_body", "inbound_message", "quarantine", "gm_audit"))
    return pruned


@dataclass(frozen=True, slots=True)
class Overdue:
    """What is still in the database that the policy would have pruned by a moment."""

    mail_bodies: int = 0
    inbound_texts: int = 0
    quarantined: int = 0
    audit_lines: int = 0
    oldest: datetime | None = None  # the oldest of those

    @property
    def anything(self) -> bool:
        return any((self.mail_bodies, self.inbound_texts, self.quarantined, self.audit_lines))


def overdue(db: Database, settings: Settings, moment: datetime) -> Overdue:
    """Count what a prune at `moment` would take (nothing is changed): `flagman doctor` asks with
    a moment a little before now, so that whatever is found has outlived a daily prune."""
    from sqlalchemy import func, select

    from bot.models import GmAudit, InboundMessage, Outbox, Quarantine

    where = _predicates(Before.of(settings, moment))
    columns = {
        "sent": Outbox.created_at,
        "read": InboundMessage.received_at,
        "quarantine": Quarantine.created_at,
        "audit": GmAudit.created_at,
    }
    counts: dict[str, int] = {}
    oldest: list[datetime] = []
    with db.read() as session:
        for kind, conditions in where.items():
            column = columns[kind]
            count, first = session.execute(select(func.count(), func.min(column)).where(*conditions)).one()
            counts[kind] = int(count or 0)
            if count and first is not None:
                oldest.append(first)
    return Overdue(
        counts.get("sent", 0),
        counts.get("read", 0),
        counts.get("quarantine", 0),
        counts.get("audit", 0),
        min(oldest) if oldest else None,
    )


def _count(result: object) -> int:
    """The rows a DELETE removed (SQLAlchemy's CursorResult.rowcount)."""
    return int(getattr(result, "rowcount", 0) or 0)


def _vacuum(db: Database, tables: tuple[str, ...]) -> None:
    """PostgreSQL: a plain VACUUM of the tables pruned (no lock that stops the service's work),
    so the space freed is reused at once."""
    with db.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        for table in tables:
            conn.exec_driver_sql(f"VACUUM {table}")


def prune_processed(
    db: Database, settings: Settings, now: datetime, *, on_wait: Callable[[], object] | None = None
) -> int:
    """Delete the mail of the inbox's Processed folder older than [retention]
    processed_mail_days (on a connection of its own); how many. It holds the mailbox lock
    (`bot.host.instance.holding_mailbox`, as a poll pass does): it waits for a poll pass in hand
    to end (`on_wait()` is called then), and a poll waits for it."""
    from bot.app import prune_done_mail
    from bot.host.instance import holding_mailbox, mailbox_name
    from bot.mail_in.inbox import Folder

    before = _cutoff(now, settings.retention.processed_mail_days)
    if before is None:
        return 0
    with holding_mailbox(db.url, mailbox_name(settings), on_wait=on_wait):
        return prune_done_mail(settings, Folder.PROCESSED, before)


def prune(db: Database, settings: Settings, now: datetime, *, on_wait: Callable[[], object] | None = None) -> Pruned:
    """The whole policy: the database, then the Processed folder (`prune_processed`, `on_wait`
    as there); logged in one line."""
    from dataclasses import replace

    pruned = replace(
        prune_database(db, settings, now), processed_mails=prune_processed(db, settings, now, on_wait=on_wait)
    )
    if pruned.anything:
        log.info("%s", pruned.summary())
    return pruned


__all__ = ["CHUNK", "Before", "Overdue", "Pruned", "overdue", "prune", "prune_database", "prune_processed"]
