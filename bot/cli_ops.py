"""Operator subcommands: doctor, backup, export, replay."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Nothing yet: the operator's commands land with the operations issue."""
