"""The core stays pure (architecture.md, "Enforced boundaries"): every module under rules/
imports only the standard library and rules.*, and reads no clock, no global random, no
files, no network and no processes."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[2] / "rules"
MODULES = sorted(RULES.rglob("*.py"))

FORBIDDEN_MODULES = {"time", "os", "socket", "subprocess", "shutil", "pathlib", "tempfile", "threading", "asyncio"}
CLOCK_CALLS = {"now", "today", "utcnow"}
FORBIDDEN_CALLS = {"open", "input", "print", "exec", "eval", "__import__"}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(RULES.parent).with_suffix("").parts)


def violations(source: str, module: str = "rules.example") -> list[str]:
    """Every impure construct in `source`, as ``line: what``."""
    found: list[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found += _check_import(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside rules/
                continue
            assert node.module is not None
            found += _check_import(node.lineno, node.module)
            if node.module == "random":
                found += [f"{node.lineno}: from random import {a.name}" for a in node.names if a.name != "Random"]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, attr = node.value.id, node.attr
            if owner == "random" and attr != "Random":
                found.append(f"{node.lineno}: random.{attr} (the global random)")
            if owner in ("datetime", "date") and attr in CLOCK_CALLS:
                found.append(f"{node.lineno}: {owner}.{attr} (the clock)")
            if owner in FORBIDDEN_MODULES:
                found.append(f"{node.lineno}: {owner}.{attr}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in CLOCK_CALLS
            and isinstance(node.value, ast.Attribute)
            and node.value.attr in ("datetime", "date")
        ):
            found.append(f"{node.lineno}: datetime.{node.value.attr}.{node.attr} (the clock)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(f"{node.lineno}: {node.func.id}(...)")
    return found


def _check_import(line: int, name: str) -> list[str]:
    top = name.split(".")[0]
    if top == "rules":
        return []
    if top not in sys.stdlib_module_names:
        return [f"{line}: import {name} (not the standard library)"]
    if top in FORBIDDEN_MODULES:
        return [f"{line}: import {name} (I/O, clock or processes)"]
    return []


def test_there_are_modules_to_check() -> None:
    """The walk finds the core (so the checks below cannot pass vacuously)."""
    names = {_module_name(path) for path in MODULES}
    assert {"rules.api", "rules.script", "rules.racecraft.resolve"} <= names


@pytest.mark.parametrize("path", MODULES, ids=_module_name)
def test_rules_module_is_pure(path: Path) -> None:
    """architecture.md: "`rules/` imports only the standard library (a test walks its
    imports)"; no clock, no global random, no I/O."""
    assert violations(path.read_text(encoding="utf-8"), _module_name(path)) == []


@pytest.mark.parametrize(
    "source",
    [
        "import time",
        "import requests",
        "from os import path",
        "import subprocess",
        "import socket",
        "import random\nx = random.randint(1, 6)",
        "import random\nrandom.shuffle(x)",
        "from random import choice",
        "import datetime\nx = datetime.datetime.now()",
        "from datetime import datetime\nx = datetime.utcnow()",
        "from datetime import date\nx = date.today()",
        "x = open('f')",
        "import os\nx = os.environ",
    ],
)
def test_the_checker_catches_impurity(source: str) -> None:
    """The checker itself: each of these is reported."""
    assert violations(source)


@pytest.mark.parametrize(
    "source",
    [
        "import random\ndef f(rng: random.Random) -> int:\n    return rng.randint(1, 6)",
        "from random import Random",
        "import hashlib, fractions",
        "from rules.api import Event",
        "from . import model",
        "from __future__ import annotations",
    ],
)
def test_the_checker_allows_pure_code(source: str) -> None:
    """The checker itself: the rng passed in, stdlib and rules.* imports are fine."""
    assert violations(source) == []
