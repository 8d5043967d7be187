"""Test doubles shipped with the code: real implementations of the protocols, in memory.

`FakeInbox` and `FakeMailer` behave like the real adapters (keys, batches, mark_done,
per-mail results); `FakeClock` is moved by hand. `TestApp` is an `App` built on them and
typed as them, so a test moves its clock, delivers to its inbox and reads its mailer without
a cast. Used by the unit tests and by anyone who wants to drive the bot from Python without
servers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import TypeVar

from bot.app import App
from bot.db import Database
from bot.dice import Entropy
from bot.faults import NO_FAULTS, Faults
from bot.games.deadline import INLINE, TurnWorker
from bot.mail_in.inbox import Folder, RawMail, header_section
from bot.mail_in.parse_worker import MailParser
from bot.mail_out.mailer import OutgoingMail, SendResult, SendStatus
from bot.mail_out.render import Renderer
from bot.settings import Settings

_Fake = TypeVar("_Fake")


class FakeClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        self.current = self.current + (delta if delta is not None else timedelta(**kwargs))
        return self.current

    def set(self, moment: datetime) -> None:
        self.current = moment


class FakeInbox:
    def __init__(self, max_size: int = 10 * 1024 * 1024) -> None:
        self.max_size = max_size
        self.pending: dict[str, bytes] = {}
        self.received: dict[str, datetime | None] = {}
        self.folders: dict[Folder, list[str]] = {f: [] for f in Folder}
        self._next = 1

    def deliver(self, data: bytes | str, received_at: datetime | None = None) -> str:
        """Put a mail in; `received_at` is when the server received it (None: it did not say).

        mail-interface.md: "Deadlines are judged by when the mail server received the mail
        (IMAP INTERNALDATE, the Maildir delivery time), not by when the bot reads it." So a
        test can deliver a mail that arrived before the deadline but is read after it.
        """
        if received_at is not None and received_at.utcoffset() is None:
            raise ValueError(f"received_at must be timezone-aware, not {received_at!r}")
        key = str(self._next)
        self._next += 1
        self.pending[key] = data.encode() if isinstance(data, str) else data
        self.received[key] = received_at.astimezone(UTC) if received_at is not None else None
        return key

    def fetch_new(self, limit: int = 100, *, skip: Collection[str] = ()) -> list[RawMail]:
        out = []
        for key in [k for k in self.pending if k not in skip][:limit]:
            data = self.pending[key]
            received = self.received.get(key)
            if len(data) <= self.max_size:
                out.append(RawMail(key, data, len(data), received_at=received))
            else:  # like ImapInbox: an over-cap mail comes with its header section only
                out.append(RawMail(key, None, len(data), headers=header_section(data), received_at=received))
        return out

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        for key in keys:
            if self.pending.pop(key, None) is not None:
                self.received.pop(key, None)
                self.folders[folder].append(key)

    def wait(self, timeout: float) -> bool:
        return bool(self.pending)

    def close(self) -> None:
        pass


@dataclass
class FakeMailer:
    sent: list[OutgoingMail] = field(default_factory=list)
    # address -> status to answer for it (default SENT)
    answers: dict[str, SendStatus] = field(default_factory=dict)
    settles = False  # bot.mail_out.mailer.Mailer: each outcome is recorded as it comes

    def send(
        self,
        mails: Iterable[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> list[SendResult]:
        results = []
        for mail in mails:
            status = next((self.answers[r] for r in mail.recipients if r in self.answers), SendStatus.SENT)
            if status is SendStatus.SENT:
                self.sent.append(mail)
            results.append(SendResult(mail.message_id, status, "" if status is SendStatus.SENT else "fake refusal"))
            if on_result is not None:
                on_result(results[-1])
        return results

    def close(self) -> None:
        pass

    def messages(self, to: str | None = None) -> list[EmailMessage]:
        out = []
        for mail in self.sent:
            if to is None or to in mail.recipients:
                msg = message_from_bytes(mail.data, policy=policy.default)
                assert isinstance(msg, EmailMessage)
                out.append(msg)
        return out

    def clear(self) -> None:
        self.sent.clear()


class TestApp(App):
    """An `App` on a `FakeClock`, a `FakeInbox` and a `FakeMailer`, whose `clock`, `inbox` and
    `mailer` are typed as those fakes: ``app.clock.advance(hours=25)``,
    ``app.inbox.deliver(mail)``, ``app.mailer.messages(address)``.

    Everything else is the `App`'s. An inbox or mailer swapped in later (`use_inbox`,
    `use_mailer`: one that fails) is read through the `App`'s own attributes; asked for as the
    fake while another is in use, `inbox` or `mailer` raises `TypeError` rather than pretend.
    """

    __test__ = False  # a class of the code, not one pytest should collect for its name

    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        clock: FakeClock | None = None,
        renderer: Renderer | None = None,
        inbox: FakeInbox | None = None,
        mailer: FakeMailer | None = None,
        faults: Faults = NO_FAULTS,
        parser: MailParser | None = None,
        turn_worker: TurnWorker = INLINE,
        entropy: Entropy | None = None,
    ) -> None:
        super().__init__(
            settings=settings,
            db=db,
            clock=clock if clock is not None else FakeClock(),
            renderer=renderer if renderer is not None else Renderer(),
            inbox=inbox if inbox is not None else FakeInbox(max_size=settings.limits.max_mail_bytes),
            mailer=mailer if mailer is not None else FakeMailer(),
            faults=faults,
            parser=parser,
            turn_worker=turn_worker,
            entropy=entropy,
        )

    @property
    def clock(self) -> FakeClock:
        return _the_fake(FakeClock, self.shell.clock, "clock")

    @property
    def inbox(self) -> FakeInbox:
        return _the_fake(FakeInbox, self.service.inbox, "inbox")

    @property
    def mailer(self) -> FakeMailer:
        return _the_fake(FakeMailer, self.service.mailer, "mailer")


def _the_fake(kind: type[_Fake], value: object, name: str) -> _Fake:
    if not isinstance(value, kind):
        raise TypeError(f"this TestApp's {name} is a {type(value).__name__} now, not a {kind.__name__}")
    return value


def body_of(msg: EmailMessage, kind: str = "plain") -> str:
    """The text of `msg`'s body part of that kind ("plain" or "html"); the test fails if it has none."""
    part = msg.get_body((kind,))
    assert part is not None, f"no text/{kind} part"
    content: str = part.get_content()
    return content


