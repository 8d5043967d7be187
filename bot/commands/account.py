"""A player's own settings by mail (mail-interface.md, "Player commands"): TIMEZONE, ADDRESS,
VACATION. Each is the player's, for all their games (a `Player` row), each is confirmed in the
answer, and each shows in `flagman game show`.

* ``TIMEZONE <zone>``: an IANA zone (`zoneinfo`), written in any case; later mail shows
  deadlines in it. A zone not known is refused with the closest ones.
* ``ADDRESS <new address>``: nothing changes until the new address has answered: the bot mails
  it a code (`bot.commands.tokens`) and the move is made when the code comes back from there
  (`move_address`); then the old address is told that it has taken effect, and the GMs.
* ``VACATION <from> <to>`` (days, YYYY-MM-DD, in the player's zone; ``VACATION OFF`` ends it):
  a turn due on those days without orders gets the NMR default (or the GM's plot) as always,
  but does not count towards the NMR limit (`bot.games.turns.on_vacation`); the GMs are told.
"""

from __future__ import annotations

import difflib
import zoneinfo
from datetime import date, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot import letters
from bot.answers import Notice
from bot.commands import tokens
from bot.commands.grammar import Address, Timezone, Vacation
from bot.commands.handlers import Context, Reply, handles, refusal
from bot.games import observers, store
from bot.games import turns as G
from bot.games.deadlines import format_local
from bot.letters import Addressee, ToAddress, ToGm, ToSeat
from bot.mail_in.auth import GM_SEAT
from bot.models import Game, GameStatus, InboundMessage, Player, Seat

MAX_VACATION_DAYS = 62  # one VACATION: at most about two months; the GM can do more
VACATION_AHEAD_DAYS = 366  # it starts within a year
ADDRESS_REQUESTS_PER_DAY = 3  # ADDRESS mails a third party: a few a day per player, no more


@cache
def _zones() -> dict[str, str]:
    """Every zone name `zoneinfo` knows, by its lower-case spelling."""
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def find_zone(text: str) -> str | None:
    """The IANA zone `text` names (any case: "europe/paris" is Europe/Paris), or None."""
    return _zones().get(text.strip().lower())


def _closest_zones(text: str) -> list[str]:
    names = _zones()
    return [names[z] for z in difflib.get_close_matches(text.strip().lower(), list(names), n=1, cutoff=0.6)]


def _seats_of(ctx: Context, player: Player) -> list[Seat]:
    """The player's active seats in games not finished."""
    return list(ctx.session.scalars(select(Seat).join(Game).where(
        Seat.player_id == player.id, Seat.active.is_(True), Game.status != GameStatus.FINISHED).order_by(Seat.id)))


def _players_only(ctx: Context, verb: str) -> Reply:
    what = ("A GM's zone is the game's (flagman game new --timezone)." if verb == "TIMEZONE" and ctx.who.gm_of
            else "It is for the players of a game: send it in reply to a mail of your game.")
    return refusal(ctx, f"{verb} is for players", f"{verb} changes a player's own settings. {what}",
                   kind=verb.lower(), label=f"{verb} refused")


# -- TIMEZONE --------------------------------------------------------------------------------

@handles(Timezone)
def _timezone(ctx: Context, command: Timezone) -> Reply:
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "TIMEZONE")
    zone = find_zone(command.zone)
    if zone is None:
        close = _closest_zones(command.zone)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        return refusal(ctx, "Time zone not known",
                       "That is not a time zone name the bot knows: write a zone as Area/City, e.g. "
                       f"TIMEZONE Europe/Paris or TIMEZONE America/New_York (or UTC).{hint}",
                       kind="timezone", label="TIMEZONE refused")
    player.timezone = zone
    seats = _seats_of(ctx, player)
    examples = []
    for seat in seats[:3]:
        turn = store.open_turn(ctx.session, seat.game)
        shown = G.deadline_text(turn, zone)
        if shown:
            examples.append(f"{seat.game.name} is due {shown}")
    text = (f"Your time zone is now {zone}, for all your games: every deadline in the bot's mail is shown in it "
            "from now on." + (f" So {'; '.join(examples)}." if examples else ""))
    return Reply((Notice(ctx.to, f"Time zone set: {zone}", text, kind="timezone", error=False),),
                 label=f"TIMEZONE {zone}")


# -- ADDRESS ---------------------------------------------------------------------------------

def _bot_address(ctx: Context, address: str) -> bool:
    local, _, domain = ctx.shell.settings.bot.address.lower().rpartition("@")
    a_local, _, a_domain = address.rpartition("@")
    return a_domain == domain and (a_local == local or a_local.startswith(local + "+"))


