"""The SMTP relay: `SmtpMailer` implements `bot.mail_out.mailer.Mailer` over smtplib.

One connection for all the mails of one `send` (the outbox's drain hands it every batch of a
drain), opened at the first mail and closed with QUIT when they are done. Each mail gets its
own verdict and `send` never raises for one mail's failure (RFC 5321 4.2.1: 2yz accepted, 4yz
transient, 5yz permanent)::

    2xx                                   -> SENT
    421 on MAIL, RCPT or DATA             -> the relay took nothing and closed: the same mail
                                             again at once on a new connection
    connection lost before the final "."  -> the same (the relay holds nothing of the mail)
    connection lost after the final "."   -> TEMPORARY (the relay may have accepted it: the
                                             outbox sends it again later, with its
                                             Message-ID; never twice here)
    other 4xx on MAIL, RCPT or DATA       -> TEMPORARY  (the service retries with backoff)
    5xx on MAIL, all RCPTs, or DATA       -> PERMANENT  (reported to the GM, not retried)
    refused / unreachable / TLS / login   -> TEMPORARY for every mail of the send

Reconnecting is bounded (`max_reconnects` connections lost in a row, with no verdict from the
relay between them): past the bound that mail and every later one are TEMPORARY.

A mail accepted for some recipients and refused for others counts as SENT, with the refused
ones in `detail`: retrying it would deliver it twice to those who got it. (The service sends
one mail per recipient, so this does not arise in practice.)

`settle` (optional): called for each mail after its content has gone to the relay and before
the final ``.`` that lets the relay accept it (RFC 5321 4.1.1.4: until then the relay holds
nothing to deliver; a connection lost mid-DATA delivers nothing). The outbox's drain commits
there the outcome of the mail before, while the relay reads this mail's content, so a crash
still leaves at most one mail accepted and not recorded, without a commit between every two
mails' exchanges.
"""

from __future__ import annotations

import enum
import logging
import re
import smtplib
import socket
import ssl
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from bot.mail_out.mailer import OutgoingMail, SendResult, SendStatus
from bot.safe_text import error_text

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

log = logging.getLogger(__name__)

# How a result says the relay could not be connected to (or logged in to) at all: every mail
# of the send is then TEMPORARY with this at the start of its detail (the CLI tells the user).
CANNOT_CONNECT = "cannot connect to SMTP relay"

Security = Literal["tls", "starttls", "none"]

# Errors meaning the connection is gone: the mail in flight is TEMPORARY, reconnect.
_DROPPED: tuple[type[BaseException], ...] = (smtplib.SMTPServerDisconnected, OSError)


# A dot-atom address, which smtplib.quoteaddr (email.utils.parseaddr, ~0.2 ms) returns as it
# is, in angle brackets; anything else goes through quoteaddr.
_PLAIN_ADDRESS = re.compile(r"[A-Za-z0-9_+=-]+(?:\.[A-Za-z0-9_+=-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")


def quoteaddr(address: str) -> str:
    """`smtplib.quoteaddr`, without parsing a plain address (bench: deadline)."""
    if _PLAIN_ADDRESS.fullmatch(address):
        return f"<{address}>"
    return str(smtplib.quoteaddr(address))


# Where smtplib's `(?m)^\.` could match after the start: a dot just after a LF (its `^` follows
# LF only, so a dot after a lone CR is left as it is). Searched with a compiled pattern: about
# 13 us over a 29 kB mail, where `b"\n." in data` takes about 24 us (bench: send11).
_DOT_AFTER_LF = re.compile(rb"\n\.")


def quote_periods(data: bytes) -> bytes:
    """`smtplib._quote_periods` (RFC 5321 4.5.2): the same bytes, and `data` itself (no copy, no
    substitution pass) when no line starts with a dot (no quoted-printable or base64 line does)."""
    if not data.startswith(b".") and _DOT_AFTER_LF.search(data) is None:
        return data
    return bytes(smtplib._quote_periods(data))  # type: ignore[attr-defined]  # as smtplib does


