"""robot drivers and practice games (issue 32)

* seat.robot: the seat is driven by the game's robot (`Game.robot_orders`): never mailed, its
  orders filed as soon as each turn opens (bot.games.robots).
* game.practice: a practice game (PRACTICE by mail): one person against robots; it counts for
  nothing, and is closed when left alone.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 02:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("robot", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(sa.Column("practice", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("practice")
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("robot")
