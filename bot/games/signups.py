"""The player's side of a game's life: JOIN and RESIGN.

* ``JOIN <game> [name]`` (mail-interface.md) comes from anyone, a stranger too, and is double
  opt-in: a stranger's JOIN makes no seat, it mails the From a code
  (`ask_to_join`, `bot.games.requests`), and the seat is made when the answer comes back from
  that address (`confirm_join`). A JOIN in mail that proved its sender's registered address
  (a player's or the GM's) is a seat at once, at that address (`join`). The seat is named
  after the name given (checked first: `name_problem`), else the address, unique in the game.
  The newcomer gets a welcome mail with the rules summary, the order syntax and their reply
  address; the GM is told. When the game's maximum is reached it starts by itself. Refused,
  with a short reason that repeats none of the mail's words: an unknown game, a game not open
  (started, finished), a full game, an address that has joined already, a name that cannot
  be shown (a link, an address, too long, characters that are not a name's).
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

from bot import letters, store
from bot.fate import Answer, Done, Ignored, Letter, Notice, Refused
from bot.games import bench, reliability, requests, season_tiers, seasons, turns
from bot.games.identity import Who
from bot.games.seats import drop_seat, welcome
from bot.letters import ToAddress, ToGm, ToSeat, notices
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.mail_in import tokens
from bot.mail_in.auth import GM_SEAT, NAME_RE, new_secret
from bot.mail_in.parse import Inbound
from bot.models import (
    ChangeWhy,
    Game,
    GameStatus,
    GmAudit,
    PendingRequest,
    Player,
    PressMode,
    Reason,
    RequestStatus,
    Seat,
)
from bot.safe_text import echo_name, name_from_address, quote_lines
from bot.shell import Shell

log = logging.getLogger("flagman.signups")


# -- JOIN ------------------------------------------------------------------------------------

MAX_NAME = 40  # characters of a name chosen with JOIN
MAX_NAME_WORDS = 4
# A name is letters (any script), marks, digits, spaces and the punctuation of names.
_NAME_PUNCTUATION = frozenset(" -'.’")
# What makes a name a link or an address: a scheme, "www.", an "@", a dot between two letters.
_LINK = re.compile(r"://|www\.|@|\w\.\w", re.I)


def name_problem(name: str) -> str | None:
    """Why `name` (JOIN's, from anyone) cannot be shown to the players, or None: it is shown to
    every player of the game and greets its sender, so it must read as a name. The reason
    never repeats the name (a forged JOIN relayed its spam "name")."""
    if not name:
        return None
    if len(name) > MAX_NAME or len(name.split()) > MAX_NAME_WORDS:
        return say("join_name_rule", why="long", most=MAX_NAME, words=MAX_NAME_WORDS)
    if _LINK.search(name):
        return say("join_name_rule", why="link")
    if any(not (unicodedata.category(c)[0] in "LMN" or c in _NAME_PUNCTUATION) for c in name):
        return say("join_name_rule", why="letters")
    return None


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


def _refuse(game: Game | None, address: str, title: str, text: str, what: str) -> Refused:
    # The answer greets nobody by name and repeats none of the mail's words (a forged
    # JOIN must not carry spam to a third party).
    return Refused(
        say("mail_record", why="join_refused", what=what),
        Notice(ToAddress(address), title, text, kind="join_refused", game=game),
        reason=Reason.JOIN_REFUSED,
        label=command_label("JOIN", came=Came.REFUSED),
        game=game,
    )


def _open_game(session: Session, game_name: str, address: str, name: str) -> Game:
    """The game a JOIN names, if `address` may join it under `name`; else raises `Refused`."""
    game = store.find_game_row(session, game_name)
    if game is not None and game.practice and not any(s.player.address == address for s in game.seats):
        game = None  # a practice game is its person's alone: its name is answered as one not taken
    if game is None:
        game = _season_race_open(session, game_name, address)
    if game is None:
        open_games = sorted(g.name for g in session.scalars(select(Game).where(Game.status == GameStatus.SIGNUP)))
        raise _refuse(
            None,
            address,
            say("join_no_game_title"),
            say("join_no_game", open_games=open_games),
            "unknown_game",
        )
    rules = turns.rules_of(game)
    mine = next((s for s in game.seats if s.active and s.player.address == address), None)
    if mine is not None:
        raise _refuse(
            game,
            address,
            say("join_already_title", game=game.name),
            say("join_already", game=game.name, seat=mine.name),
            "already_joined",
        )
    if game.status != GameStatus.SIGNUP:
        raise _refuse(
            game,
            address,
            say("join_closed_title", game=game.name),
            say("join_closed", game=game.name, over=game.status == GameStatus.FINISHED),
            "closed",
        )
    if len(store.active_seats(game)) >= rules.max_players:
        raise _refuse(
            game,
            address,
            say("join_full_title", game=game.name),
            say("join_full", game=game.name, max_players=rules.max_players),
            "full",
        )
    admitted, found = reliability.let_in(session, game, address)
    if not admitted:
        raise _refuse(
            game,
            address,
            say("join_gate_title", game=game.name),
            say(
                "join_gate",
                game=game.name,
                minimum=game.min_reliability,
                ratio=found.shown_ratio(),
                on_time=found.on_time,
                turns=found.turns,
            ),
            "below_gate",
        )
    problem = name_problem(name)
    if problem is not None:
        raise _refuse(
            game,
            address,
            say("join_bad_name_title"),
            say("join_bad_name", game=game.name, problem=problem),
            "name",
        )
    return game


def _season_race_open(session: Session, season_name: str, address: str) -> Game | None:
    """JOIN <season>: the season's race open for sign-ups (a seat in it is an entry in the
    season: the next races take the last one's people); None when there is no such season.
    A season with no race open for sign-ups refuses the JOIN, saying so."""
    found = seasons.find_season(session, season_name)
    if found is None:
        return None
    open_race = next((r.game for r in found.races if r.game.status == GameStatus.SIGNUP), None)
    if open_race is None:
        raise _refuse(
            None,
            address,
            say("join_season_closed_title", season=found.name),
            say("join_season_closed", season=found.name),
            "season_closed",
        )
    return open_race


def newcomer_name(chosen: str, from_name: str) -> str:
    """The name a newcomer is entered under: the one given with JOIN (checked by `name_problem`),
    else the display name of their mail's From when it reads as a name, else none (named after
    the address). Case kept."""
    given = echo_name(chosen.strip())
    if given:
        return given
    shown = echo_name(from_name.strip())
    return shown if shown and name_problem(shown) is None else ""


def ask_to_join(shell: Shell, session: Session, inbound: Inbound, game_name: str, name: str) -> Done:
    """A stranger's JOIN: no seat yet, a code to the From (a forged From gets one short mail that
    names no player and says nothing of the forger's). Refusals raise `Refused`."""
    sender = inbound.sender.strip().lower()
    if not sender:
        raise Ignored(say("mail_record", why="no_sender", verb="JOIN"), reason=Reason.NO_SENDER)
    series = (
        season_tiers.open_to_newcomers(session, game_name) if store.find_game_row(session, game_name) is None else None
    )
    if series is not None:
        # JOIN <series> between seasons: the code first, as for a game (double opt-in); the
        # entry is made when it comes back from this address (`bot.commands.anyone.confirm`),
        # under the name given, checked as a game's JOIN checks it (else the From's name).
        problem = name_problem(name.strip())
        if problem is not None:
            raise _refuse(
                None,
                sender,
                say("join_bad_name_title"),
                say("join_bad_name", game=series, problem=problem),
                "name",
            )
        request = requests.open_series(shell, session, sender, newcomer_name(name, inbound.sender_name))
        code = requests.series_code(shell, request, series)
        rendered = notices.series_confirm(
            shell, series, code=code, subject_tag=tokens.subject_tag(code), valid_days=tokens.VALID_DAYS
        )
        return Done(
            say("mail_record", why="join_asked", game=series),
            Reason.JOIN_ASKED,
            (Letter(ToAddress(sender), rendered, "series_confirm"),),
        )
    game = _open_game(session, game_name, sender, name)
    request = requests.open_join(shell, session, game, sender, name.strip())
    code = requests.code(shell, request)
    rendered = notices.join_confirm(
        shell, game, turns.rules_of(game), code=code, subject_tag=tokens.subject_tag(code), valid_days=tokens.VALID_DAYS
    )
    return Done(
        say("mail_record", why="join_asked", game=game.name),
        Reason.JOIN_ASKED,
        (Letter(ToAddress(sender), rendered, "join_confirm", game=game),),
        game=game,
    )


