"""`--set SECTION.KEY=VALUE` of `python -m bench` and `bench.tick`: settings sections from the
command line."""

from __future__ import annotations

import tomllib
from typing import Any


def overrides(assignments: list[str]) -> dict[str, dict[str, Any]]:
    """``SECTION.KEY=VALUE`` strings as settings sections; VALUE is read as TOML (1, 0.5, true,
    "text"), and as a plain string if it is not TOML."""
    out: dict[str, dict[str, Any]] = {}
    for assignment in assignments:
        name, sep, raw = assignment.partition("=")
        section, dot, key = name.strip().partition(".")
        if not sep or not dot or not section or not key:
            raise ValueError(f"--set {assignment!r}: write SECTION.KEY=VALUE, e.g. schedule.resolve_workers=0")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        out.setdefault(section, {})[key] = value
    return out
