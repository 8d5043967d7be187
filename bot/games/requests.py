"""Requests that wait for an address to answer a code: JOIN (of a game or a series), PRACTICE and ADDRESS.

Both act for an address that has not yet proved it is willing, so nothing is done until it
answers a code mailed to it (`bot.mail_in.tokens`); the request waits in `pending_request`
meanwhile (its id is the code's `ref`):

* **JOIN** (double opt-in): a stranger's ``JOIN <game> [name]`` makes no seat. The From gets
  a code; the seat is made, under the name given, when the answer comes back from that
  address (`confirm_join`). A forged From gets one short mail, which greets nobody and repeats
  nothing of the forger's.
* **JOIN <series>** between seasons (a stranger's): the name given waits here, and the person
  is entered in the series' next season under it when the code comes back (`open_series`; the
  code's `ref` is the series, its MAC covers the request).
* **ADDRESS**: moves what its proof covers (`open_address`): the seat of the reply address it
  came through, the seats whose passwords it carries, or every seat of the player when our
  receiving server vouched for the From itself (DMARC). The new address gets a code; the old
  one is told at once, with a ``STOP <code>`` that ends the request. The seats move when the
  new address has answered *and* `[limits] address_change_hold_hours` have passed since the
  old address was told (`due_moves`, run by the tick), so a thief holding one forwarded
  reply address cannot take the seat before its player can stop it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot import letters
from bot.clock import as_utc
from bot.games import observers, reliability
from bot.letters import ToAddress, ToGm, ToSeat
from bot.letters.words import say
from bot.mail_in import tokens
from bot.mail_in.auth import GM_SEAT
from bot.models import Game, GameStatus, PendingRequest, Player, RequestKind, RequestStatus, Seat
from bot.schedules import format_local
from bot.shell import Shell

log = logging.getLogger("flagman.requests")


# -- the codes ---------------------------------------------------------------------------------


def code(shell: Shell, request: PendingRequest) -> str:
    """The code the address that must answer gets (JOIN: the joining From; ADDRESS: the new)."""
    kind = _TOKEN_KINDS[RequestKind(request.kind)]
    return tokens.make(
        shell.settings.secrets.site_secret, kind, str(request.id), shell.now(), request.address, _extra(request)
    )


def stop_code(shell: Shell, request: PendingRequest) -> str:
    """The code that stops an ADDRESS request: for its old address alone."""
    return tokens.make(
        shell.settings.secrets.site_secret,
        tokens.STOP,
        str(request.id),
        shell.now(),
        request.old_address,
        request.address,
    )


_TOKEN_KINDS = {
    RequestKind.JOIN: tokens.JOIN,
    RequestKind.ADDRESS: tokens.ADDRESS,
    RequestKind.PRACTICE: tokens.PRACTICE,
}


def _extra(request: PendingRequest) -> str:
    if request.kind == RequestKind.PRACTICE:
        return request.name  # the kind of game
    return request.old_address if request.kind == RequestKind.ADDRESS else str(request.game_id or "")


def standing(shell: Shell, session: Session, code_text: str, sender: str) -> PendingRequest | None:
    """The request a JOIN, ADDRESS or STOP code stands for now, or None: a code of ours, made for
    this request, not older than `tokens.VALID_DAYS`, for a request still open; a JOIN or
    ADDRESS code sent back from the address it was mailed to (a STOP code from anywhere: it is
    the proof, as an unsubscribe code is)."""
    parsed = tokens.parse(code_text)
    if (
        parsed is None
        or parsed.kind not in (tokens.JOIN, tokens.ADDRESS, tokens.STOP, tokens.PRACTICE)
        or not parsed.ref.isdigit()
    ):
        return None
    request = session.get(PendingRequest, int(parsed.ref))
    if request is None:
        return None
    secrets, now = shell.secrets_in_force, shell.now()
    if parsed.kind == tokens.STOP:
        ok = (
            request.kind == RequestKind.ADDRESS
            and request.status in (RequestStatus.WAITING, RequestStatus.CONFIRMED)
            and tokens.verify(parsed, secrets, now, request.old_address, request.address)
        )
    else:
        kind = next(k for k, token in _TOKEN_KINDS.items() if token == parsed.kind)
        ok = (
            request.kind == kind
            and request.status == RequestStatus.WAITING
            and sender == request.address
            and tokens.verify(parsed, secrets, now, sender, _extra(request))
        )
    return request if ok else None


# -- JOIN --------------------------------------------------------------------------------------


def _waiting(
    shell: Shell, session: Session, kind: RequestKind, address: str, name: str, game_id: int | None = None
) -> PendingRequest:
    """A request of `kind` waiting for `address` to answer its code, written (flushed: it has its id)."""
    request = PendingRequest(
        kind=kind,
        status=RequestStatus.WAITING,
        game_id=game_id,
        seat_ids=[],
        address=address,
        name=name,
        created_at=shell.now(),
    )
    session.add(request)
    session.flush()
    return request


def open_join(shell: Shell, session: Session, game: Game, address: str, name: str) -> PendingRequest:
    """A JOIN waiting for `address` to answer its code; `name` has been checked (`signups.name_problem`)."""
    return _waiting(shell, session, RequestKind.JOIN, address, name, game_id=game.id)


def open_series(shell: Shell, session: Session, address: str, name: str) -> PendingRequest:
    """A stranger's JOIN <series> waiting for `address` to answer its code; `name` (checked by
    `signups.name_problem`, or empty: named after the address) is the name they are entered under."""
    return _waiting(shell, session, RequestKind.SERIES, address, name)


def series_code(shell: Shell, request: PendingRequest, series: str) -> str:
    """The code of a JOIN <series> request: the series is its `ref`, the request its MAC covers,
    so that it stands for that request alone, for the address it was mailed to."""
    return tokens.make(
        shell.settings.secrets.site_secret, tokens.SERIES, series, shell.now(), request.address, str(request.id)
    )


def series_standing(shell: Shell, session: Session, code_text: str, sender: str) -> PendingRequest | None:
    """The JOIN <series> request a series code stands for now, or None: a code of ours sent back
    from the address it was mailed to, not older than `tokens.VALID_DAYS`, for a request of that
    address still waiting."""
    parsed = tokens.parse(code_text)
    if parsed is None or parsed.kind != tokens.SERIES:
        return None
    waiting = session.scalars(
        select(PendingRequest).where(
            PendingRequest.kind == RequestKind.SERIES,
            PendingRequest.status == RequestStatus.WAITING,
            PendingRequest.address == sender,
        )
    )
    secrets, now = shell.secrets_in_force, shell.now()
    return next((r for r in waiting if tokens.verify(parsed, secrets, now, sender, str(r.id))), None)


def open_practice(shell: Shell, session: Session, address: str, kind: str) -> PendingRequest:
    """A PRACTICE waiting for `address` to answer its code (bot.games.practice)."""
    return _waiting(shell, session, RequestKind.PRACTICE, address, kind)


def close(shell: Shell, request: PendingRequest, status: RequestStatus) -> None:
    request.status = status
    request.ended_at = shell.now()


# -- ADDRESS -----------------------------------------------------------------------------------


def requests_today(session: Session, player: Player, now: datetime) -> int:
    """How many ADDRESS requests the player made in the last day (it mails a third party)."""
    return (
        session.scalar(
            select(func.count())
            .select_from(PendingRequest)
            .where(
                PendingRequest.kind == RequestKind.ADDRESS,
                PendingRequest.player_id == player.id,
                PendingRequest.created_at >= now - timedelta(days=1),
            )
        )
        or 0
    )


def open_address(shell: Shell, session: Session, player: Player, seats: Sequence[Seat], new: str) -> PendingRequest:
    """An ADDRESS request for `seats` (what the mail's proof covers), waiting for `new` to
    answer; an earlier one of the player still open is ended (the latest counts)."""
    now = shell.now()
    for earlier in session.scalars(
        select(PendingRequest).where(
            PendingRequest.kind == RequestKind.ADDRESS,
            PendingRequest.player_id == player.id,
            PendingRequest.status.in_((RequestStatus.WAITING, RequestStatus.CONFIRMED)),
        )
    ):
        close(shell, earlier, RequestStatus.STOPPED)
    hold = timedelta(hours=shell.settings.limits.address_change_hold_hours)
    request = PendingRequest(
        kind=RequestKind.ADDRESS,
        status=RequestStatus.WAITING,
        player_id=player.id,
        seat_ids=sorted(s.id for s in seats),
        address=new,
        old_address=player.address,
        created_at=now,
        effective_at=now + hold,
    )
    session.add(request)
    session.flush()
    return request


def seats_of(session: Session, request: PendingRequest) -> list[Seat]:
    """The seats an ADDRESS request moves that are still the player's, active, in games not over."""
    seats = [session.get(Seat, seat_id) for seat_id in request.seat_ids]
    return [
        s
        for s in seats
        if s is not None and s.active and s.player_id == request.player_id and s.game.status != GameStatus.FINISHED
    ]


def player_seats(session: Session, player: Player) -> list[Seat]:
    """The player's active seats in games not finished."""
    return list(
        session.scalars(
            select(Seat)
            .join(Game)
            .where(Seat.player_id == player.id, Seat.active.is_(True), Game.status != GameStatus.FINISHED)
            .order_by(Seat.id)
        )
    )


def taken_problem(session: Session, player: Player, seats: Sequence[Seat], new: str) -> str | None:
    """Why `seats` cannot move to `new`, or None: a GM's address, or one that holds a seat in
    one of their games already."""
    if session.scalar(select(Game.id).where(Game.gm_address == new, Game.status != GameStatus.FINISHED)) is not None:
        return say("address_taken", new=new, games=[])
    owner = session.scalar(select(Player).where(Player.address == new))
    if owner is None or owner.id == player.id:
        return None
    clash = sorted({s.game.name for s in seats if any(o.active and o.player_id == owner.id for o in s.game.seats)})
    return say("address_taken", new=new, games=clash) if clash else None


def confirm_address(shell: Shell, session: Session, request: PendingRequest) -> str:
    """The new address answered: the move is made now if the old address has had its time to
    stop it, else at `effective_at` (the tick). Returns what the new address is told."""
    now = shell.now()
    request.status, request.confirmed_at = RequestStatus.CONFIRMED, now
    player = session.get_one(Player, request.player_id)
    effective = as_utc(request.effective_at) if request.effective_at is not None else now
    if effective <= now:
        return move(shell, session, request)
    when = format_local(effective, player.timezone)
    return say("address_confirmed", new=request.address, when=when, old=request.old_address)


def move(shell: Shell, session: Session, request: PendingRequest) -> str:
    """Move the request's seats to its new address: the whole player when it covers every seat
    of theirs and the address is nobody's yet, else those seats to the player of the new
    address (made now, with the same name, zone and settings). The old address and the GMs
    of the games are told. Returns what the new address is told."""
    now = shell.now()
    player = session.get_one(Player, request.player_id)
    old, new = player.address, request.address
    seats = seats_of(session, request)
    close(shell, request, RequestStatus.DONE)
    if not seats:
        return say("address_move_done", no_seats=True)
    problem = taken_problem(session, player, seats, new)
    if problem is not None:
        close(shell, request, RequestStatus.STOPPED)
        return say("address_move_done", no_seats=False, problem=problem)
    everything = {s.id for s in player_seats(session, player)} == {s.id for s in seats}
    owner = session.scalar(select(Player).where(Player.address == new))
    if everything and owner is None:
        player.address = new
        observers.move(session, old, new)
    else:
        target = (
            owner
            if owner is not None
            else Player(
                address=new,
                name=player.name,
                timezone=player.timezone,
                created_at=now,
                calendar=player.calendar,
                vacation_from=player.vacation_from,
                vacation_to=player.vacation_to,
            )
        )
        if owner is None:
            session.add(target)
            session.flush()
        reliability.moved(session, seats, player, target)  # the record goes with the seats
        for seat in seats:
            seat.player_id = target.id
    session.flush()
    for seat in seats:
        session.refresh(seat)
    names = ", ".join(say("commands_seat_in_game", seat=s.name, game=s.game.name) for s in seats)
    stays = ", ".join(sorted({s.game.name for s in player_seats(session, player)})) if not everything else ""
    when = format_local(now, player.timezone)
    letters.notice(
        shell,
        session,
        ToAddress(old, player.name),
        say("address_moved_title"),
        say("address_moved", new=new, when=when, names=names, stays=stays),
        kind="address_moved",
        error=False,
    )
    for seat in seats:
        if seat.game.gm_address != seat.player.address and seat.name != GM_SEAT:
            letters.notice(
                shell,
                session,
                ToGm(seat.game),
                say("address_gm_title", seat=seat.name),
                say("address_gm", player=player.name, seat=seat.name, game=seat.game.name, old=old, new=new),
                kind="address_gm",
            )
    log.info("ADDRESS request %s: %s moved from %s to %s", request.id, names, old, new)
    return say("address_move_done", no_seats=False, problem=None, new=new, names=names, old=old)


def due_moves(shell: Shell) -> int:
    """Make the ADDRESS moves whose new address answered and whose hold is over (the tick calls
    this); the new address gets word that the move is made. Returns how many were made."""
    now = shell.now()
    with shell.db.read() as session:
        due = list(
            session.scalars(
                select(PendingRequest.id).where(
                    PendingRequest.kind == RequestKind.ADDRESS,
                    PendingRequest.status == RequestStatus.CONFIRMED,
                    PendingRequest.effective_at <= now,
                )
            )
        )
    for request_id in due:
        with shell.db.transaction() as session:
            request = session.get(PendingRequest, request_id)
            if request is None or request.status != RequestStatus.CONFIRMED:
                continue  # stopped meanwhile
            seats = seats_of(session, request)
            text = move(shell, session, request)
            # After the move a seat's registered address is the new one: the mail carries the
            # seat's reply address to its holder.
            moved = [s for s in seats if s.player.address == request.address]
            to = ToSeat(moved[0]) if moved else ToAddress(request.address)
            letters.notice(shell, session, to, say("address_made_title"), text, kind="address", error=False)
    return len(due)


def stop(shell: Shell, session: Session, request: PendingRequest) -> str:
    """STOP from the old address: the request ends, nothing moves; the GMs are told (someone
    may hold the player's reply address). Returns what the old address is told."""
    close(shell, request, RequestStatus.STOPPED)
    player = session.get_one(Player, request.player_id)
    seats = seats_of(session, request)
    for seat in seats:
        letters.notice(
            shell,
            session,
            ToGm(seat.game),
            say("address_stopped_gm_title", seat=seat.name),
            say(
                "address_stopped_gm",
                player=player.name,
                seat=seat.name,
                game=seat.game.name,
                new=request.address,
                old=request.old_address,
            ),
            kind="address_gm",
        )
    return say("address_stop_done", old=request.old_address, new=request.address)


__all__ = [
    "close",
    "code",
    "confirm_address",
    "due_moves",
    "move",
    "open_address",
    "open_join",
    "open_practice",
    "open_series",
    "player_seats",
    "requests_today",
    "seats_of",
    "series_code",
    "series_standing",
    "standing",
    "stop",
    "stop_code",
    "taken_problem",
]
