"""Mail that proved a seat or the GM role: its GM commands, then its player commands, then its orders.

Each command's answer joins the mail's answers (one answer per mail, sent by the pipeline); a
command refused is that command's answer, the others go on; a refusal of the whole mail raises
`Refused`.
"""

from __future__ import annotations

import dataclasses
import logging

from sqlalchemy.orm import Session

from bot import outlook, store
from bot.commands import MAX_COMMANDS, PLAYER_COMMANDS, MailCommands, gm, registry, suggest
from bot.commands.grammar import CommandProblem, Order, Plot, Process, SetFigure, is_courtesy
from bot.commands.handlers import CommandContext, which_game
from bot.fate import Done, Ignored, Notice, Refused
from bot.games import attention, deadline, turns
from bot.games.archive import NewTurn
from bot.games.identity import Who
from bot.intake import orders
from bot.intake.batch import Batch, Mail
from bot.letters import ToGm, ToSeat, claims
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.models import AttentionKind, Game, Reason, Seat
from bot.outlook import what_counts
from bot.safe_text import echo, quote_lines
from bot.shell import Shell

log = logging.getLogger("flagman.inbound")

_VERBS_TAKING_A_GAME = {c.verb for c in PLAYER_COMMANDS if c.takes_game}
MAX_AT_ONCE = 50  # turns resolved one after another after a GM mail (the deadline's `limit_per_game`)


def _gm_hints(text: str, who: Who) -> str:
    """What each line of a GM's mail not understood most likely meant (did you mean)."""
    games = sorted(g.name for g in who.gm_of)
    known = suggest.vocabulary(gm=True, games=games)
    hints = []
    for line in text.splitlines()[:20]:
        hint = suggest.gm_game_hint(line, games) or known.suggest(line)
        if hint:
            hints.append({"line": echo(line, 80), "hint": hint})
    return say("intake_gm_hints", hints=hints) if hints else ""


def _games_hint(line: str, who: Who) -> list[str]:
    """For a command that names a game, given without one (or a bad one): the sender's games."""
    words = line.split()
    names = sorted({g.name for g in who.games} | {g.name for g in who.gm_of})
    if not words or words[0].upper() not in _VERBS_TAKING_A_GAME or not names:
        return []
    return names


def _resolve_completed(
    batch: Batch, session: Session, mail: Mail, name: str, news: dict[str, list[gm.News]], *, processed: bool
) -> None:
    """`resolve_completed` for a game a GM's mail commanded; what it resolved is published once
    the batch is committed. The turn open before it that it resolved (the mail's commands, not a
    PROCESS, completed it) is told to the GM in the answer to the mail."""
    game = batch.find_game(session, name)
    if game is None:
        return
    before = store.open_turn(session, game)
    resolved = resolve_completed(batch.shell, session, game, news[name])
    batch.rows.resolved.extend(resolved)
    if resolved and not processed and before is not None and before.resolved_at is not None:
        mail.answers.append(
            Notice(
                ToGm(game),
                say("gm_turn_completed_title", label=before.label),
                say("gm_turn_completed", label=before.label),
                kind="gm_turn_completed",
                error=False,
                game=game,
            )
        )


def resolve_completed(shell: Shell, session: Session, game: Game, told: list[gm.News]) -> list[NewTurn]:
    """A GM command (by mail or from the command line) that completes a turn that resolves early
    (the last ORDER, a RESUME with every order in, a seat handed to a robot or dropped): the
    turn is resolved now, in the command's transaction, as PROCESS does, and the players are
    told so with the news (`told`, extended here), never "due ...". A turn that follows needing
    no orders is run at once too, as the deadline would. Returns the turns resolved, to publish
    once committed."""
    out: list[NewTurn] = []
    for _ in range(MAX_AT_ONCE):
        session.flush()
        turn = store.open_turn(session, game)
        if turn is None or not turns.is_due(
            session, game, turn, shell.now(), pace=turns.practice_pace(shell.settings.practice)
        ):
            return out
        rules = turns.rules_of(game)
        state = rules.load_state(turn.state)
        subs = store.turn_submissions(session, turn)
        said = tuple(  # each seat's orders, now used: "the turn is resolved"
            claims.of_turn(game, turn, claims.counts(s.name, what_counts(rules, state, s, on_file)), resolved=True)
            for s in store.mailed_seats(game)
            if s.name in rules.expected_players(state)
            for on_file in [outlook.on_file(rules, state, s, subs.get(s.id, ()))]
        )
        _writes, resolved = deadline.resolve_writes(shell, session, game, turn)
        out.append(resolved)
        if told and rules.expected_players(state):  # else the results are the news
            told.append(
                gm.News(
                    say("early_gm_last_title", label=turn.label),
                    say("early_gm_last", label=turn.label),
                    kind=gm.RESOLVED,
                    claims=said,
                )
            )
    return out


def _tell(batch: Batch, session: Session, name: str, news: dict[str, list[gm.News]]) -> None:
    """Tell the players of game `name` what the GM's mail has done in it so far (one mail per
    player), and forget it: nothing is told twice."""
    game_row = batch.find_game(session, name)
    told = news.pop(game_row.name, []) if game_row is not None else []
    if game_row is not None and told:
        gm.tell_players(batch.shell, session, game_row, told, batch.shell.now())


