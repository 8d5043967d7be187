"""Settings: TOML in, secrets from systemd credentials or the environment, clear errors."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from bot.settings import _SECTIONS, Settings, SettingsError, load_settings, parse_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_the_example_configuration_documents_every_option_with_a_comment_above_it() -> None:
    """config.example.toml documents every option in a comment above it."""
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
def test_a_wrong_configuration_says_what_is_wrong(tmp_path: Path, data: dict[str, object], message: str) -> None:
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
    """[inbox] idle_check_seconds (default 0.1) is the IMAP inbox's idle check."""
    from bot.app import build_imap_inbox

    inbox_table: dict[str, object] = {"kind": "imap", "security": "none"}
    if value is not None:
        inbox_table["idle_check_seconds"] = value
    settings = parse_settings({"inbox": inbox_table}, env={}, base_dir=tmp_path, source="t")
    assert settings.inbox.idle_check_seconds == check
    assert build_imap_inbox(settings).idle_check == check  # no connection until first use


# -- a schema: every setting's type and range, required keys, database schemes ------------------


@pytest.mark.parametrize(
    ("section", "option", "value"),
    [
        ("schedule", "poll_seconds", -5),
        ("schedule", "poll_seconds", 0),
        ("schedule", "tick_seconds", -1.5),
        ("schedule", "send_seconds", 0),
        ("inbox", "port", 0),
        ("inbox", "port", 70000),
        ("inbox", "batch_size", 0),
        ("inbox", "timeout", 0),
        ("inbox", "clock_skew", -1),
        ("outbox", "port", -587),
        ("outbox", "batch_size", -1),
        ("outbox", "timeout", -30),
        ("outbox", "max_attempts", 0),
        ("limits", "max_mail_bytes", 0),
        ("limits", "max_lines", -1),
        ("limits", "mails_per_sender_per_hour", 0),
        ("limits", "answers_to_strangers_per_hour", -1),
        ("limits", "address_change_hold_hours", -24),
        ("dns", "port", 0),
        ("dns", "timeout", 0),
    ],
)
def test_a_number_out_of_its_range_is_refused_in_one_line(
    tmp_path: Path, section: str, option: str, value: float
) -> None:
    """ "A negative interval (`poll_seconds = -5`) is accepted ... Validate every
    setting's range and type when the config is read (a schema, one line each, exit 2)"."""
    with pytest.raises(SettingsError) as caught:
        parse_settings({section: {option: value}}, env={}, base_dir=tmp_path, source="t")
    message = str(caught.value)
    assert message.startswith(f"[{section}] {option} = ") and "out of range" in message and "\n" not in message


def test_every_number_setting_has_a_range_and_its_default_lies_in_it() -> None:
    """The schema leaves no number unchecked: each int or float option (but the two of their
    own rules, idle_check_seconds and the worker counts) is in NUMBER_BOUNDS, its default within."""
    from bot.settings import NUMBER_BOUNDS

    own_rules = {
        ("inbox", "idle_check_seconds"),
        ("inbox", "parse_workers"),
        ("schedule", "resolve_workers"),
        ("practice", "running_max"),  # "[practice] ... must be at least ...": validate's own check
        ("practice", "idle_days"),
        ("practice", "turn_minutes"),
    }
    for name, cls in _SECTIONS.items():
        for f in fields(cls):
            default = getattr(cls(), f.name)
            if isinstance(default, bool) or not isinstance(default, int | float):
                continue
            if (name, f.name) in own_rules:
                continue
            assert (name, f.name) in NUMBER_BOUNDS, f"[{name}] {f.name} has no range"
            bounds, _unit = NUMBER_BOUNDS[(name, f.name)]
            assert bounds.holds(default), f"[{name}] {f.name}'s default {default} is out of its own range"


@pytest.mark.parametrize("value", ["25:99", "24:00", "8:00", "08:60", "0800", "08:00 ", "", "noon"])
def test_a_digest_time_that_is_no_time_of_day_is_refused(tmp_path: Path, value: str) -> None:
    """A `digest_time` that is no time of day (`"25:99"`) is refused, naming the setting."""
    with pytest.raises(SettingsError, match=re.escape("[schedule] digest_time")):
        parse_settings({"schedule": {"digest_time": value}}, env={}, base_dir=tmp_path, source="t")


