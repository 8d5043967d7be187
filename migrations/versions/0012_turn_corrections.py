"""results that replace earlier ones: how often a turn was rolled back (issue 29)

* turn.corrections: raised by ROLLBACK each time it reopens the turn; results of a turn with
  corrections > 0 say in subject and text that they replace the results sent before.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 01:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("corrections", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("corrections")
