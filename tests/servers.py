"""Real servers for the tests: a private Dovecot, an SMTP sink (aiosmtpd) and PostgreSQL.

Dovecot delivers by the mail recipe operators install (deploy/mail/dovecot-flagman.conf, read
from the file); `LmtpRelay` is an MTA in front of it, handing mail over LMTP as Postfix does.

Every server runs on 127.0.0.1 on a free port, with all its files in a temp dir, as an
unprivileged user (Dovecot and PostgreSQL both refuse, or should not, run as root: when the
tests run as root the processes are started as ``nobody`` and the temp dir is chowned to it).
Each ``start()`` waits until the server really answers (bounded) and raises `ServerError`
with the tail of the server's log if it does not. See shared/design/testing.md.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import email.parser
import email.policy
import os
import pwd
import re
import shutil
import signal
import smtplib
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # imported where a server starts: the tests' own dependencies
    from aiosmtpd.smtp import SMTP, AuthResult, Envelope, Session
    from imapclient import IMAPClient

START_TIMEOUT = 20.0
UNPRIVILEGED_USER = os.environ.get("FLAGMAN_TEST_SERVER_USER", "nobody")
# The mail recipe's Dovecot settings (OPERATING.md, "The mail server"): every test Dovecot
# delivers through them, so the recipe the operator installs is the one the tests use.
DELIVERY_RECIPE = Path(__file__).resolve().parents[1] / "deploy" / "mail" / "dovecot-flagman.conf"


class ServerError(RuntimeError):
    """A test server could not be started or did not answer; the message has its log tail."""


# --------------------------------------------------------------------------------------------
# helpers


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class _RunAs:
    """Who the server processes run as: ``nobody`` when we are root, else ourselves."""

    uid: int
    gid: int
    user: str
    group: str

    @classmethod
    def for_servers(cls) -> _RunAs:
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam(UNPRIVILEGED_USER)
            except KeyError:
                raise ServerError(
                    f"no user {UNPRIVILEGED_USER!r} to run the test servers as (set FLAGMAN_TEST_SERVER_USER)"
                ) from None
        else:
            entry = pwd.getpwuid(os.geteuid())
        import grp

        return cls(entry.pw_uid, entry.pw_gid, entry.pw_name, grp.getgrgid(entry.pw_gid).gr_name)

    @property
    def switch(self) -> bool:
        return os.geteuid() == 0 and self.uid != 0

    def popen_kwargs(self) -> dict[str, Any]:
        # Popen(user=, group=) switches identity in the child itself (no runuser in between),
        # so a signal sent to the process group reaches the server directly.
        if self.switch:
            return {"user": self.uid, "group": self.gid, "extra_groups": []}
        return {}

    def chown_tree(self, root: Path) -> None:
        if not self.switch:
            return
        for dirpath, dirnames, filenames in os.walk(root):
            os.chown(dirpath, self.uid, self.gid)
            for name in dirnames + filenames:
                os.lchown(os.path.join(dirpath, name), self.uid, self.gid)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log at {path}: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or f"(log {path} is empty)"


def _wait_for_greeting(port: int, prefix: bytes, proc: subprocess.Popen[bytes], deadline: float) -> str | None:
    """None once a connection on `port` reads a line starting with `prefix`; else the reason."""
    last = "no attempt"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"process exited with status {proc.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                line = sock.makefile("rb").readline()
                if line.startswith(prefix):
                    return None
                last = f"unexpected greeting {line!r}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.05)
    return f"no greeting on port {port} after {START_TIMEOUT:.0f} s ({last})"


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _stop_process(proc: subprocess.Popen[bytes] | None, sig: int, grace: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        if proc is not None:
            _kill_group(proc, signal.SIGKILL)  # stray children of a dead master
        return
    _kill_group(proc, sig)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        _kill_group(proc, signal.SIGKILL)
        proc.wait(5)
    _kill_group(proc, signal.SIGKILL)


def _make_tempdir(prefix: str) -> Path:
    # Short paths: a unix socket path must fit in 107 bytes.
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o755)
    return path


# --------------------------------------------------------------------------------------------
# Dovecot


def dovecot_binary() -> str:
    for candidate in (shutil.which("dovecot"), "/usr/sbin/dovecot"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ServerError("dovecot is not installed (apt-get install dovecot-imapd dovecot-lmtpd)")


def dovecot_version(binary: str | None = None) -> tuple[int, int]:
    out = subprocess.run([binary or dovecot_binary(), "--version"], capture_output=True, text=True, check=True).stdout
    match = re.match(r"(\d+)\.(\d+)", out.strip())
    if not match:
        raise ServerError(f"cannot read the Dovecot version from {out!r}")
    return int(match.group(1)), int(match.group(2))


# Mailboxes and services: the same in both config syntaxes.
_DOVECOT_SHARED = """\
namespace inbox {{
  inbox = yes
  mailbox Processed {{
    auto = create
  }}
  mailbox Failed {{
    auto = create
  }}
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    port = {imap_port}
  }}
  inet_listener imaps {{
    port = {imaps_port}
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    port = {lmtp_port}
  }}
}}
service anvil {{
  chroot =
  # No brute-force penalty: tests log in with wrong passwords on purpose, from 127.0.0.1.
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
"""

_DOVECOT_23 = (
    """\
# Private Dovecot 2.3 for the tests (generated by tests/servers.py).
protocols = imap lmtp
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
{ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
first_valid_uid = 1
first_valid_gid = 1
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users/%u
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/mail/%u
}}
mail_location = maildir:~/Maildir
"""
    + _DOVECOT_SHARED
    + """\
protocol imap {{
  imap_idle_notify_interval = 1 mins
}}
"""
)

# Dovecot 2.4 renamed much of the above (testing.md): versioned config, mail_driver/mail_path,
# auth_allow_cleartext, %{{user}}, named passdb/userdb blocks with their own settings.
_DOVECOT_24 = (
    """\
# Private Dovecot 2.4 for the tests (generated by tests/servers.py).
dovecot_config_version = 2.4.0
dovecot_storage_version = 2.4.0
protocols = imap lmtp
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
{ssl}
auth_allow_cleartext = yes
auth_mechanisms = plain login
auth_failure_delay = 0
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
first_valid_uid = 1
first_valid_gid = 1
passdb passwd-file {{
  # Each user's file says {{PLAIN}}: no default scheme needed.
  passwd_file_path = {root}/users/%{{user}}
}}
userdb static {{
  fields {{
    uid = {uid}
    gid = {gid}
    home = {root}/mail/%{{user}}
  }}
}}
mail_driver = maildir
mail_path = ~/Maildir
"""
    + _DOVECOT_SHARED
)


def dovecot_config(
    version: tuple[int, int],
    *,
    tls: tuple[Path, Path] | None = None,
    delivery: str | None = None,
    **values: object,
) -> str:
    """The config text for this Dovecot version (2.4 syntax from 2.4 on).

    `tls` is (certificate, key): IMAPS on `imaps_port` and STARTTLS on the IMAP port.
    `delivery`: how LMTP delivers plus-addresses; None is the mail recipe itself,
    deploy/mail/dovecot-flagman.conf, included word for word (the same lines in 2.3 and 2.4).
    """
    template = _DOVECOT_24 if version >= (2, 4) else _DOVECOT_23
    if tls is None:
        ssl_lines = "ssl = no"
        values["imaps_port"] = 0
    elif version >= (2, 4):
        ssl_lines = f"ssl = yes\nssl_server_cert_file = {tls[0]}\nssl_server_key_file = {tls[1]}"
    else:
        ssl_lines = f"ssl = yes\nssl_cert = <{tls[0]}\nssl_key = <{tls[1]}"
    if delivery is None:
        source, delivery = DELIVERY_RECIPE, DELIVERY_RECIPE.read_text()
    else:
        source = Path("(the test's own)")
    # After format(): the recipe is taken as written, braces and all.
    return template.format(ssl=ssl_lines, **values) + f"\n# --- delivery settings: {source}\n" + delivery


def make_certificate(directory: Path, name: str = "localhost") -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert.pem, key.pem).

    It is its own CA: ``ssl.create_default_context(cafile=cert)`` trusts it.
    """
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ServerError("openssl is needed to make a test certificate")
    done = subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise ServerError(f"openssl could not make a certificate: {done.stderr.strip()}")
    return cert, key


class Dovecot:
    """A private Dovecot (IMAP + LMTP) with passwd-file users and Maildir storage.

    Users are full addresses (``alice@players.test``) with plain passwords; any address
    that is a user can receive mail over LMTP (`deliver`) and log in over IMAP.
    """

    host = "127.0.0.1"

    def __init__(self, root: Path | None = None, *, tls: bool = False, delivery: str | None = None) -> None:
        """`delivery`: Dovecot settings for LMTP delivery instead of the mail recipe's
        (a test of a mail server set up wrong); None delivers as the recipe says."""
        self._own_root = root is None
        self.delivery = delivery
        self.root = Path(root) if root is not None else _make_tempdir("fm-dc-")
        self.run_as = _RunAs.for_servers()
        self.binary = dovecot_binary()
        self.version = dovecot_version(self.binary)
        self.imap_port = free_port()
        self.lmtp_port = free_port()
        # With tls: IMAPS on imaps_port, STARTTLS on imap_port; `cert` is the CA to trust.
        self.tls = tls
        self.imaps_port = free_port() if tls else 0
        self.cert: Path | None = None
        self.users: dict[str, str] = {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.config_path = self.root / "dovecot.conf"
        self.log_path = self.root / "dovecot.log"
        self.stdout_path = self.root / "dovecot.stdout"

    # -- lifecycle ---------------------------------------------------------------------------
    def _write_config(self) -> None:
        for sub in ("run", "state", "mail"):
            (self.root / sub).mkdir(exist_ok=True)
        self.config_path.write_text(
            dovecot_config(
                self.version,
                root=self.root,
                user=self.run_as.user,
                group=self.run_as.group,
                uid=self.run_as.uid,
                gid=self.run_as.gid,
                imap_port=self.imap_port,
                lmtp_port=self.lmtp_port,
                imaps_port=self.imaps_port,
                tls=self._certificate() if self.tls else None,
                delivery=self.delivery,
            )
        )
        self._write_passwd()
        self.run_as.chown_tree(self.root)

    def _certificate(self) -> tuple[Path, Path]:
        cert, key = self.root / "localhost.crt", self.root / "localhost.key"
        if not cert.exists():
            cert, key = make_certificate(self.root)
        self.cert = cert
        return cert, key

    def _write_passwd(self, only: str | None = None) -> None:
        # One passwd-file per user: Dovecot re-reads a passwd-file at most once a second
        # (and only when its mtime or size changed), so one shared file would hide a user
        # added a moment after another one logged in. A new file is read at once.
        users_dir = self.root / "users"
        users_dir.mkdir(exist_ok=True)
        if self.run_as.switch:
            os.chown(users_dir, self.run_as.uid, self.run_as.gid)
        for name, password in self.users.items():
            if only is not None and name != only:
                continue
            if "/" in name or name.startswith("."):
                raise ValueError(f"unsafe user name {name!r}")
            tmp = users_dir / f".{name}.tmp"
            # {PLAIN} in the file works in every version whatever the default scheme is.
            tmp.write_text(f"{name}:{{PLAIN}}{password}::::::\n")
            if self.run_as.switch:
                os.chown(tmp, self.run_as.uid, self.run_as.gid)
            os.replace(tmp, users_dir / name)

    def start(self) -> Dovecot:
        if self.proc is not None and self.proc.poll() is None:
            return self
        self._write_config()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root)}
        with open(self.stdout_path, "ab") as out:
            self.proc = subprocess.Popen(
                [self.binary, "-F", "-c", str(self.config_path)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                **self.run_as.popen_kwargs(),
            )
        atexit.register(self.kill)  # no stray server if the test run dies before teardown
        deadline = time.monotonic() + START_TIMEOUT
        for port, prefix in ((self.imap_port, b"* OK"), (self.lmtp_port, b"220")):
            problem = _wait_for_greeting(port, prefix, self.proc, deadline)
            if problem:
                self.kill()
                raise ServerError(
                    f"Dovecot {'.'.join(map(str, self.version))} did not start: {problem}\n"
                    f"--- {self.stdout_path}\n{_tail(self.stdout_path)}\n"
                    f"--- {self.log_path}\n{_tail(self.log_path)}"
                )
        return self

    def stop(self) -> None:
        _stop_process(self.proc, signal.SIGTERM)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL the whole server (master and every child): a crash, for fault tests."""
        if self.proc is not None:
            _kill_group(self.proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
        self.proc = None

    def restart(self) -> Dovecot:
        """Start again on the same ports with the same mail (after `kill` or `stop`)."""
        if self.proc is not None:
            self.stop()
        # A killed master leaves its pid file and sockets; Dovecot cleans up on start.
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                return self.start()
            except ServerError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)  # the old listening sockets may need a moment to go away
        return self.start()

    def cleanup(self) -> None:
        self.stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Dovecot:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def log_tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)

    # -- users and mail ----------------------------------------------------------------------
    def add_user(self, user: str, password: str = "secret") -> str:
        """Create a user (usable at once); returns the user name.

        Changing an existing user's password may take a second to be seen (Dovecot reads a
        passwd-file at most once a second).
        """
        self.users[user] = password
        if self.config_path.exists():
            self._write_passwd(only=user)
        return user

    def maildir(self, user: str) -> Path:
        return self.root / "mail" / user / "Maildir"

    def deliver(
        self,
        user: str | Sequence[str],
        data: bytes,
        *,
        mail_from: str = "sender@example.test",
        lmtp: smtplib.LMTP | None = None,
    ) -> None:
        """Deliver one mail into the user's INBOX over LMTP, as an MTA does.

        One recipient per transaction: smtplib.LMTP reads only one reply after DATA, while
        LMTP answers once per recipient. Pass an open `lmtp` (see `lmtp_connection`) to
        deliver many mails over one connection.
        """
        users = [user] if isinstance(user, str) else list(user)
        with contextlib.ExitStack() as stack:
            conn = lmtp if lmtp is not None else stack.enter_context(self.lmtp_connection())
            for rcpt in users:
                conn.ehlo_or_helo_if_needed()
                utf8 = not (mail_from.isascii() and rcpt.isascii()) and conn.has_extn("smtputf8")
                conn.sendmail(mail_from, [rcpt], data, ["SMTPUTF8"] if utf8 else [])

    @contextlib.contextmanager
    def lmtp_connection(self) -> Iterator[smtplib.LMTP]:
        conn = smtplib.LMTP(self.host, self.lmtp_port, timeout=30)
        try:
            yield conn
        finally:
            with contextlib.suppress(smtplib.SMTPException, OSError):
                conn.quit()

    def imap_client(self, user: str, *, folder: str | None = "INBOX") -> IMAPClient:
        """An IMAPClient logged in as `user` (with `folder` selected, unless None)."""
        from imapclient import IMAPClient

        client = IMAPClient(self.host, self.imap_port, ssl=False, timeout=30)
        client.login(user, self.users[user])
        if folder is not None:
            client.select_folder(folder)
        return client

    def uidvalidity(self, user: str, folder: str = "INBOX") -> int:
        client = self.imap_client(user, folder=None)
        try:
            return int(client.folder_status(folder, [b"UIDVALIDITY"])[b"UIDVALIDITY"])
        finally:
            client.logout()

    def recreate_inbox(self, user: str) -> int:
        """Give the user's INBOX a new UIDVALIDITY, as if it had been deleted and recreated.

        The INBOX cannot be deleted over IMAP, so ``doveadm mailbox update --uid-validity``
        does it in the storage, the way a restore from backup would. The UIDs stay, which is
        the dangerous case: an old key ``<old>:<uid>`` names a mail that exists. Dovecot
        disconnects sessions that had the INBOX selected. Returns the new UIDVALIDITY.
        """
        old = self.uidvalidity(user)
        new = max(old + 1, int(time.time()))
        doveadm = shutil.which("doveadm") or "/usr/bin/doveadm"
        done = subprocess.run(
            [
                doveadm,
                "-c",
                str(self.config_path),
                "mailbox",
                "update",
                "-u",
                user,
                "--uid-validity",
                str(new),
                "INBOX",
            ],
            capture_output=True,
            text=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root)},
            timeout=30,
            **self.run_as.popen_kwargs(),
        )
        if done.returncode != 0 or self.uidvalidity(user) != new:
            raise ServerError(
                f"doveadm could not change the UIDVALIDITY of {user}'s INBOX "
                f"({done.returncode}): {done.stderr.strip()}\n{self.log_tail()}"
            )
        return new


# --------------------------------------------------------------------------------------------
# SMTP sink


@dataclass(frozen=True)
class ReceivedMail:
    """One message the sink accepted."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    data: bytes
    message_id: str | None


