"""The outbox's drain over a real SMTP relay: each mail's outcome is committed before the relay
may accept the next mail (bot.mail_out.drain: "a crash can resend at most the one mail that
was in flight")."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import delete, func, select

from bot.clock import FixedClock
from bot.db import Database
from bot.faults import NO_FAULTS, CrashPoint
from bot.mail_out.drain import DrainReport, OutcomeNotRecorded, _due, _Outcomes, drain
from bot.mail_out.handoff import Handoff
from bot.mail_out.mailer import OutgoingMail, SendResult, SendStatus
from bot.mail_out.smtp import SmtpMailer
from bot.models import Outbox, OutboxBody, OutboxStatus
from bot.settings import DatabaseSettings, Settings
from bot.testing import FakeMailer
from tests.bot.conftest import make_settings
from tests.helpers import fresh_database
from tests.servers import Fault, SmtpSink

if TYPE_CHECKING:
    from bot.mail_out.drain import _Sending

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
        mails: Iterable[OutgoingMail],
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
    settings = _settings(tmp_path, db_url)
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
        assert smtp_sink.greetings == 1  # three batches, one connection
    finally:
        db.dispose()


class _DropBetweenBatches:
    """At the n-th start of a batch (CrashPoint.BEFORE_SEND), the relay drops every connection
    it holds, as a relay's idle timeout or restart would while the drain reads the batch."""

    def __init__(self, sink: SmtpSink, at: int) -> None:
        self.sink, self.at = sink, at
        self.batches = 0
        self.dropped = 0

    def reached(self, point: CrashPoint) -> None:
        if point is CrashPoint.BEFORE_SEND:
            self.batches += 1
            if self.batches == self.at:
                self.dropped += self.sink.drop_connections()


@pytest.mark.both_databases
def test_a_drain_sends_each_mail_once_through_a_dropped_connection_and_a_421(
    tmp_path: Path, db_url: str, smtp_sink: SmtpSink
) -> None:
    """The relay drops the drain's connection between two batches, and answers a later mail's
    MAIL FROM with 421 (RFC 5321 3.8: it took nothing): each time the drain goes on over a new
    connection, and every mail arrives once and is recorded sent at its first attempt."""
    smtp_sink.reset()
    settings = _settings(tmp_path, db_url)
    db = Database(db_url)
    try:
        with db.transaction() as session:
            session.add_all([_row(n) for n in range(MAILS)])
        faults = _DropBetweenBatches(smtp_sink, at=2)
        smtp_sink.add_fault(Fault("rcpt", "421 4.3.2 Shutting down", frozenset({"p5@players.test"})))
        mailer = SmtpMailer(smtp_sink.host, smtp_sink.port, security="none", timeout=10)
        report = drain(db, mailer, FixedClock(T0), settings, faults=faults)
        assert faults.dropped == 1
        assert (report.sent, report.retrying, report.failed) == (MAILS, 0, 0)
        assert smtp_sink.message_ids() == [f"<d{n}@flagman.test>" for n in range(MAILS)]
        assert smtp_sink.greetings == 3  # the first, after the drop, after the 421
        with db.read() as session:
            rows = session.execute(select(Outbox.status, Outbox.attempts).order_by(Outbox.id)).all()
        assert [tuple(row) for row in rows] == [(OutboxStatus.SENT, 1)] * MAILS
    finally:
        db.dispose()


_serial = itertools.count()

# What the relay does to one mail, and what the outbox must hold of it after the drain.
_RELAY_DOES: dict[str, tuple[Fault | None, OutboxStatus, int]] = {
    "accepts": (None, OutboxStatus.SENT, 1),
    "421 at RCPT": (Fault("rcpt", "421 4.3.2 Shutting down"), OutboxStatus.SENT, 1),
    "drops the connection at RCPT": (Fault("rcpt", drop=True), OutboxStatus.SENT, 1),
    "drops the connection after the final dot": (Fault("data", drop=True), OutboxStatus.PENDING, 1),
    "451 at RCPT": (Fault("rcpt", "451 4.3.0 Try again later"), OutboxStatus.PENDING, 1),
    "550 at RCPT": (Fault("rcpt", "550 5.1.1 No such user"), OutboxStatus.FAILED, 1),
}


