"""the GM's side: reminder schedule, NMR-streak limit per game; the digest log

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        # When reminders go to seats with nothing on file: durations before the deadline.
        batch_op.add_column(sa.Column("reminder_spec", sa.String(length=120), nullable=False, server_default="24h,2h"))
        # After this many missed turns in a row the seat is dropped or handed to the GM (NULL: never).
        batch_op.add_column(sa.Column("nmr_limit", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("nmr_action", sa.String(length=16), nullable=False, server_default="gm"))
    op.create_table(
        "gm_digest",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("gm_address", sa.String(length=320), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gm_digest")),
    )
    with op.batch_alter_table("gm_digest", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_gm_digest_gm_address"), ["gm_address"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("gm_digest", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gm_digest_gm_address"))
    op.drop_table("gm_digest")
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("nmr_action")
        batch_op.drop_column("nmr_limit")
        batch_op.drop_column("reminder_spec")
