"""Retention: "The database only grows: about 13 kB per sent mail,
no retention, purge or VACUUM ... A retention policy (settings: how long sent mail bodies, raw
inbound mail and the audit are kept; finished games kept whole), run by the service or the
timer, with a metric of the database's size and a documented figure per game and per year."

Three games over ten days are played on each database, five players who each mail the bot
every day, a policy of three days applied every day as the service does. The year of 50 games
whose size docs/operating-for-years.md gives is `python -m bench --only retention` (the same
`bench.retention.play`, longer)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bench.retention import Season, bytes_in_use, play, retention_app
from bot.db import Database
from bot.models import Game, GameStatus, Outbox, OutboxBody, Turn
from bot.settings import RetentionSettings
from tests.helpers import fresh_database

TEN_DAYS = Season(games=3, days=10, every=2)
KEPT_DAYS = 3


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def test_ten_days_of_three_games_stay_within_the_retention_policy(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The mail bodies kept at the end are those of the last `sent_mail_days`; every game is
    whole (every turn, every order); the database grew by far less than every body."""
    postgres = request.getfixturevalue("postgres") if kind == "postgresql" else None
    app = retention_app(fresh_database(kind, tmp_path, postgres), tmp_path, RetentionSettings(sent_mail_days=KEPT_DAYS))
    try:
        empty = bytes_in_use(app)
        counts = play(app, TEN_DAYS)
        size = bytes_in_use(app)
        end = app.clock.now()
        with app.db.read() as session:
            oldest_body = session.scalar(
                select(func.min(Outbox.created_at)).join(OutboxBody, OutboxBody.id == Outbox.id)
            )
            unresolved = session.scalar(
                select(func.count())
                .select_from(Turn)
                .join(Game)
                .where(Game.status == GameStatus.FINISHED, Turn.resolved_at.is_(None))
            )
    finally:
        app.close()
    assert counts["games"] == TEN_DAYS.games and counts["finished"] >= TEN_DAYS.games - 1, counts
    assert counts["bodies_kept"] < counts["mails_sent"] / 2, counts  # 3 days of 10, about
    assert oldest_body is not None and end - oldest_body.replace(tzinfo=UTC) <= timedelta(days=KEPT_DAYS + 1)
    assert unresolved == 0 and counts["orders"] > 0, "the finished games are whole"
    per_body = counts["body_bytes_kept"] // max(1, counts["bodies_kept"])
    assert size - empty < counts["mails_sent"] * per_body, (empty, size, counts)  # far from all bodies


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
    from tests.helpers import flagman_command

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
        sent = session.scalars(select(func.count()).select_from(Outbox)).one()
        turns_before = session.scalar(select(func.count()).select_from(Turn))
    processed = root / "mail" / "inbox" / ".Processed"
    old = deliver_to_maildir(processed, b"Subject: old\r\n\r\nx", clock_ns=time.time_ns() - 40 * 86400 * 10**9)
    new = deliver_to_maildir(processed, b"Subject: new\r\n\r\ny")
    done = flagman_command(config, "prune")
    assert done.returncode == 0, done.stderr
    assert f"pruned: {sent - 1} sent mail bodies" in done.stdout and "1 mail of the Processed folder" in done.stdout
    with db.read() as session:
        assert session.scalar(select(func.count()).select_from(Outbox)) == sent, "the rows stay"
        assert session.scalars(select(func.length(OutboxBody.data)).where(OutboxBody.id == first)).one() > 0, (
            "pending mail kept"
        )
        assert session.scalar(select(func.count()).select_from(OutboxBody)) == 1, "the sent mails' bodies are gone"
        assert session.scalar(select(func.count()).select_from(Turn)) == turns_before
    db.dispose()
    assert not old.exists() and new.exists()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def test_what_the_doctor_counts_past_the_policy_is_what_a_prune_takes(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """`flagman doctor`'s retention check counts with the prune's own conditions
    (`bot.ops.retention.overdue`): four days of a game kept whole (a policy of 0 days keeps
    everything), then a policy of one day: what `overdue` counts is what `prune_database`
    takes, and nothing is overdue after it."""
    from dataclasses import replace

    from bot.ops.retention import overdue, prune_database

    postgres = request.getfixturevalue("postgres") if kind == "postgresql" else None
    forever = RetentionSettings(sent_mail_days=0, inbound_days=0, audit_days=0, processed_mail_days=0)
    app = retention_app(fresh_database(kind, tmp_path, postgres), tmp_path, forever)
    try:
        play(app, Season(games=1, days=4, every=4))
        now = app.clock.now()
        assert not overdue(app.db, app.settings, now).anything, "a policy of 0 days keeps everything"
        one_day = replace(app.settings, retention=RetentionSettings(sent_mail_days=1, inbound_days=1, audit_days=1))
        found = overdue(app.db, one_day, now)
        assert found.mail_bodies > 0 and found.inbound_texts > 0 and found.oldest is not None, found
        pruned = prune_database(app.db, one_day, now)
        assert (pruned.mail_bodies, pruned.inbound_texts, pruned.quarantined, pruned.audit_lines) == (
            found.mail_bodies,
            found.inbound_texts,
            found.quarantined,
            found.audit_lines,
        )
        assert not overdue(app.db, one_day, now).anything
    finally:
        app.close()
