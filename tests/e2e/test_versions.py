"""A version per build: every commit builds a wheel with a higher version
(RELEASE.COMMITS, bot/buildinfo.py), `flagman --version` shows it with the commit, and the
guide's upgrade (`pip install --upgrade "$WHEEL"`) and downgrade (`pip install "$OLD_WHEEL"`)
replace the installed code.

The builds are real: a git repository made of this source tree as it is (one commit, then a
second that changes a module), built by pip with hatchling (installed from PyPI into a builder
venv, as pip's build isolation would fetch it), installed into a fresh venv by pip. A wheel
built from the unpacked sdist (no .git) has the same version and commit; a shallow clone and a
tree without .git build as the uncounted development version, below every counted build.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from bot.buildinfo import RELEASE

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Flagman tests",
    "GIT_AUTHOR_EMAIL": "tests@flagman.test",
    "GIT_COMMITTER_NAME": "Flagman tests",
    "GIT_COMMITTER_EMAIL": "tests@flagman.test",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run(*args: str | Path, cwd: Path, ok: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGMAN_", "PYTHON", "GIT_"))}
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env={**env, **GIT_ENV}, capture_output=True, text=True, timeout=timeout
    )
    if ok:
        assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def git(repo: Path, *args: str) -> str:
    return run("git", "-C", repo, *args, cwd=repo).stdout.strip()


@pytest.fixture(scope="module")
def builder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv holding hatchling, the build backend (pyproject.toml [build-system])."""
    target = tmp_path_factory.mktemp("builder") / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        target / "bin" / "python",
        "install",
        "-q",
        "hatchling>=1.18",
        cwd=target,
    )
    return target / "bin" / "python"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository of this source tree as it is now (tracked and new files), in one commit."""
    repo = tmp_path_factory.mktemp("repo") / "flagman"
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_bytes(source.read_bytes())
            (repo / name).chmod(source.stat().st_mode & 0o777)
    run("git", "-c", "init.defaultBranch=main", "init", "-q", repo, cwd=repo.parent)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    return repo


def wheel(builder: Path, source: Path, out: Path) -> Path:
    """`pip wheel` of `source` with the builder's hatchling: the one wheel it made."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("*.whl"))
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        builder,
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        out,
        source,
        cwd=out,
    )
    (made,) = set(out.glob("*.whl")) - before
    return made


def version_of(wheel_path: Path) -> tuple[int, ...]:
    number = wheel_path.name.split("-")[1]
    return tuple(int(part) for part in number.split("."))


def fresh_venv(where: Path) -> Path:
    """A venv without flagman; the dependencies come from the project's venv (as test_packaging)."""
    venv.EnvBuilder(with_pip=False).create(where)
    site = next((where / "lib").glob("python3*/site-packages"))
    (site / "project-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin" / "python"


def pip_install(python: Path, *args: str | Path) -> str:
    done = run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps", *args, cwd=python.parent
    )
    return done.stdout


def flagman_version(python: Path) -> str:
    return run(python.parent / "flagman", "--version", cwd=python.parent).stdout.strip()


def installed_file(python: Path, module: str) -> str:
    path = run(python, "-c", f"import {module} as m; print(m.__file__)", cwd=python.parent).stdout.strip()
    assert path.startswith(str(python.parent.parent)), path
    return Path(path).read_text()


