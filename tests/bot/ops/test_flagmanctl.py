"""flagmanctl: it runs a flagman command with the user, credentials,
environment and state directory of the unit as systemd reads it -- the unit and its drop-ins
-- so turning on DKIM, rotating the site secret or installing the fixed user changes both
alike.

systemd-run needs a running systemd, which the test machine has not: flagmanctl is run for
real with --dry-run (it prints the systemd-run command it would run) on a staging root written
by `flagman deploy`, its properties are checked by `systemd-analyze verify`, and the
credentials they name are handed to a real `flagman` process the way systemd.exec(5) says
LoadCredential= does (`systemd_credentials` below).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path, PurePosixPath

import nacl.encoding
import nacl.signing
import pytest

from bot.ops import deploy
from tests.bot.ops.test_ops_deploy import fake_venv, need, under
from tests.helpers import Done, flagman_command

PLAYERS = ("kelly", "seb", "steve", "roger", "anna")
OLD_FOUR = ("site-secret", "imap-password", "smtp-password", "db-password")  # the list flagmanctl used to pass


def run_flagmanctl(prefix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The deployed flagmanctl with --dry-run, reading the unit under `prefix`."""
    need("systemd-analyze")
    script = under(prefix, deploy.FLAGMANCTL_PATH)
    return subprocess.run(
        ["sh", str(script), "--root", str(prefix), "--dry-run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def command(prefix: Path, *args: str) -> list[str]:
    done = run_flagmanctl(prefix, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def properties(argv: list[str]) -> list[tuple[str, str]]:
    """The --property=KEY=VALUE arguments, in order."""
    found = []
    for arg in argv:
        if arg.startswith("--property="):
            key, _, value = arg.removeprefix("--property=").partition("=")
            found.append((key, value))
    return found


def last(props: list[tuple[str, str]], key: str) -> str:
    return [v for k, v in props if k == key][-1]


def systemd_credentials(props: list[tuple[str, str]], prefix: Path, into: Path) -> Path:
    """What LoadCredential=ID:PATH puts in $CREDENTIALS_DIRECTORY (systemd.exec(5)): a file, as
    ID; a directory, each regular file in it as ID_<file> (symlinks ignored); an empty
    LoadCredential= drops the ones before it; the first of an ID is kept. PATH is read under
    `prefix`."""
    into.mkdir()
    loads: list[tuple[str, str]] = []
    for key, value in props:
        if key == "LoadCredential":
            if not value:
                loads = []
            else:
                ident, _, path = value.partition(":")
                loads.append((ident, path))
    for ident, path in loads:
        source = under(prefix, path)
        if source.is_dir():
            files = sorted(p for p in source.rglob("*") if p.is_file() and not p.is_symlink())
            named = [(f"{ident}_" + str(f.relative_to(source)).replace("/", "_"), f) for f in files]
        else:
            named = [(ident, source)]
        for name, file in named:
            if not (into / name).exists():
                (into / name).write_bytes(file.read_bytes())
    return into


def environment(props: list[tuple[str, str]], prefix: Path) -> dict[str, str]:
    """The Environment= assignments, with FLAGMAN_CONFIG read under `prefix`."""
    env: dict[str, str] = {}
    for key, value in props:
        if key == "Environment":
            env.update(dict(word.split("=", 1) for word in shlex.split(value)))
    env["FLAGMAN_CONFIG"] = str(under(prefix, env["FLAGMAN_CONFIG"]))
    return env


def flagman(env: dict[str, str], credentials: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real flagman CLI, as the transient unit would run it."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", **env, "CREDENTIALS_DIRECTORY": str(credentials)},
    )


def site_with_dkim(tmp_path: Path, instance: str | None = None) -> Path:
    """A staging root as an operator leaves it after OPERATING.md, sections 1-4 (or 13 for an
    instance), with DKIM on: the deployed files, the credential files the tmpfiles snippet
    makes, a configuration whose [dkim] selectors names fm2026, and in the credentials
    directory the site secret, the previous secrets and the key dkim-fm2026."""
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"), instance=instance)
    etc = "/etc/flagman" if instance is None else f"/etc/flagman-{instance}"
    tmpfiles = deploy.TMPFILES_PATH if instance is None else f"/etc/tmpfiles.d/flagman-{instance}.conf"
    state = tmp_path / "state"
    under(prefix, f"{etc}/flagman.toml").write_text(f"""\
[bot]
address = "flagman@race.example.org"
[database]
url = "sqlite:///{state}/flagman.sqlite"
[inbox]
kind = "maildir"
path = "{state}/mail/inbox"
[outbox]
kind = "maildir"
path = "{state}/mail/outbox"
[dkim]
selectors = ["fm2026"]
""")
    subprocess.run(
        [need("systemd-tmpfiles"), "--create", f"--root={prefix}", str(under(prefix, tmpfiles))],
        check=True,
        capture_output=True,
        timeout=60,
    )
    credentials = under(prefix, f"{etc}/credentials")
    (credentials / "site-secret").write_text("s" * 43 + "\n")
    (credentials / "previous-secrets").write_text("p" * 43 + "\n")
    key = nacl.signing.SigningKey.generate().encode(encoder=nacl.encoding.Base64Encoder).decode("ascii")
    (credentials / "dkim-fm2026").write_text(key + "\n")
    return prefix


@pytest.mark.parametrize("instance", [None, "club"])
def test_with_dkim_selectors_set_flagmanctl_hands_the_key_to_its_commands(tmp_path: Path, instance: str | None) -> None:
    """With `[dkim] selectors = ["fm2026"]` and the key in the credentials
    directory (/etc/flagman/credentials/dkim-fm2026, or /etc/flagman-club/... for
    `flagmanctl @club`), the credentials flagmanctl passes hold the key and the previous
    secrets, and `migrate`, `game new`, `game list` and `send` run, DKIM-signing the mail (they
    exited 2 with "selector 'fm2026' has no private key" when flagmanctl passed a fixed list of
    four)."""
    prefix = site_with_dkim(tmp_path, instance)
    etc = "/etc/flagman" if instance is None else f"/etc/flagman-{instance}"
    at = [] if instance is None else [f"@{instance}"]
    props = properties(command(prefix, *at, "game", "list"))
    assert ("LoadCredential", f"flagman:{etc}/credentials") in props
    env = environment(props, prefix)
    assert env["FLAGMAN_CONFIG"] == str(under(prefix, f"{etc}/flagman.toml"))
    credentials = systemd_credentials(props, prefix, tmp_path / "run-credentials")
    assert {"flagman_dkim-fm2026", "flagman_previous-secrets", "flagman_site-secret"} <= {
        p.name for p in credentials.iterdir()
    }
    players = [arg for seat in PLAYERS for arg in ("--player", f"{seat}={seat}@example.org")]
    for args in (["migrate"], ["game", "new", "racecraft", "--name", "rc1", *players], ["game", "list"]):
        done: Done | subprocess.CompletedProcess[str] = flagman_command(
            None, *args, env={**env, "CREDENTIALS_DIRECTORY": str(credentials)}
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    done = flagman(env, credentials, "send")  # as the unit runs it: a process of its own
    assert done.returncode == 0, (done.stdout, done.stderr)
    outbox = list((tmp_path / "state" / "mail" / "outbox").rglob("*"))
    sent = [p.read_bytes() for p in outbox if p.is_file()]
    assert sent and all(b"DKIM-Signature:" in mail and b"s=fm2026" in mail for mail in sent)

    # The same commands with the four credentials flagmanctl used to pass (a drop-in that
    # lists them in place of the directory, honoured like any drop-in) fail as the issue says.
    unit = "flagman.service" if instance is None else f"flagman@{instance}.service"
    drop_in = under(prefix, f"/etc/systemd/system/{unit}.d/four.conf")
    drop_in.parent.mkdir(parents=True)
    drop_in.write_text(
        "[Service]\nLoadCredential=\n"
        + "".join(f"LoadCredential={name}:{etc}/credentials/{name}\n" for name in OLD_FOUR)
    )
    props = properties(command(prefix, *at, "game", "list"))
    credentials = systemd_credentials(props, prefix, tmp_path / "four")
    done = flagman_command(
        None, "game", "list", env={**environment(props, prefix), "CREDENTIALS_DIRECTORY": str(credentials)}
    )
    assert done.returncode == 2 and "selector 'fm2026' has no private key" in done.stderr, done.stderr


def test_flagmanctl_passes_the_units_settings_in_order_and_its_own_arguments_last(tmp_path: Path) -> None:
    """The user, state directory, working directory, umask, environment and credentials of the
    unit, each once and in the unit's order; then the venv's flagman and the arguments as given."""
    venv = fake_venv(tmp_path / "venv")
    prefix = tmp_path / "root"
    deploy.deploy(prefix, venv)
    argv = command(prefix, "game", "new", "racecraft", "--name", "rc 1")
    assert argv[:6] == ["systemd-run", "--quiet", "--wait", "--collect", "--pipe", "--service-type=exec"]
    assert argv[-6:] == [f"{venv}/bin/flagman", "game", "new", "racecraft", "--name", "rc 1"]
    unit = [
        line
        for line in under(prefix, deploy.UNIT_PATH).read_text().splitlines()
        if line.split("=", 1)[0]
        in {
            "User",
            "DynamicUser",
            "StateDirectory",
            "StateDirectoryMode",
            "WorkingDirectory",
            "UMask",
            "Environment",
            "LoadCredential",
        }
    ]
    assert [f"{k}={v}" for k, v in properties(argv)] == unit


def test_flagmanctl_honours_the_fixed_user_and_other_drop_ins(tmp_path: Path) -> None:
    """After `flagman deploy --fixed-user`, flagmanctl runs as the fixed user
    flagman (DynamicUser=no, User=, Group= of the drop-in, after the unit's); a drop-in's
    LoadCredential= of a key kept elsewhere and its Environment= are passed too, in systemd's
    order (the drop-ins after the unit, by file name)."""
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"), fixed_user=True)
    drop_ins = under(prefix, "/etc/systemd/system/flagman.service.d")
    (drop_ins / "override.conf").write_text(
        "# systemctl edit flagman\n[Service]\nLoadCredential=dkim-hsm:/srv/keys/dkim-hsm\n"
        'Environment="FLAGMAN_NOTE=two words"\nRestart=always\n'
    )
    props = properties(command(prefix, "doctor"))
    assert last(props, "DynamicUser") == "no" and last(props, "User") == "flagman" and last(props, "Group") == "flagman"
    assert props.index(("DynamicUser", "yes")) < props.index(("DynamicUser", "no"))
    assert props[-2:] == [
        ("LoadCredential", "dkim-hsm:/srv/keys/dkim-hsm"),
        ("Environment", '"FLAGMAN_NOTE=two words"'),
    ]
    assert "Restart" not in dict(props), "only the settings that decide who runs flagman, with what and where"


def test_flagmanctls_properties_are_settings_systemd_accepts(tmp_path: Path) -> None:
    """The properties flagmanctl passes (with the fixed user and a drop-in), written as a unit,
    pass `systemd-analyze verify` with no warning."""
    analyze = need("systemd-analyze")
    venv = fake_venv(tmp_path / "venv")
    prefix = tmp_path / "root"
    deploy.deploy(prefix, venv, fixed_user=True)
    props = properties(command(prefix, "doctor"))
    unit = tmp_path / "flagmanctl-run.service"
    unit.write_text(
        "[Service]\nType=exec\n" + f"ExecStart={venv}/bin/flagman doctor\n" + "".join(f"{k}={v}\n" for k, v in props)
    )
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and str(unit) not in done.stderr, done.stderr


def test_flagmanctl_without_the_unit_says_how_to_install_it(tmp_path: Path) -> None:
    """No flagman.service under the root: one line naming `flagman deploy /`, exit 1, no command."""
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"))
    under(prefix, deploy.UNIT_PATH).unlink()
    done = run_flagmanctl(prefix, "doctor")
    assert done.returncode == 1 and done.stdout == ""
    assert "no flagman.service under" in done.stderr and "flagman deploy /" in done.stderr


def test_flagmanctl_refuses_a_specifier_it_cannot_expand(tmp_path: Path) -> None:
    """A drop-in setting that uses a specifier other than %i and %% (systemd-run expands none)
    is refused with the setting named, rather than passed on literally."""
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"))
    drop_in = under(prefix, "/etc/systemd/system/flagman.service.d/name.conf")
    drop_in.parent.mkdir(parents=True)
    drop_in.write_text("[Service]\nEnvironment=UNIT=%n\n")
    done = run_flagmanctl(prefix, "doctor")
    assert done.returncode == 1 and "Environment of flagman.service uses the specifier %n" in done.stderr


@pytest.mark.parametrize("name", ["Club", "-x", "a/b", "a b"])
def test_flagmanctl_refuses_a_bad_instance_name(tmp_path: Path, name: str) -> None:
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"))
    done = run_flagmanctl(prefix, f"@{name}", "doctor")
    assert done.returncode == 2 and "instance name" in done.stderr


def test_the_shipped_flagmanctl_is_valid_sh_and_names_the_shipped_venv() -> None:
    """deploy/flagmanctl parses as sh, is executable, and runs /opt/flagman/bin/flagman unless deployed elsewhere."""
    script = deploy.shipped_dir() / "flagmanctl"
    subprocess.run(["sh", "-n", str(script)], check=True, timeout=30)
    assert script.stat().st_mode & 0o111
    assert "FLAGMAN=${FLAGMAN:-/opt/flagman/bin/flagman}" in script.read_text()
    assert PurePosixPath(deploy.FLAGMANCTL_PATH).name == "flagmanctl"
