"""The GM's daily digest (mail-interface.md, "The digest").

Once a day, at `[schedule] digest_time` in the GM's local time, one mail per GM address:
every game of theirs (turn, deadline, who has orders on file and who has not -- never what --,
NMR streaks, early resolution, press, observers, players on vacation), then what happened since the last digest: mail refused, unknown senders and
failed authentications, bounces and other mail never answered, failed sends, quarantined
mail; then the GM command syntax with one example each (from `bot.commands.GM_COMMANDS`).

The GM's time zone is that of their first running game (a GM with games in several zones
gets one digest, on the first game's clock). A row in `gm_digest` per GM and local day makes
it once a day: the scheduler calls `send_due_digests` every ten minutes, and `flagman digest`
may run from cron as often as it likes. ``--now`` (force) sends at once whatever the hour.

What has no game (unknown senders, bounces, quarantined mail) is shown to every GM: on a site
with several GMs each sees the site's oddities.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from bot import letters
from bot.clock import as_utc
from bot.commands import GM_COMMANDS
from bot.facts import SeriesDraw
from bot.games import attention, season_tiers, turns
from bot.games.summary import attention_lines, game_summary
from bot.letters.context import game_context
from bot.letters.words import say
from bot.mail_in.auth import GM_SEAT
from bot.models import (
    AnswerFate,
    Game,
    GameStatus,
    GmAudit,
    GmDigest,
    InboundMessage,
    InboundStatus,
    Outbox,
    OutboxStatus,
    Quarantine,
    Reason,
)
from bot.safe_text import echo
from bot.schedules import format_local
from bot.shell import Shell

log = logging.getLogger("flagman.digest")

MAX_ITEMS = 25  # per list; the rest is counted
ANSWER_LINES = 12  # of a GM command's answer, quoted under it; the rest is counted
FAILED_LOOKBACK = timedelta(days=1)  # a send fails for good up to ~2 hours after it was queued


def digest_time(shell: Shell) -> time:
    hour, _, minute = shell.settings.schedule.digest_time.partition(":")
    try:
        return time(int(hour), int(minute or 0))
    except ValueError:
        log.warning("[schedule] digest_time %r is not HH:MM; using 08:00", shell.settings.schedule.digest_time)
        return time(8, 0)


def gm_addresses(session: Session, now: datetime | None = None) -> list[str]:
    """The GMs with a game running, those with a game's finish their digest has not listed yet
    (`unlisted_finishes`: the end of their last game is news too), and (given `now`) those with
    a series' next season drawn and waiting for them (`bot.games.season_tiers.digest_gms`)."""
    running = set(
        session.scalars(select(Game.gm_address).where(Game.status != GameStatus.FINISHED, Game.practice.is_(False)))
    )
    unlisted = set(session.scalars(select(Game.gm_address).where(*_UNLISTED).distinct()))
    return sorted(running | unlisted | (season_tiers.digest_gms(session, now) if now is not None else set()))


# A finished game (not a practice race) whose last finish no digest of its GM has listed.
_UNLISTED = (Game.status == GameStatus.FINISHED, Game.practice.is_(False), Game.finishes_listed < Game.finishes)


def unlisted_finishes(session: Session, address: str) -> list[Game]:
    """The games of the GM at `address` whose finish no digest has listed yet: each finish is
    listed in one digest, the first after it (`send_digest` marks it listed). A game a ROLLBACK
    reopened finishes anew when it is resolved again, and is listed once more then
    (`Game.finishes` counts the finishes)."""
    return list(session.scalars(select(Game).where(Game.gm_address == address, *_UNLISTED).order_by(Game.id)))


def send_due_digests(shell: Shell, *, force: bool = False) -> int:
    """Queue every digest that is due now (all of them with `force`); returns how many."""
    with shell.db.read() as session:
        addresses = gm_addresses(session, shell.now())
    sent = 0
    for address in addresses:
        with shell.db.transaction() as session:
            if send_digest(shell, session, address, force=force):
                sent += 1
    return sent


def _last_digest(session: Session, address: str) -> GmDigest | None:
    return session.scalar(
        select(GmDigest)
        .where(GmDigest.gm_address == address)
        .order_by(GmDigest.sent_at.desc(), GmDigest.id.desc())
        .limit(1)
    )


