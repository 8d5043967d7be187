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
from typing import Any, NamedTuple

from sqlalchemy import Column, Dialect, PoolProxiedConnection, bindparam, select, update

from bot.clock import Clock, as_utc
from bot.db import Database, deallocate, prepare, read_answer, send_unanswered, with_checkpoints, without_checkpoints
from bot.faults import NO_FAULTS, CrashPoint, Faults
from bot.mail_out.handoff import Handoff, handoff_for
from bot.mail_out.mailer import Mailer, OutgoingMail, SendResult, SendStatus
from bot.models import Outbox, OutboxBody, OutboxStatus
from bot.settings import Settings

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
    (a time as SQLite stores it), without SQLAlchemy's work per execution. On PostgreSQL also
    as libpq takes it (`numbered`: $1, $2 ... in the order of `names`; `as_text`), for an
    outcome sent without waiting for its answer (`_Outcomes.start`), prepared under `name` on
    the drain's connection at its first use (parsed and planned once a drain, not every mail)."""

    def __init__(self, dialect: Dialect, columns: tuple[str, ...], outcome: str) -> None:
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
        self.numbered = b""
        if dialect.name == "postgresql" and self.order is None:  # psycopg's %(name)s
            self.numbered = (self.sql % {name: f"${i}" for i, name in enumerate(self.names, 1)}).encode()
        self.name = f"flagman_outbox_{outcome}".encode()  # prepared under it (`bot.db.send_unanswered`)

    def parameters(self, values: dict[str, object]) -> tuple[object, ...] | dict[str, object]:
        processed = {
            name: self.processors[name](values[name]) if name in self.processors else values[name]
            for name in self.names
        }
        return tuple(processed[name] for name in self.order) if self.order is not None else processed

    def as_text(self, values: dict[str, object]) -> list[bytes | None]:
        """The values in the order of `numbered`, each in PostgreSQL's text form (a time in ISO
        8601 with its offset, which a timestamptz column reads as the same instant)."""
        return [_pg_text(values[name]) for name in self.names]


def _pg_text(value: object) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:  # as psycopg sends a naive time: the column reads it as UTC (the session's zone)
            raise ValueError("a naive time for an outbox column")
        return value.isoformat().encode()
    if isinstance(value, str) and "\x00" in value:  # libpq would end the value there
        raise ValueError("a NUL in an outbox text value")
    if isinstance(value, bool | int | str):
        return str(value).encode()
    raise TypeError(f"an outbox value of type {type(value).__name__}")


def _stored(detail: str) -> str:
    """A relay's words as a text column keeps them on every database: a NUL (which PostgreSQL's
    text refuses) as U+FFFD."""
    return detail.replace("\x00", "\ufffd")


def _column(name: str) -> Column[Any]:
    return Outbox.__mapper__.columns["id" if name == "outbox_id" else name]


