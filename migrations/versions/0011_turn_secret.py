"""dice anyone can check: each turn's secret (issue 31)

* turn.secret: 64 hex digits drawn when the turn opens; its SHA-256 (the commitment) is on
  every sheet of the turn, and the results reveal it. At resolution the turn's dice seed
  (turn.seed) is worked out from it and the digest of the orders used (rules/fair.py). NULL
  for turns opened before: they keep the seed they were opened with.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("secret", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("secret")
