"""The version of this build of flagman and the commit it was built from.

Every build has its own version, counted from the git repository it is built from:
``RELEASE.COMMITS``, where COMMITS is the number of commits up to the one built (``git rev-list
--count HEAD``). So a later commit always gives a higher version (PEP 440: 0.1.267 < 0.1.268),
and `pip install --upgrade WHEEL` replaces the code of any earlier build. RELEASE below is
raised by hand for a release that should stand out (0.2): the count goes on from there.

The build (hatch_build.py, which loads this file by its path: standard library only, no other
module of flagman) writes the version and the commit into the wheel as ``bot/_build.json``, and
into the sdist, so that a wheel built from an unpacked sdist, without ``.git``, has the same
ones. `flagman --version` reads that file; run from a source tree, it asks git.

A tree whose commits cannot be counted -- a shallow clone (``git clone --depth``), the files
without ``.git``, a machine without git -- still builds and installs, as ``RELEASE.0.dev0+uncounted``
(`UNCOUNTED`): a development version lower than every counted build, so that any counted build
upgrades it and it never passes for a newer one. The build says so on stderr, with the way to a
counted version (``git fetch --unshallow``, a full clone, or the sdist).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

RELEASE = "0.1"
BUILD_FILE = "_build.json"  # bot/_build.json in the wheel and in the sdist


class VersionError(RuntimeError):
    """The version cannot be worked out; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Build:
    """A build: its version, the commit it was made from ("" if not known), and whether the tree
    had changes that were not committed."""

    version: str
    commit: str = ""
    dirty: bool = False

    def describe(self) -> str:
        """``0.1.268 (commit 588b8b0c1d2e)``, as `flagman --version` prints it."""
        if not self.commit:
            return self.version
        return f"{self.version} (commit {self.commit[:12]}{', with uncommitted changes' if self.dirty else ''})"


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except FileNotFoundError as exc:
        raise VersionError(
            "flagman's version is counted from its git history, and git is not installed: "
            "install git, or build from the sdist"
        ) from exc
    if done.returncode != 0:
        raise VersionError(f"git {' '.join(args)} in {root} failed: {' '.join(done.stderr.split())}")
    return done.stdout.strip()


def from_git(root: Path, release: str = RELEASE) -> Build:
    """The build of the commit checked out in `root`, the top of a git clone (not a folder inside
    some other repository, whose commits are not flagman's)."""
    if not (root / ".git").exists():
        raise VersionError(
            f"{root} is not a git clone (it has no .git): flagman's version is counted from its "
            "git history; build from a git clone, or from the sdist (which carries the version)"
        )
    if _git(root, "rev-parse", "--is-shallow-repository") == "true":
        raise VersionError(
            f"{root} is a shallow clone: its commits cannot be counted for the version; "
            "`git fetch --unshallow` first (or clone without --depth)"
        )
    count = int(_git(root, "rev-list", "--count", "HEAD"))
    commit = _git(root, "rev-parse", "HEAD")
    dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    return Build(f"{release}.{count}", commit, dirty)


def read(path: Path) -> Build:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Build(str(data["version"]), str(data.get("commit", "")), bool(data.get("dirty", False)))


def write(build: Build, path: Path) -> None:
    path.write_text(
        json.dumps({"version": build.version, "commit": build.commit, "dirty": build.dirty}, indent=2) + "\n",
        encoding="utf-8",
    )


UNCOUNTED = "0.dev0+uncounted"  # after RELEASE: a tree whose commits cannot be counted


def source_build(root: Path) -> Build:
    """The build of a source tree: the file an unpacked sdist carries, else git; a tree git
    cannot count builds as the `UNCOUNTED` development version (said on stderr)."""
    packaged = root / "bot" / BUILD_FILE
    if packaged.is_file():
        return read(packaged)
    try:
        return from_git(root)
    except VersionError as exc:
        version = f"{RELEASE}.{UNCOUNTED}"
        print(f"flagman build: {exc}. Building it as {version}, below every counted build.", file=sys.stderr)
        return Build(version)


def current() -> Build:
    """This flagman's build: the file the wheel carries; from a source tree (an editable
    install), git's answer for it now; else the installed distribution's version."""
    here = Path(__file__).resolve().parent
    if (here / BUILD_FILE).is_file():
        return read(here / BUILD_FILE)
    if (here.parent / ".git").exists():
        try:
            return from_git(here.parent)
        except VersionError:
            pass
    from importlib import metadata

    try:
        return Build(metadata.version("flagman"))
    except metadata.PackageNotFoundError:
        return Build("unknown")
