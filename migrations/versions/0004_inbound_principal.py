"""inbound_message.principal: whom a mail proved itself to be, so rate limits count per principal

Mail that proved nobody (a forged From) must never spend the allowance of the seat or GM it
pretends to be (issue 14). Rows from before this revision are unauthenticated as far as the
limits are concerned ("").

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("principal", sa.String(length=340), nullable=False, server_default=""))
        batch_op.create_index("ix_inbound_message_principal", ["principal"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.drop_index("ix_inbound_message_principal")
        batch_op.drop_column("principal")
