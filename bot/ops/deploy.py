"""`flagman deploy PREFIX`: the files an operator needs, written where systemd expects them.

Everything ships inside the package: `deploy/` and `config.example.toml` of the source tree
are copied into the wheel as ``bot/_resources/deploy/`` and ``bot/_resources/config.example.toml``
(pyproject.toml, force-include), so an installed wheel is all an operator needs, and a source
checkout works the same way (the files are then read from the tree itself: one copy).

Where each file goes (`placements`), for a venv in /opt/flagman:

| shipped                   | written to                                            |
|---------------------------|-------------------------------------------------------|
| flagman.service           | /etc/systemd/system/flagman.service                   |
| flagman.service (made for an instance, `for_instance`) | /etc/systemd/system/flagman@.service |
| flagman-backup.service, .timer | /etc/systemd/system/ (and their @ templates, likewise) |
| flagman.tmpfiles          | /etc/tmpfiles.d/flagman.conf                          |
| flagmanctl                | /usr/local/sbin/flagmanctl (0755)                     |
| flagman.toml              | /etc/flagman/flagman.toml (only if it is not there)   |
| OPERATING.md              | /opt/flagman/share/doc/flagman/OPERATING.md (the unit's Documentation=) |
| config.example.toml       | /opt/flagman/share/doc/flagman/config.example.toml    |
| mail/*                    | /opt/flagman/share/doc/flagman/mail/* (the mail server recipe) |
| flagman.sysusers, fixed-user.conf | /etc/sysusers.d/flagman.conf, /etc/systemd/system/flagman.service.d/fixed-user.conf (only with --fixed-user) |

With ``--instance NAME`` the tmpfiles snippet, the configuration and the fixed user are made for
flagman@NAME.service (/etc/tmpfiles.d/flagman-NAME.conf, /etc/flagman-NAME/flagman.toml,
/etc/sysusers.d/flagman-NAME.conf, flagman@NAME.service.d/fixed-user.conf) in place of
flagman.service's; the units, flagmanctl and the documentation are the same for all.

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

from bot.host.unit import CREDENTIALS_DIR, INSTANCE_NAME

# The venv the shipped files name; replaced by the real one when they are written.
SHIPPED_VENV = "/opt/flagman"
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
    instance: str = ""  # made for this instance of flagman@.service ("%i": the template itself)


@dataclass(frozen=True, slots=True)
class Written:
    """What `deploy` did with one placement."""

    placement: Placement
    path: Path  # where it was written (under PREFIX)
    action: str  # "written" (new), "updated", "unchanged", "kept" (the operator's, left alone)


def check_instance(name: str) -> str:
    """An instance name for flagman@NAME.service: it becomes part of a user name (flagman-NAME,
    at most 31 characters) and of paths."""
    if not INSTANCE_NAME.fullmatch(name):
        raise DeployError(
            f"instance name {name!r}: use 1 to 23 lower-case letters, digits, - and _, "
            "starting with a letter or digit (it becomes the user flagman-NAME)"
        )
    return name


def for_instance(text: str, name: str) -> str:
    """A shipped file made for the instance `name` of the templated unit (`%i` for the template
    itself): its configuration and credentials in /etc/flagman-NAME, its state in
    /var/lib/flagman-NAME, the user flagman-NAME, and the commands and unit names it mentions
    (flagmanctl @NAME, flagman@NAME, flagman-backup@NAME)."""
    text = re.sub(r"(?<![\w.-])(/etc|/var/lib)/flagman(?![\w.-])", rf"\1/flagman-{name}", text)
    text = re.sub(
        r"^(\s*(?:User|Group|StateDirectory|ConfigurationDirectory)\s*=\s*)flagman\s*$",
        rf"\1flagman-{name}",
        text,
        flags=re.M,
    )
    text = re.sub(r"^(Description=.*)$", rf"\1 ({name})", text, flags=re.M)
    text = re.sub(r"^(Environment=FLAGMAN_CONFIG=.*)$", rf"\1\nEnvironment=FLAGMAN_INSTANCE={name}", text, flags=re.M)
    text = re.sub(r"^u flagman ", f"u flagman-{name} ", text, flags=re.M)
    text = re.sub(r"\bflagmanctl (?=(?:backup|doctor|migrate|restore)\b)", f"flagmanctl @{name} ", text)
    text = text.replace("/etc/tmpfiles.d/flagman.conf", f"/etc/tmpfiles.d/flagman-{name}.conf")
    text = text.replace("/etc/sysusers.d/flagman.conf", f"/etc/sysusers.d/flagman-{name}.conf")
    text = re.sub(r"(?<![\w@-])flagman\.service", f"flagman@{name}.service", text)
    text = re.sub(r"\bflagman-backup(?=[.\s`]|$)", f"flagman-backup@{name}", text, flags=re.M)
    text = re.sub(r"\b((?:systemctl [a-z-]+|journalctl -u) )flagman(?![\w.@-])", rf"\1flagman@{name}", text)
    return text


def placements(
    venv: PurePosixPath | None = None, *, fixed_user: bool = False, instance: str | None = None
) -> tuple[Placement, ...]:
    """Every file `flagman deploy` writes, for the unit to run flagman from `venv`; with
    `instance`, the files of that instance of flagman@.service in place of flagman.service's
    configuration, tmpfiles snippet and fixed user."""
    venv = venv or running_venv()
    if not venv.is_absolute():
        raise DeployError(f"the venv must be an absolute path, not {str(venv)!r}")
    if not _PLAIN_PATH.fullmatch(str(venv)):
        raise DeployError(
            f"the venv path {str(venv)!r} has characters a systemd unit cannot take unquoted; "
            "use a venv path of letters, digits and . _ - + /"
        )
    shipped = shipped_dir()
    docs = doc_dir(venv)
    units = PurePosixPath(UNIT_PATH).parent
    found = [*_shipped_units(shipped, units, docs), *_mail_recipe(shipped, docs), *_configuration(shipped, instance)]
    if fixed_user:
        found += _fixed_user(shipped, instance)
    return tuple(found)


def _shipped_units(shipped: Path, units: PurePosixPath, docs: PurePosixPath) -> list[Placement]:
    """The units (flagman, its backup and their templates), flagmanctl and the documentation."""
    return [
        Placement(
            "flagman.service",
            shipped / "flagman.service",
            PurePosixPath(UNIT_PATH),
            0o644,
            "the systemd unit",
            venv_paths=True,
        ),
        Placement(
            "flagman@.service",
            shipped / "flagman.service",
            units / "flagman@.service",
            0o644,
            "the same unit for several bots on one host: flagman@NAME.service",
            venv_paths=True,
            instance="%i",
        ),
        Placement(
            "flagman-backup.service",
            shipped / "flagman-backup.service",
            units / "flagman-backup.service",
            0o644,
            "the daily backup, the newest 14 kept (flagmanctl backup --keep 14)",
            venv_paths=True,
        ),
        Placement(
            "flagman-backup.timer",
            shipped / "flagman-backup.timer",
            units / "flagman-backup.timer",
            0o644,
            "starts it daily: systemctl enable --now flagman-backup.timer",
            venv_paths=True,
        ),
        Placement(
            "flagman-backup@.service",
            shipped / "flagman-backup.service",
            units / "flagman-backup@.service",
            0o644,
            "the backup of flagman@NAME",
            venv_paths=True,
            instance="%i",
        ),
        Placement(
            "flagman-backup@.timer",
            shipped / "flagman-backup.timer",
            units / "flagman-backup@.timer",
            0o644,
            "starts it daily: systemctl enable --now flagman-backup@NAME.timer",
            venv_paths=True,
            instance="%i",
        ),
        Placement(
            "flagmanctl",
            shipped / "flagmanctl",
            PurePosixPath(FLAGMANCTL_PATH),
            0o755,
            "runs a flagman command as the service does",
            venv_paths=True,
        ),
        Placement(
            "OPERATING.md",
            shipped / "OPERATING.md",
            docs / "OPERATING.md",
            0o644,
            "the operator's guide (the unit's Documentation=)",
        ),
        Placement(
            "config.example.toml", config_example(), docs / "config.example.toml", 0o644, "every option, documented"
        ),
    ]


def _mail_recipe(shipped: Path, docs: PurePosixPath) -> list[Placement]:
    """The mail server recipe, a file each."""
    found: list[Placement] = []
    for path in sorted((shipped / "mail").glob("*")):
        if path.is_file():
            found.append(
                Placement(
                    f"mail/{path.name}",
                    path,
                    docs / "mail" / path.name,
                    0o644,
                    "the mail server recipe (OPERATING.md, section 3)",
                    venv_paths=True,
                )
            )
    return found


def _configuration(shipped: Path, instance: str | None) -> list[Placement]:
    """The tmpfiles snippet and the configuration, of flagman.service or of one instance."""
    if instance is None:
        return [
            Placement(
                "flagman.tmpfiles",
                shipped / "flagman.tmpfiles",
                PurePosixPath(TMPFILES_PATH),
                0o644,
                f"makes /etc/flagman and the credential files in {CREDENTIALS_DIR}",
            ),
            Placement(
                "flagman.toml",
                shipped / "flagman.toml",
                PurePosixPath(CONFIG_PATH),
                0o644,
                "the configuration to edit",
                keep=True,
                venv_paths=True,
            ),
        ]
    else:
        name = check_instance(instance)
        return [
            Placement(
                f"flagman-{name}.tmpfiles",
                shipped / "flagman.tmpfiles",
                PurePosixPath(f"/etc/tmpfiles.d/flagman-{name}.conf"),
                0o644,
                f"makes /etc/flagman-{name} and the credential files in /etc/flagman-{name}/credentials",
                instance=name,
            ),
            Placement(
                f"flagman-{name}.toml",
                shipped / "flagman.toml",
                PurePosixPath(f"/etc/flagman-{name}/flagman.toml"),
                0o644,
                f"the configuration of flagman@{name} to edit",
                keep=True,
                venv_paths=True,
                instance=name,
            ),
        ]


def _fixed_user(shipped: Path, instance: str | None) -> list[Placement]:
    """A fixed system user and the drop-in that runs the unit as it."""
    suffix = "" if instance is None else f"-{instance}"
    unit = "flagman" if instance is None else f"flagman@{instance}"
    return [
        Placement(
            f"flagman{suffix}.sysusers",
            shipped / "flagman.sysusers",
            PurePosixPath(f"/etc/sysusers.d/flagman{suffix}.conf"),
            0o644,
            f"a fixed system user flagman{suffix} (then run systemd-sysusers)",
            instance=instance or "",
        ),
        Placement(
            f"fixed-user{suffix}.conf",
            shipped / "fixed-user.conf",
            PurePosixPath(f"/etc/systemd/system/{unit}.service.d/fixed-user.conf"),
            0o644,
            f"the drop-in that runs {unit}.service as that user",
            instance=instance or "",
        ),
    ]


def find_placement(name: str, venv: PurePosixPath | None = None, instance: str | None = None) -> Placement:
    every = placements(venv, fixed_user=True, instance=instance)
    for placement in every:
        if name in (placement.name, placement.source.name, str(placement.target)):
            return placement
    names = ", ".join(p.name for p in every)
    raise DeployError(f"no shipped file {name!r}; the files are: {names}")


def content(placement: Placement, venv: PurePosixPath | None = None) -> bytes:
    """The file as it is written: the venv it names is the real one; an instance's file made
    for the instance."""
    data = placement.source.read_bytes()
    venv = venv or running_venv()
    if placement.venv_paths and str(venv) != SHIPPED_VENV:
        data = data.replace(f"{SHIPPED_VENV}/".encode(), f"{venv}/".encode())
    if placement.instance:
        data = for_instance(data.decode("utf-8"), placement.instance).encode("utf-8")
    return data


def _under(prefix: Path, target: PurePosixPath) -> Path:
    return prefix / target.relative_to("/")


def deploy(
    prefix: Path, venv: PurePosixPath | None = None, *, fixed_user: bool = False, instance: str | None = None
) -> list[Written]:
    """Write every placement under `prefix`; the configuration only if it is not there."""
    venv = venv or running_venv()
    done: list[Written] = []
    for placement in placements(venv, fixed_user=fixed_user, instance=instance):
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


def next_steps(prefix: Path, instance: str | None = None) -> list[str]:
    """What the operator runs after `flagman deploy /` (OPERATING.md, sections 1-5 and 13)."""
    if prefix.resolve() != Path("/"):
        return [f"(written under {prefix}: a staging root; on the machine itself run `flagman deploy /`)"]
    if instance is not None:
        return [
            f"systemd-tmpfiles --create /etc/tmpfiles.d/flagman-{instance}.conf   "
            f"# /etc/flagman-{instance} and the empty credential files",
            "systemctl daemon-reload",
            f"then: the secrets in /etc/flagman-{instance}/credentials/, the mailbox in "
            f"/etc/flagman-{instance}/flagman.toml, `flagmanctl @{instance} doctor`, "
            f"`systemctl enable --now flagman@{instance} flagman-backup@{instance}.timer` (OPERATING.md, section 13)",
        ]
    return [
        f"systemd-tmpfiles --create {TMPFILES_PATH}   # /etc/flagman and the empty credential files",
        "systemctl daemon-reload",
        f"then: the secrets in {CREDENTIALS_DIR}/, the mailbox in {CONFIG_PATH}, "
        "`flagmanctl doctor`, `systemctl enable --now flagman flagman-backup.timer` (OPERATING.md, sections 2-5)",
    ]
