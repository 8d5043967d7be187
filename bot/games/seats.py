"""A seat changing hands or leaving the game: what the GM's commands and the players' own share.

* `drop_seat`: the seat leaves the race through the rules' `drop_player` (before the start it
  only leaves the sign-up list). The GM's ``DROP``, a player's ``RESIGN`` and the NMR-streak
  limit (``nmr_action = "drop"``) all drop a seat so.
* `send_welcome` (with `sample_help`): the welcome mail of a seat's new holder before the
  start, on ``JOIN`` and on the GM's ``REPLACE``.
* `enforce_nmr_limit` (`Game.nmr_limit`, off by default): after each resolution (the tick,
  the GM's ``PROCESS``), one turn before the limit the player is warned by mail; at the limit
  the seat is dropped (``"drop"``) or handed to the GM (``"gm"``: the GM's address takes the
  seat and gets its turn sheets).
* `player_for`: the player of an address, made if new, for a seat handed over (``REPLACE``,
  the NMR limit's ``"gm"``).

Both `bot.commands.gm` (the GM's commands) and `bot.games.signups` (JOIN, RESIGN) use these,
and neither imports the other.
"""

from __future__ import annotations

import random
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import letters, outlook, store
from bot.fate import Refused
from bot.games import bench, reliability, turns
from bot.games.audit import done_by_the_bot
from bot.letters import ToAddress, ToGm, ToSeat, notices
from bot.letters.context import due_by
from bot.letters.words import say
from bot.mail_in.addresses import address_problem
from bot.mail_in.auth import new_secret
from bot.mail_out.render import RenderedMail
from bot.models import ChangeWhy, Game, GameStatus, GmAudit, Player, Seat, Turn
from bot.safe_text import name_from_address
from bot.shell import Shell
from rules.api import AnyGame, GameState


def under_way(session: Session, game: Game) -> tuple[AnyGame, GameState, Turn]:
    """The rules, the state now and the open turn of a game under way; refused when it has not
    started, is over, or has no open turn."""
    if game.status == GameStatus.SIGNUP:
        raise Refused(say("game_refused", why="signup", game=game.name))
    if game.status == GameStatus.FINISHED:
        raise Refused(say("game_refused", why="over", game=game.name))
    rules, state, turn = turns.current_state(session, game)
    if turn is None:
        raise Refused(say("game_refused", why="no_open_turn", game=game.name))
    return rules, state, turn


def drop_seat(
    session: Session, game: Game, seat: Seat, why: ChangeWhy, now: datetime
) -> tuple[str, dict[str, object] | None]:
    """Take a seat out of the game: the rules drop the player from the open turn's state; the
    seat's holder leaves it for `why` (the reliability record's `SeatChange`) when the game is
    under way.

    Returns what was done, in a sentence (`seat_dropped`), and what the drop replaced for the audit log's
    `GmAudit.undo` (the turn's state), None when no state changed."""
    if game.status == GameStatus.FINISHED:
        raise Refused(say("game_refused", why="over", game=game.name))
    if game.status == GameStatus.SIGNUP:
        seat.active = False
        return say("seat_dropped", seat=seat.name, game=game.name, signup=True), None
    rules, state, turn = under_way(session, game)
    if seat.name not in rules.players(state):
        seat.active = False
        return say("seat_dropped", seat=seat.name, game=game.name, signup=False, label=None), None
    new_state = rules.drop_player(state, seat.name)
    undo: dict[str, object] = {"turn": turn.number, "state": turn.state, "seat": seat.name}
    reliability.note_change(session, seat, turn.number, why, None, now)
    turn.state = rules.dump_state(new_state)
    turn.label = rules.turn_label(new_state)
    seat.active = False
    return say("seat_dropped", seat=seat.name, game=game.name, signup=False, label=turn.label), undo


def player_for(session: Session, address: str, name: str, now: datetime, default_zone: str) -> Player:
    address = address.strip().lower()
    problem = address_problem(address)
    if problem is not None:  # the doors check first (bot.mail_in.addresses); this is the last
        raise Refused(say("game_refused", why="bad_address", problem=problem))
    player = session.scalar(select(Player).where(Player.address == address))
    if player is None:
        player = Player(
            address=address,
            name=name or name_from_address(address.partition("@")[0]),
            timezone=default_zone,
            created_at=now,
        )
        session.add(player)
        session.flush()
    return player


# -- the welcome mail ------------------------------------------------------------------------


def sample_help(game: Game, seat_name: str | None = None) -> str:
    """The order syntax of the game's first turn, for `seat_name` (None: for a seat like any
    other): shown on a provisional start (the seats so far, filled up to the minimum) in the
    welcome mail and the RULES answer; the real grammar comes with each turn sheet and HELP."""
    rules = turns.rules_of(game)
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


