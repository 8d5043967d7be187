"""The GM's override commands (mail-interface.md, "GM commands"): what each one does.

Each handler gets the `GmAction` (who uses the GM's powers, through which door, on which game)
and the command's arguments, checks them and the game's state first and refuses with the
reason (`bot.fate.Refused`) before changing anything, and returns the confirmation's text.
`bot.commands.registry.execute` runs one for either door, mail or CLI: in a savepoint, with a
`GmAudit` row (who, when, mail or cli, which Message-ID, the command, the outcome, and for the
commands that discard something, what they discarded in `undo`), and the confirmation (or
refusal) mail to the GM. EXTEND, DEADLINE, PAUSE, RESUME and ROLLBACK are also announced to
the players, each with the deadline in their own time zone.

Who may command a game: by mail, `bot.commands.parse_commands` treats a line as a GM command
only when it names a game the authenticated sender is GM of; a GM of game A naming game B,
or naming a game that does not exist, gets the line back as "not understood" from the
service. By CLI, whoever can run `flagman` on the server is trusted (the operator).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from bot import dice, letters, outlook, store
from bot.clock import as_utc
from bot.facts import Claims, Counts, Kept
from bot.fate import Refused
from bot.games import carried, ratings, reliability, reminders, robots, seasons, turns
from bot.games.archive import NewTurn
from bot.games.deadline import resolve_writes
from bot.games.seats import (
    drop_seat,
    enforce_nmr_limit,
    player_for,
    send_welcome,
    under_way,
)
from bot.letters import ToAddress, ToSeat, claims, invitations, reveal
from bot.letters import carried as carried_words
from bot.letters.cache import LetterCache
from bot.letters.context import deadline_text, duration_in_words, game_context, orders_block, seat_labels
from bot.letters.words import say
from bot.mail_in.addresses import address_problem
from bot.mail_in.auth import new_secret
from bot.mail_out import calendar as ical
from bot.mail_out.compose import CalendarPart
from bot.mail_out.render import RenderedMail
from bot.models import (
    ChangeWhy,
    CommitmentFate,
    Game,
    GameStatus,
    GmAudit,
    OrderSubmission,
    Outbox,
    Player,
    Seat,
    SeatChange,
    Turn,
)
from bot.safe_text import echo
from bot.schedules import (
    add,
    format_local,
    next_deadline,
    parse_duration,
    parse_schedule,
    parse_when,
)
from bot.shell import Shell
from rules.api import (
    AnyGame,
    GameOrder,
    GameState,
    Parsed,
    ProblemKind,
    RobotLevel,
    Viewer,
)

log = logging.getLogger("flagman.gm")

RESULTS_KINDS = ("results", "final", "results_gm", "final_gm")  # the outbox kinds of a turn's results


@dataclass
class GmAction:
    """One use of the GM's powers: on which game, when, by whom (an address) and through which
    door (mail or cli); what it discarded (`undo`, for the audit log and ROLLBACK), what the CLI
    prints besides (`extra`: PREVIEW), and the mail that replaces the plain confirmation."""

    shell: Shell
    session: Session
    game: Game
    now: datetime
    actor: str
    via: str
    undo: dict[str, object] | None = None
    extra: str = ""
    mail: RenderedMail | None = None  # replaces the plain confirmation (PREVIEW)
    news: list[News] = field(default_factory=list)  # what the players are told, once it is done
    resolved: list[NewTurn] = field(default_factory=list)  # PROCESS: to publish once committed (`archive.publish`)
    claims: list[Claims] = field(default_factory=list)  # what the answer claims of the open turn (`bot.facts.Claims`)


# -- helpers -----------------------------------------------------------------------------------


def _open(ctx: GmAction) -> tuple[AnyGame, GameState, Turn]:
    return under_way(ctx.session, ctx.game)


def _seat(ctx: GmAction, name: str, *, active: bool = True) -> Seat:
    seat = store.seat_named(ctx.game, name.lower())
    if seat is None:
        seats = [s.name for s in ctx.game.seats if s.active]
        raise Refused(say("gm_refused", why="no_seat", game=ctx.game.name, quoted=repr(name), seats=seats))
    if active and not seat.active:
        raise Refused(say("gm_refused", why="seat_out", seat=seat.name, game=ctx.game.name))
    return seat


def _orders_text(text: str) -> str:
    """By mail a GM command is one line: ';' separates the lines of the orders."""
    return "\n".join(part.strip() for part in text.split(";"))


def _parse_for(rules: AnyGame, state: GameState, seat: Seat, text: str) -> tuple[GameOrder, ...]:
    parsed = rules.parse_orders(state, seat.name, _orders_text(text))
    if parsed.problems or not parsed.orders:
        raise _not_valid(rules, state, seat, parsed)
    return parsed.orders


def _not_valid(rules: AnyGame, state: GameState, seat: Seat, parsed: Parsed[GameOrder]) -> Refused:
    """The refusal of orders the game's parser did not take, with its reasons and the grammar."""
    problems = [(p.line, p.reason) for p in parsed.problems]
    said = say("gm_refused", why="not_valid", seat=seat.name, problems=problems)
    return Refused("\n".join((said, rules.order_help(state, seat.name))))


def _deadline_words(when: outlook.Timing, zone: str) -> str:
    """When the turn of the outlook's `when` is due, in `zone`, or that it waits for the GM's call."""
    return say("gm_due", deadline=deadline_text(when, zone))


@dataclass(frozen=True, slots=True)
class News:
    """What the GM did that the players are told (`announce`): a title and a paragraph, and
    whether the turn's calendar event changed."""

    title: str
    text: str
    kind: str = "announce"
    calendar: bool = False
    about: str | None = None  # the seat it is about: that seat gets a mail of its own, not this one
    to: str | None = None  # for that seat alone (the GM's ORDER, PLOT, SET for it)
    # What it claims (`bot.facts.Claims`) of a turn no longer open: each seat's mail carries
    # those about its own orders (and those about no seat's).
    claims: tuple[Claims, ...] = ()
    # Where it stands in the mail: the news a mail leads with (LEAD: its subject says that alone),
    # then the rest in the order told (NEWS), then what follows from it (AFTER: a new receipt).
    rank: int = 1


LEAD, NEWS, AFTER = 0, 1, 2
# The kind of the news that the GM's mail completed the open turn and it was resolved: a seat
# with no other news of the mail is not told it (its results are the news), and the turn open
# after it is a new one, "now due".
RESOLVED = "early_gm_last"


def announce(
    ctx: GmAction,
    title: str,
    text: str,
    *,
    kind: str = "announce",
    calendar: bool = False,
    about: str | None = None,
    to: str | None = None,
    rank: int = NEWS,
) -> None:
    """Tell every active seat `text`, with the open turn's deadline in the seat's zone; with
    `calendar`, the turn's calendar event updated (its SEQUENCE raised by the caller). Told
    once the command is done (`tell_players`), together with whatever else the same mail of
    the GM did in the game: one mail per player per GM mail, its news in `rank` order."""
    ctx.news.append(News(title, text, kind, calendar, about, to, rank=rank))


