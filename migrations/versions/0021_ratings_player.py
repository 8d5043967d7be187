"""ratings: a player's RATING ON|OFF

* player.rating: whether the player's rating is shown to them (off until they ask).

Revision ID: 0021_ratings
Revises: 0020_season2a
Create Date: 2026-12-06 20:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021_ratings"
down_revision = "0020_season2a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.add_column(sa.Column("rating", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.drop_column("rating")
