"""The last two steps of a mail: its answer goes out, and its record is written.

One answer per mail (mail-interface.md): what the mail made for one addressee goes out as one
letter, in sections, as Mailman answers commands -- done, then not done. Who gets it, and which
reply address it carries, is `bot.letters`' call. Past a cap the answers are withheld (all but
the `essential` ones) and the record says why (caps withhold answers, never actions
or records).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from sqlalchemy.orm import Session

from bot import letters
from bot.fate import Answer, Letter, Notice
from bot.intake.batch import Batch, Mail, MailKey
from bot.intake.limits import Limiter
from bot.letters import Addressee, ToGm, ToSeat
from bot.letters.context import bot_context
from bot.letters.words import say
from bot.mail_in.auth import strip_password_lines
from bot.models import AnswerFate, Game, InboundStatus, Reason, Seat
from bot.safe_text import echo
from bot.shell import Shell

log = logging.getLogger("flagman.inbound")

_GREETING = re.compile(r"\AHello [^\n]*,\n\n")
_TAGS = re.compile(r"\A(?:\[ERROR\] )?(?:\[[^\]\s]+\] )?")


def answer_part(shell: Shell, answer: Answer) -> dict[str, object]:
    """One answer as a section of a combined letter: its subject (without the tags the
    combined subject carries) as the heading, its body without greeting and signature."""
    if isinstance(answer, Notice):
        rendered = shell.renderer.render(
            "notice",
            {
                "bot": bot_context(shell),
                "game_name": "",
                "title": answer.title,
                "text": answer.text,
                "error": answer.error,
                "greeting": "",
            },
        )
        error = answer.error
    else:
        rendered = answer.rendered
        error = rendered.subject.startswith("[ERROR]") or answer.in_part
    body = _GREETING.sub("", rendered.body)
    lines = body.splitlines()
    if "-- " in lines:  # the signature (RFC 3676 4.3): the combined letter signs once
        lines = lines[: len(lines) - 1 - lines[::-1].index("-- ")]
    return {
        "heading": _TAGS.sub("", rendered.subject),
        "body": "\n".join(lines).strip("\n"),
        "error": error,
        # A confirmation that refused a line still filed the rest: done in part, never "not done".
        "in_part": isinstance(answer, Letter) and answer.in_part,
    }


def send(batch: Batch, session: Session, mail: Mail, *, withhold: AnswerFate | None = None) -> None:
    """The mail's answers, one letter per addressee; over its sender's loop limit (or
    `withhold`: a cap on answers to unproven senders) withheld, all but the `essential` ones."""
    if mail.over_limit and withhold is None:
        withhold = AnswerFate.RATE_LIMIT
    if withhold is not None:
        kept = [a for a in mail.answers if a.essential]
        if len(kept) < len(mail.answers):
            mail.answer = withhold
            log.info(
                "mail %s: %d answer(s) withheld (%s)",
                mail.inbound.message_id,
                len(mail.answers) - len(kept),
                withhold.value,
            )
        mail.answers = kept
    if not mail.answers:
        return
    if mail.answer is AnswerFate.NONE:
        to_holder = not mail.principal and all(isinstance(a.to, ToSeat | ToGm) for a in mail.answers)
        mail.answer = AnswerFate.HOLDER if to_holder else AnswerFate.SENT
    if len(mail.answers) == 1:  # the common case (one confirmation): nothing to group
        _post(batch, session, mail, mail.answers[0])
        return
    # One letter per addressee and capability: a seat's answers carry its own reply address, so
    # two seats of one player stay two letters; the GM's, for any of the GM's games, are one (the
    # GM's reply address of any of them speaks for all, from the GM's own address).
    groups: dict[tuple[str, str | None], list[Answer]] = {}
    for answer in mail.answers:
        env = letters.envelope(batch.shell, answer.to)
        groups.setdefault((env.to.address, "gm" if isinstance(answer.to, ToGm) else env.reply_to), []).append(answer)
    for answers in groups.values():
        _post(batch, session, mail, answers[0] if len(answers) == 1 else _in_sections(batch, answers))


def _post(batch: Batch, session: Session, mail: Mail, answer: Answer) -> None:
    """Mail one answer to `mail`; who gets it (and which reply address) is `bot.letters`' call."""
    shell = batch.shell
    if isinstance(answer, Notice):
        letters.notice(
            shell,
            session,
            answer.to,
            answer.title,
            answer.text,
            kind=answer.kind,
            error=answer.error,
            game=answer.game,
            in_reply_to=mail.in_reply_to,
            into=batch.rows.outbox,
            claims=answer.claims,
        )
    else:
        letters.post(
            shell,
            session,
            answer.to,
            answer.rendered,
            kind=answer.kind,
            game=answer.game,
            in_reply_to=mail.in_reply_to,
            into=batch.rows.outbox,
        )


