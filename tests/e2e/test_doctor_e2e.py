"""`flagman doctor` against the real Dovecot, SMTP sink and PostgreSQL: a working and broken set-ups.

Each way a server can fail gets its own finding and its own fix: a name that does
not resolve, a refused connection, a server that never answers (a socket that listens and
never speaks: the timeout is [inbox]/[outbox] timeout, kept short here, and the wait is the
socket's, not a sleep), a TLS handshake on a plain port, no STARTTLS, a certificate not
trusted, a login refused. The plus-address probe is in tests/e2e/test_plus_address.py.
"""

from __future__ import annotations

import io
import itertools
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.host.unit import CREDENTIALS_DIR
from bot.ops.doctor import run_doctor
from tests.helpers import fresh_database
from tests.servers import Dovecot, Postgres, SmtpSink

pytestmark = pytest.mark.e2e

_serial = itertools.count(1)
SECRET = "e2e-doctor-site-secret-0123456789"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def toml_table(name: str, values: dict[str, object]) -> str:
    lines = [f"[{name}]"]
    for key, value in values.items():
        lines.append(
            f'{key} = "{value}"'
            if isinstance(value, str)
            else f"{key} = {str(value).lower()}"
            if isinstance(value, bool)
            else f"{key} = {value}"
        )
    return "\n".join(lines)


class Site:
    """A flagman.toml on the real servers; `doctor()` runs the doctor on it."""

    def __init__(self, tmp_path: Path, dovecot: Dovecot, relay_host: str, relay_port: int, db_url: str) -> None:
        n = next(_serial)
        self.user = dovecot.add_user(f"flagman{n}@doctor.test", "right-password")
        self.dovecot = dovecot
        self.config = tmp_path / "flagman.toml"
        self.inbox: dict[str, object] = {
            "kind": "imap",
            "host": dovecot.host,
            "port": dovecot.imap_port,
            "security": "none",
            "username": self.user,
            "timeout": 10.0,
        }
        self.outbox: dict[str, object] = {
            "kind": "smtp",
            "host": relay_host,
            "port": relay_port,
            "security": "none",
            "timeout": 10.0,
        }
        self.db_url = db_url
        self.env = {"FLAGMAN_SECRET": SECRET, "FLAGMAN_IMAP_PASSWORD": "right-password"}

    def write(self) -> None:
        self.config.write_text(
            "\n\n".join(
                [
                    toml_table("bot", {"address": self.user}),
                    toml_table("database", {"url": self.db_url}),
                    toml_table("inbox", self.inbox),
                    toml_table("outbox", self.outbox),
                ]
            )
            + "\n"
        )

    def doctor(self, *args: str, probe_wait: float = 60.0) -> tuple[int, str]:
        self.write()
        out = io.StringIO()
        code = run_doctor(
            self.config,
            fix="--fix" in args,
            env=self.env,
            out=out,
            probe_plus="--probe-plus" in args,
            probe_wait=probe_wait,
        )
        return code, out.getvalue()


@pytest.fixture
def site(tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink) -> Site:
    return Site(tmp_path, dovecot, smtp_sink.host, smtp_sink.port, fresh_database("sqlite", tmp_path))


def problems(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("PROBLEM")]


def fixes(text: str) -> list[str]:
    return [line.split("fix: ", 1)[1] for line in text.splitlines() if "fix: " in line]


def test_a_working_set_up_passes(site: Site) -> None:
    """IMAP login, folders, IDLE, SMTP, database, secret: all good, exit 0."""
    code, out = site.doctor()
    assert code == 0, out
    assert "IMAP login as" in out and "SMTP relay" in out and "all good" in out
    assert "IDLE" not in out, "Dovecot has IDLE: no warning about it"


