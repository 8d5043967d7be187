"""orders kept across a ROLLBACK; the claims a letter makes

* turn.carried: the orders sent for the turn after this one (a player's mail, the GM's ORDER)
  when a ROLLBACK reopened it: kept, and when it resolves again each is filed for the new turn
  where it stands against the corrected state, or withdrawn (the player and the GM told, the
  audit log keeping it). NULL when there are none.
* outbox.claims: what the letter claims about what happens next (bot.facts.Claims: which orders
  count for which seat and why, the deadline, whether the turn is resolved), beside its text,
  as JSON text.

Revision ID: 0017_talk
Revises: 0016_robots
Create Date: 2026-12-06 01:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_talk"
down_revision = "0016_robots"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("carried", sa.JSON(), nullable=True))
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claims", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_column("claims")
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("carried")
