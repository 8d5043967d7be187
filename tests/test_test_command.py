"""The README's test command on any clone, and CI's on the project's machines.

`tests/run` passes on a clone with nothing beside it: the external email corpus's tests are not
collected there and the run says so in one line. `.ci/run` requires the corpus: it stops at once
without it, and with it runs exactly `tests/run` with the corpus required, so a corpus that
vanishes in CI fails the run instead of shrinking it (tests/extra_data.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.extra_data import EMAIL_CORPUS, REPO

CORPUS_MODULE = "tests/bot/mail_in/test_inbound_corpus.py"
# A quick test run beside the corpus module, so that a run without it still has a test to pass.
BESIDE = "tests/test_test_command.py::test_the_corpus_module_is_the_one_that_needs_the_corpus"


def pytest_run(tmp_path: Path, *, required: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "FLAGMAN_REQUIRE_CORPUS"}
    env["FLAGMAN_EMAIL_CORPUS"] = str(tmp_path / "no-corpus-here")
    if required:
        env["FLAGMAN_REQUIRE_CORPUS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", CORPUS_MODULE, BESIDE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_corpus_module_is_the_one_that_needs_the_corpus() -> None:
    """The corpus's tests are the ones tests/extra_data.py names, so they are the ones left out."""
    assert EMAIL_CORPUS.needs(REPO / CORPUS_MODULE)
    assert not EMAIL_CORPUS.needs(REPO / "tests/bot/mail_in/test_inbound.py")


def test_without_the_corpus_its_tests_are_not_run_and_the_run_says_so_in_one_line(tmp_path: Path) -> None:
    """A clone with nothing beside it: the corpus module is not collected, nothing is skipped,
    the run passes and its summary has one line saying the corpus was not run, and where."""
    done = pytest_run(tmp_path, required=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "1 passed" in out and "skipped" not in out and "error" not in out.lower() and "failed" not in out
    lines = [line for line in out.splitlines() if "email corpus: not run" in line]
    assert len(lines) == 1 and str(tmp_path / "no-corpus-here") in lines[0], out[-3000:]


def test_without_the_corpus_a_run_that_requires_it_fails_and_never_skips(tmp_path: Path) -> None:
    """FLAGMAN_REQUIRE_CORPUS=1 (set by .ci/run) and no corpus: every corpus test is collected and
    fails naming the missing corpus; not one passes by skipping (no parameter list is empty)."""
    done = pytest_run(tmp_path, required=True)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert "skipped" not in out
    assert "email corpus: not found at" in out and "failed" in out
    assert "not run" not in out


def fake_checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout with the real .ci/run and a tests/run that only writes down how it was called."""
    root = tmp_path / "clone"
    (root / ".ci").mkdir(parents=True)
    (root / "tests").mkdir()
    shutil.copy2(REPO / ".ci" / "run", root / ".ci" / "run")
    called = tmp_path / "called"
    (root / "tests" / "run").write_text(
        f'#!/usr/bin/env bash\necho "require=${{FLAGMAN_REQUIRE_CORPUS:-}} args=$*" > {called}\n'
    )
    return root, called


def test_ci_stops_at_once_without_the_corpus(tmp_path: Path) -> None:
    """`.ci/run` on a machine without the corpus fails with one line naming where it looked,
    before installing or running anything."""
    root, called = fake_checkout(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("FLAGMAN_EMAIL_CORPUS", "FLAGMAN_REQUIRE_CORPUS")}
    done = subprocess.run(["bash", ".ci/run"], cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "email corpus is required" in done.stderr
    assert "../shared/email-corpus" in done.stderr
    assert not called.exists()


def test_ci_runs_the_readme_command_with_the_corpus_required(tmp_path: Path) -> None:
    """With the corpus there, `.ci/run` is exactly `tests/run` (its arguments passed on), with
    the corpus required."""
    root, called = fake_checkout(tmp_path)
    (tmp_path / "shared" / "email-corpus").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("FLAGMAN_EMAIL_CORPUS", "FLAGMAN_REQUIRE_CORPUS")}
    done = subprocess.run(["bash", ".ci/run", "-k", "x"], cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert called.read_text().strip() == "require=1 args=-k x"


def test_the_test_command_installs_the_venv_module_when_python_lacks_it(tmp_path: Path) -> None:
    """On a fresh Debian, `python3 -m venv` needs the python3-venv package: `tests/run` asks for
    it (installs it as root; here, run as another user, names it and stops) before making the
    venv, instead of failing in `venv`."""
    root = tmp_path / "clone"
    (root / "tests").mkdir(parents=True)
    shutil.copy2(REPO / "tests" / "run", root / "tests" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A python without ensurepip (Debian's before python3-venv), and a user who is not root.
    (bin_dir / "python3-no-venv").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    for tool in (bin_dir / "python3-no-venv", bin_dir / "id"):
        tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHON=str(bin_dir / "python3-no-venv"))
    done = subprocess.run(["bash", "tests/run"], cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "python3-venv" in done.stderr and "missing" in done.stderr
    assert not (root / ".venv").exists()
