"""mail that lands, deadlines in the calendar (issue 19)

* player.calendar: CALENDAR ON|OFF, whether turn sheets carry the deadline as a calendar event;
* seat.reminders_off_for: the player who stopped the seat's reminders (List-Unsubscribe or
  REMINDERS OFF); reminders go again once the seat has another holder;
* turn.calendar_sequence: the SEQUENCE of the turn's calendar event, up by one each time the
  GM moves its deadline.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-10 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.add_column(sa.Column("calendar", sa.Boolean(), nullable=False, server_default=sa.true()))
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reminders_off_for", sa.Integer(), nullable=True))
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("calendar_sequence", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("calendar_sequence")
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("reminders_off_for")
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.drop_column("calendar")
