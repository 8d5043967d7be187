"""``python -m bench --only retention [--db postgresql]``: a year of 50 Racecraft games played on
one database with the retention policy applied daily, as the service does; the database's size
at the year's end (the figures of docs/operating-for-years.md). No mail servers: the inbox and
the mailer are the in-memory ones of `bot.testing`; ``--db postgresql`` starts a private
PostgreSQL (tests/servers.py).

`play` is the same game played shorter by tests/bot/ops/test_retention.py (ten days of three
games, a policy of a few days) on both databases: the suite checks the behaviour, this measures
the size.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bot.app import App
from bot.db import Database, migrate
from bot.dice import SeededEntropy
from bot.games.turns import PlayerSpec, create_game
from bot.host.instance import sqlite_path
from bot.mail_in.auth import signed_address
from bot.mail_out.render import Renderer
from bot.models import Game, GameStatus, GmAudit, InboundMessage, OrderSubmission, Outbox, OutboxBody, Turn
from bot.ops.metrics import database_bytes
from bot.ops.retention import prune_database
from bot.settings import AuthSettings, BotSettings, DatabaseSettings, RetentionSettings, Secrets, Settings
from bot.testing import FakeClock, FakeInbox, FakeMailer, plain_mail

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SEATS = ("kelly", "seb", "steve", "roger", "anna")
BOT = "flagman@example.org"
SITE_SECRET = "bench-site-secret"
YEAR = 365
GAMES = 50


@dataclass(frozen=True)
class Season:
    """How much is played: `games` Racecraft games of five, one started every `every` days,
    over `days` days."""

    games: int = GAMES
    days: int = YEAR
    every: int = 7


def retention_app(url: str, base_dir: Path, retention: RetentionSettings) -> App:
    """The bot on database `url` (already migrated), the in-memory inbox and mailer, a fixed clock."""
    settings = Settings(
        bot=BotSettings(address=BOT, timezone="Europe/London"),
        database=DatabaseSettings(url=url),
        auth=AuthSettings(),
        secrets=Secrets(site_secret=SITE_SECRET),
        retention=retention,
        base_dir=base_dir,
    )
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
    if path is None:
        return database_bytes(app.db)
    app.db.engine.dispose()
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, size = (
            conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "freelist_count", "page_size")
        )
    finally:
        conn.close()
    if database_bytes(app.db) != path.stat().st_size:  # the metric: the file (its WAL now empty)
        raise AssertionError(f"flagman_database_bytes {database_bytes(app.db)} is not the file's {path.stat().st_size}")
    return int((pages - free) * size)


def play(app: App, season: Season) -> dict[str, int]:
    """The season's games (48h turns), every seat of every active game mailing the bot each day
    (orders and a question: each answered), the jobs run and the policy applied daily."""
    started = 0
    for day in range(season.days):
        now = app.clock.now()
        if day % season.every == 0 and started < season.games:
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
                to = signed_address(BOT, SITE_SECRET, name, seat)
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
            "bodies_kept": int(session.scalar(select(func.count()).select_from(OutboxBody)) or 0),
            "body_bytes_kept": int(
                session.scalar(select(func.coalesce(func.sum(func.length(OutboxBody.data)), 0))) or 0
            ),
        }


@contextlib.contextmanager
def _database(db: str, root: Path) -> Iterator[str]:
    """A new migrated database of kind `db`: a SQLite file under `root`, or a private PostgreSQL."""
    if db == "sqlite":
        url = f"sqlite:///{root / 'retention.sqlite'}"
        migrate(url)
        yield url
        return
    from tests.servers import Postgres

    with Postgres() as postgres:
        url = postgres.create_database("bench_retention")
        migrate(url)
        yield url


def run(db: str, season: Season = Season()) -> dict[str, Any]:
    """The season played on `db` with the default policy; the figures, and one line."""
    with tempfile.TemporaryDirectory(prefix="fm-retention-") as tmp, _database(db, Path(tmp)) as url:
        app = retention_app(url, Path(tmp), RetentionSettings())
        t0 = time.perf_counter()
        try:
            counts = play(app, season)
            size = bytes_in_use(app)
        finally:
            app.close()
        seconds = time.perf_counter() - t0
    figures: dict[str, Any] = {
        "benchmark": "retention",
        "database": db,
        **counts,
        "days": season.days,
        "bytes_in_use": size,
        "bytes_per_game": size // max(1, counts["games"]),
        "bytes_per_sent_mail_body_kept": counts["body_bytes_kept"] // max(1, counts["bodies_kept"]),
        "seconds": seconds,
    }
    figures["line"] = (
        f"retention {counts['games']} games over {season.days} days on {db}: {size / 1e6:.1f} MB in use "
        f"({figures['bytes_per_game'] // 1000} kB a game), {counts['bodies_kept']} of {counts['mails_sent']} "
        f"mail bodies kept, {counts['finished']} games finished; {seconds:.0f} s"
    )
    return figures
