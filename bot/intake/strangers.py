"""Mail that proved nobody: answered within caps at most, never acted on -- but for a code of ours.

What a code the bot mailed does (CONFIRM, STOP, an UNSUBSCRIBE of a List-Unsubscribe) is done
whatever any cap says: the code is the proof, and only a mail of ours can have brought it
(caps withhold answers, never actions). Otherwise answers go to the sender only when
the sender is a stranger (a JOIN's code, the answers to the commands for anyone, or one
notice), within per-address and global caps (`bot.intake.limits`), and never repeat the
sender's words; a mail claiming a registered address is answered at that address, once a day.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sqlalchemy.orm import Session

from bot.commands import (
    Calendar,
    Confirm,
    Join,
    MailCommands,
    Ping,
    PlayerCommand,
    Practice,
    Rating,
    Reminders,
    Stop,
    Timezone,
    Unsubscribe,
    Vacation,
    anyone,
    ratings,
    registry,
    streams,
)
from bot.commands.handlers import CommandContext
from bot.fate import Done, Ignored, Notice, Refused
from bot.games import practice, signups
from bot.games.identity import Who
from bot.intake.batch import Batch, Mail
from bot.intake.limits import Limiter
from bot.letters import Addressee, ToAddress, ToGm, ToSeat
from bot.letters.words import say
from bot.mail_in.auth import passwords_in_text
from bot.models import AnswerFate, Reason

MAX_STRANGER_COMMANDS = 5  # commands for anyone answered in one mail that proved nobody


def _is_code(context: CommandContext, command: PlayerCommand) -> bool:
    """`command` hands back a code of ours that stands (CONFIRM, STOP, UNSUBSCRIBE)."""
    if isinstance(command, Confirm | Stop):
        return anyone.code_stands(context, command.code)
    if isinstance(command, Unsubscribe):
        return streams.code_stands(context, command.code)
    return False


def unauthenticated(
    batch: Batch, limits: Limiter, session: Session, mail: Mail, who: Who, commands: MailCommands
) -> Done:
    """What becomes of a mail that proved nobody (raises `Refused` or `Ignored`, or is Done)."""
    inbound = mail.inbound
    context = CommandContext(batch.shell, session, inbound, who, None, None)
    codes = [c for c in commands.player if _is_code(context, c)]
    if mail.over_limit and not codes:
        limit = batch.settings.limits.mails_per_sender_per_hour
        raise Ignored(
            say("mail_record", why="rate_limit", limit=limit), reason=Reason.RATE_LIMIT, answer=AnswerFate.RATE_LIMIT
        )
    joins = [c for c in commands.player if isinstance(c, Join)]
    if joins and not codes and not who.claimed and not who.claimed_gm:
        # JOIN is double opt-in: the From gets a code and nothing else. A forged
        # From must not turn that into a stream of mail to a third party: a few answers a
        # day per address, and a global cap an hour for all of them together.
        fate = limits.stranger_cap(session, inbound.sender)
        if fate is not None:
            raise Ignored(
                say("mail_record", why="not_answered", verbs=["JOIN"], fate=fate.value),
                reason=Reason.UNKNOWN_SENDER,
                answer=fate,
            )
        return signups.ask_to_join(batch.shell, session, inbound, joins[0].game, joins[0].name)
    asked = [c for c in commands.player if isinstance(c, Practice)]
    if asked and not joins and not codes and not who.claimed and not who.claimed_gm:
        # PRACTICE is double opt-in as JOIN: a code to the From, within the same caps
        # (one practice game per code; a forged From gets one short mail and no game).
        fate = limits.stranger_cap(session, inbound.sender)
        if fate is not None:
            raise Ignored(
                say("mail_record", why="not_answered", verbs=["PRACTICE"], fate=fate.value),
                reason=Reason.UNKNOWN_SENDER,
                answer=fate,
            )
        not_done = [c.verb for c in commands.player if c is not asked[0]] + [c.verb for c in commands.gm]
        return practice.ask(batch.shell, session, inbound.sender, asked[0].kind, asked[0].level, not_done=not_done)
    if (who.claimed or who.claimed_gm) and not codes:
        # (A List-Unsubscribe mail comes from the registered address without a proof: its
        # code is the proof, and it is answered as the commands for anyone are.)
        ping = any(isinstance(c, Ping) for c in commands.player)
        settings = [c.verb for c in commands.player if isinstance(c, _SETTINGS)]
        claimed_without_proof(batch, limits, session, mail, who, ping=ping, settings=settings)
    # RATING is about the person, not a game: from a person's own registered address it is
    # answered as the commands for anyone are (at that address; `bot.commands.ratings`).
    person = any(isinstance(c, Rating) for c in commands.player) and ratings.by_plain_address(context) is not None
    for_anyone = [
        c
        for c in commands.player
        if (c.for_anyone or (person and isinstance(c, Rating))) and not isinstance(c, Join | Practice)
    ]
    if for_anyone:
        return _for_anyone(batch, limits, session, mail, context, commands, for_anyone, codes)
    # A stranger: at most one short notice per address a day, and a global cap an hour
    # (no backscatter storms from many forged Froms).
    if not inbound.sender:
        raise Ignored(say("mail_record", why="no_sender", verb=None), reason=Reason.NO_SENDER)
    if limits.answered_today(session, inbound.sender) > 0:
        raise Ignored(
            say("mail_record", why="stranger_told_today"), reason=Reason.UNKNOWN_SENDER, answer=AnswerFate.STRANGER_DAY
        )
    cap = batch.settings.limits.answers_to_strangers_per_hour
    if limits.stranger_answers_this_hour(session) >= cap:
        raise Ignored(
            say("mail_record", why="stranger_hour", cap=cap),
            reason=Reason.UNKNOWN_SENDER,
            answer=AnswerFate.STRANGER_HOUR,
        )
    raise Refused(
        say("mail_record", why="stranger_told"),
        Notice(ToAddress(inbound.sender), say("intake_stranger_title"), say("intake_stranger"), kind="stranger"),
        reason=Reason.UNKNOWN_SENDER,
    )


def _for_anyone(
    batch: Batch,
    limits: Limiter,
    session: Session,
    mail: Mail,
    context: CommandContext,
    commands: MailCommands,
    asked: Sequence[PlayerCommand],
    codes: Sequence[PlayerCommand],
) -> Done:
    """A stranger's HELP, LIST, RULES, OBSERVE, UNOBSERVE, CONFIRM, STOP, UNSUBSCRIBE: answered
    (one answer, in sections), at most `MAX_STRANGER_COMMANDS` of them, within the limits of
    answers to mail that proved nobody -- a few a day per address, and a cap an hour for every
    sender together. A code of ours (`codes`) is used whatever those limits say, and its
    answer goes: only a mail of ours can have brought it, once. The answer names none of what
    else the mail said, carries the plain address only, and stays under
    `bot.letters.STRANGER_ANSWER_BYTES`."""
    sender = mail.inbound.sender
    if not sender:
        raise Ignored(say("mail_record", why="no_sender", verb=None), reason=Reason.NO_SENDER)
    others = [c for c in asked if c not in codes]
    fate = limits.stranger_cap(session, sender) if others else None
    if fate is not None and not codes:
        raise Ignored(
            say("mail_record", why="not_answered", verbs=[c.verb for c in others], fate=fate.value),
            reason=Reason.UNKNOWN_SENDER,
            answer=fate,
        )
    chosen = list(codes) + ([] if fate is not None else others[:MAX_STRANGER_COMMANDS])
    labels: list[str] = []
    refused = False
    for command in chosen:
        reply = registry.run(context, command)
        # Every answer to mail that proved nobody, at its From, is of one kind in the outbox:
        # "stranger" (what a code made for a seat, a welcome, is that seat's mail).
        mail.answers.extend(
            dataclasses.replace(a, kind="stranger") if isinstance(a.to, ToAddress) else a for a in reply.answers
        )
        refused = refused or any(isinstance(a, Notice) and a.error for a in reply.answers)
        labels.append(reply.label or command.verb)
    if fate is not None:
        # The codes were used; the rest of the mail is not answered (recorded: `fate`).
        mail.answer = fate
        return Done(say("mail_record", why="for_anyone", labels=labels, fate=fate.value), Reason.FOR_ANYONE)
    players_only = sorted({c.verb for c in commands.player if not c.for_anyone and c not in asked})
    # Words around a code sent back ("Yes please") are what people write: not "not understood".
    lines = 0 if codes else len([line for line in commands.orders_text.splitlines() if line.strip()])
    skipped = len(others) - len(others[:MAX_STRANGER_COMMANDS]) + commands.over
    if players_only or lines or commands.problems or skipped or commands.repeated:
        text = say(
            "intake_stranger_not_done",
            players_only=players_only,
            reasons=[problem.reason for problem in commands.problems],  # the sender's words are not repeated
            more=commands.more_problems,
            lines=lines,
            skipped=skipped,
            most=MAX_STRANGER_COMMANDS,
            repeated=commands.repeated,
        )
        # With the other answers (one answer per mail): to whom they go, the sender's address.
        to = mail.answers[0].to if mail.answers else ToAddress(sender)
        mail.answers.append(Notice(to, say("intake_stranger_not_done_title"), text, kind="stranger"))
        refused = True
    return Done(say("mail_record", why="for_anyone", labels=labels, fate=None), Reason.FOR_ANYONE, refused=refused)


# Commands that change the sender's own settings (not a game's): a mail asking for them from a
# registered address without proof is refused as any is, and told that this is why.
_SETTINGS = (Timezone, Rating, Vacation, Calendar, Reminders)


def claimed_without_proof(
    batch: Batch,
    limits: Limiter,
    session: Session,
    mail: Mail,
    who: Who,
    *,
    ping: bool = False,
    settings: Sequence[str] = (),
) -> None:
    """The From is a player's (or the GM's), or the GM's reply address was used without the
    GM's From or password: tell the registered address, never the sender (mail-interface.md,
    identity) -- once a day, so that forged mail cannot flood the player; every one is in
    the GM's digest. A mail asking only to change the sender's own `settings` (TIMEZONE,
    RATING ...) is told that those need the same proof, and how to give it. A PING is told why it was not accepted (`streams.refused_text`), on the
    same terms. Always raises."""
    game = who.claimed[0].game if who.claimed else who.claimed_gm[0]
    holder: Addressee = ToSeat(who.claimed[0]) if who.claimed else ToGm(who.claimed_gm[0])
    # Once a day per registered address: a seat's is the From itself; the GM's role is
    # claimed from any address (its reply address), so it is counted per game.
    reason = Reason.AUTH_FAILED if who.claimed else Reason.AUTH_FAILED_GM
    role = None if who.claimed else game.name  # the GM's role of that game, or a registered address
    told = (
        limits.told_today(session, reason, sender=mail.inbound.sender)
        if who.claimed
        else limits.told_today(session, reason, game=game)
    )
    if told:
        raise Ignored(
            say("mail_record", why="auth_failed", game=role, wrong=False, told_today=True),
            reason=reason,
            game=game,
            answer=AnswerFate.TOLD_TODAY,
        )
    if ping:
        context = CommandContext(batch.shell, session, mail.inbound, who, None, None)
        raise Refused(
            say("mail_record", why="auth_failed", game=role, wrong=False, told_today=False),
            Notice(
                holder,
                say("intake_ping_refused_title"),
                streams.refused_text(context, mail.inbound, who),
                kind="ping",
            ),
            reason=reason,
            game=game,
        )
    # A PASSWORD line that proved nothing is named as wrong (a player who typed it believes
    # the mail was proven).
    wrong = bool(passwords_in_text(mail.inbound.reply_text or mail.inbound.text))
    kind = "intake_auth_refused_seat" if isinstance(holder, ToSeat) else "intake_auth_refused_gm"
    # A player with seats in several games: this notice signs in for one; the others are named.
    others = sorted({s.game.name for s in who.claimed[1:]} - {game.name}) if who.claimed else []
    text = say(kind, wrong_password=wrong, game=game.name, others=others, settings=sorted(set(settings)))
    raise Refused(
        say("mail_record", why="auth_failed", game=role, wrong=wrong, told_today=False),
        Notice(holder, say("intake_auth_refused_title"), text, kind="auth_refused"),
        reason=reason,
        game=game,
    )


__all__ = ["MAX_STRANGER_COMMANDS", "claimed_without_proof", "unauthenticated"]
