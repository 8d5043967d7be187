"""seats that changed hands

* seat.handed_over: true once the GM's REPLACE gave the seat to another person, or a person of
  the substitutes bench took it; the letters
  then show the seat as "<seat> (<holder's name>)" where a person reads it (standings,
  events, results, the turn sheet), the rules keeping the seat's name as its key.

Revision ID: 0022_talk4
Revises: 0021_ratings
Create Date: 2026-12-06 20:55:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_talk4"
down_revision = "0021_ratings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("handed_over", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("handed_over")
