"""The turn worker (bot.games.workers; work per batch, the deadline): at a deadline
where many turns fall due together, the service writes each worked-out turn and sends its mail
while a worker process works out the next ones on another core.

What must hold: the worker changes where a turn is worked out, never what (the same mails,
byte for byte, and the same rows as working every turn out in the service); the crash point
WORKED_OUT is still reached in the service, once per turn; what changes after the worker read
its snapshot is seen (the turn is worked out again as it is written); a worker that dies costs
no turn and resolves none twice; a small tick, an in-memory database or ``resolve_workers = 0``
never use one; closing the app ends it; one started ahead of the tick is the one it uses."""

from __future__ import annotations

import io
import itertools
import logging
import os
import pickle
import re
import shutil
import signal
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import App, build_app, work_out_in_worker
from bot.commands import registry as powers
from bot.db import Database
from bot.dice import SeededEntropy
from bot.faults import CrashPoint
from bot.games import deadline, turns, workers
from bot.games.deadline import Due, WorkedOut
from bot.games.workers import ProcessTurnWorker
from bot.mail_out.render import Renderer
from bot.models import Game, OrderSubmission, Outbox, Seat, Turn
from bot.resources import templates_path
from bot.settings import DatabaseSettings, ScheduleSettings, Settings
from bot.shell import Shell
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp, reply_to
from rules import find_game, game_names
from tests.bot.conftest import GM, make_settings
from tests.helpers import fresh_database, moving_clock

# Every game of every kind, and two more Racecraft games: five turns due together, one a chunk.
KINDS = (*game_names(), "racecraft", "racecraft")
NORMALISED = re.compile(rb"^(Message-ID|Date|In-Reply-To|References): .*$", re.M)


@dataclass
class Points:
    """A `Faults` that records every crash point reached and runs `action` when `point` is
    reached for the `nth` time."""

    point: CrashPoint = CrashPoint.WORKED_OUT
    nth: int = 0
    action: Callable[[], None] = lambda: None
    seen: list[CrashPoint] = field(default_factory=list)

    def reached(self, point: CrashPoint) -> None:
        self.seen.append(point)
        if point is self.point and self.seen.count(point) == self.nth:
            self.action()


@pytest.fixture
def one_turn_a_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of one turn (the service's is `TICK_CHUNK` = 20), so that a few games make a tick
    of several chunks: the first worked out in the service while the worker starts, the others
    in the worker (every one in the worker once it is running)."""
    monkeypatch.setattr(deadline, "TICK_CHUNK", 1)


def watch_the_service(monkeypatch: pytest.MonkeyPatch, here: list[Due]) -> None:
    """Each chunk the service's process works out itself appended to `here` (the worker, a
    spawned process, runs the module as it is)."""

    def watched(shell: Shell, due: Due) -> list[WorkedOut]:
        here.append(due)
        return deadline.work_out_due(shell, due)

    monkeypatch.setattr(workers, "work_out_due", watched)


def fixed_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seat and GM passwords (in the turn sheets) from a counter: the same in two runs."""
    counter = itertools.count()
    monkeypatch.setattr(turns, "new_secret", lambda: f"secret{next(counter):04d}")


def settings_for(tmp_path: Path, url: str) -> Settings:
    return replace(make_settings(tmp_path), database=DatabaseSettings(url=url))


def make_app(settings: Settings, *, worker: bool, faults: Points | None = None) -> TestApp:
    return TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=FakeInbox(max_size=settings.limits.max_mail_bytes),
        mailer=FakeMailer(),
        entropy=SeededEntropy(0),
        faults=faults or Points(),
        turn_worker=ProcessTurnWorker(work_out_in_worker) if worker else deadline.INLINE,
    )


@pytest.fixture
def apps() -> Iterator[list[TestApp]]:
    made: list[TestApp] = []
    yield made
    for app in made:
        app.close()