class _Settling(smtplib.SMTP):
    """smtplib's client, with `settle` called in DATA just before the final ``.``; MAIL, RCPT
    and DATA as smtplib writes them, a little cheaper (`quoteaddr`, `quote_periods`)."""

    settle: Callable[[], None] | None = None
    # Whether the mail in hand's final "." has been (or was being) written: from then on the
    # relay may have accepted it, whatever becomes of the connection. MAIL starts a mail.
    at_dot = False

    def mail(self, sender: str, options: Sequence[str] = ()) -> tuple[int, bytes]:  # smtplib.SMTP.mail
        self.at_dot = False
        optionlist = ""
        if options and self.does_esmtp:
            if any(x.lower() == "smtputf8" for x in options):
                if self.has_extn("smtputf8"):
                    self.command_encoding = "utf-8"
                else:
                    raise smtplib.SMTPNotSupportedError("SMTPUTF8 not supported by server")
            optionlist = " " + " ".join(options)
        self.putcmd("mail", f"FROM:{quoteaddr(sender)}{optionlist}")
        return self.getreply()

    def rcpt(self, recip: str, options: Sequence[str] = ()) -> tuple[int, bytes]:  # smtplib.SMTP.rcpt
        optionlist = ""
        if options and self.does_esmtp:
            optionlist = " " + " ".join(options)
        self.putcmd("rcpt", f"TO:{quoteaddr(recip)}{optionlist}")
        return self.getreply()

    def data(self, msg: ReadableBuffer | str) -> tuple[int, bytes]:  # smtplib.SMTP.data, split before the dot
        self.putcmd("data")
        code, repl = self.getreply()
        if code != 354:
            raise smtplib.SMTPDataError(code, repl)
        # A str as smtplib takes it: line ends made CRLF, then ASCII.
        payload = smtplib._fix_eols(msg).encode("ascii") if isinstance(msg, str) else msg  # type: ignore[attr-defined]
        q = quote_periods(bytes(payload))
        if q[-2:] != smtplib.bCRLF:
            q = q + smtplib.bCRLF
        self.send(q)
        if self.settle is not None:
            try:
                self.settle()
            except BaseException:
                self.close()  # mid-DATA: drop the connection, so the relay never sees the dot
                raise
        self.at_dot = True
        self.send(b"." + smtplib.bCRLF)
        return self.getreply()


class _SettlingSSL(_Settling, smtplib.SMTP_SSL):
    pass


def _status(code: int) -> SendStatus:
    if 500 <= code <= 599:
        return SendStatus.PERMANENT
    if 200 <= code <= 299:
        return SendStatus.SENT
    return SendStatus.TEMPORARY  # 4xx, and anything unexpected: retrying is the safe side


def _text(message: bytes | str) -> str:
    if isinstance(message, bytes):
        return message.decode("utf-8", "replace")
    return str(message)


class _After(enum.Enum):
    """What became of the connection after one mail's exchange."""

    KEPT = "kept"  # open, ready for the next mail
    NOT_TAKEN = "not taken"  # closed, and the relay holds nothing of the mail: send it again now
    LOST = "lost"  # closed after the final ".", or in an unknown state: the mail's verdict stands


def _closing(conn: _Settling, said_421: bool) -> _After:
    """After a refusal: a relay that said 421 closes and took nothing (RFC 5321 3.8); one that
    closed otherwise is lost; else the connection is kept."""
    if said_421:
        conn.close()
        return _After.NOT_TAKEN
    return _After.KEPT if conn.sock is not None else _After.LOST


