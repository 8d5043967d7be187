"""`turns.due_turns` passes over open turns on their columns alone (`turns.may_be_due`; it bounds
the tick's cost per live practice game), and still finds exactly the turns `turns.is_due` finds
when it reads every one: games with deadlines, with and without early resolution, a turn held
by a WAIT, robots, a Racecraft final sprint that nobody orders in, and practice races before
and after their pace -- checked minute by minute over many ticks against the reading of every
open turn."""

from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from bot.games import deadline, practice, turns
from bot.models import Game, GameStatus, Turn
from bot.testing import FakeClock, TestApp, reply_to
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, RACERS, cycle, mails, player_says

gapp = gm_helpers.gapp


def _every_open_turn_read(app: TestApp) -> set[int]:
    """The open turns `is_due` finds due when it reads every one (the tick's rule, unfiltered)."""
    pace = turns.practice_pace(app.settings.practice)
    with app.db.read() as session:
        rows = session.execute(
            select(Game, Turn)
            .join(Turn, Turn.game_id == Game.id)
            .where(Game.status == GameStatus.ACTIVE, Turn.resolved_at.is_(None))
            .options(selectinload(Game.seats))
        ).all()
        return {t.id for g, t in rows if turns.is_due(session, g, t, app.clock.now(), pace=pace)}


def _found(app: TestApp) -> set[int]:
    with app.db.read() as session:
        pace = turns.practice_pace(app.settings.practice)
        return {t.id for _, t in turns.due_turns(session, app.clock.now(), pace=pace)}


def test_due_turns_finds_what_reading_every_open_turn_finds(gapp: TestApp) -> None:
    assert isinstance(gapp.clock, FakeClock)
    with gapp.db.transaction() as session:
        for name, early in (("rc1", False), ("rc2", True), ("rc3", True)):
            turns.create_game(
                gapp.shell,
                session,
                kind="racecraft",
                name=name,
                players=RACERS[:3],
                robot_seats=("ada", "babbage"),
                gm_address=GM,
                deadline="24h",
                seed=5,
                early_resolution=early,
            )
        for address, kind in (("pat@example.net", "racecraft"), ("sam@example.net", "speedphreakz")):
            practice.start(gapp.shell, session, address, practice.check(session, gapp.shell, address, kind))
    gapp.service.send()
    seats = [seat.seat for seat in RACERS[:3]]
    checked = 0
    for step in range(40):
        for game in ("rc1", "rc2", "rc3"):
            seat = seats[step % len(seats)]
            text = "WAIT" if (game == "rc3" and step == 4) else ("CRUISE" if step > 3 else "USE 2")
            if step % 3 == 0:
                player_says(gapp, seat, text, game=game, address=ADDRESS[seat])
        for person in ("pat@example.net", "sam@example.net"):
            latest = [m for m in mails(gapp, person) if m["Reply-To"] is not None]
            if latest and step % 2 == 0:
                gapp.inbox.deliver(reply_to(latest[-1], "USE 2", sender=person, quote=False))
                gapp.service.poll()
        for moved in (False, True, True):  # before the clock moves, and after each move
            if moved:
                gapp.clock.advance(timedelta(minutes=1) if step % 5 else timedelta(hours=7))
            found = _found(gapp)
            assert found == _every_open_turn_read(gapp), step
            # The deadline's list: every due turn, and turns that may resolve early, unread.
            with gapp.db.read() as session:
                pace = turns.practice_pace(gapp.settings.practice)
                unread = turns.due_ids(session, gapp.clock.now(), pace=pace, early_unread=True)
            assert found <= {turn_id for _, turn_id in unread}, step
            checked += len(found)
        cycle(gapp)
    assert checked > 0, "some turns were due along the way"


@given(st.integers(min_value=0, max_value=200), st.integers(min_value=1, max_value=30))
@settings(max_examples=60, deadline=None)
def test_the_due_turns_are_chunked_small_first_then_at_most_tick_chunk(count: int, tick_chunk: int) -> None:
    """Every due turn in exactly one chunk, in order; a tick of `TICK_CHUNK` turns or fewer in
    one chunk (worked out in the service's process); a bigger one starting with a chunk of at
    most `FIRST_CHUNK`, the chunks doubling up to `TICK_CHUNK` (its first mail goes out while the
    rest are worked out)."""
    due = [(n, n + 1000) for n in range(count)]
    chunks = deadline.chunked(due, tick_chunk)
    assert [pair for chunk in chunks for pair in chunk] == due
    assert all(0 < len(chunk) <= tick_chunk for chunk in chunks)
    if count <= tick_chunk:
        assert len(chunks) == (1 if count else 0)
    else:
        assert len(chunks[0]) <= deadline.FIRST_CHUNK
        sizes = [len(chunk) for chunk in chunks[:-1]]
        assert all(b == min(2 * a, tick_chunk) for a, b in itertools.pairwise(sizes))
