"""What the turn worker reads for a chunk of due turns (`bot.games.deadline.work_out_due`): the
games with their seats and players as the ORM's relationship loads have them, in fewer
statements and nothing left for a letter to load lazily; a due turn's state decoded once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import selectinload

from bot import store
from bot.games import deadline, turns
from bot.models import Game, Seat, Turn
from bot.testing import FakeClock, TestApp
from rules import find_game
from tests.bot import gm_helpers

gapp = gm_helpers.gapp
rc = gm_helpers.rc


def _seen(games: dict[int, Game]) -> list[tuple[object, ...]]:
    return [
        (
            game.id,
            game.name,
            tuple((s.id, s.name, s.game is game, s.player.id, s.player.address, s.player.timezone) for s in game.seats),
        )
        for _, game in sorted(games.items())
    ]


def test_games_with_seats_reads_what_the_relationships_load_in_two_statements(rc: TestApp) -> None:
    with rc.db.read() as session:
        loaded = {
            g.id: g for g in session.scalars(select(Game).options(selectinload(Game.seats).selectinload(Seat.player)))
        }
        for game in loaded.values():
            for seat in game.seats:
                assert seat.game is game
        expected = _seen(loaded)
    assert expected and all(seats for _, _, seats in expected)
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):  # not the snapshot's BEGIN
            sent.append(statement)

    with rc.db.read() as session:
        event.listen(rc.db.engine, "before_cursor_execute", count)
        try:
            games = store.games_with_seats(session, [*loaded, 10_000])  # a game that is not there: left out
            read = len(sent)
            seen = _seen(games)
        finally:
            event.remove(rc.db.engine, "before_cursor_execute", count)
    assert seen == expected
    assert read == 2, sent
    assert len(sent) == 2, "a seat's player, its game or a game's seats loaded lazily afterwards"


def test_a_due_turns_state_is_decoded_once_as_it_is_worked_out(rc: TestApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deciding that it is due, when it closed, resolving it and its letters' picture (the
    game's first turn) share one decoding of the turn's state; the mails are made all the same."""
    assert isinstance(rc.clock, FakeClock)
    rc.clock.advance(timedelta(days=3))
    shell = rc.shell
    with rc.db.read() as session:
        due = turns.due_ids(session, shell.now(), pace=deadline._pace(shell), early_unread=True)
        states = {turn_id: session.get_one(Turn, turn_id).state for _, turn_id in due}
    assert len(due) == 1
    rules = type(find_game("racecraft"))
    decoded: list[object] = []
    load_state = rules.load_state

    def counted(self: Any, data: Any) -> Any:
        decoded.append(data)
        return load_state(self, data)

    monkeypatch.setattr(rules, "load_state", counted)
    (worked,) = deadline.work_out_due(shell, due)
    assert worked.mails and worked.pictures
    assert [data for data in decoded if data == states[due[0][1]]] == [states[due[0][1]]]
