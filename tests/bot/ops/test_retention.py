"""Retention (issue 41, "Years of data"): "The database only grows: about 13 kB per sent mail,
no retention, purge or VACUUM ... A retention policy (settings: how long sent mail bodies, raw
inbound mail and the audit are kept; finished games kept whole), run by the service or the
timer, with a metric of the database's size and a documented figure per game and per year."

A year of 50 games is played on each database, a game started each week, five players who
each mail the bot every day, the policy applied every day as the service does; the size of the
database is measured at the end (the figures go to docs/operating-for-years.md)."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.app import App
from bot.db import Database
from bot.dice import SeededEntropy
from bot.games.turns import PlayerSpec, create_game
from bot.host.instance import sqlite_path
from bot.mail_in.auth import signed_address
from bot.mail_out.render import Renderer
from bot.models import Game, GameStatus, GmAudit, InboundMessage, OrderSubmission, Outbox, Turn
from bot.ops.metrics import database_bytes
from bot.ops.retention import prune_database
from bot.settings import DatabaseSettings, RetentionSettings
from bot.testing import FakeClock, FakeInbox, FakeMailer, plain_mail
from tests.bot.conftest import BOT, make_settings
from tests.helpers import fresh_database

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SEATS = ("kelly", "seb", "steve", "roger", "anna")
GAMES = 50
DAYS = 365


def year_app(kind: str, tmp_path: Path, request: pytest.FixtureRequest, retention: RetentionSettings) -> App:
    postgres = request.getfixturevalue("postgres") if kind == "postgresql" else None
    url = fresh_database(kind, tmp_path, postgres)
    settings = replace(make_settings(tmp_path), database=DatabaseSettings(url=url), retention=retention)
    return App(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(START),
        renderer=Renderer(),
        inbox=FakeInbox(max_size=settings.limits.max_mail_bytes),
        mailer=FakeMailer(),
        entropy=SeededEntropy(0),
    )


def bytes_in_use(app: App) -> int:
    """The database's size as its files (or PostgreSQL) hold it now; SQLite's WAL checkpointed
    first, and its free pages (reused by the next rows) left out."""
    path = sqlite_path(app.settings.database_url)
    if path is not None:
        app.db.engine.dispose()
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages, free, size = (
                conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "freelist_count", "page_size")
            )
        finally:
            conn.close()
        assert database_bytes(app.db) == path.stat().st_size  # the metric: the file (its WAL now empty)
        return int((pages - free) * size)
    return database_bytes(app.db)


def play_a_year(app: App) -> dict[str, int]:
    """50 Racecraft games over a year, one started each week (48h turns), every seat mailing the
    bot each day (orders, questions: each answered), the jobs run and the policy applied daily."""
    started = 0
    written = 0
    for day in range(DAYS):
        now = app.clock.now()
        if day % 7 == 0 and started < GAMES:
            with app.db.transaction() as session:
                create_game(
                    app.shell,
                    session,
                    kind="racecraft",
                    name=f"rc{started}",
                    players=[PlayerSpec(s, f"{s}.{started}@players.test", s.title(), "UTC") for s in SEATS],
                    gm_address=f"gm.{started % 5}@players.test",
                    deadline="48h",
                    seed=started,
                )
            started += 1
        with app.db.read() as session:
            active = session.scalars(select(Game.name).where(Game.status == GameStatus.ACTIVE)).all()
        for name in active:
            for seat in SEATS:
                to = signed_address(BOT, "test-site-secret", name, seat)
                app.inbox.deliver(  # type: ignore[attr-defined]
                    plain_mail(
                        f"{seat}.{name[2:]}@players.test",
                        to,
                        f"[{name}] orders",
                        "USE 1\nWhat does the track look like after the bend?",
                        message_id=f"<d{day}.{name}.{seat}@players.test>",
                    ),
                    received_at=now,
                )
        app.service.poll()
        app.service.tick()
        app.service.send()
        with app.db.read() as session:
            written = max(
                written, int(session.scalar(select(func.coalesce(func.sum(func.length(Outbox.data)), 0))) or 0)
            )
        prune_database(app.db, app.settings, app.clock.now())
        app.clock.advance(timedelta(days=1))  # type: ignore[attr-defined]
    with app.db.read() as session:
        return {
            "games": started,
            "finished": int(session.scalar(select(func.count()).where(Game.status == GameStatus.FINISHED)) or 0),
            "turns": int(session.scalar(select(func.count()).select_from(Turn)) or 0),
            "mails_sent": int(session.scalar(select(func.count()).select_from(Outbox)) or 0),
            "mails_read": int(session.scalar(select(func.count()).select_from(InboundMessage)) or 0),
            "orders": int(session.scalar(select(func.count()).select_from(OrderSubmission)) or 0),
            "audit": int(session.scalar(select(func.count()).select_from(GmAudit)) or 0),
            "bodies_kept": int(
                session.scalar(select(func.count()).select_from(Outbox).where(func.length(Outbox.data) > 0)) or 0
            ),
            "body_bytes_kept": int(session.scalar(select(func.coalesce(func.sum(func.length(Outbox.data)), 0))) or 0),
        }


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def test_a_year_of_fifty_games_stays_within_the_retention_policy(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The mail bodies kept at the year's end are those of the last 90 days; every game is whole
    (every turn, every order); the database's size is measured and written out as a figure."""
    app = year_app(kind, tmp_path, request, RetentionSettings())
    try:
        counts = play_a_year(app)
        size = bytes_in_use(app)
        end = app.clock.now()
        with app.db.read() as session:
            oldest_body = session.scalar(select(func.min(Outbox.created_at)).where(func.length(Outbox.data) > 0))
            unresolved = session.scalar(
                select(func.count())
                .select_from(Turn)
                .join(Game)
                .where(Game.status == GameStatus.FINISHED, Turn.resolved_at.is_(None))
            )
    finally:
        app.close()
    assert counts["games"] == GAMES and counts["finished"] >= GAMES - 1, counts
    assert counts["bodies_kept"] < counts["mails_sent"] / 2, counts  # a quarter of the year, about
    assert oldest_body is not None and end - oldest_body.replace(tzinfo=UTC) <= timedelta(days=91)
    assert unresolved == 0 and counts["orders"] > 0, "the finished games are whole"
    figures = {
        "database": kind,
        **counts,
        "bytes_in_use": size,
        "bytes_per_game": size // GAMES,
        "bytes_per_sent_mail_body_kept": counts["body_bytes_kept"] // max(1, counts["bodies_kept"]),
    }
    out = Path(os.environ.get("FLAGMAN_FIGURES_DIR", tmp_path)) / f"retention-year-{kind}.json"
    out.write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures))
    assert size < counts["mails_sent"] * figures["bytes_per_sent_mail_body_kept"], figures  # far from all bodies