def act(batch: Batch, session: Session, mail: Mail, who: Who, commands: MailCommands) -> Done:
    """GM commands, then player commands, then the orders (a body with none: the subject's)."""
    inbound = mail.inbound
    seat = who.seat
    game = seat.game if seat else (who.gm_of[0] if len(who.gm_of) == 1 else None)
    handled: list[str] = []
    if seat is None and who.gm_of and commands.orders_text.strip():
        # A GM's "thanks!" or "cheers" between the commands is no line not understood.
        commands = dataclasses.replace(
            commands, orders_text="\n".join(line for line in commands.orders_text.splitlines() if not is_courtesy(line))
        )
    if commands.gm:
        _run_gm_commands(batch, session, mail, who, commands, handled)
    _run_player_commands(batch, session, mail, who, game, commands, handled)
    if seat is not None and not seat.active and commands.orders_text.strip():
        # The mail gave the seat up (RESIGN): the rest of its words are a farewell, not orders
        # of a seat that has none to send any more (one answer per mail: the RESIGN's).
        log.info("mail %s: words beside a RESIGN not read as orders", inbound.message_id)
        _pass_on_farewell(batch, session, mail, seat, commands.orders_text)
        commands = dataclasses.replace(commands, orders_text="")
    problems = list(commands.problems)
    _say_what_was_not_run(mail, who, game, commands)
    if seat is not None and not commands.orders_text.strip() and not handled and not problems:
        in_subject = orders.subject_orders(batch, session, seat, inbound.subject)
        if in_subject:  # a body with no order and no command: a one-tap reply
            return orders.take_orders(batch, session, mail, seat, in_subject)
    if commands.orders_text.strip() and not (commands.gm and not seat):
        if seat is None:
            if who.gm_of and not who.seat:
                raise Refused(
                    say("mail_record", why="gm_lines"),
                    Notice(
                        who.holder(inbound),
                        say("intake_gm_lines_title"),
                        say(
                            "intake_gm_lines",
                            quoted=quote_lines(commands.orders_text),
                            hints=_gm_hints(commands.orders_text, who),
                        ),
                        game=game,
                    ),
                    reason=Reason.NOT_UNDERSTOOD,
                    game=game,
                )
            raise Refused(
                say("mail_record", why="which_game", ambiguous=True),
                which_game(inbound, who),
                reason=Reason.AMBIGUOUS_GAME,
            )
        return orders.take_orders(batch, session, mail, seat, commands.orders_text)
    return _no_orders(batch, session, mail, who, game, handled, bool(problems))


def _run_gm_commands(
    batch: Batch, session: Session, mail: Mail, who: Who, commands: MailCommands, handled: list[str]
) -> None:
    """The mail's GM commands, each answered; the players told what changed, once per game after
    every command (and before the results a PROCESS sends); words left over answered when the
    sender has no seat."""
    inbound = mail.inbound
    seat = who.seat
    news: dict[str, list[gm.News]] = {}  # by game: told at once, after the mail's every command
    processed: set[str] = set()  # the games a PROCESS of the mail was run for
    # By game: the first ORDER, PLOT or SET of the mail refused. A PROCESS below it is not run
    # (docs/DESIGN.md, "The GM's mail"): the GM meant the turn resolved with it.
    refused: dict[str, str] = {}
    for gm_command in commands.gm:
        not_run = None
        if isinstance(gm_command, Process) and gm_command.game.lower() in refused:
            not_run = say(
                "gm_refused", why="after_refused", verb=refused[gm_command.game.lower()], game=gm_command.game
            )
        elif isinstance(gm_command, Process):
            processed.add(gm_command.game)
            # What the players were told by the mail's commands so far (a ROLLBACK's reopened
            # turn, an ORDER entered for them) reaches them before the results this PROCESS
            # sends: every mail is true when it is read, in the order it arrives.
            _tell(batch, session, gm_command.game, news)
        result = registry.run_gm(batch.shell, session, inbound, gm_command, not_run=not_run)
        if not result.ok and isinstance(gm_command, Order | Plot | SetFigure):
            refused.setdefault(gm_command.game.lower(), gm_command.verb)
        handled.append(command_label(result.verb, came=Came.DONE if result.ok else Came.REFUSED))
        if result.letter is not None:
            mail.answers.append(result.letter)
        news.setdefault(result.game, []).extend(result.news)
        batch.rows.resolved.extend(result.resolved)  # published once the batch is committed
    for name in list(news):
        _resolve_completed(batch, session, mail, name, news, processed=name in processed)
    for name in list(news):
        _tell(batch, session, name, news)
    if seat is None and commands.orders_text.strip():  # e.g. a command naming another GM's game
        mail.answers.append(
            registry.leftover(who.gm_of, commands.orders_text, hints=_with_a_gap(_gm_hints(commands.orders_text, who)))
        )


