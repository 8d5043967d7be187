"""the commitment log of every game's dice (issue 39)

* commitment: every commitment ever made to a turn's dice, in the order made, each chained to
  the one before (rules/fair.py, `log_head`): when the turn opened or a ROLLBACK reopened it,
  the secret once revealed, what became of it, and when the bot's archive published it. The
  turns opened before get one entry each (why ``recorded``, made at the turn's opening), so
  that a game's log holds every turn with a secret.
* turn.dice_scheme: the derivation of the turn's digest, seed and receipts; 1 for the turns
  there are (they keep the one their mails were made with), 2 for those opened from now on. A
  resolved turn's scheme is also the one its stored seed was made with (bot.dice.scheme_of), so
  that going down to 0013 and up again loses nothing.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 01:00:00
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def _stamp(moment: datetime) -> str:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("dice_scheme", sa.Integer(), nullable=False, server_default="1"))
    commitment = op.create_table(
        "commitment",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.Integer(), sa.ForeignKey("game.id"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("why", sa.String(16), nullable=False),
        sa.Column("head", sa.String(64), nullable=False),
        sa.Column("secret", sa.String(64), nullable=True),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("fate", sa.String(16), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("game_id", "seq"),
    )
    op.create_index("ix_commitment_game_id", "commitment", ["game_id"])
    op.create_index("ix_commitment_published_at", "commitment", ["published_at"])
    # The log of the turns there are: one entry each, in the order of the turns.
    bind = op.get_bind()
    turns = sa.table(
        "turn",
        sa.column("game_id", sa.Integer()),
        sa.column("number", sa.Integer()),
        sa.column("label", sa.String()),
        sa.column("secret", sa.String()),
        sa.column("opened_at", sa.DateTime(timezone=True)),
        sa.column("resolved_at", sa.DateTime(timezone=True)),
    )
    games = sa.table("game", sa.column("id", sa.Integer()), sa.column("name", sa.String()))
    names = dict(bind.execute(sa.select(games.c.id, games.c.name)).all())
    rows = bind.execute(
        sa.select(turns).where(turns.c.secret.is_not(None)).order_by(turns.c.game_id, turns.c.number)
    ).all()
    heads: dict[int, tuple[int, str]] = {}
    entries = []
    for row in rows:
        seq, previous = heads.get(row.game_id, (0, "0" * 64))
        committed = hashlib.sha256(row.secret.encode("ascii")).hexdigest()
        made = row.opened_at
        text = f"flagman-log\n{previous}\n{names[row.game_id]}\n{row.number}\n{row.label}\n{committed}\n{_stamp(made)}\nrecorded"
        head = hashlib.sha256(text.encode("utf-8")).hexdigest()
        heads[row.game_id] = (seq + 1, head)
        resolved = row.resolved_at is not None
        entries.append(
            {
                "game_id": row.game_id,
                "seq": seq + 1,
                "number": row.number,
                "label": row.label,
                "commitment": committed,
                "made_at": made,
                "why": "recorded",
                "head": head,
                "secret": row.secret if resolved else None,
                "revealed_at": row.resolved_at if resolved else None,
                "fate": "resolved" if resolved else "open",
                "published_at": None,
            }
        )
    if entries:
        op.bulk_insert(commitment, entries)


def downgrade() -> None:
    op.drop_index("ix_commitment_published_at", table_name="commitment")
    op.drop_index("ix_commitment_game_id", table_name="commitment")
    op.drop_table("commitment")
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("dice_scheme")
