"""Practice games by mail (issue 32): ``PRACTICE <game kind>`` from anyone.

A practice game is one person against the game's robot drivers (`bot.games.robots`):

* **Double opt-in, as JOIN.** From an address that proved nothing (a stranger), PRACTICE starts
  nothing: the From gets a code (`ask`), an answer to a stranger like any other (it counts
  against the per-address and hourly caps of `bot.intake.limits`), and the game starts only when
  the answer comes back from that address (`confirm`). So a forged From gets one short mail and
  no game, and PRACTICE cannot make the bot mail a forged address turn after turn. From a
  player's or GM's proven address it starts at once (`start_now`).
* **Capped per address**: at most `OPEN_PER_ADDRESS` practice games running and
  `STARTED_PER_DAY` started in a day for one address.
* **The field**: the person and `ROBOTS` robots (within the game's numbers of players).
* **Turns resolve as soon as the person orders**: no deadline (the schedule is ``manual``),
  early resolution on, the robots' orders on file as each turn opens.
* **Marked and counting for nothing**: named ``practice<N>`` (so every subject carries
  ``[practice<N>]``), `Game.practice` set (`flagman game list` marks it), no GM (the bot's own
  address, to which no GM mail or digest is sent), not in LIST.
* **Expiry**: a practice game whose person has sent no orders for `IDLE_DAYS` days, or who is
  out of the race (or resigned), is closed (finished, the person told once) by the tick
  (`expire_idle`).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from bot import letters, store
from bot.answers import Answer, Done, Ignored, Letter, Notice, Refused
from bot.clock import as_utc
from bot.games import requests, robots, turns
from bot.games.signups import seat_name_for
from bot.letters import ToAddress, ToSeat, notices
from bot.letters.words import say
from bot.mail_in import tokens
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
from bot.shell import Shell
from rules import UnknownGameError, find_game, game_names
from rules.api import AnyGame, RobotLevel

log = logging.getLogger("flagman.practice")

ROBOTS = 4  # robots in a practice field, within the game's numbers of players
ROBOT_NAMES = ("ada", "babbage", "hopper", "turing", "lovelace", "zuse", "noether", "shannon")
OPEN_PER_ADDRESS = 2  # practice games running at once for one address
STARTED_PER_DAY = 3  # practice games started in a day for one address
IDLE_DAYS = 7  # a practice game without an order from its person this long is closed


def kinds() -> str:
    return ", ".join(name.replace("_", "-") for name in game_names())


def kind_of(text: str) -> AnyGame | None:
    """The game a PRACTICE names (racecraft, speed-circuit or speed_circuit, speedphreakz)."""
    try:
        return find_game(text)
    except UnknownGameError:
        return None


def _refuse(address: str, title: str, text: str, detail: str) -> Refused:
    return Refused(
        "PRACTICE refused: " + detail,
        Notice(ToAddress(address), title, text, kind="practice"),
        label="PRACTICE refused",
    )


def check(session: Session, shell: Shell, address: str, kind: str) -> AnyGame:
    """The game `kind` names, if `address` may start a practice game of it now; else `Refused`."""
    rules = kind_of(kind)
    if rules is None:
        raise _refuse(address, "No such game", f"PRACTICE takes one of the games here: {kinds()}.", "unknown game")
    mine = (
        select(func.count())
        .select_from(Game)
        .join(Seat, Seat.game_id == Game.id)
        .join(Player, Player.id == Seat.player_id)
        .where(Game.practice.is_(True), Player.address == address)
    )
    running = session.scalar(mine.where(Game.status == GameStatus.ACTIVE)) or 0
    if running >= OPEN_PER_ADDRESS:
        raise _refuse(
            address,
            "Practice games: enough running",
            f"This address has {running} practice games running, the most it may have at once. Finish "
            f"one, or leave it alone {IDLE_DAYS} days and it is closed.",
            "too many running",
        )
    today = session.scalar(mine.where(Game.created_at >= shell.now() - timedelta(days=1))) or 0
    if today >= STARTED_PER_DAY:
        raise _refuse(
            address,
            "Practice games: enough for today",
            f"This address started {today} practice games in the last day, the most it may. Try again tomorrow.",
            "too many today",
        )
    return rules


def _free_name(session: Session) -> str:
    number = (session.scalar(select(func.count()).select_from(Game).where(Game.practice.is_(True))) or 0) + 1
    while store.find_game_row(session, f"practice{number}") is not None:
        number += 1
    return f"practice{number}"


def start(
    shell: Shell, session: Session, address: str, rules: AnyGame, level: RobotLevel = RobotLevel.NORMAL
) -> tuple[Game, Seat]:
    """A practice game of `rules` for `address` (checked by `check`), its robots at `level`,
    started: its first sheet is queued to the person's seat."""
    field = max(rules.min_players - 1, min(ROBOTS, rules.max_players - 1))
    robots = list(ROBOT_NAMES[:field])
    player = session.scalar(select(Player).where(Player.address == address))
    display = player.name if player is not None else address.partition("@")[0]
    seat_name = seat_name_for(display, address, set(robots))
    game = turns.create_game(
        shell,
        session,
        kind=rules.name,
        name=_free_name(session),
        players=[turns.PlayerSpec(seat_name, address, display)],
        gm_address=shell.settings.bot.address,
        deadline="manual",
        robot_seats=[f"{name}:{level.value}" for name in robots],
        practice=True,
    )
    seat = next(s for s in game.seats if not s.robot)
    log.info("practice game %s (%s) for %s against %d robots", game.name, rules.name, address, len(robots))
    return game, seat


