"""What each player command does: one handler per command class of `bot.commands.grammar`.

HELP, STATUS, ORDERS, JOIN and RESIGN are here; the handlers of the other commands are in
`bot.commands.anyone` (for anyone: LIST, RULES, OBSERVE, UNOBSERVE, CONFIRM),
`bot.commands.press` (PRESS), `bot.commands.account` (TIMEZONE, ADDRESS, VACATION) and
`bot.commands.streams` (PING, CALENDAR, REMINDERS, UNSUBSCRIBE); `bot.commands.registry`
binds each to its command. What a handler gets and gives (`CommandContext`, `Reply`) is
`bot.commands.handlers`.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from bot import letters, outlook, store
from bot.commands import gm
from bot.commands.grammar import (
    GM_COMMANDS,
    PLAYER_COMMANDS,
    Clear,
    Help,
    History,
    Join,
    NoWait,
    Resend,
    Resign,
    ShowOrders,
    Status,
    Wait,
)
from bot.commands.handlers import CommandContext, Reply, which_game
from bot.facts import Claims
from bot.fate import Letter, Notice, Refused
from bot.games import attention, season_tiers, signups, summary, turns
from bot.letters import Addressee, ToGm, ToSeat, claims
from bot.letters.context import (
    bot_context,
    deadline_text,
    due_by,
    game_context,
    orders_block,
    practice_terms,
    seat_labels,
)
from bot.letters.defaults import gets
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.models import Game, GameStatus, OrderSubmission, Outbox, Player, Seat, Turn
from bot.outlook import what_counts
from bot.schedules import format_local
from rules.api import AnyGame, Event, GameState, Resolution, Viewer


def help_(ctx: CommandContext, command: Help) -> Reply:
    """The commands, for anyone and for players (a stranger gets this too, not a refusal);
    for a player, the order syntax of their game now; for a GM, the GM commands."""
    session, who = ctx.session, ctx.who
    seat = who.seat
    to = ctx.to
    values: dict[str, object] = {
        "bot": bot_context(ctx.shell),
        "greeting": letters.greeting(to),
        "game_name": "",
        "game_title": "",
        "game_help": "",
        "turn_label": "",
        "games": sorted({g.name for g in who.games}),
        "stranger": ctx.stranger,
        "anyone_help": [c for c in PLAYER_COMMANDS if c.for_anyone],
        "player_help": [c for c in PLAYER_COMMANDS if not c.for_anyone],
        "gm_help": list(GM_COMMANDS) if who.gm_of else [],
        "gm_games": [g.name for g in who.gm_of],
    }
    if seat is not None:
        rules, state, _ = turns.current_state(session, seat.game)
        values.update(
            game_name=seat.game.name,
            game_title=rules.title,
            turn_label=rules.turn_label(state),
            game_help=rules.order_help(state, seat.name)
            if seat.name in rules.expected_players(state)
            else "You have no orders to send now.",
            timezone=letters.zone(to),
        )
    return Reply((Letter(to, ctx.shell.renderer.render("help", values), "help", game=seat.game if seat else None),))


def status(ctx: CommandContext, command: Status) -> Reply:
    session, game, seat = ctx.session, ctx.game, ctx.seat
    if command.game:
        game = _game_of(ctx, command.game, "STATUS")
        seat = ctx.seat_in(game)
    if seat is None and ctx.who.gm_of and (game is None or any(g.id == game.id for g in ctx.who.gm_of)):
        return Reply((_gm_status(ctx, [game] if game is not None else ctx.who.gm_of),))
    if game is None:
        return Reply((which_game(ctx.inbound, ctx.who),))
    to: Addressee = ToSeat(seat) if seat else ToGm(game)
    if game.status == GameStatus.SIGNUP:  # no state yet: who has joined, and what it takes
        rules_of = turns.rules_of(game)
        joined = [s.name for s in store.active_seats(game)]
        return Reply(
            (
                Notice(
                    to,
                    say("commands_signup_status_title", game=game.name),
                    say(
                        "commands_signup_status",
                        game=game.name,
                        title=rules_of.title,
                        joined=joined,
                        min=rules_of.min_players,
                        max=rules_of.max_players,
                    ),
                    kind="status",
                    error=False,
                ),
            )
        )
    rules, state, turn = turns.current_state(session, game)
    ordered: list[str] | None = None
    missing: list[str] = []
    incomplete: list[str] = []
    seen: outlook.Outlook | None = None
    if turn is not None:
        ordered = []
        seen = outlook.of_turn(game, rules, state, store.turn_submissions(session, turn))
        for name in sorted(rules.expected_players(state)):
            state_of = seen.status(name)
            # Who has ordered, never what: another seat's set that lacks a part is, to this
            # reader, a seat still to order; only its own player and the GM learn it is incomplete.
            if state_of is outlook.Status.INCOMPLETE and seat is not None and name != seat.name:
                state_of = outlook.Status.NONE
            {outlook.Status.COMPLETE: ordered, outlook.Status.INCOMPLETE: incomplete, outlook.Status.NONE: missing}[
                state_of
            ].append(name)
    zone = seat.player.timezone if seat else game.timezone
    values = game_context(ctx.shell, game, rules)
    values.update(
        {
            "view": rules.view(state, None, seat.name if seat else Viewer.GM),
            # A paused game has no deadline running: its turn resolves when the GM resumes it.
            "deadline": None if outlook.timing(game, turn).paused else deadline_text(outlook.timing(game, turn), zone),
            "paused": outlook.timing(game, turn).paused,
            "practice": practice_terms(ctx.shell, outlook.timing(game, turn)),
            "soonest": turns.soonest_text(ctx.shell, game, turn, zone) if turn is not None else None,
            "ordered": ordered,
            "missing": missing,
            "incomplete": incomplete,
            "own_incomplete": seat is not None and seat.name in incomplete,
            "timezone": zone,
            # Whose WAIT holds the turn, as the tick reads it (never who: only that one does).
            "held": seen is not None and bool(seen.holding(outlook.timing(game, turn))),
            "robots": seat_labels(game.seats),
        }
    )
    rendered = ctx.shell.renderer.render("status", values, game=game.kind)
    if turn is not None:  # the deadline it shows (none while paused), and whom the turn waits for, as a claim
        rendered = rendered.claiming(claims.of_turn(game, turn, seen=seen))
    return Reply((Letter(to, rendered, "status"),))


def _gm_status(ctx: CommandContext, games: list[Game]) -> Letter:
    """A GM's STATUS: each game's block of the digest, with what needs the GM's attention since
    the last digest (`bot.games.attention`), as the digest would show them now."""
    session, shell = ctx.session, ctx.shell
    zone = games[0].timezone
    now = shell.now()
    since = summary.last_digest_at(session, games[0].gm_address) or now - timedelta(days=1)
    values = game_context(shell, games[0], turns.rules_of(games[0]))
    values.update(
        {
            "now": format_local(now, zone),
            "since": format_local(since, zone),
            "timezone": zone,
            "games": (summaries := [summary.game_summary(shell, session, g, zone) for g in games]),
            "attention": summary.attention_lines(attention.items(session, games, since), zone),
        }
    )
    rendered = shell.renderer.render("gm_status", values).claiming(*(c for g in summaries for c in g.get("claims", ())))
    return Letter(ToGm(games[0]), rendered, "status", game=games[0])


def show_orders(ctx: CommandContext, command: ShowOrders) -> Reply:
    session, seat = ctx.session, ctx.seat
    if command.game:  # "ORDERS sc1", as STATUS sc1 names its game: the seat in that game
        seat = ctx.seat_in(_game_of(ctx, command.game, "ORDERS"))
    if seat is None:
        return Reply((which_game(ctx.inbound, ctx.who),))
    rules, state, turn = turns.current_state(session, seat.game)
    said: tuple[Claims, ...] = ()
    if turn is None or seat.name not in rules.expected_players(state):
        text = say("commands_orders_on_file", expected=False, over=turn is None)
    else:
        on_file = outlook.on_file(rules, state, seat, store.submissions(session, turn, seat))
        counting = what_counts(rules, state, seat, on_file)
        said = (claims.of_turn(seat.game, turn, claims.counts(seat.name, counting)),)
        if on_file is None and seat.game.practice:
            text = say("practice_nothing_on_file", label=turn.label, idle_days=ctx.shell.settings.practice.idle_days)
        else:
            text = say(
                "commands_orders_on_file",
                expected=True,
                turn=turn.label,
                paused=outlook.timing(seat.game, turn).paused,
                deadline=due_by(ctx.shell, outlook.timing(seat.game, turn), seat.player.timezone),
                on_file=orders_block(rules.format_orders(on_file)) if on_file is not None else None,
                gets=gets(counting),
                # what is missing is named with the default that fills it.
                filled=orders_block("\n".join(counting.filled)) if counting.filled else "",
                later=list(counting.later),
                # A practice turn waits for what the set lacks: no default fills it.
                waits=outlook.timing(seat.game, turn).waits_for_the_set,
                missing=list(rules.missing_orders(state, seat.name, on_file)) if on_file is not None else [],
            )
    return Reply(
        (Notice(ToSeat(seat), say("commands_orders_on_file_title"), text, kind="orders", error=False, claims=said),)
    )


def _game_of(ctx: CommandContext, name: str, verb: str) -> Game:
    """The game a command names (else the one the mail is for), if the mail proved a seat or the
    GM's role in it; else the command is refused."""
    game = store.find_game_row(ctx.session, name, with_seats=True) if name else ctx.game
    if game is None and not name:
        raise Refused(
            say("mail_record", why="which_game", ambiguous=False),
            which_game(ctx.inbound, ctx.who),
            label=command_label(verb, came=Came.REFUSED),
        )
    if game is None or (ctx.seat_in(game) is None and not any(g.id == game.id for g in ctx.who.gm_of)):
        raise ctx.refuse(
            say("commands_not_your_game_title", verb=verb),
            say("commands_not_your_game", name=name),
            kind=verb.lower(),
            label=command_label(verb, came=Came.REFUSED),
        )
    return game