def test_two_commits_build_increasing_versions_and_the_upgrade_and_downgrade_replace_the_code(
    repo: Path, builder: Path, tmp_path: Path
) -> None:
    """Commit 1 builds RELEASE.1, commit 2 (a changed module) RELEASE.2; `flagman --version`
    names each build's commit; `pip install --upgrade` of the second installs it over the first
    (the changed module with it), and `pip install` of the first puts it back."""
    first_commit = git(repo, "rev-parse", "HEAD")
    first = wheel(builder, repo, tmp_path / "wheels")
    clock = repo / "bot" / "clock.py"
    clock.write_text(clock.read_text() + "# changed by the second commit\n")
    git(repo, "commit", "-q", "-a", "-m", "two")
    second_commit = git(repo, "rev-parse", "HEAD")
    second = wheel(builder, repo, tmp_path / "wheels")
    release = tuple(int(p) for p in RELEASE.split("."))
    assert version_of(first) == (*release, 1) and version_of(second) == (*release, 2)
    assert version_of(second) > version_of(first)

    python = fresh_venv(tmp_path / "venv")
    pip_install(python, first)
    assert flagman_version(python) == f"flagman {RELEASE}.1 (commit {first_commit[:12]})"
    assert "changed by the second commit" not in installed_file(python, "bot.clock")
    pip_install(python, "--upgrade", second)  # OPERATING.md, section 7
    assert flagman_version(python) == f"flagman {RELEASE}.2 (commit {second_commit[:12]})"
    assert installed_file(python, "bot.clock").endswith("# changed by the second commit\n")
    pip_install(python, first)  # going back: the older wheel
    assert flagman_version(python) == f"flagman {RELEASE}.1 (commit {first_commit[:12]})"
    assert "changed by the second commit" not in installed_file(python, "bot.clock")
    git(repo, "reset", "-q", "--hard", first_commit)


def test_a_wheel_built_from_the_sdist_has_the_same_version_and_commit(
    repo: Path, builder: Path, tmp_path: Path
) -> None:
    """The sdist carries the version and the commit (bot/_build.json); unpacked where there is
    no .git, it builds a wheel of the same version that names the same commit."""
    out = tmp_path / "sdist"
    out.mkdir()
    made = (
        run(builder, "-c", f"from hatchling.build import build_sdist; print(build_sdist({str(out)!r}))", cwd=repo)
        .stdout.strip()
        .splitlines()[-1]
    )
    with tarfile.open(out / made) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    assert not (unpacked / ".git").exists()
    from_sdist = wheel(builder, unpacked, tmp_path / "wheels")
    from_git = wheel(builder, repo, tmp_path / "wheels-git")
    assert from_sdist.name == from_git.name
    read = [zipfile.ZipFile(w).read("bot/_build.json") for w in (from_sdist, from_git)]
    assert read[0] == read[1] and git(repo, "rev-parse", "HEAD").encode() in read[0]


def test_a_shallow_clone_builds_as_an_uncounted_version_below_every_counted_one(
    repo: Path, builder: Path, tmp_path: Path
) -> None:
    """`git clone --depth 1` cannot count the commits: it still builds (a CI or a quick try must
    not fail), as 0.1.0.dev0+uncounted, which any counted build upgrades (PEP 440 orders it first)."""
    run("git", "clone", "-q", "--depth", "1", f"file://{repo}", tmp_path / "shallow", cwd=tmp_path)
    built = wheel(builder, tmp_path / "shallow", tmp_path / "out")
    assert built.name.startswith("flagman-0.1.0.dev0+uncounted-")
    counted = wheel(builder, repo, tmp_path / "counted")
    assert version_of(counted)[:2] == (0, 1) and version_of(counted)[2] >= 1  # 0.1.N, N >= 1 > 0.dev0


@pytest.mark.parametrize("inside_a_repo", [False, True])
def test_a_tree_without_git_builds_as_the_uncounted_version_even_inside_another_repository(
    repo: Path, builder: Path, tmp_path: Path, inside_a_repo: bool
) -> None:
    """The files alone (`git archive`), with no .git and no bot/_build.json, have no counted version:
    they build as 0.1.0.dev0+uncounted -- also when they sit inside some other git repository,
    whose commits are not flagman's."""
    where = repo / "export" if inside_a_repo else tmp_path / "export"
    where.mkdir()
    archive = tmp_path / "tree.tar"
    git(repo, "archive", "-o", str(archive), "HEAD")
    with tarfile.open(archive) as tar:
        tar.extractall(where, filter="data")
    try:
        built = wheel(builder, where, tmp_path / "out")
        assert built.name.startswith("flagman-0.1.0.dev0+uncounted-")
    finally:
        if inside_a_repo:
            run("rm", "-rf", where, cwd=tmp_path)