def started_text(game: Game, rules: AnyGame) -> str:
    """The answer that starts a practice game: its name, the game, its robots (and whether
    they are easy ones), the idle rule."""
    robots = [s.name for s in game.seats if s.robot]
    easy = any(s.robot_level == RobotLevel.EASY.value for s in game.seats if s.robot)
    return say("practice_started", game=game.name, title=rules.title, robots=robots, easy=easy, idle_days=IDLE_DAYS)


def start_now(
    shell: Shell, session: Session, address: str, kind: str, level: RobotLevel = RobotLevel.NORMAL
) -> Letter | Notice:
    """PRACTICE from a proven address: the game at once (the first sheet is queued)."""
    rules = check(session, shell, address, kind)
    game, seat = start(shell, session, address, rules, level)
    return Notice(ToSeat(seat), f"Practice game {game.name}", started_text(game, rules), kind="practice", error=False)


def ask(shell: Shell, session: Session, sender: str, kind: str, level: RobotLevel = RobotLevel.NORMAL) -> Done:
    """A stranger's PRACTICE: no game yet, a code to the From (`confirm` starts it). The
    request keeps the game kind and, for easy robots, the level: ``racecraft:easy``."""
    sender = sender.strip().lower()
    if not sender:
        raise Ignored("PRACTICE without a sender address", reason=Reason.NO_SENDER)
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
        idle_days=IDLE_DAYS,
    )
    return Done("PRACTICE asked", Reason.FOR_ANYONE, (Letter(ToAddress(sender), rendered, "practice_confirm"),))


def confirm(shell: Shell, session: Session, request: PendingRequest) -> tuple[str, Answer]:
    """The code of a PRACTICE came back from its address: the game starts (if the caps still
    allow). Returns the label for the record and the answer."""
    requests.close(shell, request, RequestStatus.DONE)
    kind, _, asked = request.name.partition(":")
    level = RobotLevel.EASY if asked == RobotLevel.EASY.value else RobotLevel.NORMAL
    try:
        rules = check(session, shell, request.address, kind)
    except Refused as refused:
        assert refused.answer is not None
        return "PRACTICE refused", refused.answer
    game, seat = start(shell, session, request.address, rules, level)
    return (
        f"PRACTICE {game.name}",
        Notice(
            ToSeat(seat),
            f"Practice game {game.name}",
            started_text(game, rules),
            kind="practice",
            error=False,
            essential=True,
        ),
    )


def expire_idle(shell: Shell) -> int:
    """Close the practice games left alone: whose person sent no orders for `IDLE_DAYS` days
    (since the last such orders, or the game's start), or who is no longer in the race (out of
    it, or resigned: the robots would never be resolved early again). The person, if still
    seated, is told. Returns how many were closed."""
    cutoff = shell.now() - timedelta(days=IDLE_DAYS)
    with shell.db.read() as session:
        games = list(
            session.scalars(
                select(Game)
                .where(Game.practice.is_(True), Game.status == GameStatus.ACTIVE)
                .options(selectinload(Game.seats))
            )
        )
        open_turns = store.open_turns(session, games)
        out = set()
        for game in games:
            turn = open_turns.get(game.id)
            rules = turns.rules_of(game)
            if (
                turn is not None
                and rules.expected_players(state := rules.load_state(turn.state))
                and not robots.people_expected(game, state, rules)
            ):
                out.add(game.id)
        candidates = [g.id for g in games if g.id in out or as_utc(g.created_at) < cutoff]
    closed = 0
    for game_id in candidates:
        with shell.db.transaction() as session:
            row = session.get(Game, game_id)
            if row is None or row.status != GameStatus.ACTIVE:
                continue
            game = row
            if game_id in out:
                why = "you are out of the race, and the robots would only race on without you"
            else:
                last = session.scalar(
                    select(func.max(OrderSubmission.received_at))
                    .join(Turn)
                    .join(Seat)
                    .where(Turn.game_id == game.id, Seat.robot.is_(False), OrderSubmission.source == "mail")
                )
                if last is not None and as_utc(last) >= cutoff:
                    continue
                why = f"it had no orders from you for {IDLE_DAYS} days"
            game.status = GameStatus.FINISHED
            game.finished_at = shell.now()
            for seat in store.mailed_seats(game):
                letters.notice(
                    shell,
                    session,
                    ToSeat(seat),
                    f"Practice game {game.name} closed",
                    f"Your practice game {game.name} is closed: {why}. Send PRACTICE <game> for a new one any time.",
                    kind="practice",
                    error=False,
                )
            closed += 1
    return closed


__all__ = [
    "IDLE_DAYS",
    "OPEN_PER_ADDRESS",
    "ROBOTS",
    "STARTED_PER_DAY",
    "ask",
    "check",
    "confirm",
    "expire_idle",
    "kind_of",
    "start",
    "start_now",
]
