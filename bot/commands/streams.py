"""What comes by mail, and how a mail was received: PING, CALENDAR, REMINDERS and
UNSUBSCRIBE.

* ``PING``: an immediate answer saying that the path works and as what the mail was accepted
  (the seat or GM role, and the proof: the signed reply address, the password, DMARC or aligned
  DKIM as our receiving server's Authentication-Results say) -- so a player can try a new mail
  client or address before a deadline. Always to the registered address (`CommandContext.to`), never
  to a From that proved nothing: a stranger gets what strangers get (PING is for players and
  GMs), and a mail from a registered From that proved nothing gets `refused_text`, at the
  registered address, at most once a day (the intake's rule for such mail).
* ``CALENDAR OFF|ON``: whether the player's turn sheets carry the deadline as a calendar
  invitation (bot.mail_out.calendar), for all their games.
* ``REMINDERS OFF|ON``: the reminders of the seat the mail is for.
* ``UNSUBSCRIBE <code>`` -- what a ``List-Unsubscribe`` mail brings back (its subject
  ``unsubscribe <code>``, bot.mail_out.lists): stops the one stream the code names, a seat's
  reminders or an observer's copies, and says so to the address that stream went to. The
  code is the proof (it went only to that address), so it is taken from anyone, strangers
  too; a code that stands for nothing (stopped already, a seat handed on) changes nothing.
"""

from __future__ import annotations

from bot import store
from bot.commands.grammar import Calendar, Ping, Reminders, Unsubscribe
from bot.commands.handlers import CommandContext, Reply, which_game
from bot.fate import Notice
from bot.games import observers, preferences
from bot.games.identity import Proof, Who
from bot.letters import ToAddress, ToSeat
from bot.letters.context import deadline_text
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.mail_in.auth import describe_authentication, parse_tag, tag_in_recipients
from bot.mail_in.parse import Inbound
from bot.mail_out import lists
from bot.outlook import timing
from bot.safe_text import echo
from bot.schedules import format_local

# -- PING ----------------------------------------------------------------------------------------


# The proofs PING names without the receiving server's verdict (the others are a DMARC or DKIM pass).
_PROOFS_OF_OURS = frozenset({Proof.SIGNED, Proof.GM_FROM, Proof.GM_PASSWORD, Proof.PASSWORD, Proof.SUBJECT})


def ping(ctx: CommandContext, command: Ping) -> Reply:
    """The answer to PING from whom the mail proved (the intake answers the others)."""
    now, settings = ctx.shell.now(), ctx.shell.settings
    player = ctx.player()
    zone = player.timezone if player is not None else (ctx.who.gm_of[0].timezone if ctx.who.gm_of else "UTC")
    seat = ctx.seat
    turn = store.open_turn(ctx.session, seat.game) if seat is not None else None
    text = say(
        "commands_ping",
        now=format_local(now, zone),
        seat=ctx.who.seat.name if ctx.who.seat is not None else None,
        seat_game=ctx.who.seat.game.name if ctx.who.seat is not None else None,
        gm_of=sorted(g.name for g in ctx.who.gm_of),
        games=sorted(g.name for g in ctx.who.games),
        proof=ctx.who.proof.name,
        server=echo(settings.auth.authserv_id, 80),
        verdict=None
        if ctx.who.proof in _PROOFS_OF_OURS
        else describe_authentication(ctx.inbound.auth_results, settings.auth.authserv_id, ctx.inbound.sender),
        turn=turn.label if turn is not None else "",
        game=seat.game.name if seat is not None else "",
        paused=seat is not None and timing(seat.game, turn).paused,
        practice=seat is not None and timing(seat.game, turn).practice,
        deadline=deadline_text(timing(seat.game, turn), zone) if seat is not None else None,
    )
    return Reply(
        (Notice(ctx.to, say("commands_ping_title"), text, kind="ping", error=False),), label=command_label("PING")
    )


def refused_text(ctx: CommandContext, inbound: Inbound, who: Who) -> str:
    """Why a PING from a registered From was not accepted as its owner: for the registered
    address (bot.intake sends it there, once a day at most), never for the sender."""
    settings = ctx.shell.settings
    accept = settings.auth.accept
    tag = tag_in_recipients(settings.bot.address, inbound.recipients)
    dmarc = "dmarc" in accept
    return say(
        "commands_ping_refused",
        games=sorted({s.game.name for s in who.claimed} | {g.name for g in who.claimed_gm}),
        stale_tag=tag is not None and parse_tag(tag) is not None,
        address=settings.bot.address,
        password="password" in accept,
        dmarc=dmarc,
        verdict=describe_authentication(inbound.auth_results, settings.auth.authserv_id, inbound.sender)
        if dmarc
        else None,
    )


