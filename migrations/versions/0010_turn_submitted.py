"""who submitted first: the order the seats' final orders of a turn arrived (issue 32)

* turn.submitted: the seats whose orders on file were sent (by mail, or by the GM's ORDER), in
  the order their final sets arrived, written when the turn is resolved and handed to the
  rules (`rules.api.Game.resolve(..., submitted=)`): SpeedPhreakz's last tie-break, "whoever
  submitted first" (S16). Stored with the turn so that a replay is exact; NULL for turns
  resolved before it was kept (a replay then gives the rules none: seating order).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("submitted", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("submitted")