MAX_HISTORY = 40  # turns listed by HISTORY without a number; the earlier ones are counted


def history(ctx: CommandContext, command: History) -> Reply:
    """HISTORY [game] [turn]: the turns resolved so far, or one turn's results as
    everyone saw them (the public report, dice included)."""
    game = _game_of(ctx, command.game, "HISTORY")
    rules = turns.rules_of(game)
    resolved = list(
        ctx.session.scalars(
            select(Turn).where(Turn.game_id == game.id, Turn.resolved_at.is_not(None)).order_by(Turn.number)
        )
    )
    values = game_context(ctx.shell, game, rules)
    values.update(
        {
            "greeting": letters.greeting(ctx.to),
            "turn": None,
            "view": None,
            "turns": [],
            "more": 0,
            "robots": seat_labels(game.seats),
        }
    )
    if command.turn is not None:
        turn = next((t for t in resolved if t.number == command.turn), None)
        if turn is None or turn.state_after is None:
            raise ctx.refuse(
                say("commands_no_such_turn_title"),
                say(
                    "commands_no_such_turn",
                    game=game.name,
                    number=command.turn,
                    last=resolved[-1].number if resolved else 0,
                ),
                kind="history",
                label=command_label("HISTORY", came=Came.REFUSED),
            )
        state = rules.load_state(turn.state_after)
        events = tuple(Event.from_json(e) for e in turn.events or ())
        values.update(
            {
                "turn": {"number": turn.number, "label": turn.label, "corrections": turn.corrections},
                "view": rules.view(state, Resolution(state, events), Viewer.PUBLIC),
            }
        )
    else:
        shown = resolved[-MAX_HISTORY:]
        values.update(
            {
                "turns": [{"number": t.number, "label": t.label, "corrections": t.corrections} for t in shown],
                "more": len(resolved) - len(shown),
            }
        )
    rendered = ctx.shell.renderer.render("history", values, game=game.kind)
    return Reply((Letter(ctx.to, rendered, "history", game=game),), label=command_label("HISTORY", game.name))


