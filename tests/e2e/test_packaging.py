"""`pip install .` (a real wheel, not editable) gives a working `flagman`, templates and migrations
included, and everything an operator needs: `flagman deploy` from the installed wheel alone.

The wheel is built from the source tree and installed with --no-index --no-deps into a fresh venv, away
from the source tree; the dependencies come from the project's own venv through a .pth line
(its site-packages appended to the path, its .pth files not run), so no network is needed
for them. Building the wheel needs hatchling: from the project venv if it is there
(--no-build-isolation), else pip fetches it (PyPI).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.helpers import unavailable

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
    return install_wheel(wheel, work / "venv")


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

    (wheel,) = (installed.parent.parent / "wheels").glob("flagman-*.whl")
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
    installed `flagman --version` says so with the commit (issue 33: every build was 0.1.0)."""
    from bot.buildinfo import RELEASE

    def git(*args: str) -> str:
        return run("git", "-C", ROOT, *args, cwd=ROOT).stdout.strip()

    count, commit = git("rev-list", "--count", "HEAD"), git("rev-parse", "HEAD")
    dirty = ", with uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    (wheel,) = (installed.parent.parent / "wheels").glob("flagman-*.whl")
    assert wheel.name == f"flagman-{RELEASE}.{count}-py3-none-any.whl"
    shown = run(installed / "flagman", "--version", cwd=tmp_path).stdout
    assert shown == f"flagman {RELEASE}.{count} (commit {commit[:12]}{dirty})\n"


def refused(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command of the installed flagman that must fail: its status and words, as a user sees them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGMAN_", "PYTHON"))}
    env.pop("JOURNAL_STREAM", None)
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_an_install_missing_a_migration_file_says_which_in_one_line(installed: Path, tmp_path: Path) -> None:
    """Issue 41: "A missing migration file: `flagman migrate` prints a 44-line traceback
    (`KeyError: '0011'`), doctor says "a check failed unexpectedly"". An install of the wheel
    with 0011's file deleted: migrate and run name the revision in one line (status 2); the
    doctor names it as a database problem."""
    (wheel,) = (installed.parent.parent / "wheels").glob("flagman-*.whl")
    site_dir = tmp_path / "site"
    run(installed / "flagman", "init", site_dir, cwd=tmp_path)
    config = site_dir / "flagman.toml"
    broken = install_wheel(wheel, tmp_path / "broken")
    (migration,) = (tmp_path / "broken").glob("lib/python3*/site-packages/bot/_resources/migrations/versions/0011_*.py")
    migration.unlink()
    for command in ("migrate", "run"):
        done = refused(broken / "flagman", "--config", config, command, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (command, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert "revision 0011 is missing from" in line and "reinstall" in line, line
    doctor = refused(broken / "flagman", "--config", config, "doctor", cwd=tmp_path)
    assert doctor.returncode == 1 and "unexpectedly" not in doctor.stdout, doctor.stdout
    problems = [line for line in doctor.stdout.splitlines() if line.startswith("PROBLEM")]
    assert any(" database " in p and "revision 0011 is missing" in p for p in problems), doctor.stdout


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("poll_seconds = -5", "[schedule] poll_seconds = -5 is out of range"),
        ('digest_time = "25:99"', "[schedule] digest_time '25:99' is not a time of day"),
    ],
)
def test_the_installed_flagman_refuses_a_setting_out_of_range_in_one_line(
    installed: Path, tmp_path: Path, line: str, words: str
) -> None:
    """Issue 41: "Validate every setting's range and type when the config is read (a schema, one
    line each, exit 2)", as the installed wheel reads a configuration."""
    run(installed / "flagman", "init", tmp_path / "site", cwd=tmp_path)
    config = tmp_path / "site" / "flagman.toml"
    config.write_text(config.read_text(encoding="utf-8") + f"\n[schedule]\n{line}\n", encoding="utf-8")
    done = refused(installed / "flagman", "--config", config, "run", cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr)
    (said,) = done.stderr.strip().splitlines()
    assert words in said, said
