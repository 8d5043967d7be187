"""seat.reply_salt: renewed when a seat changes hands, so old reply addresses stop working

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 16:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reply_salt", sa.String(length=32), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("reply_salt")