def _open_turn_for(ctx: CommandContext, name: str, verb: str) -> tuple[Seat, Turn, AnyGame, GameState]:
    """The sender's seat and the open turn it orders in, for CLEAR, WAIT and NOWAIT; else the
    command is refused, saying why."""
    game = _game_of(ctx, name, verb)
    seat = ctx.seat_in(game)
    if seat is None:
        raise ctx.refuse(
            say("commands_for_players_title", verb=verb),
            say("commands_for_players", verb=verb),
            kind=verb.lower(),
            label=command_label(verb, came=Came.REFUSED),
        )
    turn = store.open_turn(ctx.session, game) if game.status == GameStatus.ACTIVE else None
    if turn is None:
        raise ctx.refuse(
            say("commands_no_open_turn_title"),
            say("commands_no_open_turn", game=game.name, status=game.status),
            kind=verb.lower(),
            label=command_label(verb, came=Came.REFUSED),
        )
    rules = turns.rules_of(game)
    state = rules.load_state(turn.state)
    if seat.name not in rules.expected_players(state):
        raise ctx.refuse(
            say("commands_no_orders_to_send_title"),
            say("commands_no_orders_to_send", turn=turn.label, game=game.name),
            kind=verb.lower(),
            label=command_label(verb, came=Came.REFUSED),
        )
    return seat, turn, rules, state


