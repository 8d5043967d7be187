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
from bot.answers import Letter, Notice, Refused
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
from bot.games import signups, turns
from bot.games.robots import robot_names
from bot.letters import Addressee, ToGm, ToSeat, claims
from bot.letters.context import bot_context, deadline_text, game_context, orders_block
from bot.letters.words import say
from bot.models import Game, GameStatus, OrderSubmission, Outbox, Seat, Turn
from bot.outlook import what_counts
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
        )
    return Reply((Letter(to, ctx.shell.renderer.render("help", values), "help", game=seat.game if seat else None),))


def status(ctx: CommandContext, command: Status) -> Reply:
    session, game, seat = ctx.session, ctx.game, ctx.seat
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
                    f"Status of {game.name}",
                    f"{game.name} ({rules_of.title}) is open for sign-ups: {len(joined)} joined "
                    f"({', '.join(joined) or 'nobody yet'}); it takes {rules_of.min_players} to "
                    f"{rules_of.max_players} players and starts at {rules_of.max_players}, or when the GM "
                    "starts it.",
                    kind="status",
                    error=False,
                ),
            )
        )
    rules, state, turn = turns.current_state(session, game)
    ordered: list[str] | None = None
    missing: list[str] = []
    incomplete: list[str] = []
    if turn is not None:
        ordered = []
        seen = outlook.of_turn(game, rules, state, store.turn_submissions(session, turn))
        for name in sorted(rules.expected_players(state)):
            {outlook.Status.COMPLETE: ordered, outlook.Status.INCOMPLETE: incomplete, outlook.Status.NONE: missing}[
                seen.status(name)
            ].append(name)
    zone = seat.player.timezone if seat else game.timezone
    values = game_context(ctx.shell, game, rules)
    values.update(
        {
            "view": rules.view(state, None, seat.name if seat else Viewer.GM),
            "deadline": deadline_text(turn, zone),
            "ordered": ordered,
            "missing": missing,
            "incomplete": incomplete,
            "timezone": zone,
            "held": turn is not None and game.early_resolution and store.turn_held(session, turn),
            "robots": robot_names(game.seats),
        }
    )
    return Reply((Letter(to, ctx.shell.renderer.render("status", values, game=game.kind), "status"),))


def show_orders(ctx: CommandContext, command: ShowOrders) -> Reply:
    session, seat = ctx.session, ctx.seat
    if seat is None:
        return Reply((which_game(ctx.inbound, ctx.who),))
    rules, state, turn = turns.current_state(session, seat.game)
    if turn is None or seat.name not in rules.expected_players(state):
        text = "You have no orders to send now" + (": the game is over." if turn is None else ".")
    else:
        on_file = store.orders_on_file(rules, state, seat, store.submissions(session, turn, seat))
        deadline = deadline_text(turn, seat.player.timezone) or "the GM's call"
        counting = what_counts(rules, state, seat, on_file)
        if on_file is None:
            text = (
                f"Nothing is on file for you for {turn.label}. If nothing arrives by {deadline}, "
                f"you get {counting.by}:\n\n" + orders_block(counting.text)
            )
        else:
            text = f"On file for you for {turn.label} (due {deadline}):\n\n" + orders_block(
                rules.format_orders(on_file)
            )
            if counting.filled:
                # issue 29: what is missing is named with the default that fills it.
                text += (
                    "\n\nThat set is not complete: at the deadline the game's default\nfills what is missing with:\n\n"
                )
                text += orders_block("\n".join(counting.filled))
            if counting.later:
                text += "\n\nNot needed before a later turn, and filled then with the game's\ndefault if it is still missing:\n"
                text += "\n".join(f"    - {what}" for what in counting.later)
    return Reply((Notice(ToSeat(seat), "Your orders on file", text, kind="orders", error=False),))


def _game_of(ctx: CommandContext, name: str, verb: str) -> Game:
    """The game a command names (else the one the mail is for), if the mail proved a seat or the
    GM's role in it; else the command is refused."""
    game = store.find_game_row(ctx.session, name, with_seats=True) if name else ctx.game
    if game is None and not name:
        raise Refused("which game?", which_game(ctx.inbound, ctx.who), label=f"{verb} refused")
    if game is None or (ctx.seat_in(game) is None and not any(g.id == game.id for g in ctx.who.gm_of)):
        raise ctx.refuse(
            f"{verb}: not your game",
            f"You have no seat in a game called {name or '?'}, nor are its GM.",
            kind=verb.lower(),
            label=f"{verb} refused",
        )
    return game


MAX_HISTORY = 40  # turns listed by HISTORY without a number; the earlier ones are counted


