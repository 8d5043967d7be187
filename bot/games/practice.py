"""Practice games by mail: ``PRACTICE <game kind>`` from anyone.

A practice game is one person against the game's robot drivers (`bot.games.robots`):

* **Double opt-in, as JOIN.** From an address that proved nothing (a stranger), PRACTICE starts
  nothing: the From gets a code (`ask`), an answer to a stranger like any other (it counts
  against the per-address and hourly caps of `bot.intake.limits`), and the game starts only when
  the answer comes back from that address (`confirm`). So a forged From gets one short mail and
  no game, and PRACTICE cannot make the bot mail a forged address turn after turn. From a
  player's or GM's proven address it starts at once (`start_now`).
* **Capped per mailbox, per domain, on the whole bot**: at most `OPEN_PER_ADDRESS` practice
  games running and `STARTED_PER_DAY` started in a day for one mailbox (the address without its
  +tag, in any case: `bot.mailboxes`); for a stranger (`is_stranger`: no seat in a game that is
  not practice, no GM's role -- a practice player is one, whatever reply address proves them),
  at most `STARTED_PER_DOMAIN_PER_DAY` started in a day at the domain; at most `[practice]
  running_max` running on the whole bot.
* **The field**: the person and `ROBOTS` robots (within the game's numbers of players).
* **Turns resolve as soon as the person orders**: no deadline (the schedule is ``manual``),
  early resolution on, the robots' orders on file as each turn opens; a turn resolves no sooner
  than `[practice] turn_minutes` after it opened (`bot.games.turns.is_due`).
* **Welcome first**: the welcome is the top of the first sheet, one mail; every letter of it
  says there is no GM and no deadline, and when the race is closed.
* **Marked and counting for nothing**: named ``practice<N>`` (so every subject carries
  ``[practice<N>]``), `Game.practice` set (`flagman game list` marks it), no GM (the bot's own
  address, to which no GM mail or digest is sent), not in LIST.
* **Expiry**: a practice game whose person has sent no orders for `[practice] idle_days` days, or who is
  out of the race (or resigned), is closed (finished, the person told once) by the tick
  (`expire_idle`).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import Text, cast, func, or_, select
from sqlalchemy.orm import Session, selectinload

from bot import letters, store
from bot.clock import as_utc
from bot.db import Database
from bot.fate import Answer, Done, Ignored, Letter, Notice, Refused
from bot.games import requests, robots, turns
from bot.games.signups import seat_name_for
from bot.letters import ToAddress, ToSeat, notices
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.mail_in import tokens
from bot.mailboxes import domain, mailbox, may_reach, of_mailbox
from bot.models import (
    Game,
    GameStatus,
    OrderSubmission,
    PendingRequest,
    Player,
    Reason,
    RequestStatus,
    Seat,
    Turn,
)
from bot.safe_text import echo_name, name_from_address
from bot.shell import Shell
from rules import UnknownGameError, find_game, game_names
from rules.api import AnyGame, RobotLevel

log = logging.getLogger("flagman.practice")
# Per database: open practice turn id -> (its marks when its state was last read, whether its
# person was out of the race then) (`expire_idle`).
_Marks = tuple[str, int | None, tuple[tuple[int, bool, bool], ...]]
_checked: weakref.WeakKeyDictionary[Database, dict[int, tuple[_Marks, bool]]] = weakref.WeakKeyDictionary()

ROBOTS = 4  # robots in a practice field, within the game's numbers of players
ROBOT_NAMES = ("ada", "babbage", "hopper", "turing", "lovelace", "zuse", "noether", "shannon")
OPEN_PER_ADDRESS = 2  # practice games running at once for one mailbox (bot.mailboxes)
STARTED_PER_DAY = 3  # practice games started in a day for one mailbox
STARTED_PER_DOMAIN_PER_DAY = 10  # practice games started in a day at one domain, when a stranger asks


def kinds() -> str:
    return ", ".join(name.replace("_", "-") for name in game_names())


def kind_of(text: str) -> AnyGame | None:
    """The game a PRACTICE names (racecraft, speed-circuit or speed_circuit, speedphreakz)."""
    try:
        return find_game(text)
    except UnknownGameError:
        return None


def _refuse(address: str, why: str, what: str, **facts: object) -> Refused:
    """A PRACTICE refused: the answer `why` (a template) and the record's `what` (a token)."""
    return Refused(
        say("mail_record", why="practice_refused", what=what),
        Notice(ToAddress(address), say(f"{why}_title", **facts), say(why, **facts), kind="practice"),
        label=command_label("PRACTICE", came=Came.REFUSED),
    )