def _note(ctx: CommandContext, seat: Seat, turn: Turn, source: str, text: str) -> list[OrderSubmission]:
    """Keep a CLEAR, WAIT or NOWAIT with the turn (written now: the orders of this mail, and of
    the batch's next mails, come after it); the seat's submissions with it."""
    store.file_note(ctx.session, turn, seat, source, text, ctx.shell.now())
    return store.submissions(ctx.session, turn, seat)


def clear(ctx: CommandContext, command: Clear) -> Reply:
    """CLEAR [game]: the seat's orders of the open turn taken back; the default stands
    (the GM's plot, if any) until new orders arrive."""
    seat, turn, rules, state = _open_turn_for(ctx, command.game, "CLEAR")
    _note(ctx, seat, turn, store.CLEAR, "CLEAR")
    counting = what_counts(rules, state, seat, None)  # what counts now that nothing is on file
    text = (
        say(
            "practice_cleared",
            label=turn.label,
            game=seat.game.name,
            idle_days=ctx.shell.settings.practice.idle_days,
        )
        if seat.game.practice
        else say(
            "commands_cleared",
            turn=turn.label,
            game=seat.game.name,
            paused=outlook.timing(seat.game, turn).paused,
            deadline=due_by(ctx.shell, outlook.timing(seat.game, turn), seat.player.timezone),
            plot=counting.source is outlook.Source.PLOT,
            default=orders_block(counting.text),
        )
    )
    said = claims.of_turn(seat.game, turn, claims.counts(seat.name, counting))
    return Reply(
        (Notice(ToSeat(seat), say("commands_cleared_title"), text, kind="orders", error=False, claims=(said,)),),
        label=command_label("CLEAR", seat.game.name),
    )