def history(ctx: CommandContext, command: History) -> Reply:
    """HISTORY [game] [turn] (issue 30): the turns resolved so far, or one turn's results as
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
            "robots": robot_names(game.seats),
        }
    )
    if command.turn is not None:
        turn = next((t for t in resolved if t.number == command.turn), None)
        if turn is None or turn.state_after is None:
            numbers = f"1 to {resolved[-1].number}" if resolved else "none yet"
            raise ctx.refuse(
                "No such turn",
                f"{game.name} has no resolved turn {command.turn} (resolved: {numbers}).",
                kind="history",
                label="HISTORY refused",
            )
        state = rules.load_state(turn.state_after)
        events = tuple(Event.from_json(e) for e in turn.events or ())
        values.update(
            {
                "turn": {"number": turn.number, "label": turn.label},
                "view": rules.view(state, Resolution(state, events), Viewer.PUBLIC),
            }
        )
    else:
        shown = resolved[-MAX_HISTORY:]
        values.update(
            {"turns": [{"number": t.number, "label": t.label} for t in shown], "more": len(resolved) - len(shown)}
        )
    rendered = ctx.shell.renderer.render("history", values, game=game.kind)
    return Reply((Letter(ctx.to, rendered, "history", game=game),), label=f"HISTORY {game.name}")


def _open_turn_for(ctx: CommandContext, name: str, verb: str) -> tuple[Seat, Turn, AnyGame, GameState]:
    """The sender's seat and the open turn it orders in, for CLEAR, WAIT and NOWAIT; else the
    command is refused, saying why."""
    game = _game_of(ctx, name, verb)
    seat = ctx.seat_in(game)
    if seat is None:
        raise ctx.refuse(
            f"{verb} is for players",
            f"{verb} is about a player's own orders; as the GM, see HELP for ORDER, PLOT and PROCESS.",
            kind=verb.lower(),
            label=f"{verb} refused",
        )
    turn = store.open_turn(ctx.session, game) if game.status == GameStatus.ACTIVE else None
    if turn is None:
        raise ctx.refuse(
            "No open turn",
            f"{game.name} has no turn open for orders now ({game.status}).",
            kind=verb.lower(),
            label=f"{verb} refused",
        )
    rules = turns.rules_of(game)
    state = rules.load_state(turn.state)
    if seat.name not in rules.expected_players(state):
        raise ctx.refuse(
            "No orders to send",
            f"You have no orders to send for {turn.label} of {game.name}.",
            kind=verb.lower(),
            label=f"{verb} refused",
        )
    return seat, turn, rules, state


def _note(ctx: CommandContext, seat: Seat, turn: Turn, source: str, text: str) -> list[OrderSubmission]:
    """Keep a CLEAR, WAIT or NOWAIT with the turn (written now: the orders of this mail, and of
    the batch's next mails, come after it); the seat's submissions with it."""
    ctx.session.add(
        OrderSubmission(
            turn_id=turn.id, seat_id=seat.id, inbound_id=None, source=source, text=text, received_at=ctx.shell.now()
        )
    )
    ctx.session.flush()
    return store.submissions(ctx.session, turn, seat)


def clear(ctx: CommandContext, command: Clear) -> Reply:
    """CLEAR [game] (issue 30): the seat's orders of the open turn taken back; the default stands
    (the GM's plot, if any) until new orders arrive."""
    seat, turn, rules, state = _open_turn_for(ctx, command.game, "CLEAR")
    _note(ctx, seat, turn, store.CLEAR, "CLEAR")
    default, source = outlook.nmr_default(rules, state, seat)
    what = "the GM's plot for you" if source == "plot" else "the default"
    deadline = deadline_text(turn, seat.player.timezone) or "the GM's call"
    text = (
        f"Your orders for {turn.label} of {seat.game.name} are cleared. If no new orders arrive by {deadline}, "
        f"you get {what}:\n\n{orders_block(rules.format_orders(default))}"
    )
    said = claims.of_turn(
        seat.game, turn, claims.counts(seat.name, outlook.Counts(default, rules.format_orders(default), source))
    )
    return Reply(
        (Notice(ToSeat(seat), "Orders cleared", text, kind="orders", error=False, claims=(said,)),),
        label=f"CLEAR {seat.game.name}",
    )


def wait(ctx: CommandContext, command: Wait) -> Reply:
    """WAIT [game] (issue 30): the open turn does not resolve before its deadline, even when
    every order is in, until the seat's NOWAIT (or the deadline)."""
    seat, turn, rules, state = _open_turn_for(ctx, command.game, "WAIT")
    game = seat.game
    deadline = deadline_text(turn, seat.player.timezone) or "the GM's call"
    if not game.early_resolution:
        text = (
            f"Turns of {game.name} never resolve before their deadline, so there is nothing to hold: "
            f"{turn.label} resolves at {deadline}."
        )
        return Reply(
            (Notice(ToSeat(seat), "Nothing to hold", text, kind="orders", error=False),),
            label=f"WAIT {game.name}: nothing to hold",
        )
    _note(ctx, seat, turn, store.WAIT, "WAIT")
    text = (
        f"{turn.label} of {game.name} now waits for its deadline, {deadline}, even if every order is in "
        "before then. Send NOWAIT to lift this; it lasts for this turn only. The other players are not "
        "told who asked."
    )
    return Reply(
        (Notice(ToSeat(seat), "The turn waits for its deadline", text, kind="orders", error=False),),
        label=f"WAIT {game.name}",
    )


def no_wait(ctx: CommandContext, command: NoWait) -> Reply:
    """NOWAIT [game] (issue 30): the seat's WAIT lifted."""
    seat, turn, rules, state = _open_turn_for(ctx, command.game, "NOWAIT")
    game = seat.game
    if not store.holds(store.submissions(ctx.session, turn, seat)):
        text = f"You were not holding {turn.label} of {game.name}: nothing changes."
        return Reply(
            (Notice(ToSeat(seat), "Nothing to lift", text, kind="orders", error=False),),
            label=f"NOWAIT {game.name}: nothing to lift",
        )
    _note(ctx, seat, turn, store.NOWAIT, "NOWAIT")
    if turns.is_due(ctx.session, game, turn, ctx.shell.now()):
        # The last hold of a turn with every order in: it is resolved as this mail is answered.
        return Reply(
            (
                Notice(
                    ToSeat(seat),
                    "The turn is resolved",
                    say("early_nowait_last", label=turn.label, game=game.name),
                    kind="orders",
                    error=False,
                    claims=(claims.of_turn(game, turn, resolved=True),),
                ),
            ),
            label=f"NOWAIT {game.name}: the turn resolves",
            resolves=((game.id, turn.id),),
        )
    others = any(
        store.holds(store.submissions(ctx.session, turn, s)) for s in store.active_seats(game) if s.id != seat.id
    )
    text = f"You no longer hold {turn.label} of {game.name}. " + (
        "Another player holds it too, so it still waits for its deadline."
        if others
        else "It resolves as soon as every order is in, or at its deadline."
    )
    return Reply(
        (Notice(ToSeat(seat), "The turn may resolve early again", text, kind="orders", error=False),),
        label=f"NOWAIT {game.name}",
    )


RESENDS_PER_DAY = 3  # RESEND mails a whole sheet: a few a day per seat


def resend(ctx: CommandContext, command: Resend) -> Reply:
    """RESEND [game] (issue 30): the open turn's sheet again, with its signed reply address, to the
    seat's registered address only (a player who deleted the sheet has lost that address)."""
    game = _game_of(ctx, command.game, "RESEND")
    seat = ctx.seat_in(game)
    if seat is None:
        raise ctx.refuse(
            "RESEND is for players",
            "RESEND sends a player's own turn sheet; the GM gets a copy of every sheet already.",
            kind="resend",
            label="RESEND refused",
        )
    turn = store.open_turn(ctx.session, game)
    if turn is None or game.status == GameStatus.SIGNUP:
        raise ctx.refuse(
            "No turn sheet",
            f"{game.name} has no open turn, so there is no sheet to send.",
            kind="resend",
            label="RESEND refused",
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
            "Sent already",
            f"Your sheet of {game.name} was sent again {RESENDS_PER_DAY} times today "
            "already; look for it in your mail, or ask again tomorrow.",
            kind="resend",
            label="RESEND refused",
        )
    turns.queue_seat_mail(ctx.shell, ctx.session, game, seat, "turn_sheet")
    return Reply(label=f"RESEND {game.name}")


def join(ctx: CommandContext, command: Join) -> Reply:
    """JOIN in mail that proved its sender's registered address: a seat at once, at that
    address (a stranger's JOIN is the intake's: a code first, `signups.ask_to_join`)."""
    seat, welcome = signups.join_now(ctx.shell, ctx.session, command.game, ctx.address, command.name)
    return Reply((welcome,), label=f"JOIN {seat.game.name}: seat {seat.name}")


def resign(ctx: CommandContext, command: Resign) -> Reply:
    seat, text = signups.resign(ctx.shell, ctx.session, ctx.inbound, ctx.who, command.game)
    # Departures are told to everyone (issue 29), as the GM's DROP is.
    gm.tell_players(
        ctx.shell,
        ctx.session,
        seat.game,
        [
            gm.News(
                f"{seat.name} has resigned",
                f"{seat.name} has given up the seat in {seat.game.name}: {text}",
                "resign",
                about=seat.name,
            )
        ],
        ctx.shell.now(),
    )
    return Reply(label="RESIGN done")


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
