"""The schema: made only by the Alembic migrations, which agree with the models, both ways."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from bot.db import alembic_config, current_revision, downgrade, head_revision, migrate
from bot.models import Base


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
