"""Several bots on one host: the templated unit flagman@.service, each instance with
its own configuration, credentials, state and user; `flagman deploy --instance NAME`;
`flagmanctl @NAME`; and the backup units (plain and templated) that `flagman deploy` writes.

As in test_ops_deploy.py, systemd's own tools check the files (`systemd-analyze verify` and
`security`, `systemd-tmpfiles`, `systemd-sysusers`); a missing tool fails the test.
"""

from __future__ import annotations

import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from bot.cli import main
from bot.ops import deploy
from bot.settings import load_settings
from tests.bot.ops.test_flagmanctl import command, last, properties, run_flagmanctl
from tests.bot.ops.test_ops_deploy import fake_venv, need, under

UNITS = PurePosixPath("/etc/systemd/system")


def staged(tmp_path: Path, *instances: str, fixed_user: bool = False) -> tuple[Path, PurePosixPath]:
    """A staging root with flagman deployed for each instance (the plain unit with none)."""
    venv = fake_venv(tmp_path / "venv")
    prefix = tmp_path / "root"
    for instance in instances or (None,):
        deploy.deploy(prefix, venv, fixed_user=fixed_user, instance=instance)
    return prefix, venv


def verify(tmp_path: Path, prefix: Path, *names: str) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify` on deployed units (an instance name verifies its template),
    copied with flagmanctl's path pointed at the staged one (the units run /usr/local/sbin/flagmanctl)."""
    analyze = need("systemd-analyze")
    folder = tmp_path / "verify"
    folder.mkdir(exist_ok=True)
    for unit in under(prefix, UNITS).iterdir():
        if unit.is_file():
            text = unit.read_text().replace(deploy.FLAGMANCTL_PATH, str(under(prefix, deploy.FLAGMANCTL_PATH)))
            (folder / unit.name).write_text(text)
    return subprocess.run(
        [analyze, "verify", *(str(folder / n) for n in names)], capture_output=True, text=True, timeout=60
    )


def test_each_instance_gets_its_own_configuration_credentials_and_state(tmp_path: Path) -> None:
    """`flagman deploy --instance club` and `--instance league` on one root: one templated unit;
    for each, /etc/flagman-NAME/flagman.toml with its state in /var/lib/flagman-NAME, and a
    tmpfiles snippet that makes /etc/flagman-NAME/credentials (0700) with root-only files;
    flagman.service's own configuration is not written."""
    tmpfiles = need("systemd-tmpfiles")
    prefix, venv = staged(tmp_path, "club", "league")
    assert under(prefix, UNITS / "flagman@.service").is_file() and under(prefix, deploy.UNIT_PATH).is_file()
    assert not under(prefix, deploy.CONFIG_PATH).exists() and not under(prefix, deploy.TMPFILES_PATH).exists()
    for name in ("club", "league"):
        config = under(prefix, f"/etc/flagman-{name}/flagman.toml")
        settings = load_settings(config, env={"FLAGMAN_SECRET": "x" * 32})
        assert settings.database_url == f"sqlite:////var/lib/flagman-{name}/flagman.sqlite"
        assert settings.bot.archive_dir == f"/var/lib/flagman-{name}/archive"
        assert f"`flagmanctl @{name} doctor --probe-plus`" in config.read_text()
        snippet = under(prefix, f"/etc/tmpfiles.d/flagman-{name}.conf")
        done = subprocess.run(
            [tmpfiles, "--create", f"--root={prefix}", str(snippet)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        credentials = under(prefix, f"/etc/flagman-{name}/credentials")
        assert stat.S_IMODE(credentials.stat().st_mode) == 0o700
        assert sorted(p.name for p in credentials.iterdir()) == [
            "db-password",
            "imap-password",
            "site-secret",
            "smtp-password",
        ]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in credentials.iterdir())
    assert not under(prefix, "/etc/flagman").exists()


def test_the_templated_unit_is_flagman_service_with_the_instances_paths_and_user(tmp_path: Path) -> None:
    """flagman@.service differs from flagman.service only where the instance goes: the
    description, the configuration, the credentials, the working and state directories and the
    user, each with %i, and FLAGMAN_INSTANCE (for doctor's fixes); the rest (ExecStart=, the
    watchdog, the hardening) is the same."""
    prefix, venv = staged(tmp_path)
    plain = under(prefix, deploy.UNIT_PATH).read_text().splitlines()
    template = under(prefix, UNITS / "flagman@.service").read_text().splitlines()
    template.remove("Environment=FLAGMAN_INSTANCE=%i")
    settings = [(a, b) for a, b in zip(plain, template, strict=True) if not a.startswith("#")]
    changed = {b for a, b in settings if a != b}
    assert changed == {
        "Description=Flagman play-by-email race director (%i)",
        "WorkingDirectory=/var/lib/flagman-%i",
        "Environment=FLAGMAN_CONFIG=/etc/flagman-%i/flagman.toml",
        "LoadCredential=flagman:/etc/flagman-%i/credentials",
        "User=flagman-%i",
        "StateDirectory=flagman-%i",
        "ConfigurationDirectory=flagman-%i",
    }
    assert f"ExecStart={venv}/bin/flagman run --migrate" in template


def test_an_instance_of_the_template_passes_systemd_analyze_verify_and_security(tmp_path: Path) -> None:
    """`systemd-analyze verify flagman@club.service` is clean (a misspelt key in the template
    is reported: the check sees the template), and its exposure is rated as flagman.service's."""
    prefix, _ = staged(tmp_path, "club")
    done = verify(tmp_path, prefix, "flagman@club.service")
    assert done.returncode == 0 and "flagman" not in done.stderr, done.stderr
    template = tmp_path / "verify" / "flagman@.service"
    template.write_text(template.read_text().replace("NoNewPrivileges=", "NoNewPrivilegez="))
    assert "Unknown key" in verify_again(tmp_path, "flagman@club.service").stderr
    shutil.copy(under(prefix, UNITS / "flagman@.service"), template)
    done = subprocess.run(
        [
            need("systemd-analyze"),
            "security",
            "--offline=yes",
            "--no-pager",
            str(tmp_path / "verify" / "flagman@club.service"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for flagman@club.service: ([\d.]+)", done.stdout + done.stderr)
    assert match and float(match.group(1)) <= 2.0, done.stdout + done.stderr


def verify_again(tmp_path: Path, *names: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [need("systemd-analyze"), "verify", *(str(tmp_path / "verify" / n) for n in names)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_backup_timers_and_services_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    """flagman-backup.service and .timer, and their templates for an instance, are clean
    (a timer is verified with the service it starts); a daily, persistent timer."""
    prefix, _ = staged(tmp_path, "club")
    done = verify(
        tmp_path,
        prefix,
        "flagman-backup.service",
        "flagman-backup.timer",
        "flagman-backup@club.service",
        "flagman-backup@club.timer",
    )
    assert done.returncode == 0 and "flagman" not in done.stderr, done.stderr
    timer = under(prefix, UNITS / "flagman-backup.timer").read_text()
    assert "OnCalendar=*-*-* 03:30:00" in timer and "Persistent=true" in timer and "WantedBy=timers.target" in timer


@pytest.mark.parametrize("instance", [None, "club"])
def test_the_backup_service_runs_flagman_backup_keep_14_through_flagmanctl(
    tmp_path: Path, instance: str | None
) -> None:
    """The backup unit's ExecStart= is flagmanctl (so the unit's user, credentials and drop-ins
    apply: nothing repeated); run as systemd would (%i expanded), it runs `flagman backup --keep
    14` into the instance's state directory as the instance's user."""
    prefix, venv = staged(tmp_path, *([instance] if instance else []))
    unit = "flagman-backup.service" if instance is None else "flagman-backup@.service"
    (exec_start,) = [
        line.removeprefix("ExecStart=")
        for line in under(prefix, UNITS / unit).read_text().splitlines()
        if line.startswith("ExecStart=")
    ]
    argv = shlex.split(exec_start.replace("%i", instance or ""))
    assert argv[0] == deploy.FLAGMANCTL_PATH
    ran = command(prefix, *argv[1:])
    state = "/var/lib/flagman" if instance is None else f"/var/lib/flagman-{instance}"
    assert ran[-5:] == [f"{venv}/bin/flagman", "backup", "--keep", "14", f"{state}/backups"]
    props = properties(ran)
    assert last(props, "User") == ("flagman" if instance is None else f"flagman-{instance}")
    assert last(props, "WorkingDirectory") == state


def test_flagmanctl_at_an_instance_uses_that_instances_unit_and_drop_ins(tmp_path: Path) -> None:
    """`flagmanctl @club` passes club's user, state directory, configuration and credentials,
    the template's drop-ins and club's own, and none of league's; FLAGMAN_INSTANCE=club is the
    same as @club."""
    prefix, _ = staged(tmp_path, "club", "league")
    for unit, text in (
        ("flagman@.service.d/all.conf", "Environment=ALL=1\n"),
        ("flagman@club.service.d/keys.conf", "LoadCredential=dkim-hsm:/srv/club/dkim-hsm\n"),
        ("flagman@league.service.d/keys.conf", "LoadCredential=dkim-hsm:/srv/league/dkim-hsm\n"),
    ):
        path = under(prefix, UNITS / unit)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[Service]\n" + text)
    props = properties(command(prefix, "@club", "doctor"))
    assert last(props, "User") == "flagman-club" and last(props, "StateDirectory") == "flagman-club"
    assert last(props, "WorkingDirectory") == "/var/lib/flagman-club"
    assert ("Environment", "FLAGMAN_CONFIG=/etc/flagman-club/flagman.toml") in props
    assert [v for k, v in props if k == "LoadCredential"] == [
        "flagman:/etc/flagman-club/credentials",
        "dkim-hsm:/srv/club/dkim-hsm",
    ]
    assert ("Environment", "ALL=1") in props and ("Environment", "FLAGMAN_INSTANCE=club") in props
    script = under(prefix, deploy.FLAGMANCTL_PATH)
    by_env = subprocess.run(
        ["sh", str(script), "--root", str(prefix), "--dry-run", "doctor"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "FLAGMAN_INSTANCE": "club"},
    )
    assert by_env.returncode == 0 and properties(by_env.stdout.splitlines()) == props
    league = properties(command(prefix, "@league", "doctor"))
    assert ("LoadCredential", "dkim-hsm:/srv/club/dkim-hsm") not in league and last(league, "User") == "flagman-league"


def test_flagmanctl_at_an_instance_that_has_no_template_says_so(tmp_path: Path) -> None:
    prefix, _ = staged(tmp_path)
    under(prefix, UNITS / "flagman@.service").unlink()
    done = run_flagmanctl(prefix, "@club", "doctor")
    assert done.returncode == 1 and "no flagman@.service under" in done.stderr


def test_an_instance_with_the_fixed_user(tmp_path: Path) -> None:
    """`flagman deploy --fixed-user --instance club`: the user flagman-club (sysusers, accepted
    by systemd-sysusers) and the drop-in for flagman@club.service, which flagmanctl @club honours."""
    prefix, _ = staged(tmp_path, "club", fixed_user=True)
    sysusers = under(prefix, "/etc/sysusers.d/flagman-club.conf")
    assert re.search(r"^u flagman-club - .* /var/lib/flagman-club$", sysusers.read_text(), re.M)
    done = subprocess.run(
        [need("systemd-sysusers"), "--dry-run", str(sysusers)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "Failed" not in done.stderr, done.stderr
    drop_in = under(prefix, UNITS / "flagman@club.service.d/fixed-user.conf").read_text()
    assert "User=flagman-club" in drop_in and "Group=flagman-club" in drop_in
    props = properties(command(prefix, "@club", "doctor"))
    assert (last(props, "DynamicUser"), last(props, "User"), last(props, "Group")) == (
        "no",
        "flagman-club",
        "flagman-club",
    )
    assert not under(prefix, "/etc/sysusers.d/flagman.conf").exists()


@pytest.mark.parametrize("name", ["Club", "a.b", "-x", "x" * 24, ""])
def test_deploy_refuses_an_instance_name_that_cannot_be_a_user_name(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["deploy", str(tmp_path / "root"), f"--instance={name}"]) == 2
    assert "instance name" in capsys.readouterr().err
    assert not (tmp_path / "root").exists()


def test_the_cli_deploys_an_instance_and_says_what_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman deploy --print --instance club` lists the instance's files; `--print
    flagman@.service` prints the template."""
    venv = str(fake_venv(tmp_path / "venv"))
    assert main(["deploy", "--print", "--venv", venv, "--instance", "club"]) == 0
    plan = capsys.readouterr().out
    assert "-> /etc/flagman-club/flagman.toml" in plan and "-> /etc/tmpfiles.d/flagman-club.conf" in plan
    assert "-> /etc/systemd/system/flagman@.service" in plan and "-> /etc/systemd/system/flagman-backup@.timer" in plan
    assert main(["deploy", "--print", "flagman@.service", "--venv", venv]) == 0
    assert "User=flagman-%i" in capsys.readouterr().out


def test_doctors_fixes_name_the_instances_credentials_and_unit() -> None:
    """Under flagman@club (FLAGMAN_INSTANCE=club, set by the template and passed by flagmanctl
    @club), doctor's fixes name /etc/flagman-club/credentials/... and `systemctl restart
    flagman@club`; without it, flagman.service's."""
    from bot.host import storage
    from bot.ops import doctor, reach
    from bot.settings import parse_settings

    settings = parse_settings({}, env={}, base_dir=Path("/"), source="test")

    def fixes() -> str:
        return " ".join(
            [
                reach.credential_hint(reach.imap_server(settings, 1.0)),
                storage.database_hint("", False),
                *[f.fix for f in doctor.check_secret(settings)],
            ]
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLAGMAN_INSTANCE", "club")
        club = fixes()
    assert "/etc/flagman-club/credentials/imap-password" in club and "/etc/flagman-club/credentials/site-secret" in club
    assert "/etc/flagman-club/credentials/db-password" in club and "systemctl restart flagman@club`" in club
    assert "/etc/flagman/" not in club
    plain = fixes()
    assert "/etc/flagman/credentials/site-secret" in plain and "systemctl restart flagman`" in plain
