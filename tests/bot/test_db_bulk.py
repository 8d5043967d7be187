"""bot.db's batch helpers (performance.md: work per batch, bulk inserts), on SQLite and on
PostgreSQL, where they take another road (unnest) and must come out the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from bot.clock import as_utc
from bot.db import Database, among, insert_many, insert_with_parts
from bot.models import Outbox, OutboxBody, OutboxStatus, Quarantine

pytestmark = pytest.mark.both_databases  # the store's own behaviour: SQLite and PostgreSQL

T0 = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


def _outbox_row(n: int, **changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "message_id": f"<m{n}@flagman.test>",
        "kind": "confirmation",
        "game_id": None,
        "recipient": f"p{n}@players.test",
        "envelope_from": "bot@flagman.test",
        "subject": f"Mail {n}",
        "data": bytes(range(256)) * (n % 3 + 1) + b"\r\n.\r\n\x00",
        "status": OutboxStatus.PENDING,
        "attempts": 0,
        "next_attempt_at": T0 + timedelta(minutes=n),
        "last_error": "",
        "created_at": T0,
        "sent_at": None,
    }
    row.update(changes)
    return row


def test_insert_many_writes_every_row_in_order_and_returns_what_is_asked(db_url: str) -> None:
    db = Database(db_url)
    rows = [_outbox_row(n) for n in range(120)]
    rows[7]["last_error"] = "a 'quote', a \"double\", a back\\slash, a comma, {braces} and NULL"
    rows[8]["subject"] = "ünïcødé ✓ and a\ttab"
    rows[9]["sent_at"] = T0
    try:
        with db.transaction() as session:
            heads = [{k: v for k, v in row.items() if k != "data"} for row in rows]
            returned = insert_many(session, Outbox, heads, ("id", "message_id"))
            ids = {m: i for i, m in returned}
            insert_many(session, OutboxBody, [{"id": ids[r["message_id"]], "data": r["data"]} for r in rows])
        with db.read() as session:
            stored = list(session.scalars(select(Outbox).options(selectinload(Outbox.body)).order_by(Outbox.id)))
    finally:
        db.dispose()
    # Ids follow the rows' order (the outbox is sent in id order).
    assert [o.message_id for o in stored] == [r["message_id"] for r in rows]
    assert sorted((m, i) for i, m in returned) == sorted((o.message_id, o.id) for o in stored)
    for row, got in zip(rows, stored, strict=True):
        for key, value in row.items():
            stored_value = getattr(got, key)
            if isinstance(stored_value, datetime):  # SQLite gives back naive UTC
                stored_value = as_utc(stored_value)
            assert stored_value == value, key


def test_insert_with_parts_writes_each_row_and_its_part_in_order_in_one_statement_on_postgresql(db_url: str) -> None:
    """`insert_with_parts` (the outbox rows and their bodies, `bot.mail_out.queue.insert_rows`):
    every row in order, its body under its own id, on PostgreSQL in one round trip."""
    from sqlalchemy import event

    db = Database(db_url)
    rows = [_outbox_row(n) for n in range(60)]
    rows[7]["last_error"] = "a 'quote', a \"double\", a back\\slash, a comma, {braces} and NULL"
    rows[8]["data"] = b""
    statements: list[str] = []
    try:
        with db.transaction() as session:
            event.listen(session.connection(), "before_cursor_execute", lambda *a: statements.append(a[2]))
            insert_with_parts(session, Outbox, OutboxBody, rows, ("data",), "message_id")
        with db.read() as session:
            stored = list(session.scalars(select(Outbox).options(selectinload(Outbox.body)).order_by(Outbox.id)))
    finally:
        db.dispose()
    assert len(statements) == (1 if db_url.startswith("postgresql") else 2)
    assert [o.message_id for o in stored] == [r["message_id"] for r in rows]
    for row, got in zip(rows, stored, strict=True):
        assert got.body is not None and got.body.data == row["data"]
        assert (got.subject, got.last_error, as_utc(got.next_attempt_at)) == (
            row["subject"],
            row["last_error"],
            row["next_attempt_at"],
        )


def test_insert_many_of_nothing_writes_nothing(db_url: str) -> None:
    db = Database(db_url)
    try:
        with db.transaction() as session:
            assert insert_many(session, Outbox, [], ("id",)) == []
            assert session.scalars(select(Outbox)).first() is None
    finally:
        db.dispose()


def test_among_finds_the_rows_of_the_values_given(db_url: str) -> None:
    db = Database(db_url)
    try:
        with db.transaction() as session:
            insert_many(
                session,
                Quarantine,
                [
                    {
                        "mailbox_key": f"k{n % 7}",
                        "message_id": f"<q{n}@x>",
                        "raw": b"",
                        "error": "",
                        "created_at": T0,
                        "reported": n % 2 == 0,
                    }
                    for n in range(700)
                ],
            )
        with db.read() as session:
            query = select(Quarantine.message_id, Quarantine.mailbox_key)
            # One column, more than the 500 a statement of `IN` holds; values not there; repeats.
            wanted = [f"<q{n}@x>" for n in range(0, 1400, 2)] + ["<q4@x>"]
            found = sorted(m for m, _ in among(session, query, (Quarantine.message_id,), [(v,) for v in wanted]))
            assert found == sorted(f"<q{n}@x>" for n in range(0, 700, 2))
            # Pairs: a row counts only where both columns match one pair.
            pairs = [("k1", "<q1@x>"), ("k1", "<q2@x>"), ("k3", "<q10@x>")]
            assert sorted(among(session, query, (Quarantine.mailbox_key, Quarantine.message_id), pairs)) == [
                ("<q10@x>", "k3"),
                ("<q1@x>", "k1"),
            ]
            assert list(among(session, query, (Quarantine.message_id,), [])) == []
    finally:
        db.dispose()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.text(max_size=40), min_size=1, max_size=30),
    picks=st.lists(st.integers(min_value=0, max_value=40), max_size=20),
)
def test_among_agrees_with_a_filter_in_python(db_url: str, texts: list[str], picks: list[int]) -> None:
    """Property: whatever the text (quotes, commas, braces, NUL aside), `among` returns exactly
    the rows a Python filter over all rows returns."""
    texts = [t.replace("\x00", "") for t in texts]
    db = Database(db_url)
    try:
        with db.read() as session:  # rolled back at the end: each example starts from nothing
            returned = insert_many(
                session,
                Quarantine,
                [
                    {
                        "mailbox_key": t,
                        "message_id": "",
                        "raw": b"",
                        "error": "",
                        "created_at": T0,
                        "reported": False,
                    }
                    for t in texts
                ],
                ("id",),
            )
            ids = [i for (i,) in returned if isinstance(i, int)]
            assert len(ids) == len(returned), returned  # the ids are whole numbers
            wanted = [texts[p] for p in picks if p < len(texts)] + ["not there"]
            got = sorted(
                i for (i,) in among(session, select(Quarantine.id), (Quarantine.mailbox_key,), [(w,) for w in wanted])
            )
            assert got == sorted(i for i, t in zip(sorted(ids), texts, strict=True) if t in wanted)
    finally:
        db.dispose()
