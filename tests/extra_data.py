"""Test data that only some machines have, and the rule for it.

The external real-client email corpus (testing.md, "What real mail looks like") lies beside a
clone of this repository on the project's own machines (`<repo>/../shared/email-corpus`, or
wherever $FLAGMAN_EMAIL_CORPUS says), never in a clone from a public host. The project's own
fixtures (tests/data/mail/) cover what the corpus checks; the corpus is an extra run:

* present: its tests run;
* absent: they are not collected, and the run ends with one line saying so;
* absent where a run requires it ($FLAGMAN_REQUIRE_CORPUS=1, which `.ci/run` sets): they are
  collected and FAIL, never skip.

Any other data that only some machines have gets an `ExtraData` entry here and the same rule.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class ExtraData:
    """A folder of test data that some machines have, the test modules that need it, and the
    environment variables that place it and require it."""

    what: str
    place_env: str
    default: Path
    require_env: str
    modules: tuple[str, ...]  # paths relative to the repository

    @property
    def path(self) -> Path:
        return Path(os.environ.get(self.place_env) or self.default).resolve()

    @property
    def present(self) -> bool:
        return self.path.is_dir()

    @property
    def required(self) -> bool:
        return os.environ.get(self.require_env) == "1"

    @property
    def runs(self) -> bool:
        """Whether its tests are collected: where it is present, or where a run requires it."""
        return self.present or self.required

    def needs(self, path: Path) -> bool:
        """Whether the test module at `path` needs this data."""
        return any(path.resolve() == (REPO / module).resolve() for module in self.modules)

    def not_run_line(self) -> str:
        return (
            f"{self.what}: not run, not found at {self.path} (set {self.place_env} to run it; "
            f"{self.require_env}=1, as .ci/run sets, makes it required)"
        )


EMAIL_CORPUS = ExtraData(
    what="the external real-client email corpus",
    place_env="FLAGMAN_EMAIL_CORPUS",
    default=REPO.parent / "shared" / "email-corpus",
    require_env="FLAGMAN_REQUIRE_CORPUS",
    modules=("tests/bot/mail_in/test_inbound_corpus.py",),
)

EXTRA_DATA = (EMAIL_CORPUS,)
