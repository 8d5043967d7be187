"""`flagman doctor` on the embedded default (SQLite + Maildir): what it finds and the fixes it names.

The IMAP/SMTP checks against the real Dovecot and SMTP sink are in tests/e2e/test_doctor_e2e.py.
"""

from __future__ import annotations

import io
import shutil
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cli import main
from bot.db import downgrade, head_revision
from bot.ops.doctor import Severity, compare_clock, diagnose, run_doctor
from bot.settings import load_settings
from tests.helpers import init_site


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return init_site(tmp_path / "site")


def doctor(config: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = run_doctor(config, fix="--fix" in args, env=env or {}, out=out)
    return code, out.getvalue()


def problems(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("PROBLEM")]


def problem_fixes(text: str) -> list[str]:
    """The fix printed under each PROBLEM line."""
    lines = text.splitlines()
    return [
        lines[i + 1].split("fix: ", 1)[1]
        for i, line in enumerate(lines[:-1])
        if line.startswith("PROBLEM") and "fix: " in lines[i + 1]
    ]


def set_option(config: Path, section: str, line: str) -> None:
    text = config.read_text()
    config.write_text(text.replace(f"[{section}]\n", f"[{section}]\n{line}\n", 1))


def test_a_fresh_embedded_site_is_all_good(site: Path) -> None:
    """`flagman init` then `flagman doctor`: nothing to fix, exit 0; the database was written
    (a probe rolled back), checked (quick_check) and found private; the free space was looked at."""
    code, out = doctor(site)
    assert code == 0, out
    assert out.rstrip().endswith("all good")
    assert f"head revision {head_revision()}" in out
    assert "takes a write (a probe, rolled back)" in out and "intact (SQLite's quick_check)" in out
    assert "ok       disk      " in out and "free on the file system of" in out
    assert "readable by other users" not in out


def test_a_database_readable_by_every_user_is_a_warning(site: Path) -> None:
    """A database file of mode 0644 (made by an older `flagman init`): a warning, and the chmod."""
    database = site.parent / "flagman.sqlite"
    database.chmod(0o644)
    code, out = doctor(site)
    assert code == 0 and "readable by other users of this machine (mode 0644)" in out
    assert f"fix: chmod 0600 {database}" in out


def test_the_cli_runs_the_doctor(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman --config X doctor` exits 0 on a good site."""
    assert main(["--config", str(site), "doctor"]) == 0
    assert "all good" in capsys.readouterr().out


def test_every_problem_comes_with_its_fix(site: Path) -> None:
    """A missing secret and a missing database: two problems, each with a fix; exit 1."""
    (site.parent / "site-secret").unlink()
    set_option(site, "bot", "")  # keep the file valid
    site.write_text(site.read_text().replace('secret_file = "site-secret"', ""))
    (site.parent / "flagman.sqlite").unlink()
    code, out = doctor(site)
    assert code == 1
    found = problems(out)
    assert len(found) == 2, out
    lines = out.splitlines()
    for line in found:
        assert "fix:" in lines[lines.index(line) + 1], out
    assert "no site secret" in out and "flagman migrate" in out


def test_an_example_or_short_secret_is_a_problem(site: Path) -> None:
    """The documentation's example secret, or a short one, is as good as none."""
    for secret in ("change-me", "tiny-9z"):
        code, out = doctor(site, env={"FLAGMAN_SECRET": secret})
        assert code == 1
        assert any("secret" in p for p in problems(out)), out
        assert secret not in out.replace("change-me-to", ""), "the secret itself is never printed"


def test_fix_creates_the_missing_maildir_folders(site: Path) -> None:
    """A missing Maildir is a warning (the service makes it); --fix creates it; then nothing is left to say."""
    settings = load_settings(site, env={})
    shutil.rmtree(settings.resolve_path(settings.inbox.path))
    shutil.rmtree(settings.resolve_path(settings.outbox.path))
    code, out = doctor(site)
    assert code == 0 and out.count("warning  inbox") == 1 and "does not exist yet" in out
    code, out = doctor(site, "--fix")
    assert code == 0 and "created Maildir" in out, out
    assert "warning" not in doctor(site)[1]


def test_a_database_behind_the_code_needs_migrate(site: Path) -> None:
    """A schema one revision behind: the fix is `flagman migrate`."""
    settings = load_settings(site, env={})
    downgrade(settings.database_url, "-1")
    code, out = doctor(site)
    assert code == 1
    assert f"needs {head_revision()}" in out and "flagman migrate" in out


def test_an_unreachable_database_is_a_problem_and_no_password_is_shown(site: Path) -> None:
    """A PostgreSQL URL where nothing listens: reported with its fix; the password stays hidden."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    set_option(site, "database", f'url = "postgresql+psycopg://flagman:{{password}}@127.0.0.1:{port}/flagman"')
    site.write_text(site.read_text().replace('url = "sqlite:///flagman.sqlite"\n', ""))
    code, out = doctor(site, env={"FLAGMAN_DB_PASSWORD": "pg-pass-9911"})
    assert code == 1
    assert any("cannot reach" in p for p in problems(out)), out
    assert "pg-pass-9911" not in out


def test_a_broken_configuration_is_one_problem(tmp_path: Path) -> None:
    """An unknown option: the doctor names it and the file to edit; exit 1."""
    config = tmp_path / "flagman.toml"
    config.write_text("[bot]\nadress = 'x@y'\n")
    code, out = doctor(config)
    assert code == 1 and "adress" in out and "fix: edit" in out


def test_clock_comparison() -> None:
    """Off by more than two minutes is a problem; a past arrival time says nothing (one-sided)."""
    now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    assert [f.severity for f in compare_clock("db", now + timedelta(seconds=30), now)] == [Severity.OK]
    assert [f.severity for f in compare_clock("db", now - timedelta(minutes=10), now)] == [Severity.PROBLEM]
    assert [f.severity for f in compare_clock("db", now + timedelta(minutes=10), now)] == [Severity.PROBLEM]
    assert [f.severity for f in compare_clock("imap", now - timedelta(days=3), now, one_sided=True)] == [Severity.OK]
    assert [f.severity for f in compare_clock("imap", now + timedelta(hours=1), now, one_sided=True)] == [
        Severity.PROBLEM
    ]


def test_a_clock_in_the_past_is_a_problem(site: Path) -> None:
    """A machine that thinks it is 1970 would resolve no deadline right."""
    settings = load_settings(site, env={})
    found = diagnose(settings, now=datetime(1970, 1, 2, tzinfo=UTC))
    assert any(f.severity is Severity.PROBLEM and f.area == "clock" for f in found)


def test_a_running_service_is_reported(site: Path) -> None:
    """The doctor says whether a service holds the instance lock (information, not a problem)."""
    from bot.host.instance import lock_for

    lock = lock_for(load_settings(site, env={}))
    assert lock is not None and lock.try_acquire()
    try:
        code, out = doctor(site)
    finally:
        lock.release()
    assert code == 0 and "is held" in out


def test_imap_findings_are_classified_with_their_fixes() -> None:
    """No IDLE or MOVE: a warning (polling works); a missing folder or refused login: a problem with its fix."""
    from bot.ops.doctor import _imap_fix

    idle = _imap_fix("the IMAP server does not advertise IDLE: new mail is noticed only by polling every 10 s", False)
    assert idle[0] is Severity.WARNING
    assert (
        _imap_fix("the IMAP server lacks MOVE: done mail is moved by COPY + EXPUNGE (slower)", False)[0]
        is Severity.WARNING
    )
    missing = _imap_fix("IMAP folder 'Processed' is missing", False)
    assert missing[0] is Severity.PROBLEM and "--fix" in missing[1]
    login = _imap_fix("IMAP login as 'bot' at h:993 refused: AUTHENTICATIONFAILED", False)
    assert login[0] is Severity.PROBLEM and "imap-password" in login[1]


def test_a_database_host_that_does_not_resolve_gets_its_own_fix(site: Path) -> None:
    """A PostgreSQL host name DNS does not know: the fix is the name, not the password."""
    set_option(site, "database", 'url = "postgresql+psycopg://flagman@no-such-host.invalid/flagman"')
    site.write_text(site.read_text().replace('url = "sqlite:///flagman.sqlite"\n', ""))
    code, out = doctor(site)
    assert code == 1
    (fix,) = problem_fixes(out)
    assert "does not resolve" in fix and "password" not in fix


def test_the_refused_database_fix_is_about_the_server_not_the_password(site: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    set_option(site, "database", f'url = "postgresql+psycopg://flagman@127.0.0.1:{port}/flagman"')
    site.write_text(site.read_text().replace('url = "sqlite:///flagman.sqlite"\n', ""))
    code, out = doctor(site)
    (fix,) = problem_fixes(out)
    assert code == 1 and "nothing accepts connections" in fix and "password" not in fix


def test_every_kind_of_failure_has_a_fix_of_its_own() -> None:
    """reach.hint: for one server, no two kinds of failure get the same fix; only the login's
    names the password, at the unit's credential path."""
    from bot.host.unit import CREDENTIALS_DIR
    from bot.ops.reach import Failure, hint, imap_server, smtp_server
    from bot.settings import parse_settings

    settings = parse_settings(
        {
            "inbox": {"kind": "imap", "host": "imap.example.org", "username": "bot"},
            "outbox": {"kind": "smtp", "host": "smtp.example.org", "username": "bot"},
        },
        env={},
        base_dir=Path("/"),
        source="test",
    )
    for server in (imap_server(settings, 5.0), smtp_server(settings, 5.0)):
        fixes = {failure: hint(failure, server) for failure in Failure}
        assert len(set(fixes.values())) == len(Failure)
        assert f"{CREDENTIALS_DIR}/{server.credential}" in fixes[Failure.LOGIN]
        for failure in (
            Failure.NAME,
            Failure.REFUSED,
            Failure.TIMEOUT,
            Failure.TLS,
            Failure.NO_STARTTLS,
            Failure.CERTIFICATE,
        ):
            assert "password" not in fixes[failure], failure


def test_failures_are_told_apart_through_the_exceptions_they_were_raised_from() -> None:
    """failure_of: ImapInbox wraps the socket's error, smtplib raises SMTPServerDisconnected
    while handling a read timeout; what counts is the cause."""
    import smtplib
    import ssl

    from bot.mail_in.imap import ImapLoginError, ImapUnavailable
    from bot.ops.reach import Failure, failure_of

    def raised(make_outer: type[BaseException], inner: BaseException, *, cause: bool) -> BaseException:
        try:
            try:
                raise inner
            except BaseException as exc:
                if cause:
                    raise make_outer("wrapped") from exc
                raise make_outer("wrapped")  # noqa: B904 - the implicit chaining is the point
        except BaseException as outer:  # noqa: BLE001 - the exception made is the result
            return outer
        raise AssertionError("unreachable")

    assert failure_of(raised(ImapUnavailable, ConnectionRefusedError(111, "refused"), cause=True)) is Failure.REFUSED
    assert failure_of(raised(smtplib.SMTPServerDisconnected, TimeoutError("timed out"), cause=False)) is Failure.TIMEOUT
    assert failure_of(raised(ImapUnavailable, ssl.SSLError(1, "WRONG_VERSION_NUMBER"), cause=True)) is Failure.TLS
    assert failure_of(ssl.SSLCertVerificationError(1, "self-signed")) is Failure.CERTIFICATE
    assert (
        failure_of(raised(ImapUnavailable, socket.gaierror(-2, "Name or service not known"), cause=True))
        is Failure.NAME
    )
    assert failure_of(ImapLoginError("refused")) is Failure.LOGIN
    assert failure_of(smtplib.SMTPAuthenticationError(535, b"no")) is Failure.LOGIN
    assert (
        failure_of(smtplib.SMTPNotSupportedError("STARTTLS extension not supported by server.")) is Failure.NO_STARTTLS
    )
    assert failure_of(smtplib.SMTPNotSupportedError("SMTP AUTH extension not supported by server.")) is Failure.NO_LOGIN
    assert failure_of(ValueError("something else")) is Failure.OTHER


def test_the_secret_fix_names_the_units_credential_file(site: Path) -> None:
    (site.parent / "site-secret").unlink()
    site.write_text(site.read_text().replace('secret_file = "site-secret"', ""))
    code, out = doctor(site)
    assert code == 1 and "/etc/flagman/credentials/site-secret" in out and "/etc/flagman/site-secret" not in out
