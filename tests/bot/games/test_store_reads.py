"""The reads the turn worker's chunk is made of (bot.store): the same values as the ORM's
relationship loads, in fewer statements, and nothing left for a letter to load lazily."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, select
from sqlalchemy.orm import selectinload

from bot import store
from bot.models import Game, Seat
from bot.testing import TestApp
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
