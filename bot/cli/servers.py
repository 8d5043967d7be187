"""A server that cannot be reached, said in two lines: what could not be reached, what to check.

`bot.cli.main` catches these once, for every command, and exits with `UNREACHABLE` (3), or
with `bot.host.storage.STORAGE` (4) for the database or the disk failing on this machine (bot.host.storage):

* the IMAP server: `bot.mail_in.imap.ImapError` -- `ImapUnavailable` (no connection, or it
  kept dropping), `ImapLoginError` (the login refused), and the rest (a folder missing, a
  certificate not trusted, a NO or BAD at setup);
* the database: SQLAlchemy's `OperationalError` -- a server that does not answer or refuses
  the user, an SQLite file that cannot be opened, a schema that is not there, a lock (3); a
  full disk, a database or folder this user may not write, a read-only file system, a damaged
  database file (its `DatabaseError` too) (4);
* the disk: an `OSError` writing a file (the Maildir outbox, the archive): no space left, a
  read-only file system, permission denied, an I/O error (4);
* the SMTP relay: `SmtpMailer` never raises for it. A relay it cannot connect to (or log in
  to) makes each mail TEMPORARY, with a detail saying so, and the outbox tries again later:
  what the service wants. A command run by hand wants to be told, so the CLI's App sends
  through `RelayWatch`, which turns the first such result into `RelayUnreachable` *before*
  the outbox records it: the mail stays in the outbox as it was, no attempt counted.

Nothing else is made friendly: any other exception is a bug and keeps its traceback.

A leaf of the CLI package, like `bot.cli.context`; it imports the shell only to explain a
failure, and never to recognise one (`flagman play` must not load SQLAlchemy): an exception
can only be of a class whose module is already loaded, so `sys.modules` is asked instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.mail_out.mailer import Mailer, OutgoingMail, SendResult
    from bot.settings import Settings

UNREACHABLE = 3  # the exit status: a server cannot be reached, or refused the login

DOCTOR = "`flagman doctor` checks them all"


class RelayUnreachable(Exception):  # noqa: N818 - named for what happened, as Refused
    """The SMTP relay could not be connected to (or refused the login); nothing more was sent."""

    def __init__(self, detail: str, sent: int) -> None:
        super().__init__(detail)
        self.detail = detail
        self.sent = sent


class RelayWatch:
    """A `Mailer` around the CLI's own: the same sending, except that a relay it cannot
    connect to raises `RelayUnreachable` instead of leaving every mail to be retried."""

    def __init__(self, mailer: Mailer) -> None:
        self.mailer = mailer
        self.sent = 0

    @property
    def settles(self) -> bool:  # as the mailer it watches (bot.mail_out.mailer.Mailer)
        return self.mailer.settles

    def send(
        self,
        mails: Iterable[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        from bot.mail_out.mailer import SendStatus
        from bot.mail_out.smtp import (
            CANNOT_CONNECT,  # how SmtpMailer says it (a test runs it on a closed port)
        )

        def watch(result: SendResult) -> None:
            if result.status is SendStatus.TEMPORARY and result.detail.startswith(CANNOT_CONNECT):
                raise RelayUnreachable(result.detail, self.sent)  # before the outbox records it
            if result.status is SendStatus.SENT:
                self.sent += 1
            if on_result is not None:
                on_result(result)

        return self.mailer.send(mails, on_result=watch, settle=settle)

    def close(self) -> None:
        self.mailer.close()


def _loaded(module: str, name: str) -> type[BaseException] | None:
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _settings(args: argparse.Namespace) -> Settings | None:
    """The settings again, for the hint (the command loaded them already, so this works).
    As `bot.cli.context.load`, which imports this module."""
    from bot.settings import load_settings

    try:
        return load_settings(Path(args.config) if args.config else None)
    except Exception:  # noqa: BLE001 - only a hint is lost: the message stands without it
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def explain(exc: BaseException, args: argparse.Namespace) -> tuple[list[str], int] | None:
    """Two lines for a server that cannot be reached or storage that fails (what, and what to
    do), and the exit status; None when `exc` is not one of the known failures."""
    imap_error = _loaded("bot.mail_in.imap", "ImapError")
    if isinstance(exc, RelayUnreachable):
        return _relay(exc, _settings(args)), UNREACHABLE
    if imap_error is not None and isinstance(exc, imap_error):
        return _imap(exc, _settings(args)), UNREACHABLE
    from bot.host.storage import Cause, breakdown

    settings = _settings(args)
    found = breakdown(exc, settings.database_url if settings is not None else None)
    if found is None:
        return None
    if found.cause is Cause.UNREACHABLE:
        return _database(exc, settings), found.status
    return [found.text, found.fix if "flagman doctor" in found.fix else f"{found.fix}; {DOCTOR}"], found.status


def _where(settings: Settings | None) -> str:
    return f" in {settings.source}" if settings is not None else ""


def _relay(exc: RelayUnreachable, settings: Settings | None) -> list[str]:
    done = f"{exc.sent} sent before that; the rest" if exc.sent else "nothing was sent; the mail"
    check = "check [outbox] host, port, security, username and the smtp-password credential"
    if settings is not None:
        cfg = settings.outbox
        check = (
            f"check [outbox] host and port ({cfg.host}:{cfg.port}), security ({cfg.security}), username "
            f"and the smtp-password credential{_where(settings)}"
        )
    return [f"{exc.detail}; {done} stays in the outbox", f"{check}; {DOCTOR}"]


def _imap(exc: BaseException, settings: Settings | None) -> list[str]:
    from bot.mail_in.imap import ImapLoginError, ImapUnavailable

    where = _where(settings)
    if settings is not None:
        cfg = settings.inbox
        address = f" ({cfg.host}:{cfg.port}, {cfg.security})"
    else:
        address = ""
    if isinstance(exc, ImapLoginError):
        check = f"check [inbox] username{where} and the imap-password credential (or FLAGMAN_IMAP_PASSWORD)"
    elif isinstance(exc, ImapUnavailable):
        check = f"check [inbox] host, port and security{address}{where}, and that the server is up"
    else:
        check = f"check [inbox]{address}{where}: its folders and TLS (`flagman doctor --fix` makes missing folders)"
    return [_first_line(exc), f"{check}; {DOCTOR}"]


def _database(exc: BaseException, settings: Settings | None) -> list[str]:
    from bot.ops.doctor import safe_url

    # The driver's own message, first line only: SQLAlchemy's adds the statement and its parameters.
    reason = _first_line(getattr(exc, "orig", None) or exc)
    where = _where(settings)
    if settings is None:
        return [f"cannot use the database: {reason}", f"check [database] url; {DOCTOR}"]
    url = settings.database_url
    if url.startswith("sqlite"):
        check = (
            f"check [database] url{where}, that this user may read and write the file, its -wal and -shm "
            "files and its folder, and that it is migrated (`flagman migrate`)"
        )
    else:
        from bot.host.storage import database_hint

        check = f"{database_hint(reason, False)} ([database] url{where})"
    return [f"cannot use the database {safe_url(url)}: {reason}", f"{check}; {DOCTOR}"]
