"""The outbox drained: pending rows read in batches and handed to the Mailer in one call (one
connection to the relay a drain), each mail's outcome committed before the relay may accept
the next mail. A crash can resend at most the one mail that was in flight, with the same
Message-ID.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeAlias

from sqlalchemy import Column, Dialect, PoolProxiedConnection, bindparam, select, update

from bot.clock import Clock, as_utc
from bot.db import Database
from bot.faults import NO_FAULTS, CrashPoint, Faults
from bot.mail_out.mailer import Mailer, OutgoingMail, SendResult, SendStatus
from bot.models import Outbox, OutboxBody, OutboxStatus
from bot.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy import Row

    _Sending: TypeAlias = Row[int, str, str, str, bytes, int, str]
    """An outbox row as `drain` reads it: id, message_id, envelope_from, recipient, data, attempts, kind."""

log = logging.getLogger("flagman.mail")


def backoff(attempts: int) -> timedelta:
    """1, 2, 4 ... minutes, capped at an hour."""
    return timedelta(minutes=min(60, 2 ** max(0, attempts - 1)))


@dataclass(frozen=True, slots=True)
class DrainReport:
    sent: int = 0
    retrying: int = 0
    failed: int = 0


class OutcomeNotRecorded(RuntimeError):  # noqa: N818 - named for what happened, as Refused
    """A sent mail's outcome could not be committed; the send stops there (drain)."""


# The columns an outcome sets, by what became of the mail (`_Outcomes.write`).
_SET_WHEN: dict[str, tuple[str, ...]] = {
    "sent": ("status", "attempts", "sent_at", "last_error"),
    "retrying": ("attempts", "last_error", "next_attempt_at"),
    "failed": ("status", "attempts", "last_error"),
}


class _Statement:
    """One UPDATE of an outbox row by its id, compiled once for the database's dialect, run on
    the driver's own cursor: each value passed through its column's type as SQLAlchemy would
    (a time as SQLite stores it), without SQLAlchemy's work per execution."""

    def __init__(self, dialect: Dialect, columns: tuple[str, ...]) -> None:
        statement = update(Outbox).where(Outbox.id == bindparam("outbox_id"))
        compiled = statement.compile(dialect=dialect, column_keys=list(columns))
        self.sql = compiled.string
        self.order: tuple[str, ...] | None = tuple(compiled.positiontup or ()) if compiled.positional else None
        self.names = (*columns, "outbox_id")
        self.processors = {
            name: processor
            for name in self.names
            if (processor := _column(name).type.dialect_impl(dialect).bind_processor(dialect)) is not None
        }

    def parameters(self, values: dict[str, object]) -> tuple[object, ...] | dict[str, object]:
        processed = {
            name: self.processors[name](values[name]) if name in self.processors else values[name]
            for name in self.names
        }
        return tuple(processed[name] for name in self.order) if self.order is not None else processed


def _column(name: str) -> Column[Any]:
    return Outbox.__mapper__.columns["id" if name == "outbox_id" else name]


class _Outcomes:
    """Each sent mail's outcome committed in the sending thread, one statement and one commit a
    mail, on a driver connection the drain keeps (SQLite: autocommit, the statement its own
    transaction; PostgreSQL: autocommit without waiting for the server's fsync), and counted."""

    def __init__(self, db: Database, clock: Clock, settings: Settings, faults: Faults) -> None:
        self.db = db
        self.clock = clock
        self.settings = settings
        self.faults = faults
        self.counts = {"sent": 0, "retrying": 0, "failed": 0}
        dialect = db.engine.dialect
        self.postgres = dialect.name == "postgresql"
        self.statements = {outcome: _Statement(dialect, columns) for outcome, columns in _SET_WHEN.items()}
        self._raw: PoolProxiedConnection | None = None

    def _connection(self) -> PoolProxiedConnection:
        raw = self._raw
        if raw is None:
            raw = self.db.engine.raw_connection()
            try:
                if self.postgres:
                    # Each outcome a transaction of its own in one round trip (autocommit), and
                    # none waits for the server's fsync: a crash of the bot cannot lose such a
                    # commit (the server has it); only a crash of the database server could,
                    # and then the mail is resent with its Message-ID. Undone before the
                    # connection goes back to the pool (`close`).
                    driver = raw.driver_connection
                    assert driver is not None
                    raw.rollback()
                    driver.autocommit = True
                    cursor = raw.cursor()
                    cursor.execute("SET synchronous_commit = off")
                    cursor.close()
            except BaseException:
                raw.invalidate()
                raise
            self._raw = raw
        return raw

    def write(self, row: _Sending, result: SendResult) -> None:
        """Commit one mail's outcome."""
        attempts = row.attempts + 1
        values: dict[str, object] = {"outbox_id": row.id, "attempts": attempts}
        if result.status is SendStatus.SENT:
            outcome = "sent"
            values.update(status=OutboxStatus.SENT.value, sent_at=self.clock.now(), last_error="")
            log.info("sent %s to %s (%s)", row.message_id, row.recipient, row.kind)
        elif result.status is SendStatus.TEMPORARY and attempts < self.settings.outbox.max_attempts:
            outcome = "retrying"
            retry_at = as_utc(self.clock.now()) + backoff(attempts)
            values.update(last_error=result.detail, next_attempt_at=retry_at)
            log.warning(
                "send of %s to %s failed for now (%s); retry %d at %s",
                row.message_id,
                row.recipient,
                result.detail,
                attempts,
                retry_at,
            )
        else:
            outcome = "failed"
            values.update(status=OutboxStatus.FAILED.value, last_error=result.detail)
            log.error("send of %s to %s failed for good: %s", row.message_id, row.recipient, result.detail)
        statement = self.statements[outcome]
        try:
            raw = self._connection()
            with self.db.writing():
                cursor = raw.cursor()
                try:
                    cursor.execute(statement.sql, statement.parameters(values))
                finally:
                    cursor.close()
        except Exception as exc:
            self._drop()
            raise OutcomeNotRecorded(f"the outcome of a sent mail was not recorded: {exc!r}") from exc
        self.counts[outcome] += 1
        self.faults.reached(CrashPoint.AFTER_RECORD)

    def _drop(self) -> None:
        if self._raw is not None:
            self._raw.invalidate()  # in an unknown state: never back to the pool as it is
            self._raw = None

    def close(self) -> None:
        """The connection back to the pool as the pool gave it (PostgreSQL: the server's own
        synchronous_commit again, autocommit off)."""
        raw, self._raw = self._raw, None
        if raw is None:
            return
        try:
            if self.postgres:
                cursor = raw.cursor()
                cursor.execute("RESET synchronous_commit")
                cursor.close()
                driver = raw.driver_connection
                assert driver is not None
                driver.autocommit = False
        except Exception:  # noqa: BLE001 - a broken connection: not returned to the pool as it is
            raw.invalidate()
        finally:
            raw.close()

    def report(self) -> DrainReport:
        return DrainReport(self.counts["sent"], self.counts["retrying"], self.counts["failed"])


