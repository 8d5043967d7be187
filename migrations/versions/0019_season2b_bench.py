"""the reliability record and the substitutes bench (issue 42)

* game.min_reliability: the entry gate (the least on-time ratio a JOIN's person must have).
* seat_change: a seat leaving its holder under way (REPLACE, RESIGN, the NMR limit, DROP, the
  bench): who held it, who holds it after, the turn open then, when and why.
* substitute: the substitutes bench, a person and a kind of game.
* seat_offer: a seat offered to the bench, and who took it.

Revision ID: 0019_season2b
Revises: 0018_season
Create Date: 2026-12-06 20:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019_season2b"
down_revision = "0018_season"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(sa.Column("min_reliability", sa.String(12), nullable=True))
    op.create_table(
        "seat_change",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("successor_id", sa.Integer(), nullable=True),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("why", sa.String(16), nullable=False),
        sa.ForeignKeyConstraint(["seat_id"], ["seat.id"], name=op.f("fk_seat_change_seat_id_seat")),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_seat_change_game_id_game")),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name=op.f("fk_seat_change_player_id_player")),
        sa.ForeignKeyConstraint(["successor_id"], ["player.id"], name=op.f("fk_seat_change_successor_id_player")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seat_change")),
    )
    with op.batch_alter_table("seat_change", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_seat_change_seat_id"), ["seat_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_seat_change_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_seat_change_player_id"), ["player_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_seat_change_successor_id"), ["successor_id"], unique=False)
    op.create_table(
        "substitute",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name=op.f("fk_substitute_player_id_player")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_substitute")),
        sa.UniqueConstraint("player_id", "kind", name=op.f("uq_substitute_player_id")),
    )
    with op.batch_alter_table("substitute", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_substitute_player_id"), ["player_id"], unique=False)
    op.create_table(
        "seat_offer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("why", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("taken_by", sa.Integer(), nullable=True),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_seat_offer_game_id_game")),
        sa.ForeignKeyConstraint(["seat_id"], ["seat.id"], name=op.f("fk_seat_offer_seat_id_seat")),
        sa.ForeignKeyConstraint(["taken_by"], ["player.id"], name=op.f("fk_seat_offer_taken_by_player")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seat_offer")),
    )
    with op.batch_alter_table("seat_offer", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_seat_offer_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_seat_offer_seat_id"), ["seat_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_seat_offer_status"), ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("seat_offer", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seat_offer_status"))
        batch_op.drop_index(batch_op.f("ix_seat_offer_seat_id"))
        batch_op.drop_index(batch_op.f("ix_seat_offer_game_id"))
    op.drop_table("seat_offer")
    with op.batch_alter_table("substitute", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_substitute_player_id"))
    op.drop_table("substitute")
    with op.batch_alter_table("seat_change", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seat_change_successor_id"))
        batch_op.drop_index(batch_op.f("ix_seat_change_player_id"))
        batch_op.drop_index(batch_op.f("ix_seat_change_game_id"))
        batch_op.drop_index(batch_op.f("ix_seat_change_seat_id"))
    op.drop_table("seat_change")
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("min_reliability")
