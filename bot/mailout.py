"""Mail out: compose a rendered mail with the right headers, queue it, drain the queue.

A mail is written to the outbox in the same transaction as the change that caused it, with
its final bytes and a stable Message-ID; `drain` hands pending rows to the Mailer in batches
and records the outcomes right after each batch. A crash in between resends that batch's
mails with the same Message-ID, so a receiver can recognise them.

Every outgoing mail carries the headers that keep auto-responders quiet (RFC 3834
``Auto-Submitted``, ``Precedence: bulk``, ``X-Auto-Response-Suppress: All``) and our loop
header, so our own mail coming back is recognised and never answered.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.headerregistry import Address
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.clock import Clock, as_utc
from bot.db import Database
from bot.mailer import Mailer, OutgoingMail, SendStatus
from bot.models import Outbox, OutboxStatus
from bot.render import RenderedMail
from bot.settings import Settings

log = logging.getLogger("flagman.mail")

# The outbox holds the wire bytes: CRLF line ends (RFC 5322 2.1; smtplib sends bytes as
# they are), headers folded only past 998 characters (the stdlib's folding of shorter
# subjects moves the whole value to a continuation line, which some readers show with a
# leading space).
_POLICY = policy.default.clone(max_line_length=998, linesep="\r\n")


@dataclass(frozen=True, slots=True)
class Recipient:
    address: str
    name: str = ""


def _address(recipient: Recipient) -> Address:
    local, _, domain = recipient.address.rpartition("@")
    # Address() encodes the display name (RFC 2047) and refuses CR/LF, so a player's chosen
    # name can never inject a header.
    name = " ".join(recipient.name.split())
    return Address(display_name=name, username=local, domain=domain)


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
) -> tuple[str, str, bytes]:
    """(Message-ID, VERP envelope sender, bytes) of one mail."""
    token = f"{kind}-{secrets.token_hex(8)}"
    domain = settings.bot.domain
    message_id = f"<{token}@{domain}>"
    envelope_from = f"{settings.bot.local_part}+bounce-{token}@{domain}"
    msg = EmailMessage()
    msg["From"] = Address(display_name=settings.bot.name, addr_spec=settings.bot.address)
    msg["To"] = _address(to)
    msg["Subject"] = " ".join(rendered.subject.split())
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id
    if reply_to:
        msg["Reply-To"] = Address(display_name=settings.bot.name, addr_spec=reply_to)
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg["Auto-Submitted"] = "auto-replied" if auto_replied else "auto-generated"
    msg["Precedence"] = "bulk"
    msg["X-Auto-Response-Suppress"] = "All"
    msg[settings.bot.loop_header] = settings.bot.address
    msg.set_content(rendered.body, charset="utf-8", cte="quoted-printable")
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
) -> Outbox:
    message_id, envelope_from, data = compose(
        settings, now, kind=kind, to=to, rendered=rendered, reply_to=reply_to,
        in_reply_to=in_reply_to, auto_replied=auto_replied,
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


def drain(db: Database, mailer: Mailer, clock: Clock, settings: Settings, *, limit: int | None = None) -> DrainReport:
    """Send every pending mail that is due, in batches; record each outcome at once."""
    sent = retrying = failed = 0
    batch_size = settings.outbox.batch_size
    done_ids: set[int] = set()
    while limit is None or sent + retrying + failed < limit:
        now = clock.now()
        with db.read() as session:
            rows = session.execute(
                select(Outbox.id, Outbox.message_id, Outbox.envelope_from, Outbox.recipient, Outbox.data)
                .where(Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= now)
                .order_by(Outbox.id)
                .limit(batch_size)
            ).all()
        rows = [r for r in rows if r.id not in done_ids]
        if not rows:
            break
        mails = [OutgoingMail(r.message_id, r.envelope_from, (r.recipient,), r.data) for r in rows]
        by_message_id = {r.message_id: r.id for r in rows}
        results = mailer.send(mails)
        with db.transaction() as session:
            for result in results:
                row = session.get(Outbox, by_message_id[result.message_id])
                assert row is not None
                done_ids.add(row.id)
                row.attempts += 1
                if result.status is SendStatus.SENT:
                    row.status, row.sent_at, row.last_error = OutboxStatus.SENT, clock.now(), ""
                    sent += 1
                    log.info("sent %s to %s (%s)", row.message_id, row.recipient, row.kind)
                elif result.status is SendStatus.TEMPORARY and row.attempts < settings.outbox.max_attempts:
                    row.last_error = result.detail
                    row.next_attempt_at = as_utc(clock.now()) + backoff(row.attempts)
                    retrying += 1
                    log.warning("send of %s to %s failed for now (%s); retry %d at %s",
                                row.message_id, row.recipient, result.detail, row.attempts, row.next_attempt_at)
                else:
                    row.status, row.last_error = OutboxStatus.FAILED, result.detail
                    failed += 1
                    log.error("send of %s to %s failed for good: %s", row.message_id, row.recipient, result.detail)
    return DrainReport(sent, retrying, failed)


def pending_count(session: Session) -> int:
    from sqlalchemy import func

    return session.scalar(select(func.count()).select_from(Outbox).where(Outbox.status == OutboxStatus.PENDING)) or 0


def recipients_of(rows: Sequence[Outbox]) -> list[str]:
    return [r.recipient for r in rows]
