"""The house rules that tools check: ruff (lint and format) over the tree, mypy over the code (strict)."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.source_trees import parsed

REPO = Path(__file__).resolve().parents[1]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    """conventions.md: everything configured in pyproject.toml; DTZ (aware datetimes only) included."""
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-5000:]


def test_the_tree_is_formatted_as_ruff_format_writes_it() -> None:
    """`ruff format` enforced (its settings in pyproject.toml: 120 columns); run
    `ruff format .` before committing."""
    done = run("ruff", "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-5000:]


def test_mypy_passes_strict_on_the_whole_tree() -> None:
    """conventions.md: mypy strict on rules/; pyproject.toml makes it strict, and names what it
    checks (rules/, bot/, bench/ and tests/), so a bare `mypy` checks the same, and no module has
    its errors ignored (an override may only excuse a library that ships no types). Without its
    cache (`--no-incremental`): the verdict is a whole check's whatever a .mypy_cache holds, and
    CI's fresh clone has no cache to gain from."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True and {"bot", "rules", "bench", "tests"} <= set(config["files"])
    ignored = [override["module"] for override in config.get("overrides", []) if override.get("ignore_errors")]
    assert not ignored, ignored
    done = run("mypy", "--no-incremental")
    assert done.returncode == 0, done.stdout[-5000:]


# A comment or docstring that names an issue by number ("issue N", "Issues N, M", "issue #N").
CITES_AN_ISSUE = re.compile(r"\b[Ii]ssues? #?[0-9]")
MENTIONS_AN_ISSUE = re.compile("[Ii]ssue")
CITING_ROOTS = ("bot", "rules", "tests", "bench")


def comments_and_docstrings(source: str) -> Iterator[tuple[int, str]]:
    """Every comment of `source`, and every string that stands as a statement of its own (the
    docstrings of modules, classes and functions, and any other bare string), with its line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value


def issue_citations(source: str) -> list[int]:
    """The lines of `source` whose comment or docstring cites an issue (a source that never says
    "issue" anywhere is not read further)."""
    if not MENTIONS_AN_ISSUE.search(source):
        return []
    return sorted(line for line, text in comments_and_docstrings(source) if CITES_AN_ISSUE.search(text))


def test_comments_and_docstrings_cite_behaviour_not_issues() -> None:
    """conventions.md: comments and docstrings say what the code guarantees, never "issue N" or
    history: no comment or docstring in bot/, rules/, tests/ or bench/ names an issue by number."""
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for root in CITING_ROOTS
        for path in sorted((REPO / root).rglob("*.py"))
        for line in issue_citations(path.read_text(encoding="utf-8"))
    ]
    assert not found, found


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ('"""The cap holds (issue 14)."""\n', [1]),
        ('def f() -> None:\n    """As Issues 3 and 5 asked."""\n', [2]),
        ("x = 1  # see issue #27\n", [1]),
        ("x = 1  # see Issue 27\n", [1]),
        ('"""The cap holds."""\nx = "issue 14"  # a value, not a citation\n', []),
    ],
)
def test_the_citation_check_reads_comments_and_docstrings_only(source: str, lines: list[int]) -> None:
    assert issue_citations(source) == lines
