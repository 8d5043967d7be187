"""The outbox drained: pending rows handed to the Mailer in batches over one connection, each
mail's outcome committed as soon as the relay has answered for it. A crash can resend at most
the one mail that was in flight, with the same Message-ID.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias

from sqlalchemy import Connection, bindparam, select, update
from sqlalchemy.exc import DBAPIError

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


class _Recorder:
    """Commits the outcomes of sent mail in a thread of its own, in order, one commit each.

    `put` hands over an outcome and returns at once; `settle` waits until every outcome
    handed over is committed (or raises `OutcomeNotRecorded` if one could not be).
    """

    def __init__(self, write: Callable[[tuple[_Sending, SendResult]], None]) -> None:
        self._write = write
        self._items: deque[tuple[_Sending, SendResult]] = deque()
        self._pending = 0  # handed over and not yet committed
        self._error: BaseException | None = None
        self._closing = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="flagman-outbox-recorder", daemon=True)
        self._thread.start()

    def _raise(self) -> None:
        if self._error is not None:
            raise OutcomeNotRecorded(f"the outcome of a sent mail was not recorded: {self._error!r}") from self._error

    def put(self, item: tuple[_Sending, SendResult]) -> None:
        with self._cond:
            self._raise()
            self._items.append(item)
            self._pending += 1
            self._cond.notify_all()

    def settle(self) -> None:
        with self._cond:
            while self._pending and self._error is None:
                self._cond.wait()
            self._raise()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._closing:
                    self._cond.wait()
                if not self._items:
                    return
                item = self._items.popleft()
            try:
                self._write(item)
            except BaseException as exc:  # noqa: BLE001 - handed to the sending thread by `settle` and `put`
                with self._cond:
                    self._error = exc
                    self._items.clear()
                    self._cond.notify_all()
                return
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()


def _unshared(conn: Connection, postgres: bool) -> None:
    """Close a connection of the drain's: back to the pool with the server's own
    synchronous_commit again (the isolation level is reset by the pool itself)."""
    try:
        if postgres and not conn.closed and not conn.invalidated:
            with conn.begin():
                conn.exec_driver_sql("RESET synchronous_commit")
    except DBAPIError:
        conn.invalidate()  # a broken connection: not returned to the pool as it is
    finally:
        conn.close()


class _Outcomes:
    """Each sent mail's outcome, committed on a connection of the writing thread's own (kept for
    the drain), and counted."""

    def __init__(self, db: Database, clock: Clock, settings: Settings, faults: Faults) -> None:
        self.db = db
        self.clock = clock
        self.settings = settings
        self.faults = faults
        self.counts = {"sent": 0, "retrying": 0, "failed": 0}
        self.postgres = db.engine.dialect.name == "postgresql"
        # One statement for every outcome (the SET columns come with each call's values), so it
        # is compiled and its cache key computed once per drain, not once per mail.
        self.statement = update(Outbox).where(Outbox.id == bindparam("outbox_id"))
        self.connections: dict[int, Connection] = {}  # one per writing thread

    def connection(self) -> Connection:
        conn = self.connections.get(threading.get_ident())
        if conn is None:
            conn = self.db.engine.connect()
            if self.postgres:
                # Each outcome a transaction of its own in one round trip (autocommit), not
                # BEGIN, SET, UPDATE and COMMIT; and none waits for the server's fsync: a crash of
                # the bot cannot lose such a commit (the server has it); only a crash of the
                # database server could, and then the mail is resent with its Message-ID.
                # Worth it: no fsync wait per mail sent. Undone before the connection goes back
                # to the pool (`_unshared`).
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.exec_driver_sql("SET synchronous_commit = off")
                conn.commit()
            self.connections[threading.get_ident()] = conn
        return conn

    def write(self, item: tuple[_Sending, SendResult]) -> None:
        """Commit one mail's outcome (in the recorder thread when there is one)."""
        row, result = item
        attempts = row.attempts + 1
        values: dict[str, object] = {"attempts": attempts}
        if result.status is SendStatus.SENT:
            values.update(status=OutboxStatus.SENT, sent_at=self.clock.now(), last_error="")
            self.counts["sent"] += 1
            log.info("sent %s to %s (%s)", row.message_id, row.recipient, row.kind)
        elif result.status is SendStatus.TEMPORARY and attempts < self.settings.outbox.max_attempts:
            retry_at = as_utc(self.clock.now()) + backoff(attempts)
            values.update(last_error=result.detail, next_attempt_at=retry_at)
            self.counts["retrying"] += 1
            log.warning(
                "send of %s to %s failed for now (%s); retry %d at %s",
                row.message_id,
                row.recipient,
                result.detail,
                attempts,
                retry_at,
            )
        else:
            values.update(status=OutboxStatus.FAILED, last_error=result.detail)
            self.counts["failed"] += 1
            log.error("send of %s to %s failed for good: %s", row.message_id, row.recipient, result.detail)
        conn = self.connection()
        with self.db.writing(), conn.begin():
            conn.execute(self.statement, {"outbox_id": row.id, **values})
        self.faults.reached(CrashPoint.AFTER_RECORD)

    def close(self) -> None:
        for conn in self.connections.values():
            _unshared(conn, self.postgres)

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
    """Send every pending mail that is due, in batches; record each outcome as it comes.

    Each result is committed before the relay may accept the next mail, so a crash can resend
    at most the one mail in flight (with its Message-ID). With a mailer that `settles`
    (`SmtpMailer`), the commit of mail N's outcome runs in a recorder thread while mail N+1's
    envelope and content go out, and the mailer waits for it (`settle`) just before the final
    "." of mail N+1, the moment the relay could accept it: the guarantee is the same as with a
    commit before the next send, without a database round trip between every two mails.
    Otherwise each outcome is committed in the sending thread as the relay answers.
    """
    outcomes = _Outcomes(db, clock, settings, faults)
    done_ids: set[int] = set()
    by_message_id: dict[str, _Sending] = {}
    recorder = _Recorder(outcomes.write) if mailer.settles and not db.in_memory else None

    def record(result: SendResult) -> None:
        """The relay has answered for one mail (in the sending thread)."""
        faults.reached(CrashPoint.AFTER_SEND)
        row = by_message_id[result.message_id]
        done_ids.add(row.id)
        if recorder is not None:
            recorder.put((row, result))
        else:
            outcomes.write((row, result))

    try:
        while limit is None or sum(outcomes.counts.values()) < limit:
            rows = [r for r in _due(db, clock.now(), settings.outbox.batch_size) if r.id not in done_ids]
            if not rows:
                break
            by_message_id.clear()
            by_message_id.update((r.message_id, r) for r in rows)
            mails = [OutgoingMail(r.message_id, r.envelope_from, (r.recipient,), r.data) for r in rows]
            faults.reached(CrashPoint.BEFORE_SEND)
            mailer.send(mails, on_result=record, settle=recorder.settle if recorder is not None else None)
            if recorder is not None:
                recorder.settle()  # every outcome of the batch committed before the next is read
    finally:
        if recorder is not None:
            recorder.close()
        outcomes.close()
    return outcomes.report()