def is_stranger(session: Session, address: str) -> bool:
    """Whether the mailbox of `address` holds no seat in a game that is not practice, and is no
    GM's: a person known only by their practice games is a stranger to the caps."""
    box = mailbox(address)
    seated = select(Player.address).join(Seat, Seat.player_id == Player.id).join(Game, Game.id == Seat.game_id)
    seated = seated.where(Game.practice.is_(False), may_reach(Player.address, box))
    if of_mailbox(session.scalars(seated), box):
        return False
    return not of_mailbox(session.scalars(select(Game.gm_address).where(may_reach(Game.gm_address, box))), box)


def check(session: Session, shell: Shell, address: str, kind: str) -> AnyGame:
    """The game `kind` names, if `address` may start a practice game of it now; else `Refused`.
    Counted per mailbox (the address without its +tag, in any case), per domain for strangers
    (`is_stranger`: a practice player too), and on the whole bot (`[practice] running_max`)."""
    rules = kind_of(kind)
    if rules is None:
        raise _refuse(address, "practice_no_such_game", "unknown_game", kinds=kinds())
    terms = shell.settings.practice
    running_all = (
        session.scalar(
            select(func.count()).select_from(Game).where(Game.practice.is_(True), Game.status == GameStatus.ACTIVE)
        )
        or 0
    )
    if running_all >= terms.running_max:
        raise _refuse(address, "practice_full", "full", idle_days=terms.idle_days)
    box = mailbox(address) or address
    since = shell.now() - timedelta(days=1)
    people = (
        select(Player.address, Game.status, Game.created_at)
        .select_from(Game)
        .join(Seat, Seat.game_id == Game.id)
        .join(Player, Player.id == Seat.player_id)
        .where(Game.practice.is_(True), Seat.robot.is_(False))
    )
    recent = or_(Game.status == GameStatus.ACTIVE, Game.created_at >= since)  # what the caps count
    mine = [
        row for row in session.execute(people.where(recent, may_reach(Player.address, box))) if mailbox(row[0]) == box
    ]
    running = sum(1 for _, status, _ in mine if status == GameStatus.ACTIVE)
    if running >= OPEN_PER_ADDRESS:
        raise _refuse(address, "practice_enough_running", "running", running=running, idle_days=terms.idle_days)
    today = sum(1 for _, _, created in mine if as_utc(created) >= since)
    if today >= STARTED_PER_DAY:
        raise _refuse(address, "practice_enough_today", "today", today=today)
    host = domain(address)
    if host and is_stranger(session, address):
        at_domain = session.scalar(
            select(func.count())
            .select_from(Game)
            .join(Seat, Seat.game_id == Game.id)
            .join(Player, Player.id == Seat.player_id)
            .where(
                Game.practice.is_(True),
                Seat.robot.is_(False),
                Game.created_at >= since,
                Player.address.endswith("@" + host, autoescape=True),
            )
        )
        if (at_domain or 0) >= STARTED_PER_DOMAIN_PER_DAY:
            raise _refuse(address, "practice_enough_at_domain", "at_domain")
    return rules


def _free_name(session: Session) -> str:
    number = (session.scalar(select(func.count()).select_from(Game).where(Game.practice.is_(True))) or 0) + 1
    while store.find_game_row(session, f"practice{number}") is not None:
        number += 1
    return f"practice{number}"


