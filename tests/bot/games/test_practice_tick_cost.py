"""The deadline tick's work for live practice games that have nothing due is flat in their
number: the tick passes over an open turn on its columns alone (`turns.may_be_due`) and reads
no game, seat, state or submission of its own for one that cannot be due. With 2 live, idle
practice races or 14, it makes the same database round trips, renders no letter, and calls at
most `CALLS_PER_GAME` more Python functions for each race more (a tick that read every open
turn and its state called about 1,800 more a race: 200 live practice games took it from 0.26
s to 1.55 s of CPU, 6.5 ms each; the CPU figure at 1,000 games is bench `practice`,
bench/README.md). Counts, not timings: the statements the engine sends, the function calls
the profiler counts, the outbox rows the tick writes."""

from __future__ import annotations

import cProfile
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from sqlalchemy import event, func, select

from bot.games import practice
from bot.models import Outbox
from bot.testing import FakeClock, TestApp
from rules import game_names
from tests.bot import gm_helpers

gapp = gm_helpers.gapp

CALLS_PER_GAME = 100
"""Function calls the tick may make for each live, idle practice race (31 when written)."""


def _start(app: TestApp, numbers: Iterable[int]) -> None:
    """Practice races started as PRACTICE starts them, one person each (a domain each, so no
    cap of a mailbox or domain is met), each game the bot knows in turn; first sheets sent."""
    kinds = game_names()
    with app.db.transaction() as session:
        for number in numbers:
            address = f"racer{number}@p{number}.example.net"
            practice.start(app.shell, session, address, practice.check(session, app.shell, address, kinds[number % 3]))
    app.service.send()


def _idle_tick(app: TestApp) -> tuple[int, int, int]:
    """The statements one tick sends (the tick a minute after the one that follows a start),
    the Python function calls it makes, and the outbox rows it writes; the tick resolves
    nothing (nothing is due)."""
    assert isinstance(app.clock, FakeClock)
    app.clock.advance(timedelta(minutes=1))
    assert app.service.tick() == []
    app.clock.advance(timedelta(minutes=1))
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    with app.db.read() as session:
        before = session.scalar(select(func.count()).select_from(Outbox)) or 0
    profile = cProfile.Profile()
    event.listen(app.db.engine, "before_cursor_execute", count)
    try:
        profile.enable()
        resolved = app.service.tick()
    finally:
        profile.disable()
        event.remove(app.db.engine, "before_cursor_execute", count)
    assert resolved == []
    with app.db.read() as session:
        after = session.scalar(select(func.count()).select_from(Outbox)) or 0
    calls = sum(entry.callcount for entry in profile.getstats())  # pstats.Stats' total_calls
    return len(sent), calls, after - before


def test_the_ticks_work_for_idle_practice_races_does_not_grow_with_their_number(gapp: TestApp) -> None:
    _start(gapp, range(2))
    few, calls_few, letters_few = _idle_tick(gapp)
    _start(gapp, range(2, 14))
    many, calls_many, letters_many = _idle_tick(gapp)
    assert letters_few == letters_many == 0, "an idle practice race gets no letter from the tick"
    assert many == few, f"{few} statements with 2 live practice races, {many} with 14"
    assert calls_many - calls_few <= 12 * CALLS_PER_GAME, f"{calls_few} function calls with 2, {calls_many} with 14"
