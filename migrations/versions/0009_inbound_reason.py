"""the house (issue 28): why each mail ended as it did, in a column

inbound_message.reason (bot.models.Reason): what the digest lists a mail under and what the
limits count, selected on instead of matching the words of `detail`. Mail recorded before this
migration gets its reason from those words, as the code read them until now.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 13:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# (reason, the words `detail` began with), as bot.gm.digest and bot.intake matched them.
_FROM_DETAIL = (
    ("bounce", "bounce"),
    ("unknown sender", "unknown sender"),
    ("authentication failed", "authentication failed"),
    ("rate limit", "rate limit"),
    ("over the size limit", "over the size limit"),
    ("auto-reply", "auto-reply"),
    ("bulk", "bulk"),
    ("loop", "loop"),
    ("own mail", "own mail"),
    ("no sender", "no sender"),
    ("several senders", "several senders"),
    ("unparseable", "unparseable"),
    ("calendar reply", "calendar reply"),
    ("for anyone", "for anyone: "),
    ("commands", "commands: "),
    ("join refused", "JOIN refused"),
    ("orders", "orders"),
)


def upgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reason", sa.String(length=32), nullable=False, server_default=""))
        batch_op.create_index(batch_op.f("ix_inbound_message_reason"), ["reason"], unique=False)
    table = sa.table("inbound_message", sa.column("reason", sa.String), sa.column("detail", sa.Text))
    for reason, words in _FROM_DETAIL:
        op.execute(
            table.update()
            .where(table.c.reason == "", table.c.detail.startswith(words, autoescape=True))
            .values(reason=reason)
        )


def downgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inbound_message_reason"))
        batch_op.drop_column("reason")