def start(
    shell: Shell,
    session: Session,
    address: str,
    rules: AnyGame,
    level: RobotLevel = RobotLevel.NORMAL,
    *,
    sender_name: str = "",
) -> tuple[Game, Seat]:
    """A practice game of `rules` for `address` (checked by `check`), its robots driving at
    `level` (`PRACTICE <game> EASY`), started: its first sheet
    is queued to the person's seat, the welcome at its top (the welcome comes before the sheet,
    in the same mail). The person is named as before if the address has played, else by
    `sender_name` (what the mail's From calls them, its case kept), else by the address's
    local part."""
    field = max(rules.min_players - 1, min(ROBOTS, rules.max_players - 1))
    robots = list(ROBOT_NAMES[:field])
    player = session.scalar(select(Player).where(Player.address == address))
    display = (
        player.name if player is not None else echo_name(sender_name) or name_from_address(address.partition("@")[0])
    )
    seat_name = seat_name_for(display, address, set(robots))
    name = _free_name(session)
    terms = shell.settings.practice
    welcome = say(
        "practice_started",
        game=name,
        title=rules.title,
        robots=robots,
        easy=level is RobotLevel.EASY,
        idle_days=terms.idle_days,
        turn_minutes=terms.turn_minutes,
    )
    game = turns.create_game(
        shell,
        session,
        kind=rules.name,
        name=name,
        players=[turns.PlayerSpec(seat_name, address, display)],
        gm_address=shell.settings.bot.address,
        deadline="manual",
        robot_seats=[f"{robot}:{level.value}" for robot in robots],
        practice=True,
        note=welcome,
    )
    seat = next(s for s in game.seats if not s.robot)
    log.info("practice game %s (%s) for %s against %d robots", game.name, rules.name, address, len(robots))
    return game, seat


def start_now(
    shell: Shell,
    session: Session,
    address: str,
    kind: str,
    level: RobotLevel = RobotLevel.NORMAL,
    *,
    sender_name: str = "",
) -> str:
    """PRACTICE from a proven address: the game at once; its first sheet, the welcome at its
    top, is the answer (nothing else is mailed). Returns the game's name."""
    rules = check(session, shell, address, kind)
    game, _ = start(shell, session, address, rules, level, sender_name=sender_name)
    return game.name


def ask(
    shell: Shell,
    session: Session,
    sender: str,
    kind: str,
    level: RobotLevel = RobotLevel.NORMAL,
    *,
    not_done: Sequence[str] = (),
) -> Done:
    """A stranger's PRACTICE: no game yet, a code to the From (`confirm` starts it). The
    request keeps the game kind and, for easy robots, the level: ``racecraft:easy``. The
    mail's other commands (`not_done`, their verbs) are not done: the code mail says so."""
    sender = sender.strip().lower()
    if not sender:
        raise Ignored(say("mail_record", why="no_sender", verb="PRACTICE"), reason=Reason.NO_SENDER)
    rules = check(session, shell, sender, kind)
    asked = rules.name if level is RobotLevel.NORMAL else f"{rules.name}:{level.value}"
    request = requests.open_practice(shell, session, sender, asked)
    code = requests.code(shell, request)
    rendered = notices.practice_confirm(
        shell,
        rules.title,
        code=code,
        subject_tag=tokens.subject_tag(code),
        valid_days=tokens.VALID_DAYS,
        idle_days=shell.settings.practice.idle_days,
        not_done=not_done,
    )
    return Done(
        say("mail_record", why="practice_asked"),
        Reason.FOR_ANYONE,
        (Letter(ToAddress(sender), rendered, "practice_confirm"),),
    )


def confirm(
    shell: Shell, session: Session, request: PendingRequest, *, sender_name: str = ""
) -> tuple[str, Answer | None]:
    """The code of a PRACTICE came back from its address (`sender_name`: what that mail's From
    calls its sender): the game starts (if the caps still allow), its first sheet with the
    welcome at its top the only mail (None: no other answer). Returns the label for the record
    and the answer."""
    requests.close(shell, request, RequestStatus.DONE)
    kind, _, asked = request.name.partition(":")
    level = RobotLevel.EASY if asked == RobotLevel.EASY.value else RobotLevel.NORMAL
    try:
        rules = check(session, shell, request.address, kind)
    except Refused as refused:
        assert refused.answer is not None
        return command_label("PRACTICE", came=Came.REFUSED), refused.answer
    game, _ = start(shell, session, request.address, rules, level, sender_name=sender_name)
    return command_label("PRACTICE", game.name), None


def expire_idle(shell: Shell) -> int:
    """Close the practice games left alone: whose person sent no orders for `[practice] idle_days` days
    (since the last such orders, or the game's start), or who is no longer in the race (out of
    it, or resigned: the robots would never be resolved early again). The person, if still
    seated, is told. Returns how many were closed."""
    idle_days = shell.settings.practice.idle_days
    cutoff = shell.now() - timedelta(days=idle_days)
    candidates, out = _idle_or_out(shell, cutoff)
    closed = 0
    for game_id in candidates:
        if _close(shell, game_id, out=game_id in out, cutoff=cutoff, idle_days=idle_days):
            closed += 1
    return closed


