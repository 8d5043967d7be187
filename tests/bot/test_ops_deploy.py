"""deploy/: the systemd unit, its tmpfiles/sysusers snippets and the production configuration."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from bot.settings import load_secrets, load_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNIT = DEPLOY / "flagman.service"
def need(tool: str) -> str:
    """The tool's path; missing, a skip locally but a failure when tests/run requires everything."""
    path = shutil.which(tool)
    if path is None:
        message = f"{tool} is not installed (Debian: apt-get install systemd)"
        if os.environ.get("FLAGMAN_REQUIRE_SERVERS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def unit_values() -> dict[str, list[str]]:
    """Every Key=value of the unit, a list per key (keys may repeat)."""
    values: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if line and not line.startswith(("#", "[")) and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), []).append(value.strip())
    return values


def test_unit_parses_as_ini_with_the_three_sections() -> None:
    """[Unit], [Service], [Install]; nothing outside them."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    assert parser.sections() == ["Unit", "Service", "Install"]


def test_unit_is_a_hardened_notify_service_with_a_watchdog() -> None:
    """Type=notify, a watchdog, restart with a start limit, migrations first, SIGHUP reload, hardening."""
    v = unit_values()
    assert v["Type"] == ["notify"]
    assert re.fullmatch(r"\d+(min|s)", v["WatchdogSec"][0])
    assert v["Restart"] == ["on-failure"] and v["StartLimitBurst"] and v["StartLimitIntervalSec"]
    assert v["ExecStartPre"][0].endswith("flagman migrate")
    assert v["ExecStart"][0].endswith("flagman run")
    assert "-HUP $MAINPID" in v["ExecReload"][0]
    for key, value in {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
                       "PrivateTmp": "yes", "StateDirectory": "flagman", "DynamicUser": "yes"}.items():
        assert v[key] == [value], key


def test_credential_names_are_the_ones_settings_reads(tmp_path: Path) -> None:
    """Each LoadCredential= name, as a file in $CREDENTIALS_DIRECTORY, fills its secret in Settings."""
    names = [c.split(":", 1)[0] for c in unit_values()["LoadCredential"]]
    assert sorted(names) == ["db-password", "imap-password", "site-secret", "smtp-password"]
    for name in names:
        (tmp_path / name).write_text(f"value-of-{name}\n")
    secrets = load_secrets({"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert secrets.site_secret == "value-of-site-secret"
    assert secrets.imap_password == "value-of-imap-password"
    assert secrets.smtp_password == "value-of-smtp-password"
    assert secrets.db_password == "value-of-db-password"


def _seconds(value: str) -> float:
    number, unit = re.fullmatch(r"(\d+)\s*(min|s)?", value).groups()  # type: ignore[union-attr]
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
    done = subprocess.run([analyze, "security", "--offline=yes", "--no-pager", str(unit)],
                          capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for flagman.service: ([\d.]+)", done.stdout + done.stderr)
    assert match, done.stdout + done.stderr
    assert float(match.group(1)) <= 2.0


def test_tmpfiles_snippet_creates_root_only_credential_files(tmp_path: Path) -> None:
    """Applied to a scratch root, the snippet makes /etc/flagman/credentials/* mode 0600 in a 0700 directory."""
    tmpfiles = need("systemd-tmpfiles")
    done = subprocess.run([tmpfiles, "--create", f"--root={tmp_path}", str(DEPLOY / "flagman.tmpfiles")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    credentials = tmp_path / "etc" / "flagman" / "credentials"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o700
    names = sorted(p.name for p in credentials.iterdir())
    assert names == ["db-password", "imap-password", "site-secret", "smtp-password"]
    assert all(stat.S_IMODE((credentials / n).stat().st_mode) == 0o600 for n in names)
    # Re-applying never truncates a secret already written.
    (credentials / "site-secret").write_text("kept\n")
    subprocess.run(["systemd-tmpfiles", "--create", f"--root={tmp_path}", str(DEPLOY / "flagman.tmpfiles")],
                   check=True, capture_output=True, timeout=60)
    assert (credentials / "site-secret").read_text() == "kept\n"


def test_sysusers_snippet_is_accepted() -> None:
    """The optional fixed user parses (dry run: nothing is written)."""
    done = subprocess.run([need("systemd-sysusers"), "--dry-run", str(DEPLOY / "flagman.sysusers")],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "SYSTEMD_LOG_LEVEL": "info"})
    assert done.returncode == 0, done.stderr
    assert "Failed" not in done.stderr and "ignoring" not in done.stderr.lower(), done.stderr


def test_flagmanctl_runs_commands_with_the_units_user_and_credentials() -> None:
    """deploy/flagmanctl is valid sh and passes the unit's user, state directory, config and credentials."""
    script = DEPLOY / "flagmanctl"
    assert os.access(script, os.X_OK)
    subprocess.run(["sh", "-n", str(script)], check=True, timeout=30)
    text = script.read_text().replace('"$CREDENTIALS"', "/etc/flagman/credentials")
    v = unit_values()
    for credential in v["LoadCredential"]:
        assert f"--property=LoadCredential={credential}" in text, credential
    for key in ("DynamicUser", "User", "StateDirectory", "WorkingDirectory", "UMask"):
        assert f"--property={key}={v[key][0]}" in text, key
    assert f"--property=Environment={v['Environment'][0]}" in text