class _Outcomes:
    """Each sent mail's outcome committed in the sending thread, one statement and one commit a
    mail, on a driver connection the drain keeps (SQLite: autocommit, the statement its own
    transaction; PostgreSQL: autocommit without waiting for the server's fsync), and counted.

    `write` commits one outcome and returns when it is committed. `start` and `finish` split
    it: `start` as the relay answers for a mail, `finish` before the next mail's final "."
    (`drain`): on PostgreSQL `start` sends the statement and `finish` waits for its answer, so
    the server's round trip runs while the next mail's MAIL, RCPT, DATA and content go to the
    relay; elsewhere `finish` does it all. One outcome at most is started and not finished: a
    `start` finishes the one before first, so outcomes are committed in order."""

    def __init__(self, db: Database, clock: Clock, settings: Settings, faults: Faults) -> None:
        self.db = db
        self.clock = clock
        self.settings = settings
        self.faults = faults
        self.counts = {"sent": 0, "retrying": 0, "failed": 0}
        dialect = db.engine.dialect
        self.postgres = dialect.name == "postgresql"
        self.statements = {outcome: _Statement(dialect, columns, outcome) for outcome, columns in _SET_WHEN.items()}
        self._raw: PoolProxiedConnection | None = None
        self._started: tuple[str, dict[str, object]] | None = None  # (outcome, its columns): not yet finished
        self._sent = False  # PostgreSQL: the started outcome's statement is on its way, its answer not yet read
        self._prepared: set[bytes] = set()  # PostgreSQL: the statements prepared on `_raw` (deallocated at `close`)

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
                else:
                    # A mail's outcome never copies the log of the turns written meanwhile into
                    # the database file while the next mail waits (the deadline checkpoints
                    # once its turns are written: `Database.checkpoint`). Undone at `close`.
                    without_checkpoints(raw)
            except BaseException:
                raw.invalidate()
                raise
            self._raw = raw
        return raw

    def write(self, row: _Sending, result: SendResult) -> None:
        """Commit one mail's outcome."""
        self.start(row, result)
        self.finish()

    @property
    def unfinished(self) -> int:
        """Outcomes started and not yet committed: 0 or 1."""
        return 0 if self._started is None else 1

    def start(self, row: _Sending, result: SendResult) -> None:
        """One mail's outcome on its way to be committed (see the class's docstring); the one
        started before is finished first."""
        self.finish()
        outcome, values = self._values(row, result)
        self._started = (outcome, values)
        if not self.postgres:
            return
        statement = self.statements[outcome]
        try:
            raw = self._connection()
            if statement.name not in self._prepared:
                prepare(raw, statement.name, statement.numbered)
                self._prepared.add(statement.name)
            send_unanswered(raw, statement.numbered, statement.as_text(values), statement.name)
        except Exception as exc:
            self._started = None
            self._drop()
            raise OutcomeNotRecorded(f"the outcome of a sent mail was not recorded: {exc!r}") from exc
        self._sent = True

    def finish(self) -> None:
        """The outcome started committed: PostgreSQL's answer read, or the statement run here."""
        if self._started is None:
            return
        outcome, values = self._started
        self._started = None
        try:
            if self._sent:
                self._sent = False
                read_answer(self._connection())
            else:
                statement = self.statements[outcome]
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

    def _values(self, row: _Sending, result: SendResult) -> tuple[str, dict[str, object]]:
        """What becomes of the mail of `row` (logged), and the outbox columns that says."""
        attempts = row.attempts + 1
        values: dict[str, object] = {"outbox_id": row.id, "attempts": attempts}
        if result.status is SendStatus.SENT:
            outcome = "sent"
            values.update(status=OutboxStatus.SENT.value, sent_at=self.clock.now(), last_error="")
            log.info("sent %s to %s (%s)", row.message_id, row.recipient, row.kind)
        elif result.status is SendStatus.TEMPORARY and attempts < self.settings.outbox.max_attempts:
            outcome = "retrying"
            retry_at = as_utc(self.clock.now()) + backoff(attempts)
            values.update(last_error=_stored(result.detail), next_attempt_at=retry_at)
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
            values.update(status=OutboxStatus.FAILED.value, last_error=_stored(result.detail))
            log.error("send of %s to %s failed for good: %s", row.message_id, row.recipient, result.detail)
        return outcome, values

    def _drop(self) -> None:
        self._prepared.clear()  # gone with the connection
        if self._raw is not None:
            self._raw.invalidate()  # in an unknown state: never back to the pool as it is
            self._raw = None

    def close(self) -> None:
        """The connection back to the pool as the pool gave it (PostgreSQL: the statements
        prepared deallocated, the server's own synchronous_commit again, autocommit off;
        SQLite: its commits checkpoint again)."""
        if self._sent:  # a statement whose answer was never read (the send ended in an error): not reused
            self._sent, self._started = False, None
            self._drop()
        raw, self._raw = self._raw, None
        if raw is None:
            return
        try:
            if self.postgres:
                while self._prepared:  # psycopg knows nothing of them: not left on a pooled connection
                    deallocate(raw, self._prepared.pop())
                cursor = raw.cursor()
                cursor.execute("RESET synchronous_commit")
                cursor.close()
                driver = raw.driver_connection
                assert driver is not None
                driver.autocommit = False
            else:
                with_checkpoints(raw)
        except Exception:  # noqa: BLE001 - a broken connection: not returned to the pool as it is
            self._prepared.clear()
            raw.invalidate()
        finally:
            raw.close()

    def report(self) -> DrainReport:
        return DrainReport(self.counts["sent"], self.counts["retrying"], self.counts["failed"])


