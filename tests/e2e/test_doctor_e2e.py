"""`flagman doctor` against the real Dovecot, SMTP sink and PostgreSQL: a working and broken set-ups."""

from __future__ import annotations

import io
import itertools
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.ops.doctor import run_doctor
from tests.helpers import fresh_database

pytestmark = pytest.mark.e2e

_serial = itertools.count(1)
SECRET = "e2e-doctor-site-secret-0123456789"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Site:
    def __init__(self, tmp_path: Path, dovecot, smtp_sink, db_url: str) -> None:  # noqa: ANN001
        n = next(_serial)
        self.user = dovecot.add_user(f"flagman{n}@doctor.test", "right-password")
        self.dovecot = dovecot
        self.config = tmp_path / "flagman.toml"
        self.inbox = {"kind": "imap", "host": dovecot.host, "port": dovecot.imap_port, "security": "none",
                      "username": self.user, "timeout": 10.0}
        self.outbox = {"kind": "smtp", "host": smtp_sink.host, "port": smtp_sink.port, "security": "none",
                       "timeout": 10.0}
        self.db_url = db_url
        self.env = {"FLAGMAN_SECRET": SECRET, "FLAGMAN_IMAP_PASSWORD": "right-password"}

    def write(self) -> None:
        def table(name: str, values: dict) -> str:
            lines = [f"[{name}]"]
            for key, value in values.items():
                lines.append(f"{key} = {value!r}".replace("'", '"') if isinstance(value, str) else f"{key} = {value}")
            return "\n".join(lines)

        self.config.write_text("\n\n".join([
            table("bot", {"address": self.user}),
            table("database", {"url": self.db_url}),
            table("inbox", self.inbox),
            table("outbox", self.outbox),
        ]) + "\n")

    def doctor(self, *args: str) -> tuple[int, str]:
        self.write()
        out = io.StringIO()
        code = run_doctor(self.config, fix="--fix" in args, env=self.env, out=out)
        return code, out.getvalue()


@pytest.fixture
def site(tmp_path: Path, dovecot, smtp_sink) -> Site:  # noqa: ANN001
    return Site(tmp_path, dovecot, smtp_sink, fresh_database("sqlite", tmp_path))


def problems(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("PROBLEM")]


def test_a_working_set_up_passes(site: Site) -> None:
    """IMAP login, folders, IDLE, SMTP, database, secret: all good, exit 0."""
    code, out = site.doctor()
    assert code == 0, out
    assert "IMAP login as" in out and "SMTP relay" in out and "all good" in out
    assert "IDLE" not in out, "Dovecot has IDLE: no warning about it"


def test_a_wrong_imap_password_is_reported_with_its_fix(site: Site) -> None:
    """The server refuses the login: a problem naming the account and the credential to check."""
    site.env["FLAGMAN_IMAP_PASSWORD"] = "wrong-password"
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "refused" in found[0] and site.user in found[0], out
    assert "imap-password" in out
    assert "wrong-password" not in out


def test_a_missing_folder_is_reported_and_fix_creates_it(site: Site) -> None:
    """A configured Processed folder that does not exist: reported; --fix creates it; then all good."""
    site.inbox["processed_folder"] = f"Handled{next(_serial)}"
    code, out = site.doctor()
    assert code == 1
    assert any("missing" in p and site.inbox["processed_folder"] in p for p in problems(out)), out
    assert "doctor --fix" in out
    code, out = site.doctor("--fix")
    assert code == 0, out
    assert f"created IMAP folder {site.inbox['processed_folder']!r}" in out
    assert site.doctor()[0] == 0


def test_an_unreachable_database_is_reported_and_the_mail_checks_still_run(site: Site) -> None:
    """PostgreSQL down: one problem for the database; IMAP and SMTP are still checked."""
    site.db_url = f"postgresql+psycopg://flagman@127.0.0.1:{closed_port()}/flagman"
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "cannot reach" in found[0], out
    assert "IMAP login as" in out


def test_an_unreachable_smtp_relay_is_reported(site: Site) -> None:
    """Nothing listens on the relay's port: a problem naming host, port and what to check."""
    site.outbox["port"] = closed_port()
    code, out = site.doctor()
    assert code == 1
    assert any("SMTP" in p for p in problems(out)), out
    assert "[outbox] host, port" in out


def test_a_mail_from_the_future_shows_our_clock_is_slow(site: Site) -> None:
    """The newest mail arrived (INTERNALDATE) an hour after our 'now': the clock is behind."""
    client = site.dovecot.imap_client(site.user, folder=None)
    try:
        future = datetime.now(UTC) + timedelta(hours=1)
        client.append("INBOX", b"From: a@b.test\r\nSubject: t\r\nMessage-ID: <future@b.test>\r\n\r\nhi\r\n",
                      msg_time=future)
    finally:
        client.logout()
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "clock" in found[0] and "behind" in found[0], out


def test_on_postgresql_the_clock_is_compared_with_the_server(tmp_path: Path, dovecot, smtp_sink, postgres) -> None:  # noqa: ANN001
    """With PostgreSQL the database server's now() is the reference clock."""
    site = Site(tmp_path, dovecot, smtp_sink, fresh_database("postgresql", tmp_path, postgres))
    code, out = site.doctor()
    assert code == 0, out
    assert "agrees with the database server" in out


@pytest.fixture
def smtp_with_auth() -> Iterator[int]:
    """An aiosmtpd relay that wants AUTH (PLAIN/LOGIN, no TLS on loopback): user relay / relay-pass."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Sink
    from aiosmtpd.smtp import AuthResult

    def authenticator(server, session, envelope, mechanism, auth_data):  # noqa: ANN001, ANN202
        ok = auth_data.login == b"relay" and auth_data.password == b"relay-pass"
        return AuthResult(success=ok, handled=False)

    port = closed_port()
    controller = Controller(Sink(), hostname="127.0.0.1", port=port, authenticator=authenticator,
                            auth_require_tls=False)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def test_smtp_login_is_checked(site: Site, smtp_with_auth: int) -> None:
    """The relay accepts the right login (all good) and refuses a wrong one (a problem naming the credential)."""
    site.outbox.update({"port": smtp_with_auth, "username": "relay"})
    site.env["FLAGMAN_SMTP_PASSWORD"] = "relay-pass"
    code, out = site.doctor()
    assert code == 0, out
    assert "accepts the login as relay" in out
    site.env["FLAGMAN_SMTP_PASSWORD"] = "not-the-pass"
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "SMTP login" in found[0], out
    assert "smtp-password" in out and "not-the-pass" not in out