def _due(db: Database, now: datetime, batch_size: int) -> list[_Sending]:
    """The next pending rows due by `now`, oldest first, at most `batch_size`, each with its
    body (`OutboxBody`)."""
    with db.read() as session:
        return list(
            session.execute(
                select(
                    Outbox.id,
                    Outbox.message_id,
                    Outbox.envelope_from,
                    Outbox.recipient,
                    OutboxBody.data,
                    Outbox.attempts,
                    Outbox.kind,
                )
                .join(OutboxBody, OutboxBody.id == Outbox.id)
                .where(Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= now)
                .order_by(Outbox.id)
                .limit(batch_size)
            ).all()
        )


def drain(
    db: Database,
    mailer: Mailer,
    clock: Clock,
    settings: Settings,
    *,
    limit: int | None = None,
    faults: Faults = NO_FAULTS,
) -> DrainReport:
    """Send every pending mail that is due, in batches handed to one `send` (one connection to
    the relay for the whole drain); record each outcome as it comes.

    Each result is committed before the relay may accept the next mail, so a crash can resend
    at most the one mail in flight (with its Message-ID). With a mailer that `settles`
    (`SmtpMailer`), mail N's outcome is committed when mail N+1's content has gone to the relay,
    just before its final "." (the moment the relay could accept it): the commit runs while the
    relay reads that content, with the guarantee of a commit before the next send and without a
    database round trip between every two mails. Otherwise each outcome is committed as the
    relay answers. Either way in the sending thread, one statement a mail. Every outcome given
    is committed before the next batch is read, and no row is handed to the mailer twice in
    one drain.
    """
    outcomes = _Outcomes(db, clock, settings, faults)
    handed: set[int] = set()  # the rows handed to the mailer: never twice in one drain
    by_message_id: dict[str, _Sending] = {}  # handed, no outcome yet
    unrecorded: list[tuple[_Sending, SendResult]] = []  # answered, not yet committed (a mailer that settles)

    def settle() -> None:
        """Commit every outcome the relay has given and that is not committed yet, in order."""
        while unrecorded:
            outcomes.write(*unrecorded[0])
            del unrecorded[0]

    def record(result: SendResult) -> None:
        """The relay has answered for one mail."""
        faults.reached(CrashPoint.AFTER_SEND)
        row = by_message_id.pop(result.message_id)
        if mailer.settles:
            unrecorded.append((row, result))
        else:
            outcomes.write(row, result)

    def batches() -> Iterator[OutgoingMail]:
        """The mails due, a batch at a time, each batch read when the last mail of the one
        before has its outcome (asked for by the mailer between two mails)."""
        while limit is None or sum(outcomes.counts.values()) + len(unrecorded) < limit:
            settle()  # every outcome of the batch before committed before the next is read
            rows = [r for r in _due(db, clock.now(), settings.outbox.batch_size) if r.id not in handed]
            if not rows:
                return
            handed.update(r.id for r in rows)
            by_message_id.update((r.message_id, r) for r in rows)
            faults.reached(CrashPoint.BEFORE_SEND)
            for r in rows:
                yield OutgoingMail(r.message_id, r.envelope_from, (r.recipient,), r.data)

    try:
        try:
            mailer.send(batches(), on_result=record, settle=settle if mailer.settles else None)
        finally:
            settle()  # every outcome given committed, however the send ended
    finally:
        outcomes.close()
    return outcomes.report()