def tell_players(shell: Shell, session: Session, game: Game, news: Sequence[News], now: datetime) -> int:
    """One mail to every active seat of `game` with all of `news` (in sections when several),
    the turn's deadline as it stands now, and its calendar event when one of them moved it."""
    if not news:
        return 0
    turn = store.open_turn(session, game)
    rules = turns.rules_of(game)
    state = rules.load_state(turn.state) if turn is not None else None
    subs = store.turn_submissions(session, turn) if turn is not None else {}
    sender = ical.Sender(shell.settings.bot.address, shell.settings.bot.name)
    sent = 0
    for seat in store.mailed_seats(game):
        told = sorted((n for n in news if n.about != seat.name and n.to in (None, seat.name)), key=lambda n: n.rank)
        if all(n.kind == RESOLVED for n in told):  # nothing to tell, or only what the results tell
            continue
        kind = told[0].kind if len(told) == 1 else "announce"
        zone = seat.player.timezone
        ctx_mail = game_context(shell, game, rules)
        ctx_mail.update(
            {
                "seat": {"name": seat.name, "display": seat.player.name},
                "items": [{"title": n.title, "text": n.text, "lead": n.rank == LEAD} for n in told],
                "turn": {"label": turn.label, "deadline": deadline_text(outlook.timing(game, turn), zone)}
                if turn is not None
                else None,
                "paused": outlook.timing(game, turn).paused,
                # the deadline moved, or the open turn is one the GM's mail opened: "now due", else "unchanged"
                "moved": any(n.calendar or n.kind == RESOLVED for n in told),
                # A deadline the GM set while paused is the one RESUME keeps (`resume`): said.
                "set_for_resume": any(n.kind in ("extend", "deadline") for n in told),
                "timezone": zone,
            }
        )
        rendered = shell.renderer.render("announce", ctx_mail, game=game.kind)
        rendered = rendered.claiming(
            *(c for n in told for c in n.claims if all(count.seat == seat.name for count in c.counts))
        )
        if state is not None:  # what counts for the seat now, and the deadline, as claims
            on_file = outlook.on_file(rules, state, seat, subs.get(seat.id, ()))
            rendered = rendered.claiming(*claims.for_seat(game, rules, state, turn, seat, on_file))
        calendars: tuple[CalendarPart, ...] = ()
        if state is not None and turn is not None and any(n.calendar for n in told):
            calendars = (
                invitations.paused_parts(sender, now, game, rules, state, turn, seat)
                if game.status == GameStatus.PAUSED
                else invitations.seat_parts(sender, now, game, rules, state, turn, seat, "turn_sheet")
            )
        letters.post(shell, session, ToSeat(seat), rendered, kind=kind, calendars=calendars)
        sent += 1
    return sent


def _set_deadline(ctx: GmAction, turn: Turn, deadline: datetime | None) -> None:
    turn.deadline = deadline
    reminders.rearm(ctx.game, turn, ctx.now)


# -- the commands ------------------------------------------------------------------------------

# A deadline sooner than this from now needs FORCE (by mail, the last word of the line; on the
# command line, --force): the same bar as a turn length under an hour (bot.cli.durations).
SOON = timedelta(hours=1)


def _forced(args: tuple[str, ...]) -> tuple[str, bool]:
    """The command's argument without a trailing FORCE, and whether it had one."""
    text = " ".join(args).strip()
    head, _, last = text.rpartition(" ")
    return (head.strip(), True) if head and last.upper() == "FORCE" else (text, False)


def _not_too_soon(ctx: GmAction, new: datetime, force: bool, line: str) -> None:
    """Refuse a deadline less than `SOON` from now unless forced (by mail as on the
    command line): the players could not answer in time."""
    if new - ctx.now < SOON and not force:
        raise Refused(say("gm_refused", why="too_soon", when=format_local(new, ctx.game.timezone), line=line))


def extend(ctx: GmAction, args: tuple[str, ...]) -> str:
    _rules, _state, turn = _open(ctx)
    duration, force = _forced(args)
    delta = parse_duration(duration)
    old = outlook.timing(ctx.game, turn).due
    if old is None:
        raise Refused(say("gm_refused", why="no_deadline", label=turn.label, game=ctx.game.name))
    new = add(old, delta)  # many EXTENDs in a row must not run the calendar out (year 9999)
    if new <= ctx.now:
        raise Refused(
            say(
                "gm_refused",
                why="still_past",
                when=format_local(new, ctx.game.timezone),
                game=ctx.game.name,
                duration=duration,
            )
        )
    _not_too_soon(ctx, new, force, f"EXTEND {ctx.game.name} {duration}")
    _set_deadline(ctx, turn, new)
    turn.calendar_sequence = (turn.calendar_sequence or 0) + 1  # the calendar event's update (RFC 5546)
    ctx.undo = {"deadline": old.isoformat()}
    announce(
        ctx,
        say("gm_extend_title", label=turn.label),
        say("gm_extend", label=turn.label, duration=duration_in_words(delta)),
        kind="extend",
        calendar=True,
    )
    ctx.claims.append(claims.of_turn(ctx.game, turn))
    return say(
        "gm_extend_done",
        label=turn.label,
        old=format_local(old, ctx.game.timezone),
        new=format_local(new, ctx.game.timezone),
    )


def deadline(ctx: GmAction, args: tuple[str, ...]) -> str:
    _rules, _state, turn = _open(ctx)
    when, force = _forced(args)
    new = parse_when(when, ctx.now, ctx.game.timezone)
    if new <= ctx.now:
        raise Refused(say("gm_refused", why="in_past", when=format_local(new, ctx.game.timezone), game=ctx.game.name))
    _not_too_soon(ctx, new, force, f"DEADLINE {ctx.game.name} {when}")
    old = outlook.timing(ctx.game, turn).due
    _set_deadline(ctx, turn, new)
    turn.calendar_sequence = (turn.calendar_sequence or 0) + 1  # the calendar event's update (RFC 5546)
    ctx.undo = {"deadline": old.isoformat() if old else None}
    announce(
        ctx,
        say("gm_deadline_title", label=turn.label),
        say("gm_deadline", label=turn.label),
        kind="deadline",
        calendar=True,
    )
    ctx.claims.append(claims.of_turn(ctx.game, turn))
    return say(
        "gm_deadline_done",
        label=turn.label,
        new=format_local(new, ctx.game.timezone),
        old=format_local(old, ctx.game.timezone) if old else None,
    )


