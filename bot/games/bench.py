"""The substitutes bench (docs/reliability.md): people who volunteer to take over seats of a
kind of game whose holders leave under way.

* ``SUBSTITUTE ON <game kind>`` / ``SUBSTITUTE OFF <game kind>`` (`sit`, `stand_up`): a person
  the bot knows at once; a stranger answers a code first, as for JOIN.
* `offer`: when a seat's holder leaves a game under way (their ``RESIGN``, the NMR limit) and
  the bench of the game's kind has someone who may take it, the seat is not closed: the game's
  robot drives it (its orders filed at once) and every such person gets the offer by mail, a
  code to send back (a reply, or the one-tap link). The GM is told, and the offer is in the
  audit log (so in the digest).
* `take`: the first answer takes the seat, as the GM's ``REPLACE`` hands one over: a fresh
  seat password and reply address, the turn sheet with whose seat it is; the GM and the other
  players are told; the taker is credited in their record (`SeatChange` of why
  ``substitute``). The offer is taken by one conditional update, so of two answers at once
  exactly one wins; the other is told the seat has gone.

Who may take an offer: on the bench of the kind, not holding a seat of the game, not its GM,
not the person who left it, and through the game's entry gate (``--min-reliability``).
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot import letters, store
from bot.fate import Refused
from bot.games import reliability, robots, seasons, turns
from bot.games.audit import done_by_the_bot
from bot.letters import ToAddress, ToGm, ToSeat, notices
from bot.letters.words import say
from bot.mail_in import tokens
from bot.mail_in.auth import new_secret
from bot.models import (
    ChangeWhy,
    Game,
    GameStatus,
    OfferStatus,
    Player,
    Seat,
    SeatOffer,
    Substitute,
)
from bot.shell import Shell
from rules import UnknownGameError, find_game
from rules.reliability import admits

log = logging.getLogger("flagman.bench")

MAX_BENCH = 500  # people offered one seat at most (the first to have sat on the bench)


def kind_named(text: str) -> str | None:
    """The registry key of the kind of game `text` names, or None."""
    try:
        return find_game(text.strip().lower()).name
    except UnknownGameError:
        return None


def sit(session: Session, player: Player, kind: str, now: datetime) -> bool:
    """`player` on the bench of `kind`; False: they were on it already."""
    found = session.scalar(select(Substitute).where(Substitute.player_id == player.id, Substitute.kind == kind))
    if found is not None:
        return False
    session.add(Substitute(player_id=player.id, kind=kind, since=now))
    session.flush()
    return True


def stand_up(session: Session, player: Player, kind: str) -> bool:
    """`player` off the bench of `kind`; False: they were not on it."""
    found = session.scalar(select(Substitute).where(Substitute.player_id == player.id, Substitute.kind == kind))
    if found is None:
        return False
    session.delete(found)
    session.flush()
    return True


def benches_of(session: Session, player: Player) -> list[str]:
    return list(
        session.scalars(select(Substitute.kind).where(Substitute.player_id == player.id).order_by(Substitute.kind))
    )


def may_take(session: Session, game: Game, player: Player, *, leaving: int | None = None) -> bool:
    """Whether `player` may take a seat of `game` from the bench (see the module's docstring)."""
    if player.address == game.gm_address or player.id == leaving or player.address == robots.ROBOT_ADDRESS:
        return False
    if any(s.player_id == player.id for s in store.active_seats(game)):
        return False
    minimum = reliability.gate(game)
    return minimum is None or admits(reliability.record(session, player), minimum)


def offer(shell: Shell, session: Session, game: Game, seat: Seat, why: ChangeWhy, turn_number: int) -> bool:
    """Offer `seat`, whose holder leaves now for `why`, to the bench; a robot drives it meanwhile.
    False (nothing done): a practice game, or nobody on the bench may take it."""
    if game.practice or game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED) or seat.robot:
        return False
    turn = store.open_turn(session, game)
    rules = turns.rules_of(game)
    if turn is None or seat.name not in rules.players(rules.load_state(turn.state)):
        return False  # out of the race already: nothing to take over
    now = shell.now()
    leaving = seat.player
    bench = [
        sub.player
        for sub in session.scalars(
            select(Substitute).where(Substitute.kind == game.kind).order_by(Substitute.id).limit(MAX_BENCH)
        )
        if may_take(session, game, sub.player, leaving=leaving.id)
    ]
    if not bench:
        return False
    robot = robots.robot_player(session, now)
    reliability.note_change(session, seat, turn_number, why, robot, now)
    seat.player_id = robot.id
    seat.robot = True
    seat.secret = new_secret()
    seat.reply_salt = new_secret()  # the old holder's reply address stops working
    seat.nmr_streak = 0
    seat.gm_plot = None
    session.flush()
    session.refresh(seat)
    robots.file_orders(session, rules, game, turn, rules.load_state(turn.state), [seat], now)
    made = SeatOffer(game_id=game.id, seat_id=seat.id, made_at=now, why=why.value, status=OfferStatus.OPEN)
    session.add(made)
    session.flush()
    season_part = seasons.seat_goes_on(session, game, "offered")
    for person in bench:
        code = offer_code(shell, made, person.address)
        letters.post(
            shell,
            session,
            ToAddress(person.address, person.name, person.timezone),
            notices.seat_offer(
                shell,
                game,
                rules,
                seat=seat.name,
                why=why.value,
                greeting=person.name,
                timezone=person.timezone,
                code=code,
                subject_tag=tokens.subject_tag(code),
                valid_days=tokens.VALID_DAYS,
                season_part=season_part,
            ),
            kind="seat_offer",
            game=game,
        )
    names = ", ".join(p.name for p in bench)
    text = say(
        "bench_offered_gm",
        seat=seat.name,
        game=game.name,
        why=why.value,
        people=names,
        count=len(bench),
        kind=game.kind,
    )
    _audit_and_tell_gm(
        shell,
        session,
        game,
        f"OFFER {game.name} {seat.name}",
        text,
        now,
        ("bench_offered_gm_title", "seat_offer"),
        seat,
    )
    log.info("game %s: seat %s offered to %d on the bench", game.name, seat.name, len(bench))
    return True


