"""ratings2: the ratings stored

* rating_kind: per kind of game, what the stored ratings count (the rated races and a digest
  of their game numbers in order);
* stored_rating: each person's mu, sigma and rated races per kind of game.

Both start empty: until a kind's next rated final (or `flagman rating rebuild`), its ratings
are worked out from the archived results as before.

Revision ID: 0024_ratings2
Revises: 0023_season4
Create Date: 2026-12-06 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024_ratings2"
down_revision = "0023_season4"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rating_kind",
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("kind", name=op.f("pk_rating_kind")),
    )
    op.create_table(
        "stored_rating",
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name=op.f("fk_stored_rating_player_id_player")),
        sa.PrimaryKeyConstraint("kind", "player_id", name=op.f("pk_stored_rating")),
    )
    with op.batch_alter_table("stored_rating", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_stored_rating_player_id"), ["player_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("stored_rating", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stored_rating_player_id"))
    op.drop_table("stored_rating")
    op.drop_table("rating_kind")