def _zones(to: Addressee, games: Sequence[Game]) -> str:
    """The zone the sign-off of a GM's answer names: each game's, by game, where the games the
    answer speaks of keep their times in different zones (each GM part shows its game's time);
    else the addressee's (`letters.zone`)."""
    zones: dict[str, list[str]] = {}
    for game in games:
        zones.setdefault(game.timezone, []).append(game.name)
    if not isinstance(to, ToGm) or len(zones) < 2:
        return letters.zone(to)
    return say("answers_zones", zones=sorted(zones.items()))


def _in_sections(batch: Batch, answers: list[Answer]) -> Letter:
    """Several answers to one addressee as one letter: each under its own heading, the ones
    that did what was asked first, then the ones that did it in part (orders filed beside a
    line refused), then the ones that refused it."""
    shell = batch.shell
    parts = [answer_part(shell, answer) for answer in answers]
    # Every game the answers speak of: a GM's mail that touched several games is answered
    # under all their names, never under one of them.
    spoken = {
        g.name: g
        for answer in answers
        if (g := answer.game or (answer.to.game if isinstance(answer.to, ToGm) else None)) is not None
    }
    games = sorted(spoken)
    envelope = letters.envelope(shell, answers[0].to)
    game_name = (
        ", ".join(games)
        if len(games) > 1 and isinstance(answers[0].to, ToGm)
        else envelope.game.name
        if envelope.game is not None
        else (games[0] if len(games) == 1 else "")
    )
    sections = [
        {"title": title, "parts": chosen}
        for title, chosen in (
            (say("answers_done"), [p for p in parts if not p["error"]]),
            (say("answers_done_in_part"), [p for p in parts if p["in_part"]]),
            (say("answers_not_done"), [p for p in parts if p["error"] and not p["in_part"]]),
        )
        if chosen
    ]
    rendered = shell.renderer.render(
        "answers",
        {
            "bot": bot_context(shell),
            "greeting": letters.greeting(answers[0].to),
            "game_name": game_name,
            "timezone": _zones(answers[0].to, [spoken[name] for name in games]) if game_name else "",
            # "[ERROR]" only for a mail of which nothing was done.
            "error": all(p["error"] and not p["in_part"] for p in parts),
            "count": len(parts),
            "sections": sections,
        },
    )
    game = next((a.game for a in answers if a.game is not None), None)
    made = [c for a in answers for c in (a.claims if isinstance(a, Notice) else a.rendered.claims)]
    return Letter(answers[0].to, rendered.claiming(*made), "answers", game=game)


def record(
    batch: Batch,
    limiter: Limiter,
    mail: Mail,
    status: InboundStatus,
    reason: Reason,
    detail: str,
    game: Game | None = None,
    seat: Seat | None = None,
) -> MailKey:
    """The mail's row, written with the batch (`BatchRows`); its key, for the rows that point at it."""
    inbound = mail.inbound
    detail = echo(detail, 500)  # it may quote the mail (an order line): one line, capped
    key = mail.key
    sender = inbound.sender[:320]
    batch.rows.inbound.append(
        {
            "message_id": key[0],
            "content_hash": key[1],
            "mailbox_key": mail.raw.key[:200],
            "received_at": batch.shell.now(),
            "sender": sender,
            "subject": echo(inbound.subject),
            "status": status,
            "reason": reason,
            "detail": detail,
            "game_id": game.id if game else None,
            "seat_id": seat.id if seat else None,
            "text": strip_password_lines(inbound.text)[:20000],  # a seat password is never stored
            "principal": mail.principal,
            "answer": mail.answer,
        }
    )
    batch.memo.seen.add(key)
    limiter.recorded(mail.principal, sender)
    batch.say(
        "mail %s from %s: %s%s%s (%s)%s",
        inbound.message_id,
        inbound.sender or "?",
        status,
        f" game={game.name}" if game else "",
        f" seat={seat.name}" if seat else "",
        detail,
        f"; answer withheld: {mail.answer.value}" if mail.answer.withheld else "",
    )
    return key


__all__ = ["answer_part", "record", "send"]