def _no_hold_in_practice(ctx: CommandContext, seat: Seat, turn: Turn, verb: str) -> None:
    """WAIT and NOWAIT are refused in a practice race: it has no deadline to wait for (a held
    turn would never resolve), so there is nothing to hold or lift."""
    if not seat.game.practice:
        return
    raise ctx.refuse(
        say("practice_no_wait_title", verb=verb),
        say(
            "practice_no_wait",
            verb=verb,
            label=turn.label,
            game=seat.game.name,
            idle_days=ctx.shell.settings.practice.idle_days,
        ),
        kind=verb.lower(),
        label=command_label(verb, came=Came.PRACTICE_RACE),
    )


def wait(ctx: CommandContext, command: Wait) -> Reply:
    """WAIT [game]: the open turn does not resolve before its deadline, even when
    every order is in, until the seat's NOWAIT (or the deadline)."""
    seat, turn, rules, state = _open_turn_for(ctx, command.game, "WAIT")
    game = seat.game
    _no_hold_in_practice(ctx, seat, turn, "WAIT")
    facts = {
        "turn": turn.label,
        "game": game.name,
        "deadline": due_by(ctx.shell, outlook.timing(game, turn), seat.player.timezone),
    }
    if not outlook.timing(game, turn).early:
        return Reply(
            (
                Notice(
                    ToSeat(seat),
                    say("commands_wait_title", held=False),
                    say("commands_wait", held=False, **facts),
                    kind="orders",
                    error=False,
                ),
            ),
            label=command_label("WAIT", game.name, came=Came.NOTHING_TO_HOLD),
        )
    _note(ctx, seat, turn, store.WAIT, "WAIT")
    return Reply(
        (
            Notice(
                ToSeat(seat),
                say("commands_wait_title", held=True),
                say("commands_wait", held=True, **facts),
                kind="orders",
                error=False,
            ),
        ),
        label=command_label("WAIT", game.name),
    )


def no_wait(ctx: CommandContext, command: NoWait) -> Reply:
    """NOWAIT [game]: the seat's WAIT lifted."""
    seat, turn, rules, state = _open_turn_for(ctx, command.game, "NOWAIT")
    game = seat.game
    _no_hold_in_practice(ctx, seat, turn, "NOWAIT")
    if not store.holds(store.submissions(ctx.session, turn, seat)):
        text = say("commands_nowait", held=False, turn=turn.label, game=game.name)
        return Reply(
            (Notice(ToSeat(seat), say("commands_nowait_title", held=False), text, kind="orders", error=False),),
            label=command_label("NOWAIT", game.name, came=Came.NOTHING_TO_LIFT),
        )
    _note(ctx, seat, turn, store.NOWAIT, "NOWAIT")
    if turns.is_due(ctx.session, game, turn, ctx.shell.now(), pace=turns.practice_pace(ctx.shell.settings.practice)):
        # The last hold of a turn with every order in: it is resolved as this mail is answered.
        return Reply(
            (
                Notice(
                    ToSeat(seat),
                    say("early_nowait_last_title"),
                    say("early_nowait_last", label=turn.label, game=game.name),
                    kind="orders",
                    error=False,
                    claims=(claims.of_turn(game, turn, resolved=True),),
                ),
            ),
            label=command_label("NOWAIT", game.name, came=Came.RESOLVES),
            resolves=((game.id, turn.id),),
        )
    # Whether another seat's WAIT still holds the turn, as the tick reads it (the turn's outlook).
    others = bool(outlook.of_turn(game, rules, state, store.turn_submissions(ctx.session, turn)).held)
    # With orders in the same mail, what the turn does next is their confirmation's to say.
    then = not ctx.orders_follow or ctx.seat is None or ctx.seat.id != seat.id
    text = say("commands_nowait", held=True, others=others, then=then, turn=turn.label, game=game.name)
    return Reply(
        (Notice(ToSeat(seat), say("commands_nowait_title", held=True), text, kind="orders", error=False),),
        label=command_label("NOWAIT", game.name),
    )


RESENDS_PER_DAY = 3  # RESEND mails a whole sheet: a few a day per seat


