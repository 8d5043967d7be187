"""The flagman wheel, built once per test session from the source tree and installed into a
fresh venv away from it: what the tests of an operator's install run (`installed`, in
tests/e2e/conftest.py).

The wheel is installed with --no-index --no-deps; its dependencies come from the project's own
venv through a .pth line (its site-packages appended to the path, its .pth files not run), so
no network is needed for them. Building the wheel needs hatchling: from the project venv if it
is there (--no-build-isolation), else pip fetches it (PyPI).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def clean_env() -> dict[str, str]:
    """The environment of an operator's shell: no FLAGMAN_ or PYTHON variables of the test run,
    no journal stream (the installed flagman logs to stderr as in a terminal)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGMAN_", "PYTHON"))}
    env.pop("JOURNAL_STREAM", None)
    return env


def run(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A command that must succeed (status 0); its output."""
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def build_wheel(out: Path) -> Path:
    """`pip wheel` of the source tree into `out`: the one wheel it made."""
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", out, ROOT, cwd=out.parent)
    (wheel,) = out.glob("flagman-*.whl")
    return wheel


def install_wheel(wheel: Path, target: Path) -> Path:
    """A fresh venv at `target` with `wheel` installed (its dependencies from the project's venv);
    returns its bin directory."""
    venv.EnvBuilder(with_pip=False).create(target)
    site = next((target / "lib").glob("python3*/site-packages"))
    (site / "project-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        target / "bin" / "python",
        "install",
        "--no-index",
        "--no-deps",
        "-q",
        wheel,
        cwd=target.parent,
    )
    return target / "bin"


def the_wheel(installed: Path) -> Path:
    """The wheel the `installed` venv was made from."""
    (wheel,) = (installed.parent.parent / "wheels").glob("flagman-*.whl")
    return wheel
