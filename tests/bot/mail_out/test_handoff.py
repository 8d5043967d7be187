"""The outbox's bodies handed from the writer to this process's sender (bot.mail_out.handoff):
only what a transaction committed, under its Message-ID, bounded; the drain sends them as the
database holds them, and reads from the database what is not handed over."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import event, select

from bot.clock import FixedClock
from bot.db import Database
from bot.mail_out.drain import drain
from bot.mail_out.handoff import Handoff, handoff_for
from bot.mail_out.queue import NewRows, insert_rows
from bot.models import Outbox, OutboxBody, OutboxStatus
from bot.settings import DatabaseSettings
from bot.testing import FakeMailer
from tests.bot.conftest import make_settings

T0 = datetime(2026, 12, 7, 5, 0, tzinfo=UTC)


def _rows(prefix: str, count: int) -> NewRows:
    """Outbox rows as `bot.mail_out.queue.queue` collects them, each with a body of its own."""
    rows: NewRows = []
    for n in range(count):
        mid = f"<{prefix}{n}@flagman.test>"
        rows.append(
            {
                "message_id": mid,
                "kind": "notice",
                "game_id": None,
                "recipient": f"p{n}@players.test",
                "envelope_from": "bounces@flagman.test",
                "subject": f"Mail {n}",
                "data": f"Message-ID: {mid}\r\nSubject: Mail {n}\r\n\r\n.{prefix} moved {n}\r\n".encode(),
                "status": OutboxStatus.PENDING,
                "attempts": 0,
                "next_attempt_at": T0,
                "last_error": "",
                "created_at": T0,
                "sent_at": None,
                "claims": None,
            }
        )
    return rows


def _bodies(rows: NewRows) -> dict[str, object]:
    return {str(row["message_id"]): row["data"] for row in rows}


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database(db_url)
    try:
        yield database
    finally:
        database.dispose()


def _given(mailer: FakeMailer) -> dict[str, bytes]:
    """What the mailer was given to send, by Message-ID."""
    return {mail.message_id: mail.data for mail in mailer.sent}


def _body_reads(db: Database) -> list[str]:
    """The statements run on `db` from now on that read the outbox's bodies."""
    seen: list[str] = []

    @event.listens_for(db.engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "outbox_body" in statement:
            seen.append(statement)

    return seen


# -- the handoff itself -------------------------------------------------------------------------


def test_a_body_is_taken_once() -> None:
    handoff = Handoff(capacity=100)
    handoff.put([("<a>", b"x" * 10), ("<b>", b"y" * 20)])
    assert handoff.take("<a>") == b"x" * 10
    assert handoff.take("<a>") is None
    assert len(handoff) == 1 and handoff.size == 20


@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 40), st.sampled_from(["put", "take", "wait"])), max_size=30),
    st.integers(0, 60),
)
def test_the_handoff_holds_at_most_its_capacity_each_body_the_last_put(
    steps: list[tuple[int, int, str]], capacity: int
) -> None:
    """Whatever is put, taken or left to go stale, the bytes held never pass the capacity, and
    a body taken is the last one put under its Message-ID (never an older one)."""
    now = [0.0]
    handoff = Handoff(capacity=capacity, stale=10.0, clock=lambda: now[0])
    last: dict[str, bytes] = {}
    for n, (key, size, step) in enumerate(steps):
        mid = f"<{key}>"
        if step == "put":
            data = bytes([n % 256]) * size
            handoff.put([(mid, data)])
            last[mid] = data
        elif step == "take":
            got = handoff.take(mid)
            assert got is None or got == last[mid]
        else:
            now[0] += size
        assert handoff.size <= capacity


def test_when_full_the_bodies_held_are_kept_and_a_new_one_is_not() -> None:
    """The drain takes the oldest first: those are kept; a new body that does not fit is left
    to the database, and held once room is made."""
    handoff = Handoff(capacity=30, stale=10.0, clock=lambda: 0.0)
    handoff.put([("<a>", b"a" * 10), ("<b>", b"b" * 10), ("<c>", b"c" * 10)])
    handoff.put([("<d>", b"d" * 15)])
    assert handoff.take("<d>") is None
    assert handoff.take("<a>") == b"a" * 10 and handoff.take("<b>") == b"b" * 10
    handoff.put([("<e>", b"e" * 15)])
    assert handoff.take("<c>") == b"c" * 10 and handoff.take("<e>") == b"e" * 15
    assert len(handoff) == 0 and handoff.size == 0


def test_bodies_held_too_long_are_pushed_out_oldest_first_to_make_room() -> None:
    now = [0.0]
    handoff = Handoff(capacity=30, stale=10.0, clock=lambda: now[0])
    handoff.put([("<a>", b"a" * 10), ("<b>", b"b" * 10)])
    now[0] = 5.0
    handoff.put([("<c>", b"c" * 10)])
    now[0] = 12.0  # <a> and <b> stale, <c> not
    handoff.put([("<d>", b"d" * 10)])
    assert handoff.take("<a>") is None  # pushed out for <d>
    assert handoff.take("<b>") == b"b" * 10  # stale, but not in the way
    handoff.put([("<e>", b"e" * 25)])  # would need <c> out, which is not stale
    assert handoff.take("<e>") is None
    assert handoff.take("<c>") == b"c" * 10 and handoff.take("<d>") == b"d" * 10


