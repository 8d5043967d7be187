"""deploy/: the systemd unit, its tmpfiles/sysusers snippets and the production configuration;
`flagman deploy`, which writes them where systemd expects them; and the operator's guide and
the doctor agreeing on every path."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from bot.cli import main
from bot.host.unit import CREDENTIALS_DIR
from bot.ops import deploy
from bot.settings import load_secrets, load_settings
from tests.helpers import unavailable

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
UNIT = DEPLOY / "flagman.service"


def need(tool: str) -> str:
    """The tool's path; a test that needs a missing one FAILS (tests/helpers.unavailable: a
    developer may turn that into a skip with FLAGMAN_ALLOW_SKIP_SERVERS=1, never CI)."""
    path = shutil.which(tool)
    if path is None:
        unavailable(tool, "not installed (Debian: apt-get install systemd)")
    assert path is not None
    return path


def unit_values() -> dict[str, list[str]]:
    """Every Key=value of the unit, a list per key (keys may repeat)."""
    values: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if line and not line.startswith(("#", "[")) and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), []).append(value.strip())
    return values


class _KeysAsWritten(configparser.ConfigParser):
    """A unit file's keys are case-sensitive: kept as written, not lowered."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def test_unit_parses_as_ini_with_the_three_sections() -> None:
    """[Unit], [Service], [Install]; nothing outside them."""
    parser = _KeysAsWritten(strict=False, interpolation=None)
    parser.read_string(UNIT.read_text())
    assert parser.sections() == ["Unit", "Service", "Install"]


def test_unit_is_a_hardened_notify_service_with_a_watchdog() -> None:
    """Type=notify, a watchdog, restart with a start limit, migrations first, SIGHUP reload, hardening."""
    v = unit_values()
    assert v["Type"] == ["notify"]
    assert re.fullmatch(r"\d+(min|s)", v["WatchdogSec"][0])
    assert v["Restart"] == ["on-failure"] and v["StartLimitBurst"] and v["StartLimitIntervalSec"]
    assert "ExecStartPre" not in v, "run --migrate migrates, waiting for a database it cannot use yet"
    assert v["ExecStart"][0].endswith("flagman run --migrate")
    assert "-HUP $MAINPID" in v["ExecReload"][0]
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "StateDirectory": "flagman",
        "DynamicUser": "yes",
    }.items():
        assert v[key] == [value], key


