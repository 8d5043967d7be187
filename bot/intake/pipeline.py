"""The intake's pipeline: one mail, top to bottom (`Intake.handle`).

Each step is a unit of its own, in this package; this module only puts them in order.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.commands import (
    Address,
    Clear,
    Confirm,
    Join,
    MailCommands,
    NoWait,
    Resign,
    Stop,
    Unsubscribe,
    Wait,
    parse_commands,
)
from bot.db import autoflushing
from bot.fate import Done, Ignored, MailFate, Refused
from bot.games import deadline, turns
from bot.games.archive import NewTurn
from bot.games.identity import Who, identify
from bot.intake import answering, oversize, proven, strangers
from bot.intake.batch import Batch, Mail
from bot.intake.limits import Limiter
from bot.letters.records import ignore_detail
from bot.letters.words import say
from bot.mail_in import tokens
from bot.mail_in.inbox import RawMail
from bot.mail_in.parse import Inbound
from bot.mail_out import lists
from bot.models import Game, InboundStatus, Outbox, Reason, Turn
from bot.shell import Shell

log = logging.getLogger("flagman.inbound")


def _with_subject_code(commands: MailCommands, subject: str) -> MailCommands:
    """A reply to a confirmation mail (OBSERVE, JOIN, ADDRESS) brings its code back in the
    subject, ``[confirm <code>]``: that is a CONFIRM, unless the body says the same CONFIRM
    already. A List-Unsubscribe mail (bot.mail_out.lists) brings ``unsubscribe <code>``: an
    UNSUBSCRIBE."""
    code = tokens.in_subject(subject)
    if code is not None and Confirm(code) not in commands.player:
        commands = dataclasses.replace(commands, player=(*commands.player, Confirm(code)))
    stop = lists.code_in_subject(subject)
    if stop is not None and Unsubscribe(stop) not in commands.player:
        commands = dataclasses.replace(commands, player=(*commands.player, Unsubscribe(stop)))
    return commands


def _changes_games(commands: MailCommands) -> bool:
    """Whether acting on the mail may change games, seats or turns (the batch's memo is forgotten)."""
    return bool(commands.gm) or any(
        isinstance(c, Join | Resign | Confirm | Address | Stop | Clear | Wait | NoWait) for c in commands.player
    )


class Intake:
    """The intake of the service's mail, a batch at a time (bot.service)."""

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.batch = Batch(shell)
        self.limits = Limiter(self.batch)

    def begin_batch(self, session: Session, inbounds: Sequence[Inbound], *, again: bool = False) -> None:
        """A new batch (`again`: the same one again, mail by mail, after a failure)."""
        self.batch.begin(session, inbounds, again=again)

    def write_rows(self, session: Session) -> None:
        self.batch.write_rows(session)

    def drop_rows(self) -> None:
        self.batch.drop_rows()

    def keep_said(self) -> None:
        self.batch.keep_said()

    def tell_committed(self) -> None:
        """The batch is committed: what the log says of each of its mails."""
        self.batch.tell(log)

    def forget_said(self) -> None:
        self.batch.forget_said()

    def take_resolved(self) -> list[NewTurn]:
        """The turns the batch's mails resolved (a GM's PROCESS), once the batch is committed:
        the service publishes them (`bot.games.archive.publish`)."""
        resolved, self.batch.resolved = self.batch.resolved, []
        return resolved

    def handle(self, session: Session, raw: RawMail, inbound: Inbound | None) -> MailFate | None:
        """One mail, in the batch's transaction. None: a duplicate."""
        if inbound is None:  # over the size limit: never fetched
            return oversize.oversize(self.batch, self.limits, session, raw)
        mail = Mail(raw, inbound)
        try:
            # The rows the batch adds are written together at its end (performance.md: work per
            # batch), not a few at a time before every query: what this mail reads does not
            # depend on them, except where `write_rows` runs first.
            with session.no_autoflush:
                return self._handle(session, mail)
        finally:
            if mail.changes_games:  # what the memo holds may have changed under it
                self.batch.memo.forget()

    def _handle(self, session: Session, mail: Mail) -> MailFate | None:
        """The pipeline:

        duplicate?    the same Message-ID and content handled before: nothing to do
        ignore        the ignore policy's verdict (bounces, auto-replies, loops ...): Ignored
        authenticate  bot.games.identity: which seat or GM role the mail proved itself to be
        limit         the loop limit of that principal: past it, answers are withheld
        read          its commands (bot.commands.grammar), and a code the subject brings back
        act           proved nobody: `strangers`; proved someone: `proven` (GM commands, player
                      commands, orders); each returns what it did or raises Refused / Ignored
        answer        one answer per mail (`answering.send`), then its record (`answering.record`)
        """
        batch, inbound = self.batch, mail.inbound
        if batch.seen(mail):
            log.info("mail %s: duplicate of a mail already handled; skipped", inbound.message_id)
            return None
        try:
            self._not_ignored(session, mail)
            who = identify(self.shell, session, inbound, lambda name: batch.find_game(session, name), batch.find_seat)
            mail.principal = who.principal
            mail.over_limit = self.limits.over_loop_limit(session, mail, who)
            commands = _with_subject_code(
                parse_commands(inbound.text, gm_games=[g.name for g in who.gm_of]), inbound.subject
            )
            if _changes_games(commands):
                mail.changes_games = True
                batch.memo.forget()
            done = self._act(session, mail, who, commands)
        except Refused as refused:
            if refused.answer is not None:
                mail.answers.append(refused.answer)
            answering.send(batch, session, mail)
            answering.record(
                batch,
                self.limits,
                mail,
                InboundStatus.REFUSED,
                refused.reason or Reason.COMMANDS,
                refused.detail,
                refused.game,
                refused.seat,
            )
            return MailFate(InboundStatus.REFUSED, refused.reason or Reason.COMMANDS)
        except Ignored as ignored:
            mail.answer = ignored.answer
            answering.record(
                batch, self.limits, mail, InboundStatus.IGNORED, ignored.reason, ignored.detail, ignored.game
            )
            return MailFate(InboundStatus.IGNORED, ignored.reason)
        mail.answers.extend(done.answers)
        answering.send(batch, session, mail)
        key = answering.record(batch, self.limits, mail, done.status, done.reason, done.detail, done.game, done.seat)
        if done.submission is not None:
            s = done.submission
            values: dict[str, object] = {
                "turn_id": s.turn_id,
                "seat_id": s.seat_id,
                "source": "mail",
                "text": s.text,
                "received_at": self.shell.now(),
            }
            batch.rows.submissions.append((key, values))
        if mail.resolves:
            self._resolve(session, mail)
        return MailFate(done.status, done.reason)

    def _resolve(self, session: Session, mail: Mail) -> None:
        """The turns the mail's orders completed (or its NOWAIT released), resolved now, in its
        transaction, through the deadline's own steps (`deadline.resolve_writes`, as PROCESS):
        its answer said "the turn is resolved", and is queued before the results."""
        batch = self.batch
        batch.write_rows(session)  # the mail's orders and answers first (outbox order)
        with autoflushing(session):
            for game_id, turn_id in mail.resolves:
                game, turn = session.get(Game, game_id), session.get(Turn, turn_id)
                if game is None or turn is None or turn.resolved_at is not None:
                    continue
                if not turns.is_due(
                    session, game, turn, self.shell.now(), pace=turns.practice_pace(self.shell.settings.practice)
                ):
                    log.error("game %s: %s was said to be resolved and is not due", game.name, turn.label)
                    continue
                _writes, resolved = deadline.resolve_writes(self.shell, session, game, turn)
                batch.rows.resolved.append(resolved)
            session.flush()
        batch.memo.forget()

    def _act(self, session: Session, mail: Mail, who: Who, commands: MailCommands) -> Done:
        """Mail that proved nobody, or someone; only orders alone take the hot path, which reads
        nothing an earlier mail of the batch wrote (the rest writes the batch's rows first)."""
        if who.seat is None and not who.gm_of and not who.games:  # proved nobody
            self.batch.write_rows(session)
            with autoflushing(session):
                return strangers.unauthenticated(self.batch, self.limits, session, mail, who, commands)
        if commands.gm or commands.player:
            self.batch.write_rows(session)
            with autoflushing(session):
                done = proven.act(self.batch, session, mail, who, commands)
                session.flush()  # what the commands did comes before the answers (outbox order)
                return done
        return proven.act(self.batch, session, mail, who, commands)  # orders only: the hot path

    def _not_ignored(self, session: Session, mail: Mail) -> None:
        """The ignore policy's verdict (bot.mail_in.parse), and which of our mails a bounce answers."""
        inbound = mail.inbound
        if inbound.ignore is None:
            return
        detail, game = (
            say("mail_record", why="ignored", policy=inbound.ignore.value, detail=ignore_detail(inbound.ignore_why)),
            None,
        )
        bounced = self._bounced_mail(session, inbound)
        if bounced is not None:
            # VERP: the bounce came back to the envelope sender of one outbox mail, so it
            # names the recipient (and the game) whose mail did not arrive.
            detail = say(
                "mail_record",
                why="bounce",
                kind=bounced.kind,
                recipient=bounced.recipient,
                detail=ignore_detail(inbound.ignore_why),
            )
            game = session.get(Game, bounced.game_id) if bounced.game_id else None
        raise Ignored(detail, reason=Reason(inbound.ignore.value), game=game)

    def _bounced_mail(self, session: Session, inbound: Inbound) -> Outbox | None:
        """The outbox mail a bounce answers, from the VERP address it was sent back to."""
        local, _, domain = self.shell.settings.bot.address.lower().rpartition("@")
        prefix = f"{local}+bounce-"
        for address in inbound.recipients:
            a_local, _, a_domain = address.lower().rpartition("@")
            if a_domain == domain and a_local.startswith(prefix):
                token = a_local.removeprefix(prefix)
                return session.scalar(select(Outbox).where(Outbox.message_id == f"<{token}@{domain}>"))
        return None


__all__ = ["Intake"]
