"""The player's side of a game's life: JOIN and RESIGN.

* ``JOIN <game> [name]`` (mail-interface.md) comes from anyone, a stranger too: the sender's
  address becomes a seat of a game open for sign-ups, named after the name given (or the
  address), unique in the game. The newcomer gets a welcome mail with the rules summary, the
  order syntax and their reply address; the GM is told. When the game's maximum is reached it
  starts by itself. Refused, with a short reason: an unknown game, a game not open (started,
  finished), a full game, an address that has joined already.
* ``RESIGN <game>`` from an authenticated player drops their seat through the rules'
  `drop_player` (before the start: takes them off the list), confirmed by mail to the
  registered address, the GM told.

The welcome mail, the dropping of a seat (RESIGN does as the GM's DROP) and the NMR-streak
limit are `bot.games.seats`, shared with the GM's commands.
"""

from __future__ import annotations

import logging
import re
import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import letters
from bot.answers import Done, Ignored, Notice, Refused
from bot.echo import echo_name
from bot.games import store
from bot.games import turns as G
from bot.games.seats import GmRefusal, drop_seat, send_welcome
from bot.letters import ToAddress, ToGm, ToSeat
from bot.mail_in.auth import GM_SEAT, NAME_RE, new_secret
from bot.mail_in.identity import Who
from bot.mail_in.parse import Inbound
from bot.models import Game, GameStatus, GmAudit, Seat

log = logging.getLogger("flagman.signups")


# -- JOIN ------------------------------------------------------------------------------------

def slug(text: str) -> str:
    """A seat name from a person's name or an address: lower-case ASCII, digits, '-'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    cleaned = re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-_")
    return cleaned[:24].strip("-_")


def seat_name_for(name: str, address: str, taken: set[str]) -> str:
    base = slug(name) or slug(address.partition("@")[0]) or "player"
    if base == GM_SEAT:
        base = "gm-player"
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}-{n}"
        n += 1
    assert NAME_RE.match(candidate), candidate
    return candidate


def join(shell: G.Shell, session: Session, inbound: Inbound, game_name: str, name: str) -> Done:
    """JOIN <game> [name]: a seat in a game open for sign-ups (the welcome mail carries its
    password and reply address, to the joining address only). Refusals raise `Refused`."""
    sender = inbound.sender.strip().lower()
    game = store.find_game_row(session, game_name)

    def refuse(title: str, text: str, detail: str) -> Refused:
        # The sender proved nothing: the answer greets nobody by name and repeats none of the
        # mail's words (issue 14: a forged JOIN must not carry spam to a third party).
        return Refused("JOIN refused: " + detail, Notice(ToAddress(sender), title, text, kind="join_refused", game=game),
                       label="join refused", game=game)

    if not sender:
        raise Ignored("JOIN without a sender address", label="no sender")
    if game is None:
        open_games = sorted(g.name for g in session.scalars(select(Game).where(Game.status == GameStatus.SIGNUP)))
        raise refuse("No game by that name",
                      "There is no game by the name your JOIN gave here. "
                      + (f"Games open for sign-ups: {', '.join(open_games)}." if open_games
                         else "No game is open for sign-ups just now."), "unknown game")
    rules = G.rules_of(game)
    mine = [s for s in game.seats if s.player.address == sender]
    if any(s.active for s in mine):
        seat = next(s for s in mine if s.active)
        raise refuse(f"You are in {game.name} already",
                      f"Your address has the seat {seat.name} in {game.name} already.", "already joined")
    if game.status != GameStatus.SIGNUP:
        raise refuse(f"{game.name} is not open for sign-ups",
                      f"{game.name} is {'over' if game.status == GameStatus.FINISHED else 'under way'}, so it takes no "
                      "new players. Ask its GM if a seat is coming free.", "closed")
    active = store.active_seats(game)
    if len(active) >= rules.max_players:
        raise refuse(f"{game.name} is full", f"{game.name} has its {rules.max_players} players already.", "full")
    # The name a player chose is shown to everyone in the game: one line, printable, capped.
    chosen = echo_name(name)
    display = chosen or echo_name(inbound.sender_name) or sender.partition("@")[0]
    if mine:
        # Resigned before the start and back again: the old seat is reopened.
        seat = mine[0]
        seat.active = True
        seat.secret = new_secret()
        if chosen:
            seat.player.name = chosen
    else:
        taken = {s.name for s in game.seats}
        seat = G.add_seat(shell, session, game, seat_name_for(chosen, sender, taken), sender, display)
    session.flush()
    send_welcome(shell, session, game, seat, in_reply_to=f"<{inbound.message_id}>")
    count = len(store.active_seats(game))
    text = (f"{seat.player.name} <{seat.player.address}> joined {game.name} as {seat.name}: {count} of "
            f"{rules.min_players}-{rules.max_players} players.")
    if count >= rules.max_players:
        G.start_game(shell, session, game)
        text += f" That is the maximum, so {game.name} has started: everyone got the first turn sheet."
    elif count >= rules.min_players:
        text += f" Enough to start: send START {game.name} when you are ready."
    letters.notice(shell, session, ToGm(game), f"{seat.name} joined {game.name}", text, kind="joined")
    log.info("JOIN %s: %s as %s", game.name, sender, seat.name)
    return Done(f"JOIN {game.name}: seat {seat.name}", "joined", game=game, seat=seat)


# -- RESIGN ----------------------------------------------------------------------------------

def resign(shell: G.Shell, session: Session, inbound: Inbound, who: Who, game_name: str) -> str:
    """RESIGN <game>: the seat is given up (as the GM's DROP). The player and the GM are told;
    a refusal raises `Refused` with its answer. Returns the label for the mail's record."""
    game = store.find_game_row(session, game_name)
    seat: Seat | None = None
    if game is not None and any(g.id == game.id for g in who.games):
        if who.seat is not None and who.seat.game_id == game.id:
            seat = who.seat
        else:
            seat = next((s for s in game.seats if s.active and s.player.address == inbound.sender), None)
    if game is None or seat is None or not seat.active:
        raise Refused("RESIGN refused", Notice(
            who.holder(inbound), f"No seat in {game_name}",
            f"You have no seat in a game called {game_name}, so there is nothing to resign from.",
            kind="resign_refused"))
    now = shell.now()
    try:
        text, undo = drop_seat(session, game, seat)
    except GmRefusal as exc:
        raise Refused("RESIGN refused", Notice(ToSeat(seat), f"Cannot resign from {game.name}", str(exc),
                                               kind="resign_refused")) from None
    session.add(GmAudit(game_id=game.id, actor=inbound.sender[:320], via="mail", message_id=inbound.message_id[:998],
                        command=f"RESIGN {game.name} (seat {seat.name})", outcome="done: " + text,
                        created_at=now, undo=undo))
    letters.notice(shell, session, ToAddress(seat.player.address, seat.player.name),
                   f"You have resigned from {game.name}",
                   f"Your seat {seat.name} in {game.name} is given up: {text} Thank you for playing; the bot "
                   "will not send you this game's mail any more.", error=False, game=game, kind="resigned",
                   in_reply_to=f"<{inbound.message_id}>")
    letters.notice(shell, session, ToGm(game), f"{seat.name} resigned from {game.name}",
                   f"{seat.player.name} <{seat.player.address}> resigned: {text}", kind="resigned_gm")
    return "RESIGN done"


__all__ = ["join", "resign", "seat_name_for", "slug"]
