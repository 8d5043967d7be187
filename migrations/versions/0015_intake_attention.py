"""the GM's "needs your attention" items (issue 37, part B)

* gm_attention: what a GM should look at, one row each (bot.games.attention): a player's note
  or question for the GM, orders lost or withdrawn, orders re-sent and refused. The digest
  lists those since the last digest at its top; a GM's STATUS lists a game's.

Revision ID: 0015_intake
Revises: 0014
Create Date: 2026-12-06 02:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_intake"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gm_attention",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.Integer(), sa.ForeignKey("game.id"), nullable=False),
        sa.Column("seat", sa.String(40), nullable=True),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_gm_attention_game_id", "gm_attention", ["game_id"])
    op.create_index("ix_gm_attention_created_at", "gm_attention", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_gm_attention_created_at", table_name="gm_attention")
    op.drop_index("ix_gm_attention_game_id", table_name="gm_attention")
    op.drop_table("gm_attention")