def order(ctx: GmAction, args: tuple[str, ...]) -> str:
    rules, state, turn = _open(ctx)
    seat = _seat(ctx, args[0])
    if seat.name not in rules.expected_players(state):
        raise Refused(say("gm_refused", why="no_orders_to_give", seat=seat.name, label=turn.label))
    orders = _parse_for(rules, state, seat, args[1])
    canonical = rules.format_orders(orders)
    # A part-only ORDER ("ORDER sc1 seb LINE" after "... SPEED 60") is an addition to the
    # complete set on file, as a player's part-only mail is: filed as the whole set it makes.
    earlier = store.orders_on_file(rules, state, seat, store.submissions(ctx.session, turn, seat))
    filed = canonical
    if (
        earlier
        and rules.merge_orders(earlier, orders) == orders
        and store.adds_a_part(rules, state, seat.name, earlier, orders)
    ):
        filed = rules.format_orders(store.with_the_rest(rules, state, seat.name, earlier, orders))
    ctx.session.add(
        OrderSubmission(turn_id=turn.id, seat_id=seat.id, inbound_id=None, source="gm", text=filed, received_at=ctx.now)
    )
    ctx.session.flush()
    on_file = store.orders_on_file(rules, state, seat, store.submissions(ctx.session, turn, seat))
    assert on_file is not None
    now_on_file = rules.format_orders(on_file)
    receipt, _ = dice.receipt_of(ctx.game.name, turn, rules, state, seat.name, on_file)
    # The last orders of a turn that resolves early: it is resolved as the GM's mail is
    # answered (`bot.intake.proven`), by the tick's own test.
    last = turns.is_due(ctx.session, ctx.game, turn, ctx.now, pace=turns.practice_pace(ctx.shell.settings.practice))
    # The answer claims what counts for the seat now (the orders on file), from the outlook.
    counting = outlook.what_counts(rules, state, seat, on_file)
    ctx.claims.append(claims.of_turn(ctx.game, turn, claims.counts(seat.name, counting), resolved=last))
    # The GM's hand is visible: the player is told what the GM entered for them, with
    # the receipt of what is on file now; every ORDER is in the turn's results and record.
    announce(
        ctx,
        say("gm_order_entered_title", label=turn.label),
        say(
            "gm_order_entered",
            seat=seat.name,
            label=turn.label,
            entered=canonical.splitlines(),
            on_file=now_on_file.splitlines(),
            receipt=receipt,
            last=last,
        ),
        kind="gm_order",
        to=seat.name,
    )
    return say(
        "gm_order_done",
        seat=seat.name,
        label=turn.label,
        entered=orders_block(canonical),
        on_file=orders_block(now_on_file),
        robot=seat.robot,
    )


def _claim_what_counts(ctx: GmAction, rules: AnyGame, state: GameState, turn: Turn, seat: Seat) -> None:
    """The GM's answer claims what counts for `seat` in the open `turn` as it now stands (its
    orders on file, the GM's plot or the default: `bot.outlook`), and the turn's deadline."""
    on_file = store.orders_on_file(rules, state, seat, store.submissions(ctx.session, turn, seat))
    ctx.claims.extend(claims.for_seat(ctx.game, rules, state, turn, seat, on_file))


def plot(ctx: GmAction, args: tuple[str, ...]) -> str:
    rules, state, turn = _open(ctx)
    seat = _seat(ctx, args[0])
    old = seat.gm_plot
    if args[1].strip().upper() == "CLEAR":
        if old is None:
            return say("gm_plot_none", seat=seat.name)
        seat.gm_plot = None
        ctx.undo = {"seat": seat.name, "gm_plot": old}
        _claim_what_counts(ctx, rules, state, turn, seat)
        # What counts for the seat if nothing of its own arrives, now that no plot stands.
        default = outlook.what_counts(rules, state, seat, None).text if seat.name in rules.players(state) else ""
        announce(
            ctx,
            say("gm_plot_cleared_title"),
            say("gm_plot_cleared", label=turn.label, default=orders_block(default) if default else None),
            kind="gm_plot",
            to=seat.name,
        )
        return say("gm_plot_cleared_done", seat=seat.name, told=not seat.robot)
    if seat.name not in rules.players(state):
        raise Refused(say("gm_refused", why="not_in_race", seat=seat.name))
    text = _orders_text(args[1])
    parsed = rules.parse_orders(state, seat.name, text)
    standing = rules.plot_orders(state, seat.name, text)
    not_yet = ""
    if parsed.ok and parsed.orders:
        stored = rules.format_orders(parsed.orders)
    elif standing is not None and all(p.kind is ProblemKind.INVALID for p in parsed.problems):
        # A plot in a form only a plot may take (speedphreakz.md §5: a program without a
        # round number, for every round the player leaves empty): kept as the GM wrote it,
        # and read by the game at each deadline. An illegal order is still refused below.
        stored = "\n".join(line for line in text.splitlines() if line)
    elif parsed.problems and all(p.kind is ProblemKind.ILLEGAL for p in parsed.problems):
        # Orders the game understands but does not allow in this turn (CRUISE at the start): a
        # plot stands "while it is legal", so it is kept for the turns that allow it, and the
        # game's own default stands until then -- said to the GM and to the player.
        stored = "\n".join(line.strip() for line in text.splitlines() if line.strip())
        not_yet = "; ".join(p.reason for p in parsed.problems)
    else:
        raise _not_valid(rules, state, seat, parsed)
    seat.gm_plot = stored
    ctx.undo = {"seat": seat.name, "gm_plot": old}
    _claim_what_counts(ctx, rules, state, turn, seat)
    # In the open turn the plot stands for what the game makes of it, or (not allowed yet) the
    # game's own default stands until a turn allows it: what counts if nothing of the seat's
    # own arrives, as the outlook says it (`what_counts`, the deadline's `nmr_default`).
    counting = outlook.what_counts(rules, state, seat, None)
    stands = None
    if counting.source is outlook.Source.PLOT and counting.text != stored:
        stands = say("gm_plot_stands", label=turn.label, standing=orders_block(counting.text))
    elif counting.source is not outlook.Source.PLOT and not_yet:
        default = counting.text
        stands = say(
            "gm_plot_stands",
            label=turn.label,
            standing=None,
            not_yet=not_yet,
            default=orders_block(default) if default else None,
        )
    announce(
        ctx,
        say("gm_plot_title"),
        say("gm_plot", plot=orders_block(stored), not_yet=bool(not_yet), stands=stands),
        kind="gm_plot",
        to=seat.name,
    )
    return say(
        "gm_plot_done",
        seat=seat.name,
        game=ctx.game.name,
        plot=orders_block(stored),
        stands=stands,
        told=not seat.robot,  # a robot seat gets no mail (store.mailed_seats)
    )


def process(ctx: GmAction, args: tuple[str, ...]) -> str:
    rules, state, turn = _open(ctx)
    resumed = outlook.timing(ctx.game, None).paused
    if resumed:  # PROCESS resolves the turn now, and the game goes on from there
        ctx.game.status = GameStatus.ACTIVE
    writes, resolved = resolve_writes(ctx.shell, ctx.session, ctx.game, turn)
    outcome = writes.outcome
    ctx.resolved.append(resolved)
    enforce_nmr_limit(ctx.shell, ctx.session, ctx.game)
    following = store.open_turn(ctx.session, ctx.game)
    return say(
        "gm_process_done",
        resumed=resumed,
        label=turn.label,
        defaulted=[name for name in outcome.defaulted if outcome.filled.get(name) != "plot"],
        plotted=[name for name in outcome.defaulted if outcome.filled.get(name) == "plot"],
        next=following.label if following is not None else None,
        due=_deadline_words(outlook.timing(ctx.game, following), ctx.game.timezone) if following is not None else None,
        kept=carried_words.in_gm_results(writes.recheck, following.label if following is not None else turn.label),
    )


