"""Where the templates and migrations are: beside the source tree, or inside the wheel."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    packaged = _HERE / "_resources" / name
    if packaged.exists():
        return packaged
    return _HERE.parent / name


def templates_path() -> Path:
    return _find("templates")


def migrations_path() -> Path:
    return _find("migrations")


def alembic_ini_path() -> Path:
    return _find("alembic.ini")