def test_flagman_prune_empties_old_bodies_and_the_old_processed_mail_and_nothing_else(tmp_path: Path) -> None:
    """`flagman prune` (what the service does daily, for a timer or by hand): the sent mail
    bodies older than [retention] sent_mail_days emptied, their rows kept; mail pending never
    touched; the Processed folder's mail older than processed_mail_days deleted; the game whole."""
    import time

    from sqlalchemy import update

    from bot.mail_in.inbox import deliver_to_maildir
    from bot.models import OutboxStatus
    from bot.settings import load_settings
    from tests.bot.ops.test_storage_faults import make_site
    from tests.helpers import flagman_process

    root = tmp_path / "site"
    config = make_site(root, mails=0)
    url = load_settings(config, env={}).database_url
    db = Database(url)
    long_ago = datetime.now(UTC) - timedelta(days=120)
    with db.transaction() as session:
        first = session.scalar(select(func.min(Outbox.id)))
        session.execute(update(Outbox).where(Outbox.id != first).values(created_at=long_ago))
        session.execute(
            update(Outbox).where(Outbox.id == first).values(status=OutboxStatus.PENDING, created_at=long_ago)
        )
        sent = session.scalar(select(func.count()).select_from(Outbox))
        turns_before = session.scalar(select(func.count()).select_from(Turn))
    processed = root / "mail" / "inbox" / ".Processed"
    old = deliver_to_maildir(processed, b"Subject: old\r\n\r\nx", clock_ns=time.time_ns() - 40 * 86400 * 10**9)
    new = deliver_to_maildir(processed, b"Subject: new\r\n\r\ny")
    done = flagman_process(config, "prune")
    assert done.returncode == 0, done.stderr
    assert f"pruned: {sent - 1} sent mail bodies" in done.stdout and "1 mails of the Processed folder" in done.stdout
    with db.read() as session:
        assert session.scalar(select(func.count()).select_from(Outbox)) == sent, "the rows stay"
        assert session.scalar(select(func.length(Outbox.data)).where(Outbox.id == first)) > 0, "pending mail kept"
        assert session.scalar(select(func.count()).select_from(Outbox).where(func.length(Outbox.data) > 0)) == 1
        assert session.scalar(select(func.count()).select_from(Turn)) == turns_before
    db.dispose()
    assert not old.exists() and new.exists()
