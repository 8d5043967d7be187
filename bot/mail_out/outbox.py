"""Mail out: compose a rendered mail with the right headers, queue it, drain the queue.

A mail is written to the outbox in the same transaction as the change that caused it, with
its final bytes and a stable Message-ID; `drain` hands pending rows to the Mailer in batches
over one connection and commits each mail's outcome as soon as the relay has answered for
it. A crash can resend at most the one mail that was in flight, with the same Message-ID.

Every outgoing mail carries the headers that keep auto-responders quiet (RFC 3834
``Auto-Submitted``, ``Precedence: bulk``, ``X-Auto-Response-Suppress: All``) and our loop
header, so our own mail coming back is recognised and never answered.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from email import policy
from email.headerregistry import Address, BaseHeader, HeaderRegistry
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot.clock import Clock, as_utc
from bot.db import Database
from bot.faults import NO_FAULTS, CrashPoint, Faults
from bot.mail_out.mailer import Mailer, OutgoingMail, SendResult, SendStatus
from bot.mail_out.render import RenderedMail
from bot.models import Outbox, OutboxStatus
from bot.settings import Settings

log = logging.getLogger("flagman.mail")

class _MemoRegistry(HeaderRegistry):
    """policy.default's header registry, memoised (performance.md: compose without waste).

    The stdlib builds a new class for every header it parses and re-parses equal values
    (From, Precedence, Content-Type ... are the same in every mail); here each class is built
    once per name, and each short string value or single Address parsed once (a player's To
    and Reply-To recur in every mail to them). Header objects are immutable, so
    sharing them between mails is safe (the bytes are the same: bench/README.md).
    """

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[str, type[BaseHeader]] = {}
        self._values: dict[tuple[str, ...], BaseHeader] = {}
        self.shared: set[int] = set()  # ids of the header objects held in _values

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        cls = self._classes.get(key)
        if cls is None:
            cls = self._classes[key] = super().__getitem__(name)
        return cls

    def __call__(self, name: str, value: Any) -> BaseHeader:
        key: tuple[str, ...]
        if type(value) is Address:  # From, To, Reply-To: one address, the same in many mails
            key = (name.lower(), value.display_name, value.username, value.domain)
        elif type(value) is str and len(value) <= 300:
            key = (name.lower(), value)
        else:
            return super().__call__(name, value)
        header = self._values.get(key)
        if header is None or header.name != name:
            if len(self._values) > 512:  # a parsed header with its tree weighs ~14 KB
                self._values.clear()
                self.shared.clear()
                _FOLDED.clear()
            header = self._values[key] = super().__call__(name, value)
            self.shared.add(id(header))
        return header


class _WirePolicy(policy.EmailPolicy):
    """Folds each shared (memoised) header object once: folding is most of as_bytes's cost."""

    def _fold(self, name: str, value: Any, refold_binary: bool = False) -> str:
        if id(value) not in _REGISTRY.shared:
            return str(super()._fold(name, value, refold_binary))  # type: ignore[misc]  # a private hook of email.policy
        entry = _FOLDED.get(id(value))
        if entry is None or entry[0] is not value or entry[1] is not self:
            entry = _FOLDED[id(value)] = (value, self, str(value.fold(policy=self)))
        return entry[2]


_FOLDED: dict[int, tuple[BaseHeader, policy.EmailPolicy, str]] = {}
# Mail is built with the memoised registry, and written with the folding cache.
_REGISTRY = _MemoRegistry()
_BUILD = policy.default.clone(header_factory=_REGISTRY)
# The outbox holds the wire bytes: CRLF line ends (RFC 5322 2.1; smtplib sends bytes as
# they are), headers folded only past 998 characters (the stdlib's folding of shorter
# subjects moves the whole value to a continuation line, which some readers show with a
# leading space).
_POLICY = _WirePolicy(header_factory=_REGISTRY, max_line_length=998, linesep="\r\n")


@dataclass(frozen=True, slots=True)
class Recipient:
    address: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class InlineImage:
    """A picture the HTML part shows as ``<img src="cid:{cid}">`` (RFC 2392), sent in the mail."""

    cid: str  # without the angle brackets
    data: bytes
    filename: str
    subtype: str = "png"


@dataclass(frozen=True, slots=True)
class HtmlBody:
    """The HTML alternative of a mail and the images it shows inline."""

    html: str
    images: tuple[InlineImage, ...] = ()


def _address(recipient: Recipient) -> Address:
    local, _, domain = recipient.address.rpartition("@")
    # Address() encodes the display name (RFC 2047) and refuses CR/LF, so a player's chosen
    # name can never inject a header.
    name = " ".join(recipient.name.split())
    return Address(display_name=name, username=local, domain=domain)


_SIMPLE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@+")
_ENCODED_IMAGES: dict[int, tuple[bytes, str]] = {}


