"""What `flagman doctor` says about each thing it checks: a finding, with its fix."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.Enum):
    OK = "ok"
    WARNING = "warning"
    PROBLEM = "PROBLEM"


@dataclass(frozen=True, slots=True)
class Finding:
    """``ok`` (checked and right), ``warning`` (works, worth knowing) or ``problem`` (must be
    fixed: the exit status is 1), in one area (inbox, outbox, database...), with its fix."""

    severity: Severity
    area: str
    text: str
    fix: str = ""


def ok(area: str, text: str) -> Finding:
    return Finding(Severity.OK, area, text)


def warning(area: str, text: str, fix: str = "") -> Finding:
    return Finding(Severity.WARNING, area, text, fix)


def problem(area: str, text: str, fix: str) -> Finding:
    return Finding(Severity.PROBLEM, area, text, fix)


def counted(count: int, one: str, many: str) -> str:
    """`count` and what it counts, singular for one: "1 sent mail body", "5 sent mail bodies"."""
    return f"{count} {one if count == 1 else many}"
