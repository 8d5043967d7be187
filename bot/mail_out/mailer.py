"""Where mail goes: the Mailer protocol, and the embedded default, a Maildir per recipient.

The service hands the mailer a batch of outbox rows; the mailer reports, per mail, whether
it was accepted, failed for now (retry with backoff) or failed for good (reported to the GM).
Every mail carries a stable Message-ID, so a resend after a crash is recognisable.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
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
    def send(self, mails: Sequence[OutgoingMail], on_result: Callable[[SendResult], None] | None = None) -> list[SendResult]:
        """Send a batch; one result per mail, in order. Never raises for one mail's failure.

        `on_result` is called with each mail's result as soon as the relay has answered for
        it, so the caller can record it before the next mail goes out.
        """
        ...

    def close(self) -> None: ...


_UNSAFE = re.compile(r"[^a-z0-9._@+-]")


class MaildirMailer:
    """Delivers each mail into ``<root>/<recipient>/`` (a Maildir): the embedded default."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def mailbox(self, address: str) -> Path:
        return self.root / _UNSAFE.sub("_", address.lower())

    def send(self, mails: Sequence[OutgoingMail], on_result: Callable[[SendResult], None] | None = None) -> list[SendResult]:
        results = []
        for mail in mails:
            # Files in a Maildir end their lines with LF, not the wire's CRLF.
            data = mail.data.replace(b"\r\n", b"\n")
            for rcpt in mail.recipients:
                deliver_to_maildir(self.mailbox(rcpt), data)
            results.append(SendResult(mail.message_id, SendStatus.SENT))
            if on_result is not None:
                on_result(results[-1])
        return results

    def close(self) -> None:
        pass