def test_a_body_bigger_than_the_capacity_is_not_held_nor_the_one_it_replaces() -> None:
    handoff = Handoff(capacity=10)
    handoff.put([("<a>", b"a" * 5)])
    handoff.put([("<a>", b"A" * 11)])
    assert handoff.take("<a>") is None and handoff.size == 0


# -- what a transaction hands over ---------------------------------------------------------------


@pytest.mark.both_databases
def test_bodies_are_handed_over_when_their_transaction_commits(db: Database) -> None:
    rows = _rows("c", 3)
    bodies = _bodies(rows)
    handoff = handoff_for(db.engine)
    with db.transaction() as session:
        insert_rows(session, rows)
        assert len(handoff) == 0  # not yet committed
    for message_id, data in bodies.items():
        assert handoff.take(message_id) is data  # the very bytes the transaction stored


@pytest.mark.both_databases
def test_a_transaction_rolled_back_hands_nothing_over_and_the_next_only_its_own(db: Database) -> None:
    handoff = handoff_for(db.engine)
    with pytest.raises(RuntimeError), db.transaction() as session:
        insert_rows(session, _rows("r", 2))
        raise RuntimeError("the turn's write failed")
    assert len(handoff) == 0
    rows = _rows("n", 1)
    bodies = _bodies(rows)
    with db.transaction() as session:
        insert_rows(session, rows)
    assert len(handoff) == 1 and handoff.take("<n0@flagman.test>") is bodies["<n0@flagman.test>"]


@pytest.mark.both_databases
def test_a_session_committed_outside_a_database_transaction_hands_nothing_over(db: Database) -> None:
    """The handing over is a step of `Database.transaction` after its commit, not a session
    hook: a session committed by other means leaves its bodies to the database."""
    handoff = handoff_for(db.engine)
    with db.sessions() as session, session.begin():
        insert_rows(session, _rows("o", 2))
    assert len(handoff) == 0


@pytest.mark.both_databases
def test_bodies_inserted_in_a_savepoint_are_left_to_the_database(db: Database) -> None:
    handoff = handoff_for(db.engine)
    with db.transaction() as session:
        savepoint = session.begin_nested()
        insert_rows(session, _rows("s", 2))
        savepoint.rollback()
    assert len(handoff) == 0


# -- the drain -----------------------------------------------------------------------------------


@pytest.mark.both_databases
def test_the_drain_sends_the_bodies_handed_over_without_reading_them_back(
    db: Database, db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path)
    settings = replace(settings, database=DatabaseSettings(url=db_url), outbox=replace(settings.outbox, batch_size=3))
    rows = _rows("h", 7)
    with db.transaction() as session:
        insert_rows(session, rows)
    with db.read() as session:
        stored = dict(session.execute(select(Outbox.message_id, OutboxBody.data).join(OutboxBody)).all())
    reads = _body_reads(db)
    mailer = FakeMailer()
    assert drain(db, mailer, FixedClock(T0), settings).sent == 7
    assert _given(mailer) == stored
    assert reads == []
    assert len(handoff_for(db.engine)) == 0  # each body forgotten once taken


@pytest.mark.both_databases
def test_the_drain_reads_from_the_database_the_bodies_not_handed_over(
    db: Database, db_url: str, tmp_path: Path
) -> None:
    """After a restart (a new process: nothing handed over) or with some bodies pushed out, the
    drain reads those from the database, and sends each mail as stored."""
    settings = make_settings(tmp_path)
    settings = replace(settings, database=DatabaseSettings(url=db_url), outbox=replace(settings.outbox, batch_size=4))
    rows = _rows("m", 7)
    with db.transaction() as session:
        insert_rows(session, rows)
    with db.read() as session:
        stored = dict(session.execute(select(Outbox.message_id, OutboxBody.data).join(OutboxBody)).all())
    handoff = handoff_for(db.engine)
    for message_id in ("<m1@flagman.test>", "<m4@flagman.test>", "<m5@flagman.test>"):
        assert handoff.take(message_id) is not None  # pushed out
    restarted = Database(db_url)
    try:
        mailer = FakeMailer()
        reads = _body_reads(restarted)
        assert drain(restarted, mailer, FixedClock(T0), settings, limit=4).sent == 4  # the first batch
        assert _given(mailer) == {mid: stored[mid] for mid in sorted(stored)[:4]}
        assert len(reads) == 1  # one read of that batch's bodies: none was handed over in this process
    finally:
        restarted.dispose()
    mailer = FakeMailer()
    reads = _body_reads(db)
    assert drain(db, mailer, FixedClock(T0), settings).sent == 3
    assert _given(mailer) == {mid: stored[mid] for mid in sorted(stored)[4:]}
    assert len(reads) == 1  # <m4> and <m5> read back, <m6> handed over
