"""At a deadline each due turn is worked out (resolved, its mails rendered) on a read-only
snapshot and then written in one short transaction (`bot.games.deadline.run`), so that the
sender's commits never wait for a turn's rendering and each game's results go out while the
next game resolves (performance.md, "deadline").

What must hold: the mails and rows are the very ones resolving inside one transaction gives;
working a turn out holds no write lock; whatever changes the turn's inputs meanwhile (an order
entered by the GM, another worker resolving the same turn) is seen, never overwritten; the
service hears of each turn as it is committed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select, text

from bot import store
from bot.commands import registry as powers
from bot.db import Database
from bot.dice import SeededEntropy
from bot.faults import CrashPoint
from bot.games import deadline, turns
from bot.mail_out.render import Renderer
from bot.models import OrderSubmission, Outbox, Seat, Turn
from bot.settings import DatabaseSettings
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp
from rules import game_names
from tests.bot.conftest import GM, RACERS, make_settings
from tests.bot.mail_out.test_report_once import fixed_secrets, play

pytestmark = pytest.mark.both_databases  # the store's own behaviour: SQLite and PostgreSQL


@dataclass
class AtPoint:
    """A `Faults` that runs `action` the first time `point` is reached (and records every point)."""

    point: CrashPoint
    action: Callable[[], None]
    seen: list[CrashPoint] = field(default_factory=list)

    def reached(self, point: CrashPoint) -> None:
        first = point is self.point and self.point not in self.seen
        self.seen.append(point)
        if first:
            self.action()


@pytest.fixture
def make_app(tmp_path: Path, db_url: str) -> Iterator[Callable[[AtPoint], TestApp]]:
    apps: list[TestApp] = []

    def build(faults: AtPoint) -> TestApp:
        settings = replace(make_settings(tmp_path), database=DatabaseSettings(url=db_url))
        app = TestApp(
            settings=settings,
            db=Database(settings.database_url),
            clock=FakeClock(),
            renderer=Renderer(),
            inbox=FakeInbox(max_size=settings.limits.max_mail_bytes),
            mailer=FakeMailer(),
            faults=faults,
            entropy=SeededEntropy(0),
        )
        with app.db.transaction() as session:
            turns.create_game(
                app.shell,
                session,
                kind="racecraft",
                name="rc1",
                players=RACERS,
                gm_address=GM,
                deadline="48h",
                timezone="Europe/London",
                seed=7,
            )
        app.service.send()
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.close()


def _past_deadline(app: TestApp) -> None:
    app.clock.advance(hours=49)


@pytest.mark.parametrize("kind", game_names())
def test_a_turn_worked_out_on_a_snapshot_gives_the_bytes_of_one_resolved_in_its_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Every mail of whole games (Racecraft to its end), byte for byte, whether each turn is
    written as worked out on the snapshot or worked out again in the writing transaction."""
    fixed_secrets(monkeypatch)
    snapshot = play(tmp_path / "snapshot", kind)

    original = deadline.work_out_due

    def stale(*args: Any, **kwargs: Any) -> Any:
        return [replace(worked, inputs=("inputs changed",)) for worked in original(*args, **kwargs)]

    monkeypatch.setattr(deadline, "work_out_due", stale)
    fixed_secrets(monkeypatch)
    in_transaction = play(tmp_path / "in-transaction", kind)

    assert len(snapshot) == len(in_transaction) > 0
    assert any(k == "results" for k, _ in snapshot)
    for (kind_a, a), (kind_b, b) in zip(snapshot, in_transaction, strict=True):
        assert (kind_a, a) == (kind_b, b), f"{kind_a} mail differs"


