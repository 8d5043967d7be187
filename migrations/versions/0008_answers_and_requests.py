"""abuse by volume (issue 27): what became of each mail's answer, and requests awaiting a code

* inbound_message.answer: sent, none due, or withheld and why (rate limit, the caps on answers
  to unproven senders, a notice told today already), so that every mail not answered is
  recorded with its reason and the digest can count them;
* pending_request: a JOIN whose seat is made when the joining address answers a code, and an
  ADDRESS whose seats move when the new address answers and the old one had time to stop it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("answer", sa.String(length=24), nullable=False, server_default="none"))
    op.create_table(
        "pending_request",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("seat_ids", sa.JSON(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("old_address", sa.String(length=320), nullable=False, server_default=""),
        sa.Column("name", sa.String(length=200), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("effective_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_pending_request_game_id_game")),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name=op.f("fk_pending_request_player_id_player")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pending_request")),
    )
    with op.batch_alter_table("pending_request", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pending_request_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_pending_request_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_pending_request_player_id"), ["player_id"], unique=False)


def downgrade() -> None:
    op.drop_table("pending_request")
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.drop_column("answer")
