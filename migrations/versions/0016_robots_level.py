"""a robot seat's level (issue 40)

* seat.robot_level: how well the seat's robot drives (`rules.api.RobotLevel`: ``normal`` or
  ``easy``), given by ``--robot NAME:easy`` or ``PRACTICE <game> EASY``; ``normal`` for every
  seat there is (a person's seat keeps ``normal`` and never reads it).

Revision ID: 0016_robots
Revises: 0015_intake
Create Date: 2026-12-06 02:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_robots"
down_revision = "0015_intake"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("robot_level", sa.String(8), nullable=False, server_default="normal"))


def downgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("robot_level")