@pytest.mark.parametrize("value", ["00:00", "08:00", "23:59"])
def test_a_digest_time_of_day_is_accepted(tmp_path: Path, value: str) -> None:
    settings = parse_settings({"schedule": {"digest_time": value}}, env={}, base_dir=tmp_path, source="t")
    assert settings.schedule.digest_time == value


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "flagman.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ('[database]\nurl = "sqlite:///f.sqlite"\n', "the section [bot] is required"),
        ('[bot]\nname = "F"\n[database]\nurl = "sqlite:///f.sqlite"\n', "[bot] address is required"),
        ('[bot]\naddress = "f@example.org"\n', "the section [database] is required"),
        ('[bot]\naddress = "f@example.org"\n[database]\n', "[database] url is required"),
    ],
)
def test_a_configuration_without_a_required_key_is_refused(tmp_path: Path, text: str, missing: str) -> None:
    """ "A missing `[bot] address` silently becomes `flagman@localhost` ... A missing
    `[database]` silently uses `sqlite:///flagman.sqlite` ... Required keys are required"."""
    with pytest.raises(SettingsError, match=re.escape(missing)):
        load_settings(_config(tmp_path, text), env={})


@pytest.mark.parametrize(
    ("url", "opened"),
    [
        ("postgres://u:{password}@db/f", "postgresql+psycopg://u:pw@db/f"),
        ("postgresql://u:{password}@db/f", "postgresql+psycopg://u:pw@db/f"),
        ("postgresql+psycopg://u:{password}@db/f", "postgresql+psycopg://u:pw@db/f"),
        ("POSTGRES://u@db/f", "postgresql+psycopg://u@db/f"),
    ],
)
def test_libpqs_postgres_spelling_is_accepted(tmp_path: Path, url: str, opened: str) -> None:
    """ "accept `postgres://`" (libpq's and many hosts' spelling), through psycopg."""
    settings = parse_settings(
        {"database": {"url": url}}, env={"FLAGMAN_DB_PASSWORD": "pw"}, base_dir=tmp_path, source="t"
    )
    assert settings.database_url == opened


@pytest.mark.parametrize(
    "url", ["mysql://u:secret@db/f", "mariadb+pymysql://u@db/f", "postgresql+psycopg2://u@db/f", "flagman.sqlite"]
)
def test_another_database_scheme_is_refused_in_one_line(tmp_path: Path, url: str) -> None:
    """ "`mysql://` print[s] tracebacks (exit 1): ... refuse others in one line"; the
    line never shows the URL's password."""
    with pytest.raises(SettingsError) as caught:
        parse_settings({"database": {"url": url}}, env={}, base_dir=tmp_path, source="t")
    message = str(caught.value)
    assert message.startswith("[database] url: ") and "\n" not in message and "secret" not in message


def test_the_example_configuration_states_every_numbers_range() -> None:
    """config.example.toml stays true to the schema: each range of NUMBER_BOUNDS is stated there."""
    from bot.settings import NUMBER_BOUNDS

    text = EXAMPLE.read_text(encoding="utf-8")
    for (section, option), (bounds, unit) in NUMBER_BOUNDS.items():
        assert f"#   [{section}] {option}: {bounds.words(unit)}\n" in text, (section, option)


def _number_cases() -> list[tuple[str, str]]:
    from bot.settings import NUMBER_BOUNDS

    return sorted(NUMBER_BOUNDS)


@pytest.mark.parametrize(("section", "option"), _number_cases())
def test_a_number_is_taken_exactly_when_it_lies_in_its_range(tmp_path: Path, section: str, option: str) -> None:
    """The schema as a property: any value of the option's type is accepted if and only if its
    range holds it, and then read back as written."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from bot.settings import NUMBER_BOUNDS

    bounds, _unit = NUMBER_BOUNDS[(section, option)]
    whole = isinstance(getattr(_SECTIONS[section](), option), int)
    values = (
        st.integers(min_value=-(10**10), max_value=10**10)
        if whole
        else st.floats(min_value=-1e7, max_value=1e7, allow_nan=False) | st.integers(-(10**6), 10**6)
    )
    edges = st.sampled_from([bounds.low, bounds.high, bounds.low - 1, bounds.high + 1]).map(
        lambda v: int(v) if whole else float(v)
    )

    @settings(max_examples=60, deadline=None)
    @given(values | edges)
    def check(value: float) -> None:
        try:
            parsed = parse_settings({section: {option: value}}, env={}, base_dir=tmp_path, source="t")
        except SettingsError as exc:
            assert not bounds.holds(value), (value, str(exc))
            assert "\n" not in str(exc)
        else:
            assert bounds.holds(value), value
            assert getattr(getattr(parsed, section), option) == value

    check()
