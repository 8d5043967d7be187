"""One compiled form of each SQL statement for every SQLite engine of a test process.

SQLAlchemy keeps the statements an engine compiled in that engine's own cache, keyed by its
dialect object among the rest: a process that makes an engine for every test (each test's
database is a file of its own) compiles every statement again for every test, a sixth of what
a test that plays a game costs. `sharing_compiled` makes the engines of SQLite URLs share one
cache, keyed as SQLAlchemy keys it but with the dialect stood for by what it is made of (its
class, paramstyle and the SQLite library's version): every SQLite engine of the process is
made by `bot.db.make_engine` alike, so a statement compiled for one is the statement compiled
for any other. Other engines (PostgreSQL) keep their own caches.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.util import LRUCache

MakeEngine = Callable[..., Engine]


class _Shared:
    """An engine's compiled cache (`get` and item assignment, all SQLAlchemy asks of one) that
    reads and writes `store`, its dialect in each key stood for by `kind`."""

    def __init__(self, store: LRUCache[Any, Any], kind: tuple[object, ...]) -> None:
        self._store = store
        self._kind = kind

    def get(self, key: tuple[Any, ...], default: Any = None) -> Any:
        return self._store.get((self._kind, *key[1:]), default)

    def __setitem__(self, key: tuple[Any, ...], value: Any) -> None:
        self._store[(self._kind, *key[1:])] = value


def sharing_compiled(make_engine: MakeEngine) -> MakeEngine:
    """`make_engine`, the engines it makes for SQLite sharing one compiled cache."""
    store: LRUCache[Any, Any] = LRUCache(5000)

    def make(url: str, **kwargs: Any) -> Engine:
        engine = make_engine(url, **kwargs)
        dialect = engine.dialect
        if dialect.name == "sqlite":
            kind = (type(dialect), dialect.paramstyle, sqlite3.sqlite_version, tuple(sorted(kwargs)))
            engine.update_execution_options(compiled_cache=_Shared(store, kind))
        return engine

    return make
