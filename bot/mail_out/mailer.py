"""Where mail goes: the Mailer protocol, and the embedded default, a Maildir per recipient.

The service hands the mailer the outbox rows that are due, a batch after another, in one call;
the mailer reports, per mail, whether it was accepted, failed for now (retry with backoff) or
failed for good (reported to the GM).
Every mail carries a stable Message-ID, so a resend after a crash is recognisable.
"""

from __future__ import annotations

import enum
import errno
import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.mail_in.inbox import deliver_to_maildir


class TemporaryMailError(Exception):
    """The relay said 4xx or the connection dropped: try again later."""


class PermanentMailError(Exception):
    """The relay said 5xx for this mail: do not retry."""


@dataclass(frozen=True, slots=True)
class OutgoingMail:
    message_id: str
    envelope_from: str
    recipients: tuple[str, ...]
    data: bytes


class SendStatus(enum.Enum):
    SENT = "sent"
    TEMPORARY = "temporary"
    PERMANENT = "permanent"


@dataclass(frozen=True, slots=True)
class SendResult:
    message_id: str
    status: SendStatus
    detail: str = ""


class Mailer(Protocol):
    @property
    def settles(self) -> bool:
        """Whether `send` calls `settle` just before a mail could be accepted (an SMTP relay:
        before the final "." of DATA): the drain then commits the outcomes given so far there,
        while the relay reads the mail's content, rather than each as it comes
        (bot.mail_out.drain.drain)."""
        ...

    def send(
        self,
        mails: Iterable[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        """Send the mails, taken from `mails` one at a time, the next once the last one's result
        is given (the drain hands every batch of a drain in one call, reading the next batch
        when it is asked for the mail after a batch's last; a mailer that takes mails ahead of
        its results gets no mail twice, only fewer a call); one result per mail, in order.
        Never raises for one mail's failure.

        `on_result` is called with each mail's result as soon as the relay has answered for
        it, so the caller can record it before the next mail goes out; `settle` (a mailer that
        `settles`) just before each mail could be accepted.
        """
        ...

    def close(self) -> None: ...


_UNSAFE = re.compile(r"[^a-z0-9._@+-]")
_MAX_NAME = 100  # a mailbox's folder name; file systems allow 255 bytes
# The disk, its quota or the permissions, which the operator mends: no mail can be written, and
# the send stops and says so. Any other error of one mail's write (a name the file system
# refuses, for one) fails that mail alone, for good.
_STORAGE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EIO,
        errno.EAGAIN,
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENOMEM,
    }
)


class MaildirMailer:
    """Delivers each mail into ``<root>/<recipient>/`` (a Maildir): the embedded default."""

    settles = False  # a file is written at once: each outcome is recorded as it comes

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def mailbox(self, address: str) -> Path:
        """The recipient's folder: the address, made safe as a file name; a long one
        (a name over the file system's limit failed every later mail) is cut and told apart
        from others cut alike by a digest of the whole."""
        name = _UNSAFE.sub("_", address.lower())
        if len(name) > _MAX_NAME:
            digest = hashlib.sha256(address.lower().encode("utf-8", "surrogatepass")).hexdigest()[:16]
            name = f"{name[: _MAX_NAME - 17]}-{digest}"
        return self.root / name

    def send(
        self,
        mails: Iterable[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        results = []
        for mail in mails:
            # Files in a Maildir end their lines with LF, not the wire's CRLF.
            data = mail.data.replace(b"\r\n", b"\n")
            result = SendResult(mail.message_id, SendStatus.SENT)
            for rcpt in mail.recipients:
                mailbox = self.mailbox(rcpt)
                try:
                    deliver_to_maildir(mailbox, data)
                except OSError as exc:
                    if exc.errno in _STORAGE_ERRNOS:
                        # The disk or its permissions: every mail would fail alike. Raised, with
                        # the mailbox named when the error names no file, for the send to report
                        # (bot.host.storage) and the service to back off; the mail stays pending.
                        if exc.filename is not None:
                            raise
                        raise OSError(exc.errno, exc.strerror, str(mailbox)) from exc
                    # Anything else is this mail's own (a name the file system refuses): it fails
                    # alone, for good, and the rest of the batch goes on.
                    result = SendResult(
                        mail.message_id, SendStatus.PERMANENT, f"{type(exc).__name__}: {exc.strerror or exc}"
                    )
                    break
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results

    def close(self) -> None:
        pass
