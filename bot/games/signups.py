"""The player's side of a game's life: JOIN, the welcome mail, RESIGN, and the NMR-streak limit.

* ``JOIN <game> [name]`` (mail-interface.md) comes from anyone, a stranger too: the sender's
  address becomes a seat of a game open for sign-ups, named after the name given (or the
  address), unique in the game. The newcomer gets a welcome mail with the rules summary, the
  order syntax and their reply address; the GM is told. When the game's maximum is reached it
  starts by itself. Refused, with a short reason: an unknown game, a game not open (started,
  finished), a full game, an address that has joined already.
* ``RESIGN <game>`` from an authenticated player drops their seat through the rules'
  `drop_player` (before the start: takes them off the list), confirmed by mail to the
  registered address, the GM told.
* The NMR-streak limit (`Game.nmr_limit`, off by default): one turn before the limit the
  player is warned by mail; at the limit the seat is dropped (`nmr_action = "drop"`) or
  handed to the GM (``"gm"``: the GM's address takes the seat and gets its turn sheets).
"""

from __future__ import annotations

import logging
import random
import re
import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import letters
from bot.answers import Done, Ignored, Notice, Refused
from bot.echo import echo_name
from bot.games import store
from bot.games import turns as G
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


def sample_help(game: Game, seat_name: str | None = None) -> str:
    """The order syntax of the game's first turn, for `seat_name` (None: for a seat like any
    other): shown on a provisional start (the seats so far, filled up to the minimum) in the
    welcome mail and the RULES answer; the real grammar comes with each turn sheet and HELP."""
    rules = G.rules_of(game)
    names = [s.name for s in store.active_seats(game)][: rules.max_players]
    filler = 1
    while len(names) < rules.min_players:
        candidate = f"seat{filler}"
        filler += 1
        if candidate not in names:
            names.append(candidate)
    try:
        state = rules.new_game(names, game.options, random.Random(0))
        return rules.order_help(state, seat_name if seat_name in names else names[0])
    except ValueError:
        return "The full order syntax comes with your first turn sheet; send HELP at any time."


def send_welcome(shell: G.Shell, session: Session, game: Game, seat: Seat, *, in_reply_to: str = "") -> None:
    rules = G.rules_of(game)
    ctx = G.base_context(shell, game, rules)
    ctx.update({
        "seat": {"name": seat.name, "display": seat.player.name, "password": seat.secret},
        "reply_address": shell.reply_address(game.name, seat.name, seat.reply_salt),
        "summary": rules.rules_summary(),
        "help": sample_help(game, seat.name),
        "players": [s.name for s in store.active_seats(game)],
        "min_players": rules.min_players, "max_players": rules.max_players,
        "deadline_spec": game.deadline_spec, "game_timezone": game.timezone,
        "timezone": seat.player.timezone,
    })
    rendered = shell.renderer.render("welcome", ctx, game=game.kind)
    letters.post(shell, session, ToSeat(seat), rendered, kind="welcome", in_reply_to=in_reply_to)


# -- RESIGN ----------------------------------------------------------------------------------

def resign(shell: G.Shell, session: Session, inbound: Inbound, who: Who, game_name: str) -> str:
    """RESIGN <game>: the seat is given up (as the GM's DROP). The player and the GM are told;
    a refusal raises `Refused` with its answer. Returns the label for the mail's record."""
    from bot.gm import powers as gm

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
    ctx = gm.Ctx(shell, session, game, shell.now(), inbound.sender, "mail")
    try:
        text = gm.drop_seat(ctx, seat)
    except gm.GmRefusal as exc:
        raise Refused("RESIGN refused", Notice(ToSeat(seat), f"Cannot resign from {game.name}", str(exc),
                                               kind="resign_refused")) from None
    session.add(GmAudit(game_id=game.id, actor=inbound.sender[:320], via="mail", message_id=inbound.message_id[:998],
                        command=f"RESIGN {game.name} (seat {seat.name})", outcome="done: " + text,
                        created_at=ctx.now, undo=ctx.undo))
    letters.notice(shell, session, ToAddress(seat.player.address, seat.player.name),
                   f"You have resigned from {game.name}",
                   f"Your seat {seat.name} in {game.name} is given up: {text} Thank you for playing; the bot "
                   "will not send you this game's mail any more.", error=False, game=game, kind="resigned",
                   in_reply_to=f"<{inbound.message_id}>")
    letters.notice(shell, session, ToGm(game), f"{seat.name} resigned from {game.name}",
                   f"{seat.player.name} <{seat.player.address}> resigned: {text}", kind="resigned_gm")
    return "RESIGN done"