class _Sending(NamedTuple):
    """An outbox row as `drain` sends it."""

    id: int
    message_id: str
    envelope_from: str
    recipient: str
    data: bytes
    attempts: int
    kind: str


def _due(db: Database, now: datetime, batch_size: int, handed: Handoff) -> list[_Sending]:
    """The next pending rows due by `now`, oldest first, at most `batch_size`, each with its
    body: the one this process's writer handed over for its Message-ID (`bot.mail_out.handoff`,
    the bytes that row's transaction committed), else read from `OutboxBody` (in the same
    snapshot as the rows)."""
    with db.read() as session:
        rows = session.execute(
            select(
                Outbox.id,
                Outbox.message_id,
                Outbox.envelope_from,
                Outbox.recipient,
                Outbox.attempts,
                Outbox.kind,
            )
            .where(Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= now)
            .order_by(Outbox.id)
            .limit(batch_size)
        ).all()
        bodies = {row.id: data for row in rows if (data := handed.take(row.message_id)) is not None}
        missing = [row.id for row in rows if row.id not in bodies]
        if missing:
            found = session.execute(select(OutboxBody.id, OutboxBody.data).where(OutboxBody.id.in_(missing)))
            bodies.update((body_id, data) for body_id, data in found)
    return [
        _Sending(row.id, row.message_id, row.envelope_from, row.recipient, bodies[row.id], row.attempts, row.kind)
        for row in rows
    ]


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
    database round trip between every two mails (on PostgreSQL the statement is sent as the
    relay answers for mail N, and its answer read there: `_Outcomes.start`, `finish`; the
    server's round trip runs while mail N+1 goes to the relay). Otherwise each outcome is committed as the
    relay answers. Either way in the sending thread, one statement a mail. Every outcome given
    is committed before the next batch is read, and no row is handed to the mailer twice in
    one drain.
    """
    outcomes = _Outcomes(db, clock, settings, faults)
    bodies = handoff_for(db.engine)  # the bodies this process's writers committed, not yet sent
    handed: set[int] = set()  # the rows handed to the mailer: never twice in one drain
    by_message_id: dict[str, _Sending] = {}  # handed, no outcome yet

    def settle() -> None:
        """Commit the outcome the relay has given and that is not committed yet (one at most:
        each is started as it comes, the one before finished first)."""
        outcomes.finish()

    def record(result: SendResult) -> None:
        """The relay has answered for one mail."""
        faults.reached(CrashPoint.AFTER_SEND)
        row = by_message_id.pop(result.message_id)
        if mailer.settles:
            outcomes.start(row, result)  # committed by the next `settle`, before the next mail's final "."
        else:
            outcomes.write(row, result)

    def batches() -> Iterator[OutgoingMail]:
        """The mails due, a batch at a time, each batch read when the last mail of the one
        before has its outcome (asked for by the mailer between two mails)."""
        while limit is None or sum(outcomes.counts.values()) + outcomes.unfinished < limit:
            settle()  # every outcome of the batch before committed before the next is read
            rows = [r for r in _due(db, clock.now(), settings.outbox.batch_size, bodies) if r.id not in handed]
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