def _base64_lines(data: bytes) -> str:
    """`data` in base64, 76-character CRLF lines; memoised by object, since one turn's
    picture rides in every mail of the turn."""
    import base64

    entry = _ENCODED_IMAGES.get(id(data))
    if entry is None or entry[0] is not data:
        if len(_ENCODED_IMAGES) > 256:
            _ENCODED_IMAGES.clear()
        entry = _ENCODED_IMAGES[id(data)] = (data, base64.encodebytes(data).decode("ascii").replace("\n", "\r\n"))
    return entry[1]


def _make_alternative(msg: EmailMessage, html: HtmlBody) -> None:
    """Turn the text-only `msg` into multipart/alternative: its text part as it was, then a
    multipart/related of the HTML and its inline images (RFC 2046, RFC 2387, RFC 2392).

    The body is assembled here rather than by the stdlib generator, which writes line by line
    and re-parses each sub-part's headers: ~6 ms a mail against ~1 ms, at 4,000 mails a
    deadline. Encodings: quoted-printable (binascii, in C) for text and HTML, base64 for
    images.
    """
    import binascii

    for image in html.images:
        if not (set(image.cid) <= _SIMPLE and set(image.filename) <= _SIMPLE and image.subtype.isalnum()):
            raise ValueError(f"inline image names must be plain: {image.cid!r}, {image.filename!r}")
    text_qp = str(msg.get_payload()).replace("\r\n", "\n").replace("\n", "\r\n")
    html_qp = binascii.b2a_qp(html.html.replace("\r\n", "\n").encode("utf-8"), istext=True).decode("ascii")
    # Fixed boundaries are safe here (RFC 2046 5.1.1 only asks that no line of the content
    # starts with them, and no quoted-printable or base64 line can start with "--=_"), and
    # a fixed Content-Type value is parsed once, not once a mail.
    outer, inner = "=_flagman_alternative_=", "=_flagman_related_="
    nl = "\r\n"
    parts = [
        f"--{outer}{nl}Content-Type: text/plain; charset=\"utf-8\"{nl}Content-Transfer-Encoding: quoted-printable{nl}{nl}",
        text_qp,
        f"{nl}--{outer}{nl}Content-Type: multipart/related; boundary=\"{inner}\";{nl} type=\"text/html\"{nl}{nl}",
        f"--{inner}{nl}Content-Type: text/html; charset=\"utf-8\"{nl}Content-Transfer-Encoding: quoted-printable{nl}{nl}",
        html_qp.replace("\n", nl),
    ]
    for image in html.images:
        parts.append(
            f"{nl}--{inner}{nl}Content-Type: image/{image.subtype}{nl}Content-Transfer-Encoding: base64{nl}"
            f"Content-Disposition: inline; filename=\"{image.filename}\"{nl}Content-ID: <{image.cid}>{nl}{nl}"
        )
        parts.append(_base64_lines(image.data))
    parts.append(f"{nl}--{inner}--{nl}{nl}--{outer}--{nl}")
    del msg["Content-Type"]
    del msg["Content-Transfer-Encoding"]
    msg["Content-Type"] = f'multipart/alternative; boundary="{outer}"'
    # A multipart whose payload is a string is written as it is (email.generator).
    msg.set_payload("".join(parts))


def compose(
    settings: Settings,
    now: datetime,
    *,
    kind: str,
    to: Recipient,
    rendered: RenderedMail,
    reply_to: str | None = None,
    in_reply_to: str = "",
    auto_replied: bool = False,
    html: HtmlBody | None = None,
) -> tuple[str, str, bytes]:
    """(Message-ID, VERP envelope sender, bytes) of one mail.

    With `html`, the mail is multipart/alternative: the plain text first (what text-only
    readers and our own reply parser use), then the HTML in a multipart/related with its
    inline images. Without it, the mail is the single text part it always was.
    """
    token = f"{kind}-{secrets.token_hex(8)}"
    domain = settings.bot.domain
    message_id = f"<{token}@{domain}>"
    envelope_from = f"{settings.bot.local_part}+bounce-{token}@{domain}"
    msg = EmailMessage(policy=_BUILD)
    msg["From"] = Address(display_name=settings.bot.name, addr_spec=settings.bot.address)
    msg["To"] = _address(to)
    msg["Subject"] = " ".join(rendered.subject.split())
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id
    if reply_to:
        msg["Reply-To"] = Address(display_name=settings.bot.name, addr_spec=reply_to)
    if in_reply_to and in_reply_to.isprintable() and in_reply_to.isascii() and "=?" not in in_reply_to:
        # A second line of defence (bot.inbound already sanitises Message-IDs): a quoted-back
        # id must never carry a line break or an encoded word into our headers.
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg["Auto-Submitted"] = "auto-replied" if auto_replied else "auto-generated"
    msg["Precedence"] = "bulk"
    msg["X-Auto-Response-Suppress"] = "All"
    msg[settings.bot.loop_header] = settings.bot.address
    msg.set_content(rendered.body, charset="utf-8", cte="quoted-printable")
    if html is not None:
        _make_alternative(msg, html)
    # The body was encoded (quoted-printable, 76-character lines) by set_content above; the
    # serialising policy only decides how headers are folded.
    return message_id, envelope_from, msg.as_bytes(policy=_POLICY)


