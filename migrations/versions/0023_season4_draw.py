"""a series' next season, stored as drawn

* season_draw: the draw of a series' next season, stored when it is first shown (the GM's
  digest, SEASON <game> NEXT, flagman season next), so that confirming makes the draw shown;
  `basis` what it was drawn from, so that a correction since shows it stale.

Revision ID: 0023_season4
Revises: 0022_talk4
Create Date: 2026-12-06 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_season4"
down_revision = "0022_talk4"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "season_draw",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("series", sa.String(40), nullable=False),
        sa.Column("edition", sa.Integer(), nullable=False),
        sa.Column("drawn", sa.JSON(), nullable=False),
        sa.Column("basis", sa.JSON(), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_season_draw")),
        sa.UniqueConstraint("series", "edition", name=op.f("uq_season_draw_series")),
    )
    with op.batch_alter_table("season_draw", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_season_draw_series"), ["series"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("season_draw", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_season_draw_series"))
    op.drop_table("season_draw")