def confirm_join(shell: Shell, session: Session, request: PendingRequest) -> tuple[str, Answer]:
    """The code of a JOIN came back from its address: the seat is made (if the game still takes
    it). Returns the label for the record and the answer: the welcome mail, or why not."""
    game = session.get_one(Game, request.game_id)
    requests.close(shell, request, RequestStatus.DONE)
    try:
        game = _open_game(session, game.name, request.address, request.name)
    except Refused as refused:
        assert refused.answer is not None
        return command_label("JOIN", came=Came.REFUSED), refused.answer
    seat = join(shell, session, game, request.address, request.name)
    return command_label("JOIN", game.name, seat.name, came=Came.SEAT), Letter(
        ToSeat(seat), welcome(shell, game, seat), "welcome", essential=True
    )


def join(shell: Shell, session: Session, game: Game, address: str, name: str) -> Seat:
    """A seat in `game` for `address` (checked by `_open_game`), named after `name` (or the
    address); the GM is told, and the game starts at its maximum."""
    rules = turns.rules_of(game)
    chosen = echo_name(name)
    display = chosen or name_from_address(address.partition("@")[0])
    former = next((s for s in game.seats if s.player.address == address), None)
    if former is not None:
        # Resigned before the start and back again: the old seat is reopened.
        seat = former
        seat.active = True
        seat.secret = new_secret()
        if chosen:
            seat.player.name = chosen
    else:
        taken = {s.name for s in game.seats}
        seat = turns.add_seat(shell, session, game, seat_name_for(chosen, address, taken), address, display)
    session.flush()
    count = len(store.active_seats(game))
    started = count >= rules.max_players
    if started:
        turns.start_game(shell, session, game)
    text = say(
        "joined_gm",
        player=seat.player.name,
        address=seat.player.address,
        game=game.name,
        seat=seat.name,
        count=count,
        min_players=rules.min_players,
        max_players=rules.max_players,
        started=started,
        enough=count >= rules.min_players,
    )
    letters.notice(
        shell, session, ToGm(game), say("joined_gm_title", seat=seat.name, game=game.name), text, kind="joined"
    )
    log.info("JOIN %s: %s as %s", game.name, address, seat.name)
    return seat


