"""`pip install .` (a real wheel, not editable) gives a working `flagman`, templates and migrations
included, and everything an operator needs: `flagman deploy` from the installed wheel alone.

The wheel is built once per test session and installed into a fresh venv away from the source
tree (the `installed` fixture, tests/e2e/wheel.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.wheel import ROOT, run, the_wheel
from tests.helpers import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def test_the_wheel_holds_templates_and_migrations_outside_the_source_tree(installed: Path, tmp_path: Path) -> None:
    """bot/ comes from the new venv, and bot.resources finds templates, migrations and alembic.ini in bot/_resources."""
    code = (
        "import bot, bot.resources as r; print(bot.__file__); "
        "print(r.templates_path()); print(r.migrations_path()); print(r.alembic_ini_path())"
    )
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
    assert "The race is over after 5 turns" in out and "archive" in out


def test_the_wheel_ships_the_deploy_files_once(installed: Path) -> None:
    """The wheel holds deploy/ (unit, tmpfiles, sysusers, flagmanctl, flagman.toml,
    OPERATING.md, the mail recipe) and config.example.toml, each once, inside the package."""
    import zipfile

    wheel = the_wheel(installed)
    names = zipfile.ZipFile(wheel).namelist()
    for name in (
        "flagman.service",
        "flagman.tmpfiles",
        "flagman.sysusers",
        "fixed-user.conf",
        "flagmanctl",
        "flagman.toml",
        "OPERATING.md",
        "mail/dovecot-flagman.conf",
        "mail/postfix-main.cf",
        "mail/postfix-transport",
        "flagman-backup.service",
        "flagman-backup.timer",
    ):
        assert f"bot/_resources/deploy/{name}" in names, name
    assert "bot/_resources/config.example.toml" in names
    assert sum(n.endswith("/OPERATING.md") for n in names) == 1


def test_an_operator_deploys_from_the_installed_wheel_alone(installed: Path, tmp_path: Path) -> None:
    """OPERATING.md, section 1, under a staging root and away from the source tree: the venv's
    `flagman deploy PREFIX` writes the unit (starting that venv's flagman), the tmpfiles
    snippet, flagmanctl, the configuration and the documentation the unit names;
    `systemd-analyze verify` accepts the unit; `systemd-tmpfiles --create` makes the
    credential files; the configuration loads. Every file comes from the installed package."""
    analyze, tmpfiles = shutil.which("systemd-analyze"), shutil.which("systemd-tmpfiles")
    if analyze is None or tmpfiles is None:
        unavailable("systemd-analyze and systemd-tmpfiles", "not installed (Debian: apt-get install systemd)")
    assert analyze is not None and tmpfiles is not None
    venv = installed.parent
    code = "import bot.ops.deploy as d; print(d.shipped_dir()); print(d.config_example())"
    for line in run(installed / "python", "-c", code, cwd=tmp_path).stdout.split():
        assert line.startswith(str(venv)) and "/_resources/" in line, line
    prefix = tmp_path / "root"
    out = run(installed / "flagman", "deploy", prefix, cwd=tmp_path).stdout
    assert "written" in out and f"the unit runs {venv}/bin/flagman" in out
    unit = prefix / "etc/systemd/system/flagman.service"
    lines = unit.read_text().splitlines()
    assert f"ExecStart={venv}/bin/flagman run --migrate" in lines
    (doc,) = [line.removeprefix("Documentation=file://") for line in lines if line.startswith("Documentation=")]
    assert (prefix / doc.lstrip("/")).is_file() and doc.endswith("/share/doc/flagman/OPERATING.md")
    assert (prefix / str(venv).lstrip("/") / "share/doc/flagman/config.example.toml").is_file()
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stderr.splitlines() if "flagman" in line], done.stderr
    run(tmpfiles, "--create", f"--root={prefix}", prefix / "etc/tmpfiles.d/flagman.conf", cwd=tmp_path)
    credentials = prefix / "etc/flagman/credentials"
    assert sorted(p.name for p in credentials.iterdir()) == [
        "db-password",
        "imap-password",
        "site-secret",
        "smtp-password",
    ]
    config = prefix / "etc/flagman/flagman.toml"
    code = f"from bot.settings import load_settings; print(load_settings({str(config)!r}, env={{}}).inbox.kind)"
    assert run(installed / "python", "-c", code, cwd=tmp_path).stdout.strip() == "imap"
    assert (prefix / "usr/local/sbin/flagmanctl").stat().st_mode & 0o111
    # The templated unit and the daily backup come with it (tests/bot/ops/test_several_bots.py verifies them).
    for name in ("flagman@.service", "flagman-backup.service", "flagman-backup.timer", "flagman-backup@.timer"):
        assert (prefix / "etc/systemd/system" / name).is_file(), name
    template = (prefix / "etc/systemd/system/flagman@.service").read_text().splitlines()
    assert f"ExecStart={venv}/bin/flagman run --migrate" in template and "User=flagman-%i" in template
    # The configuration `flagman init` writes names a command that works from the wheel.
    run(installed / "flagman", "init", tmp_path / "site", cwd=tmp_path)
    assert "flagman deploy --print config.example.toml" in (tmp_path / "site" / "flagman.toml").read_text()
    example = run(installed / "flagman", "deploy", "--print", "config.example.toml", cwd=tmp_path).stdout
    assert example.startswith("# Flagman configuration: every option")


def test_the_installed_wheel_names_its_version_and_commit(installed: Path, tmp_path: Path) -> None:
    """The wheel built from this tree is version RELEASE.COMMITS of its git history, and the
    installed `flagman --version` says so with the commit (no two builds share a version)."""
    from bot.buildinfo import RELEASE

    def git(*args: str) -> str:
        return run("git", "-C", ROOT, *args, cwd=ROOT).stdout.strip()

    count, commit = git("rev-list", "--count", "HEAD"), git("rev-parse", "HEAD")
    dirty = ", with uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    wheel = the_wheel(installed)
    assert wheel.name == f"flagman-{RELEASE}.{count}-py3-none-any.whl"
    shown = run(installed / "flagman", "--version", cwd=tmp_path).stdout
    assert shown == f"flagman {RELEASE}.{count} (commit {commit[:12]}{dirty})\n"