def test_the_unit_hands_over_the_whole_credentials_directory_in_one_line(tmp_path: Path) -> None:
    """One LoadCredential= of /etc/flagman/credentials: every file in it, as systemd names a
    directory's files (flagman_<file>), fills its secret in Settings -- the previous secrets too."""
    assert unit_values()["LoadCredential"] == [f"flagman:{CREDENTIALS_DIR}"]
    for name in ("site-secret", "previous-secrets", "imap-password", "smtp-password", "db-password"):
        (tmp_path / f"flagman_{name}").write_text(f"value-of-{name}\n")
    secrets = load_secrets({"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert secrets.site_secret == "value-of-site-secret"
    assert secrets.previous_secrets == ("value-of-previous-secrets",)
    assert secrets.imap_password == "value-of-imap-password"
    assert secrets.smtp_password == "value-of-smtp-password"
    assert secrets.db_password == "value-of-db-password"


def test_a_credential_a_drop_in_hands_over_by_its_own_name_wins(tmp_path: Path) -> None:
    """`LoadCredential=site-secret:/elsewhere` in a drop-in (the file named site-secret) wins over
    the directory's flagman_site-secret; an empty file of the directory counts as not set."""
    (tmp_path / "flagman_site-secret").write_text("from-the-directory\n")
    (tmp_path / "site-secret").write_text("from-a-drop-in\n")
    (tmp_path / "flagman_smtp-password").write_text("")
    secrets = load_secrets({"CREDENTIALS_DIRECTORY": str(tmp_path), "FLAGMAN_SMTP_PASSWORD": "from-env"})
    assert secrets.site_secret == "from-a-drop-in"
    assert secrets.smtp_password == "from-env"


def _seconds(value: str) -> float:
    found = re.fullmatch(r"(\d+)\s*(min|s)?", value)
    assert found is not None, value
    number, unit = found.groups()
    return float(number) * (60 if unit == "min" else 1)


def test_production_config_is_valid_and_fits_the_unit() -> None:
    """deploy/flagman.toml loads, uses absolute paths, and its intervals are shorter than WatchdogSec."""
    settings = load_settings(DEPLOY / "flagman.toml", env={"FLAGMAN_SECRET": "x" * 32})
    watchdog = _seconds(unit_values()["WatchdogSec"][0])
    s = settings.schedule
    assert max(s.poll_seconds, s.tick_seconds, s.send_seconds) * 2 < watchdog
    sqlite = [line for line in (DEPLOY / "flagman.toml").read_text().splitlines() if "sqlite:" in line]
    assert sqlite and all("sqlite:////var/lib/flagman/" in line for line in sqlite)


def test_systemd_analyze_verify_accepts_the_unit_without_warnings(tmp_path: Path) -> None:
    """`systemd-analyze verify` (the ExecStart binary pointed at a real copy) prints nothing and exits 0."""
    analyze = need("systemd-analyze")
    binary = tmp_path / "bin" / "flagman"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    unit = tmp_path / "flagman.service"
    unit.write_text(UNIT.read_text().replace("/opt/flagman/bin/flagman", str(binary)))
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    problems = [line for line in done.stderr.splitlines() if str(unit) in line or "flagman" in line]
    assert not problems, done.stderr
    # The same check sees a mistake: a misspelt key is reported.
    bad = tmp_path / "bad.service"
    bad.write_text(unit.read_text().replace("NoNewPrivileges=", "NoNewPrivilegez="))
    done = subprocess.run([analyze, "verify", str(bad)], capture_output=True, text=True, timeout=60)
    assert "Unknown key" in done.stderr


def test_systemd_analyze_security_rates_the_unit_well(tmp_path: Path) -> None:
    """`systemd-analyze security --offline` rates the exposure at most 2.0 (of 10: "OK")."""
    analyze = need("systemd-analyze")
    unit = tmp_path / "flagman.service"
    shutil.copy(UNIT, unit)
    done = subprocess.run(
        [analyze, "security", "--offline=yes", "--no-pager", str(unit)], capture_output=True, text=True, timeout=60
    )
    match = re.search(r"Overall exposure level for flagman.service: ([\d.]+)", done.stdout + done.stderr)
    assert match, done.stdout + done.stderr
    assert float(match.group(1)) <= 2.0


def test_tmpfiles_snippet_creates_root_only_credential_files(tmp_path: Path) -> None:
    """Applied to a scratch root, the snippet makes /etc/flagman/credentials/* mode 0600 in a 0700 directory."""
    tmpfiles = need("systemd-tmpfiles")
    done = subprocess.run(
        [tmpfiles, "--create", f"--root={tmp_path}", str(DEPLOY / "flagman.tmpfiles")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    credentials = tmp_path / "etc" / "flagman" / "credentials"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o700
    names = sorted(p.name for p in credentials.iterdir())
    assert names == ["db-password", "imap-password", "site-secret", "smtp-password"]
    assert all(stat.S_IMODE((credentials / n).stat().st_mode) == 0o600 for n in names)
    # Re-applying never truncates a secret already written.
    (credentials / "site-secret").write_text("kept\n")
    subprocess.run(
        ["systemd-tmpfiles", "--create", f"--root={tmp_path}", str(DEPLOY / "flagman.tmpfiles")],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert (credentials / "site-secret").read_text() == "kept\n"


def test_sysusers_snippet_is_accepted() -> None:
    """The optional fixed user parses (dry run: nothing is written)."""
    done = subprocess.run(
        [need("systemd-sysusers"), "--dry-run", str(DEPLOY / "flagman.sysusers")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SYSTEMD_LOG_LEVEL": "info"},
    )
    assert done.returncode == 0, done.stderr
    assert "Failed" not in done.stderr and "ignoring" not in done.stderr.lower(), done.stderr


# -- flagman deploy ------------------------------------------------------------------------------


def fake_venv(root: Path) -> PurePosixPath:
    """A venv as far as the unit cares: bin/flagman, executable."""
    binary = root / "bin" / "flagman"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    return PurePosixPath(root)


def under(prefix: Path, path: str | PurePosixPath) -> Path:
    return prefix / str(path).lstrip("/")


def values_of(unit: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in unit.read_text().splitlines():
        if line and not line.startswith(("#", "[")) and "=" in line:
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def test_every_shipped_file_has_a_place() -> None:
    """Nothing in deploy/ is left out of `flagman deploy` (with --fixed-user), nor is
    config.example.toml; each goes to an absolute path, and no two to the same one."""
    shipped = {p for p in DEPLOY.rglob("*") if p.is_file()} | {DEPLOY.parent / "config.example.toml"}
    every = deploy.placements(PurePosixPath("/opt/flagman"), fixed_user=True)
    assert {p.source for p in every} == shipped
    assert len({p.target for p in every}) == len(every)
    assert all(p.target.is_absolute() for p in every)
    assert {p.name for p in deploy.placements(PurePosixPath("/opt/flagman"))} == {p.name for p in every} - {
        "flagman.sysusers",
        "fixed-user.conf",
    }


def test_deploy_writes_every_file_where_systemd_expects_it(tmp_path: Path) -> None:
    """The unit in /etc/systemd/system, the tmpfiles snippet in /etc/tmpfiles.d (what its own
    comment and OPERATING.md say), flagmanctl in /usr/local/sbin (0755), the configuration in
    /etc/flagman, the guide where the unit's Documentation= says; the unit and flagmanctl name
    the venv given."""
    venv = fake_venv(tmp_path / "venv")
    prefix = tmp_path / "root"
    done = deploy.deploy(prefix, venv)
    assert {w.action for w in done} == {"written"}
    unit = under(prefix, "/etc/systemd/system/flagman.service")
    v = values_of(unit)
    assert "ExecStartPre" not in v and v["ExecStart"] == [f"{venv}/bin/flagman run --migrate"]
    (doc,) = v["Documentation"]
    assert doc == f"file://{venv}/share/doc/flagman/OPERATING.md"
    assert under(prefix, doc.removeprefix("file://")).read_text() == (DEPLOY / "OPERATING.md").read_text()
    assert under(prefix, deploy.TMPFILES_PATH).read_text() == (DEPLOY / "flagman.tmpfiles").read_text()
    assert f"installs it as {deploy.TMPFILES_PATH}" in (DEPLOY / "flagman.tmpfiles").read_text()
    ctl = under(prefix, deploy.FLAGMANCTL_PATH)
    assert stat.S_IMODE(ctl.stat().st_mode) == 0o755 and f"FLAGMAN=${{FLAGMAN:-{venv}/bin/flagman}}" in ctl.read_text()
    config = under(prefix, deploy.CONFIG_PATH)
    assert stat.S_IMODE(config.stat().st_mode) == 0o644
    # The configuration names the documentation of every option where deploy put it.
    example = f"{venv}/share/doc/flagman/config.example.toml"
    assert example in config.read_text() and under(prefix, example).exists()
    for name in ("dovecot-flagman.conf", "dovecot-lmtp-postfix.conf", "postfix-main.cf"):
        assert under(prefix, f"{venv}/share/doc/flagman/mail/{name}").exists()
    assert not under(prefix, "/etc/sysusers.d").exists(), "the fixed user only when asked"


def test_deploying_again_keeps_the_configuration_and_updates_the_rest(tmp_path: Path) -> None:
    """A second run: unchanged files stay; the operator's flagman.toml is kept as edited; a
    unit someone changed is put back (changes go in drop-ins)."""
    venv = fake_venv(tmp_path / "venv")
    prefix = tmp_path / "root"
    deploy.deploy(prefix, venv)
    config = under(prefix, deploy.CONFIG_PATH)
    config.write_text(config.read_text().replace("flagman@race.example.org", "bot@my.example"))
    unit = under(prefix, deploy.UNIT_PATH)
    unit.write_text(unit.read_text() + "\n# edited\n")
    actions = {w.placement.name: w.action for w in deploy.deploy(prefix, venv)}
    assert actions["flagman.toml"] == "kept" and "bot@my.example" in config.read_text()
    assert actions["flagman.service"] == "updated" and "# edited" not in unit.read_text()
    assert {a for n, a in actions.items() if n not in ("flagman.toml", "flagman.service")} == {"unchanged"}


def test_fixed_user_adds_the_sysusers_entry_and_the_drop_in(tmp_path: Path) -> None:
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"), fixed_user=True)
    assert under(prefix, "/etc/sysusers.d/flagman.conf").read_text() == (DEPLOY / "flagman.sysusers").read_text()
    drop_in = under(prefix, "/etc/systemd/system/flagman.service.d/fixed-user.conf").read_text()
    assert "DynamicUser=no" in drop_in


def test_the_deployed_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    """`systemd-analyze verify` on the unit as deployed (its ExecStart= a real file), and the
    deployed tmpfiles snippet applied to the staging root makes the credential files."""
    analyze, tmpfiles = need("systemd-analyze"), need("systemd-tmpfiles")
    prefix = tmp_path / "root"
    deploy.deploy(prefix, fake_venv(tmp_path / "venv"))
    unit = under(prefix, deploy.UNIT_PATH)
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not [line for line in done.stderr.splitlines() if "flagman" in line], done.stderr
    done = subprocess.run(
        [tmpfiles, "--create", f"--root={prefix}", str(under(prefix, deploy.TMPFILES_PATH))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in under(prefix, CREDENTIALS_DIR).iterdir())
    assert names == ["db-password", "imap-password", "site-secret", "smtp-password"]


def test_the_cli_prints_the_plan_and_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman deploy --print` lists each file and where it goes and writes nothing;
    `--print FILE` prints it as it would be written; no PREFIX and no --print is bad usage."""
    venv = str(fake_venv(tmp_path / "venv"))
    assert main(["deploy", "--print", "--venv", venv]) == 0
    plan = capsys.readouterr().out
    assert (
        f"-> {deploy.UNIT_PATH}" in plan
        and f"-> {deploy.TMPFILES_PATH}" in plan
        and f"-> {venv}/share/doc/flagman/OPERATING.md" in plan
    )
    assert main(["deploy", "--print", "flagman.service", "--venv", venv]) == 0
    assert f"ExecStart={venv}/bin/flagman run" in capsys.readouterr().out
    assert main(["deploy", "--print", "config.example.toml"]) == 0
    assert capsys.readouterr().out == (DEPLOY.parent / "config.example.toml").read_text()
    assert main(["deploy", "--print", "nosuch"]) == 2
    assert "no shipped file 'nosuch'" in capsys.readouterr().err
    assert main(["deploy"]) == 2
    assert "give PREFIX" in capsys.readouterr().err
    assert main(["deploy", str(tmp_path / "r"), "--venv", "/opt/my flagman"]) == 2
    assert "cannot take unquoted" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_the_cli_deploys_under_a_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    venv = str(fake_venv(tmp_path / "venv"))
    assert main(["deploy", str(tmp_path / "root"), "--venv", venv]) == 0
    out = capsys.readouterr().out
    assert f"written   {tmp_path / 'root'}{deploy.UNIT_PATH}" in out and "staging root" in out
    assert under(tmp_path / "root", deploy.UNIT_PATH).exists()


def test_the_generated_configurations_name_only_what_is_installed(tmp_path: Path) -> None:
    """`flagman init`'s flagman.toml points at `flagman deploy --print config.example.toml`
    (which works from the wheel), not at a file of the source tree."""
    from bot.cli import init_dir

    text = init_dir(tmp_path / "site").read_text()
    assert "flagman deploy --print config.example.toml" in text
    assert "source tree" not in text and "source tree" not in (DEPLOY / "flagman.toml").read_text()


# -- one path for each thing: the unit, doctor's fixes, the guide -------------------------------


def test_doctors_fixes_name_the_credential_paths_of_the_unit() -> None:
    """Every credential path in doctor's fixes is a file of the directory the unit hands over,
    and each is one the tmpfiles snippet makes, and the other way round (doctor said
    /etc/flagman/imap-password)."""
    from bot.host import storage
    from bot.ops import doctor, reach
    from bot.settings import parse_settings

    settings = parse_settings({}, env={}, base_dir=Path("/"), source="test")
    hints = [
        reach.credential_hint(reach.imap_server(settings, 1.0)),
        reach.credential_hint(reach.smtp_server(settings, 1.0)),
        storage.database_hint("", False),
        *[f.fix for f in doctor.check_secret(settings)],
    ]
    named = set(re.findall(r"/etc/flagman/[\w./-]*[\w-]", " ".join(hints))) - {CREDENTIALS_DIR}
    (source,) = (c.split(":", 1)[1] for c in unit_values()["LoadCredential"])
    assert {str(PurePosixPath(path).parent) for path in named} == {source}, named
    tmpfiles = set(re.findall(r"^f (\S+)", (DEPLOY / "flagman.tmpfiles").read_text(), re.M))
    assert named == tmpfiles, (named, tmpfiles)


def test_the_guide_uses_one_path_for_each_file() -> None:
    """OPERATING.md, README.md, config.example.toml and the deploy files: the credentials only
    under /etc/flagman/credentials/, the tmpfiles snippet only in /etc/tmpfiles.d."""
    texts = {
        p.name: p.read_text()
        for p in (*DEPLOY.rglob("*"), DEPLOY.parent / "README.md", DEPLOY.parent / "config.example.toml")
        if p.is_file()
    }
    for name, text in texts.items():
        for credential in ("site-secret", "imap-password", "smtp-password", "db-password"):
            for path in re.findall(rf"/etc/flagman/\S*{credential}", text):
                assert path.startswith(f"{CREDENTIALS_DIR}/{credential}"), (name, path)
        assert "/usr/lib/tmpfiles.d" not in text and "/usr/lib/sysusers.d" not in text, name
    guide = texts["OPERATING.md"]
    assert f"systemd-tmpfiles --create {deploy.TMPFILES_PATH}" in guide


def shell_blocks(text: str) -> list[list[str]]:
    return [block.splitlines() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def test_the_guide_installs_from_a_fresh_debian_machine_in_order() -> None:
    """OPERATING.md, section 1: python3-venv before the venv, the venv before pip, pip before
    `flagman deploy /`, deploy before systemd-tmpfiles and daemon-reload; flagman always by its
    full path until flagmanctl exists; every command of the guide's blocks is one a root shell
    on Debian has (or flagman, flagmanctl, or a variable the block sets)."""
    guide = (DEPLOY / "OPERATING.md").read_text()
    install = shell_blocks(guide)[0]
    order = [
        "apt-get install -y python3 python3-venv",
        "python3 -m venv /opt/flagman",
        '/opt/flagman/bin/pip install "$WHEEL"',
        "/opt/flagman/bin/flagman deploy /",
        f"systemd-tmpfiles --create {deploy.TMPFILES_PATH}",
        "systemctl daemon-reload",
    ]
    at = [next(i for i, line in enumerate(install) if line.startswith(step)) for step in order]
    assert at == sorted(at), install
    known = {
        "apt-get",
        "python3",
        "systemd-tmpfiles",
        "systemctl",
        "journalctl",
        "editor",
        "cp",
        "postconf",
        "read",
        "sed",
        "sudo",
        "ln",
        "pg_dump",
        "pg_restore",
        "flagmanctl",
        "/opt/flagman/bin/pip",
        "printf",
        "postmap",
        "doveconf",  # Dovecot's settings in force, read before the recipe changes them
        "/opt/flagman/bin/flagman",
    }
    for block in shell_blocks(guide):
        assigned: set[str] = set()
        for line in block:
            command = line.split("#")[0].strip()
            if not command:
                continue
            word = command.split()[0]
            if "=" in word and word.split("=")[0].isidentifier():
                assigned.add(word.split("=")[0])
                continue
            assert word in known, (word, line)
            for used in re.findall(r"\$(\w+)", command):
                assert used in assigned | {"pw"}, (used, line, "set it in the same block, before")


def test_the_readme_runs_no_bare_flagman_before_putting_it_on_the_path() -> None:
    """README's quick start: after installing into /opt/flagman, `flagman` is either called
    by its full path or PATH has /opt/flagman/bin first."""
    readme = (DEPLOY.parent / "README.md").read_text()
    (quick,) = [b for b in shell_blocks(readme) if any("/opt/flagman" in line for line in b)]
    on_path = False
    for line in quick:
        if line.startswith("export PATH=") and "/opt/flagman/bin" in line:
            on_path = True
        if line.startswith("flagman "):
            assert on_path, line
    assert "python3-venv" in readme.split("python3 -m venv /opt/flagman")[0]


def test_the_postfix_recipe_routes_only_the_bots_address(tmp_path: Path) -> None:
    """The recipe changes no transport of the whole server (virtual_transport,
    mailbox_transport, local_transport, default_transport) but adds a transport map whose one
    entry is the bot's address ([bot] address of the deployed configuration) to the LMTP socket
    that dovecot-lmtp-postfix.conf makes; the guide's commands add that same entry."""
    mail = DEPLOY / "mail"
    settings = dict(
        line.split(" = ", 1)
        for line in (mail / "postfix-main.cf").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert settings == {"recipient_delimiter": "+", "transport_maps": "hash:/etc/postfix/transport"}
    every_domain = ("virtual_transport", "mailbox_transport", "local_transport", "default_transport")
    guide = (DEPLOY / "OPERATING.md").read_text()
    for text in (guide, *(p.read_text() for p in mail.iterdir())):
        assert not any(f"postconf -e '{name}" in text for name in every_domain)
    (entry,) = [
        line.split()
        for line in (mail / "postfix-transport").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    address = load_settings(DEPLOY / "flagman.toml", env={"FLAGMAN_SECRET": "x" * 32}).bot.address
    assert entry == [address, "lmtp:unix:private/dovecot-lmtp"]
    socket = re.search(r"unix_listener (\S+)", (mail / "dovecot-lmtp-postfix.conf").read_text())
    assert socket and socket.group(1) == "/var/spool/postfix/private/dovecot-lmtp"  # Postfix's chroot + private/...
    assert f"printf '%s\\n' '{' '.join(entry)}' >> /etc/postfix/transport" in guide
    assert "postconf -e 'transport_maps = hash:/etc/postfix/transport'" in guide


def test_the_mail_recipe_says_what_its_server_wide_settings_change_for_other_users() -> None:
    """ "`recipient_delimiter = +` is set unconditionally and the Dovecot file applies to
    every user of the server: scope both, or say exactly what they change for others". They
    cannot be scoped (server-wide settings of Postfix and Dovecot): each file, and the guide,
    says what they change for the other users, and how to check first."""
    mail = DEPLOY / "mail"
    dovecot = (mail / "dovecot-flagman.conf").read_text()
    postfix = (mail / "postfix-main.cf").read_text()
    guide = (DEPLOY / "OPERATING.md").read_text()
    assert "What it changes for the server's other users" in dovecot and "EVERY user" in dovecot
    assert "doveconf recipient_delimiter lmtp_save_to_detail_mailbox" in dovecot
    assert "What it changes for the server's other addresses" in postfix and "-+" in postfix
    assert "postconf recipient_delimiter" in postfix
    assert "What the two delimiter settings change for the server's other users" in guide
    assert "doveconf recipient_delimiter lmtp_save_to_detail_mailbox" in guide
