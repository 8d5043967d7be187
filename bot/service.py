"""The use cases: read the inbox, answer every mail, resolve due turns, send the outbox.

Every mail ends in exactly one of: applied (and confirmed), refused (with a clear reply),
ignored (logged, shown in the digest, never answered), or quarantined (processing crashed:
the raw mail is kept, the GM is told). One batch of mails is one transaction with a
savepoint per mail; the mails are moved out of the inbox only after the commit.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot import letters
from bot.clock import as_utc
from bot.commands import (
    GM_COMMANDS,
    Help,
    Join,
    MailCommands,
    Resign,
    ShowOrders,
    Status,
    parse_commands,
)
from bot.echo import echo, quote_lines
from bot.faults import CrashPoint
from bot.games import turns as G
from bot.letters import Addressee, ToAddress, ToGm, ToSeat
from bot.mail_in.auth import (
    GM_SEAT,
    authentication_passes,
    parse_tag,
    password_in_text,
    strip_password_lines,
    tag_in_recipients,
    tag_in_subject,
    verify_tag,
)
from bot.mail_in.inbox import Folder, Inbox, RawMail
from bot.mail_in.parse import Inbound, parse_inbound
from bot.mail_out import outbox as mailout
from bot.mail_out.mailer import Mailer
from bot.models import (
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    OrderSubmission,
    Outbox,
    Player,
    Quarantine,
    Seat,
)

log = logging.getLogger("flagman.inbound")

# Backscatter bounds (issue 6, issue 14; SECURITY.md): answers to mail that proved nobody.
STRANGER_REPLIES_PER_DAY = 3  # per address, JOIN answers included
_STRANGER_TOLD = "unknown sender: one notice sent"
# The details of answered unauthenticated mail that count towards the global hourly cap
# ([limits] answers_to_strangers_per_hour): the stranger notice and every JOIN answer.
_JOIN = "JOIN"


@dataclass(frozen=True, slots=True)
class Outcome:
    status: InboundStatus
    detail: str


@dataclass
class PollReport:
    fetched: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0

    def count(self, status: str) -> None:
        self.outcomes[status] = self.outcomes.get(status, 0) + 1


@dataclass
class Who:
    """Who a mail speaks for, after authentication."""

    games: list[Game] = field(default_factory=list)  # games the sender may act in
    seat: Seat | None = None
    gm_of: list[Game] = field(default_factory=list)
    how: str = "none"
    claimed: list[Seat] = field(default_factory=list)  # seats whose From matched but proof failed
    claimed_gm: list[Game] = field(default_factory=list)  # games whose GM the mail claims to be, unproven

    @property
    def principal(self) -> str:
        """Whom the mail proved itself to be: ``seat:<id>``, ``gm:<address>``, or "" (nobody).

        Rate limits count per principal, so mail that proved nothing (a forged From) never
        spends the allowance of the seat or GM it pretends to be."""
        if self.seat is not None:
            return f"seat:{self.seat.id}"
        if self.gm_of:
            return f"gm:{self.gm_of[0].gm_address}"
        return ""


def _same(given: str, secret: str) -> bool:
    """A password check that takes the same time however much of it is right."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), secret.encode("utf-8", "surrogatepass"))


