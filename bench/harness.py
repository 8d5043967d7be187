"""The database steps the in-process harnesses share (`bench.tick`, `bench.send`,
`bench.ingest_cpu`): a fresh database to set up in, the set-up kept, and put back before each
run, so that every run starts from the same rows."""

from __future__ import annotations

import shutil
from pathlib import Path


def fresh_database(root: Path, url: str | None) -> str:
    """The database to set up in, migrated: the PostgreSQL database `url` emptied first, or
    (no `url`) SQLite in `root`."""
    from sqlalchemy import create_engine, text

    from bot.db import migrate

    if url:
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        engine.dispose()
    else:
        url = sqlite_url(root)
    migrate(url)
    return url


def sqlite_url(root: Path) -> str:
    return f"sqlite:///{root / 'work.sqlite'}"


def keep(root: Path, url: str) -> Path:
    """The database `url` as it is now, kept in `root` (`put_back` puts it back)."""
    pristine = root / "pristine"
    if url == sqlite_url(root):
        shutil.copy(root / "work.sqlite", pristine)
    else:
        _pg_dump(url, pristine)
    return pristine


def put_back(root: Path, url: str, pristine: Path) -> None:
    """The database `url` as `keep` kept it."""
    if url == sqlite_url(root):
        shutil.copy(pristine, root / "work.sqlite")
    else:
        _pg_restore(url, pristine)


def _pg_dump(url: str, path: Path) -> None:
    """Every table's rows of the PostgreSQL database, kept in memory-free form (a pickle of rows)."""
    import pickle

    from sqlalchemy import MetaData, create_engine

    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine)
    with engine.connect() as conn:
        data = {t.name: [dict(r._mapping) for r in conn.execute(t.select())] for t in meta.sorted_tables}
    engine.dispose()
    path.write_bytes(pickle.dumps(data))


def _pg_restore(url: str, path: Path) -> None:
    import pickle

    from sqlalchemy import MetaData, create_engine, text

    data = pickle.loads(path.read_bytes())
    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine)
    with engine.begin() as conn:
        names = ", ".join(f'"{t.name}"' for t in meta.sorted_tables)
        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        for table in meta.sorted_tables:
            if data.get(table.name):
                conn.execute(table.insert(), data[table.name])
        for table in meta.sorted_tables:
            for column in table.primary_key.columns:
                if column.autoincrement and isinstance(column.type.python_type, type):
                    conn.execute(
                        text(
                            f"SELECT setval(pg_get_serial_sequence('\"{table.name}\"', '{column.name}'), "
                            f'COALESCE(MAX("{column.name}"), 0) + 1, false) FROM "{table.name}"'
                        )
                    )
    engine.dispose()
