"""championship seasons (issue 42)

* season: a championship season: its kind of game, GM, scoring table (f1, cfr, linear,
  custom:<points>), dropped results, penalties (no-show, out by the NMR limit), races planned
  and tracks in rotation.
* season_race: its races, one game each, by round.

Revision ID: 0018_season
Revises: 0017_talk
Create Date: 2026-12-06 04:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_season"
down_revision = "0017_talk"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "season",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("gm_address", sa.String(320), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("scoring", sa.String(200), nullable=False),
        sa.Column("drop_results", sa.Integer(), nullable=False),
        sa.Column("no_show_penalty", sa.Integer(), nullable=False),
        sa.Column("nmr_penalty", sa.Integer(), nullable=False),
        sa.Column("races_planned", sa.Integer(), nullable=False),
        sa.Column("tracks", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_season")),
        sa.UniqueConstraint("name", name=op.f("uq_season_name")),
    )
    op.create_table(
        "season_race",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("season_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["season_id"], ["season.id"], name=op.f("fk_season_race_season_id_season")),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_season_race_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_season_race")),
        sa.UniqueConstraint("season_id", "round", name=op.f("uq_season_race_season_id")),
        sa.UniqueConstraint("game_id", name=op.f("uq_season_race_game_id")),
    )
    with op.batch_alter_table("season_race", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_season_race_season_id"), ["season_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("season_race", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_season_race_season_id"))
    op.drop_table("season_race")
    op.drop_table("season")
