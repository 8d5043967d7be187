"""tests/compiled_sql.py: the SQLite engines of a test process share what they compiled, and
each still reads its own database."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Integer, MetaData, Table, insert, select

from bot.db import make_engine
from tests.compiled_sql import sharing_compiled

ROWS = Table("rows", MetaData(), Column("x", Integer))


def test_a_statement_compiled_for_one_sqlite_engine_is_a_cache_hit_for_the_next_on_its_own_file(
    tmp_path: Path,
) -> None:
    make = sharing_compiled(make_engine)
    hits = []
    for n in (1, 2):
        engine = make(f"sqlite:///{tmp_path / f'{n}.sqlite'}")
        try:
            with engine.begin() as conn:
                ROWS.create(conn)
                conn.execute(insert(ROWS), [{"x": n}] * n)
                result = conn.execute(select(ROWS.c.x))
                assert result.scalars().all() == [n] * n
                hits.append(result.context.cache_hit)
        finally:
            engine.dispose()
    plain = make_engine(f"sqlite:///{tmp_path / '3.sqlite'}")
    try:
        with plain.begin() as conn:
            ROWS.create(conn)
            hits.append(conn.execute(select(ROWS.c.x)).context.cache_hit)
    finally:
        plain.dispose()
    dialect = plain.dialect
    assert hits == [dialect.CACHE_MISS, dialect.CACHE_HIT, dialect.CACHE_MISS]
