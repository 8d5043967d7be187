"""Every mail command and the handler that carries it out: one table, player's and GM's alike.

A command is a class of `bot.commands.grammar` (its verb, syntax, summary and example, and how a
line becomes it); its handler is a plain function, bound to it here and nowhere else -- no
handler registers itself by being imported. HELP, the CLI's `flagman gm` subcommands
and the digest's syntax list are made from the same classes, so they cannot drift from what the
handlers accept; a test checks that every class has a handler here.

The two runners:

* `run`: a player command (`CommandContext`, `Reply`); a refusal (`bot.fate.Refused`, raised
  by the handler) becomes the command's reply, and the mail's other commands go on;
* `execute`: a GM command, for either door (a mail's line: `run_gm`; the CLI: `execute_words`):
  in a savepoint, audited (`GmAudit`), confirmed to the GM's registered address.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from bot import letters, store
from bot.commands import account, anyone, gm, player, press, ratings, season, streams
from bot.commands.grammar import (
    GM_VERBS,
    Address,
    Calendar,
    Clear,
    Confirm,
    Deadline,
    Drop,
    Extend,
    GmCommand,
    Help,
    History,
    Join,
    ListGames,
    NoWait,
    Observe,
    OpenSignups,
    Order,
    Pause,
    Ping,
    PlayerCommand,
    Plot,
    Practice,
    Press,
    Preview,
    Process,
    Rating,
    Record,
    Reminders,
    Replace,
    Resend,
    Resign,
    Resume,
    Rollback,
    SeasonCommand,
    SetFigure,
    ShowOrders,
    ShowRules,
    Start,
    Status,
    Stop,
    Substitute,
    Timezone,
    Unobserve,
    Unsubscribe,
    Vacation,
    Wait,
)
from bot.commands.handlers import CommandContext, Reply
from bot.fate import Letter, Notice, Refused
from bot.games import seasons, turns
from bot.games.archive import NewTurn
from bot.letters import ToGm
from bot.letters.context import bot_context
from bot.letters.refusals import refusal
from bot.letters.words import say
from bot.mail_in.parse import Inbound
from bot.models import Game, GmAudit
from bot.safe_text import echo, quote_lines
from bot.schedules import DeadlineError, format_local
from bot.shell import Shell
from rules.api import FigureError, OptionError

log = logging.getLogger("flagman.gm")

PlayerHandler = Callable[[CommandContext, Any], Reply]  # (the context, its own command class)
GmHandler = Callable[[gm.GmAction, tuple[str, ...]], str]  # (the action, the arguments) -> what was done

PLAYER_HANDLERS: Mapping[type[PlayerCommand], PlayerHandler] = {
    Help: player.help_,
    Status: player.status,
    ShowOrders: player.show_orders,
    Join: player.join,
    Resign: player.resign,
    Press: press.press,
    Timezone: account.timezone,
    Address: account.address,
    Vacation: account.vacation,
    Ping: streams.ping,
    Calendar: streams.calendar,
    Rating: ratings.rating,
    Reminders: streams.reminders,
    ListGames: anyone.list_games,
    ShowRules: anyone.rules,
    Observe: anyone.observe,
    Unobserve: anyone.unobserve,
    Confirm: anyone.confirm,
    Unsubscribe: streams.unsubscribe,
    Stop: anyone.stop,
    History: player.history,
    Resend: player.resend,
    Clear: player.clear,
    Wait: player.wait,
    NoWait: player.no_wait,
    Practice: anyone.practice_,
    Substitute: anyone.substitute,
    Record: anyone.record,
}
GM_HANDLERS: Mapping[type[GmCommand], GmHandler] = {
    Extend: gm.extend,
    Deadline: gm.deadline,
    Order: gm.order,
    Plot: gm.plot,
    Process: gm.process,
    Preview: gm.preview,
    Pause: gm.pause,
    Resume: gm.resume,
    SetFigure: gm.set_figure,
    Replace: gm.replace_seat,
    Drop: gm.drop,
    Rollback: gm.rollback,
    OpenSignups: gm.open_signups,
    Start: gm.start,
    SeasonCommand: season.season,
}
# What a GM command may be refused with: ours, and the domain's own errors (each a ValueError;
# its words are `bot.letters.refusals.refusal`'s: a bad time's from its facts, the others' as
# they say them, made from templates or, from `rules/`, the rule's own sentence).
_GM_REFUSALS = (Refused, turns.GameError, seasons.SeasonRequestError, DeadlineError, FigureError, OptionError)


# -- player commands ---------------------------------------------------------------------------


def run(ctx: CommandContext, command: PlayerCommand) -> Reply:
    """Carry out one player command: its reply, or its refusal as its reply."""
    try:
        return PLAYER_HANDLERS[type(command)](ctx, command)
    except Refused as refused:
        return Reply((refused.answer,) if refused.answer is not None else (), label=refused.label)


# -- GM commands -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GmResult:
    ok: bool
    verb: str
    game: str
    text: str
    extra: str = ""  # PREVIEW: the preview itself, for the CLI to print
    letter: Letter | None = None  # the confirmation, when not mailed at once (execute(deliver=False))
    news: tuple[gm.News, ...] = ()  # what the players are to be told, when not told at once (the same)
    resolved: tuple[NewTurn, ...] = ()  # PROCESS: the turn resolved, for the caller to publish after its commit


def run_gm(
    shell: Shell, session: Session, inbound: Inbound, command: GmCommand, *, not_run: str | None = None
) -> GmResult:
    """A GM command from a mail (the intake calls this for each one): its result, whose letter
    (for the GM's registered address) the intake sends as part of its one answer to the mail,
    and whose news it tells the players together with the rest of the mail's (one mail per
    player per GM mail; from the CLI, `execute` sends both at once). `not_run`: the command is
    not carried out, and is answered and audited as refused for that reason."""
    return execute(
        shell,
        session,
        command.verb,
        command.game,
        command.args,
        actor=inbound.sender,
        via="mail",
        message_id=inbound.message_id,
        line=echo(command.line),
        deliver=False,
        not_run=not_run,
    )


def leftover(gm_of: Sequence[Game], text: str, *, hints: str = "") -> Notice:
    """Lines of a GM's mail that were neither GM commands nor orders: never dropped silently,
    with what each most likely meant (`hints`, did you mean). The answer goes to the GM's
    registered address, whatever the mail's From."""
    games = sorted(g.name for g in gm_of)
    return Notice(
        ToGm(gm_of[0]),
        say("commands_gm_leftover_title"),
        say("commands_gm_leftover", quoted=quote_lines(text), hints=hints, games=games, example=Extend.example),
        kind="gm_leftover",
    )


