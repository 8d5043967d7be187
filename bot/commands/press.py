"""PRESS <game> ALL|<seat>: a message from a player to the other players, or to one of them
(mail-interface.md, "Player commands"), passed on by the bot; the GM gets a copy.

The GM chooses per game what press may do (`Game.press`, `bot.models.PressMode`): none, signed
(the message names its sender) or anonymous (the players are not told who sent it; the GM's
copy says). The message is the lines under the command, up to ENDPRESS (bot.commands.grammar),
each passed on as one printable line (`bot.safe_text`), quoted with "> " so that a reply quoting it
without "> " (Outlook) carries no order line of the bot's making. Each press mail goes to its
recipient's registered address with that seat's own reply address (bot.letters.ToSeat) and
answers no mail (no In-Reply-To: nothing of the sender's mail reaches the recipients). A GM
may send press too (always signed, as the GM); ``PRESS <game> GM`` goes to the GM alone.
"""

from __future__ import annotations

from bot import letters, store
from bot.commands.grammar import PRESS_ALL, PRESS_GM, Press
from bot.commands.handlers import CommandContext, Reply
from bot.fate import Notice, Refused
from bot.games import turns
from bot.letters import ToGm, ToSeat
from bot.letters.context import game_context
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.models import Game, GameStatus, PressMode, Seat
from bot.safe_text import echo

PRESS_LINE_CAP = 200  # characters of one line of a message, as passed on


def quoted(message: str) -> str:
    """The message as press mail shows it: each line echoed (one printable line, capped) and quoted."""
    return "\n".join(
        "    > " + echo(line, PRESS_LINE_CAP) if line.strip() else "    >" for line in message.splitlines()
    )


def _refused(ctx: CommandContext, why: str, title: dict[str, object], **words: object) -> Refused:
    """PRESS refused, and why: the title's words and the text's (the title's and `words`)."""
    return ctx.refuse(
        say("commands_press_refused_title", why=why, **title),
        say("commands_press_refused", why=why, **title, **words),
        kind="press",
        label=command_label("PRESS", came=Came.REFUSED),
    )


def press(ctx: CommandContext, command: Press) -> Reply:
    session = ctx.session
    game = store.find_game_row(session, command.game, with_seats=True)
    seat = ctx.seat_in(game) if game is not None else None
    as_gm = game is not None and seat is None and any(g.id == game.id for g in ctx.who.gm_of)
    if game is None or (seat is None and not as_gm):
        raise _refused(ctx, "no_seat", {"game": command.game})
    if game.status == GameStatus.FINISHED:
        raise _refused(ctx, "over", {"game": game.name})
    mode = PressMode(game.press)
    if mode is PressMode.NONE and not as_gm:
        raise _refused(ctx, "none", {"game": game.name})
    if not command.message.strip():
        raise _refused(ctx, "empty", {"game": game.name}, to=command.to.upper())
    recipients, audience = _recipients(ctx, game, seat, command.to)
    signed = as_gm or mode is PressMode.SIGNED
    sender = "the GM" if as_gm else (f"{seat.name} ({seat.player.name})" if signed and seat else "a player")
    text = quoted(command.message)
    answer_to = seat.name if seat and signed else ("GM" if as_gm else "ALL")
    _pass_on(ctx, game, recipients, command, text, sender=sender, signed=signed, answer_to=answer_to)
    if not as_gm:  # the GM's copy, naming the sender whatever the mode
        letters.notice(
            ctx.shell,
            session,
            ToGm(game),
            say("commands_press_gm_copy_title", sender=seat.name if seat else "?", audience=audience),
            say(
                "commands_press_gm_copy",
                signed=signed,
                game=game.name,
                sender=seat.name if seat else "?",
                player=seat.player.name if seat else "?",
                audience=audience,
                count=len(recipients),
                text=text,
            ),
            kind="press_gm",
        )
    told = ", ".join(r.name for r in recipients) if recipients and command.to != PRESS_ALL else audience
    how = "gm" if as_gm else ("signed" if signed else "anonymous")
    done = say(
        "commands_press_sent",
        told=told,
        game=game.name,
        count=len(recipients),
        how=how,
        text=text,
        cut=command.cut,
    )
    return Reply(
        (Notice(ctx.to, say("commands_press_sent_title", game=game.name), done, kind="press", error=False),),
        label=command_label("PRESS", game.name, command.to),
    )


def _recipients(ctx: CommandContext, game: Game, seat: Seat | None, to: str) -> tuple[list[Seat], str]:
    """The seats a press message to `to` goes to (ALL: every other mailed seat; GM: none, the
    GM's copy is the message) and how the GM's copy names them; refused when `to` names no
    other active player's seat."""
    # (A robot reads no press: it is never mailed.)
    others = [s for s in store.mailed_seats(game) if s is not seat and s.player.address != game.gm_address]
    if to == PRESS_ALL:
        return others, "every player"
    if to == PRESS_GM:
        return [], "the GM"
    target = store.seat_named(game, to)
    if target is None or not target.active or target is seat or target.robot:
        raise _refused(ctx, "no_target", {"game": game.name, "to": to}, seats=", ".join(s.name for s in others))
    return [target], target.name


def _pass_on(
    ctx: CommandContext,
    game: Game,
    recipients: list[Seat],
    command: Press,
    text: str,
    *,
    sender: str,
    signed: bool,
    answer_to: str,
) -> None:
    """Post the press mail to each recipient, with that seat's own reply address."""
    rules = turns.rules_of(game)
    for recipient in recipients:
        values = game_context(ctx.shell, game, rules)
        values.update(
            {
                "greeting": recipient.player.name,
                "sender": sender,
                "signed": signed,
                "audience": "you" if command.to != PRESS_ALL else "every player",
                "message": text,
                "cut": command.cut,
                "answer_to": answer_to,
                "timezone": recipient.player.timezone,
            }
        )
        letters.post(
            ctx.shell,
            ctx.session,
            ToSeat(recipient),
            ctx.shell.renderer.render("press", values, game=game.kind),
            kind="press",
        )


__all__ = ["PRESS_LINE_CAP", "quoted"]
