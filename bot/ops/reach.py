"""Why a mail server could not be used, told apart, and the fix for each.

A host name that does not resolve, a port where nothing listens (refused), a server that
never answers (a firewall that drops, a wrong host: the timeout), a TLS handshake that fails
(a plain port with ``security = "tls"``, or no STARTTLS offered), a certificate that is not
trusted, a login refused: each has its own cause and its own fix, and `flagman doctor` says
the one that applies instead of "check everything".

`failure_of` reads the exception and the ones it was raised from or while handling:
`ImapInbox` wraps the socket error in `ImapUnavailable`, and smtplib turns a read timeout
into `SMTPServerDisconnected` while handling the `TimeoutError`.
"""

from __future__ import annotations

import contextlib
import enum
import smtplib
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.host.unit import credentials_dir, unit_of

if TYPE_CHECKING:
    from imapclient import IMAPClient

    from bot.settings import Settings


class Failure(enum.Enum):
    """Why a connection to a server failed, as far as the operator's fix goes."""

    NAME = "the host name does not resolve"
    REFUSED = "connection refused"
    TIMEOUT = "no answer in time"
    TLS = "TLS handshake failed"
    NO_STARTTLS = "STARTTLS not offered"
    CERTIFICATE = "TLS certificate not trusted"
    LOGIN = "login refused"
    NO_LOGIN = "no login offered"
    OTHER = "failed"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _one(exc: BaseException) -> Failure | None:
    from imapclient.exceptions import CapabilityError, LoginError

    from bot.mail_in.imap import ImapLoginError

    text = str(exc).lower()
    if isinstance(exc, ImapLoginError | LoginError | smtplib.SMTPAuthenticationError):
        return Failure.LOGIN
    if isinstance(exc, smtplib.SMTPNotSupportedError | CapabilityError):
        if "starttls" in text:
            return Failure.NO_STARTTLS
        if "auth" in text:
            return Failure.NO_LOGIN
        return None
    if isinstance(exc, ssl.SSLCertVerificationError):
        return Failure.CERTIFICATE
    if isinstance(exc, ssl.SSLError):
        return Failure.TLS
    if isinstance(exc, socket.gaierror):
        return Failure.NAME
    if isinstance(exc, ConnectionRefusedError):
        return Failure.REFUSED
    if isinstance(exc, TimeoutError):  # socket.timeout is TimeoutError
        return Failure.TIMEOUT
    return None


def failure_of(exc: BaseException) -> Failure:
    """The first failure recognised along the chain of `exc`, else OTHER."""
    for link in _chain(exc):
        found = _one(link)
        if found is not None:
            return found
    return Failure.OTHER


def first_line(exc: BaseException) -> str:
    """The innermost exception's message, one line (the outer ones repeat it, wrapped)."""
    *_, inner = _chain(exc)
    for candidate in (inner, exc):
        text = " ".join(str(candidate).split())
        if len(text) > 2 and text[:2] in ("b'", 'b"') and text[-1] == text[1]:
            text = text[2:-1]  # imapclient gives the server's bytes, repr'd
        if text:
            return text[:300]
    return type(exc).__name__


@dataclass(frozen=True, slots=True)
class Server:
    """A mail server as the configuration names it: what the hints quote back."""

    kind: str  # "IMAP server", "SMTP relay"
    section: str  # "[inbox]", "[outbox]"
    host: str
    port: int
    security: str
    username: str
    timeout: float
    credential: str  # the credential file's name, e.g. "imap-password"
    env: str  # the environment variable a command run by hand reads instead
    tls_port: int  # the usual port for security = "tls"
    starttls_port: int  # ... for "starttls" (and "none")

    @property
    def where(self) -> str:
        return f"{self.kind} {self.host}:{self.port} ({self.security})"


def imap_server(settings: Settings, timeout: float) -> Server:
    cfg = settings.inbox
    return Server(
        "IMAP server",
        "[inbox]",
        cfg.host,
        cfg.port,
        cfg.security,
        cfg.username,
        timeout,
        "imap-password",
        "FLAGMAN_IMAP_PASSWORD",
        993,
        143,
    )


def smtp_server(settings: Settings, timeout: float) -> Server:
    cfg = settings.outbox
    return Server(
        "SMTP relay",
        "[outbox]",
        cfg.host,
        cfg.port,
        cfg.security,
        cfg.username,
        timeout,
        "smtp-password",
        "FLAGMAN_SMTP_PASSWORD",
        465,
        587,
    )


def credential_hint(server: Server) -> str:
    """Where the password is: one path, the unit's (LoadCredential=), and the variable by hand."""
    folder = credentials_dir()
    return (
        f"{folder}/{server.credential} (the password alone, on one line; the unit and flagmanctl "
        f"hand over every file of {folder}/; a command run by hand "
        f"outside flagmanctl reads {server.env}), then `systemctl restart {unit_of()}`"
    )


