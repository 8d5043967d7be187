"""SQLite's write-ahead log and who copies it into the database file: never a mail's outcome
(the sender's one-row commits, `bot.db.without_checkpoints`), the deadline once its turns are
written (`Database.checkpoint`), every other commit of the bot's as SQLite does by default."""

from __future__ import annotations

import logging
import sqlite3
import struct
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.pool import QueuePool

from bot.clock import FixedClock
from bot.db import AUTOCHECKPOINT_PAGES, Database, migrate
from bot.mail_out.drain import drain
from bot.testing import FakeMailer, TestApp
from tests.bot import gm_helpers
from tests.bot.conftest import make_settings
from tests.helpers import pending_outbox_row

gapp = gm_helpers.gapp
rc = gm_helpers.rc

T0 = datetime(2026, 12, 7, 20, 0, tzinfo=UTC)


def _log(path: Path) -> tuple[int, int]:
    """The write-ahead log of the SQLite database at `path`: its frames, and how many of them are
    copied into the database file (the wal-index's mxFrame and nBackfill: sqlite.org/walformat)."""
    shm = path.with_name(path.name + "-shm").read_bytes()
    (frames,) = struct.unpack_from("=I", shm, 16)
    (copied,) = struct.unpack_from("=I", shm, 96)
    return frames, copied


def _log_emptied(db: Database) -> None:
    """Every frame of the log copied and the log emptied (what migrating or setting up wrote)."""
    raw = db.engine.raw_connection()
    try:
        raw.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        raw.close()


def test_a_drain_never_copies_the_log_into_the_database_file_and_a_checkpoint_copies_it(tmp_path: Path) -> None:
    path = tmp_path / "flagman.sqlite"
    url = f"sqlite:///{path}"
    migrate(url)
    db = Database(url)
    try:
        _log_emptied(db)  # what the migrations wrote: the log starts empty
        mails = 0
        while _log(path)[0] < AUTOCHECKPOINT_PAGES * 0.85:  # the bodies of a deadline, short of a checkpoint
            with db.transaction() as session:
                session.add_all(pending_outbox_row(n, T0) for n in range(mails, mails + 10))
            mails += 10
        frames, copied = _log(path)
        assert copied == 0 and frames < AUTOCHECKPOINT_PAGES, (frames, copied)

        report = drain(db, FakeMailer(), FixedClock(T0), make_settings(tmp_path))

        assert report.sent == mails
        frames, copied = _log(path)
        # The outcomes took the log past the point where a commit of the bot's copies it: none did.
        assert frames > AUTOCHECKPOINT_PAGES and copied == 0, (frames, copied)
        # The connection the drain kept went back to the pool checkpointing as every other does.
        pool = db.engine.pool
        assert isinstance(pool, QueuePool)
        conns = [db.engine.raw_connection() for _ in range(pool.size())]
        try:
            kept = {c.cursor().execute("PRAGMA wal_autocheckpoint").fetchone()[0] for c in conns}
            assert kept == {AUTOCHECKPOINT_PAGES}
        finally:
            for c in conns:
                c.close()

        db.checkpoint()
        frames_after, copied = _log(path)
        assert frames_after == frames and copied == frames  # every frame in the database file
        with db.read() as session:
            assert session.execute(text("SELECT count(*) FROM outbox WHERE status = 'sent'")).scalar() == mails
    finally:
        db.dispose()


def test_a_checkpoint_of_an_in_memory_database_does_nothing() -> None:
    db = Database("sqlite://")
    try:
        db.checkpoint()
    finally:
        db.dispose()


def test_the_deadline_copies_the_log_of_its_turns_into_the_database_file(rc: TestApp) -> None:
    """Once its turns are written (and their mail queued), not before and not when none was due."""
    path = Path(rc.db.engine.url.database or "")
    _log_emptied(rc.db)
    assert rc.service.tick() == []
    frames, copied = _log(path)
    assert copied == 0  # nothing resolved: no checkpoint asked for
    rc.clock.advance(hours=49)
    assert rc.service.tick()  # the first turn resolved, its defaults given
    frames, copied = _log(path)
    assert 0 < frames < AUTOCHECKPOINT_PAGES and copied == frames, (frames, copied)


def test_a_checkpoint_that_fails_after_the_deadline_is_logged_and_loses_nothing(
    rc: TestApp, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def full_disk() -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(rc.db, "checkpoint", full_disk)
    rc.clock.advance(hours=49)
    with caplog.at_level(logging.WARNING, logger="flagman.games"):
        resolved = rc.service.tick()
    assert resolved  # the turn resolved and its mail queued all the same
    assert rc.service.send().sent > 0
    assert any("not copied into the database file now: database or disk is full" in r.message for r in caplog.records)