def send_digest(shell: Shell, session: Session, address: str, *, force: bool = False) -> bool:
    now = shell.now()
    running = list(
        session.scalars(
            select(Game).where(Game.gm_address == address, Game.status != GameStatus.FINISHED).order_by(Game.id)
        )
    )
    draws = season_tiers.digest_draws(session, address, now)
    last = _last_digest(session, address)
    finished = unlisted_finishes(session, address)
    anchor = running[0] if running else _draw_anchor(session, draws) or (finished[-1] if finished else None)
    if anchor is None:
        return False
    zone = anchor.timezone
    local = now.astimezone(ZoneInfo(zone))
    day = local.date().isoformat()
    if not force:
        if local.time() < digest_time(shell):
            return False
        if session.scalar(select(GmDigest.id).where(GmDigest.gm_address == address, GmDigest.day == day)) is not None:
            return False
    since, back_to = _since(now, last, finished)
    games = running + finished
    ctx = game_context(shell, anchor, turns.rules_of(anchor))
    ctx.update(
        {
            "since": format_local(since, zone),
            "now": format_local(now, zone),
            "timezone": zone,
            "first": last is None,
            "back_to": back_to,
            "games": (summaries := [game_summary(shell, session, g, zone) for g in games]),
            "commands": [{"syntax": c.syntax, "summary": c.summary, "example": c.example} for c in GM_COMMANDS],
            "reply_addresses": [{"game": g.name, "address": shell.reply_address(g.name, GM_SEAT)} for g in running],
            "draws": [say("season_draw", draw=draw) for draw in draws],
        }
    )
    ctx.update(happenings(session, [g.id for g in games], since, zone))
    # What needs the GM, at the top: a player's note or question, orders lost or withdrawn.
    ctx["attention"] = attention_lines(attention.items(session, games, since), zone)
    rendered = shell.renderer.render("digest", ctx).claiming(*(c for g in summaries for c in g.get("claims", ())))
    # To the GM's registered address (every running game's GM is `address`), signed for the
    # first of them (or, with none running, the last race of a series whose draw waits, or the
    # last game finished); the digest lists the GM reply address of each running game.
    letters.post(shell, session, letters.ToGm(anchor), rendered, kind="digest", game=None)
    session.add(GmDigest(gm_address=address, day=day, sent_at=now))
    for game in finished:
        game.finishes_listed = game.finishes
    log.info("digest for %s (%d games) queued", address, len(games))
    return True


def _since(now: datetime, last: GmDigest | None, finished: Sequence[Game]) -> tuple[datetime, str]:
    """Where the digest's list of what happened starts, and the game whose finish it goes back
    to ("": none): the last digest; the GM's first looks back a day, or to the oldest finish it
    lists that is older than that (a finish no digest listed yet), so that its heading says
    what the list holds."""
    if last is not None:
        return as_utc(last.sent_at), ""
    since, back_to = now - timedelta(days=1), ""
    for game in finished:
        if game.finished_at is not None and as_utc(game.finished_at) < since:
            since, back_to = as_utc(game.finished_at), game.name
    return since, back_to


def _draw_anchor(session: Session, draws: list[SeriesDraw]) -> Game | None:
    """The game a digest sent for a waiting draw alone is signed for: the race it names."""
    for draw in draws:
        game = session.scalar(select(Game).where(Game.name == draw.confirm_game))
        if game is not None:
            return game
    return None


_WITHHELD_WORDS = {
    AnswerFate.RATE_LIMIT.value: "over the sender's loop limit (mails_per_sender_per_hour)",
    AnswerFate.STRANGER_DAY.value: "an unknown address's answers for the day were out",
    AnswerFate.STRANGER_HOUR.value: "the answers to unknown senders for the hour were out",
    AnswerFate.TOLD_TODAY.value: "the same notice went to the address today already",
}


def _clip(items: Sequence[object]) -> dict[str, object]:
    return {"items": items[:MAX_ITEMS], "more": max(0, len(items) - MAX_ITEMS)}


def _answer_lines(outcome: str) -> dict[str, object]:
    """A GM command's answer as the digest quotes it, line by line as it was given: each line
    echoed (at most `LINE_CAP` characters, its indent kept up to 8 spaces), at most
    `ANSWER_LINES` of them (``more``: how many more); an answer of one line is ``said`` beside
    the command instead."""
    lines = [line for line in outcome.splitlines() if line.strip()]
    shown = [" " * min(8, len(line) - len(line.lstrip(" "))) + echo(line) for line in lines[:ANSWER_LINES]]
    if len(lines) == 1:
        return {"said": shown[0], "lines": [], "more": 0}
    return {"said": "", "lines": shown, "more": max(0, len(lines) - ANSWER_LINES)}