@pytest.mark.both_databases
def test_whatever_the_relay_does_each_row_is_handed_once_and_ends_as_its_fault_calls_for(
    tmp_path: Path, db_url: str, smtp_sink: SmtpSink
) -> None:
    """Property: for any number of mails, batch size, what the relay does to each mail and a
    drop of the idle connection before any batch, one drain hands each due row to the relay
    once: the rows the relay accepted are SENT at their first attempt and at the relay once, a
    mail it may have taken or put off waits for its retry, one it refused for good FAILED."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    db = Database(db_url)
    mailer = SmtpMailer(smtp_sink.host, smtp_sink.port, security="none", timeout=10, max_reconnects=100)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.lists(st.sampled_from(sorted(_RELAY_DOES)), min_size=1, max_size=8),
        st.integers(min_value=1, max_value=4),
        st.integers(min_value=0, max_value=4),
    )
    def check(doings: list[str], batch_size: int, drop_before_batch: int) -> None:
        smtp_sink.reset()
        with db.transaction() as session:
            session.execute(delete(OutboxBody))
            session.execute(delete(Outbox))
            rows = [_row(next(_serial)) for _ in doings]
            session.add_all(rows)
        for row, doing in zip(rows, doings, strict=True):
            fault = _RELAY_DOES[doing][0]
            if fault is not None:
                smtp_sink.add_fault(replace(fault, recipients=frozenset({row.recipient})))
        base = _settings(tmp_path, db_url)
        drops = _DropBetweenBatches(smtp_sink, at=drop_before_batch)  # 0: never
        drain(
            db, mailer, FixedClock(T0), replace(base, outbox=replace(base.outbox, batch_size=batch_size)), faults=drops
        )
        with db.read() as session:
            ended = session.execute(select(Outbox.message_id, Outbox.status, Outbox.attempts).order_by(Outbox.id)).all()
        assert [(status, attempts) for _, status, attempts in ended] == [_RELAY_DOES[d][1:] for d in doings]
        assert smtp_sink.message_ids() == [mid for mid, status, _ in ended if status == OutboxStatus.SENT]

    try:
        check()
    finally:
        db.dispose()


class _ReadingAhead:
    """A mailer that takes every mail it is handed before it answers for any (a batch at once),
    and accepts them all."""

    settles = False

    def __init__(self) -> None:
        self.taken: list[str] = []

    def send(
        self,
        mails: Iterable[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        batch = list(mails)
        self.taken.extend(m.message_id for m in batch)
        results = [SendResult(m.message_id, SendStatus.SENT) for m in batch]
        for result in results:
            if on_result is not None:
                on_result(result)
        return results

    def close(self) -> None:
        pass


def test_a_mailer_that_reads_ahead_is_handed_each_mail_once(tmp_path: Path, db_url: str) -> None:
    """The drain reads its next batch as the mailer asks for the next mail; a mailer that asks
    before it has answered for the last gets no mail twice in one drain (the first batch, then
    the drain ends), and the next drain goes on from there."""
    settings = _settings(tmp_path, db_url)
    db = Database(db_url)
    try:
        with db.transaction() as session:
            session.add_all([_row(n) for n in range(MAILS)])
        mailer = _ReadingAhead()
        reports = [drain(db, mailer, FixedClock(T0), settings) for _ in range(3)]
        assert [r.sent for r in reports] == [3, 3, 1]
        assert mailer.taken == [f"<d{n}@flagman.test>" for n in range(MAILS)]
    finally:
        db.dispose()


def _settings(tmp_path: Path, db_url: str) -> Settings:
    """Batches of 3: the 7 mails in three batches."""
    settings = make_settings(tmp_path)
    return replace(settings, database=DatabaseSettings(url=db_url), outbox=replace(settings.outbox, batch_size=3))


@contextmanager
def _outcomes(db_url: str, tmp_path: Path, mails: int) -> Iterator[tuple[Database, _Outcomes, list[_Sending]]]:
    """`mails` pending outbox rows on the database `db_url`, read as the drain reads them, and
    an `_Outcomes` to record what became of them (closed after)."""
    db = Database(db_url)
    try:
        with db.transaction() as session:
            session.add_all([_row(n) for n in range(mails)])
        rows = _due(db, T0, mails, Handoff())
        outcomes = _Outcomes(db, FixedClock(T0), _settings(tmp_path, db_url), NO_FAULTS)
        try:
            yield db, outcomes, rows
        finally:
            outcomes.close()
    finally:
        db.dispose()


def _sent(row: _Sending, status: SendStatus = SendStatus.SENT, detail: str = "") -> SendResult:
    return SendResult(row.message_id, status, detail)


@pytest.mark.both_databases
def test_an_outcome_started_is_committed_when_finished_and_in_order(db_url: str, tmp_path: Path) -> None:
    """`_Outcomes.start` as the relay answers, `finish` before the next mail's final "."
    (PostgreSQL: the statement sent at `start`, its answer read at `finish`): once finished the
    row says what became of its mail; a second `start` finishes the first before it."""
    with _outcomes(db_url, tmp_path, 3) as (db, outcomes, (first, second, third)):
        outcomes.start(first, _sent(first))
        assert outcomes.unfinished == 1
        outcomes.start(second, _sent(second, SendStatus.TEMPORARY, "451 busy, try later"))
        assert outcomes.counts["sent"] == 1 and outcomes.unfinished == 1
        outcomes.finish()
        outcomes.write(third, _sent(third, SendStatus.PERMANENT, "550 no such user"))
        assert outcomes.unfinished == 0
        assert outcomes.report() == DrainReport(sent=1, retrying=1, failed=1)
        with db.read() as session:
            rows = session.execute(select(Outbox.status, Outbox.attempts, Outbox.last_error).order_by(Outbox.id)).all()
        assert [tuple(r) for r in rows] == [
            (OutboxStatus.SENT, 1, ""),
            (OutboxStatus.PENDING, 1, "451 busy, try later"),
            (OutboxStatus.FAILED, 1, "550 no such user"),
        ]


@pytest.mark.both_databases
def test_an_outcome_the_database_refuses_is_not_recorded_and_its_connection_not_reused(
    db_url: str, tmp_path: Path
) -> None:
    """A statement the database refuses (here: one naming a table that is not there):
    `OutcomeNotRecorded` where its commit is asked for, nothing counted, and the next outcome
    is committed on a fresh connection."""
    with _outcomes(db_url, tmp_path, 2) as (db, outcomes, (first, second)):
        statement = outcomes.statements["retrying"]
        statement.sql = statement.sql.replace("outbox", "no_such_table", 1)
        statement.numbered = statement.numbered.replace(b"outbox", b"no_such_table", 1)
        with pytest.raises(OutcomeNotRecorded):
            outcomes.start(first, _sent(first, SendStatus.TEMPORARY, "451 busy"))
            outcomes.finish()
        assert outcomes.unfinished == 0 and outcomes.report() == DrainReport()
        outcomes.write(second, _sent(second))
        with db.read() as session:
            rows = session.execute(select(Outbox.status, Outbox.attempts).order_by(Outbox.id)).all()
        assert [tuple(r) for r in rows] == [(OutboxStatus.PENDING, 0), (OutboxStatus.SENT, 1)]


@pytest.mark.both_databases
def test_a_relays_answer_with_a_nul_is_recorded_on_every_database(db_url: str, tmp_path: Path) -> None:
    """A relay's answer is not trusted to be printable: one with a NUL in it (which no
    PostgreSQL text column takes) is recorded with U+FFFD in its place, on SQLite alike, and the
    drain goes on."""
    with _outcomes(db_url, tmp_path, 1) as (db, outcomes, (row,)):
        outcomes.write(row, _sent(row, SendStatus.TEMPORARY, "451 \x00busy"))
        with db.read() as session:
            assert session.execute(select(Outbox.last_error)).scalar_one() == "451 \ufffdbusy"


@pytest.mark.both_databases
def test_an_outcome_started_and_never_finished_leaves_no_connection_behind(db_url: str, tmp_path: Path) -> None:
    """A send that ends in an error between `start` and `finish`: `close` gives no connection
    with an answer still unread back to the pool; the database is usable as before."""
    with _outcomes(db_url, tmp_path, 1) as (db, outcomes, (row,)):
        outcomes.start(row, _sent(row))
        outcomes.close()
        for _ in range(3):  # every connection the pool holds answers its own statements
            with db.read() as session:
                assert session.execute(select(func.count()).select_from(Outbox)).scalar_one() == 1


def test_a_drain_leaves_no_prepared_statement_and_the_next_prepares_its_own(postgres: Any, tmp_path: Path) -> None:
    """PostgreSQL: the outcomes' statements prepared for a drain are deallocated before its
    connection goes back to the pool, and a later drain prepares them again, whatever psycopg
    did meanwhile on that connection (its cache deallocates every prepared statement after a
    ROLLBACK once it prepared one of its own)."""
    db_url = fresh_database("postgresql", tmp_path, postgres)
    db = Database(db_url)
    settings = _settings(tmp_path, db_url)
    try:
        for first in (0, MAILS):
            with db.transaction() as session:
                session.add_all([_row(n) for n in range(first, first + MAILS)])
            assert drain(db, FakeMailer(), FixedClock(T0), settings).sent == MAILS
            raws = [db.engine.raw_connection() for _ in range(2)]  # every connection the drain used
            try:
                for raw in raws:
                    driver = raw.driver_connection
                    assert driver is not None
                    found = driver.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'flagman%'")
                    assert found.fetchall() == []
                    for _ in range(6):  # psycopg prepares one of its own, then a ROLLBACK
                        driver.execute("SELECT count(*) FROM outbox WHERE attempts >= %s", [0]).fetchall()
                    raw.rollback()
            finally:
                for raw in raws:
                    raw.close()
        with db.read() as session:
            assert session.execute(select(func.count()).where(Outbox.status == OutboxStatus.SENT)).scalar_one() == 14
    finally:
        db.dispose()
