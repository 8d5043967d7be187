"""How many examples a slow Hypothesis property draws, by profile (tests/conftest.py): fewer in
the settled profile of `tests/run` and CI, all of them when exploring."""

from __future__ import annotations

import os


def examples(settled: int, explore: int) -> int:
    """`settled` in the settled profile (tests/run and CI: the same examples on every run of the
    same tree, derived from the test's name), `explore` otherwise (FLAGMAN_HYPOTHESIS=explore, a
    developer's plain pytest: fresh examples each run, to find what the settled ones miss).
    Explicit `@example`s run in both."""
    return settled if os.environ.get("FLAGMAN_HYPOTHESIS", "explore") == "settled" else explore
