"""A player's own settings by mail (mail-interface.md, "Player commands"): TIMEZONE, ADDRESS,
VACATION. Each is the player's, for all their games (a `Player` row), each is confirmed in the
answer, and each shows in `flagman game show`.

* ``TIMEZONE <zone>``: an IANA zone (`zoneinfo`), written in any case; later mail shows
  deadlines in it. A zone not known is refused with the closest ones.
* ``ADDRESS <new address>``: moves what the mail's proof covers (the seat of the reply address
  it came through; every seat only with the proof of each, or our server's DMARC pass for the
  From), and nothing until the new address has answered a code (`bot.mail_in.tokens`) and the
  old address has been told, with a STOP code, and had `[limits] address_change_hold_hours` to
  use it (`bot.games.requests`, issue 27); the old address and the GMs are told of the move.
* ``VACATION <from> <to>`` (days, YYYY-MM-DD, in the player's zone; ``VACATION OFF`` ends it):
  a turn due on those days without orders gets the NMR default (or the GM's plot) as always,
  but does not count towards the NMR limit (`bot.outlook.on_vacation`); the GMs are told.
"""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from bot import letters, store
from bot.answers import Notice
from bot.commands.grammar import Address, Timezone, Vacation
from bot.commands.handlers import CommandContext, Reply
from bot.games import requests
from bot.letters import ToAddress, ToGm
from bot.letters.context import bot_context, deadline_text
from bot.mail_in import tokens
from bot.mail_in.auth import GM_SEAT
from bot.models import GameStatus, Seat
from bot.schedules import closest_zones, find_zone, format_local

MAX_VACATION_DAYS = 62  # one VACATION: at most about two months; the GM can do more
VACATION_AHEAD_DAYS = 366  # it starts within a year
ADDRESS_REQUESTS_PER_DAY = 3  # ADDRESS mails a third party: a few a day per player, no more


def _players_only(ctx: CommandContext, verb: str) -> Reply:
    what = (
        "A GM's zone is the game's (flagman game new --timezone)."
        if verb == "TIMEZONE" and ctx.who.gm_of
        else "It is for the players of a game: send it in reply to a mail of your game."
    )
    raise ctx.refuse(
        f"{verb} is for players",
        f"{verb} changes a player's own settings. {what}",
        kind=verb.lower(),
        label=f"{verb} refused",
    )


# -- TIMEZONE --------------------------------------------------------------------------------


def timezone(ctx: CommandContext, command: Timezone) -> Reply:
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "TIMEZONE")
    zone = find_zone(command.zone)
    if zone is None:
        close = closest_zones(command.zone)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        raise ctx.refuse(
            "Time zone not known",
            "That is not a time zone name the bot knows: write a zone as Area/City, e.g. "
            f"TIMEZONE Europe/Paris or TIMEZONE America/New_York (or UTC).{hint}",
            kind="timezone",
            label="TIMEZONE refused",
        )
    player.timezone = zone
    seats = requests.player_seats(ctx.session, player)
    examples = []
    for seat in seats[:3]:
        turn = store.open_turn(ctx.session, seat.game)
        shown = deadline_text(turn, zone)
        if shown:
            examples.append(f"{seat.game.name} is due {shown}")
    text = (
        f"Your time zone is now {zone}, for all your games: every deadline in the bot's mail is shown in it "
        "from now on." + (f" So {'; '.join(examples)}." if examples else "")
    )
    return Reply(
        (Notice(ctx.to, f"Time zone set: {zone}", text, kind="timezone", error=False),), label=f"TIMEZONE {zone}"
    )


# -- ADDRESS ---------------------------------------------------------------------------------


def _bot_address(ctx: CommandContext, address: str) -> bool:
    local, _, domain = ctx.shell.settings.bot.address.lower().rpartition("@")
    a_local, _, a_domain = address.rpartition("@")
    return a_domain == domain and (a_local == local or a_local.startswith(local + "+"))