def execute_words(
    shell: Shell, session: Session, verb: str, game: str, words: list[str], *, actor: str, via: str = "cli"
) -> GmResult:
    """A GM command given as words (the CLI): checked against the same syntax as by mail."""
    command = GM_VERBS.get(verb.upper())
    if command is None:
        raise Refused(say("gm_refused", why="unknown_command", verb=repr(verb), known=list(GM_VERBS)))
    args = command.split(words)
    if args is None:
        raise Refused(say("gm_refused", why="syntax", syntax=command.syntax, example=command.example))
    line = " ".join([command.verb, game, *words])
    return execute(shell, session, command.verb, game.lower(), args, actor=actor, via=via, line=line)


def _carry_out(session: Session, action: gm.GmAction, verb: str, args: tuple[str, ...]) -> tuple[bool, str]:
    """Run the GM command's handler in a savepoint: (done, what it says). A refusal rolls back
    whatever the handler changed, and clears what it meant to undo, mail or show."""
    command = GM_VERBS.get(verb)
    savepoint = session.begin_nested()
    try:
        if command is None:
            raise Refused(say("gm_refused", why="unknown_command", verb=verb, known=[]))
        text = GM_HANDLERS[command](action, args)
        savepoint.commit()
        return True, text
    except _GM_REFUSALS as exc:
        savepoint.rollback()
        action.undo, action.mail, action.extra = None, None, ""
        return False, refusal(exc)


def _audit(
    game_id: int | None,
    actor: str,
    via: str,
    message_id: str,
    line: str,
    outcome: str,
    at: datetime,
    undo: dict[str, object] | None,
) -> GmAudit:
    """The audit row of one GM command (the actor and Message-ID capped to their columns)."""
    return GmAudit(
        game_id=game_id,
        actor=actor[:320],
        via=via,
        message_id=message_id[:998],
        command=line,
        outcome=outcome,
        created_at=at,
        undo=undo,
    )


def execute(
    shell: Shell,
    session: Session,
    verb: str,
    game_name: str,
    args: tuple[str, ...],
    *,
    actor: str,
    via: str,
    message_id: str = "",
    line: str = "",
    in_reply_to: str = "",
    deliver: bool = True,
    not_run: str | None = None,
) -> GmResult:
    """Carry out one GM command, audit it, and confirm it to the GM: mailed at once, or (with
    `deliver=False`, a command from a mail) returned as `GmResult.letter` for the intake's answer.
    `not_run`: why it is not carried out; it is refused with that reason, nothing changed."""
    verb = verb.upper()
    line = line or " ".join([verb, game_name, *args])
    game = store.find_game_row(session, game_name)
    if game is None:
        text = say("gm_refused", why="no_game", game=game_name)
        session.add(_audit(None, actor, via, message_id, line, "refused: " + text, shell.now(), None))
        return GmResult(False, verb, game_name, text)
    action = gm.GmAction(shell, session, game, shell.now(), actor, via)
    ok, text = (False, not_run) if not_run is not None else _carry_out(session, action, verb, args)
    session.add(
        _audit(game.id, actor, via, message_id, line, ("done: " if ok else "refused: ") + text, action.now, action.undo)
    )
    log.info("GM %s via %s: %s -> %s: %s", actor, via, line, "done" if ok else "refused", text)
    rendered = action.mail or shell.renderer.render(
        "gm_result",
        {
            "bot": bot_context(shell),
            "game_name": game.name,
            "verb": verb,
            "line": line,
            "ok": ok,
            "text": text,
            "via": via,
            "when": format_local(action.now, game.timezone),
            "timezone": game.timezone,
            "actor": actor,
        },
    )
    if ok:  # what the answer claims of the open turn (the deadline, PREVIEW's orders that count)
        rendered = rendered.claiming(*action.claims)
    letter = Letter(ToGm(game), rendered, "gm_" + verb.lower())
    news = tuple(action.news) if ok else ()
    resolved = tuple(action.resolved) if ok else ()
    if not deliver:
        return GmResult(ok, verb, game.name, text, action.extra, letter, news, resolved)
    letters.post(shell, session, letter.to, letter.rendered, kind=letter.kind, in_reply_to=in_reply_to)
    gm.tell_players(shell, session, game, news, action.now)
    return GmResult(ok, verb, game.name, text, action.extra, resolved=resolved)


__all__ = ["GM_HANDLERS", "PLAYER_HANDLERS", "GmResult", "execute", "execute_words", "leftover", "run", "run_gm"]
