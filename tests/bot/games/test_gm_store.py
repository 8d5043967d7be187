"""The GM side on both databases (SQLite and the private PostgreSQL, via the shared `racecraft`
fixture): a ROLLBACK replay, the audit log's JSON, reminders, the digest log, a JOIN."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.games.turns import create_game
from bot.gm import digest
from bot.mail_in.auth import signed_address
from bot.models import GmAudit, GmDigest, Turn
from bot.testing import FakeMailer, TestApp, plain_mail, reply_to
from tests.bot.conftest import BOT, GM

pytestmark = pytest.mark.both_databases  # the store's own behaviour: SQLite and PostgreSQL


def gm(app: TestApp, text: str, game: str = "rc1") -> None:
    app.inbox.deliver(plain_mail(GM, signed_address(BOT, "test-site-secret", game, "gm"), "[gm]", text))
    app.service.poll()
    app.service.tick()
    app.service.send()


def resolved(app: TestApp) -> list[tuple[int, object, object]]:
    with app.db.read() as session:
        return [(t.number, t.state_after, t.events) for t in session.scalars(select(Turn).order_by(Turn.number))]


def test_rollback_and_replay_on_each_database(racecraft: TestApp) -> None:
    """ROLLBACK keeps what it discarded as JSON in the audit row; PROCESS again gives the same turn."""
    gm(racecraft, "ORDER rc1 seb USE 6\nPROCESS rc1")
    first = resolved(racecraft)[0]
    gm(racecraft, "ROLLBACK rc1")
    with racecraft.db.read() as session:
        row = session.scalars(select(GmAudit).where(GmAudit.command == "ROLLBACK rc1")).one()
        assert row.undo is not None and row.undo["undone"][0]["next_turn"]["number"] == 2
    assert [n for n, _, _ in resolved(racecraft)] == [1]
    gm(racecraft, "PROCESS rc1")
    assert resolved(racecraft)[0] == first


def test_reminders_and_the_digest_log_on_each_database(racecraft: TestApp) -> None:
    racecraft.clock.advance(hours=24)
    racecraft.service.tick()
    racecraft.service.tick()
    racecraft.service.send()
    mailer = racecraft.mailer
    assert isinstance(mailer, FakeMailer)
    assert sum("Reminder" in str(m["Subject"]) for m in mailer.messages()) == 5
    assert digest.send_due_digests(racecraft.shell) == 1
    assert digest.send_due_digests(racecraft.shell) == 0
    with racecraft.db.read() as session:
        assert [d.gm_address for d in session.scalars(select(GmDigest))] == [GM]
    racecraft.clock.advance(timedelta(days=1))
    assert digest.send_due_digests(racecraft.shell) == 1


def test_join_and_start_on_each_database(app: TestApp) -> None:
    with app.db.transaction() as session:
        create_game(app.shell, session, kind="racecraft", name="rc2", players=(), gm_address=GM, signup=True, seed=1)
    for i in range(5):
        app.inbox.deliver(plain_mail(f"r{i}@example.net", BOT, "join", f"JOIN rc2 Runner {i}"))
    app.service.poll()
    app.service.send()
    for i in range(5):  # JOIN is double opt-in: each address answers its code
        (code_mail,) = app.mailer.messages(f"r{i}@example.net")
        app.inbox.deliver(reply_to(code_mail, "yes", sender=f"r{i}@example.net"))
    app.service.poll()
    gm(app, "START rc2", game="rc2")
    with app.db.read() as session:
        assert len(list(session.scalars(select(Turn)))) == 1
