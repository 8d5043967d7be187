"""A player's own settings by mail (mail-interface.md, "Player commands"): TIMEZONE, ADDRESS,
VACATION. Each is the player's, for all their games (a `Player` row), each is confirmed in the
answer, and each shows in `flagman game show`.

* ``TIMEZONE <zone>``: an IANA zone (`zoneinfo`), written in any case; later mail shows
  deadlines in it. A zone not known is refused with the closest ones.
* ``ADDRESS <new address>``: moves what the mail's proof covers (the seat of the reply address
  it came through; every seat only with the proof of each, or our server's DMARC pass for the
  From), and nothing until the new address has answered a code (`bot.mail_in.tokens`) and the
  old address has been told, with a STOP code, and had `[limits] address_change_hold_hours` to
  use it (`bot.games.requests`); the old address and the GMs are told of the move.
* ``VACATION <from> <to>`` (days, YYYY-MM-DD, in the player's zone; ``VACATION OFF`` ends it):
  a turn due on those days without orders gets the NMR default (or the GM's plot) as always,
  but does not count towards the NMR limit (`bot.outlook.on_vacation`); the GMs are told.
"""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from bot import letters, store
from bot.commands.grammar import Address, Timezone, Vacation
from bot.commands.handlers import CommandContext, Reply
from bot.fate import Notice, Refused
from bot.games import requests
from bot.letters import ToAddress, ToGm
from bot.letters.context import bot_context, deadline_text
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.mail_in import tokens
from bot.mail_in.auth import GM_SEAT
from bot.models import GameStatus, PendingRequest, Player, Seat
from bot.outlook import timing
from bot.schedules import closest_zones, find_zone, format_local

MAX_VACATION_DAYS = 62  # one VACATION: at most about two months; the GM can do more
VACATION_AHEAD_DAYS = 366  # it starts within a year
ADDRESS_REQUESTS_PER_DAY = 3  # ADDRESS mails a third party: a few a day per player, no more


def _players_only(ctx: CommandContext, verb: str) -> Reply:
    raise ctx.refuse(
        say("commands_players_only_title", verb=verb),
        say("commands_players_only", verb=verb, gm_zone=verb == "TIMEZONE" and bool(ctx.who.gm_of)),
        kind=verb.lower(),
        label=command_label(verb, came=Came.REFUSED),
    )


# -- TIMEZONE --------------------------------------------------------------------------------


def timezone(ctx: CommandContext, command: Timezone) -> Reply:
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "TIMEZONE")
    zone = find_zone(command.zone)
    if zone is None:
        close = closest_zones(command.zone)
        raise ctx.refuse(
            say("commands_zone_unknown_title"),
            say("commands_zone_unknown", close=close),
            kind="timezone",
            label=command_label("TIMEZONE", came=Came.REFUSED),
        )
    player.timezone = zone
    seats = requests.player_seats(ctx.session, player)
    examples = []
    for seat in seats[:3]:
        turn = store.open_turn(ctx.session, seat.game)
        when = timing(seat.game, turn)
        if when.paused:  # no deadline runs: RESUME sets one
            examples.append({"game": seat.game.name, "deadline": None, "paused": True})
        elif (shown := deadline_text(when, zone)) is not None:
            examples.append({"game": seat.game.name, "deadline": shown, "paused": False})
    text = say("commands_zone_set", zone=zone, examples=examples)
    return Reply(
        (Notice(ctx.to, say("commands_zone_set_title", zone=zone), text, kind="timezone", error=False),),
        label=command_label("TIMEZONE", zone),
    )


# -- ADDRESS ---------------------------------------------------------------------------------


def _bot_address(ctx: CommandContext, address: str) -> bool:
    local, _, domain = ctx.shell.settings.bot.address.lower().rpartition("@")
    a_local, _, a_domain = address.rpartition("@")
    return a_domain == domain and (a_local == local or a_local.startswith(local + "+"))


def _address_refused(ctx: CommandContext, why: str, **words: object) -> Refused:
    """ADDRESS refused, and why (`words`: what the text says beside)."""
    return ctx.refuse(
        say("commands_address_refused_title", why=why),
        say("commands_address_refused", why=why, **words),
        kind="address",
        label=command_label("ADDRESS", came=Came.REFUSED),
    )


def _send_code(ctx: CommandContext, player: Player, seats: list[Seat], new: str, request: PendingRequest) -> None:
    """Mail the request's code to the new address only: the code is its proof, a capability
    for it alone (bot.letters)."""
    code = requests.code(ctx.shell, request)
    rendered = ctx.shell.renderer.render(
        "address_confirm",
        {
            "bot": bot_context(ctx.shell),
            "name": player.name,
            "old": player.address,
            "new": new,
            "games": sorted({s.game.name for s in seats}),
            "code": code,
            "subject_tag": tokens.subject_tag(code),
            "valid_days": tokens.VALID_DAYS,
        },
    )
    letters.post(ctx.shell, ctx.session, ToAddress(new), rendered, kind="address_confirm", game=ctx.game)


