"""Mail that proved a seat or the GM role: its GM commands, then its player commands, then its orders.

Each command's answer joins the mail's answers (one answer per mail, sent by the pipeline); a
command refused is that command's answer, the others go on; a refusal of the whole mail raises
`Refused`.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from bot import store
from bot.answers import Done, Notice, Refused
from bot.commands import MAX_COMMANDS, PLAYER_COMMANDS, MailCommands, gm, registry, suggest
from bot.commands.handlers import CommandContext, which_game
from bot.games import deadline, turns
from bot.games.identity import Who
from bot.intake import orders
from bot.intake.batch import Batch, Mail
from bot.letters import ToSeat, claims
from bot.letters.words import say
from bot.models import Reason
from bot.outlook import what_counts
from bot.safe_text import echo, quote_lines

_VERBS_TAKING_A_GAME = {c.verb for c in PLAYER_COMMANDS if c.takes_game}
MAX_AT_ONCE = 50  # turns resolved one after another after a GM mail (the deadline's `limit_per_game`)


def _gm_hints(text: str, who: Who) -> str:
    """What each line of a GM's mail not understood most likely meant (issue 17, did you mean)."""
    games = sorted(g.name for g in who.gm_of)
    known = suggest.vocabulary(gm=True, games=games)
    hints = []
    for line in text.splitlines()[:20]:
        hint = suggest.gm_game_hint(line, games) or known.suggest(line)
        if hint:
            hints.append(f'"{echo(line, 80)}": {hint}')
    return ("\n\n" + "\n".join(hints)) if hints else ""


def _games_hint(line: str, who: Who) -> str:
    """For a command that names a game, given without one (or a bad one): the sender's games."""
    words = line.split()
    names = sorted({g.name for g in who.games} | {g.name for g in who.gm_of})
    if not words or words[0].upper() not in _VERBS_TAKING_A_GAME or not names:
        return ""
    return f" (your games: {', '.join(names)})"


def _resolve_completed(batch: Batch, session: Session, name: str, news: dict[str, list[gm.News]]) -> None:
    """A GM command that completes a turn that resolves early (the last ORDER, a RESUME with
    every order in, a seat handed to a robot or dropped): the turn is resolved now, in the mail's
    transaction, as PROCESS does, and the players are told so with the news, never "due ...".
    A turn that follows needing no orders is run at once too, as the deadline would."""
    game = batch.find_game(session, name)
    if game is None:
        return
    for _ in range(MAX_AT_ONCE):
        session.flush()
        turn = store.open_turn(session, game)
        if turn is None or not turns.is_due(session, game, turn, batch.shell.now()):
            return
        rules = turns.rules_of(game)
        state = rules.load_state(turn.state)
        subs = store.turn_submissions(session, turn)
        said = tuple(  # each seat's orders, now used: "the turn is resolved"
            claims.of_turn(game, turn, claims.counts(s.name, what_counts(rules, state, s, on_file)), resolved=True)
            for s in store.mailed_seats(game)
            if s.name in rules.expected_players(state)
            for on_file in [store.orders_on_file(rules, state, s, subs.get(s.id, ()))]
        )
        _writes, resolved = deadline.resolve_writes(batch.shell, session, game, turn)
        batch.rows.resolved.append(resolved)
        if news[name] and rules.expected_players(state):  # else the results are the news
            news[name].append(
                gm.News(
                    say("early_gm_last_title", label=turn.label), say("early_gm_last", label=turn.label), claims=said
                )
            )


