"""a season's series and tier (promotion and relegation between seasons)

* season.series: the series the season belongs to (existing seasons: their own name);
* season.tier (1 the top) and season.edition (the series' first season is 1);
* season.promote / season.relegate: how many of its top go up, of its bottom go down, when the
  series' next season is drawn.

Revision ID: 0020_season2a
Revises: 0019_season2b
Create Date: 2026-12-06 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020_season2a"
down_revision = "0019_season2b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("season", schema=None) as batch_op:
        batch_op.add_column(sa.Column("series", sa.String(40), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("tier", sa.Integer(), nullable=False, server_default="1"))
        batch_op.add_column(sa.Column("edition", sa.Integer(), nullable=False, server_default="1"))
        batch_op.add_column(sa.Column("promote", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("relegate", sa.Integer(), nullable=False, server_default="0"))
        batch_op.create_index(batch_op.f("ix_season_series"), ["series"], unique=False)
    op.execute("UPDATE season SET series = name WHERE series = ''")


def downgrade() -> None:
    with op.batch_alter_table("season", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_season_series"))
        batch_op.drop_column("relegate")
        batch_op.drop_column("promote")
        batch_op.drop_column("edition")
        batch_op.drop_column("tier")
        batch_op.drop_column("series")