def preview(ctx: GmAction, args: tuple[str, ...]) -> str:
    rules, state, turn = _open(ctx)
    # Never the turn's own dice: a throwaway secret, drawn for this preview alone, so that no
    # preview shows a roll the turn will have (a GM could otherwise redraw them by changing a
    # robot's orders, and choose).
    count = 1 + len(
        ctx.session.scalars(
            select(GmAudit.id).where(GmAudit.game_id == ctx.game.id, GmAudit.command.like("PREVIEW %"))
        ).all()
    )
    throwaway = ctx.shell.entropy.throwaway(ctx.game.name, turn.number, count) if rules.chance else None
    subs = store.turn_submissions(ctx.session, turn)
    outcome = turns.compute(ctx.session, ctx.game, rules, state, turn, subs, throwaway=throwaway)
    orders = []
    said: list[Counts] = []
    for name in sorted(outcome.orders):
        seat = store.seat_named(ctx.game, name)
        on_file = store.orders_on_file(rules, state, seat, subs.get(seat.id, ())) if seat is not None else None
        if seat is not None:
            # The whole set that counts, as the seat's mails say it (bot.outlook.what_counts):
            # what the game's default fills in is named as such.
            counts = outlook.what_counts(rules, state, seat, on_file)
            said.append(claims.counts(name, counts))
            text, filled, later, own = counts.text, "\n".join(counts.filled), list(counts.later), counts.game_default
            source = "on file" if on_file is not None else counts.source.value
        else:
            text, filled, later, own = rules.format_orders(outcome.orders[name]), "", [], ""
            source = "default"
        orders.append(
            {"seat": name, "source": source, "text": text, "filled": filled, "later": later, "game_default": own}
        )
    view = rules.view(outcome.resolution.state, outcome.resolution, Viewer.GM)
    mail_ctx = game_context(ctx.shell, ctx.game, rules)
    mail_ctx.update(
        {
            "view": view,
            "robots": seat_labels(ctx.game.seats),
            "turn": {
                "label": turn.label,
                "deadline": _deadline_words(outlook.timing(ctx.game, turn), ctx.game.timezone),
            },
            "orders": orders,
            "defaulted": [name for name in outcome.defaulted if outcome.filled.get(name) != "plot"],
            "plotted": [name for name in outcome.defaulted if outcome.filled.get(name) == "plot"],
            "throwaway": throwaway,
            "timezone": ctx.game.timezone,
        }
    )
    ctx.mail = ctx.shell.renderer.render("gm_preview", mail_ctx, game=ctx.game.kind)
    ctx.claims.append(claims.of_turn(ctx.game, turn, *said))
    ctx.extra = ctx.mail.body
    return say("gm_preview_done", label=turn.label, throwaway=bool(throwaway))


def pause(ctx: GmAction, args: tuple[str, ...]) -> str:
    _rules, _state, turn = _open(ctx)
    if ctx.game.status == GameStatus.PAUSED:
        raise Refused(say("gm_refused", why="paused_already", game=ctx.game.name))
    ctx.game.status = GameStatus.PAUSED
    turn.calendar_sequence = (turn.calendar_sequence or 0) + 1  # the deadline's event is cancelled
    announce(
        ctx,
        say("gm_pause_title", game=ctx.game.name),
        say("gm_pause"),  # the letter says once what runs
        kind="pause",
        calendar=True,
    )
    ctx.claims.append(claims.of_turn(ctx.game, turn))
    return say("gm_pause_done", game=ctx.game.name, label=turn.label)


def _deadline_set_while_paused(ctx: GmAction) -> bool:
    """Whether the GM set the open turn's deadline (DEADLINE or EXTEND, done) since the game was
    last paused (by PAUSE or by ROLLBACK, which reopens a turn paused), by the audit log."""
    audit = (
        select(GmAudit.id)
        .where(GmAudit.game_id == ctx.game.id, GmAudit.outcome.like("done:%"))
        .order_by(GmAudit.id.desc())
        .limit(1)
    )
    paused_at = ctx.session.scalar(
        audit.where(or_(GmAudit.command.ilike("PAUSE %"), GmAudit.command.ilike("ROLLBACK %")))
    )
    if paused_at is None:
        return False
    return (
        ctx.session.scalar(
            audit.where(
                GmAudit.id > paused_at,
                or_(GmAudit.command.ilike("DEADLINE %"), GmAudit.command.ilike("EXTEND %")),
            )
        )
        is not None
    )


def resume(ctx: GmAction, args: tuple[str, ...]) -> str:
    rules, state, turn = _open(ctx)
    if ctx.game.status != GameStatus.PAUSED:
        raise Refused(say("gm_refused", why="not_paused", game=ctx.game.name))
    ctx.game.status = GameStatus.ACTIVE
    old = as_utc(turn.deadline) if turn.deadline is not None else None
    if rules.expected_players(state):
        # GM_COMMANDS: the clock restarts from now -- but a deadline the GM set later than
        # that (EXTEND, DEADLINE before the pause) is kept, and so is one the GM set (DEADLINE,
        # EXTEND) since the game was paused, if it is still to come: the GM chose it for the
        # resumed turn, and was told it stands.
        fresh = next_deadline(parse_schedule(ctx.game.deadline_spec), ctx.now, ctx.game.timezone)
        chosen = old is not None and old > ctx.now and _deadline_set_while_paused(ctx)
        if fresh is not None and old is not None and (old > fresh or chosen):
            fresh = old
        _set_deadline(ctx, turn, fresh if fresh is not None else old)
    # The pause cancelled the deadline's calendar event: it is sent again, moved or not.
    moved = outlook.timing(ctx.game, turn).due is not None
    if moved:
        turn.calendar_sequence = (turn.calendar_sequence or 0) + 1  # the calendar event's update (RFC 5546)
    ctx.undo = {"deadline": old.isoformat() if old else None}
    if turns.is_due(ctx.session, ctx.game, turn, ctx.now, pace=turns.practice_pace(ctx.shell.settings.practice)):
        # Every order is in (and the turn resolves as soon as they are): it resolves at once,
        # and its results are the players' news; a "resumes" mail seconds before them is not.
        ctx.claims.append(claims.of_turn(ctx.game, turn, resolved=True))
        return say("gm_resume_done", game=ctx.game.name, label=turn.label, resolved=True)
    announce(
        ctx,
        say("gm_resume_title", game=ctx.game.name),
        say("gm_resume", label=turn.label),
        kind="resume",
        calendar=moved,
    )
    ctx.claims.append(claims.of_turn(ctx.game, turn))
    return say(
        "gm_resume_done",
        game=ctx.game.name,
        label=turn.label,
        resolved=False,
        due=_deadline_words(outlook.timing(ctx.game, turn), ctx.game.timezone),
    )


