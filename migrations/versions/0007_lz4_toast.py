"""the large columns compressed with lz4 on PostgreSQL (bench: deadline)

Every results mail (about 30 KB: text, HTML and the picture) is stored in outbox.data, and
each turn's state in turn.state/state_after. PostgreSQL compresses a value over 2 KB before
storing it, by default with pglz, which costs the server about 0.8 ms a results mail; lz4
takes less than half of that and stores them smaller (measured on the bench's mails: 9 rows
of 30 KB, 7.7 ms with pglz, 3.0 ms with lz4, 11% less space). Values already stored keep
their compression; new ones use lz4.

Only on PostgreSQL 14 and later built with lz4 (Debian's is): elsewhere nothing changes.
SQLite stores values as they are.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-12 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

COLUMNS = (
    ("outbox", "data"),
    ("quarantine", "raw"),
    ("turn", "state"),
    ("turn", "state_after"),
    ("turn", "events"),
    ("gm_audit", "undo"),
)


def _lz4_supported() -> bool:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return False
    values = bind.execute(sa.text("SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'")).scalar()
    return values is not None and "lz4" in values


def _set(method: str) -> None:
    for table, column in COLUMNS:
        op.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET COMPRESSION {method}')


def upgrade() -> None:
    if _lz4_supported():
        _set("lz4")


def downgrade() -> None:
    if _lz4_supported():
        _set("pglz")