def queue(
    session: Session,
    settings: Settings,
    now: datetime,
    *,
    kind: str,
    to: Recipient,
    rendered: RenderedMail,
    game_id: int | None = None,
    reply_to: str | None = None,
    in_reply_to: str = "",
    auto_replied: bool = False,
    html: HtmlBody | None = None,
) -> Outbox:
    message_id, envelope_from, data = compose(
        settings, now, kind=kind, to=to, rendered=rendered, reply_to=reply_to,
        in_reply_to=in_reply_to, auto_replied=auto_replied, html=html,
    )
    row = Outbox(
        message_id=message_id, kind=kind, game_id=game_id, recipient=to.address,
        envelope_from=envelope_from, subject=rendered.subject, data=data,
        status=OutboxStatus.PENDING, attempts=0, next_attempt_at=now, last_error="", created_at=now,
    )
    session.add(row)
    return row


def backoff(attempts: int) -> timedelta:
    """1, 2, 4 ... minutes, capped at an hour."""
    return timedelta(minutes=min(60, 2 ** max(0, attempts - 1)))


@dataclass(frozen=True, slots=True)
class DrainReport:
    sent: int = 0
    retrying: int = 0
    failed: int = 0


def drain(db: Database, mailer: Mailer, clock: Clock, settings: Settings, *, limit: int | None = None,
          faults: Faults = NO_FAULTS) -> DrainReport:
    """Send every pending mail that is due, in batches; record each outcome as it comes.

    Each result is committed the moment the relay has answered for that mail, before the next
    one goes out, so a crash can resend at most the one mail in flight (with its Message-ID).
    """
    counts = {"sent": 0, "retrying": 0, "failed": 0}
    batch_size = settings.outbox.batch_size
    done_ids: set[int] = set()
    postgres = db.engine.dialect.name == "postgresql"
    by_message_id: dict[str, Any] = {}

    def record(result: SendResult) -> None:
        faults.reached(CrashPoint.AFTER_SEND)
        row = by_message_id[result.message_id]
        done_ids.add(row.id)
        attempts = row.attempts + 1
        values: dict[str, object] = {"attempts": attempts}
        if result.status is SendStatus.SENT:
            values.update(status=OutboxStatus.SENT, sent_at=clock.now(), last_error="")
            counts["sent"] += 1
            log.info("sent %s to %s (%s)", row.message_id, row.recipient, row.kind)
        elif result.status is SendStatus.TEMPORARY and attempts < settings.outbox.max_attempts:
            retry_at = as_utc(clock.now()) + backoff(attempts)
            values.update(last_error=result.detail, next_attempt_at=retry_at)
            counts["retrying"] += 1
            log.warning("send of %s to %s failed for now (%s); retry %d at %s",
                        row.message_id, row.recipient, result.detail, attempts, retry_at)
        else:
            values.update(status=OutboxStatus.FAILED, last_error=result.detail)
            counts["failed"] += 1
            log.error("send of %s to %s failed for good: %s", row.message_id, row.recipient, result.detail)
        with db.engine.begin() as conn:
            if postgres:
                # A crash of the bot cannot lose this commit (the server has it); only a
                # crash of the database server could, and then the mail is resent with
                # its Message-ID. Worth it: no fsync wait per mail sent.
                conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
            conn.execute(update(Outbox).where(Outbox.id == row.id).values(**values))
        faults.reached(CrashPoint.AFTER_RECORD)

    while limit is None or sum(counts.values()) < limit:
        now = clock.now()
        with db.read() as session:
            rows = session.execute(
                select(Outbox.id, Outbox.message_id, Outbox.envelope_from, Outbox.recipient, Outbox.data,
                       Outbox.attempts, Outbox.kind)
                .where(Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= now)
                .order_by(Outbox.id)
                .limit(batch_size)
            ).all()
        rows = [r for r in rows if r.id not in done_ids]
        if not rows:
            break
        by_message_id.clear()
        by_message_id.update((r.message_id, r) for r in rows)
        mails = [OutgoingMail(r.message_id, r.envelope_from, (r.recipient,), r.data) for r in rows]
        faults.reached(CrashPoint.BEFORE_SEND)
        mailer.send(mails, on_result=record)
    return DrainReport(counts["sent"], counts["retrying"], counts["failed"])
