"""Helpers shared by the shell's and the end-to-end tests."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

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


def unavailable(what: str, why: object) -> None:
    """A server or test data that a test needs is missing: the test FAILS (CI must never pass by
    skipping). FLAGMAN_ALLOW_SKIP_SERVERS=1 turns that into a skip on a developer's machine, unless
    FLAGMAN_REQUIRE_SERVERS=1 (which tests/run sets) says otherwise."""
    message = f"{what} could not be started:\n{why}" if isinstance(why, BaseException) else f"{what}: {why}"
    allow_skip = os.environ.get("FLAGMAN_ALLOW_SKIP_SERVERS") == "1"
    required = os.environ.get("FLAGMAN_REQUIRE_SERVERS") == "1"
    if allow_skip and not required:
        pytest.skip(message)
    pytest.fail(message, pytrace=False)