def address(ctx: CommandContext, command: Address) -> Reply:
    """ADDRESS moves what the mail's proof covers, no more (issue 27: one forwarded turn sheet
    must not move a player's every game): `Who.seats`. The new address gets a code; the old one
    is told at once, in this answer, with a STOP code; the seats move once the new address has
    answered and `[limits] address_change_hold_hours` have passed (`bot.games.requests`)."""
    session, now = ctx.session, ctx.shell.now()
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "ADDRESS")
    new = command.address
    if new == player.address:
        raise ctx.refuse(
            "That is your address already",
            f"The bot writes to {new} already: nothing to change.",
            kind="address",
            label="ADDRESS refused",
        )
    if _bot_address(ctx, new):
        raise ctx.refuse(
            "Not an address for a player", "That is the bot's own address.", kind="address", label="ADDRESS refused"
        )
    seats = [s for s in ctx.who.seats if s.active and s.player_id == player.id and s.game.status != GameStatus.FINISHED]
    if not seats:
        raise ctx.refuse(
            "No seat to move",
            "Your mail proved no seat of a game still running, so there is nothing to move.",
            kind="address",
            label="ADDRESS refused",
        )
    taken = requests.taken_problem(session, player, seats, new)
    if taken is not None:
        raise ctx.refuse(
            "That address is taken",
            f"{taken}, so your seats cannot move to it. Ask the GM (REPLACE) if they should.",
            kind="address",
            label="ADDRESS refused",
        )
    if requests.requests_today(session, player, now) >= ADDRESS_REQUESTS_PER_DAY:
        raise ctx.refuse(
            "Too many address changes today",
            f"An address change was asked for {ADDRESS_REQUESTS_PER_DAY} times today already; send it again tomorrow.",
            kind="address",
            label="ADDRESS refused",
        )
    request = requests.open_address(ctx.shell, session, player, seats, new)
    code = requests.code(ctx.shell, request)
    moved = ", ".join(f"{s.name} in {s.game.name}" for s in seats)
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
    # To the new address only: the code is its proof, a capability for it alone (bot.letters).
    letters.post(ctx.shell, session, ToAddress(new), rendered, kind="address_confirm", game=ctx.game)
    hold = ctx.shell.settings.limits.address_change_hold_hours
    effective = request.effective_at if request.effective_at is not None else now
    others = sorted({s.game.name for s in requests.player_seats(session, player)} - {s.game.name for s in seats})
    stay = (
        f" Your other games ({', '.join(others)}) stay at {player.address}: an ADDRESS in reply to a mail of "
        "each game moves it too (or one mail from this address with a PASSWORD line for each seat)."
        if others
        else ""
    )
    text = (
        f"You asked to move {moved} to {new}. A mail went there with a code: the move is made once the "
        f"answer comes back from {new} (within {tokens.VALID_DAYS} days), and not before "
        f"{format_local(effective, player.timezone)} ({hold} hours from now), so that a change nobody asked "
        f"for can be stopped. Until then the bot writes to {player.address}, as before.{stay}\n\n"
        "If you did not ask for this, stop it: send back this line (a reply to this mail with it on top "
        "does it):\n\n"
        f"    STOP {requests.stop_code(ctx.shell, request)}\n\n"
        "Whoever holds the reply address of your seat (a turn sheet forwarded or seen) could have asked it; "
        "your GM can give the seat a new one."
    )
    # To the old address (the seat's registered one), and never withheld: it is what lets the
    # seat's holder stop a change they did not ask for.
    return Reply(
        (Notice(ctx.to, f"Confirm your new address from {new}", text, kind="address", error=False, essential=True),),
        label="ADDRESS asked",
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
            _tell_gms(
                ctx,
                seats,
                f"{player.name} ended their vacation: missed turns count towards the NMR limit again.",
                "vacation over",
            )
        return Reply(
            (
                Notice(
                    ctx.to,
                    "Vacation off",
                    "You are not on vacation" + (" any more" if was else "") + ": a turn without your orders "
                    "counts towards the NMR limit as usual.",
                    kind="vacation",
                    error=False,
                ),
            ),
            label="VACATION OFF",
        )
    start, end = command.start, command.end
    problem = None
    if end < start:
        problem = "the last day comes before the first"
    elif end < today:
        problem = "those days are over"
    elif (end - start).days + 1 > MAX_VACATION_DAYS:
        problem = f"that is more than {MAX_VACATION_DAYS} days; ask the GM for longer"
    elif (start - today).days > VACATION_AHEAD_DAYS:
        problem = "that is more than a year ahead"
    if problem is not None:
        raise ctx.refuse(
            "Vacation not set",
            f"VACATION {start.isoformat()} {end.isoformat()}: {problem}. Write VACATION <first day> "
            "<last day>, e.g. VACATION 2026-07-01 2026-07-14 (both days included, in your time zone).",
            kind="vacation",
            label="VACATION refused",
        )
    player.vacation_from, player.vacation_to = start, end
    span = f"from {_day_text(start)} to {_day_text(end)} ({player.timezone})"
    _tell_gms(
        ctx,
        seats,
        f"{player.name} is on vacation {span}: a turn due then without their orders gets the "
        "default (or your GM plot) without counting towards the NMR limit.",
        "vacation",
    )
    text = (
        f"You are on vacation {span}, both days included, for all your games. A turn due then that gets no "
        "orders from you gets the default (or the GM's plot), and it does not count towards the NMR limit. "
        "Orders you send meanwhile count as always. VACATION OFF ends it early."
    )
    return Reply(
        (Notice(ctx.to, "Vacation set", text, kind="vacation", error=False),),
        label=f"VACATION {start.isoformat()} {end.isoformat()}",
    )


def _tell_gms(ctx: CommandContext, seats: list[Seat], text: str, what: str) -> None:
    for seat in seats:
        if seat.player.address == seat.game.gm_address or seat.name == GM_SEAT:
            continue
        letters.notice(
            ctx.shell,
            ctx.session,
            ToGm(seat.game),
            f"{seat.name} of {seat.game.name}: {what}",
            text,
            kind="vacation_gm",
        )


__all__ = ["ADDRESS_REQUESTS_PER_DAY", "MAX_VACATION_DAYS"]
