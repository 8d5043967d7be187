"""Helpers shared by the shell's and the end-to-end tests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from bot.db import migrate

_serial = itertools.count(1)


def fresh_database(kind: str, tmp_path: Path, postgres: Any = None) -> str:
    """A migrated database URL: a SQLite file in tmp_path, or a new database on `postgres`."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / f'flagman-{next(_serial)}.sqlite'}"
    else:
        url = postgres.create_database(f"flagman_test_{next(_serial)}")
    migrate(url)
    return str(url)