def test_old_mail_in_the_imap_processed_folder_is_one_retention_warning_until_a_prune(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doctor's retention check on IMAP: a mail in Processed the server received 40 days ago
    (past processed_mail_days = 30 and the daily prune's slack) is one warning line; after
    `flagman prune` the folder holds nothing older. The Processed folder is only read for it."""
    from bot.cli import main

    assert site.doctor("--fix")[0] == 0  # the folders
    client = site.dovecot.imap_client(site.user, folder=None)
    try:
        client.append("Processed", b"Subject: old\r\n\r\nold\r\n", msg_time=datetime.now(UTC) - timedelta(days=40))
        client.append("Processed", b"Subject: new\r\n\r\nnew\r\n", msg_time=datetime.now(UTC) - timedelta(days=1))
    finally:
        client.logout()
    code, out = site.doctor()
    assert code == 0, out
    (warned,) = [line for line in out.splitlines() if line.startswith("warning  retention")]
    assert "the inbox's Processed folder holds 1 mail older than 32 days" in warned, out
    for name, value in site.env.items():
        monkeypatch.setenv(name, value)
    assert main(["--config", str(site.config), "prune"]) == 0
    code, out = site.doctor()
    assert "ok       retention the inbox's Processed folder holds no mail older than 30 days" in out, out


def test_a_missing_folder_is_reported_and_fix_creates_it(site: Site) -> None:
    """A configured Processed folder that does not exist: reported; --fix creates it; then all good."""
    site.inbox["processed_folder"] = f"Handled{next(_serial)}"
    code, out = site.doctor()
    assert code == 1
    assert any("missing" in p and str(site.inbox["processed_folder"]) in p for p in problems(out)), out
    assert "doctor --fix" in out
    assert "create_folders" not in out, "no such option: the fix is `flagman doctor --fix`"
    code, out = site.doctor("--fix")
    assert code == 0, out
    assert f"created IMAP folder {site.inbox['processed_folder']!r}" in out
    assert site.doctor()[0] == 0


def test_an_unreachable_database_is_reported_and_the_mail_checks_still_run(site: Site) -> None:
    """PostgreSQL down: one problem for the database, with the fix for a refused connection;
    IMAP and SMTP are still checked."""
    site.db_url = f"postgresql+psycopg://flagman@127.0.0.1:{closed_port()}/flagman"
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "cannot reach" in found[0], out
    assert "nothing accepts connections" in fixes(out)[0] and "systemctl status postgresql" in fixes(out)[0]
    assert "IMAP login as" in out


def test_a_missing_postgresql_database_says_to_create_it(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, postgres: Postgres
) -> None:
    """The server runs but has no such database: the fix is createdb, not "check the password"."""
    site = Site(tmp_path, dovecot, smtp_sink.host, smtp_sink.port, postgres.url.rsplit("/", 1)[0] + "/no_such_db")
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "does not exist" in found[0], out
    assert "createdb" in fixes(out)[0] and "db-password" not in fixes(out)[0]


def test_a_mail_from_the_future_shows_our_clock_is_slow(site: Site) -> None:
    """The newest mail arrived (INTERNALDATE) an hour after our 'now': the clock is behind."""
    client = site.dovecot.imap_client(site.user, folder=None)
    try:
        future = datetime.now(UTC) + timedelta(hours=1)
        client.append(
            "INBOX", b"From: a@b.test\r\nSubject: t\r\nMessage-ID: <future@b.test>\r\n\r\nhi\r\n", msg_time=future
        )
    finally:
        client.logout()
    code, out = site.doctor()
    assert code == 1
    found = problems(out)
    assert len(found) == 1 and "clock" in found[0] and "behind" in found[0], out


def test_on_postgresql_the_clock_is_compared_with_the_server(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, postgres: Postgres
) -> None:
    """With PostgreSQL the database server's now() is the reference clock."""
    site = Site(tmp_path, dovecot, smtp_sink.host, smtp_sink.port, fresh_database("postgresql", tmp_path, postgres))
    code, out = site.doctor()
    assert code == 0, out
    assert "agrees with the database server" in out
    assert "takes a write (a probe, rolled back)" in out and "quick_check" not in out


# -- each way a server fails, its own fix -----------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections and never says a word: the kernel completes the TCP
    handshake (the backlog), nobody accepts, so a client waits for a greeting until its timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield int(listener.getsockname()[1])


@pytest.fixture(scope="module")
def tls_dovecot() -> Iterator[Dovecot]:
    """IMAPS with a self-signed certificate: one this machine does not trust."""
    with Dovecot(tls=True) as server:
        yield server


@pytest.fixture(scope="module")
def tls_relay() -> Iterator[SmtpSink]:
    """SMTP over TLS (port 465 style) with a self-signed certificate."""
    with SmtpSink(security="tls") as sink:
        yield sink


@pytest.fixture(scope="module")
def auth_relay() -> Iterator[SmtpSink]:
    """A relay that wants AUTH (PLAIN/LOGIN, no TLS on loopback): user relay / relay-pass."""
    with SmtpSink(users={"relay": "relay-pass"}) as sink:
        yield sink


@dataclass(frozen=True)
class Case:
    """One broken set-up: what to change, what the finding must say, what its fix must say
    (and must not: the fix for another failure)."""

    says: str
    fix: tuple[str, ...]
    not_fix: tuple[str, ...] = ()
    inbox: dict[str, object] = field(default_factory=dict)
    outbox: dict[str, object] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


PASSWORD_HINT = f"{CREDENTIALS_DIR}/"
CASES = {
    "imap-name": Case("does not resolve", ("getent hosts",), ("password",), inbox={"host": "no-such-host.invalid"}),
    "imap-refused": Case(
        "connection refused",
        ("nothing accepts connections", "[inbox] host and port"),
        ("password",),
        inbox={"port": "closed"},
    ),
    "imap-timeout": Case(
        "no answer in time",
        ("did not answer within 0.5 s", "firewall", "[inbox] timeout"),
        ("password",),
        inbox={"port": "silent", "timeout": 0.5},
    ),
    "imap-tls-on-a-plain-port": Case(
        "TLS handshake failed", ('use security = "starttls"',), ("password",), inbox={"security": "tls"}
    ),
    "imap-no-starttls": Case(
        "STARTTLS not offered", ("does not offer STARTTLS",), ("password",), inbox={"security": "starttls"}
    ),
    "imap-certificate": Case(
        "certificate not trusted",
        ("update-ca-certificates",),
        ("password",),
        inbox={"security": "tls", "port": "imaps"},
    ),
    "imap-login": Case(
        "login as",
        ("[inbox] username", f"{PASSWORD_HINT}imap-password", "FLAGMAN_IMAP_PASSWORD"),
        ("host and port",),
        env={"FLAGMAN_IMAP_PASSWORD": "wrong-password"},
    ),
    "smtp-name": Case("does not resolve", ("getent hosts",), ("password",), outbox={"host": "no-such-host.invalid"}),
    "smtp-refused": Case(
        "connection refused",
        ("nothing accepts connections", "[outbox] host and port"),
        ("password",),
        outbox={"port": "closed"},
    ),
    "smtp-timeout": Case(
        "no answer in time",
        ("did not answer within 0.5 s", "firewall", "[outbox] timeout"),
        ("password",),
        outbox={"port": "silent", "timeout": 0.5},
    ),
    "smtp-tls-on-a-plain-port": Case(
        "TLS handshake failed", ('use security = "starttls"',), ("password",), outbox={"security": "tls"}
    ),
    "smtp-no-starttls": Case(
        "STARTTLS not offered", ("does not offer STARTTLS",), ("password",), outbox={"security": "starttls"}
    ),
    "smtp-certificate": Case(
        "certificate not trusted",
        ("update-ca-certificates",),
        ("password",),
        outbox={"security": "tls", "port": "smtps"},
    ),
    "smtp-login": Case(
        "login as 'relay' refused",
        ("[outbox] username", f"{PASSWORD_HINT}smtp-password"),
        ("host and port",),
        outbox={"port": "auth", "username": "relay"},
        env={"FLAGMAN_SMTP_PASSWORD": "not-the-pass"},
    ),
    "smtp-no-login": Case(
        "no login offered",
        ("offers no login", "empty [outbox] username"),
        ("host and port",),
        outbox={"username": "relay"},
        env={"FLAGMAN_SMTP_PASSWORD": "relay-pass"},
    ),
}


@pytest.fixture
def ports(silent_port: int, tls_dovecot: Dovecot, tls_relay: SmtpSink, auth_relay: SmtpSink) -> dict[str, int]:
    return {
        "closed": closed_port(),
        "silent": silent_port,
        "imaps": tls_dovecot.imaps_port,
        "smtps": tls_relay.port,
        "auth": auth_relay.port,
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_way_a_server_fails_gets_its_own_finding_and_fix(site: Site, ports: dict[str, int], name: str) -> None:
    """One problem, in the inbox or outbox area, saying how it failed; its fix is the one for
    that failure (a refused connection is not told to check the password); no password shown."""
    case = CASES[name]
    for table, changes in ((site.inbox, case.inbox), (site.outbox, case.outbox)):
        for key, value in changes.items():
            table[key] = ports[value] if key == "port" and isinstance(value, str) else value
    site.env.update(case.env)
    code, out = site.doctor()
    assert code == 1, out
    found = problems(out)
    area = "inbox" if name.startswith("imap") else "outbox"
    assert len(found) == 1 and found[0].split()[1] == area, out
    assert case.says in found[0], out
    (fix,) = [f for f in fixes(out) if f]
    for words in case.fix:
        assert words in fix, (words, fix)
    for words in case.not_fix:
        assert words not in fix, (words, fix)
    for secret in ("wrong-password", "not-the-pass", "relay-pass", SECRET):
        assert secret not in out


def test_a_read_only_postgresql_database_is_a_problem(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, postgres: Postgres
) -> None:
    """A database that answers but takes no write (default_transaction_read_only, as on a
    standby): reachable was not enough; the write probe finds it, with the fix."""
    import psycopg

    url = fresh_database("postgresql", tmp_path, postgres)
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(postgres.url.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
        conn.execute(f'alter database "{name}" set default_transaction_read_only = on')
    site = Site(tmp_path, dovecot, smtp_sink.host, smtp_sink.port, url)
    code, out = site.doctor()
    assert code == 1
    [found] = problems(out)
    assert "refuses to be written" in found and "read-only" in found, out
    assert "primary" in fixes(out)[0]