def start_games(app: App, kinds: tuple[str, ...] = KINDS) -> list[str]:
    names = []
    with app.db.transaction() as session:
        for n, kind in enumerate(kinds):
            name = f"g{n}"
            players = [
                turns.PlayerSpec(f"p{i}", f"{name}-p{i}@example.org", f"Player {i}", "Europe/London")
                for i in range(min(find_game(kind).max_players, 5))
            ]
            turns.create_game(
                app.shell, session, kind=kind, name=name, players=players, gm_address=GM, deadline="24h", seed=11 + n
            )
            names.append(name)
    app.service.send()
    return names


def mail_some_orders(app: TestApp, round_: int) -> None:
    """Some seats of every game mail their orders (the game's own default orders), the others
    are defaulted (NMR)."""
    mailer, inbox = app.mailer, app.inbox
    assert isinstance(mailer, FakeMailer) and isinstance(inbox, FakeInbox)
    with app.db.read() as session:
        open_turns = session.execute(
            select(Game, Turn).join(Turn, Turn.game_id == Game.id).where(Turn.resolved_at.is_(None)).order_by(Game.id)
        ).all()
        for game, turn in open_turns:
            rules = find_game(game.kind)
            state = rules.load_state(turn.state)
            for i, seat in enumerate(sorted(rules.expected_players(state))):
                text = rules.format_orders(rules.default_orders(state, seat))
                address = f"{game.name}-{seat}@example.org"
                if (i + round_) % 3 and text.strip():
                    inbox.deliver(reply_to(mailer.messages(address)[-1], text, sender=address))
    app.service.poll()


def play_deadlines(app: TestApp, rounds: int = 3) -> tuple[list[tuple[str, str, bytes]], list[tuple[object, ...]]]:
    """`rounds` deadlines of every game at once; every outbox row (kind, recipient, bytes with the
    Message-ID and Date normalised) and every turn and seat row, oldest first."""
    start_games(app)
    for round_ in range(rounds):
        mail_some_orders(app, round_)
        app.clock.advance(hours=25)
        assert app.service.tick(), "turns were due"
        app.service.send()
    with app.db.read() as session:
        mails = [
            (row.kind, row.recipient, NORMALISED.sub(rb"\1: -", row.data))
            for row in session.scalars(select(Outbox).order_by(Outbox.id))
        ]
        rows: list[tuple[object, ...]] = [
            (t.game_id, t.number, t.label, t.state, t.state_after, t.events, t.resolved_at, t.deadline)
            for t in session.scalars(select(Turn).order_by(Turn.id))
        ]
        rows += [(s.game_id, s.name, s.nmr_streak) for s in session.scalars(select(Seat).order_by(Seat.id))]
        rows += [
            (s.turn_id, s.seat_id, s.source, s.text)
            for s in session.scalars(select(OrderSubmission).order_by(OrderSubmission.id))
        ]
    return mails, rows