def set_figure(ctx: GmAction, args: tuple[str, ...]) -> str:
    rules, state, turn = _open(ctx)
    seat = _seat(ctx, args[0])
    new_state = rules.set_figure(state, seat.name, args[1], args[2])
    old = turn.state
    turn.state = rules.dump_state(new_state)
    ctx.undo = {"turn": turn.number, "state": old}
    robots.refile(ctx.session, rules, ctx.game, turn, new_state, ctx.now)  # the robots drive on from the new state
    # What each robot seat's orders now are (its earlier orders, told in a PREVIEW or STATUS,
    # no longer count): said from the outlook, and claimed.
    expected = set(rules.expected_players(new_state))
    refiled: list[tuple[str, str]] = []
    said: list[Counts] = []
    for robot in sorted(
        (s for s in ctx.game.seats if s.robot and s.active and s.name in expected), key=lambda s: s.name
    ):
        counting = outlook.what_counts(
            rules,
            new_state,
            robot,
            store.orders_on_file(rules, new_state, robot, store.submissions(ctx.session, turn, robot)),
        )
        refiled.append((robot.name, " / ".join(counting.text.splitlines())))
        said.append(claims.counts(robot.name, counting))
    if said:
        ctx.claims.append(claims.of_turn(ctx.game, turn, *said))
    # A figure the seat has none of now (Speed Circuit's space before the grid) is not said.
    figures = [(name, figure) for name, figure in rules.figures(new_state, seat.name).items() if figure is not None]
    stale = []
    for other in store.active_seats(ctx.game):
        subs = store.sent(store.submissions(ctx.session, turn, other))
        if any(not rules.parse_orders(new_state, other.name, s.text).ok for s in subs):
            stale.append(other.name)
    told = seat.active and not seat.robot  # a robot seat gets no mail (store.mailed_seats)
    if told:
        announce(
            ctx,
            say("gm_set_title", what=args[1]),
            say(
                "gm_set",
                what=args[1],
                value=args[2],
                label=turn.label,
                figures=figures,
                stale=seat.name in stale,
            ),
            kind="gm_set",
            to=seat.name,
        )
    return say(
        "gm_set_done",
        seat=seat.name,
        game=ctx.game.name,
        what=args[1],
        value=args[2],
        figures=figures,
        stale=stale,
        told=told,
        robots=refiled,
    )


def replace_seat(ctx: GmAction, args: tuple[str, ...]) -> str:
    seat = _seat(ctx, args[0], active=False)
    if not seat.active:  # DROP, RESIGN, the NMR limit: the car is out of the race's state
        raise Refused(say("gm_replace_out", seat=seat.name, game=ctx.game.name))
    driver = args[1].strip().replace(":", " ").split()
    if driver and driver[0].upper() == "ROBOT":
        return _to_robot(ctx, seat, _robot_level(driver[1:]))
    address, _, name = args[1].strip().partition(" ")
    address = address.strip("<>").lower()
    problem = address_problem(address)
    if problem is not None:  # an address no relay takes would stall the outbox
        raise Refused(say("gm_refused", why="bad_address", problem=problem))
    if any(s.player.address == address for s in store.active_seats(ctx.game)):
        raise Refused(say("gm_refused", why="has_seat", address=address, game=ctx.game.name))
    if ctx.game.status == GameStatus.FINISHED:
        raise Refused(say("gm_refused", why="over", game=ctx.game.name))
    old_player = seat.player
    # A new player without a zone of their own gets the game's, as at game new.
    new_player = player_for(ctx.session, address, name.strip(), ctx.now, ctx.game.timezone)
    plot_cleared = _hand_over(ctx, seat, new_player)
    if ctx.game.status == GameStatus.SIGNUP:
        send_welcome(ctx.shell, ctx.session, ctx.game, seat)
        return _replaced(ctx, seat, old_player, new_player)
    _rules, _state, turn = under_way(ctx.session, ctx.game)
    label = turn.label if turn is not None else None  # the new holder drives from it, or for what is left
    # The predecessor's orders are said to stand only where they sent some for this turn.
    on_file = turn is not None and bool(store.sent(store.submissions(ctx.session, turn, seat)))
    turns.queue_seat_mail(
        ctx.shell,
        ctx.session,
        ctx.game,
        seat,
        "turn_sheet",
        note=say(
            "replace_taken_note",
            seat=seat.name,
            game=ctx.game.name,
            predecessor=old_player.name,
            label=label,
            on_file=on_file,
            season_part=seasons.seat_goes_on(ctx.session, ctx.game, "taker"),
        ),
    )
    return _replaced(ctx, seat, old_player, new_player, label=label, plot=plot_cleared)


def _replaced(
    ctx: GmAction,
    seat: Seat,
    old_player: Player,
    holder: Player | None,
    *,
    label: str | None = None,
    plot: str | None = None,
    filed: str | None = None,
) -> str:
    """The end of every REPLACE, to a player (`holder`) or to the robot (None): the other
    players told who drives `seat` on and from which turn (`label`; none: for what is left),
    unless a player takes it before the start (the welcome is all they need); and the GM's
    confirmation, naming the former holder, the GM plot it cleared (`plot`) or the turn the
    robot's orders are on file for (`filed`)."""
    robot = holder is None
    signup = not robot and ctx.game.status == GameStatus.SIGNUP
    if not signup:
        announce(
            ctx,
            say("gm_replace_title", seat=seat.name),
            say(
                "gm_replace",
                seat=seat.name,
                robot=robot,
                holder=holder.name if holder is not None else None,
                label=label,
                kind=ctx.game.kind,
            ),
            kind="replace",
            about=seat.name,
        )
    return say(
        "gm_replace_done",
        seat=seat.name,
        holder=holder.name if holder is not None else None,
        address=holder.address if holder is not None else None,
        old=old_player.address,
        robot=robot,
        signup=signup,
        plot=_one_line(plot) if plot else None,
        filed=filed,
        kind=ctx.game.kind,
    )


def _tell_replaced(ctx: GmAction, seat: Seat, old_player: Player, *, robot: bool) -> None:
    """The seat's former holder told, at their own address, that `seat` is handed on (to the
    robot, with `robot`): without the seat's signed reply address, which would act for the
    seat's new holder (bot.letters: ToAddress)."""
    letters.notice(
        ctx.shell,
        ctx.session,
        ToAddress(old_player.address, old_player.name),
        say("commands_seat_replaced_title", game=ctx.game.name),
        say("commands_seat_replaced", seat=seat.name, game=ctx.game.name, robot=robot, kind=ctx.game.kind),
        kind="replaced",
        game=ctx.game,
    )


def _hand_over(ctx: GmAction, seat: Seat, new_player: Player) -> str | None:
    """`seat` handed to `new_player` (REPLACE): the former holder told at their own address, the
    change of holder in the reliability record once the game is under way, a new password and
    reply address (the old holder's stop working), no NMR streak, and the GM's plot cleared (it
    was for the player who leaves: docs/DESIGN.md, "The GM's plot"), which is returned. What it
    changed is the undo."""
    old_player = seat.player
    ctx.undo = {
        "seat": seat.name,
        "player": old_player.address,
        "secret": seat.secret,
        "nmr_streak": seat.nmr_streak,
        "gm_plot": seat.gm_plot,
        "handed_over": seat.handed_over,
    }
    plot_cleared = seat.gm_plot
    seat.gm_plot = None
    _tell_replaced(ctx, seat, old_player, robot=False)
    if ctx.game.status != GameStatus.SIGNUP and (open_now := store.open_turn(ctx.session, ctx.game)) is not None:
        reliability.note_change(ctx.session, seat, open_now.number, ChangeWhy.REPLACED, new_player, ctx.now)
    seat.player_id = new_player.id
    seat.robot = False
    seat.handed_over = True  # the letters show it as "<seat> (<new holder's name>)"
    seat.secret = new_secret()
    seat.reply_salt = new_secret()
    seat.nmr_streak = 0
    ctx.session.flush()
    ctx.session.refresh(seat)
    return plot_cleared