def _inbound(
    session: Session, names: dict[int, str], game_ids: list[int], since: datetime, zone: str
) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
    """The mail received since `since` and not applied, one line each, as (refused, from
    strangers, failing authentication, bounces, ignored)."""
    rows = session.scalars(
        select(InboundMessage)
        .where(
            InboundMessage.received_at > since,
            InboundMessage.status != InboundStatus.APPLIED,
            or_(InboundMessage.game_id.is_(None), InboundMessage.game_id.in_(game_ids)),
        )
        .order_by(InboundMessage.id)
    )
    refused: list[str] = []
    strangers: list[str] = []
    auth_failed: list[str] = []
    bounces: list[str] = []
    ignored: list[str] = []
    for row in rows:
        when = format_local(as_utc(row.received_at), zone)
        where = f"[{names[row.game_id]}] " if row.game_id in names else ""
        # Subjects and details come from mail (an order line, a subject): shown as one line each.
        line = f"{when} {where}{row.sender or '(no sender)'}: {echo(row.detail, 300)}"
        if row.reason == Reason.BOUNCE:
            bounces.append(line)
        elif row.reason == Reason.UNKNOWN_SENDER:
            strangers.append(line)
        elif row.reason in (Reason.AUTH_FAILED, Reason.AUTH_FAILED_GM):
            auth_failed.append(line)
        elif row.status == InboundStatus.IGNORED:
            ignored.append(line)
        elif row.status == InboundStatus.REFUSED:
            refused.append(line + (f' -- "{echo(row.subject)}"' if row.subject else ""))
    return refused, strangers, auth_failed, bounces, ignored


def _withheld(session: Session, game_ids: list[int], since: datetime) -> list[dict[str, object]]:
    """How many mails since `since` had their answer withheld, by the cap that withheld it:
    the digest's lists name some of them; this says how many there were."""
    withheld_rows = session.execute(
        select(InboundMessage.answer, func.count())
        .where(
            InboundMessage.received_at > since,
            InboundMessage.answer.in_([f.value for f in AnswerFate if f.withheld]),
            or_(InboundMessage.game_id.is_(None), InboundMessage.game_id.in_(game_ids)),
        )
        .group_by(InboundMessage.answer)
        .order_by(InboundMessage.answer)
    ).all()
    return [
        {"reason": _WITHHELD_WORDS.get(str(reason), str(reason)), "count": count} for reason, count in withheld_rows
    ]


def happenings(session: Session, game_ids: list[int], since: datetime, zone: str) -> dict[str, object]:
    """The mail the GM should know about, received or sent since `since`."""
    names = {gid: name for gid, name in session.execute(select(Game.id, Game.name).where(Game.id.in_(game_ids)))}
    refused, strangers, auth_failed, bounces, ignored = _inbound(session, names, game_ids, since, zone)
    failed = [
        f"{format_local(as_utc(o.created_at), zone)} to {o.recipient}: {echo(o.subject)} "
        f"({echo(o.last_error or 'refused')})"
        for o in session.scalars(
            select(Outbox)
            .where(
                Outbox.status == OutboxStatus.FAILED,
                Outbox.created_at >= since - FAILED_LOOKBACK,
                or_(Outbox.game_id.is_(None), Outbox.game_id.in_(game_ids)),
            )
            .order_by(Outbox.id)
        )
    ]
    # Every use of the GM's powers (mail or CLI), from the audit log: what `gm audit` lists.
    gm_actions = [
        {
            "head": f"{format_local(as_utc(a.created_at), zone)} [{names.get(a.game_id or 0, '?')}] "
            f"{echo(a.command, 200)} ({a.via})",
            "game": names.get(a.game_id or 0, "?"),
            **_answer_lines(a.outcome),
        }
        for a in session.scalars(
            select(GmAudit).where(GmAudit.created_at > since, GmAudit.game_id.in_(game_ids)).order_by(GmAudit.id)
        )
    ]
    quarantined = [
        f"{format_local(as_utc(q.created_at), zone)} {echo(q.message_id)}: "
        f"{echo((q.error.strip().splitlines() or ['?'])[-1])}"
        for q in session.scalars(select(Quarantine).where(Quarantine.created_at > since).order_by(Quarantine.id))
    ]
    withheld = _withheld(session, game_ids, since)
    return {
        "withheld": withheld,
        "refused": _clip(refused),
        "strangers": _clip(strangers),
        "auth_failed": _clip(auth_failed),
        "bounces": _clip(bounces),
        "ignored": _clip(ignored),
        "failed_sends": _clip(failed),
        "quarantined": _clip(quarantined),
        "gm_actions": _clip(gm_actions),
    }
