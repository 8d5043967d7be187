"""GM subcommands on the command line (the same commands the GM can send by mail)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Nothing yet: the GM's commands by CLI land with the GM issue."""