def resend(ctx: CommandContext, command: Resend) -> Reply:
    """RESEND [game]: the open turn's sheet again, with its signed reply address, to the
    seat's registered address only (a player who deleted the sheet has lost that address)."""
    game = _game_of(ctx, command.game, "RESEND")
    seat = ctx.seat_in(game)
    if seat is None:
        raise ctx.refuse(
            say("commands_resend_players_title"),
            say("commands_resend_players"),
            kind="resend",
            label=command_label("RESEND", came=Came.REFUSED),
        )
    turn = store.open_turn(ctx.session, game)
    if turn is None or game.status == GameStatus.SIGNUP:
        raise ctx.refuse(
            say("commands_resend_no_sheet_title"),
            say("commands_resend_no_sheet", game=game.name),
            kind="resend",
            label=command_label("RESEND", came=Came.REFUSED),
        )
    # Sheets sent on their own (the first one, a REPLACE's, RESEND's; later turns' come with the
    # results) to this address for this game in the last day.
    sent = (
        ctx.session.scalar(
            select(func.count())
            .select_from(Outbox)
            .where(
                Outbox.kind == "turn_sheet",
                Outbox.recipient == seat.player.address,
                Outbox.game_id == game.id,
                Outbox.created_at >= ctx.shell.now() - timedelta(days=1),
            )
        )
        or 0
    )
    if sent >= RESENDS_PER_DAY:
        raise ctx.refuse(
            say("commands_resend_sent_title"),
            say("commands_resend_sent", game=game.name, times=RESENDS_PER_DAY),
            kind="resend",
            label=command_label("RESEND", came=Came.REFUSED),
        )
    turns.queue_seat_mail(ctx.shell, ctx.session, game, seat, "turn_sheet")
    return Reply(label=command_label("RESEND", game.name))


def join(ctx: CommandContext, command: Join) -> Reply:
    """JOIN in mail that proved its sender's registered address: a seat at once, at that
    address (a stranger's JOIN is the intake's: a code first, `signups.ask_to_join`). JOIN of a
    series in tiers (or one of its seasons) with no race of it open for sign-ups joins the
    series' next season: a newcomer, drawn into its lowest tier (`season_tiers.enter_series`)."""
    if store.find_game_row(ctx.session, command.game) is None:
        person = ctx.player() or ctx.session.scalar(select(Player).where(Player.address == ctx.address))
        series = (
            season_tiers.enter_series(ctx.session, command.game, person, ctx.shell.now())
            if person is not None
            else None
        )
        if series is not None:
            return Reply(
                (
                    Notice(
                        ctx.to,
                        say("series_entered_title", series=series),
                        say("series_entered", series=series),
                        kind="join",
                        error=False,
                    ),
                ),
                label=command_label("JOIN", series, came=Came.NEXT_SEASON),
            )
    seat, welcome = signups.join_now(ctx.shell, ctx.session, command.game, ctx.address, command.name)
    return Reply((welcome,), label=command_label("JOIN", seat.game.name, seat.name, came=Came.SEAT))


def resign(ctx: CommandContext, command: Resign) -> Reply:
    seat, text, farewell = signups.resign(
        ctx.shell, ctx.session, ctx.inbound, ctx.who, command.game, farewell=ctx.words
    )
    # Departures are told to everyone, as the GM's DROP is; with the farewell where press is on.
    gm.tell_players(
        ctx.shell,
        ctx.session,
        seat.game,
        [
            gm.News(
                say("resigned_players_title", seat=seat.name),
                say("resigned_players", seat=seat.name, game=seat.game.name, dropped=text, farewell=farewell),
                "resign",
                about=seat.name,
            )
        ],
        ctx.shell.now(),
    )
    return Reply(label=command_label("RESIGN", came=Came.DONE))


__all__ = [
    "MAX_HISTORY",
    "RESENDS_PER_DAY",
    "clear",
    "help_",
    "history",
    "join",
    "no_wait",
    "resend",
    "resign",
    "show_orders",
    "status",
    "wait",
]