def join_now(shell: Shell, session: Session, game_name: str, address: str, name: str) -> tuple[Seat, Letter]:
    """JOIN in mail that proved its sender's registered address: the seat at once. Refusals raise."""
    game = _open_game(session, game_name, address, name)
    seat = join(shell, session, game, address, name)
    return seat, Letter(ToSeat(seat), welcome(shell, game, seat), "welcome")


# -- RESIGN ----------------------------------------------------------------------------------


# A farewell passed on is at most this many lines, each echoed (one line, printable, at most
# `bot.safe_text.LINE_CAP` characters): the rest is counted, not shown.
FAREWELL_LINES = 12


def _resigned_words(session: Session, game: Game, seat: Seat, text: str) -> str:
    """The answer to a RESIGN: the seat given up, what became of it (`text`) and, in a race of a
    season, that the leaver runs no more races of it."""
    part = seasons.seat_goes_on(session, game, "leaver")
    return say("resigned", seat=seat.name, game=game.name, text=text, season_part=part, practice=bool(game.practice))


def resign(
    shell: Shell, session: Session, inbound: Inbound, who: Who, game_name: str, *, farewell: str = ""
) -> tuple[Seat, str, str]:
    """RESIGN <game>: the seat is given up (as the GM's DROP). The player and the GM are told;
    the GM in one mail that quotes `farewell`, the mail's words beside the RESIGN of the seat it
    proved (none in a practice race), and says whether the other players are told it: they
    are where the game's press is on (the GM's setting says whether players see each other's
    words), not where it is off. A refusal raises `Refused` with its answer. Returns the seat,
    what was done, in a sentence, and the farewell quoted for the other players ("": none)."""
    game = store.find_game_row(session, game_name)
    seat: Seat | None = None
    if game is not None and any(g.id == game.id for g in who.games):
        if who.seat is not None and who.seat.game_id == game.id:
            seat = who.seat
        else:
            seat = next((s for s in game.seats if s.active and s.player.address == inbound.sender), None)
    if game is None or seat is None or not seat.active:
        raise Refused(
            say("mail_record", why="resign_refused"),
            Notice(
                who.holder(inbound),
                say("resign_no_seat_title", game=game_name),
                say("resign_no_seat", game=game_name),
                kind="resign_refused",
            ),
            label=command_label("RESIGN", came=Came.REFUSED),
        )
    now = shell.now()
    leaving = seat.player
    open_turn = store.open_turn(session, game) if game.status in (GameStatus.ACTIVE, GameStatus.PAUSED) else None
    try:
        if open_turn is not None and bench.offer(shell, session, game, seat, ChangeWhy.RESIGNED, open_turn.number):
            text, undo = say("bench_offered_text", seat=seat.name, kind=game.kind), None
        else:
            text, undo = drop_seat(session, game, seat, ChangeWhy.RESIGNED, now)
    except Refused as exc:
        raise Refused(
            say("mail_record", why="resign_refused"),
            Notice(ToSeat(seat), say("resign_refused_title", game=game.name), str(exc), kind="resign_refused"),
            label=command_label("RESIGN", came=Came.REFUSED),
        ) from None
    if game.practice and game.status in (GameStatus.ACTIVE, GameStatus.PAUSED):
        # A practice race is its person's alone: without them it is closed at once, as
        # `bot.games.practice.expire_idle` closes one whose person is out of the race.
        game.status = GameStatus.FINISHED
        game.finished_at = now
        game.finishes = (game.finishes or 0) + 1
    session.add(
        GmAudit(
            game_id=game.id,
            actor=inbound.sender[:320],
            via="mail",
            message_id=inbound.message_id[:998],
            command=f"RESIGN {game.name} (seat {seat.name})",
            outcome="done: " + text,
            created_at=now,
            undo=undo,
        )
    )
    letters.notice(
        shell,
        session,
        ToAddress(leaving.address, leaving.name, leaving.timezone),
        say("resigned_title", game=game.name),
        _resigned_words(session, game, seat, text),
        error=False,
        game=game,
        kind="resigned",
        in_reply_to=f"<{inbound.message_id}>",
    )
    quoted = (
        quote_lines(farewell, most=FAREWELL_LINES)
        if farewell.strip() and not game.practice and who.seat is not None and who.seat.id == seat.id
        else ""
    )
    return seat, text, _tell_the_gm(shell, session, game, seat, leaving, text, quoted)


def _tell_the_gm(
    shell: Shell, session: Session, game: Game, seat: Seat, leaving: Player, text: str, quoted: str
) -> str:
    """The GM's one mail of a resignation (`text`: what was done), with the farewell `quoted`
    and whether the other players are told it: they are where the game's press is on. Returns
    the farewell as they are told it ("": not told)."""
    passed_on = bool(quoted) and game.press != PressMode.NONE
    letters.notice(
        shell,
        session,
        ToGm(game),
        say("resigned_gm_title", seat=seat.name, game=game.name),
        say(
            "resigned_gm", player=leaving.name, address=leaving.address, text=text, farewell=quoted, passed_on=passed_on
        ),
        kind="resigned_gm",
    )
    return quoted if passed_on else ""


__all__ = [
    "FAREWELL_LINES",
    "MAX_NAME",
    "ask_to_join",
    "newcomer_name",
    "confirm_join",
    "join",
    "join_now",
    "name_problem",
    "resign",
    "seat_name_for",
    "slug",
]