@handles(Address)
def _address(ctx: Context, command: Address) -> Reply:
    session, now = ctx.session, ctx.shell.now()
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "ADDRESS")
    new = command.address
    if new == player.address:
        return refusal(ctx, "That is your address already", f"The bot writes to {new} already: nothing to change.",
                       kind="address", label="ADDRESS refused")
    if _bot_address(ctx, new):
        return refusal(ctx, "Not an address for a player", "That is the bot's own address.", kind="address",
                       label="ADDRESS refused")
    if session.scalar(select(Player.id).where(Player.address == new)) is not None or \
            session.scalar(select(Game.id).where(Game.gm_address == new, Game.status != GameStatus.FINISHED)) is not None:
        return refusal(ctx, "That address is taken",
                       f"{new} is registered here already, for another player or a GM, so your seats cannot move "
                       "to it. Ask the GM (REPLACE) if it should.", kind="address", label="ADDRESS refused")
    asked = session.scalar(select(InboundMessage.id).where(
        InboundMessage.principal == ctx.who.principal, InboundMessage.detail.contains("ADDRESS asked"),
        InboundMessage.received_at >= now - timedelta(days=1)).limit(ADDRESS_REQUESTS_PER_DAY).offset(
        ADDRESS_REQUESTS_PER_DAY - 1))
    if asked is not None:
        return refusal(ctx, "Too many address changes today",
                       f"An address change was asked for {ADDRESS_REQUESTS_PER_DAY} times today already; send it "
                       "again tomorrow.", kind="address", label="ADDRESS refused")
    code = tokens.make(ctx.shell.settings.secrets.site_secret, tokens.ADDRESS, str(player.id), now, new, player.address)
    games = [s.game.name for s in _seats_of(ctx, player)]
    rendered = ctx.shell.renderer.render("address_confirm", {
        "bot": {"name": ctx.shell.settings.bot.name, "address": ctx.shell.settings.bot.address},
        "name": player.name, "old": player.address, "new": new, "games": games, "code": code,
        "subject_tag": tokens.subject_tag(code), "valid_days": tokens.VALID_DAYS,
    })
    # To the new address only: the code is its proof, a capability for it alone (bot.letters).
    letters.post(ctx.shell, session, ToAddress(new), rendered, kind="address_confirm", game=ctx.game)
    text = (f"A mail went to {new} with a code. Your address changes when the answer to it comes back from "
            f"{new}, within {tokens.VALID_DAYS} days; this address will then be told. Until then the bot writes "
            f"to {player.address}, as before.")
    return Reply((Notice(ctx.to, f"Confirm your new address from {new}", text, kind="address", error=False),),
                 label="ADDRESS asked")


def move_address(ctx: Context, player_id: int) -> Reply:
    """The code of an ADDRESS came back from the new address (verified by the caller): the
    player's address is the mail's From from now on; the old address and the GMs are told."""
    session, new = ctx.session, ctx.inbound.sender
    player = session.get_one(Player, player_id)
    if session.scalar(select(Player.id).where(Player.address == new, Player.id != player.id)) is not None:
        return refusal(ctx, "That address is taken", f"{new} was registered here meanwhile; nothing was changed.",
                       kind="address", label="ADDRESS refused")
    old = player.address
    player.address = new
    observers.move(session, old, new)
    session.flush()
    seats = _seats_of(ctx, player)
    names = ", ".join(sorted(s.game.name for s in seats)) or "none running"
    when = format_local(ctx.shell.now(), player.timezone)
    letters.notice(ctx.shell, session, ToAddress(old, player.name), "Your address has changed",
                   f"As asked, the bot writes to {new} from now on ({when}) for all your games ({names}), and no "
                   "longer to this address. If you did not ask for this, tell your GM at once.",
                   kind="address_moved", error=False)
    for seat in seats:
        letters.notice(ctx.shell, session, ToGm(seat.game), f"{seat.name} changed address",
                       f"{player.name} ({seat.name} in {seat.game.name}) moved from {old} to {new}, confirmed from "
                       "the new address.", kind="address_gm")
    to: Addressee = ToSeat(seats[0]) if seats else ToAddress(new)
    return Reply((Notice(to, "Your address has changed",
                         f"Done: the bot writes to {new} from now on, for all your games ({names}). {old} was told.",
                         kind="address", error=False),), label="ADDRESS moved")


# -- VACATION --------------------------------------------------------------------------------

def _day_text(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b %Y}"


@handles(Vacation)
def _vacation(ctx: Context, command: Vacation) -> Reply:
    player = ctx.player()
    if player is None:
        return _players_only(ctx, "VACATION")
    today = ctx.shell.now().astimezone(ZoneInfo(player.timezone)).date()
    seats = _seats_of(ctx, player)
    if command.start is None or command.end is None:
        was = player.vacation_to is not None and player.vacation_to >= today
        player.vacation_from = player.vacation_to = None
        if was:
            _tell_gms(ctx, seats, f"{player.name} ended their vacation: missed turns count towards the NMR limit "
                                  "again.", "vacation over")
        return Reply((Notice(ctx.to, "Vacation off",
                             "You are not on vacation" + (" any more" if was else "") + ": a turn without your orders "
                             "counts towards the NMR limit as usual.", kind="vacation", error=False),),
                     label="VACATION OFF")
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
        return refusal(ctx, "Vacation not set",
                       f"VACATION {start.isoformat()} {end.isoformat()}: {problem}. Write VACATION <first day> "
                       "<last day>, e.g. VACATION 2026-07-01 2026-07-14 (both days included, in your time zone).",
                       kind="vacation", label="VACATION refused")
    player.vacation_from, player.vacation_to = start, end
    span = f"from {_day_text(start)} to {_day_text(end)} ({player.timezone})"
    _tell_gms(ctx, seats, f"{player.name} is on vacation {span}: a turn due then without their orders gets the "
                          "default (or your GM plot) without counting towards the NMR limit.", "vacation")
    text = (f"You are on vacation {span}, both days included, for all your games. A turn due then that gets no "
            "orders from you gets the default (or the GM's plot), and it does not count towards the NMR limit. "
            "Orders you send meanwhile count as always. VACATION OFF ends it early.")
    return Reply((Notice(ctx.to, "Vacation set", text, kind="vacation", error=False),),
                 label=f"VACATION {start.isoformat()} {end.isoformat()}")


def _tell_gms(ctx: Context, seats: list[Seat], text: str, what: str) -> None:
    for seat in seats:
        if seat.player.address == seat.game.gm_address or seat.name == GM_SEAT:
            continue
        letters.notice(ctx.shell, ctx.session, ToGm(seat.game), f"{seat.name} of {seat.game.name}: {what}", text,
                       kind="vacation_gm")


__all__ = ["ADDRESS_REQUESTS_PER_DAY", "MAX_VACATION_DAYS", "find_zone", "move_address"]