def send_welcome(shell: Shell, session: Session, game: Game, seat: Seat, *, in_reply_to: str = "") -> None:
    letters.post(shell, session, ToSeat(seat), welcome(shell, game, seat), kind="welcome", in_reply_to=in_reply_to)


def welcome(shell: Shell, game: Game, seat: Seat) -> RenderedMail:
    """The welcome mail of a seat's new holder before the start: the seat's password and reply
    address, the rules in short, the order syntax."""
    rules = turns.rules_of(game)
    players = [s.name for s in store.active_seats(game)]
    return notices.welcome(shell, game, rules, seat, help_text=sample_help(game, seat.name), players=players)


# -- the NMR-streak limit ------------------------------------------------------------------


def enforce_nmr_limit(shell: Shell, session: Session, game: Game) -> int:
    """After a resolution: warn the seats one miss from the limit, act on those at it."""
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
            _act_at_limit(shell, session, game, seat, turn, key)
            acted += 1
        elif (
            seat.nmr_streak == limit - 1
            and seat.nmr_streak > 0
            and not outlook.on_vacation(seat.player, turn.deadline or shell.now())
        ):  # no warning while on vacation
            _warn(shell, session, game, seat, turn, key)
            acted += 1
    return acted


def _act_at_limit(shell: Shell, session: Session, game: Game, seat: Seat, turn: Turn, key: str) -> None:
    """A seat at the NMR limit: offered to the bench, else dropped (``"drop"``) or handed to the
    GM (``"gm"``); its player and the GM told, the audit log's row `key` written."""
    now = shell.now()
    undo: dict[str, object] | None = None
    old, streak = seat.player, seat.nmr_streak
    if bench.offer(shell, session, game, seat, ChangeWhy.NMR_LIMIT, turn.number):
        text = say("bench_offered_text", seat=seat.name, kind=game.kind)
        letters.notice(
            shell,
            session,
            ToAddress(old.address, old.name),  # the seat's reply address is the robot's now
            say("nmr_dropped_title", game=game.name),
            say("nmr_dropped", streak=streak, text=text),
            kind="nmr_dropped",
            game=game,
        )
    elif game.nmr_action == "drop":
        text, undo = drop_seat(session, game, seat, ChangeWhy.NMR_LIMIT, now)
        letters.notice(
            shell,
            session,
            ToSeat(seat),
            say("nmr_dropped_title", game=game.name),
            say("nmr_dropped", streak=seat.nmr_streak, text=text),
            kind="nmr_dropped",
            game=game,
        )
    else:
        text, undo = _hand_to_gm(shell, session, game, seat, turn, now)
    done_by_the_bot(session, game, key, "done: " + text, now, undo=undo)
    letters.notice(shell, session, ToGm(game), say("nmr_limit_title", seat=seat.name), text, kind="nmr_limit")


def _hand_to_gm(
    shell: Shell, session: Session, game: Game, seat: Seat, turn: Turn, now: datetime
) -> tuple[str, dict[str, object]]:
    """The NMR limit's ``"gm"``: the GM's address takes the seat (a new password and reply
    address: the old holder's stop working) and gets its turn sheet; what the GM is told, and
    the undo."""
    old = seat.player
    holder = player_for(session, game.gm_address, "GM", now, game.timezone)
    letters.notice(
        shell,
        session,
        ToSeat(seat),
        say("nmr_handed_title", game=game.name),
        say("nmr_handed", streak=seat.nmr_streak),
        kind="nmr_handed",
        game=game,
    )
    undo: dict[str, object] = {"seat": seat.name, "player": old.address, "secret": seat.secret}
    reliability.note_change(session, seat, turn.number, ChangeWhy.NMR_LIMIT, holder, now)
    seat.player_id = holder.id
    seat.secret = new_secret()
    seat.reply_salt = new_secret()  # the old holder's reply address stops working
    session.flush()
    session.refresh(seat)
    turns.queue_seat_mail(shell, session, game, seat, "turn_sheet")
    return say("nmr_handed_gm", seat=seat.name, address=old.address), undo


def _warn(shell: Shell, session: Session, game: Game, seat: Seat, turn: Turn, key: str) -> None:
    """A seat one miss from the NMR limit: its player warned, the audit log's row `key` written."""
    deadline = due_by(shell, outlook.timing(game, turn), seat.player.timezone)
    letters.notice(
        shell,
        session,
        ToSeat(seat),
        say("nmr_warning_title", streak=seat.nmr_streak),
        say(
            "nmr_warning",
            streak=seat.nmr_streak,
            game=game.name,
            turn=turn.label,
            deadline=deadline,
            drop=game.nmr_action == "drop",
        ),
        kind="nmr_warning",
        error=True,
        game=game,
    )
    done_by_the_bot(session, game, key, f"warned {seat.player.address}", shell.now())


__all__ = [
    "drop_seat",
    "enforce_nmr_limit",
    "player_for",
    "sample_help",
    "send_welcome",
    "welcome",
    "under_way",
]