# -- CALENDAR, REMINDERS -----------------------------------------------------------------------


def calendar(ctx: CommandContext, command: Calendar) -> Reply:
    player = ctx.player()
    if player is None:
        raise ctx.refuse(
            say("commands_calendar_refused_title"),
            say("commands_calendar", player=False),
            kind="calendar",
            label=command_label("CALENDAR", came=Came.REFUSED),
        )
    changed = preferences.set_calendar(player, command.on)
    text = say("commands_calendar", player=True, on=command.on, changed=changed)
    return Reply(
        (Notice(ctx.to, say("commands_calendar_title", on=command.on), text, kind="calendar", error=False),),
        label=command_label("CALENDAR", on=command.on),
    )


def reminders(ctx: CommandContext, command: Reminders) -> Reply:
    seat = ctx.seat
    if seat is None:
        if ctx.who.games:
            return Reply((which_game(ctx.inbound, ctx.who),), label=command_label("REMINDERS", came=Came.REFUSED))
        raise ctx.refuse(
            say("commands_reminders_refused_title"),
            say("commands_reminders_refused"),
            kind="reminders",
            label=command_label("REMINDERS", came=Came.REFUSED),
        )
    changed = preferences.set_reminders(seat, command.on)
    game = seat.game.name
    text = say("commands_reminders", on=command.on, changed=changed, game=game)
    return Reply(
        (
            Notice(
                ToSeat(seat),
                say("commands_reminders_title", on=command.on, game=game),
                text,
                kind="reminders",
                error=False,
            ),
        ),
        label=command_label("REMINDERS", on=command.on),
    )


# -- UNSUBSCRIBE -------------------------------------------------------------------------------


def _observer_address(ctx: CommandContext, stream: lists.Stream) -> tuple[str, str] | None:
    """(game, the observer address) the code of an observer copy stands for now, or None."""
    game = store.find_game_row(ctx.session, stream.game)
    if game is None:
        return None
    secrets = ctx.shell.secrets_in_force
    address = next(
        (a for a in observers.observers_of(ctx.session, game) if lists.observer_code_stands(stream, secrets, a)), None
    )
    return (game.name, address) if address is not None else None


def code_stands(ctx: CommandContext, code: str) -> bool:
    """Whether an UNSUBSCRIBE code names a stream that is sent now (the intake does not count
    the answer to one against a stranger's few answers a day: only our mail carried it)."""
    stream = lists.parse_code(code)
    if stream is None:
        return False
    if stream.kind == lists.OBSERVER:
        return _observer_address(ctx, stream) is not None
    game = store.find_game_row(ctx.session, stream.game, with_seats=True)
    seat = store.seat_named(game, stream.seat) if game is not None else None
    return seat is not None and lists.reminders_code_stands(
        stream, ctx.shell.secrets_in_force, seat.player_id, seat.reply_salt
    )


def unsubscribe(ctx: CommandContext, command: Unsubscribe) -> Reply:
    stream = lists.parse_code(command.code)
    nothing = Reply(
        (
            Notice(
                ctx.to,
                say("commands_unsubscribe_title", what="nothing"),
                say("commands_unsubscribe", what="nothing"),
                kind="unsubscribe",
                error=False,
            ),
        ),
        label=command_label("UNSUBSCRIBE", came=Came.NOTHING),
    )
    if stream is None or not code_stands(ctx, command.code):
        return nothing
    session = ctx.session
    if stream.kind == lists.OBSERVER:
        found = _observer_address(ctx, stream)
        assert found is not None  # code_stands
        name, address = found
        observers.unobserve(session, address, store.find_game_row(session, name))
        # To the address the copies went to (the code's holder), not to the From.
        return Reply(
            (
                Notice(
                    ToAddress(address),
                    say("commands_unsubscribe_title", what="observer", game=name),
                    say("commands_unsubscribe", what="observer", game=name),
                    kind="unsubscribe",
                    error=False,
                ),
            ),
            label=command_label("UNSUBSCRIBE", name, came=Came.OBSERVER),
        )
    game = store.find_game_row(session, stream.game, with_seats=True)
    seat = store.seat_named(game, stream.seat) if game is not None else None
    assert seat is not None  # code_stands
    preferences.set_reminders(seat, False)
    return Reply(
        (
            Notice(
                ToSeat(seat),
                say("commands_unsubscribe_title", what="reminders", game=seat.game.name),
                say("commands_unsubscribe", what="reminders", game=seat.game.name),
                kind="unsubscribe",
                error=False,
            ),
        ),
        label=command_label("UNSUBSCRIBE", seat.game.name, seat.name, came=Came.REMINDERS),
    )


__all__ = ["code_stands", "refused_text"]
