"""`pip install .` (a real wheel, not editable) gives a working `flagman`, templates and migrations included.

The wheel is built from the source tree and installed with --no-deps into a fresh venv, away
from the source tree; the dependencies come from the project's own venv through a .pth line
(its site-packages appended to the path, its .pth files not run), so no network is needed
for them. Building the wheel needs hatchling: from the project venv if it is there
(--no-build-isolation), else pip fetches it (PyPI).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGMAN_", "PYTHON"))}
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the flagman wheel installed; returns its bin directory."""
    work = tmp_path_factory.mktemp("packaging")
    wheels = work / "wheels"
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", wheels, ROOT, cwd=work)
    (wheel,) = wheels.glob("flagman-*.whl")
    target = work / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    site = next((target / "lib").glob("python3*/site-packages"))
    (site / "project-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(sys.executable, "-m", "pip", "--python", target / "bin" / "python", "install", "--no-deps", "-q", wheel,
        cwd=work)
    return target / "bin"


def test_the_wheel_holds_templates_and_migrations_outside_the_source_tree(installed: Path, tmp_path: Path) -> None:
    """bot/ comes from the new venv, and bot.resources finds templates, migrations and alembic.ini in bot/_resources."""
    code = ("import bot, bot.resources as r; print(bot.__file__); "
            "print(r.templates_path()); print(r.migrations_path()); print(r.alembic_ini_path())")
    lines = run(installed / "python", "-c", code, cwd=tmp_path).stdout.split()
    venv_root = str(installed.parent)
    assert all(line.startswith(venv_root) for line in lines), lines
    assert all("/_resources/" in line for line in lines[1:]), lines
    templates = Path(lines[1])
    assert (templates / "_common").is_dir() and any((Path(lines[2]) / "versions").glob("*.py"))


def test_installed_flagman_inits_a_site_and_passes_the_doctor(installed: Path, tmp_path: Path) -> None:
    """`flagman init DIR` (migrations from the wheel) then `flagman doctor`: all good."""
    run(installed / "flagman", "init", tmp_path / "site", cwd=tmp_path)
    assert (tmp_path / "site" / "flagman.sqlite").exists()
    out = run(installed / "flagman", "--config", tmp_path / "site" / "flagman.toml", "doctor", cwd=tmp_path).stdout
    assert "all good" in out


def test_installed_flagman_plays_the_demo(installed: Path, tmp_path: Path) -> None:
    """`flagman demo --quiet` plays a whole game by mail with the installed templates."""
    out = run(installed / "flagman", "demo", "--quiet", cwd=tmp_path).stdout
    assert "Game over: True" in out
