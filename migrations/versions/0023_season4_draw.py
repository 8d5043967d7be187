"""a series' next season, stored as drawn

* season_draw: the draw of a series' next season, stored when it is first shown (the GM's
  digest, SEASON <game> NEXT, flagman season next), so that confirming makes the draw shown;
  `basis` what it was drawn from, so that a correction since shows it stale; `confirmed` the
  tiers whose GM confirmed it by mail (tiers with different GMs: made once all have).
* series_entry: a person who joined a series for its next season (JOIN <series> with no race
  open): a newcomer, drawn into its lowest tier.
* season.min_field: the least field of a tier's next race, robots filling it (0: none);
  season.bench_newcomers: the bench volunteers of the kind drawn in as newcomers (opt-in).

Revision ID: 0023_season4
Revises: 0022_talk4
Create Date: 2026-12-06 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_season4"
down_revision = "0022_talk4"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "season_draw",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("series", sa.String(40), nullable=False),
        sa.Column("edition", sa.Integer(), nullable=False),
        sa.Column("drawn", sa.JSON(), nullable=False),
        sa.Column("basis", sa.JSON(), nullable=False),
        sa.Column("confirmed", sa.JSON(), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_season_draw")),
        sa.UniqueConstraint("series", "edition", name=op.f("uq_season_draw_series")),
    )
    with op.batch_alter_table("season_draw", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_season_draw_series"), ["series"], unique=False)

    op.create_table(
        "series_entry",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("series", sa.String(40), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name=op.f("fk_series_entry_player_id_player")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_series_entry")),
        sa.UniqueConstraint("series", "player_id", name=op.f("uq_series_entry_series")),
    )
    with op.batch_alter_table("series_entry", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_series_entry_series"), ["series"], unique=False)
        batch_op.create_index(batch_op.f("ix_series_entry_player_id"), ["player_id"], unique=False)
    with op.batch_alter_table("season", schema=None) as batch_op:
        batch_op.add_column(sa.Column("min_field", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("bench_newcomers", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("season", schema=None) as batch_op:
        batch_op.drop_column("bench_newcomers")
        batch_op.drop_column("min_field")
    with op.batch_alter_table("series_entry", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_series_entry_player_id"))
        batch_op.drop_index(batch_op.f("ix_series_entry_series"))
    op.drop_table("series_entry")
    with op.batch_alter_table("season_draw", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_season_draw_series"))
    op.drop_table("season_draw")