def _robot_level(words: list[str]) -> RobotLevel:
    """The level after ROBOT in REPLACE <game> <seat> ROBOT [LEVEL] (or ROBOT:LEVEL, as the
    command line's ``--robot NAME:LEVEL``): normal when none; any other word is refused,
    naming the levels."""
    if not words:
        return RobotLevel.NORMAL
    try:
        (word,) = words
        return RobotLevel(word.lower())
    except ValueError:
        raise Refused(
            say(
                "commands_robot_level_unknown",
                given=echo(" ".join(words), 40),
                levels=", ".join(level.value.upper() for level in RobotLevel),
            )
        ) from None


def _release_hold(ctx: GmAction, seat: Seat, turn: Turn) -> None:
    """A WAIT of the seat's former player holds the open turn no more once a robot drives the seat
    (`store.holds`): a robot never waits, and its orders are on file at once. A NOWAIT row lifts
    it. (Handed to a new player, the WAIT stands: it keeps the turn open for their own orders,
    and their NOWAIT lifts it.)"""
    if store.holds(store.submissions(ctx.session, turn, seat)):
        store.file_note(ctx.session, turn, seat, store.NOWAIT, "", ctx.now)


def _to_robot(ctx: GmAction, seat: Seat, level: RobotLevel = RobotLevel.NORMAL) -> str:
    """REPLACE <game> <seat> ROBOT [LEVEL]: the game's robot drives the seat from now
    on, at `level`. The outgoing player is told as for any REPLACE; the robot's orders for the
    open turn are filed now (bot.games.robots), the seat's own from then on."""
    if seat.robot:
        raise Refused(say("gm_refused", why="robot_already", seat=seat.name, game=ctx.game.name))
    if ctx.game.status == GameStatus.FINISHED:
        raise Refused(say("gm_refused", why="over", game=ctx.game.name))
    if ctx.game.status != GameStatus.SIGNUP:
        rules_now, state, _turn = under_way(ctx.session, ctx.game)
        if seat.name not in rules_now.players(state):  # the mails would say a robot drives it on
            raise Refused(
                say("gm_refused", why="nothing_to_drive", seat=seat.name, game=ctx.game.name, kind=ctx.game.kind)
            )
    old_player = seat.player
    ctx.undo = {
        "seat": seat.name,
        "player": old_player.address,
        "secret": seat.secret,
        "nmr_streak": seat.nmr_streak,
        "gm_plot": seat.gm_plot,
    }
    _tell_replaced(ctx, seat, old_player, robot=True)
    robot = robots.robot_player(ctx.session, ctx.now)
    if ctx.game.status != GameStatus.SIGNUP and (open_now := store.open_turn(ctx.session, ctx.game)) is not None:
        reliability.note_change(ctx.session, seat, open_now.number, ChangeWhy.ROBOT, robot, ctx.now)
        _release_hold(ctx, seat, open_now)
    seat.player_id = robot.id
    seat.robot = True
    seat.robot_level = level.value
    seat.secret = new_secret()
    seat.reply_salt = new_secret()  # the old holder's reply address stops working
    seat.nmr_streak = 0
    seat.gm_plot = None  # a robot drives itself
    ctx.session.flush()
    ctx.session.refresh(seat)
    filed = None  # the label of the open turn the robot's orders are on file for
    turn = store.open_turn(ctx.session, ctx.game) if ctx.game.status != GameStatus.SIGNUP else None
    if turn is not None:
        rules = turns.rules_of(ctx.game)
        if robots.file_orders(ctx.session, rules, ctx.game, turn, rules.load_state(turn.state), [seat], ctx.now):
            filed = turn.label
    return _replaced(ctx, seat, old_player, None, label=turn.label if turn is not None else None, filed=filed)


def _drop_seat(ctx: GmAction, seat: Seat) -> str:
    """`drop_seat` as the GM's: what it replaced goes into the audit log."""
    text, undo = drop_seat(ctx.session, ctx.game, seat, ChangeWhy.DROPPED, ctx.now)
    if undo is not None:
        ctx.undo = undo
    return text


def drop(ctx: GmAction, args: tuple[str, ...]) -> str:
    seat = _seat(ctx, args[0], active=False)
    if not seat.active:
        # A closed seat may still be in the race after a ROLLBACK reopened an older turn.
        _rules, state, _turn = _open(ctx)
        if seat.name not in _rules.players(state):
            raise Refused(say("gm_refused", why="out_already", seat=seat.name, game=ctx.game.name))
        return say("gm_drop_done", dropped=_drop_seat(ctx, seat), told=False)
    # The orders the seat sent for the open turn: they no longer count, and the seat is told so.
    turn = store.open_turn(ctx.session, ctx.game) if ctx.game.status == GameStatus.ACTIVE else None
    had_orders = turn is not None and bool(store.sent(store.submissions(ctx.session, turn, seat)))
    dropped = _drop_seat(ctx, seat)
    letters.notice(
        ctx.shell,
        ctx.session,
        ToSeat(seat),
        say("commands_dropped_title", game=ctx.game.name),
        say(
            "commands_dropped",
            seat=seat.name,
            game=ctx.game.name,
            void=turn.label if turn is not None and had_orders else None,
        ),
        kind="dropped",
        game=ctx.game,
    )
    announce(
        ctx,
        say("gm_drop_title", seat=seat.name),
        say("gm_drop", seat=seat.name, game=ctx.game.name, dropped=dropped),
        kind="drop",
        about=seat.name,
    )
    return say("gm_drop_done", dropped=dropped, told=True)


def _pause_reopened(session: Session, game: Game) -> None:
    """A game a ROLLBACK reopened is paused: with every order on file the next tick would
    resolve it again at once; the GM sets it right (ORDER, SET, DROP ...), then RESUMEs or
    PROCESSes. A finished race no longer counts for ratings: its kind's stored ratings are
    worked out again without it."""
    finished = game.status == GameStatus.FINISHED
    game.status = GameStatus.PAUSED
    game.finished_at = None
    if finished:
        ratings.rebuild(session, game.kind)


