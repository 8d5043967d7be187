"""`flagman deploy PREFIX`: the files an operator needs, written where systemd expects them.

Everything ships inside the package: `deploy/` and `config.example.toml` of the source tree
are copied into the wheel as ``bot/_resources/deploy/`` and ``bot/_resources/config.example.toml``
(pyproject.toml, force-include), so an installed wheel is all an operator needs, and a source
checkout works the same way (the files are then read from the tree itself: one copy).

Where each file goes (`placements`), for a venv in /opt/flagman:

| shipped                   | written to                                            |
|---------------------------|-------------------------------------------------------|
| flagman.service           | /etc/systemd/system/flagman.service                   |
| flagman.tmpfiles          | /etc/tmpfiles.d/flagman.conf                          |
| flagmanctl                | /usr/local/sbin/flagmanctl (0755)                     |
| flagman.toml              | /etc/flagman/flagman.toml (only if it is not there)   |
| OPERATING.md              | /opt/flagman/share/doc/flagman/OPERATING.md (the unit's Documentation=) |
| config.example.toml       | /opt/flagman/share/doc/flagman/config.example.toml    |
| mail/*                    | /opt/flagman/share/doc/flagman/mail/* (the mail server recipe) |
| flagman.sysusers, fixed-user.conf | /etc/sysusers.d/flagman.conf, /etc/systemd/system/flagman.service.d/fixed-user.conf (only with --fixed-user) |

Admin-installed files belong in /etc (systemd's /usr/lib directories are the distribution's),
so the tmpfiles and sysusers snippets go to /etc/tmpfiles.d and /etc/sysusers.d. The shipped
files name the venv /opt/flagman; the unit, flagmanctl and the configuration are written with
the venv that runs `flagman deploy` instead, so the unit starts the flagman that wrote it.
PREFIX is the root to write under: ``/`` on the machine itself, or a staging directory.

The operator's configuration is never overwritten; every other file is ours and is brought
up to date (that is how an upgrade refreshes the unit and the documentation).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# The venv the shipped files name; replaced by the real one when they are written.
SHIPPED_VENV = "/opt/flagman"
# Where the unit's LoadCredential= reads the secrets from (flagman.service, flagman.tmpfiles):
# the one path that doctor's hints and OPERATING.md name.
CREDENTIALS_DIR = "/etc/flagman/credentials"
CONFIG_PATH = "/etc/flagman/flagman.toml"
UNIT_PATH = "/etc/systemd/system/flagman.service"
TMPFILES_PATH = "/etc/tmpfiles.d/flagman.conf"
FLAGMANCTL_PATH = "/usr/local/sbin/flagmanctl"

_BOT = Path(__file__).resolve().parents[1]
# A venv path goes into ExecStart= and a shell script unquoted: plain characters only.
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9._/+-]*")


class DeployError(ValueError):
    """`flagman deploy` cannot do what was asked; the message says why."""


def _resource(name: str) -> Path:
    """A shipped file or folder: inside the installed package, else in the source tree."""
    packaged = _BOT / "_resources" / name
    return packaged if packaged.exists() else _BOT.parent / name


def shipped_dir() -> Path:
    """The folder holding the shipped deploy files (bot/_resources/deploy, or deploy/)."""
    return _resource("deploy")


def config_example() -> Path:
    return _resource("config.example.toml")


def doc_dir(venv: PurePosixPath) -> PurePosixPath:
    return venv / "share" / "doc" / "flagman"


def running_venv() -> PurePosixPath:
    """The venv this flagman runs from (its bin/flagman is what the unit starts)."""
    return PurePosixPath(sys.prefix)


@dataclass(frozen=True, slots=True)
class Placement:
    """One shipped file and where it goes on the machine."""

    name: str  # as `--print` takes it: "flagman.service", "mail/postfix-main.cf"
    source: Path
    target: PurePosixPath  # absolute, on the machine (PREFIX is put in front when writing)
    mode: int
    what: str
    keep: bool = False  # the operator's own file once written: never overwritten
    venv_paths: bool = False  # names the venv: written with the real one


@dataclass(frozen=True, slots=True)
class Written:
    """What `deploy` did with one placement."""

    placement: Placement
    path: Path  # where it was written (under PREFIX)
    action: str  # "written" (new), "updated", "unchanged", "kept" (the operator's, left alone)


def placements(venv: PurePosixPath | None = None, *, fixed_user: bool = False) -> tuple[Placement, ...]:
    """Every file `flagman deploy` writes, for the unit to run flagman from `venv`."""
    venv = venv or running_venv()
    if not venv.is_absolute():
        raise DeployError(f"the venv must be an absolute path, not {str(venv)!r}")
    if not _PLAIN_PATH.fullmatch(str(venv)):
        raise DeployError(f"the venv path {str(venv)!r} has characters a systemd unit cannot take unquoted; "
                          "use a venv path of letters, digits and . _ - + /")
    shipped = shipped_dir()
    docs = doc_dir(venv)
    found = [
        Placement("flagman.service", shipped / "flagman.service", PurePosixPath(UNIT_PATH), 0o644,
                  "the systemd unit", venv_paths=True),
        Placement("flagman.tmpfiles", shipped / "flagman.tmpfiles", PurePosixPath(TMPFILES_PATH), 0o644,
                  f"makes /etc/flagman and the credential files in {CREDENTIALS_DIR}"),
        Placement("flagmanctl", shipped / "flagmanctl", PurePosixPath(FLAGMANCTL_PATH), 0o755,
                  "runs a flagman command as the service does", venv_paths=True),
        Placement("flagman.toml", shipped / "flagman.toml", PurePosixPath(CONFIG_PATH), 0o644,
                  "the configuration to edit", keep=True, venv_paths=True),
        Placement("OPERATING.md", shipped / "OPERATING.md", docs / "OPERATING.md", 0o644,
                  "the operator's guide (the unit's Documentation=)"),
        Placement("config.example.toml", config_example(), docs / "config.example.toml", 0o644,
                  "every option, documented"),
    ]
    for path in sorted((shipped / "mail").glob("*")):
        if path.is_file():
            found.append(Placement(f"mail/{path.name}", path, docs / "mail" / path.name, 0o644,
                                   "the mail server recipe (OPERATING.md, section 3)", venv_paths=True))
    if fixed_user:
        found += [
            Placement("flagman.sysusers", shipped / "flagman.sysusers", PurePosixPath("/etc/sysusers.d/flagman.conf"),
                      0o644, "a fixed system user flagman (then run systemd-sysusers)"),
            Placement("fixed-user.conf", shipped / "fixed-user.conf",
                      PurePosixPath("/etc/systemd/system/flagman.service.d/fixed-user.conf"), 0o644,
                      "the drop-in that runs the unit as that user"),
        ]
    return tuple(found)


def find_placement(name: str, venv: PurePosixPath | None = None) -> Placement:
    every = placements(venv, fixed_user=True)
    for placement in every:
        if name in (placement.name, placement.source.name, str(placement.target)):
            return placement
    names = ", ".join(p.name for p in every)
    raise DeployError(f"no shipped file {name!r}; the files are: {names}")


def content(placement: Placement, venv: PurePosixPath | None = None) -> bytes:
    """The file as it is written: the venv it names is the real one."""
    data = placement.source.read_bytes()
    venv = venv or running_venv()
    if placement.venv_paths and str(venv) != SHIPPED_VENV:
        data = data.replace(f"{SHIPPED_VENV}/".encode(), f"{venv}/".encode())
    return data


def _under(prefix: Path, target: PurePosixPath) -> Path:
    return prefix / target.relative_to("/")


def deploy(prefix: Path, venv: PurePosixPath | None = None, *, fixed_user: bool = False) -> list[Written]:
    """Write every placement under `prefix`; the configuration only if it is not there."""
    venv = venv or running_venv()
    done: list[Written] = []
    for placement in placements(venv, fixed_user=fixed_user):
        path = _under(prefix, placement.target)
        data = content(placement, venv)
        if path.exists() and placement.keep:
            done.append(Written(placement, path, "kept"))
            continue
        if path.exists() and path.read_bytes() == data:
            if (path.stat().st_mode & 0o7777) != placement.mode:
                path.chmod(placement.mode)
            done.append(Written(placement, path, "unchanged"))
            continue
        action = "updated" if path.exists() else "written"
        _write(path, data, placement.mode)
        done.append(Written(placement, path, action))
    return done


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (a unit half-written is a unit systemd cannot read), with `mode`."""
    path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.flagman-deploy")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)  # the umask may have taken bits off
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def next_steps(prefix: Path) -> list[str]:
    """What the operator runs after `flagman deploy /` (OPERATING.md, sections 1-4)."""
    if prefix.resolve() != Path("/"):
        return [f"(written under {prefix}: a staging root; on the machine itself run `flagman deploy /`)"]
    return [
        f"systemd-tmpfiles --create {TMPFILES_PATH}   # /etc/flagman and the empty credential files",
        "systemctl daemon-reload",
        f"then: the secrets in {CREDENTIALS_DIR}/, the mailbox in {CONFIG_PATH}, "
        "`flagmanctl doctor`, `systemctl enable --now flagman` (OPERATING.md, sections 2-5)",
    ]
