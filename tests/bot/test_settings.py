"""Settings: TOML in, secrets from systemd credentials or the environment, clear errors."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from bot.settings import _SECTIONS, Settings, SettingsError, load_settings, parse_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_the_example_configuration_documents_every_option_with_a_comment_above_it() -> None:
    """issue 3: config.example.toml documents every option in a comment above it."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    section = None
    seen: dict[str, set[str]] = {}
    for i, line in enumerate(lines):
        header = re.match(r"^\[(\w+)\]$", line)
        if header:
            section = header.group(1)
            continue
        option = re.match(r"^(\w+) = ", line)
        if option and section:
            seen.setdefault(section, set()).add(option.group(1))
            above = [ln for ln in lines[max(0, i - 12) : i]]
            assert any(ln.startswith("#") for ln in above[-6:]), (
                f"[{section}] {option.group(1)} has no comment above it"
            )
    for name, cls in _SECTIONS.items():
        assert {f.name for f in fields(cls)} == seen.get(name, set()), (
            f"[{name}] options in the example differ from the code"
        )
    settings = load_settings(EXAMPLE, env={})
    assert isinstance(settings, Settings)


def test_secrets_come_from_credentials_before_the_environment(tmp_path: Path) -> None:
    """settings.py: $CREDENTIALS_DIRECTORY/<name> (systemd LoadCredential=) wins over the environment."""
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "site-secret").write_text("from-credential\n")
    (creds / "previous-secrets").write_text("old1\nold2\n")
    env = {"CREDENTIALS_DIRECTORY": str(creds), "FLAGMAN_SECRET": "from-env", "FLAGMAN_SMTP_PASSWORD": "pw"}
    settings = parse_settings({}, env=env, base_dir=tmp_path, source="t")
    assert settings.secrets.site_secret == "from-credential"
    assert settings.secrets.previous_secrets == ("old1", "old2")
    assert settings.secrets.smtp_password == "pw"
    assert "from-credential" not in repr(settings), "secrets never appear in a repr (logs)"


def test_the_secret_file_is_the_last_resort(tmp_path: Path) -> None:
    (tmp_path / "s").write_text("filed\n")
    settings = parse_settings({"bot": {"secret_file": "s"}}, env={}, base_dir=tmp_path, source="t")
    assert settings.secrets.site_secret == "filed"
    settings = parse_settings(
        {"bot": {"secret_file": "s"}}, env={"FLAGMAN_SECRET": "env"}, base_dir=tmp_path, source="t"
    )
    assert settings.secrets.site_secret == "env"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"bot": {"adress": "x@y"}}, "has no option 'adress'"),
        ({"bots": {}}, "unknown section [bots]"),
        ({"bot": {"timezone": "Mars/Olympus"}}, "not a known time zone"),
        ({"inbox": {"kind": "pop3"}}, "kind must be"),
        ({"inbox": {"port": "993"}}, "must be a whole number"),
        ({"auth": {"accept": ["dmarc"]}}, "authserv_id is empty"),
    ],
)
def test_a_wrong_configuration_says_what_is_wrong(tmp_path: Path, data: dict, message: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(message)):
        parse_settings(data, env={}, base_dir=tmp_path, source="t")


def test_a_relative_sqlite_path_is_relative_to_the_configuration(tmp_path: Path) -> None:
    settings = parse_settings({"database": {"url": "sqlite:///data/f.sqlite"}}, env={}, base_dir=tmp_path, source="t")
    assert settings.database_url == f"sqlite:///{tmp_path}/data/f.sqlite"


@pytest.mark.parametrize("value", [-1, 0.01, 0.049, 61, 3600, "0.1", True])
def test_an_idle_check_out_of_bounds_is_refused(tmp_path: Path, value: object) -> None:
    """config.example.toml, [inbox] idle_check_seconds: 0 (IDLE alone) or 0.05 to 60 seconds."""
    with pytest.raises(SettingsError, match=re.escape("idle_check_seconds must be")):
        parse_settings({"inbox": {"idle_check_seconds": value}}, env={}, base_dir=tmp_path, source="t")


@pytest.mark.parametrize(("value", "check"), [(None, 0.1), (0, 0.0), (0.05, 0.05), (2, 2.0), (60, 60.0)])
def test_the_idle_check_reaches_the_imap_inbox(tmp_path: Path, value: float | None, check: float) -> None:
    """Issue 28: [inbox] idle_check_seconds (default 0.1) is the IMAP inbox's idle check."""
    from bot.app import build_imap_inbox

    inbox_table: dict[str, object] = {"kind": "imap", "security": "none"}
    if value is not None:
        inbox_table["idle_check_seconds"] = value
    settings = parse_settings({"inbox": inbox_table}, env={}, base_dir=tmp_path, source="t")
    assert settings.inbox.idle_check_seconds == check
    assert build_imap_inbox(settings).idle_check == check  # no connection until first use