@dataclass
class Fault:
    """Make the sink misbehave.

    stage: "rcpt" (answer RCPT TO), "data" (answer after DATA) or "mail" (MAIL FROM).
    recipients: only for these addresses (lower-cased); None = any.
    reply: the SMTP reply, e.g. "451 4.3.0 Try again later"; None with drop=True.
    drop: close the connection instead of answering.
    times: how many more times it fires; None = until cleared.
    """

    stage: str
    reply: str | None = None
    recipients: frozenset[str] | None = None
    drop: bool = False
    times: int | None = 1

    def matches(self, stage: str, addresses: Iterable[str]) -> bool:
        if self.stage != stage or self.times == 0:
            return False
        if self.recipients is None:
            return True
        return any(a.lower() in self.recipients for a in addresses)


def _message_id(data: bytes) -> str | None:
    headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(data)
    value = headers.get("Message-ID")
    return str(value).strip() if value is not None else None


class SmtpSink:
    """An SMTP server (aiosmtpd) that records every message and can misbehave on request.

    With `onward` (a `Dovecot`), each accepted recipient that is a Dovecot user also gets
    the mail in its INBOX over LMTP, so a test can read what a player would read.
    """

    host = "127.0.0.1"

    def __init__(
        self,
        onward: Dovecot | None = None,
        port: int | None = None,
        *,
        security: Literal["tls", "starttls", "none"] = "none",
        users: dict[str, str] | None = None,
    ) -> None:
        """`security`: "none", "starttls" or "tls" (implicit); `users`: require AUTH with these
        logins (over plain text too: it is a test server). `cert` is then the CA to trust."""
        if security not in ("none", "starttls", "tls"):
            raise ValueError(f"unknown security {security!r}")
        self.onward = onward
        self.port = port or free_port()
        self.security = security
        self.users = dict(users) if users else None
        self.cert: Path | None = None
        self._cert_dir: Path | None = None
        self._lock = threading.Lock()
        self._received: list[ReceivedMail] = []
        self._faults: list[Fault] = []
        self.onward_errors: list[str] = []
        self.greetings = 0  # EHLO/HELO seen: one per connection when no STARTTLS
        self._greeted: list[SMTP] = []  # the sessions greeted, for `drop_connections`
        self._controller: Any = None
        self._arrived = threading.Condition(self._lock)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> SmtpSink:
        from aiosmtpd.controller import Controller

        class QuietController(Controller):
            # aiosmtpd warns on every connection when AUTH is allowed without STARTTLS
            # (it does not count implicit TLS); deliberate here, so keep the output clean.
            def factory(self) -> SMTP:
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    # aiosmtpd leaves Controller.factory unannotated (it returns the SMTP it made)
                    return super().factory()  # type: ignore[no-untyped-call,no-any-return]

        options: dict[str, Any] = {}
        if self.security != "none":
            import ssl

            self._cert_dir = _make_tempdir("fm-smtp-")
            self.cert, key = make_certificate(self._cert_dir)
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(self.cert, key)
            options["tls_context" if self.security == "starttls" else "ssl_context"] = context
        if self.users is not None:
            options.update(
                authenticator=self._authenticate,
                auth_required=True,
                # aiosmtpd counts only STARTTLS as TLS (not implicit TLS); it warns about
                # AUTH over plain text, which a test sink may do.
                auth_require_tls=self.security == "starttls",
            )
        controller = QuietController(
            _SinkHandler(self),
            hostname=self.host,
            port=self.port,
            ready_timeout=START_TIMEOUT,
            enable_SMTPUTF8=True,
            data_size_limit=64 * 1024 * 1024,
            **options,
        )
        try:
            controller.start()
        except Exception as exc:
            raise ServerError(f"the SMTP sink did not start on port {self.port}: {exc!r}") from exc
        self._controller = controller
        return self

    def _authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: object
    ) -> AuthResult:
        from aiosmtpd.smtp import AuthResult, LoginPassword

        ok = (
            isinstance(auth_data, LoginPassword)
            and self.users is not None
            and self.users.get(auth_data.login.decode()) == auth_data.password.decode()
        )
        # handled=False: aiosmtpd then answers 535 itself (the default would answer nothing).
        return AuthResult(success=ok, handled=False)

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
        if self._cert_dir is not None:
            shutil.rmtree(self._cert_dir, ignore_errors=True)
            self._cert_dir = None

    def __enter__(self) -> SmtpSink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what arrived ------------------------------------------------------------------------
    @property
    def messages(self) -> list[ReceivedMail]:
        with self._lock:
            return list(self._received)

    def message_ids(self) -> list[str | None]:
        return [m.message_id for m in self.messages]

    def wait_for(self, count: int, timeout: float = 5.0) -> list[ReceivedMail]:
        """Block until at least `count` messages arrived; returns them (raises on timeout)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._received) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"SMTP sink has {len(self._received)} messages, expected {count}")
                self._arrived.wait(left)
            return list(self._received)

    def reset(self) -> None:
        """Forget received messages, faults and onward errors (between tests)."""
        with self._lock:
            self._received.clear()
            self._faults.clear()
            self.onward_errors.clear()
            self.greetings = 0
            self._greeted.clear()

    # -- faults ------------------------------------------------------------------------------
    def add_fault(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def fail_rcpt(self, reply: str, recipients: Iterable[str] | None = None, times: int | None = 1) -> Fault:
        """Answer RCPT TO with `reply` (e.g. ``"451 4.3.0 Try later"``)."""
        return self.add_fault(Fault("rcpt", reply, _lower_set(recipients), times=times))

    def fail_data(self, reply: str, recipients: Iterable[str] | None = None, times: int | None = 1) -> Fault:
        """Answer the end of DATA with `reply` (the message is not recorded)."""
        return self.add_fault(Fault("data", reply, _lower_set(recipients), times=times))

    def fail_mail(self, reply: str, times: int | None = 1) -> Fault:
        """Answer MAIL FROM with `reply`."""
        return self.add_fault(Fault("mail", reply, None, times=times))

    def drop_connection(
        self, stage: str = "data", recipients: Iterable[str] | None = None, times: int | None = 1
    ) -> Fault:
        """Close the connection instead of answering at `stage` (the mail is not recorded)."""
        return self.add_fault(Fault(stage, None, _lower_set(recipients), drop=True, times=times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def drop_connections(self) -> int:
        """Reset every open connection from the sink's side, now (a relay's idle timeout or
        restart): a client sees it at its next command. Returns when they are reset, with
        how many there were."""
        import asyncio

        with self._lock:
            sessions, self._greeted = self._greeted, []
        transports = list(  # a session greeted twice (STARTTLS) once
            dict.fromkeys(
                s.transport
                for s in sessions
                if isinstance(s.transport, asyncio.Transport) and not s.transport.is_closing()
            )
        )
        done = threading.Event()

        def abort() -> None:
            for transport in transports:
                transport.abort()
            done.set()

        self._controller.loop.call_soon_threadsafe(abort)
        if not done.wait(START_TIMEOUT):
            raise ServerError("the SMTP sink did not drop its connections")
        return len(transports)

    def _take_fault(self, stage: str, addresses: Iterable[str]) -> Fault | None:
        addresses = list(addresses)
        with self._lock:
            for fault in self._faults:
                if fault.matches(stage, addresses):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def _record(self, mail: ReceivedMail) -> None:
        if self.onward is not None:
            for rcpt in mail.rcpt_tos:
                try:
                    self.onward.deliver(rcpt, mail.data, mail_from=mail.mail_from or "<>")
                except (smtplib.SMTPException, OSError, UnicodeError) as exc:
                    with self._lock:
                        self.onward_errors.append(f"{rcpt}: {exc!r}")
        with self._arrived:
            self._received.append(mail)
            self._arrived.notify_all()


def _lower_set(addresses: Iterable[str] | None) -> frozenset[str] | None:
    return None if addresses is None else frozenset(a.lower() for a in addresses)


class _SinkHandler:
    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    async def handle_EHLO(  # noqa: N802 - aiosmtpd's hook names
        self, server: SMTP, session: Session, envelope: Envelope, hostname: str, responses: list[str]
    ) -> list[str]:
        with self.sink._lock:
            self.sink.greetings += 1
            self.sink._greeted.append(server)
        session.host_name = hostname
        return responses

    async def handle_HELO(self, server: SMTP, session: Session, envelope: Envelope, hostname: str) -> str:  # noqa: N802 - aiosmtpd's hook names
        with self.sink._lock:
            self.sink.greetings += 1
            self.sink._greeted.append(server)
        session.host_name = hostname
        return f"250 {server.hostname}"

    async def handle_MAIL(  # noqa: N802 - aiosmtpd's hook names
        self, server: SMTP, session: Session, envelope: Envelope, address: str, mail_options: list[str]
    ) -> str:
        fault = self.sink._take_fault("mail", [])
        if fault is not None:
            return _apply(server, fault)
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(  # noqa: N802 - aiosmtpd's hook names
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]
    ) -> str:
        fault = self.sink._take_fault("rcpt", [address])
        if fault is not None:
            return _apply(server, fault)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802 - aiosmtpd's hook names
        fault = self.sink._take_fault("data", envelope.rcpt_tos)
        if fault is not None:
            return _apply(server, fault)
        content = envelope.original_content or envelope.content
        assert content is not None, "DATA without content"
        data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content
        mail = ReceivedMail(
            mail_from=envelope.mail_from or "",
            rcpt_tos=tuple(envelope.rcpt_tos),
            data=bytes(data),
            message_id=_message_id(data),
        )
        # Onward LMTP delivery blocks; run it off the event loop.
        import asyncio

        await asyncio.get_running_loop().run_in_executor(None, self.sink._record, mail)
        return "250 Message accepted for delivery"


def _apply(server: SMTP, fault: Fault) -> str:
    if fault.drop:
        # abort() resets the TCP connection at once: the client sees a dead peer.
        assert isinstance(server.transport, asyncio.Transport), server.transport
        server.transport.abort()
        return "421 4.4.2 connection dropped (test fault)"
    assert fault.reply is not None
    return fault.reply


# --------------------------------------------------------------------------------------------
# An MTA in front of Dovecot


class LmtpRelay:
    """An SMTP relay (aiosmtpd) that hands every mail to a `Dovecot` over LMTP, recipient
    addresses whole (``flagman+rc1.kelly.<mac>@...`` included), as Postfix does with
    the ``transport_maps`` entry ``flagman@... lmtp:...`` (deploy/mail/postfix-transport), and answers the end of
    DATA with Dovecot's verdict: 250 once the mail is stored, Dovecot's 5xx/4xx if it refused
    the recipient. (Postfix would queue and bounce instead; answering at once keeps the tests
    free of waiting.) Which folder the mail is stored in is Dovecot's business: its delivery
    settings (the mail recipe, or a test's own).
    """

    host = "127.0.0.1"

    def __init__(self, dovecot: Dovecot, port: int | None = None) -> None:
        self.dovecot = dovecot
        self.port = port or free_port()
        self._lock = threading.Lock()
        self.verdicts: list[tuple[tuple[str, ...], str]] = []  # (recipients, the reply given)
        self._controller: Any = None

    def start(self) -> LmtpRelay:
        from aiosmtpd.controller import Controller

        controller = Controller(
            _RelayHandler(self),
            hostname=self.host,
            port=self.port,
            ready_timeout=START_TIMEOUT,
            enable_SMTPUTF8=True,
        )
        try:
            controller.start()
        except Exception as exc:
            raise ServerError(f"the LMTP relay did not start on port {self.port}: {exc!r}") from exc
        self._controller = controller
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> LmtpRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def hand_over(self, mail_from: str, rcpt_tos: tuple[str, ...], data: bytes) -> str:
        """Deliver over LMTP; the SMTP reply that says how it went."""
        try:
            self.dovecot.deliver(list(rcpt_tos), data, mail_from=mail_from or "<>")
        except smtplib.SMTPRecipientsRefused as exc:
            code, text = next(iter(exc.recipients.values()))
            reply = f"{code} {text.decode('utf-8', 'replace')}"
        except smtplib.SMTPResponseException as exc:
            error = exc.smtp_error
            said = error.decode("utf-8", "replace") if isinstance(error, bytes) else str(error)
            reply = f"{exc.smtp_code} {said}"
        except (smtplib.SMTPException, OSError) as exc:
            reply = f"451 4.4.0 LMTP delivery failed: {exc!r}"
        else:
            reply = "250 2.0.0 delivered over LMTP"
        with self._lock:
            self.verdicts.append((rcpt_tos, reply))
        return " ".join(reply.split())


class _RelayHandler:
    def __init__(self, relay: LmtpRelay) -> None:
        self.relay = relay

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802 - aiosmtpd's hook names
        import asyncio

        content = envelope.original_content or envelope.content
        assert content is not None, "DATA without content"
        data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content
        # LMTP blocks; run it off the event loop.
        return await asyncio.get_running_loop().run_in_executor(
            None, self.relay.hand_over, envelope.mail_from or "", tuple(envelope.rcpt_tos), bytes(data)
        )


# --------------------------------------------------------------------------------------------
# PostgreSQL


def postgres_bindir() -> Path:
    """The directory with initdb and postgres: $FLAGMAN_PG_BINDIR, Debian's, or PATH."""
    env = os.environ.get("FLAGMAN_PG_BINDIR")
    candidates: list[Path] = [Path(env)] if env else []
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates += debian
    which = shutil.which("initdb")
    if which:
        candidates.append(Path(os.path.realpath(which)).parent)
    for path in candidates:
        if (path / "initdb").exists() and (path / "postgres").exists():
            return path
    raise ServerError("PostgreSQL is not installed (apt-get install postgresql)")


@dataclass
class Postgres:
    """A private PostgreSQL cluster in a temp dir, trust auth, on 127.0.0.1 and a unix socket."""

    user: str = "flagman"
    database: str = "flagman"
    root: Path = field(default_factory=lambda: _make_tempdir("fm-pg-"))
    port: int = field(default_factory=free_port)

    def __post_init__(self) -> None:
        self.run_as = _RunAs.for_servers()
        self.bindir = postgres_bindir()
        self.data_dir = self.root / "data"
        self.socket_dir = self.root / "sock"
        self.log_path = self.root / "postgres.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """SQLAlchemy URL (psycopg 3) over TCP."""
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def _env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
        }

    def start(self) -> Postgres:
        if self.proc is not None and self.proc.poll() is None:
            return self
        if not (self.data_dir / "PG_VERSION").exists():
            self.socket_dir.mkdir(exist_ok=True)
            self.run_as.chown_tree(self.root)
            with open(self.log_path, "ab") as log:
                done = subprocess.run(
                    [
                        str(self.bindir / "initdb"),
                        "-D",
                        str(self.data_dir),
                        "-U",
                        self.user,
                        "-A",
                        "trust",
                        "-E",
                        "UTF8",
                        "--locale=C",
                        "--no-sync",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self._env(),
                    timeout=120,
                    **self.run_as.popen_kwargs(),
                )
            if done.returncode != 0:
                raise ServerError(f"initdb failed ({done.returncode}):\n{_tail(self.log_path)}")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    str(self.bindir / "postgres"),
                    "-D",
                    str(self.data_dir),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.socket_dir),
                    "-h",
                    "127.0.0.1",
                    # A throwaway cluster: durability buys nothing, speed does.
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._env(),
                start_new_session=True,
                **self.run_as.popen_kwargs(),
            )
        atexit.register(self.stop)  # no stray server if the test run dies before teardown
        self._wait_ready()
        self._create_database()
        return self

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT
        last = "no attempt"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                last = f"postgres exited with status {self.proc.returncode}"
                break
            try:
                with psycopg.connect(
                    host="127.0.0.1",
                    port=self.port,
                    user=self.user,
                    dbname="postgres",
                    connect_timeout=2,
                ) as conn:
                    conn.execute("select 1")
                    return
            except psycopg.Error as exc:
                last = str(exc).strip()
            time.sleep(0.1)
        self.stop()
        raise ServerError(f"PostgreSQL did not start: {last}\n{_tail(self.log_path)}")

    def _create_database(self) -> None:
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as conn:
            exists = conn.execute("select 1 from pg_database where datname = %s", (self.database,)).fetchone()
            if not exists:
                conn.execute(f'create database "{self.database}"')

    def create_database(self, name: str, template: str | None = None) -> str:
        """Create another database (e.g. one per test module), empty or a copy of database
        `template` (which nobody may be connected to); returns its SQLAlchemy URL."""
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'drop database if exists "{name}"')
            conn.execute(f'create database "{name}"' + (f' template "{template}"' if template else ""))
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        # SIGINT is PostgreSQL's "fast" shutdown: disconnect clients, then exit.
        _stop_process(self.proc, signal.SIGINT)
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Postgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def log_tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)


# --------------------------------------------------------------------------------------------
# DNS: an authoritative server for the test zones, so that `flagman doctor` and the
# DKIM verification in the tests ask a real DNS server over the wire, never the internet.


class DnsServer:
    """A DNS server on 127.0.0.1 (dnslib), UDP and TCP on one free port, answering from the
    records a test puts in (TXT, A, AAAA, MX); any other name is NXDOMAIN. Answers are
    authoritative and not cached, so a test may change a record between two questions."""

    def __init__(self) -> None:
        self.host = "127.0.0.1"
        self.port = 0
        self.records: dict[tuple[str, str], list[Any]] = {}
        self.questions: list[tuple[str, str]] = []
        self._servers: list[Any] = []
        self._lock = threading.Lock()

    @staticmethod
    def _name(name: str) -> str:
        return name.lower().rstrip(".") + "."

    def add(self, name: str, rtype: str, value: Any) -> None:
        with self._lock:
            self.records.setdefault((self._name(name), rtype.upper()), []).append(value)

    def add_txt(self, name: str, text: str) -> None:
        """A TXT record: `text` split into strings of at most 255 octets (RFC 1035 3.3.14), as
        a zone file writes a long DKIM key."""
        data = text.encode("utf-8")
        self.add(name, "TXT", [data[i : i + 255] for i in range(0, len(data), 255)] or [b""])

    def set_txt(self, name: str, *texts: str) -> None:
        with self._lock:
            self.records.pop((self._name(name), "TXT"), None)
        for text in texts:
            self.add_txt(name, text)

    def clear(self) -> None:
        with self._lock:
            self.records.clear()
            self.questions.clear()

    def _resolve(self, request: Any, handler: Any) -> Any:
        from dnslib import AAAA, MX, QTYPE, RCODE, RR, TXT, A

        reply = request.reply()
        qname = str(request.q.qname).lower()
        qtype = QTYPE[request.q.qtype]
        with self._lock:
            self.questions.append((qname, qtype))
            known = any(name == qname for name, _ in self.records)
            values = list(self.records.get((qname, qtype), []))
        makers = {
            "TXT": lambda v: TXT(v),
            "A": lambda v: A(v),
            "AAAA": lambda v: AAAA(v),
            "MX": lambda v: MX(v[1], v[0]),
        }
        for value in values:
            reply.add_answer(RR(qname, getattr(QTYPE, qtype), rdata=makers[qtype](value), ttl=1))
        if not known:
            reply.header.rcode = RCODE.NXDOMAIN
        reply.header.aa = 1
        return reply

    def start(self) -> DnsServer:
        try:
            from dnslib.server import DNSLogger, DNSServer
        except ImportError as exc:  # a test that needs the DNS server fails, never skips
            raise ServerError("dnslib is not installed: pip install -e '.[test]'") from exc

        class _Resolver:
            def __init__(self, owner: DnsServer) -> None:
                self.owner = owner

            def resolve(self, request: Any, handler: Any) -> Any:
                return self.owner._resolve(request, handler)

        quiet = DNSLogger(log="-request,-reply,-truncated,-error,-recv,-send,-data", prefix=False)
        for _ in range(20):
            port = free_port()
            try:
                servers = [
                    DNSServer(_Resolver(self), address=self.host, port=port, tcp=tcp, logger=quiet)
                    for tcp in (False, True)
                ]
            except OSError:
                continue
            self.port, self._servers = port, servers
            break
        else:
            raise ServerError("no free port for the test DNS server")
        for server in self._servers:
            server.start_thread()
        self._wait()
        return self

    def _wait(self) -> None:
        """Until the server answers a question (bounded), over UDP."""
        from dnslib import DNSRecord

        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                DNSRecord.question("ready.invalid").send(self.host, self.port, timeout=1.0)
                return
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise ServerError(f"the test DNS server on port {self.port} does not answer: {exc}") from exc

    def stop(self) -> None:
        for server in self._servers:
            server.stop()
            server.server.server_close()
        self._servers = []

    def __enter__(self) -> DnsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