def dedupe_hash(inbound: Inbound) -> str:
    """Stable across redelivery: a relay adds Received/Delivered-To headers, not this."""
    key = "\x00".join((inbound.message_id, inbound.sender, inbound.subject, inbound.text))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class Service:
    def __init__(self, shell: G.Shell, inbox: Inbox, mailer: Mailer) -> None:
        self.shell = shell
        self.inbox = inbox
        self.mailer = mailer
        # Who the mail being handled proved to be (Who.principal), for `_record`; set per mail.
        self._principal = ""

    @property
    def settings(self) -> Any:
        return self.shell.settings

    # -- the jobs ------------------------------------------------------------------------

    def poll(self, *, max_batches: int | None = None) -> PollReport:
        """Work through the inbox in batches until it is empty."""
        report = PollReport()
        batches = 0
        seen: set[str] = set()
        while max_batches is None or batches < max_batches:
            mails = [m for m in self.inbox.fetch_new(self.settings.inbox.batch_size) if m.key not in seen]
            if not mails:
                break
            batches += 1
            seen.update(m.key for m in mails)
            report.fetched += len(mails)
            self.shell.faults.reached(CrashPoint.AFTER_FETCH)
            self.handle_batch(mails, report)
        return report

    def tick(self, *, read_first: bool = False) -> list[tuple[str, int]]:
        """Resolve the turns that are due. With `read_first` (`flagman tick`; the service's own tick
        job reads the inbox itself, one batch at a time, before it calls this), the inbox is read first: a turn is never
        resolved before the mail that arrived by its deadline is read (mail-interface.md:
        deadlines are judged by arrival, not by when the bot reads)."""
        # resolves (G.tick), then NMR limits, late notices, reminders
        from bot.games import reminders

        if read_first:
            self.poll()
        return reminders.tick(self.shell)

    def send(self) -> mailout.DrainReport:
        return mailout.drain(self.shell.db, self.mailer, self.shell.clock, self.settings, faults=self.shell.faults)

    # -- one batch -------------------------------------------------------------------------

    def handle_batch(self, mails: Sequence[RawMail], report: PollReport | None = None) -> None:
        report = report if report is not None else PollReport()
        own = {self.settings.bot.address.lower()}
        parsed: list[tuple[RawMail, Inbound | None]] = []
        for raw in mails:
            if raw.data is None:
                parsed.append((raw, None))
                continue
            parsed.append((raw, parse_inbound(raw.data, own_addresses=own, loop_header=self.settings.bot.loop_header,
                                              max_lines=self.settings.limits.max_lines, size=raw.size)))
        done: list[str] = []
        failed: list[str] = []
        with self.shell.db.transaction() as session:
            for raw, inbound in parsed:
                savepoint = session.begin_nested()
                try:
                    outcome = self._handle(session, raw, inbound)
                    savepoint.commit()
                except Exception as exc:  # noqa: BLE001 - quarantined and reported, never swallowed
                    savepoint.rollback()
                    self._quarantine(session, raw, inbound, exc)
                    failed.append(raw.key)
                    report.count(InboundStatus.QUARANTINED)
                    continue
                done.append(raw.key)
                if outcome is None:
                    report.duplicates += 1
                else:
                    report.count(outcome.status)
        # Only now, after the commit, are the mails moved out of the inbox.
        self.shell.faults.reached(CrashPoint.AFTER_COMMIT)
        if done:
            self.inbox.mark_done(done, Folder.PROCESSED)
        if failed:
            self.inbox.mark_done(failed, Folder.FAILED)
        self.shell.faults.reached(CrashPoint.AFTER_MOVE)

    def _quarantine(self, session: Session, raw: RawMail, inbound: Inbound | None, exc: BaseException) -> None:
        message_id = inbound.message_id if inbound else raw.key
        log.error("quarantined %s (%s): %s", message_id, raw.key, exc)
        session.add(Quarantine(mailbox_key=raw.key, message_id=message_id, raw=raw.data or b"",
                               error="".join(traceback.format_exception(exc)), created_at=self.shell.now(),
                               reported=False))

    def _record(self, session: Session, raw: RawMail, inbound: Inbound, status: InboundStatus, detail: str,
                game: Game | None = None, seat: Seat | None = None) -> InboundMessage:
        detail = echo(detail, 500)  # it may quote the mail (an order line): one line, capped
        row = InboundMessage(
            message_id=inbound.message_id[:998], content_hash=dedupe_hash(inbound), mailbox_key=raw.key[:200],
            received_at=self.shell.now(), sender=inbound.sender[:320], subject=echo(inbound.subject),
            status=status, detail=detail, game_id=game.id if game else None, seat_id=seat.id if seat else None,
            text=strip_password_lines(inbound.text)[:20000],  # a seat password is never stored
            principal=self._principal,
        )
        session.add(row)
        session.flush()
        log.info("mail %s from %s: %s%s%s (%s)", inbound.message_id, inbound.sender or "?", status,
                 f" game={game.name}" if game else "", f" seat={seat.name}" if seat else "", detail)
        return row

    # -- one mail --------------------------------------------------------------------------

    def _handle(self, session: Session, raw: RawMail, inbound: Inbound | None) -> Outcome | None:
        now = self.shell.now()
        self._principal = ""
        if inbound is None:
            return self._oversize(session, raw)
        existing = session.scalar(select(InboundMessage.id).where(
            InboundMessage.message_id == inbound.message_id[:998], InboundMessage.content_hash == dedupe_hash(inbound)))
        if existing is not None:
            log.info("mail %s: duplicate of a mail already handled; skipped", inbound.message_id)
            return None
        if inbound.ignore is not None:
            detail, game = f"{inbound.ignore.value}: {inbound.ignore_detail}", None
            bounced = self._bounced_mail(session, inbound)
            if bounced is not None:
                # VERP: the bounce came back to the envelope sender of one outbox mail, so it
                # names the recipient (and the game) whose mail did not arrive.
                detail = f"bounce of our {bounced.kind} mail to {bounced.recipient}: {inbound.ignore_detail}"
                game = session.get(Game, bounced.game_id) if bounced.game_id else None
            self._record(session, raw, inbound, InboundStatus.IGNORED, detail, game=game)
            return Outcome(InboundStatus.IGNORED, inbound.ignore.value)
        who = self._identify(session, inbound)
        self._principal = who.principal
        limit = self.settings.limits.mails_per_sender_per_hour
        # Authenticated mail counts against its seat or GM, unauthenticated mail against its
        # From: a forger spends only the forged From's unauthenticated allowance.
        same = (InboundMessage.principal == who.principal if who.principal else
                (InboundMessage.sender == inbound.sender) & (InboundMessage.principal == ""))
        recent = session.scalar(select(func.count()).select_from(InboundMessage).where(
            same, InboundMessage.received_at >= now - timedelta(hours=1))) or 0
        if recent >= limit:
            self._record(session, raw, inbound, InboundStatus.IGNORED, f"rate limit: over {limit} mails in an hour")
            return Outcome(InboundStatus.IGNORED, "rate limit")
        commands = parse_commands(inbound.text, gm_games=[g.name for g in who.gm_of])
        if who.seat is None and not who.gm_of:
            return self._unauthenticated(session, raw, inbound, who, commands)
        return self._dispatch(session, raw, inbound, who, commands)

    def _oversize(self, session: Session, raw: RawMail) -> Outcome | None:
        # Not fetched (the inbox checked the size first): only the size is known, and the
        # header section where the inbox could read it (RawMail.headers). mail-interface.md:
        # never answered, except once, briefly, to a player -- at their registered address,
        # at most once a day, so a forged From cannot make the bot mail anyone repeatedly.
        detail = f"over the size limit ({raw.size} bytes)"
        head = parse_inbound(raw.headers, own_addresses={self.settings.bot.address.lower()},
                             loop_header=self.settings.bot.loop_header, max_lines=1,
                             size=raw.size) if raw.headers else None
        key_hash = hashlib.sha256(raw.key.encode()).hexdigest()
        message_id = f"oversize.{key_hash[:24]}@flagman.invalid"
        if head is not None and not head.message_id.endswith("@flagman.invalid"):
            message_id = head.message_id[:998]
        if session.scalar(select(InboundMessage.id).where(InboundMessage.message_id == message_id)) is not None:
            log.info("mail %s (%s): over the size limit, already handled; skipped", message_id, raw.key)
            return None
        sender = head.sender if head is not None else ""
        status, game = InboundStatus.IGNORED, None
        if head is not None and head.ignore is not None:
            detail += f"; {head.ignore.value}: {head.ignore_detail}"
        elif head is not None and sender:
            # The seat of a signed reply address (whatever the From), else of the From.
            tag = tag_in_recipients(self.settings.bot.address, head.recipients)
            signed = verify_tag(tag, self.shell.secrets_in_force) if tag else None
            tagged = G.find_game_row(session, signed.game) if signed else None
            seat = G.seat_named(tagged, signed.seat) if tagged and signed else None
            seat = seat if seat is not None and seat.active else session.scalars(
                select(Seat).join(Player).join(Game).where(
                    Player.address == sender, Seat.active.is_(True), Game.status != GameStatus.FINISHED)).first()
            gm_game = None if seat else (tagged if signed and signed.seat == GM_SEAT else session.scalars(
                select(Game).where(Game.gm_address == sender, Game.status != GameStatus.FINISHED)).first())
            game = seat.game if seat else gm_game
            if game is not None and self._told_today(session, sender, "over the size limit") == 0:
                limit = self.settings.limits.max_mail_bytes
                # To the registered address only (never the From, which may be forged).
                holder: Addressee = ToSeat(seat) if seat is not None else ToGm(game)
                self._notice(session, head, holder, "Your mail was too big",
                             f'Your mail "{echo(head.subject, 100)}" was {raw.size // 1024} kB, over the limit of '
                             f"{limit // 1024} kB for mail to this address, so it was not read. Send your orders "
                             "as plain text, without attachments. (This note is sent at most once a day.)",
                             error=True, kind="oversize")
                status, detail = InboundStatus.REFUSED, detail + "; the player was told"
        session.add(InboundMessage(message_id=message_id, content_hash=dedupe_hash(head) if head else key_hash,
                                   mailbox_key=raw.key[:200], received_at=self.shell.now(), sender=sender[:320],
                                   subject=echo(head.subject if head else ""), status=status, detail=detail,
                                   game_id=game.id if game else None, text=""))
        session.flush()
        log.warning("mail %s (%s) from %s not read: %s", message_id, raw.key, sender or "?", detail)
        return Outcome(status, detail)

    def _told_today(self, session: Session, sender: str, detail_prefix: str) -> int:
        """How many mails from `sender` of this kind were answered in the last day."""
        return session.scalar(select(func.count()).select_from(InboundMessage).where(
            InboundMessage.sender == sender, InboundMessage.status == InboundStatus.REFUSED,
            InboundMessage.detail.startswith(detail_prefix, autoescape=True),
            InboundMessage.received_at >= self.shell.now() - timedelta(days=1))) or 0

    def _bounced_mail(self, session: Session, inbound: Inbound) -> Outbox | None:
        """The outbox mail a bounce answers, from the VERP address it was sent back to."""
        local, _, domain = self.settings.bot.address.lower().rpartition("@")
        prefix = f"{local}+bounce-"
        for address in inbound.recipients:
            a_local, _, a_domain = address.lower().rpartition("@")
            if a_domain == domain and a_local.startswith(prefix):
                token = a_local.removeprefix(prefix)
                return session.scalar(select(Outbox).where(Outbox.message_id == f"<{token}@{domain}>"))
        return None

    def _verified_tag(self, session: Session, tag: str | None) -> tuple[Game, Seat | None] | None:
        """The game and seat (None: the GM) a signed tag stands for, if its MAC verifies.

        A seat's MAC covers its reply salt, renewed when the seat changes hands, so the old
        holder's reply address no longer verifies.
        """
        claimed = parse_tag(tag) if tag else None
        if claimed is None or tag is None:
            return None
        game = G.find_game_row(session, claimed.game)
        if game is None:
            return None
        if claimed.seat == GM_SEAT:
            return (game, None) if verify_tag(tag, self.shell.secrets_in_force) else None
        seat = G.seat_named(game, claimed.seat)
        if seat is None or verify_tag(tag, self.shell.secrets_in_force, seat.reply_salt) is None:
            return None
        return game, seat

    def _identify(self, session: Session, inbound: Inbound) -> Who:
        who = Who()
        tag = tag_in_recipients(self.settings.bot.address, inbound.recipients)
        signed = self._verified_tag(session, tag)
        if signed is not None:
            game, seat = signed
            if seat is None:
                # The GM's powers need two proofs (defence in depth): the GM's signed reply
                # address *and* the GM's registered From, or the GM password in the mail.
                # A GM reply address that leaked to someone else gives them nothing.
                password = password_in_text(inbound.reply_text or inbound.text)
                if (inbound.sender and inbound.sender == game.gm_address.lower()) or (
                        password is not None and _same(password, game.gm_secret)):
                    who.gm_of, who.games, who.how = [game], [game], "signed"
                else:
                    who.claimed_gm = [game]
                return who
            if seat.active:
                who.seat, who.games, who.how = seat, [game], "signed"
                return who
        sender = inbound.sender
        if not sender:
            return who
        seats = list(session.scalars(
            select(Seat).join(Player).join(Game)
            .where(Player.address == sender, Seat.active.is_(True), Game.status != GameStatus.FINISHED)))
        gm_games = list(session.scalars(select(Game).where(Game.gm_address == sender, Game.status != GameStatus.FINISHED)))
        if not seats and not gm_games:
            return who
        accept = self.settings.auth.accept
        # The password may sit outside an ORDERS ... END block, so look in all the sender wrote.
        password = password_in_text(inbound.reply_text or inbound.text) if "password" in accept else None
        subject_tag = tag_in_subject(inbound.subject) if "password" in accept else None
        subject_proof = self._verified_tag(session, subject_tag)
        subject_signed = (parse_tag(subject_tag) if subject_tag and subject_proof else None)
        dmarc = "dmarc" in accept and authentication_passes(inbound.auth_results, self.settings.auth.authserv_id, sender)
        proven_seats = [s for s in seats if dmarc or (password is not None and _same(password, s.secret))
                        or (subject_signed is not None and subject_signed.game == s.game.name and subject_signed.seat == s.name)]
        proven_gm = [g for g in gm_games if dmarc or (password is not None and _same(password, g.gm_secret))
                     or (subject_signed is not None and subject_signed.game == g.name and subject_signed.seat == GM_SEAT)]
        how = "dmarc" if dmarc else "password"
        who.claimed = [s for s in seats if s not in proven_seats]
        who.claimed_gm = [g for g in gm_games if g not in proven_gm]
        if proven_gm:
            who.gm_of, who.how = proven_gm, how
        if proven_seats:
            chosen = self._choose_seat(proven_seats, inbound.subject)
            who.games = [s.game for s in proven_seats]
            who.seat, who.how = chosen, how
        return who

    @staticmethod
    def _choose_seat(seats: list[Seat], subject: str) -> Seat | None:
        """The seat meant: the only one, or the one whose game is tagged in the subject."""
        if len(seats) == 1:
            return seats[0]
        lowered = subject.lower()
        tagged = [s for s in seats if f"[{s.game.name}]" in lowered or f"[{s.game.name}." in lowered]
        return tagged[0] if len(tagged) == 1 else None

    # -- replies ---------------------------------------------------------------------------

    def _notice(self, session: Session, inbound: Inbound, to: Addressee, title: str, text: str, *,
                error: bool, game: Game | None = None, kind: str = "notice") -> None:
        """A short answer to `inbound`; who gets it (and which reply address) is `bot.letters`' call."""
        letters.notice(self.shell, session, to, title, text, kind=kind, error=error, game=game,
                       in_reply_to=f"<{inbound.message_id}>")

    @staticmethod
    def _holder(who: Who, inbound: Inbound) -> Addressee:
        """Where an answer to an authenticated mail goes: the seat's or the GM's registered
        address (never merely the From: a mail through a signed address may come from anywhere)."""
        if who.seat is not None:
            return ToSeat(who.seat)
        if who.gm_of:
            return ToGm(who.gm_of[0])
        return ToAddress(inbound.sender, inbound.sender_name)

    def _unauthenticated(self, session: Session, raw: RawMail, inbound: Inbound, who: Who, commands: MailCommands) -> Outcome:
        """Mail that proved nobody. Answers go to the sender only when the sender is a
        stranger (a JOIN, or one notice), within per-address and global caps, and never repeat
        the sender's words; a mail claiming a registered address is answered at that address."""
        joins = [c for c in commands.player if isinstance(c, Join)]
        if joins and not who.claimed and not who.claimed_gm:
            # A JOIN is answered even when refused; a forged From must not turn that into a
            # stream of mail to a third party: a few replies a day per address, and a global
            # cap an hour for all of them together.
            if self._told_today(session, inbound.sender, "") >= STRANGER_REPLIES_PER_DAY:
                self._record(session, raw, inbound, InboundStatus.IGNORED,
                             f"unknown sender: JOIN not answered, {STRANGER_REPLIES_PER_DAY} replies today already")
                return Outcome(InboundStatus.IGNORED, "unknown sender")
            if self._answers_to_strangers_this_hour(session) >= self.settings.limits.answers_to_strangers_per_hour:
                self._record(session, raw, inbound, InboundStatus.IGNORED,
                             "unknown sender: JOIN not answered, over "
                             f"{self.settings.limits.answers_to_strangers_per_hour} answers to unknown senders this hour")
                return Outcome(InboundStatus.IGNORED, "unknown sender")
            return self._join(session, raw, inbound, joins[0])
        if who.claimed or who.claimed_gm:
            # The From is a player's (or the GM's), or the GM's reply address was used without
            # the GM's From or password: tell the registered address, never the sender
            # (mail-interface.md, identity) -- once a day, so that forged mail cannot flood the
            # player; every one is in the GM's digest.
            game = who.claimed[0].game if who.claimed else who.claimed_gm[0]
            holder: Addressee = ToSeat(who.claimed[0]) if who.claimed else ToGm(who.claimed_gm[0])
            # Once a day per registered address: a seat's is the From itself; the GM's role is
            # claimed from any address (its reply address), so it is counted per game.
            detail = ("authentication failed for a registered address" if who.claimed else
                      f"authentication failed for the GM's role of {game.name}")
            told = (self._told_today(session, inbound.sender, "authentication failed") if who.claimed else
                    session.scalar(select(func.count()).select_from(InboundMessage).where(
                        InboundMessage.detail == detail, InboundMessage.status == InboundStatus.REFUSED,
                        InboundMessage.received_at >= self.shell.now() - timedelta(days=1))) or 0)
            if told > 0:
                self._record(session, raw, inbound, InboundStatus.IGNORED,
                             "authentication failed for a registered address; already told today", game=game)
                return Outcome(InboundStatus.IGNORED, "authentication failed")
            if isinstance(holder, ToSeat):
                text = ("A mail claiming to come from you arrived without proof that it is yours, so it was not "
                        "used. To act for your seat, reply to this mail or any other mail of the bot for this "
                        "game (its reply address signs you in), or put the line PASSWORD <your seat password> in "
                        "the mail. If you did not send it, you need do nothing: the GM sees it in the daily digest.")
            else:
                text = ("A mail to the GM's reply address, or claiming to come from you, arrived without the proof "
                        "GM commands need, so nothing in it was done. GM commands need your GM reply address "
                        "and your registered address as the sender, or the line PASSWORD <your GM password> in "
                        "the mail. If you did not send it, you need do nothing; it is listed in your daily digest.")
            self._notice(session, inbound, holder, "A mail from your address was not accepted", text,
                         error=True, kind="auth_refused")
            self._record(session, raw, inbound, InboundStatus.REFUSED, detail, game=game)
            return Outcome(InboundStatus.REFUSED, "authentication failed")
        # A stranger: at most one short notice per address a day, and a global cap an hour
        # (no backscatter storms from many forged Froms).
        answered = self._told_today(session, inbound.sender, "")
        busy = answered == 0 and self._answers_to_strangers_this_hour(
            session) >= self.settings.limits.answers_to_strangers_per_hour
        if answered == 0 and inbound.sender and not busy:
            text = ("This address runs play-by-email games, and your address is not in any game running here. "
                    "To join a game open for sign-ups, send JOIN <game> [your name]. Send HELP for the commands.")
            self._notice(session, inbound, ToAddress(inbound.sender), "You are not in a game here", text,
                         error=True, kind="stranger")
            self._record(session, raw, inbound, InboundStatus.REFUSED, _STRANGER_TOLD)
            return Outcome(InboundStatus.REFUSED, "unknown sender")
        self._record(session, raw, inbound, InboundStatus.IGNORED,
                     f"unknown sender: over {self.settings.limits.answers_to_strangers_per_hour} answers to unknown "
                     "senders this hour" if busy else "unknown sender: already told today")
        return Outcome(InboundStatus.IGNORED, "unknown sender")

    def _answers_to_strangers_this_hour(self, session: Session) -> int:
        """Answers sent to mail that proved nobody (stranger notices, JOIN answers) in the last
        hour, all senders together: many forged Froms must not make the bot a source of
        backscatter."""
        return session.scalar(select(func.count()).select_from(InboundMessage).where(
            InboundMessage.received_at >= self.shell.now() - timedelta(hours=1),
            InboundMessage.principal == "", InboundMessage.status != InboundStatus.IGNORED,
            (InboundMessage.detail == _STRANGER_TOLD) | InboundMessage.detail.startswith(_JOIN))) or 0

    def _join(self, session: Session, raw: RawMail, inbound: Inbound, join: Join) -> Outcome:
        from bot.games import signups

        outcome: Outcome = signups.join(self, session, raw, inbound, join)
        return outcome

    def _dispatch(self, session: Session, raw: RawMail, inbound: Inbound, who: Who, commands: MailCommands) -> Outcome:
        seat = who.seat
        game = seat.game if seat else (who.gm_of[0] if len(who.gm_of) == 1 else None)
        handled: list[str] = []
        if commands.gm:
            from bot.gm import powers as gm

            for gm_command in commands.gm:
                handled.append(gm.run(self, session, inbound, gm_command))
            if seat is None and commands.orders_text.strip():  # e.g. a command naming another GM's game
                gm.leftover(self, session, inbound, who, commands.orders_text)
        for command in commands.player:
            if isinstance(command, Help):
                self._help(session, inbound, who)
            elif isinstance(command, Status) and game is not None:
                self._status(session, inbound, game, seat)
            elif isinstance(command, ShowOrders) and seat is not None:
                self._show_orders(session, inbound, seat)
            elif isinstance(command, Join):
                return self._join(session, raw, inbound, command)
            elif isinstance(command, Resign):
                from bot.games import signups

                handled.append(signups.resign(self, session, inbound, who, command))
            else:
                self._ambiguous(session, inbound, who)
            handled.append(type(command).__name__.upper())
        problems = list(commands.problems)
        if problems:
            text = "\n".join(f'"{echo(p.line)}": {p.reason}' for p in problems)
            self._notice(session, inbound, self._holder(who, inbound), "Command not understood", text, error=True,
                         game=game)
        if commands.orders_text.strip() and not (commands.gm and not seat):
            if seat is None:
                if who.gm_of and not who.seat:
                    self._notice(session, inbound, self._holder(who, inbound),
                                 "Lines not understood", "These lines are neither GM commands nor orders:\n\n"
                                 + quote_lines(commands.orders_text) + "\n\nSend HELP for the GM commands.",
                                 error=True, game=game)
                    self._record(session, raw, inbound, InboundStatus.REFUSED, "GM mail with lines not understood", game=game)
                    return Outcome(InboundStatus.REFUSED, "not understood")
                self._ambiguous(session, inbound, who)
                self._record(session, raw, inbound, InboundStatus.REFUSED, "which game? ambiguous")
                return Outcome(InboundStatus.REFUSED, "ambiguous game")
            return self._orders(session, raw, inbound, seat, commands.orders_text)
        if not handled and not problems:
            self._notice(session, inbound, self._holder(who, inbound), "Nothing to do",
                         "Your mail held no orders and no commands. Send HELP for what you can write.",
                         error=True, game=game)
            self._record(session, raw, inbound, InboundStatus.REFUSED, "empty mail", game=game, seat=seat)
            return Outcome(InboundStatus.REFUSED, "empty")
        status = InboundStatus.REFUSED if problems else InboundStatus.APPLIED
        self._record(session, raw, inbound, status, "commands: " + ", ".join(handled), game=game, seat=seat)
        return Outcome(status, "commands")

    def _ambiguous(self, session: Session, inbound: Inbound, who: Who) -> None:
        names = sorted({g.name for g in who.games} | {g.name for g in who.gm_of})
        text = ("You play in more than one game, so the bot cannot tell which one this mail is for: "
                + ", ".join(names) + ". Reply to a mail of that game (its reply address names the game), or put "
                "the game in brackets in the subject, e.g. [" + (names[0] if names else "rc1") + "].")
        # Only a sender whose From proved several seats (or GM roles) gets here: that From is
        # their registered address, and the answer carries no signed address.
        self._notice(session, inbound, ToAddress(inbound.sender, inbound.sender_name), "Which game?", text, error=True)

    def _help(self, session: Session, inbound: Inbound, who: Who) -> None:
        seat = who.seat
        to = self._holder(who, inbound)
        ctx: dict[str, Any] = {
            "bot": {"name": self.settings.bot.name, "address": self.settings.bot.address},
            "greeting": letters.greeting(to),
            "game_name": "", "game_title": "", "game_help": "", "turn_label": "",
            "games": sorted({g.name for g in who.games}),
            "gm_help": list(GM_COMMANDS) if who.gm_of else [],
            "gm_games": [g.name for g in who.gm_of],
        }
        game = seat.game if seat else None
        if seat is not None:
            rules, state, turn = G.current_state(session, seat.game)
            ctx.update(game_name=seat.game.name, game_title=rules.title, turn_label=rules.turn_label(state),
                       game_help=rules.order_help(state, seat.name) if seat.name in rules.expected_players(state) else
                       "You have no orders to send now.")
        rendered = self.shell.renderer.render("help", ctx)
        letters.post(self.shell, session, to, rendered, kind="help", game=game, in_reply_to=f"<{inbound.message_id}>")

    def _status(self, session: Session, inbound: Inbound, game: Game, seat: Seat | None) -> None:
        if game.status == GameStatus.SIGNUP:  # no state yet: who has joined, and what it takes
            rules_of = G.rules_of(game)
            joined = [s.name for s in G.active_seats(game)]
            self._notice(session, inbound, ToSeat(seat) if seat else ToGm(game), f"Status of {game.name}",
                         f"{game.name} ({rules_of.title}) is open for sign-ups: {len(joined)} joined "
                         f"({', '.join(joined) or 'nobody yet'}); it takes {rules_of.min_players} to "
                         f"{rules_of.max_players} players and starts at {rules_of.max_players}, or when the GM "
                         "starts it.", error=False, kind="status")
            return
        rules, state, turn = G.current_state(session, game)
        from rules.api import Viewer

        ordered: list[str] | None = None
        missing: list[str] = []
        if turn is not None:
            ordered = []
            for name in sorted(rules.expected_players(state)):
                s = G.seat_named(game, name)
                has = s is not None and any(x.source in ("mail", "gm") for x in G.submissions(session, turn, s))
                (ordered if has else missing).append(name)
        zone = seat.player.timezone if seat else game.timezone
        ctx = G.base_context(self.shell, game, rules)
        ctx.update({"view": rules.view(state, None, seat.name if seat else Viewer.GM),
                    "deadline": G.deadline_text(turn, zone), "ordered": ordered, "missing": missing, "timezone": zone})
        rendered = self.shell.renderer.render("status", ctx, game=game.kind)
        letters.post(self.shell, session, ToSeat(seat) if seat else ToGm(game), rendered, kind="status",
                     in_reply_to=f"<{inbound.message_id}>")

    def _show_orders(self, session: Session, inbound: Inbound, seat: Seat) -> None:
        game = seat.game
        rules, state, turn = G.current_state(session, game)
        if turn is None or seat.name not in rules.expected_players(state):
            text = "You have no orders to send now" + (": the game is over." if turn is None else ".")
        else:
            on_file = G.orders_on_file(rules, state, seat, G.submissions(session, turn, seat))
            deadline = G.deadline_text(turn, seat.player.timezone) or "the GM's call"
            if on_file is None:
                default = rules.format_orders(G.nmr_default(rules, state, seat)[0])
                text = (f"Nothing is on file for you for {turn.label}. If nothing arrives by {deadline}, "
                        f"you get the default:\n\n" + "\n".join("    > " + line for line in default.splitlines()))
            else:
                text = (f"On file for you for {turn.label} (due {deadline}):\n\n"
                        + "\n".join("    > " + line for line in rules.format_orders(on_file).splitlines()))
        self._notice(session, inbound, ToSeat(seat), "Your orders on file", text, error=False, kind="orders")

    def _arrival(self, raw: RawMail) -> datetime:
        """When the mail arrived, for its deadline (mail-interface.md: judged by when the mail
        server received it, not by when the bot reads it): the server's receipt time (IMAP
        INTERNALDATE, the Maildir delivery time), never later than now. The server's clock is
        trusted; one more than `[inbox] clock_skew` seconds ahead of ours is logged, since the
        two clocks should agree (a server clock behind ours by d would let mail up to d late
        count as on time; one ahead does no harm)."""
        now = self.shell.now()
        received = raw.received_at
        if received is None:
            return now
        if received - now > timedelta(seconds=self.settings.inbox.clock_skew):
            log.warning("mail %s: received at %s by the mail server's clock, %s by ours: the clocks disagree",
                        raw.key, received.isoformat(), now.isoformat())
        return min(as_utc(received), now)

    def _orders(self, session: Session, raw: RawMail, inbound: Inbound, seat: Seat, text: str) -> Outcome:
        game = seat.game
        now = self.shell.now()
        if game.status == GameStatus.SIGNUP:
            self._notice(session, inbound, ToSeat(seat), "The game has not started",
                         f"{game.name} is still open for sign-ups; orders are taken once the GM starts it.",
                         error=True)
            self._record(session, raw, inbound, InboundStatus.REFUSED, "orders before the start", game, seat)
            return Outcome(InboundStatus.REFUSED, "not started")
        if game.status == GameStatus.FINISHED:
            self._notice(session, inbound, ToSeat(seat), "The game is over",
                         f"{game.name} has finished; no more orders are taken.", error=True)
            self._record(session, raw, inbound, InboundStatus.REFUSED, "orders after the end", game, seat)
            return Outcome(InboundStatus.REFUSED, "finished")
        rules, state, turn = G.current_state(session, game)
        assert turn is not None
        zone = seat.player.timezone
        closing = G.closing_time(game, turn)
        arrived = self._arrival(raw)
        if closing is not None and arrived >= closing and rules.expected_players(state) and game.status == GameStatus.ACTIVE:
            self._notice(session, inbound, ToSeat(seat), f"Too late for {turn.label}",
                         f"The deadline for {turn.label} passed at {G.deadline_text(turn, zone)}, so these orders "
                         "were not used. The results follow shortly, with the next turn sheet; send your orders "
                         "for the next turn in reply to that.", error=True, kind="late")
            self._record(session, raw, inbound, InboundStatus.REFUSED, "after the deadline", game, seat)
            return Outcome(InboundStatus.REFUSED, "late")
        if seat.name not in rules.expected_players(state):
            self._notice(session, inbound, ToSeat(seat), "No orders needed",
                         f"You have no orders to send for {turn.label}.", error=True)
            self._record(session, raw, inbound, InboundStatus.REFUSED, "not expected this turn", game, seat)
            return Outcome(InboundStatus.REFUSED, "not expected")
        parsed = rules.parse_orders(state, seat.name, text)
        subs = G.submissions(session, turn, seat)
        earlier = G.orders_on_file(rules, state, seat, subs)
        ctx = G.base_context(self.shell, game, rules)
        problems = [{"line_no": p.line_no, "line": echo(p.line), "reason": p.reason} for p in parsed.problems]
        ctx.update({
            "seat": {"name": seat.name, "display": seat.player.name},
            "turn": {"label": turn.label, "deadline": G.deadline_text(turn, zone)},
            "problems": problems, "timezone": zone,
            "help": rules.order_help(state, seat.name),
        })
        if not parsed.orders:
            default = rules.format_orders(G.nmr_default(rules, state, seat)[0])
            ctx.update({"on_file": rules.format_orders(earlier) if earlier is not None else None, "default": default})
            rendered = self.shell.renderer.render("refused", ctx, game=game.kind)
            letters.post(self.shell, session, ToSeat(seat), rendered, kind="refused",
                         in_reply_to=f"<{inbound.message_id}>")
            self._record(session, raw, inbound, InboundStatus.REFUSED,
                         "; ".join(f"line {p.line_no}: {p.reason}" for p in parsed.problems) or "no orders", game, seat)
            return Outcome(InboundStatus.REFUSED, "orders refused")
        record = self._record(session, raw, inbound, InboundStatus.APPLIED,
                              "orders" + (f" ({len(problems)} line(s) ignored)" if problems else ""), game, seat)
        canonical = rules.format_orders(parsed.orders)
        session.add(OrderSubmission(turn_id=turn.id, seat_id=seat.id, inbound_id=record.id, source="mail",
                                    text=canonical, received_at=now))
        merged = parsed.orders if earlier is None else rules.merge_orders(earlier, parsed.orders)
        merged_text = rules.format_orders(merged)
        complete = rules.parse_orders(state, seat.name, merged_text).complete
        ctx.update({"understood": canonical, "on_file": merged_text, "complete": complete})
        rendered = self.shell.renderer.render("confirmation", ctx, game=game.kind)
        letters.post(self.shell, session, ToSeat(seat), rendered, kind="confirmation",
                     in_reply_to=f"<{inbound.message_id}>")
        return Outcome(InboundStatus.APPLIED, "orders")