def rollback(ctx: GmAction, args: tuple[str, ...]) -> str:
    game, session = ctx.game, ctx.session
    if game.status == GameStatus.SIGNUP:
        raise Refused(say("gm_refused", why="not_started", game=game.name))
    rules = turns.rules_of(game)
    undone: list[dict[str, object]] = []
    while True:
        last = store.last_resolved_turn(session, game)
        if last is None:
            raise Refused(say("gm_refused", why="nothing_to_roll_back", game=game.name))
        undone.append(_undo_resolution(ctx, last))
        # A turn that needs no orders (Racecraft's final sprint) would resolve again at once: go on.
        if rules.expected_players(rules.load_state(last.state)) or store.last_resolved_turn(session, game) is None:
            break
    turn = last
    kept, gone = _kept_orders(turn, undone)
    turn.carried = [k.to_json() for k in kept] or None
    turn.corrections = (turn.corrections or 0) + 1  # its next results replace the ones sent
    _pause_reopened(session, game)
    # The turn is restored exactly (state, seed, the orders on file); only its deadline is
    # renewed when the old one has passed, or the tick would resolve it again at once.
    _restore(ctx, rules, turn)
    ctx.undo = _undo_of_rollback(undone, kept, gone)
    next_label = _next_label(undone, turn)
    for k in kept:
        announce(
            ctx,
            say("rollback_kept_title", label=next_label),
            carried_words.kept_to_seat(k, next_label=next_label, reopened=turn.label),
            kind="rollback",
            to=k.seat,
        )
    for k, label in gone:
        announce(
            ctx,
            say("rollback_withdrawn_title", label=label),
            carried_words.withdrawn_to_seat(k, label=label, reopened=turn.label),
            kind="rollback",
            to=k.seat,
        )
    closed = _closed_seats_in_the_race(game, rules, turn)
    dice_facts = _dice_facts(session, game, rules, turn)
    for robot in _robots_since_later(session, game, rules, turn):
        announce(
            ctx,
            say("rollback_robot_title", seat=robot, label=turn.label),
            say("rollback_robot", seat=robot, label=turn.label),
            kind="rollback",
            about=robot,
        )
    # Each seat is told what stands for it now, from the outlook (its orders, or what it gets).
    state = rules.load_state(turn.state)
    subs = store.turn_submissions(session, turn)
    wanted = set(rules.expected_players(state))
    for seat in store.mailed_seats(game):
        on_file = outlook.on_file(rules, state, seat, subs.get(seat.id, ()))
        announce(
            ctx,
            say("rollback_reopened_title", label=turn.label),
            carried_words.reopened_to_seat(
                outlook.what_counts(rules, state, seat, on_file),
                reopened=turn.label,
                orders_wanted=seat.name in wanted,
                dice=dice_facts,
            ),
            kind="rollback",
            calendar=True,
            to=seat.name,
            rank=LEAD,
        )
    return say(
        "gm_rollback_done",
        label=turn.label,
        game=game.name,
        carried=carried_words.rollback_to_gm(kept, gone, next_label=next_label, reopened=turn.label),
        closed=closed,
    )


def _robots_since_later(session: Session, game: Game, rules: AnyGame, turn: Turn) -> list[str]:
    """The seats a robot runner took over at a turn after the reopened `turn` and that play in
    it: the robot plays the reopened turn too (`_robots_drive` files its orders)."""
    state = rules.load_state(turn.state)
    wanted = set(rules.expected_players(state)) | set(rules.players(state))
    robots = {s.id: s.name for s in game.seats if s.robot and s.name in wanted}
    if not robots:
        return []
    later = session.scalars(
        select(SeatChange.seat_id).where(
            SeatChange.game_id == game.id,
            SeatChange.seat_id.in_(robots),
            SeatChange.why == ChangeWhy.ROBOT.value,
            SeatChange.turn > turn.number,
        )
    )
    return sorted({robots[seat_id] for seat_id in later})


def _dice_facts(session: Session, game: Game, rules: AnyGame, turn: Turn) -> dict[str, object] | None:
    """What a seat's notice of the reopened `turn` says of its dice: the draw committed to (its
    sequence number, the word for it, the commitment), or None when the turn has none."""
    turn_dice = reveal.committed(session, LetterCache(), game, rules, turn, game.timezone)
    if turn_dice is None:
        return None
    return {"seq": turn_dice["seq"], "draw_word": turn_dice["draw_word"], "commitment": turn_dice["commitment"]}


def _restore(ctx: GmAction, rules: AnyGame, turn: Turn) -> None:
    """The reopened `turn` as it was (its streaks recounted, its robots' orders and dice drawn
    again), with a new deadline when the old one has passed, and its calendar event cancelled
    (the game is paused)."""
    deadline = as_utc(turn.deadline) if turn.deadline is not None else None
    if deadline is None or deadline <= ctx.now:
        deadline = next_deadline(parse_schedule(ctx.game.deadline_spec), ctx.now, ctx.game.timezone)
    _set_deadline(ctx, turn, deadline)
    turn.calendar_sequence = (turn.calendar_sequence or 0) + 1  # paused: its event is cancelled
    _recount_streaks(ctx.session, ctx.game, turn)
    _robots_drive(ctx, rules, turn)
    _draw_again(ctx, rules, turn)


def _undo_of_rollback(
    undone: list[dict[str, object]], kept: Sequence[Kept], gone: Sequence[tuple[Kept, str]]
) -> dict[str, object]:
    """What the audit log keeps of a ROLLBACK: each resolution undone, the orders kept, and
    those withdrawn with the label of the turn they were for."""
    return {
        "undone": undone,
        "kept": [k.to_json() for k in kept],
        "withdrawn": [{**k.to_json(), "label": label} for k, label in gone],
    }


def _closed_seats_in_the_race(game: Game, rules: AnyGame, turn: Turn) -> list[str]:
    """The seats closed (DROP, RESIGN, NMR limit) after the resolution a ROLLBACK undid, still in
    the race in the restored state: the GM decides whether they run this turn again."""
    return [s.name for s in game.seats if not s.active and s.name in rules.players(rules.load_state(turn.state))]


def _undo_resolution(ctx: GmAction, resolved: Turn) -> dict[str, object]:
    session = ctx.session
    discarded: dict[str, object] = {
        "turn": resolved.number,
        "resolved_at": as_utc(resolved.resolved_at).isoformat() if resolved.resolved_at else None,
        "state_after": resolved.state_after,
        "events": resolved.events,
        "defaults": [],
        "next_turn": None,
    }
    # The mail its resolution sent and all mail of the game since, by outbox id: a reply to one
    # of them answers results the rollback withdraws (`bot.intake.orders.withdrawn_sheet`).
    first = session.scalar(
        select(func.min(Outbox.id)).where(
            Outbox.game_id == resolved.game_id,
            Outbox.kind.in_(RESULTS_KINDS),
            Outbox.created_at >= resolved.resolved_at,
        )
    )
    upto = session.scalar(select(func.max(Outbox.id)).where(Outbox.game_id == resolved.game_id))
    discarded["mail_ids"] = [first, upto] if first is not None and upto is not None else None
    following = session.scalar(select(Turn).where(Turn.game_id == resolved.game_id, Turn.number == resolved.number + 1))
    if following is not None:
        if following.resolved_at is not None:
            raise Refused(say("gm_refused", why="next_resolved", number=following.number))
        subs = list(
            session.scalars(
                select(OrderSubmission).where(OrderSubmission.turn_id == following.id).order_by(OrderSubmission.id)
            )
        )
        discarded["next_turn"] = {
            "number": following.number,
            "label": following.label,
            "state": following.state,
            "seed": following.seed,
            "opened_at": as_utc(following.opened_at).isoformat(),
            "deadline": as_utc(following.deadline).isoformat() if following.deadline else None,
            "submissions": [_sub_json(ctx, s) for s in subs],
        }
        # The orders people sent for it are kept (`bot.games.carried`); orders it kept from an
        # earlier ROLLBACK were for the turn after it, which is gone too.
        discarded["kept"] = [k.to_json() for k in carried.keep(session, ctx.game, turns.rules_of(ctx.game), following)]
        discarded["kept_before"] = list(following.carried or [])
        session.execute(delete(OrderSubmission).where(OrderSubmission.turn_id == following.id))
        _withdraw(ctx, following)
        session.delete(following)
    defaults = list(
        session.scalars(
            select(OrderSubmission).where(
                OrderSubmission.turn_id == resolved.id, OrderSubmission.source.in_(("default", "plot"))
            )
        )
    )
    discarded["defaults"] = [_sub_json(ctx, s) for s in defaults]
    for sub in defaults:
        session.delete(sub)
    resolved.resolved_at = None
    resolved.state_after = None
    resolved.events = None
    if resolved.secret is not None:
        # Its results revealed the secret: the log says its draw was rolled back; reopened, the
        # turn gets a fresh one (`_draw_again`).
        discarded["secret"] = resolved.secret
        dice.roll_back(session, ctx.game.id, resolved.number, resolved.secret)
    session.flush()
    session.expire(ctx.game, ["turns"])
    return discarded