class SmtpMailer:
    """Sends batches of mail through one SMTP relay."""

    settles = True  # `send` takes `settle` (bot.mail_out.drain.drain)

    def __init__(
        self,
        host: str,
        port: int | None = None,
        *,
        security: Security = "starttls",
        username: str | None = None,
        password: str | None = None,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        local_hostname: str | None = None,
        max_reconnects: int = 2,
    ) -> None:
        if security not in ("tls", "starttls", "none"):
            raise ValueError(f"security must be tls, starttls or none, not {security!r}")
        self.host = host
        self.port = port if port is not None else {"tls": 465, "starttls": 587, "none": 25}[security]
        self.security: Security = security
        self.username = username
        self.password = password
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.local_hostname = local_hostname
        self.max_reconnects = max(0, max_reconnects)

    # -- connection --------------------------------------------------------------------------
    def _context(self) -> ssl.SSLContext:
        return self.ssl_context or ssl.create_default_context()

    def _open(self) -> _Settling:
        """Connect, EHLO, STARTTLS and log in as configured."""
        conn: _Settling
        if self.security == "tls":
            conn = _SettlingSSL(
                self.host,
                self.port,
                self.local_hostname,
                timeout=self.timeout,
                context=self._context(),
            )
        else:
            conn = _Settling(self.host, self.port, self.local_hostname, timeout=self.timeout)
        try:
            if conn.sock is not None:
                # The final "." goes in a segment of its own (see `settle`): without this,
                # Nagle's algorithm would hold it until the body's segment is acknowledged.
                conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.ehlo()
            if self.security == "starttls":
                conn.starttls(context=self._context())
                conn.ehlo()
            if self.username:
                conn.login(self.username, self.password or "")
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _quit(conn: smtplib.SMTP | None) -> None:
        if conn is None:
            return
        try:
            conn.quit()
        except (smtplib.SMTPException, OSError):
            conn.close()

    # -- Mailer ------------------------------------------------------------------------------
    def send(
        self,
        mails: Iterable[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        """Send the mails over one connection, taken from `mails` one at a time (the drain reads
        its next batch from the outbox when the last is done); one result per mail, in order.

        `on_result` gets each result as soon as the relay has answered for that mail, before
        the next one goes out, so a crash mid-send loses no verdict already given. `settle`
        is called before each mail's final "." (see the module's docstring).
        """
        results: list[SendResult] = []

        def record(result: SendResult) -> None:
            results.append(result)
            if on_result is not None:
                on_result(result)

        conn: _Settling | None = None
        lost = 0  # connections lost in a row, with no verdict from the relay between them
        gave_up: str | None = None  # why every remaining mail is TEMPORARY
        try:
            for mail in mails:
                while True:  # once, or again on a new connection when the relay holds nothing of it
                    if gave_up is not None:
                        record(SendResult(mail.message_id, SendStatus.TEMPORARY, gave_up))
                        break
                    if conn is None:
                        try:
                            conn = self._open()
                        except (smtplib.SMTPException, OSError, ValueError) as exc:
                            # Refused, unreachable, TLS or login failure: a relay or config
                            # problem, never the mail's fault, so never PERMANENT.
                            gave_up = f"{CANNOT_CONNECT} {self.host}:{self.port}: {error_text(exc)}"
                            log.warning("%s", gave_up)
                            continue
                        conn.settle = settle
                    result, after = self._send_one(conn, mail)
                    if after is _After.KEPT:
                        lost = 0
                        record(result)
                        break
                    conn.close()
                    conn = None
                    lost += 1
                    if lost > self.max_reconnects:
                        gave_up = f"SMTP relay {self.host}:{self.port} dropped the connection {lost} times in a row"
                    if after is _After.NOT_TAKEN and gave_up is None:
                        log.info("SMTP relay gave %s back (%s): sending it again", mail.message_id, result.detail)
                        continue
                    record(result)
                    break
        finally:
            self._quit(conn)
        return results

    def _send_one(self, conn: _Settling, mail: OutgoingMail) -> tuple[SendResult, _After]:
        """The verdict for one mail, and what became of the connection."""
        mid = mail.message_id
        options: list[str] = []
        addresses = (mail.envelope_from, *mail.recipients)
        if not all(a.isascii() for a in addresses):
            if not conn.has_extn("smtputf8"):
                return SendResult(
                    mid,
                    SendStatus.PERMANENT,
                    "non-ASCII address and the relay lacks SMTPUTF8 (RFC 6531)",
                ), _After.KEPT
            options.append("SMTPUTF8")
        if not mail.data.isascii() and conn.has_extn("8bitmime"):
            options.append("BODY=8BITMIME")
        conn.at_dot = False
        try:
            refused = conn.sendmail(mail.envelope_from, list(mail.recipients), mail.data, options)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            status = (
                SendStatus.PERMANENT
                if codes and all(_status(c) is SendStatus.PERMANENT for c in codes)
                else SendStatus.TEMPORARY
            )
            detail = "; ".join(f"RCPT {addr}: {code} {_text(msg)}" for addr, (code, msg) in exc.recipients.items())
            return SendResult(mid, status, detail), _closing(conn, 421 in codes)
        except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
            stage = "MAIL FROM" if isinstance(exc, smtplib.SMTPSenderRefused) else "DATA"
            detail = f"{stage}: {exc.smtp_code} {_text(exc.smtp_error)}"
            return SendResult(mid, _status(exc.smtp_code), detail), _closing(conn, exc.smtp_code == 421)
        except _DROPPED as exc:
            log.warning("SMTP connection lost while sending %s: %s", mid, error_text(exc))
            after = _After.LOST if conn.at_dot else _After.NOT_TAKEN
            return SendResult(mid, SendStatus.TEMPORARY, f"connection lost: {error_text(exc)}"), after
        except smtplib.SMTPResponseException as exc:  # e.g. a failed EHLO before MAIL
            detail = f"{exc.smtp_code} {_text(exc.smtp_error)}"
            return SendResult(mid, _status(exc.smtp_code), detail), _closing(conn, exc.smtp_code == 421)
        except smtplib.SMTPNotSupportedError as exc:
            return SendResult(mid, SendStatus.PERMANENT, f"relay cannot take it: {exc}"), _After.KEPT
        except (smtplib.SMTPException, ValueError, UnicodeError) as exc:
            # A malformed address (e.g. CR/LF in it) can never be sent; an unknown SMTP
            # error leaves the connection in an unknown state: drop it.
            if isinstance(exc, ValueError | UnicodeError):
                return SendResult(mid, SendStatus.PERMANENT, f"cannot send: {error_text(exc)}"), _After.KEPT
            return SendResult(mid, SendStatus.TEMPORARY, f"SMTP error: {error_text(exc)}"), _After.LOST
        if refused:
            detail = "accepted, but refused for " + "; ".join(
                f"{addr}: {code} {_text(msg)}" for addr, (code, msg) in refused.items()
            )
            return SendResult(mid, SendStatus.SENT, detail), _After.KEPT
        return SendResult(mid, SendStatus.SENT), _After.KEPT

    def close(self) -> None:
        """Nothing to do: each `send` opens and closes its own connection."""

    # -- doctor ------------------------------------------------------------------------------
    def check(self) -> list[str]:
        """Problems an operator must fix (empty when all is well): connect, TLS, login."""
        try:
            conn = self._open()
        except smtplib.SMTPAuthenticationError as exc:
            return [
                f"SMTP login as {self.username!r} at {self.host}:{self.port} refused: "
                f"{exc.smtp_code} {_text(exc.smtp_error)}"
            ]
        except smtplib.SMTPNotSupportedError as exc:
            return [f"SMTP relay {self.host}:{self.port}: {exc} (check `security`)"]
        except (smtplib.SMTPException, OSError, ValueError) as exc:
            return [f"cannot use SMTP relay {self.host}:{self.port} ({self.security}): {error_text(exc)}"]
        problems: list[str] = []
        local = self.host in ("localhost", "127.0.0.1", "::1")
        if self.security == "none" and not local:
            problems.append(
                f"SMTP relay {self.host}:{self.port} is used without TLS: fine on localhost, not across a network"
            )
        self._quit(conn)
        return problems


__all__ = ["Security", "SmtpMailer"]