def act(batch: Batch, session: Session, mail: Mail, who: Who, commands: MailCommands) -> Done:
    """GM commands, then player commands, then the orders (a body with none: the subject's)."""
    inbound = mail.inbound
    seat = who.seat
    game = seat.game if seat else (who.gm_of[0] if len(who.gm_of) == 1 else None)
    handled: list[str] = []
    if commands.gm:
        news: dict[str, list[gm.News]] = {}  # by game: told at once, after the mail's every command
        for gm_command in commands.gm:
            result = registry.run_gm(batch.shell, session, inbound, gm_command)
            handled.append(f"{result.verb} {'done' if result.ok else 'refused'}")
            if result.letter is not None:
                mail.answers.append(result.letter)
            news.setdefault(result.game, []).extend(result.news)
            batch.rows.resolved.extend(result.resolved)  # published once the batch is committed
        for name in list(news):
            _resolve_completed(batch, session, name, news)
        for name, told in news.items():
            game_row = batch.find_game(session, name) if told else None
            if game_row is not None:
                gm.tell_players(batch.shell, session, game_row, told, batch.shell.now())
        if seat is None and commands.orders_text.strip():  # e.g. a command naming another GM's game
            mail.answers.append(
                registry.leftover(who.gm_of, commands.orders_text, hints=_gm_hints(commands.orders_text, who))
            )
    context = CommandContext(batch.shell, session, inbound, who, game, seat)
    for command in commands.player:
        reply = registry.run(context, command)
        mail.answers.extend(reply.answers)
        mail.resolves.extend(reply.resolves)
        if reply.label:
            handled.append(reply.label)
        handled.append(type(command).__name__.upper())
    problems = list(commands.problems)
    if problems:
        text = "\n".join(f'"{echo(p.line)}": {p.reason}{_games_hint(p.line, who)}' for p in problems)
        if commands.more_problems:
            text += f"\n... and {commands.more_problems} more lines not understood."
        mail.answers.append(Notice(who.holder(inbound), "Command not understood", text, game=game))
    if commands.over:
        mail.answers.append(
            Notice(
                who.holder(inbound),
                "Not done",
                (
                    f"{commands.over} more command{'s' if commands.over != 1 else ''} of your mail "
                    f"{'were' if commands.over != 1 else 'was'} not carried out: at most {MAX_COMMANDS} commands a "
                    "mail. Send the rest in another mail."
                ),
                game=game,
            )
        )
    if commands.repeated:
        mail.answers.append(
            Notice(
                who.holder(inbound),
                "Repeated commands",
                (
                    f"{commands.repeated} line{'s' if commands.repeated != 1 else ''} of your mail repeated a command "
                    "given above: each command was carried out, and is answered, once."
                ),
                error=False,
                game=game,
            )
        )
    if seat is not None and not commands.orders_text.strip() and not handled and not problems:
        in_subject = orders.subject_orders(batch, session, seat, inbound.subject)
        if in_subject:  # a body with no order and no command: a one-tap reply (issue 19)
            return orders.take_orders(batch, session, mail, seat, in_subject)
    if commands.orders_text.strip() and not (commands.gm and not seat):
        if seat is None:
            if who.gm_of and not who.seat:
                raise Refused(
                    "GM mail with lines not understood",
                    Notice(
                        who.holder(inbound),
                        "Lines not understood",
                        "These lines are neither GM commands nor orders:\n\n"
                        + quote_lines(commands.orders_text)
                        + _gm_hints(commands.orders_text, who)
                        + "\n\nSend HELP for the GM commands.",
                        game=game,
                    ),
                    reason=Reason.NOT_UNDERSTOOD,
                    game=game,
                )
            raise Refused("which game? ambiguous", which_game(inbound, who), reason=Reason.AMBIGUOUS_GAME)
        return orders.take_orders(batch, session, mail, seat, commands.orders_text)
    if not handled and not problems and seat is not None and inbound.text.strip():
        # Greetings, thanks, a sign-off and nothing else (issue 30: no [ERROR] for "Thanks, got
        # it!"): what stands, said again. (A mail with no readable text at all is refused below:
        # its sender may believe it carried orders.)
        return Done(
            "a note: no orders",
            Reason.NOTE,
            (
                Notice(
                    ToSeat(seat),
                    "Your note",
                    "Thank you: there were no orders in it, so nothing changed. "
                    + orders.what_stands(batch, session, seat),
                    kind="note",
                    error=False,
                ),
            ),
            game=game,
            seat=seat,
        )
    if not handled and not problems:
        raise Refused(
            "empty mail",
            Notice(
                who.holder(inbound),
                "Nothing to do",
                "Your mail held no orders and no commands. Send HELP for what you can write.",
                game=game,
            ),
            reason=Reason.EMPTY,
            game=game,
            seat=seat,
        )
    return Done("commands: " + ", ".join(handled), Reason.COMMANDS, game=game, seat=seat, refused=bool(problems))


__all__ = ["act"]
