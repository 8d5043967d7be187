"""A game's life in the database: created, started, turns opened, due, worked out and written.

`create_game`, `add_seat`, `start_game` and `queue_seat_mail` run inside the caller's
transaction and queue the mails their change causes in it. A due turn is decided by `is_due`
(`due_turns` for every game at once); `compute` resolves it with its outlook (`bot.outlook`),
`work_out` works out everything resolving it writes (the turn's columns, the NMR defaults and
streaks, the next turn, its robots' orders) and what its letters say (`bot.letters.turn`
renders them) without writing any of it, and `write_turn` writes that but the letters. Which turns are resolved when, and the
transaction that writes one with its letters, are the deadline's (`bot.games.deadline`). The
letters themselves (turn sheets and results, their contexts) are `bot.letters.sheets`'; the
queries it reads with (games, seats, turns, submissions) are `bot.store`.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import secrets as pysecrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Select, Table, bindparam, insert, inspect, select, update
from sqlalchemy.orm import Session, selectinload

from bot import dice, outlook, store
from bot.clock import as_utc
from bot.facts import Kept, Recheck, Withdrawn
from bot.games import carried as carried_orders
from bot.games import observers, ratings, robots, seasons
from bot.games.audit import done_by_the_bot
from bot.letters import sheets
from bot.letters.cache import LetterCache
from bot.letters.context import seat_labels
from bot.letters.turn import TurnLetters
from bot.letters.words import say
from bot.mail_in.addresses import address_problem
from bot.mail_in.auth import GM_SEAT, NAME_RE, new_secret
from bot.models import (
    Commitment,
    CommitmentFate,
    Game,
    GameStatus,
    OrderSubmission,
    Player,
    PressMode,
    Seat,
    Turn,
)
from bot.outlook import Outcome
from bot.ratings import Change
from bot.schedules import (
    closest_zones,
    find_zone,
    format_local,
    next_deadline,
    parse_duration,
    parse_schedule,
    shown,
)
from bot.settings import PracticeSettings
from bot.shell import Shell
from rules import fair, find_game
from rules.api import AnyGame, GameState, RobotLevel, turn_seed

log = logging.getLogger("flagman.games")

# The audit log's row of the orders kept across a ROLLBACK that the turn's resolution withdrew:
# the bot did it, at the deadline (or the GM's PROCESS), not a GM command.
AUDIT_COMMAND = "WITHDRAWN after ROLLBACK"


class GameError(ValueError):
    """A request about a game that cannot be done; the message says why."""


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    seat: str
    address: str
    name: str
    timezone: str | None = None


# -- lookups -------------------------------------------------------------------------------


def rules_of(game: Game) -> AnyGame:
    return find_game(game.kind)


def current_state(session: Session, game: Game) -> tuple[AnyGame, GameState, Turn | None]:
    """The rules, the state now, and the open turn (None when finished or not started)."""
    return state_with(session, game, store.open_turn(session, game))


def state_with(session: Session, game: Game, turn: Turn | None) -> tuple[AnyGame, GameState, Turn | None]:
    """`current_state` when the open turn (`turn`, None: there is none) was read already."""
    rules = rules_of(game)
    if turn is not None:
        return rules, rules.load_state(turn.state), turn
    last = store.last_resolved_turn(session, game)
    if last is None or last.state_after is None:
        raise GameError(say("game_refused", why="not_started", game=game.name))
    return rules, rules.load_state(last.state_after), None


# -- creating and starting -----------------------------------------------------------------


def _player(session: Session, address: str, name: str, timezone: str | None, now: datetime, default_tz: str) -> Player:
    address = address.strip().lower()
    problem = address_problem(address)
    if problem is not None:  # every door checks first (bot.mail_in.addresses); this is the last
        raise GameError(say("game_refused", why="bad_seat_address", problem=problem))
    player = session.scalar(select(Player).where(Player.address == address))
    if player is None:
        player = Player(address=address, name=name, timezone=timezone or default_tz, created_at=now)
        session.add(player)
        session.flush()
    elif timezone:
        player.timezone = timezone
    return player


def validate_name(kind: str, name: str) -> str:
    name = name.strip().lower()
    if not NAME_RE.match(name) or name == GM_SEAT:
        raise GameError(say("game_refused", why="bad_name", kind=kind, quoted=repr(name), gm=name == GM_SEAT))
    return name


def _robot_specs(robot_seats: Sequence[str]) -> list[tuple[str, RobotLevel]]:
    """The robot seats of a new game, each ``NAME`` or ``NAME:LEVEL``, as (name, level)."""
    specs = []
    for text in robot_seats:
        try:
            robot_name, level = robots.parse_robot(text)
        except ValueError as error:
            raise GameError(str(error)) from None
        specs.append((validate_name("robot", robot_name), level))
    return specs


def _zones_found(timezone: str | None, players: Sequence[PlayerSpec]) -> tuple[str | None, list[PlayerSpec]]:
    """The game's zone and the players' as the zone database names them (refused in one line
    for a zone it does not know, not a traceback at the first deadline shown)."""
    for zone in [timezone, *(p.timezone for p in players)]:
        if zone and find_zone(zone) is None:
            raise GameError(say("game_refused", why="unknown_zone", quoted=shown(zone), close=closest_zones(zone)[:1]))
    return (
        find_zone(timezone) if timezone else None,
        [dataclasses.replace(p, timezone=find_zone(p.timezone)) if p.timezone else p for p in players],
    )


def _player_count(rules: AnyGame, count: int, *, game: str | None = None, robots: bool = False) -> GameError:
    """The refusal of `count` players (robots among them or not) where the game takes
    `rules.min_players` to `rules.max_players`: for a new game, or for `game` at its start."""
    return GameError(
        say(
            "game_refused",
            why="players",
            title=rules.title,
            least=rules.min_players,
            most=rules.max_players,
            count=count,
            game=game,
            robots=robots,
        )
    )


def _check_addresses(gm_address: str, players: Sequence[PlayerSpec]) -> None:
    """Refused when the GM's address or a player's is one no relay takes."""
    for seat, address in [(None, gm_address), *((p.seat, p.address) for p in players)]:  # None: the GM's
        problem = address_problem(address.strip().lower())
        if problem is not None:
            raise GameError(say("game_refused", why="bad_address_of", seat=seat, problem=problem))


def create_game(
    shell: Shell,
    session: Session,
    *,
    kind: str,
    name: str,
    players: Sequence[PlayerSpec],
    gm_address: str,
    options: Mapping[str, str] | None = None,
    deadline: str = "48h",
    timezone: str | None = None,
    signup: bool = False,
    seed: int | None = None,
    grace: str = "",
    early_resolution: bool | None = None,
    press: PressMode = PressMode.SIGNED,
    robot_seats: Sequence[str] = (),
    practice: bool = False,
    note: str | None = None,
) -> Game:
    """A new game (started now, unless `signup`). `early_resolution`: whether a turn resolves
    as soon as every order is in (None: the default of the kind of game); `press`: what PRESS
    may do in it; `robot_seats`: the seats the game's robot drives (bot.games.robots), after
    the players', each ``NAME`` or ``NAME:LEVEL`` (`robots.parse_robot`); `practice`: a practice game (PRACTICE by mail); `note`: a paragraph at
    the top of each player's first sheet."""
    now = shell.now()
    rules = find_game(kind)
    if early_resolution and not rules.early_resolution:
        raise GameError(say("game_refused", why="no_early_resolution", title=rules.title))
    name = validate_name("game", name)
    if store.find_game_row(session, name) is not None:
        raise GameError(say("game_refused", why="exists", game=name))
    parse_schedule(deadline)
    grace_minutes = int(parse_duration(grace).total_seconds() // 60) if grace else 0
    options = {str(k): str(v) for k, v in (options or {}).items()}
    seat_names = [validate_name("seat", p.seat) for p in players]
    robot_specs = _robot_specs(robot_seats)
    robot_names = [robot_name for robot_name, _ in robot_specs]
    timezone, players = _zones_found(timezone, players)
    _check_addresses(gm_address, players)
    if len(set(seat_names + robot_names)) != len(seat_names) + len(robot_names):
        raise GameError(say("game_refused", why="same_seat_name", robots=bool(robot_names)))
    if not signup:
        count = len(players) + len(robot_names)
        if not rules.min_players <= count <= rules.max_players:
            raise _player_count(rules, count, robots=bool(robot_names))
        # Options are checked by the rules now, so a bad option fails here, not at START.
        rules.new_game(seat_names + robot_names, options, random.Random(0))
    game = Game(
        name=name,
        kind=rules.name,
        status=GameStatus.SIGNUP if signup else GameStatus.ACTIVE,
        options=options,
        gm_address=gm_address.strip().lower(),
        gm_secret=new_secret(),
        seed=seed if seed is not None else pysecrets.randbits(62),
        timezone=timezone or shell.settings.bot.timezone,
        deadline_spec=deadline,
        grace_minutes=grace_minutes,
        early_resolution=rules.early_resolution if early_resolution is None else early_resolution,
        press=PressMode(press),
        created_at=now,
        practice=practice,
    )
    session.add(game)
    session.flush()
    for spec, seat_name in zip(players, seat_names, strict=True):
        add_seat(shell, session, game, seat_name, spec.address, spec.name, spec.timezone)
    for robot_name, level in robot_specs:
        robots.add_robot(session, game, robot_name, now, level)
    if not signup:
        start_game(shell, session, game, note=note)
    return game


def add_seat(
    shell: Shell, session: Session, game: Game, seat_name: str, address: str, name: str, timezone: str | None = None
) -> Seat:
    now = shell.now()
    # A new player without a zone of their own gets the game's (the same deadline must
    # not read "18:00 UTC" for a player and "18:00 GMT" for the GM), not the site's.
    player = _player(session, address, name or seat_name, timezone, now, game.timezone)
    seat = Seat(
        game_id=game.id,
        name=seat_name,
        player_id=player.id,
        secret=new_secret(),
        active=True,
        nmr_streak=0,
        gm_plot=None,
        joined_at=now,
    )
    session.add(seat)
    session.flush()
    session.refresh(game)
    return seat


def start_game(shell: Shell, session: Session, game: Game, *, note: str | None = None) -> Turn:
    rules = rules_of(game)
    seats = store.active_seats(game)
    if not rules.min_players <= len(seats) <= rules.max_players:
        raise _player_count(rules, len(seats), game=game.name)
    state = rules.new_game([s.name for s in seats], game.options, random.Random(turn_seed(game.seed, 0)))
    game.status = GameStatus.ACTIVE
    turn = _open(shell, session, game, rules, 1, state)
    robots.file_orders(session, rules, game, turn, state, seats, shell.now())  # on file as the turn opens
    cache = LetterCache()  # the sheets of the start share their picture and public report
    for seat in store.mailed_seats(game):
        sheets.post_seat_letter(
            shell, session, game, rules, state, turn, seat, "turn_sheet", None, note=note, cache=cache
        )
    sheets.post_gm_letter(shell, session, game, rules, state, turn, "turn_sheet_gm", None, cache=cache)
    log.info("game %s started: %s, %d players", game.name, rules.title, len(seats))
    return turn


def _new_turn(
    shell: Shell, game: Game, rules: AnyGame, number: int, state: GameState, previous: str | None = None
) -> dict[str, object]:
    """The row of turn `number` of `game`, opened now on `state`; `previous`: the secret of an
    earlier opening of the same turn that a ROLLBACK withdrew (public: never drawn again)."""
    now = shell.now()
    if rules.expected_players(state):
        deadline = next_deadline(parse_schedule(game.deadline_spec), now, game.timezone)
    else:
        deadline = now  # nothing to wait for (e.g. Racecraft's final sprint)
    return {
        "game_id": game.id,
        "number": number,
        "label": rules.turn_label(state),
        "state": rules.dump_state(state),
        "seed": turn_seed(game.seed, number),
        "secret": shell.entropy.secret(game.name, number, previous),
        "dice_scheme": fair.SCHEME,
        "corrections": 0,
        "opened_at": now,
        "deadline": deadline,
        "resolved_at": None,
        "state_after": None,
        "events": None,
        "reminded": "",
    }


def _open(shell: Shell, session: Session, game: Game, rules: AnyGame, number: int, state: GameState) -> Turn:
    turn = Turn(**_new_turn(shell, game, rules, number, state))
    session.add(turn)
    session.flush()
    dice.commit(session, game, turn, turn.opened_at, "opened")  # in the log as the turn opens
    return turn


# -- resolving -----------------------------------------------------------------------------


def closing_time(game: Game, turn: Turn) -> datetime | None:
    """When orders stop being accepted: the deadline plus the game's grace period (the outlook's
    `Timing.closes`, the one every letter says)."""
    return outlook.timing(game, turn).closes


def practice_pace(settings: PracticeSettings) -> timedelta:
    """How long a practice game's turn stays open at the least (`[practice] turn_minutes`)."""
    return timedelta(minutes=settings.turn_minutes)


def resolves_from(game: Game, turn: Turn, pace: timedelta) -> datetime | None:
    """The soonest a turn of `game` may resolve early: a practice turn `pace` after it opened
    (its results an hour are bounded however fast its person orders); None: any time."""
    return as_utc(turn.opened_at) + pace if game.practice else None


def soonest_text(shell: Shell, game: Game, turn: Turn, zone: str) -> str | None:
    """When `turn` may resolve at the soonest (`resolves_from`, the rule `is_due` applies), in
    `zone`, if that is still to come; else None."""
    soonest = resolves_from(game, turn, practice_pace(shell.settings.practice))
    return format_local(soonest, zone) if soonest is not None and soonest > shell.now() else None


def is_due(
    session: Session,
    game: Game,
    turn: Turn,
    now: datetime,
    *,
    pace: timedelta,
    subs: store.BySeat | None = None,
    state: GameState | None = None,
) -> bool:
    """Whether `turn` resolves now: past its closing time, or every person's orders in where the
    game resolves early (a practice turn not before `resolves_from`, `pace` its `practice_pace`).
    `state`: the turn's state already decoded (else decoded here)."""
    if game.status != GameStatus.ACTIVE:
        return False
    rules = rules_of(game)
    if state is None:
        state = rules.load_state(turn.state)
    if not rules.expected_players(state):
        return True
    closing = closing_time(game, turn)
    if closing is not None and now >= closing:
        return True
    soonest = resolves_from(game, turn, pace)
    if soonest is not None and now < soonest:
        return False
    # Early resolution waits for the people: a turn only robots order in waits for its deadline
    # (or the GM), not one tick after another (bot.games.robots).
    if not outlook.timing(game, turn).early or not robots.people_expected(game, state, rules):
        return False
    # The turn's outlook, as every letter that says what happens next reads it: no seat's WAIT
    # holding it, and every set complete.
    seen = outlook.of_turn(game, rules, state, store.turn_submissions(session, turn) if subs is None else subs)
    return seen.resolves_early(outlook.timing(game, turn)) and seen.all_in


def compute(
    session: Session,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn,
    subs: store.BySeat | None = None,
    *,
    throwaway: str | None = None,
) -> Outcome:
    """Resolve the turn's state with its outlook (`bot.outlook`: each seat's orders and where
    they come from), writing nothing: used by the deadline and PREVIEW. `throwaway`: a secret to
    roll the dice with in place of the turn's own (PREVIEW: no real roll is ever shown)."""
    seen = outlook.of_turn(game, rules, state, store.turn_submissions(session, turn) if subs is None else subs)
    orders = seen.orders
    secret = throwaway if throwaway is not None else turn.secret
    if secret is None:  # a turn opened before the dice were committed to: its own seed
        texts, seed = {}, turn.seed
    else:
        turn_key = dice.key(game.name, turn)
        texts = dice.used(rules, state, orders, turn_key.scheme)
        seed = turn_key.seed(secret, fair.orders_digest(texts))
    submitted = seen.submitted
    resolution = rules.resolve(state, orders, random.Random(seed), submitted=submitted)
    return Outcome(resolution, orders, seen.defaulted, submitted, seed, seen.filled, texts, secret)


@dataclass(frozen=True, slots=True)
class TurnWrites:
    """Everything resolving a turn writes, worked out before any of it is written
    (`work_out`), so that it can be written in one short transaction (`write_turn`, the letters
    rendered from `letters` and queued beside it: `bot.games.deadline`): the resolved turn's
    columns, the NMR defaults filed, the seats' NMR streaks, the game's end, the next turn and
    what every results letter says."""

    outcome: Outcome
    resolved: Mapping[str, object]  # the resolved turn's new columns
    finished_at: datetime | None  # the game ends with this turn
    streaks: Mapping[int, int]  # seat id -> its NMR streak after the turn, where it changes
    defaults: tuple[Mapping[str, object], ...]  # the order submissions the NMR defaults are filed as
    next_turn: Mapping[str, object] | None  # the turn opened after it
    letters: TurnLetters | None  # what its letters say (`bot.letters.turn.render`); None once rendered
    robots: tuple[Mapping[str, object], ...] = ()  # the robot seats' orders of the next turn (no turn id yet)
    opening: dice.Entry | None = None  # the next turn's entry in the game's commitment log
    # The orders a ROLLBACK kept for the next turn (`bot.games.carried`), checked against the
    # new state: the rows of those that stand (no turn id yet), and what became of each.
    carried: tuple[Mapping[str, object], ...] = ()
    recheck: Recheck = Recheck()
    rating_writes: ratings.RatingWrites | None = None  # a rated final: its kind's ratings stored with it


def _set_columns(
    game: Game, turn: Turn, *, resolved: Mapping[str, object], finished_at: datetime | None, streaks: Mapping[int, int]
) -> None:
    for column, value in resolved.items():
        setattr(turn, column, value)
    if finished_at is not None:
        game.status = GameStatus.FINISHED
        game.finished_at = finished_at
    for seat in game.seats:
        if seat.id in streaks:
            seat.nmr_streak = streaks[seat.id]


def _defaults_and_streaks(
    game: Game, rules: AnyGame, turn: Turn, outcome: Outcome, now: datetime
) -> tuple[list[Mapping[str, object]], dict[int, int]]:
    """The submission row of each seat's default (where it came from, its orders as the game
    writes them), and each seat's NMR streak after the turn where it changes: one more for a
    default (none on VACATION), none for orders sent."""
    defaults: list[Mapping[str, object]] = []
    streaks: dict[int, int] = {}
    for name in outcome.defaulted:
        seat = store.seat_named(game, name)
        if seat is None:
            continue
        source = outcome.filled[name]
        defaults.append(
            {
                "turn_id": turn.id,
                "seat_id": seat.id,
                "inbound_id": None,
                "source": source,
                "text": rules.format_orders(outcome.orders[name]),
                "received_at": now,
            }
        )
        # VACATION: the default as always, but the turn does not count towards the NMR limit.
        streaks[seat.id] = seat.nmr_streak + (0 if outlook.on_vacation(seat.player, turn.deadline or now) else 1)
    for name in outcome.orders:
        seat = store.seat_named(game, name)
        if seat is not None and name not in outcome.defaulted:
            streaks[seat.id] = 0
    # A streak that stays as it is is not written (the write checks first that no seat changed
    # since this was worked out: `store.resolution_inputs`).
    unchanged = {seat.id for seat in game.seats if streaks.get(seat.id) == seat.nmr_streak}
    return defaults, {seat_id: streak for seat_id, streak in streaks.items() if seat_id not in unchanged}


def _recheck_carried(
    rules: AnyGame,
    game: Game,
    turn: Turn,
    next_turn: Turn | None,
    new_state: GameState,
    kept: Sequence[Kept],
) -> Recheck:
    """The orders a ROLLBACK kept for this turn, checked against the state it leaves: those that
    stand carry into the next turn; none stands when the game is over."""
    label = next_turn.label if next_turn is not None else turn.label
    recheck = carried_orders.recheck(rules, game, new_state, label, kept) if kept else Recheck()
    if next_turn is None and kept:  # the game is over: nothing kept can stand
        recheck = Recheck((), tuple(Withdrawn(k, label, "", needed=False) for k in kept))
    return recheck


def _next_turn(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    turn: Turn,
    new_state: GameState,
    cache: LetterCache,
    now: datetime,
) -> tuple[dict[str, object], Turn, dice.Entry | None]:
    """The row of the turn opened after `turn`, that turn as the mails show it (not added to
    `session`), and its entry in the game's commitment log: made now, and added to the log as
    the letters quote it (`cache`)."""
    log = cache.log_of(session, game.id)
    withdrawn = [c.secret for c in log if c.number == turn.number + 1 and c.secret is not None]
    next_row = _new_turn(shell, game, rules, turn.number + 1, new_state, withdrawn[-1] if withdrawn else None)
    next_turn = Turn(**next_row)
    opening = None
    if next_turn.secret is not None:
        opening = dice.next_entry(
            game, dice.end_of(log), next_turn.number, next_turn.label, next_turn.secret, now, "opened"
        )
        cache.log[game.id] = [*log, Commitment(**opening.row())]
    return next_row, next_turn, opening


def _filed_for_next(
    rules: AnyGame, game: Game, next_turn: Turn | None, new_state: GameState, recheck: Recheck, now: datetime
) -> tuple[list[dict[str, object]], list[dict[str, object]], store.BySeat]:
    """The orders on file as the next turn opens (none when the game is over): its robots'
    (bot.games.robots) and those a ROLLBACK kept for it that stand against the new state
    (bot.games.carried), as rows (no turn id yet) and by seat, as the letters read them."""
    if next_turn is None:
        return [], [], {}
    robot_rows = robots.orders_for(rules, game, next_turn.number, new_state, game.seats, now)
    carried_rows = carried_orders.rows(game, recheck, now)
    filed: dict[int, list[OrderSubmission]] = {}
    for row in [*robot_rows, *carried_rows]:
        filed.setdefault(int(str(row["seat_id"])), []).append(OrderSubmission(**row))
    return robot_rows, carried_rows, filed


def work_out(
    shell: Shell,
    session: Session,
    game: Game,
    turn: Turn,
    *,
    cache: LetterCache,
    subs: store.BySeat | None = None,
    state: GameState | None = None,
) -> TurnWrites:
    """Resolve the open turn, writing nothing: what resolving it writes, and what its letters
    say (`TurnWrites.letters`: rendered by the deadline's letters step, `bot.letters.turn`,
    from this `session` and `cache`; `state`: the turn's state already decoded, else decoded
    here, and kept in `cache` for the letters). The objects read are changed as the resolution
    changes them (the mails show the game as it will be), so `session` is either the one that writes them
    (`bot.games.deadline.resolve_now`, or the deadline when the snapshot went stale) or a read-only one that is thrown away (`bot.games.deadline.work_out_due`)."""
    now = shell.now()
    rules = rules_of(game)
    state = rules.load_state(turn.state) if state is None else state
    cache.states[turn.id] = state  # the letters' picture starts from it (a game's first turn)
    subs = store.turn_submissions(session, turn) if subs is None else subs
    outcome = compute(session, game, rules, state, turn, subs)
    defaults, streaks = _defaults_and_streaks(game, rules, turn, outcome, now)
    new_state = outcome.resolution.state
    resolved = {
        "state_after": rules.dump_state(new_state),
        "events": [e.to_json() for e in outcome.resolution.events],
        "resolved_at": now,
        "submitted": list(outcome.submitted),
        "seed": outcome.seed,
    }
    finished_at = now if rules.is_finished(new_state) else None
    _set_columns(game, turn, resolved=resolved, finished_at=finished_at, streaks=streaks)
    next_row, next_turn, opening = (
        (None, None, None)
        if finished_at is not None
        else _next_turn(shell, session, game, rules, turn, new_state, cache, now)
    )
    kind = "final" if next_turn is None else "results"
    # A next turn that needs no orders runs at once (Racecraft's final sprint): this turn's
    # results then go out with its own, in one letter a seat reads once, not two a second apart.
    # The GM's copy likewise; the observers' public results are sent as always.
    held_for_next = next_turn is not None and game.status == GameStatus.ACTIVE and not rules.expected_players(new_state)
    before = None if rules.expected_players(state) else _turn_before(session, game, rules, turn)
    recheck, robot_rows, carried_rows, no_subs = _carried_over(rules, game, turn, next_turn, new_state, resolved, now)
    season = seasons.for_letters(session, game, rules, new_state, turn, finished=next_turn is None)
    rated, rating_writes = _rated(shell, session, game, rules, new_state)
    letters = TurnLetters(
        rules,
        new_state,
        outcome,
        next_turn,
        kind,
        held_for_next,
        before,
        subs,
        no_subs,
        recheck,
        season,
        tuple(observers.observers_of(session, game)),
        seat_labels(game.seats),
        rules.stall(new_state) if next_turn is not None else None,
        rated,
        ratings.unrated_robot(session, game),
    )
    return TurnWrites(
        outcome,
        resolved,
        finished_at,
        streaks,
        tuple(defaults),
        next_row,
        letters,
        tuple(robot_rows),
        opening,
        tuple(carried_rows),
        recheck,
        rating_writes,
    )


def _carried_over(
    rules: AnyGame,
    game: Game,
    turn: Turn,
    next_turn: Turn | None,
    new_state: GameState,
    resolved: dict[str, object],
    now: datetime,
) -> tuple[Recheck, list[dict[str, object]], list[dict[str, object]], store.BySeat]:
    """The orders carried into this turn checked again for the next (`_recheck_carried`), and
    what is filed for the next turn (`_filed_for_next`); the turn's carried orders cleared, in
    `resolved` and on `turn`, once used."""
    kept = carried_orders.of_turn(turn)
    recheck = _recheck_carried(rules, game, turn, next_turn, new_state, kept)
    robot_rows, carried_rows, no_subs = _filed_for_next(rules, game, next_turn, new_state, recheck, now)
    if kept:
        resolved["carried"] = None
        turn.carried = None
    return recheck, robot_rows, carried_rows, no_subs


def _rated(
    shell: Shell, session: Session, game: Game, rules: AnyGame, new_state: GameState
) -> tuple[dict[int, Change], ratings.RatingWrites | None]:
    """A finished game's rating changes as its letters show them, and what they write."""
    changes, rating_writes = (
        ratings.final_changes(session, game, rules, new_state) if game.status == GameStatus.FINISHED else ([], None)
    )
    return ratings.changes_shown(changes, game, shell.settings.ratings.shown_after), rating_writes


def _turn_before(session: Session, game: Game, rules: AnyGame, turn: Turn) -> sheets.TurnBefore | None:
    """For a turn that needed no orders: the turn resolved just before it, whose results were
    held for its letters (`work_out`), replayed from the database as it was resolved (the
    defaults filed then are not orders sent: the outlook gives them again)."""
    if turn.number <= 1:
        return None
    prev = session.scalars(select(Turn).where(Turn.game_id == game.id, Turn.number == turn.number - 1)).one_or_none()
    if prev is None or prev.state_after is None:
        return None
    outcome = compute(session, game, rules, rules.load_state(prev.state), prev)
    return sheets.TurnBefore(prev, outcome.resolution.state, outcome)


@dataclass(frozen=True, slots=True)
class TurnKey:
    """The turn resolved, as writing it needs it (`write_turn`): plain values, no ORM object
    (a turn worker sends it back to the service with what it worked out)."""

    game_id: int
    game: str  # the game's name
    turn_id: int
    number: int
    label: str
    secret: str | None

    @classmethod
    def of(cls, game: Game, turn: Turn) -> TurnKey:
        return cls(game.id, game.name, turn.id, turn.number, turn.label, turn.secret)


# The tables `write_turn` writes with plain statements, made once (building a statement costs
# more than running it; bench: deadline).
_TURN = cast(Table, Turn.__table__)
_GAME = cast(Table, Game.__table__)
_SEAT = cast(Table, Seat.__table__)
_SUBMISSION = cast(Table, OrderSubmission.__table__)
_RESOLVE = update(_TURN).where(_TURN.c.id == bindparam("turn_id"))
_FINISH = (
    update(_GAME)
    .where(_GAME.c.id == bindparam("game_id"))
    .values(status=GameStatus.FINISHED.value, finished_at=bindparam("at"), finishes=_GAME.c.finishes + 1)
)
_STREAK = update(_SEAT).where(_SEAT.c.id == bindparam("seat_id")).values(nmr_streak=bindparam("streak"))
_FILE = insert(_SUBMISSION)
_OPEN = insert(_TURN).returning(_TURN.c.id)


def write_turn(session: Session, turn: TurnKey, writes: TurnWrites) -> None:
    """Write what `work_out` worked out for `turn`, but its letters (rendered and queued by
    the caller in the same transaction: `bot.games.deadline`): plain statements by primary key,
    the rows of one table in one executemany, and on PostgreSQL the turn, its commitment
    revealed, the next turn and its commitment in one statement (`_at_once`); no object is
    loaded, added or flushed (the deadline writes a turn worked out on a snapshot). A caller
    that holds the game's objects in `session` expires them after (`expire_written`), to read
    them back as written."""
    resolved_at = writes.resolved["resolved_at"]
    assert isinstance(resolved_at, datetime)
    next_id: int | None = None
    if session.get_bind().dialect.name == "postgresql":
        next_id = _write_at_once(session, turn, writes, resolved_at)
    else:
        session.execute(_RESOLVE, {**writes.resolved, "turn_id": turn.turn_id})
        if turn.secret is not None:  # the results reveal it: so does the game's commitment log
            dice.reveal(session, turn.game_id, turn.number, turn.secret, resolved_at, CommitmentFate.RESOLVED)
        if writes.opening is not None:
            dice.write_entry(session, writes.opening)
        if writes.next_turn is not None:
            next_id = session.execute(_OPEN, dict(writes.next_turn)).scalar_one()
    if writes.finished_at is not None:
        session.execute(_FINISH, {"game_id": turn.game_id, "at": writes.finished_at})
    if writes.rating_writes is not None:
        ratings.write(session, writes.rating_writes)
    if writes.streaks:
        session.execute(_STREAK, [{"seat_id": seat_id, "streak": streak} for seat_id, streak in writes.streaks.items()])
    if writes.defaults:
        session.execute(_FILE, [dict(row) for row in writes.defaults])
    filed = [*writes.robots, *writes.carried]  # on file as the next turn opens
    if next_id is not None and writes.next_turn is not None and filed:
        session.execute(_FILE, [{**row, "turn_id": next_id} for row in filed])
    if writes.recheck.withdrawn:  # the audit log keeps what was withdrawn, as it keeps a ROLLBACK's
        withdrawn_at = resolved_at
        game = session.get(Game, turn.game_id)
        assert game is not None
        done_by_the_bot(
            session,
            game,
            f"{AUDIT_COMMAND} {turn.game} {turn.label}",
            "; ".join(f"{w.kept.seat}: {w.kept.text!r} withdrawn" for w in writes.recheck.withdrawn),
            withdrawn_at,
            via="deadline",
            undo={
                "withdrawn": [
                    {**w.kept.to_json(), "label": w.label, "reason": w.reason} for w in writes.recheck.withdrawn
                ],
                "refiled": [r.kept.to_json() for r in writes.recheck.refiled],
            },
        )
    log.info(
        "game %s: resolved %s; defaulted: %s%s",
        turn.game,
        turn.label,
        ", ".join(writes.outcome.defaulted) or "nobody",
        "; game over" if writes.next_turn is None else "",
    )


# `_at_once` statements, by what they write: (the turn's columns, whether its commitment is
# revealed, the next turn's columns, its commitment's).
_AT_ONCE: dict[tuple[tuple[str, ...], bool, tuple[str, ...], tuple[str, ...]], Select[int]] = {}


def _write_at_once(session: Session, turn: TurnKey, writes: TurnWrites, resolved_at: datetime) -> int:
    """PostgreSQL: the turn's columns, its commitment revealed (a turn with dice), the next turn
    opened and its commitment appended, in one statement (`_at_once`); the next turn's id (with
    no next turn: the turn's own)."""
    opened = dict(writes.next_turn) if writes.next_turn is not None else {}
    entry = writes.opening.row() if writes.opening is not None else {}
    statement = _at_once(tuple(writes.resolved), turn.secret is not None, tuple(opened), tuple(entry))
    params: dict[str, object] = {"turn_id": turn.turn_id}
    params.update({f"resolved_{key}": value for key, value in writes.resolved.items()})
    params.update({f"opened_{key}": value for key, value in opened.items()})
    params.update({f"entry_{key}": value for key, value in entry.items()})
    if turn.secret is not None:  # the results reveal it: so does the game's commitment log
        params.update(dice.reveal_params(turn.game_id, turn.number, turn.secret, resolved_at, CommitmentFate.RESOLVED))
    return session.execute(statement, params).scalar_one()


def _at_once(resolved: tuple[str, ...], reveal: bool, opened: tuple[str, ...], entry: tuple[str, ...]) -> Select[int]:
    """One statement (PostgreSQL's data-modifying WITH) of `write_turn`'s: the turn's `resolved`
    columns (``resolved_<column>``, by ``turn_id``); with `reveal`, its commitment revealed
    (`bot.dice.REVEAL`'s parameters); the next turn's row of `opened` columns
    (``opened_<column>``) and its commitment's row of `entry` columns (``entry_<column>``), where
    given. Made once for each shape; it selects the next turn's id (none opened: the turn's).
    Each part writes other rows than the others, as PostgreSQL requires of one statement."""
    key = (resolved, reveal, opened, entry)
    statement = _AT_ONCE.get(key)
    if statement is None:
        done = (
            update(_TURN)
            .where(_TURN.c.id == bindparam("turn_id"))
            .values({c: bindparam(f"resolved_{c}", type_=_TURN.c[c].type) for c in resolved})
            .returning(_TURN.c.id)
            .cte("resolved")
        )
        parts = [dice.REVEAL.cte("revealed")] if reveal else []
        if entry:
            values = {c: bindparam(f"entry_{c}", type_=dice.LOG.c[c].type) for c in entry}
            parts.append(insert(dice.LOG).values(values).cte("entry"))
        if opened:
            values = {c: bindparam(f"opened_{c}", type_=_TURN.c[c].type) for c in opened}
            new = insert(_TURN).values(values).returning(_TURN.c.id).cte("opened")
            statement = select(new.c.id).add_cte(done, *parts)
        else:
            statement = select(done.c.id).add_cte(*parts)
        _AT_ONCE[key] = statement
    return statement


def expire_written(session: Session, game: Game, turn: Turn) -> None:
    """`game`, its seats and `turn`, where `session` holds them, expired after `write_turn`: read
    back as written (what `work_out` changed of them in memory is dropped, never flushed)."""
    for obj in (turn, game, *game.seats):
        if inspect(obj).session is session:
            session.expire(obj)


def queue_seat_mail(
    shell: Shell, session: Session, game: Game, seat: Seat, template: str, *, note: str | None = None
) -> None:
    """A mail about the game as it stands now (turn sheet, status...) to one seat; `note`, a
    paragraph at its top (REPLACE: whose seat the new player takes over)."""
    rules, state, turn = current_state(session, game)
    sheets.post_seat_letter(
        shell, session, game, rules, state, turn, seat, template, None, note=note, cache=LetterCache()
    )


def people_submitted(session: Session, turn_ids: Sequence[int]) -> set[int]:
    """Which of `turn_ids` hold a submission of a person's seat (not a robot's), in one query per 500."""
    found: set[int] = set()
    wanted = sorted(set(turn_ids))
    for start in range(0, len(wanted), 500):
        found.update(
            session.scalars(
                select(OrderSubmission.turn_id)
                .join(Seat, Seat.id == OrderSubmission.seat_id)
                .where(OrderSubmission.turn_id.in_(wanted[start : start + 500]), Seat.robot.is_(False))
                .distinct()
            )
        )
    return found


def may_be_due(
    deadline: datetime | None,
    grace_minutes: int,
    early: bool,
    soonest: datetime | None,
    people_in: bool,
    now: datetime,
) -> bool:
    """Whether an open turn may be due (`is_due` decides): its closing time has passed, or it may
    resolve early -- the game resolves early, it is not before `soonest` (`resolves_from`), and a
    person's seat has a submission in it (early resolution waits for every person's orders, and
    never runs for robots alone: `robots.people_expected`). A turn nobody orders in has its
    deadline at its opening, so its closing time has passed."""
    if deadline is not None and now >= as_utc(deadline) + timedelta(minutes=grace_minutes):
        return True
    return early and people_in and (soonest is None or now >= soonest)


def due_ids(
    session: Session,
    now: datetime,
    *,
    pace: timedelta,
    among: Collection[int] | None = None,
    early_unread: bool = False,
) -> list[tuple[int, int]]:
    """Every active game's open turn that is due now (`among`: of these games only), as (game id,
    turn id), by game. A few queries in all, not a few per game (bench: deadline): a turn past
    its closing time is due on its columns alone (`is_due` says so for any such turn), a turn
    that cannot be due is passed over on them too (`may_be_due`; bench.practice: the tick's cost
    per live game that waits stays flat), and only a turn that may resolve early before its
    closing time is read whole, with its game and submissions, for `is_due`. With
    `early_unread`, such a turn is listed without that reading: the caller asks `is_due` as it
    reads the turn (the deadline's `work_out_due` does, chunk by chunk, so that a big deadline
    of turns resolving early starts on its first chunk at once)."""
    open_turns = [Game.status == GameStatus.ACTIVE, Turn.resolved_at.is_(None)]
    if among is not None:
        open_turns.append(Game.id.in_(among))
    heads = session.execute(
        select(
            Turn.id,
            Turn.game_id,
            Turn.deadline,
            Turn.opened_at,
            Game.grace_minutes,
            Game.early_resolution,
            Game.practice,
        )
        .join(Game, Game.id == Turn.game_id)
        .where(*open_turns)
    ).all()
    due: list[tuple[int, int]] = []
    early = []
    for head in heads:
        if head.deadline is not None and now >= as_utc(head.deadline) + timedelta(minutes=head.grace_minutes):
            due.append((head.game_id, head.id))  # closed: due (`is_due`), whatever its state
        elif head.early_resolution:
            early.append(head)
    people_in = people_submitted(session, [head.id for head in early])
    wanted = [
        head.id
        for head in early
        if may_be_due(
            head.deadline,
            head.grace_minutes,
            head.early_resolution,
            as_utc(head.opened_at) + pace if head.practice else None,
            head.id in people_in,
            now,
        )
    ]
    if early_unread:
        by_id = {head.id: head.game_id for head in early}
        return sorted(due + [(by_id[turn_id], turn_id) for turn_id in wanted])
    rows = _games_and_turns(session, wanted)
    subs = store.turns_submissions(session, [t.id for _, t in rows])
    due += [(g.id, t.id) for g, t in rows if is_due(session, g, t, now, pace=pace, subs=subs.get(t.id, {}))]
    return sorted(due)


def due_turns(
    session: Session, now: datetime, *, pace: timedelta, among: Collection[int] | None = None
) -> list[tuple[Game, Turn]]:
    """`due_ids`, read: each due turn with its game (and the game's seats), by game."""
    return _games_and_turns(session, [turn_id for _, turn_id in due_ids(session, now, pace=pace, among=among)])


def _games_and_turns(session: Session, turn_ids: Sequence[int]) -> list[tuple[Game, Turn]]:
    """The turns `turn_ids` with their games (and the games' seats), by game: one query per 500."""
    rows: list[tuple[Game, Turn]] = []
    for start in range(0, len(turn_ids), 500):
        rows += [
            (game, turn)
            for game, turn in session.execute(
                select(Game, Turn)
                .join(Turn, Turn.game_id == Game.id)
                .where(Turn.id.in_(turn_ids[start : start + 500]))
                .options(selectinload(Game.seats))
            )
        ]
    rows.sort(key=lambda row: (row[0].id, row[1].id))
    return rows