# -- the NMR-streak limit ------------------------------------------------------------------

def enforce_nmr_limit(shell: G.Shell, session: Session, game: Game) -> int:
    """After a resolution: warn the seats one miss from the limit, act on those at it."""
    from bot.gm import powers as gm

    limit = game.nmr_limit
    if not limit or game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED):
        return 0
    turn = store.open_turn(session, game)
    if turn is None:
        return 0
    acted = 0
    for seat in list(store.active_seats(game)):
        if seat.player.address == game.gm_address:
            continue  # the GM holds it already
        key = f"NMR {game.name} {seat.name} turn {turn.number}"
        done = session.scalar(select(GmAudit.id).where(GmAudit.game_id == game.id, GmAudit.command == key))
        if done is not None:
            continue
        if seat.nmr_streak >= limit:
            ctx = gm.Ctx(shell, session, game, shell.now(), gm.ROBOT, "auto")
            if game.nmr_action == "drop":
                text = gm.drop_seat(ctx, seat)
                letters.notice(shell, session, ToSeat(seat), f"You are out of {game.name}",
                               f"No orders from you for {seat.nmr_streak} turns in a row, the limit of this game: "
                               f"{text}", kind="nmr_dropped", game=game)
            else:
                old = seat.player
                holder = gm.player_for(session, game.gm_address, "GM", ctx.now, game.timezone)
                letters.notice(shell, session, ToSeat(seat), f"Your seat in {game.name} goes to the GM",
                               f"No orders from you for {seat.nmr_streak} turns in a row, the limit of this game: "
                               "the GM now plays your seat.", kind="nmr_handed", game=game)
                ctx.undo = {"seat": seat.name, "player": old.address, "secret": seat.secret}
                seat.player_id = holder.id
                seat.secret = new_secret()
                seat.reply_salt = new_secret()  # the old holder's reply address stops working
                session.flush()
                session.refresh(seat)
                G.queue_seat_mail(shell, session, game, seat, "turn_sheet")
                text = f"{seat.name} ({old.address}) is handed to the GM, who gets its turn sheets from now on."
            session.add(GmAudit(game_id=game.id, actor=gm.ROBOT, via="auto", message_id="", command=key,
                                outcome="done: " + text, created_at=ctx.now, undo=ctx.undo))
            letters.notice(shell, session, ToGm(game), f"NMR limit reached by {seat.name}", text, kind="nmr_limit")
            acted += 1
        elif seat.nmr_streak == limit - 1 and seat.nmr_streak > 0 and not G.on_vacation(
                seat.player, turn.deadline or shell.now()):  # no warning while on vacation
            deadline = G.deadline_text(turn, seat.player.timezone) or "the GM's call"
            what = "you are dropped from the game" if game.nmr_action == "drop" else "the GM takes over your seat"
            turns = "turn" if seat.nmr_streak == 1 else "turns"
            letters.notice(shell, session, ToSeat(seat), f"Warning: {seat.nmr_streak} {turns} without orders",
                           f"No orders from you arrived for the last {seat.nmr_streak} turn(s) of {game.name}. "
                           f"If none arrive for {turn.label} either (due {deadline}), {what}.",
                           kind="nmr_warning", error=True, game=game)
            session.add(GmAudit(game_id=game.id, actor=gm.ROBOT, via="auto", message_id="", command=key,
                                outcome=f"warned {seat.player.address}", created_at=shell.now(), undo=None))
            acted += 1
    return acted


__all__ = ["enforce_nmr_limit", "join", "resign", "sample_help", "seat_name_for", "send_welcome", "slug"]