def _audit_and_tell_gm(
    shell: Shell,
    session: Session,
    game: Game,
    command: str,
    text: str,
    now: datetime,
    title_and_kind: tuple[str, str],
    seat: Seat,
) -> None:
    """What the bench did with a seat, in the GM's audit log (`done_by_the_bot`, as `command`)
    and in a notice to the GM titled by the words `title_and_kind[0]`, of that kind of mail."""
    title, kind = title_and_kind
    done_by_the_bot(session, game, command, "done: " + text, now)
    letters.notice(shell, session, ToGm(game), say(title, seat=seat.name), text, kind=kind)


def offer_code(shell: Shell, made: SeatOffer, address: str) -> str:
    """The code of `made` for `address` alone."""
    return tokens.make(
        shell.settings.secrets.site_secret, tokens.OFFER, str(made.id), shell.now(), address, str(made.seat_id)
    )


def offer_of(shell: Shell, session: Session, code_text: str, sender: str) -> SeatOffer | None:
    """The offer an OFFER code stands for, sent back from the address it was mailed to (open or
    not: a late answer is told the seat has gone), or None."""
    parsed = tokens.parse(code_text)
    if parsed is None or parsed.kind != tokens.OFFER or not parsed.ref.isdigit():
        return None
    made = session.get(SeatOffer, int(parsed.ref))
    if made is None:
        return None
    ok = tokens.verify(parsed, shell.secrets_in_force, shell.now(), sender, str(made.seat_id))
    return made if ok else None


def take(shell: Shell, session: Session, made: SeatOffer, address: str) -> tuple[str, Seat]:
    """The seat of `made` to the person at `address`, if the offer is still open and they may take
    it; refused with the reason otherwise (the seat has gone, or they may not)."""
    now = shell.now()
    game = session.get_one(Game, made.game_id)
    seat = session.get_one(Seat, made.seat_id)
    player = session.scalar(select(Player).where(Player.address == address.strip().lower()))
    if made.status != OfferStatus.OPEN or not seat.robot or game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED):
        raise Refused(say("bench_gone", seat=seat.name, game=game.name))
    if player is None or not may_take(session, game, player):
        raise Refused(say("bench_not_for_you", seat=seat.name, game=game.name))
    won = session.execute(
        update(SeatOffer)
        .where(SeatOffer.id == made.id, SeatOffer.status == OfferStatus.OPEN)
        .values(status=OfferStatus.TAKEN, taken_by=player.id, taken_at=now)
        .execution_options(synchronize_session=False)
    )
    if getattr(won, "rowcount", 0) != 1:
        raise Refused(say("bench_gone", seat=seat.name, game=game.name))
    session.refresh(made)
    turn = store.open_turn(session, game)
    reliability.note_change(session, seat, turn.number if turn is not None else 0, ChangeWhy.SUBSTITUTE, player, now)
    seat.player_id = player.id
    seat.robot = False
    seat.handed_over = True  # the letters show it as "<seat> (<taker's name>)"
    seat.secret = new_secret()
    seat.reply_salt = new_secret()
    seat.nmr_streak = 0
    session.flush()
    session.refresh(seat)
    where = turn.label if turn is not None else ""
    turns.queue_seat_mail(
        shell,
        session,
        game,
        seat,
        "turn_sheet",
        note=say(
            "bench_taken_note",
            seat=seat.name,
            game=game.name,
            turn=where,
            season_part=seasons.seat_goes_on(session, game, "taker"),
        ),
    )
    text = say("bench_taken_gm", seat=seat.name, game=game.name, player=player.name, address=player.address)
    _audit_and_tell_gm(
        shell,
        session,
        game,
        f"SUBSTITUTE {game.name} {seat.name}",
        text,
        now,
        ("bench_taken_gm_title", "seat_taken"),
        seat,
    )
    for other in store.mailed_seats(game):
        if other.id != seat.id:
            letters.notice(
                shell,
                session,
                ToSeat(other),
                say("bench_taken_title", seat=seat.name, kind=game.kind),
                say("bench_taken_players", seat=seat.name, player=player.name, turn=where, kind=game.kind),
                kind="seat_taken",
            )
    log.info("game %s: seat %s taken from the bench by %s", game.name, seat.name, player.address)
    return say("bench_taken", seat=seat.name, game=game.name, turn=where), seat


__all__ = ["benches_of", "kind_named", "may_take", "offer", "offer_code", "offer_of", "sit", "stand_up", "take"]
