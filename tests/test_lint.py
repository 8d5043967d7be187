"""The house rules that tools check: ruff (lint and format) over the tree, mypy over the code (strict)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    """conventions.md: everything configured in pyproject.toml; DTZ (aware datetimes only) included."""
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-5000:]


def test_the_tree_is_formatted_as_ruff_format_writes_it() -> None:
    """Issue 28: `ruff format` enforced (its settings in pyproject.toml: 120 columns); run
    `ruff format .` before committing."""
    done = run("ruff", "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-5000:]


def test_mypy_passes_strict_on_rules_and_on_the_shell() -> None:
    """conventions.md: mypy strict on rules/; pyproject.toml makes it strict, and names what it
    checks (rules/ and bot/), so a bare `mypy` checks the same. Without its cache
    (`--no-incremental`): the verdict is a whole check's whatever a .mypy_cache holds, and CI's
    fresh clone has no cache to gain from."""
    done = run("mypy", "--no-incremental")
    assert done.returncode == 0, done.stdout[-5000:]