def test_working_a_turn_out_holds_no_write_lock(make_app: Callable[[AtPoint], TestApp], db_url: str) -> None:
    """While a turn is worked out, another connection can write at once (SQLite: BEGIN
    IMMEDIATE with no wait; PostgreSQL: the turn's row locked with NOWAIT). Before the
    snapshot, the tick held SQLite's write lock while it rendered every mail of the game."""
    wrote: list[str] = []

    def write_elsewhere() -> None:
        if db_url.startswith("sqlite"):
            conn = sqlite3.connect(db_url.removeprefix("sqlite:///"), timeout=0, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("UPDATE outbox SET attempts = attempts WHERE id = 1")
                conn.execute("COMMIT")
            finally:
                conn.close()
        else:
            engine = create_engine(db_url)
            try:
                with engine.begin() as pg:
                    pg.execute(text("SELECT id FROM turn WHERE resolved_at IS NULL FOR UPDATE NOWAIT")).all()
            finally:
                engine.dispose()
        wrote.append("yes")

    app = make_app(AtPoint(CrashPoint.WORKED_OUT, write_elsewhere))
    _past_deadline(app)
    assert app.service.tick() == [("rc1", 1)]
    assert wrote == ["yes"]


def test_an_order_entered_while_the_turn_is_worked_out_is_resolved_with_it(
    make_app: Callable[[AtPoint], TestApp],
) -> None:
    """The GM enters Kelly's orders (ORDER) after the snapshot was read: the turn is worked
    out again in the writing transaction, with them; Kelly is not defaulted (NMR)."""
    app: TestApp | None = None

    def gm_orders() -> None:
        assert app is not None
        with app.db.transaction() as session:
            assert powers.execute_words(app.shell, session, "ORDER", "rc1", ["kelly", "USE", "3"], actor=GM).ok

    app = make_app(AtPoint(CrashPoint.WORKED_OUT, gm_orders))
    _past_deadline(app)
    assert app.service.tick() == [("rc1", 1)]
    with app.db.read() as session:
        turn = session.scalars(select(Turn).where(Turn.number == 1)).one()
        seats = {seat.id: seat for seat in session.scalars(select(Seat))}
        sources = sorted(
            (seats[s.seat_id].name, s.source, s.text)
            for s in session.scalars(select(OrderSubmission).where(OrderSubmission.turn_id == turn.id))
        )
        streak = next(seat for seat in seats.values() if seat.name == "kelly").nmr_streak
    assert turn.resolved_at is not None
    # Kelly's GM-entered orders stand; the four others are defaulted ("default"), as the
    # snapshot's working-out would have done for Kelly too.
    assert [(name, source) for name, source, _ in sources if name == "kelly"] == [("kelly", "gm")], sources
    assert sorted(name for name, source, _ in sources if source == "default") == ["anna", "roger", "seb", "steve"]
    assert streak == 0


def test_a_turn_resolved_by_another_worker_meanwhile_is_not_resolved_again(
    make_app: Callable[[AtPoint], TestApp],
) -> None:
    """mail-interface.md / tick: a turn is resolved at most once. Here the GM's PROCESS
    resolves it after this tick read its snapshot; the tick then writes nothing for it."""
    app: TestApp | None = None

    def gm_process() -> None:
        assert app is not None
        with app.db.transaction() as session:
            assert powers.execute_words(app.shell, session, "PROCESS", "rc1", [], actor=GM).ok

    app = make_app(AtPoint(CrashPoint.WORKED_OUT, gm_process))
    _past_deadline(app)
    assert app.service.tick() == []
    with app.db.read() as session:
        numbers = [t.number for t in session.scalars(select(Turn).order_by(Turn.number))]
        results = session.scalars(select(Outbox).where(Outbox.kind == "results")).all()
    assert numbers == [1, 2]
    assert len(results) == len(RACERS)  # one results mail per racer: PROCESS's, not a second set


def test_the_service_hears_of_each_turn_as_it_is_committed(make_app: Callable[[AtPoint], TestApp]) -> None:
    """`on_resolved` runs after each turn's commit (the service's sender starts on its mail then)."""
    faults = AtPoint(CrashPoint.AFTER_RESOLVE, lambda: None)
    app = make_app(faults)
    with app.db.transaction() as session:
        turns.create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=RACERS,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=8,
        )
    _past_deadline(app)
    heard: list[int] = []

    def on_resolved() -> None:
        heard.append(faults.seen.count(CrashPoint.AFTER_RESOLVE))
        with app.db.read() as session:  # committed: another session sees it
            heard.append(len(session.scalars(select(Turn).where(Turn.resolved_at.is_not(None))).all()))

    assert sorted(app.service.tick(on_resolved=on_resolved)) == [("rc1", 1), ("rc2", 1)]
    assert heard == [1, 1, 2, 2]


def test_the_inputs_compared_change_with_any_row_the_mails_show(make_app: Callable[[AtPoint], TestApp]) -> None:
    """`store.resolution_inputs` are the rows themselves: unchanged, they compare equal; a
    player's new time zone (shown in every deadline of their mail), a seat's NMR streak, a
    submission, the turn's deadline, a new observer each make them differ."""
    app = make_app(AtPoint(CrashPoint.WORKED_OUT, lambda: None))

    def inputs() -> tuple[object, ...]:
        with app.db.read() as session:
            turn = session.scalars(select(Turn)).one()
            return store.resolution_inputs(session, turn.game_id, turn.id)

    changes = [
        "UPDATE player SET timezone = 'Asia/Tokyo' WHERE address = 'kelly@example.org'",
        "UPDATE seat SET nmr_streak = nmr_streak + 1 WHERE name = 'seb'",
        "UPDATE turn SET deadline = opened_at",
        "INSERT INTO order_submission (turn_id, seat_id, inbound_id, source, text, received_at) "
        "SELECT t.id, s.id, NULL, 'gm', 'USE 2', t.opened_at FROM turn t, seat s WHERE s.name = 'anna'",
        # A new observer gets a copy of the results: the mails worked out without it lack one.
        "INSERT INTO observer (game_id, address, created_at) SELECT g.id, 'watcher@example.net', g.created_at FROM game g",
    ]
    before = inputs()
    assert inputs() == before
    for change in changes:
        with app.db.transaction() as session:
            session.execute(text(change))
        after = inputs()
        assert after != before, change
        before = after
