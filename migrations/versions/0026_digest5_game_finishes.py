"""how many times a game finished, and how many of those its GM's digest listed

* game.finishes: how many times the game has finished (a ROLLBACK reopens a finished game;
  resolved again, it finishes anew, with a corrected result).
* game.finishes_listed: how many of those finishes its GM's digest has listed. The digest
  lists a finished game while `finishes_listed < finishes`, then sets them equal: each finish
  in exactly one digest, the first after it, "corrected" when it is not the first.
* A game finished before this migration counts as finished once and listed (its digest, by
  the window of its day, has been sent or was due).

Revision ID: 0026_digest5
Revises: 0025_outbox
Create Date: 2026-12-07 04:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026_digest5"
down_revision = "0025_outbox"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(sa.Column("finishes", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("finishes_listed", sa.Integer(), nullable=False, server_default="0"))
    op.execute("UPDATE game SET finishes = 1, finishes_listed = 1 WHERE status = 'finished'")


def downgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("finishes_listed")
        batch_op.drop_column("finishes")