def address(ctx: CommandContext, command: Address) -> Reply:
    """ADDRESS moves what the mail's proof covers, no more (one forwarded turn sheet
    must not move a player's every game): `Who.seats`. The new address gets a code; the old one
    is told at once, in this answer, with a STOP code; the seats move once the new address has
    answered and `[limits] address_change_hold_hours` have passed (`bot.games.requests`)."""
    session, now = ctx.session, ctx.shell.now()
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "ADDRESS")
    new = command.address
    if new == player.address:
        raise _address_refused(ctx, "same", new=new)
    if _bot_address(ctx, new):
        raise _address_refused(ctx, "bot")
    seats = [s for s in ctx.who.seats if s.active and s.player_id == player.id and s.game.status != GameStatus.FINISHED]
    if not seats:
        raise _address_refused(ctx, "no_seat")
    taken = requests.taken_problem(session, player, seats, new)
    if taken is not None:
        raise _address_refused(ctx, "taken", taken=taken)
    if requests.requests_today(session, player, now) >= ADDRESS_REQUESTS_PER_DAY:
        raise _address_refused(ctx, "many", times=ADDRESS_REQUESTS_PER_DAY)
    request = requests.open_address(ctx.shell, session, player, seats, new)
    _send_code(ctx, player, seats, new, request)
    moved = ", ".join(say("commands_seat_in_game", seat=s.name, game=s.game.name) for s in seats)
    hold = ctx.shell.settings.limits.address_change_hold_hours
    effective = request.effective_at if request.effective_at is not None else now
    others = sorted({s.game.name for s in requests.player_seats(session, player)} - {s.game.name for s in seats})
    text = say(
        "commands_address_asked",
        moved=moved,
        new=new,
        days=tokens.VALID_DAYS,
        effective=format_local(effective, player.timezone),
        hold=hold,
        old=player.address,
        others=others,
        stop=requests.stop_code(ctx.shell, request),
    )
    # To the old address (the seat's registered one), and never withheld: it is what lets the
    # seat's holder stop a change they did not ask for.
    return Reply(
        (
            Notice(
                ctx.to,
                say("commands_address_asked_title", new=new),
                text,
                kind="address",
                error=False,
                essential=True,
            ),
        ),
        label=command_label("ADDRESS", came=Came.ASKED),
    )


# -- VACATION --------------------------------------------------------------------------------


def _day_text(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b %Y}"


def vacation(ctx: CommandContext, command: Vacation) -> Reply:
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "VACATION")
    today = ctx.shell.now().astimezone(ZoneInfo(player.timezone)).date()
    seats = requests.player_seats(ctx.session, player)
    if command.start is None or command.end is None:
        was = player.vacation_to is not None and player.vacation_to >= today
        player.vacation_from = player.vacation_to = None
        if was:
            _tell_gms(ctx, seats, over=True, player=player.name, span="")
        return Reply(
            (
                Notice(
                    ctx.to,
                    say("commands_vacation_title", what="off"),
                    say("commands_vacation", what="off", was=was),
                    kind="vacation",
                    error=False,
                ),
            ),
            label=command_label("VACATION", on=False),
        )
    start, end = command.start, command.end
    problem = None
    if end < start:
        problem = "order"
    elif end < today:
        problem = "over"
    elif (end - start).days + 1 > MAX_VACATION_DAYS:
        problem = "long"
    elif (start - today).days > VACATION_AHEAD_DAYS:
        problem = "ahead"
    if problem is not None:
        raise ctx.refuse(
            say("commands_vacation_title", what="refused"),
            say(
                "commands_vacation",
                what="refused",
                start=start.isoformat(),
                end=end.isoformat(),
                problem=say("commands_vacation_problem", why=problem, most=MAX_VACATION_DAYS),
            ),
            kind="vacation",
            label=command_label("VACATION", came=Came.REFUSED),
        )
    player.vacation_from, player.vacation_to = start, end
    span = say("commands_vacation_span", start=_day_text(start), end=_day_text(end), zone=player.timezone)
    _tell_gms(ctx, seats, over=False, player=player.name, span=span)
    text = say("commands_vacation", what="set", span=span)
    return Reply(
        (Notice(ctx.to, say("commands_vacation_title", what="set"), text, kind="vacation", error=False),),
        label=command_label("VACATION", start.isoformat(), end.isoformat()),
    )


def _tell_gms(ctx: CommandContext, seats: list[Seat], *, over: bool, player: str, span: str) -> None:
    for seat in seats:
        if seat.player.address == seat.game.gm_address or seat.name == GM_SEAT:
            continue
        letters.notice(
            ctx.shell,
            ctx.session,
            ToGm(seat.game),
            say("commands_vacation_gm_title", seat=seat.name, game=seat.game.name, over=over),
            say("commands_vacation_gm", over=over, player=player, span=span),
            kind="vacation_gm",
        )


__all__ = ["ADDRESS_REQUESTS_PER_DAY", "MAX_VACATION_DAYS"]