def words_of(msg: EmailMessage, kind: str = "plain") -> str:
    """`msg`'s body part of that kind with every run of white space one space: what a sentence of
    it says, wherever the letter's filling to 78 columns broke its lines."""
    return " ".join(body_of(msg, kind).split())


_REPLIES = itertools.count(1)


def reply_to(msg: EmailMessage, text: str, *, sender: str, quote: bool = True, message_id: str | None = None) -> bytes:
    """A player's reply to one of the bot's mails, as a mail client would write it."""
    reply = EmailMessage()
    reply["From"] = sender
    reply["To"] = str(msg["Reply-To"] or msg["From"])
    subject = str(msg["Subject"])
    reply["Subject"] = subject if subject.lower().startswith("re:") else "Re: " + subject
    # Every reply its own Message-ID, as a mail client gives it: the same text to a mail of the
    # same subject (STATUS, turn after turn) is another mail, not a copy of the first (an
    # object's id() may be reused, so it cannot tell them apart).
    reply["Message-ID"] = message_id or f"<reply-{next(_REPLIES)}-{abs(hash((sender, text, subject)))}@client.example>"
    reply["In-Reply-To"] = str(msg["Message-ID"])
    reply["Date"] = "Mon, 05 Jan 2026 10:00:00 +0000"
    body = text
    if quote:
        quoted = "\n".join("> " + line for line in body_of(msg).splitlines())
        body = (
            f"{text}\n\nOn Mon, 5 Jan 2026 at 09:00, Flagman <{msg['From'].addresses[0].addr_spec}> wrote:\n{quoted}\n"
        )
    reply.set_content(body)
    return reply.as_bytes()


def plain_mail(
    sender: str,
    to: str,
    subject: str,
    text: str,
    *,
    message_id: str | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = message_id or f"<m-{abs(hash((sender, subject, text)))}@client.example>"
    msg["Date"] = "Mon, 05 Jan 2026 10:00:00 +0000"
    for key, value in (headers or {}).items():
        msg[key] = value
    msg.set_content(text)
    return msg.as_bytes()