def _idle_or_out(shell: Shell, cutoff: datetime) -> tuple[list[int], set[int]]:
    """The live practice games that may be closed (started before `cutoff`, or whose person is
    out of the race), and those whose person is out of the race."""
    with shell.db.read() as session:
        # The games' columns, their open turns' and seats' marks only; a turn's state is read
        # again only when one of those marks changed since the last run (`_checked`: whether
        # the person is out of the race changes when a turn resolves -- a new turn -- or when a
        # drop, a RESIGN or a REPLACE changes the turn's state or a seat), so the tick's cost
        # per live practice game stays flat (bench.practice).
        heads = session.execute(
            select(Game.id, Game.created_at, Turn.id, Turn.label, func.length(cast(Turn.state, Text)))
            .join(Turn, Turn.game_id == Game.id)
            .where(Game.practice.is_(True), Game.status == GameStatus.ACTIVE, Turn.resolved_at.is_(None))
        ).all()
        seats: dict[int, list[tuple[int, bool, bool]]] = {}
        for game_id, seat_id, active, robot in session.execute(
            select(Seat.game_id, Seat.id, Seat.active, Seat.robot)
            .join(Game, Game.id == Seat.game_id)
            .where(Game.practice.is_(True), Game.status == GameStatus.ACTIVE)
            .order_by(Seat.id)
        ):
            seats.setdefault(game_id, []).append((seat_id, bool(active), bool(robot)))
        marks = {turn_id: (label, size, tuple(seats.get(game_id, ()))) for game_id, _, turn_id, label, size in heads}
        checked = _checked.setdefault(shell.db, {})
        fresh = sorted(
            turn_id for turn_id, mark in marks.items() if turn_id not in checked or checked[turn_id][0] != mark
        )
        if fresh:
            games = {
                g.id: g
                for g in session.scalars(
                    select(Game)
                    .where(Game.id.in_({game_id for game_id, _, turn_id, _, _ in heads if turn_id in set(fresh)}))
                    .options(selectinload(Game.seats))
                )
            }
            for turn in session.scalars(select(Turn).where(Turn.id.in_(fresh))):
                game = games[turn.game_id]
                rules = turns.rules_of(game)
                state = rules.load_state(turn.state)
                gone = bool(rules.expected_players(state)) and not robots.people_expected(game, state, rules)
                checked[turn.id] = (marks[turn.id], gone)
        for closed in set(checked) - set(marks):
            del checked[closed]
        out = {game_id for game_id, _, turn_id, _, _ in heads if checked[turn_id][1]}
        candidates = sorted({game_id for game_id, created, *_ in heads if game_id in out or as_utc(created) < cutoff})
    return candidates, out


def _close(shell: Shell, game_id: int, *, out: bool, cutoff: datetime, idle_days: int) -> bool:
    """Close the practice game `game_id` if it is still live and its person is `out` of the
    race or sent no orders by mail since `cutoff`, telling the person if still seated;
    whether it was closed."""
    with shell.db.transaction() as session:
        row = session.get(Game, game_id)
        if row is None or row.status != GameStatus.ACTIVE:
            return False
        game = row
        if out:
            why = say("practice_closed_out")
        else:
            last = session.scalar(
                select(func.max(OrderSubmission.received_at))
                .join(Turn)
                .join(Seat)
                .where(Turn.game_id == game.id, Seat.robot.is_(False), OrderSubmission.source == "mail")
            )
            if last is not None and as_utc(last) >= cutoff:
                return False
            why = say("practice_closed_idle", idle_days=idle_days)
        game.status = GameStatus.FINISHED
        game.finished_at = shell.now()
        game.finishes = (game.finishes or 0) + 1
        for seat in store.mailed_seats(game):
            letters.notice(
                shell,
                session,
                ToSeat(seat),
                say("practice_closed_title", game=game.name),
                say("practice_closed", game=game.name, why=why, kind=game.kind),
                kind="practice",
                error=False,
            )
        return True


__all__ = [
    "OPEN_PER_ADDRESS",
    "ROBOTS",
    "STARTED_PER_DAY",
    "STARTED_PER_DOMAIN_PER_DAY",
    "ask",
    "check",
    "is_stranger",
    "confirm",
    "expire_idle",
    "kind_of",
    "start",
    "start_now",
]