def _kept_orders(reopened: Turn, undone: Sequence[dict[str, object]]) -> tuple[list[Kept], list[tuple[Kept, str]]]:
    """The orders the discarded turns held, from `undone` (`_undo_resolution`'s, in order): kept
    for the reopened turn's next (the one discarded right after it), or withdrawn with the label
    of the turn they were for, which no longer comes (a turn further on, or one kept before)."""
    kept: list[Kept] = []
    gone: list[tuple[Kept, str]] = []
    for entry in undone:
        following = entry.get("next_turn")
        if not isinstance(following, dict):
            continue
        rows = entry.get("kept")
        items = [Kept.from_json(row) for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []
        if following.get("number") == reopened.number + 1:
            kept.extend(items)
        else:
            gone.extend((k, str(following.get("label"))) for k in items)
        before = entry.get("kept_before")
        if isinstance(before, list) and before:
            # Kept for the turn after the discarded one, by an earlier ROLLBACK: that turn is gone.
            gone.extend(
                (Kept.from_json(row), say("turn_after", label=following.get("label")))
                for row in before
                if isinstance(row, dict)
            )
    return kept, gone


def _next_label(undone: Sequence[dict[str, object]], reopened: Turn) -> str:
    """The label of the turn after `reopened`, as it was before the rollback discarded it."""
    for entry in undone:
        following = entry.get("next_turn")
        if isinstance(following, dict) and following.get("number") == reopened.number + 1:
            return str(following.get("label"))
    return say("turn_after", label=reopened.label)


def _withdraw(ctx: GmAction, discarded: Turn) -> None:
    """The open turn a ROLLBACK discards never resolves with its secret: the game's commitment
    log reveals it, withdrawn (nothing was drawn with it)."""
    if discarded.secret is not None:
        dice.reveal(ctx.session, ctx.game.id, discarded.number, discarded.secret, ctx.now, CommitmentFate.WITHDRAWN)


def _draw_again(ctx: GmAction, rules: AnyGame, turn: Turn) -> None:
    """The reopened `turn`'s dice drawn again: its results revealed the secret, so it gets a fresh
    one (or anyone could work out the dice of every set of orders before sending theirs),
    committed to in the game's log at once (``reopened``: published, and said in the results, so
    that a re-roll is never hidden). Each seat's receipt changes with the secret: every person
    with orders on file gets the new one."""
    if turn.secret is None:
        return
    turn.secret = ctx.shell.entropy.secret(ctx.game.name, turn.number, turn.secret)
    dice.commit(ctx.session, ctx.game, turn, ctx.now, "reopened")
    state = rules.load_state(turn.state)
    subs = store.turn_submissions(ctx.session, turn)
    for seat in store.mailed_seats(ctx.game):
        on_file = store.orders_on_file(rules, state, seat, subs.get(seat.id, ()))
        if on_file is None or seat.name not in rules.expected_players(state):
            continue
        receipt, text = dice.receipt_of(ctx.game.name, turn, rules, state, seat.name, on_file)
        announce(
            ctx,
            say("rollback_receipt_title", label=turn.label),
            say("rollback_receipt", receipt=receipt, orders=orders_block(text)),
            kind="rollback",
            to=seat.name,
            rank=AFTER,
        )


def _robots_drive(ctx: GmAction, rules: AnyGame, turn: Turn) -> None:
    """The reopened `turn`'s robot orders stand (the same numbers give the same orders); a seat
    handed to a robot after it opened has none of its robot's there, only its former player's
    (or nothing, their default discarded): its robot's are filed now, or the turn would wait
    for a robot and default it at the deadline (bot.games.robots)."""
    subs = store.turn_submissions(ctx.session, turn)
    seats = [
        s
        for s in ctx.game.seats
        if s.robot and not any(sub.source == robots.ROBOT for sub in store.sent(subs.get(s.id, [])))
    ]
    if seats:
        robots.file_orders(ctx.session, rules, ctx.game, turn, rules.load_state(turn.state), seats, ctx.now)


def _sub_json(ctx: GmAction, sub: OrderSubmission) -> dict[str, object]:
    seat = ctx.session.get(Seat, sub.seat_id)
    return {
        "seat": seat.name if seat else sub.seat_id,
        "source": sub.source,
        "text": sub.text,
        "received_at": as_utc(sub.received_at).isoformat(),
        "inbound_id": sub.inbound_id,
    }


def _recount_streaks(session: Session, game: Game, reopened: Turn) -> None:
    """Each seat's NMR streak as it was before `reopened` was resolved, from the history."""
    earlier = list(
        session.scalars(
            select(Turn).where(Turn.game_id == game.id, Turn.number < reopened.number).order_by(Turn.number.desc())
        )
    )
    for seat in game.seats:
        streak = 0
        for turn in earlier:
            subs = store.submissions(session, turn, seat)
            sources = {s.source for s in subs}
            if sources & {"default", "plot"} and not store.sent(subs):
                streak += 1
            elif sources:
                break
        seat.nmr_streak = streak


def open_signups(ctx: GmAction, args: tuple[str, ...]) -> str:
    game = ctx.game
    if game.status != GameStatus.SIGNUP:
        raise Refused(say("gm_refused", why="started_already", game=game.name, status=str(game.status)))
    rules = turns.rules_of(game)
    seats = store.active_seats(game)
    return say(
        "gm_open_done",
        game=game.name,
        title=rules.title,
        seats=[s.name for s in seats],
        least=rules.min_players,
        most=rules.max_players,
        address=ctx.shell.settings.bot.address,
    )


def start(ctx: GmAction, args: tuple[str, ...]) -> str:
    game = ctx.game
    if game.status != GameStatus.SIGNUP:
        raise Refused(say("gm_refused", why="started_already", game=game.name, status=None))
    turn = turns.start_game(ctx.shell, ctx.session, game)
    return say(
        "gm_start_done",
        game=game.name,
        players=len(store.active_seats(game)),
        label=turn.label,
        due=_deadline_words(outlook.timing(game, turn), game.timezone),
    )


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


__all__ = [
    "GmAction",
    "announce",
    "deadline",
    "drop",
    "extend",
    "open_signups",
    "order",
    "pause",
    "plot",
    "preview",
    "process",
    "replace_seat",
    "resume",
    "rollback",
    "set_figure",
    "start",
]
