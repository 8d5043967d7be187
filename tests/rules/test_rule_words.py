"""The games' words name a rule in words, never by the number it has in the design notes
("§5", "S10", "P4"): players and GMs have the game's own rules, not the design
(no "'§5' references players do not have")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

RULES = Path(__file__).resolve().parents[2] / "rules"
DESIGN_NUMBER = re.compile(r"§\s?\d|\b[SP]\d{1,2}\b(?=[);:,])")


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            found.add(id(node.value))  # a docstring or a bare string statement: never printed
    return found


def test_no_text_the_games_print_cites_a_design_number() -> None:
    """Every string the rules can print (events, refusals, help, option help, the GM's stall
    notice) is checked; comments and docstrings may cite the design."""
    cited = []
    for path in sorted(RULES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if DESIGN_NUMBER.search(node.value):
                    cited.append(f"{path.relative_to(RULES)}:{node.lineno}: {node.value[:80]!r}")
    assert cited == []
