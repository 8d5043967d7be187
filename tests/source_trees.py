"""Python sources parsed once a test session: the static checks (tests/test_architecture.py,
test_words_in_letters.py, test_claims_from_outlook.py, test_lint.py, security/test_capabilities.py)
each walk the whole tree, and each source they read is parsed the first time only. A tree is
shared by every check that reads the same source text: the checks read it and never change it."""

from __future__ import annotations

import ast

_TREES: dict[str, ast.Module] = {}


def parsed(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, the same tree for the same text every time in this process
    (a source that does not parse raises as `ast.parse` does, with `filename`, every time)."""
    tree = _TREES.get(source)
    if tree is None:
        tree = _TREES[source] = ast.parse(source, filename)
    return tree