def _run_player_commands(
    batch: Batch,
    session: Session,
    mail: Mail,
    who: Who,
    game: Game | None,
    commands: MailCommands,
    handled: list[str],
) -> None:
    """The mail's player commands, each answered, in order."""
    orders_follow = who.seat is not None and bool(commands.orders_text.strip())
    context = CommandContext(
        batch.shell, session, mail.inbound, who, game, who.seat, orders_follow, words=commands.orders_text
    )
    for command in commands.player:
        reply = registry.run(context, command)
        mail.answers.extend(reply.answers)
        mail.resolves.extend(reply.resolves)
        if reply.label:
            handled.append(reply.label)
        handled.append(type(command).__name__.upper())


def _pass_on_farewell(batch: Batch, session: Session, mail: Mail, seat: Seat, text: str) -> None:
    """The words beside a RESIGN, passed on to the GM (docs/DESIGN.md 10: a farewell is words for
    the GM): the GM's one mail about the resignation quotes them (`bot.games.signups.resign`),
    and the digest lists them under "Needs your attention". A practice race has no GM: nobody."""
    game = seat.game
    if game.practice or not text.strip():
        return
    attention.add(session, game, AttentionKind.NOTE, text, at=batch.shell.now(), seat=seat)


def _say_what_was_not_run(mail: Mail, who: Who, game: Game | None, commands: MailCommands) -> None:
    """A notice each for the command lines not understood, the commands over the limit, and
    the commands repeated."""
    inbound = mail.inbound
    problems = list(commands.problems)
    if problems:
        text = say(
            "intake_command_problems",
            problems=[
                {"line": echo(p.line), "reason": _reason(p, who), "games": _games_hint(p.line, who)} for p in problems
            ],
            more=commands.more_problems,
        )
        verbs = sorted({p.verb for p in problems})
        title = (
            say("intake_command_incomplete_title", verbs=verbs, bare=all(len(p.line.split()) == 1 for p in problems))
            if all(p.verb for p in problems)
            else say("intake_command_problems_title")
        )
        mail.answers.append(Notice(who.holder(inbound), title, text, game=game))
    if commands.over:
        mail.answers.append(
            Notice(
                who.holder(inbound),
                say("intake_over_title"),
                say("intake_over", over=commands.over, most=MAX_COMMANDS),
                game=game,
            )
        )
    if commands.repeated:
        mail.answers.append(
            Notice(
                who.holder(inbound),
                say("intake_repeated_title"),
                say("intake_repeated", repeated=commands.repeated),
                error=False,
                game=game,
            )
        )


# The player commands about a seat's own orders in its open turn (`bot.commands.player`): a GM
# without a seat is told what the GM has instead, never how to write a command then refused.
_SEAT_ORDERS_VERBS = frozenset({"CLEAR", "WAIT", "NOWAIT"})


def _reason(problem: CommandProblem, who: Who) -> str:
    """What the answer says of a command line that cannot be run: how to write it; for a GM
    without a seat, of a command about a seat's own orders, what it is and the GM's instead."""
    if problem.verb in _SEAT_ORDERS_VERBS and who.seat is None and who.gm_of:
        return say("commands_for_players", verb=problem.verb)
    return problem.reason


def _no_orders(
    batch: Batch, session: Session, mail: Mail, who: Who, game: Game | None, handled: list[str], problems: bool
) -> Done:
    """A mail with no orders: its commands done; or, with none, a note (what stands, said
    again), a GM's courtesy line (ignored), or an empty mail (refused)."""
    inbound = mail.inbound
    seat = who.seat
    if not handled and not problems and seat is not None and inbound.text.strip():
        # Greetings, thanks, a sign-off and nothing else (no [ERROR] for "Thanks, got
        # it!"): what stands, said again. (A mail with no readable text at all is refused below:
        # its sender may believe it carried orders.)
        return Done(
            say("mail_record", why="note", for_gm=False, no_gm=False),
            Reason.NOTE,
            (
                Notice(
                    ToSeat(seat),
                    say("intake_note_title", for_gm=False, no_gm=False),
                    say(
                        "intake_note",
                        for_gm=False,
                        no_gm=False,
                        readings=[],
                        stands=orders.what_stands(batch, session, seat),
                    ),
                    kind="note",
                    error=False,
                    claims=orders.what_stands_claims(batch, session, seat),
                ),
            ),
            game=game,
            seat=seat,
        )
    if not handled and not problems and seat is None and inbound.text.strip():
        # A GM's "thanks!" and nothing else: words to a person, nothing to answer.
        raise Ignored(say("mail_record", why="gm_courtesy"), reason=Reason.NOTE, game=game)
    if not handled and not problems:
        raise Refused(
            say("mail_record", why="empty"),
            Notice(who.holder(inbound), say("intake_empty_title"), say("intake_empty"), game=game),
            reason=Reason.EMPTY,
            game=game,
            seat=seat,
        )
    return Done(
        say("mail_record", why="commands", handled=handled),
        Reason.COMMANDS,
        game=game,
        seat=seat,
        refused=bool(problems),
    )


def _with_a_gap(hints: str) -> str:
    """Hints as a paragraph of their own under what they follow ("" when there are none)."""
    return "\n\n" + hints if hints else ""


__all__ = ["act"]