def hint(failure: Failure, server: Server) -> str:
    """The fix for this failure on this server."""
    s = server
    ports = f'security = "tls" is usually port {s.tls_port}, "starttls" port {s.starttls_port}'
    if failure is Failure.NAME:
        return (
            f"the name {s.host!r} does not resolve: check {s.section} host, and DNS on this machine "
            f"(`getent hosts {s.host}`)"
        )
    if failure is Failure.REFUSED:
        return (
            f"nothing accepts connections on {s.host}:{s.port}: check {s.section} host and port "
            f"({ports}) and that the server runs there (`ss -ltn` on that host; "
            f"`systemctl status {'dovecot' if s.section == '[inbox]' else 'postfix'}`)"
        )
    if failure is Failure.TIMEOUT:
        return (
            f"{s.host}:{s.port} took the connection but did not answer within {s.timeout:g} s, or never "
            f"answered it: a firewall dropping the traffic, or a host or port that is not the "
            f"{s.kind}; check {s.section} host and port and the firewall between (`nc -v {s.host} {s.port}` "
            f"should print the server's greeting); {s.section} timeout sets how long to wait"
        )
    if failure is Failure.TLS:
        return (
            f'{s.host}:{s.port} does not speak TLS the way security = "{s.security}" expects: '
            f'"tls" needs a port that starts with TLS (usually {s.tls_port}); for a port that '
            f'starts in plain text and upgrades (usually {s.starttls_port}) use security = "starttls"'
        )
    if failure is Failure.NO_STARTTLS:
        return (
            f'the {s.kind} does not offer STARTTLS on port {s.port}: use security = "tls" with its TLS port '
            f'(usually {s.tls_port}), or turn TLS on in the server; security = "none" only on localhost'
        )
    if failure is Failure.CERTIFICATE:
        return (
            f"the certificate of {s.host}:{s.port} is not trusted by this machine, or not issued for "
            f"{s.host!r}: {s.section} host must be a name the certificate carries; a private CA must be in "
            "the system's store (/usr/local/share/ca-certificates/, then update-ca-certificates)"
        )
    if failure is Failure.LOGIN:
        return f"the {s.kind} refused the login: check {s.section} username ({s.username!r}) and " + credential_hint(s)
    if failure is Failure.NO_LOGIN:
        return (
            f"the {s.kind} offers no login (AUTH) here: empty {s.section} username for a relay that needs "
            'none (a local one), or use security = "starttls"/"tls" (many servers offer AUTH only over TLS)'
        )
    return (
        f"check {s.section} host, port and security ({ports}), that the server runs, "
        f"and {s.section} username and " + credential_hint(s)
    )


def describe(failure: Failure, exc: BaseException, server: Server) -> str:
    """One line for the finding: which server, what failed, the server's or the system's words."""
    if failure is Failure.LOGIN:
        return f"{server.where}: login as {server.username!r} refused ({first_line(exc)})"
    return f"{server.where}: {failure.value} ({first_line(exc)})"


# -- the SMTP relay, as the outbox's SmtpMailer talks to it --------------------------------------


@contextlib.contextmanager
def smtp_session(settings: Settings, timeout: float) -> Iterator[smtplib.SMTP]:
    """A connection to the [outbox] relay: connected, EHLO, STARTTLS and logged in as configured
    (as bot.mail_out.smtp.SmtpMailer does). Raises what smtplib and ssl raise."""
    cfg = settings.outbox
    context = ssl.create_default_context()
    conn: smtplib.SMTP
    if cfg.security == "tls":
        conn = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=timeout, context=context)
    else:
        conn = smtplib.SMTP(cfg.host, cfg.port, timeout=timeout)
    try:
        conn.ehlo()
        if cfg.security == "starttls":
            conn.starttls(context=context)
            conn.ehlo()
        if cfg.username:
            conn.login(cfg.username, settings.secrets.smtp_password)
        yield conn
    finally:
        try:
            conn.quit()
        except (smtplib.SMTPException, OSError):
            conn.close()


# -- the IMAP account, for what ImapInbox does not do (search by header, delete) ---------------


@contextlib.contextmanager
def imap_session(settings: Settings, timeout: float) -> Iterator[IMAPClient]:
    """A logged-in connection to the [inbox] IMAP account (as bot.mail_in.imap.ImapInbox makes
    it), no folder selected. Raises what imapclient, ssl and socket raise."""
    from imapclient import IMAPClient

    cfg = settings.inbox
    context = ssl.create_default_context() if cfg.security != "none" else None
    client = IMAPClient(cfg.host, cfg.port, ssl=cfg.security == "tls", ssl_context=context, timeout=timeout)
    client.normalise_times = False  # INTERNALDATE with its zone, as ImapInbox reads it
    try:
        if cfg.security == "starttls":
            client.starttls(context)
        client.login(cfg.username, settings.secrets.imap_password)
        yield client
    finally:
        try:
            client.logout()
        except Exception:  # noqa: BLE001 - logging out of a connection that may be dead already
            with contextlib.suppress(Exception):
                client.shutdown()
