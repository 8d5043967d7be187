"""Every limit the intake keeps, counted one way (one limiter, not a count query for each).

Each limit is a count of recorded mails in a window, selected on the record's columns -- whom
the mail proved (`principal`), its From, why it ended (`reason`), what became of its answer
(`answer`) -- never on the words of its `detail`:

* the **loop limit**, `[limits] mails_per_sender_per_hour`: mails of one principal (a seat, the
  GM), or of one From for mail that proved nobody, in the last hour; counted once a batch and
  carried along as its mails are recorded (`Batch.memo`). Past it a mail is still acted on,
  its answers withheld;
* **answers to unproven senders**: `STRANGER_REPLIES_PER_DAY` a day at one mailbox (an address
  without its +tag, in any case: `bot.mailboxes`), `[limits]
  answers_to_strangers_per_domain_per_day` a day at one domain, and `[limits]
  answers_to_strangers_per_hour` an hour for all of them together;
* **notices told today**: the failed-authentication and over-size notices go to a registered
  address at most once a day.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from bot.games.identity import Who
from bot.intake.batch import LOOP_WINDOW, Batch, Mail
from bot.mailboxes import domain, mailbox, may_reach, of_mailbox
from bot.models import AnswerFate, Game, InboundMessage, Reason

STRANGER_REPLIES_PER_DAY = 3  # per address: JOIN codes and the answers to commands for anyone included
_TOLD = (AnswerFate.SENT, AnswerFate.HOLDER)  # an answer went (to the sender, or to whom it claimed to be)


def loop_key(principal: str, sender: str) -> tuple[str, str]:
    """What a mail counts against (bot.games.identity.Who.principal, else its From)."""
    return (principal, "") if principal else ("", sender)


class Limiter:
    """The limits of one intake, over the batch in hand (`Batch`)."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch

    def count(
        self,
        session: Session,
        within: timedelta,
        *,
        principal: str | None = None,
        sender: str | None = None,
        reason: Reason | None = None,
        game: Game | None = None,
        answers: tuple[AnswerFate, ...] | None = None,
    ) -> int:
        """Mails recorded in the last `within` that match every condition given."""
        where: list[ColumnElement[bool]] = [InboundMessage.received_at >= self.batch.shell.now() - within]
        if principal is not None:
            where.append(InboundMessage.principal == principal)
        if sender is not None:
            where.append(InboundMessage.sender == sender)
        if reason is not None:
            where.append(InboundMessage.reason == reason)
        if game is not None:
            where.append(InboundMessage.game_id == game.id)
        if answers is not None:
            where.append(InboundMessage.answer.in_([a.value for a in answers]))
        return session.scalar(select(func.count()).select_from(InboundMessage).where(*where)) or 0

    # -- the loop limit ---------------------------------------------------------------------------

    def over_loop_limit(self, session: Session, mail: Mail, who: Who) -> bool:
        """Whether the mail's sender passed `[limits] mails_per_sender_per_hour`: per principal for
        mail that proved a seat or the GM (a forger spends only the forged From's unauthenticated
        allowance), per From for the rest. Read once a batch a key, then counted along."""
        memo = self.batch.memo
        key = loop_key(who.principal, mail.inbound.sender)
        if key not in memo.recent:
            if key in memo.pending:  # an earlier mail of the batch counts, not yet written
                self.batch.write_rows(session)
            memo.recent[key] = (
                self.count(session, LOOP_WINDOW, principal=who.principal)
                if who.principal
                else self.count(session, LOOP_WINDOW, principal="", sender=mail.inbound.sender)
            )
            memo.recent_read_at[key] = self.batch.shell.now()
        return memo.recent[key] >= self.batch.settings.limits.mails_per_sender_per_hour

    def recorded(self, principal: str, sender: str) -> None:
        """A mail was recorded: it counts for its key from now on (`over_loop_limit`)."""
        memo = self.batch.memo
        key = loop_key(principal, sender)
        memo.pending.add(key)
        if key in memo.recent:
            memo.recent[key] += 1

    # -- answers to unproven senders ----------------------------------------------------------------

    def answered_today(self, session: Session, sender: str) -> int:
        """Mails from `sender`'s mailbox (any of its +tags, in any case: `bot.mailboxes`) that
        proved nobody and were answered at their From in the last day."""
        box = mailbox(sender)
        if not box:
            return self.count(session, timedelta(days=1), principal="", sender=sender, answers=(AnswerFate.SENT,))
        senders = session.scalars(
            select(InboundMessage.sender).where(
                InboundMessage.received_at >= self.batch.shell.now() - timedelta(days=1),
                InboundMessage.principal == "",
                InboundMessage.answer == AnswerFate.SENT.value,
                may_reach(InboundMessage.sender, box),
            )
        )
        return len(of_mailbox(senders, box))

    def answered_at_domain_today(self, session: Session, sender: str) -> int:
        """Mails from any address at `sender`'s domain that proved nobody and were answered in the last day."""
        host = domain(sender)
        if not host:
            return 0
        where = [
            InboundMessage.received_at >= self.batch.shell.now() - timedelta(days=1),
            InboundMessage.principal == "",
            InboundMessage.answer == AnswerFate.SENT.value,
            InboundMessage.sender.endswith("@" + host, autoescape=True),
        ]
        return session.scalar(select(func.count()).select_from(InboundMessage).where(*where)) or 0

    def stranger_answers_this_hour(self, session: Session) -> int:
        """Answers to mail that proved nobody, at its From, in the last hour, all senders together."""
        return self.count(session, timedelta(hours=1), principal="", answers=(AnswerFate.SENT,))

    def stranger_cap(self, session: Session, sender: str) -> AnswerFate | None:
        """The cap an answer to `sender`, who proved nobody, would pass, or None."""
        if self.answered_today(session, sender) >= STRANGER_REPLIES_PER_DAY:
            return AnswerFate.STRANGER_DAY
        if (
            self.answered_at_domain_today(session, sender)
            >= self.batch.settings.limits.answers_to_strangers_per_domain_per_day
        ):
            return AnswerFate.STRANGER_DAY
        if self.stranger_answers_this_hour(session) >= self.batch.settings.limits.answers_to_strangers_per_hour:
            return AnswerFate.STRANGER_HOUR
        return None

    # -- notices to a registered address -----------------------------------------------------------

    def told_today(
        self, session: Session, reason: Reason, *, sender: str | None = None, game: Game | None = None
    ) -> bool:
        """Whether a notice of `reason` went out today for mail from `sender` (or about `game`)."""
        return self.count(session, timedelta(days=1), reason=reason, sender=sender, game=game, answers=_TOLD) > 0


__all__ = ["STRANGER_REPLIES_PER_DAY", "Limiter", "loop_key"]
