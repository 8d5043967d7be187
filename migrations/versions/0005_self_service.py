"""self-service by mail (issue 17): the press setting of a game, a player's vacation, observers

* game.press: what PRESS may do in the game, the GM's choice (none, signed, anonymous);
* player.vacation_from / vacation_to: VACATION <from> <to>, days in the player's zone: a
  missed turn then gets the NMR default without counting towards the NMR limit;
* observer: the addresses that get a game's public results (OBSERVE, confirmed first).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-08 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(sa.Column("press", sa.String(length=16), nullable=False, server_default="signed"))
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.add_column(sa.Column("vacation_from", sa.Date(), nullable=True))
        batch_op.add_column(sa.Column("vacation_to", sa.Date(), nullable=True))
    op.create_table(
        "observer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_observer_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_observer")),
        sa.UniqueConstraint("game_id", "address", name=op.f("uq_observer_game_id")),
    )
    with op.batch_alter_table("observer", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_observer_game_id"), ["game_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("observer", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_observer_game_id"))
    op.drop_table("observer")
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.drop_column("vacation_to")
        batch_op.drop_column("vacation_from")
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("press")
