"""The schema: made only by the Alembic migrations, which agree with the models, both ways."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, inspect, text

from bot.db import alembic_config, current_revision, downgrade, head_revision, migrate
from bot.models import Base
from tests.helpers import fresh_database
from tests.servers import Postgres

pytestmark = pytest.mark.both_databases  # the store's own behaviour: SQLite and PostgreSQL


def test_the_migrations_make_exactly_the_models_schema(db_url: str) -> None:
    """architecture.md: a test checks that the models and the migrations agree."""
    engine = create_engine(db_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == [], f"models and migrations disagree: {diff}"


def test_every_revision_walks_down_and_back_up(db_url: str) -> None:
    """Mailman's habit: walk every revision down to the base and back up to the head."""
    script = ScriptDirectory.from_config(alembic_config(db_url))
    revisions = [r.revision for r in script.walk_revisions()]  # head first
    engine = create_engine(db_url)
    assert current_revision(engine) == head_revision()
    for revision in revisions[1:] + ["base"]:
        downgrade(db_url, revision)
        assert current_revision(engine) == (None if revision == "base" else revision)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    migrate(db_url)
    assert current_revision(engine) == head_revision()
    assert {t.name for t in Base.metadata.sorted_tables} <= set(inspect(engine).get_table_names())
    engine.dispose()


def _compression(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT c.relname || '.' || a.attname, a.attcompression FROM pg_attribute a "
                "JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname IN ('outbox', 'outbox_body', 'turn', 'quarantine', 'gm_audit') "
                "AND a.attnum > 0 AND NOT a.attisdropped"
            )
        )
        return {name: method for name, method in rows}


def test_the_large_columns_are_compressed_with_lz4_on_postgresql(postgres: Postgres, tmp_path: Path) -> None:
    """Migration 0007 (bench: deadline): a results mail is about 30 KB, which PostgreSQL
    compresses before storing it; lz4 costs the server less than half of pglz's time. Down
    again, the columns are back to pglz; the other columns keep the server's default. The mail
    bodies moved to a table of their own (0025_outbox) keep lz4 there, and again in
    outbox.data when moved back."""
    url = fresh_database("postgresql", tmp_path, postgres)
    engine = create_engine(url)
    others = {"quarantine.raw", "turn.state", "turn.state_after", "turn.events", "gm_audit.undo"}
    large = {"outbox_body.data", *others}
    try:
        methods = _compression(engine)
        assert {name for name, method in methods.items() if method == "l"} == large
        assert all(method == "" for name, method in methods.items() if name not in large)
        downgrade(url, "0024_ratings2")
        assert {name for name, method in _compression(engine).items() if method == "l"} == {"outbox.data", *others}
        downgrade(url, "0006")
        methods = _compression(engine)
        assert {name for name, method in methods.items() if method == "p"} == {"outbox.data", *others}
        migrate(url)
        assert {name for name, method in _compression(engine).items() if method == "l"} == large
    finally:
        engine.dispose()