# On SQLite alone: where a turn is worked out does not depend on the database. On PostgreSQL the
# worker works turns out in the test below, a snapshot's reading is held to the writes made
# meanwhile in tests/bot/games/test_tick_snapshot.py, and the same mail on either database in
# tests/e2e/test_season_by_mail.py.
@pytest.mark.usefixtures("one_turn_a_chunk")
def test_turns_worked_out_in_the_worker_give_the_mails_and_rows_worked_out_in_the_service(
    tmp_path: Path, db_url: str, apps: list[TestApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three deadlines of five games of every kind, once worked out in the service and once with
    the worker: every mail byte for byte (Message-ID and Date aside), every turn, seat and order
    row the same."""
    fixed_secrets(monkeypatch)
    here = make_app(settings_for(tmp_path, db_url), worker=False)
    apps.append(here)
    expected = play_deadlines(here)

    fixed_secrets(monkeypatch)
    faults = Points()
    there = make_app(settings_for(tmp_path, fresh_database("sqlite", tmp_path)), worker=True, faults=faults)
    apps.append(there)
    got = play_deadlines(there)

    assert isinstance(there.turn_worker, ProcessTurnWorker)
    pids = there.turn_worker.worker_pids()
    assert pids and os.getpid() not in pids, "turns were worked out in a worker process"
    assert len(got[0]) == len(expected[0]) and any(kind == "results" for kind, _, _ in got[0])
    for mine, theirs in zip(got[0], expected[0], strict=True):
        assert mine == theirs, f"{mine[0]} mail to {mine[1]} differs"
    assert got[1] == expected[1]
    # The crash point is still reached in the service, once for every turn worked out.
    resolved = sum(1 for row in got[1] if len(row) == 8 and row[6] is not None)
    assert faults.seen.count(CrashPoint.WORKED_OUT) == resolved == 3 * len(KINDS)


@pytest.mark.both_databases  # what the worker's snapshot sees of a write made after it was read
@pytest.mark.usefixtures("one_turn_a_chunk")
def test_an_order_entered_after_the_worker_worked_out_a_turn_is_resolved_with_it(
    tmp_path: Path, db_url: str, apps: list[TestApp]
) -> None:
    """The worker worked g1's turn out (the second WORKED_OUT: the first chunk is the service's);
    then the GM enters p0's orders in every game not yet written. g1's turn is worked out again
    as it is written, with them: p0 is not defaulted there, nor in the games after it."""
    app: TestApp | None = None

    def gm_orders() -> None:
        assert app is not None
        with app.db.transaction() as session:
            open_games = session.scalars(
                select(Game.name)
                .join(Turn, Turn.game_id == Game.id)
                .where(Turn.resolved_at.is_(None), Turn.number == 1)
            ).all()
            assert "g1" in open_games and "g0" not in open_games
            for name in open_games:
                assert powers.execute_words(app.shell, session, "ORDER", name, ["p0", "USE", "3"], actor=GM).ok

    app = make_app(settings_for(tmp_path, db_url), worker=True, faults=Points(CrashPoint.WORKED_OUT, 2, gm_orders))
    apps.append(app)
    start_games(app, ("racecraft",) * 4)
    app.clock.advance(hours=25)
    assert sorted(app.service.tick()) == [(f"g{n}", 1) for n in range(4)]
    with app.db.read() as session:
        sources = {
            (game, seat): source
            for game, seat, source in session.execute(
                select(Game.name, Seat.name, OrderSubmission.source)
                .join(Turn, Turn.id == OrderSubmission.turn_id)
                .join(Game, Game.id == Turn.game_id)
                .join(Seat, Seat.id == OrderSubmission.seat_id)
                .where(Turn.number == 1)
            )
        }
    assert isinstance(app.turn_worker, ProcessTurnWorker) and app.turn_worker.worker_pids()
    assert sources[("g0", "p0")] == "default"  # written before the GM's orders
    assert [sources[(g, "p0")] for g in ("g1", "g2", "g3")] == ["gm", "gm", "gm"]


@pytest.mark.usefixtures("one_turn_a_chunk")
def test_a_worker_that_dies_costs_no_turn_and_resolves_none_twice(
    tmp_path: Path, apps: list[TestApp], caplog: pytest.LogCaptureFixture
) -> None:
    """The worker is killed (SIGKILL) after one deadline; at the next, its turns are worked out
    in the service: every turn resolved once, one results mail per player, the failure logged
    once, and the worker not started again."""
    app = make_app(settings_for(tmp_path, fresh_database("sqlite", tmp_path)), worker=True)
    apps.append(app)
    names = start_games(app, ("racecraft",) * 4)
    app.clock.advance(hours=25)
    assert len(app.service.tick()) == 4
    assert isinstance(app.turn_worker, ProcessTurnWorker)
    (pid,) = app.turn_worker.worker_pids()
    os.kill(pid, signal.SIGKILL)
    app.clock.advance(hours=25)
    with caplog.at_level(logging.WARNING, logger="flagman.games"):
        assert sorted(app.service.tick()) == [(name, 2) for name in names]
        app.clock.advance(hours=25)
        assert sorted(app.service.tick()) == [(name, 3) for name in names]
    assert [r.getMessage() for r in caplog.records if "turn worker failed" in r.getMessage()] != []
    assert len([r for r in caplog.records if "turn worker failed" in r.getMessage()]) == 1, caplog.text
    assert app.turn_worker.worker_pids() == ()
    with app.db.read() as session:
        resolved = session.execute(
            select(Game.name, Turn.number).join(Game, Game.id == Turn.game_id).where(Turn.resolved_at.is_not(None))
        ).all()
        results = session.scalars(select(Outbox.recipient).where(Outbox.kind == "results")).all()
    assert sorted(resolved) == sorted((name, n) for name in names for n in (1, 2, 3))
    assert Counter(results) == {f"{name}-p{i}@example.org": 3 for name in names for i in range(5)}


class NoObjects(pickle.Pickler):
    """Pickles as the worker's pipe does, and fails on any ORM object met on the way."""

    def persistent_id(self, obj: object) -> None:
        if hasattr(type(obj), "_sa_class_manager"):  # an instance of a mapped class
            raise AssertionError(f"an ORM object in what the worker sends back: {type(obj).__name__}")


def test_a_worked_out_turn_is_sent_back_as_plain_values(tmp_path: Path, apps: list[TestApp]) -> None:
    """What the worker sends back of each turn pickles with no object of its snapshot in it (no
    game, seat, player or turn to rebuild in the service, which writes by id and reads again
    what it must), and is written as it is: every turn resolved."""
    app = make_app(settings_for(tmp_path, fresh_database("sqlite", tmp_path)), worker=False)
    apps.append(app)
    names = start_games(app)
    mail_some_orders(app, 0)
    app.clock.advance(hours=25)
    with app.db.read() as session:
        due = turns.due_ids(session, app.clock.now(), pace=turns.practice_pace(app.settings.practice))
    worked = deadline.work_out_due(app.shell, due)
    assert [one.turn.game for one in worked] == names
    for one in worked:
        NoObjects(io.BytesIO()).dump(one)
    assert sorted(app.service.tick()) == sorted((name, 1) for name in names)


def test_a_tick_of_one_chunk_is_worked_out_in_the_service(tmp_path: Path, apps: list[TestApp]) -> None:
    """Fewer turns due than a chunk (the usual deadline): no worker process is started for them."""
    app = make_app(settings_for(tmp_path, fresh_database("sqlite", tmp_path)), worker=True)
    apps.append(app)
    start_games(app, ("racecraft",) * 3)
    moving_clock(app).advance(hours=25)
    assert len(app.service.tick()) == 3
    assert isinstance(app.turn_worker, ProcessTurnWorker) and app.turn_worker.worker_pids() == ()


@pytest.mark.usefixtures("one_turn_a_chunk")
def test_a_worker_started_ahead_works_out_the_next_tick_and_nothing_before(
    tmp_path: Path, apps: list[App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ProcessTurnWorker.start` (the bench starts it before its clock, as a service that has
    run a deadline has it): the worker is ready and has worked out nothing, no row written;
    the next tick of several chunks hands every one of them, the first too, to that very
    process: none is worked out in the service's."""
    here: list[Due] = []  # the chunks worked out in this (the service's) process
    watch_the_service(monkeypatch, here)
    app = make_app(settings_for(tmp_path, fresh_database("sqlite", tmp_path)), worker=True)
    apps.append(app)
    start_games(app, ("racecraft",) * 3)
    worker = app.turn_worker
    assert isinstance(worker, ProcessTurnWorker)

    def rows() -> tuple[int, int]:
        with app.db.read() as session:
            return len(session.scalars(select(Outbox)).all()), len(session.scalars(select(Turn)).all())

    before = rows()
    assert worker.start(app.shell)
    (pid,) = worker.worker_pids()
    assert rows() == before
    app.clock.advance(hours=25)
    assert len(app.service.tick()) == 3
    assert worker.worker_pids() == (pid,)
    assert rows()[1] == before[1] + 3
    assert here == []


@pytest.mark.usefixtures("one_turn_a_chunk")
def test_a_worker_spawned_at_first_use_starts_on_the_second_chunk(
    tmp_path: Path, apps: list[App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tick of several chunks with no worker running yet: the first chunk is worked out in the
    service's process while the worker is spawned, the rest in the worker; the next tick hands
    every chunk to the worker, which is running by then."""
    here: list[Due] = []
    watch_the_service(monkeypatch, here)
    app = make_app(settings_for(tmp_path, fresh_database("sqlite", tmp_path)), worker=True)
    apps.append(app)
    start_games(app, ("racecraft",) * 3)
    app.clock.advance(hours=25)
    assert len(app.service.tick()) == 3
    assert len(here) == 1
    assert isinstance(app.turn_worker, ProcessTurnWorker) and len(app.turn_worker.worker_pids()) == 1
    app.clock.advance(hours=25)
    assert len(app.service.tick()) == 3
    assert len(here) == 1, "the second tick's chunks all went to the running worker"


def test_the_composition_root_gives_a_worker_only_where_one_can_work(tmp_path: Path) -> None:
    """build_app: a turn worker for a database file or server; none for an in-memory SQLite (a
    worker process cannot see it) or with ``[schedule] resolve_workers = 0``; closing the app
    ends the worker."""
    base = make_settings(tmp_path)
    on_file = replace(base, database=DatabaseSettings(url=fresh_database("sqlite", tmp_path)))
    cases = {
        "file": on_file,
        "memory": replace(base, database=DatabaseSettings(url="sqlite://")),
        "off": replace(on_file, schedule=ScheduleSettings(resolve_workers=0)),
    }
    kinds = {}
    for name, settings in cases.items():
        with build_app(settings, inbox=FakeInbox(), mailer=FakeMailer()) as app:
            kinds[name] = type(app.turn_worker).__name__
    assert kinds == {"file": "ProcessTurnWorker", "memory": "InlineTurnWorker", "off": "InlineTurnWorker"}


@pytest.mark.usefixtures("one_turn_a_chunk")
@pytest.mark.parametrize("niceness", [None, 7])
def test_the_worker_runs_at_the_configured_priority_and_ends_with_the_app(tmp_path: Path, niceness: int | None) -> None:
    """``[schedule] resolve_niceness`` (default 0): the worker's priority is the service's
    lowered by that much, so a busy program beside the service does not starve the deadline
    unless the operator asks for it; closing the app ends the worker."""
    settings = settings_for(tmp_path, fresh_database("sqlite", tmp_path))
    if niceness is not None:
        settings = replace(settings, schedule=ScheduleSettings(resolve_niceness=niceness))
    app = build_app(settings, clock=FakeClock(), inbox=FakeInbox(), mailer=FakeMailer(), entropy=SeededEntropy(0))
    start_games(app, ("racecraft",) * 3)
    moving_clock(app).advance(hours=25)
    assert len(app.service.tick()) == 3
    assert isinstance(app.turn_worker, ProcessTurnWorker)
    (pid,) = app.turn_worker.worker_pids()
    own = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, own + (niceness or 0))
    app.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended, and reaped by the pool's shutdown


@pytest.mark.usefixtures("one_turn_a_chunk")
def test_templates_the_service_reloads_are_the_ones_the_worker_renders(tmp_path: Path, apps: list[TestApp]) -> None:
    """OPERATING.md, SIGHUP: the templates are read again. The worker's own copy follows: after
    the results template is edited and the service reloads, the results the worker renders
    (the second game's and later) carry the edit."""
    templates = tmp_path / "templates"
    shutil.copytree(templates_path(), templates)
    settings = settings_for(tmp_path, fresh_database("sqlite", tmp_path))
    app = TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(templates),
        inbox=FakeInbox(),
        mailer=FakeMailer(),
        turn_worker=ProcessTurnWorker(work_out_in_worker),
    )
    apps.append(app)
    names = start_games(app, ("racecraft",) * 3)
    app.clock.advance(hours=25)
    assert len(app.service.tick()) == 3
    results = templates / "_common" / "results.txt"
    results.write_text(results.read_text() + "Edited after the first deadline.\n")
    app.renderer.reload()
    app.clock.advance(hours=25)
    assert len(app.service.tick()) == 3
    with app.db.read() as session:
        edited = {
            (row.recipient.split("-")[0], b"Edited after the first deadline." in row.data)
            for row in session.scalars(select(Outbox).where(Outbox.kind == "results"))
        }
    assert isinstance(app.turn_worker, ProcessTurnWorker) and app.turn_worker.worker_pids()
    assert edited == {(name, edit) for name in names for edit in (False, True)}
