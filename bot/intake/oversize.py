"""A mail over the size limit: never fetched, recorded, and a player told once a day.

The inbox checked the size first: only the size is known, and the header section where the
inbox could read it (RawMail.headers). mail-interface.md: never answered, except once, briefly,
to a player -- at their registered address, at most once a day, so a forged From cannot make
the bot mail anyone repeatedly.
"""

from __future__ import annotations

import hashlib
import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import letters
from bot.fate import MailFate
from bot.intake.batch import Batch, dedupe_hash
from bot.intake.limits import Limiter
from bot.letters import Addressee, ToGm, ToSeat
from bot.letters.records import ignore_detail
from bot.letters.words import say
from bot.mail_in.auth import GM_SEAT, tag_in_recipients, verify_tag
from bot.mail_in.inbox import RawMail
from bot.mail_in.parse import Inbound, parse_inbound
from bot.models import (
    AnswerFate,
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    Player,
    Reason,
    Seat,
)
from bot.safe_text import echo

log = logging.getLogger("flagman.inbound")


def _seat_or_gm(batch: Batch, session: Session, head: Inbound, sender: str) -> tuple[Seat | None, Game | None]:
    """The seat the mail is from (of its signed reply address, whatever the From; else of the
    From), and its game; or no seat and the game whose GM it is from; or neither."""
    tag = tag_in_recipients(batch.settings.bot.address, head.recipients)
    signed = verify_tag(tag, batch.shell.secrets_in_force) if tag else None
    tagged = batch.find_game(session, signed.game) if signed else None
    seat = batch.find_seat(tagged, signed.seat) if tagged and signed else None
    seat = (
        seat
        if seat is not None and seat.active
        else session.scalars(
            select(Seat)
            .join(Player)
            .join(Game)
            .where(Player.address == sender, Seat.active.is_(True), Game.status != GameStatus.FINISHED)
        ).first()
    )
    gm_game = (
        None
        if seat
        else (
            tagged
            if signed and signed.seat == GM_SEAT
            else session.scalars(
                select(Game).where(Game.gm_address == sender, Game.status != GameStatus.FINISHED)
            ).first()
        )
    )
    return seat, seat.game if seat else gm_game


def oversize(batch: Batch, limits: Limiter, session: Session, raw: RawMail) -> MailFate | None:
    """Record a mail over the size limit (None: the same one was recorded already)."""
    shell, settings = batch.shell, batch.settings
    policy: str | None = None  # the ignore policy's verdict, and what it says, for the record
    ignored, told = "", False  # told: the holder was told
    head = (
        parse_inbound(
            raw.headers,
            own_addresses={settings.bot.address.lower()},
            loop_header=settings.bot.loop_header,
            max_lines=1,
            size=raw.size,
        )
        if raw.headers
        else None
    )
    key_hash = hashlib.sha256(raw.key.encode()).hexdigest()
    message_id = f"oversize.{key_hash[:24]}@flagman.invalid"
    if head is not None and not head.message_id.endswith("@flagman.invalid"):
        message_id = head.message_id[:998]
    if session.scalar(select(InboundMessage.id).where(InboundMessage.message_id == message_id)) is not None:
        log.info("mail %s (%s): over the size limit, already handled; skipped", message_id, raw.key)
        return None
    sender = head.sender if head is not None else ""
    status, game, answer = InboundStatus.IGNORED, None, AnswerFate.NONE
    if head is not None and head.ignore is not None:
        policy, ignored = head.ignore.value, ignore_detail(head.ignore_why)
    elif head is not None and sender:
        seat, game = _seat_or_gm(batch, session, head, sender)
        if game is not None and limits.told_today(session, Reason.OVERSIZE, sender=sender):
            answer = AnswerFate.TOLD_TODAY
        elif game is not None:
            limit = settings.limits.max_mail_bytes
            # To the registered address only (never the From, which may be forged).
            holder: Addressee = ToSeat(seat) if seat is not None else ToGm(game)
            letters.notice(
                shell,
                session,
                holder,
                say("intake_oversize_title"),
                say(
                    "intake_oversize",
                    subject=echo(head.subject, 100),
                    size_kb=raw.size // 1024,
                    limit_kb=limit // 1024,
                ),
                error=True,
                kind="oversize",
                in_reply_to=f"<{head.message_id}>",
            )
            status, told, answer = InboundStatus.REFUSED, True, AnswerFate.HOLDER
    detail = say("mail_record", why="oversize", size=raw.size, policy=policy, detail=ignored, told=told)
    session.add(
        InboundMessage(
            message_id=message_id,
            content_hash=dedupe_hash(head) if head else key_hash,
            mailbox_key=raw.key[:200],
            received_at=shell.now(),
            sender=sender[:320],
            subject=echo(head.subject if head else ""),
            status=status,
            reason=Reason.OVERSIZE,
            detail=detail,
            game_id=game.id if game else None,
            text="",
            answer=answer,
        )
    )
    session.flush()
    log.warning("mail %s (%s) from %s not read: %s", message_id, raw.key, sender or "?", detail)
    return MailFate(status, Reason.OVERSIZE)


__all__ = ["oversize"]
