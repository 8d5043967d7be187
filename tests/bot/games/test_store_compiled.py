"""The deadline's reads of a chunk's resolution inputs (`store.resolution_inputs_of`, and one
turn's, locked or not) are compiled once by an engine, whatever the number of turns each asks
for: the lists are expanded into the compiled statement as it runs, never compiled into a new
one. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.sql import compiler

from bot import store
from bot.db import Database

pytestmark = pytest.mark.both_databases  # the store's own behaviour: SQLite and PostgreSQL


def test_the_inputs_reads_compile_once_whatever_the_number_of_turns(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled: list[str] = []
    init = compiler.SQLCompiler.__init__

    def counted(self: compiler.SQLCompiler, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        compiled.append(self.string)

    monkeypatch.setattr(compiler.SQLCompiler, "__init__", counted)
    db = Database(db_url)
    try:

        def read_all(turns: list[tuple[int, int]]) -> None:
            with db.read() as session:
                assert store.resolution_inputs_of(session, turns) == {t: () for _, t in turns}
                assert store.resolution_inputs_of(session, turns, lock=True) == {t: () for _, t in turns}
                for game_id, turn_id in turns:
                    assert store.resolution_inputs(session, game_id, turn_id) == ()
                    assert store.resolution_inputs(session, game_id, turn_id, lock=True) == ()

        read_all([(1, 1)])  # no such turns: the same statements, no rows
        first = len(compiled)
        assert first <= 4
        for size in (2, 3, 17, 1, 40):
            read_all([(g, 1000 + g) for g in range(1, size + 1)])
        assert compiled[first:] == []
    finally:
        db.dispose()
