"""Championship seasons (docs/championships.md): made by `flagman season new` or a GM's
``SEASON <game> NEW ...``, their races (games, by round), and the table, worked out by
`rules.season` from what each finished race's record holds.

The table is never stored: every time it is shown it is computed again from the races' results
(`results_of`), so a corrected race (ROLLBACK, resolved again) counts as corrected everywhere.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import store
from bot.facts import SeasonRow, SeasonTable
from bot.letters.words import say
from bot.mail_in.auth import GM_SEAT, NAME_RE
from bot.models import ChangeWhy, Game, GameStatus, OrderSubmission, Player, Season, SeasonRace, Seat, SeatChange, Turn
from bot.shell import Shell
from rules import UnknownGameError, find_game
from rules.api import AnyGame, GameState, Viewer
from rules.season import (
    Driver,
    Finish,
    Outcome,
    RaceResult,
    ScoringTable,
    SeasonError,
    SeasonRules,
    Standing,
    progression,
    standings,
)

MAX_RACES = 30
MAX_TRACKS = 30
MAX_TIERS = 10
MAX_MOVERS = 20  # drivers a tier sends up (or down) at most
# The game option a season's tracks (or maps) in rotation set, by kind of game; a kind not
# listed has no tracks to rotate.
TRACK_OPTION = {"speed_circuit": "track", "speedphreakz": "map"}
# Orders that show a person drove the seat (a no-show has none of these in the whole race).
_DRIVEN = ("mail", "gm")


class SeasonRequestError(ValueError):
    """A season request that cannot be done; the message (from a words template) says why."""


@dataclass(frozen=True, slots=True)
class SeasonSettings:
    """What `flagman season new` and ``SEASON <game> NEW`` set (the rest are defaults)."""

    name: str
    kind: str
    gm_address: str
    scoring: str = "f1"
    drop: int = 0
    no_show_penalty: int = 0
    nmr_penalty: int = 0
    races: int = 3
    tracks: tuple[str, ...] = ()
    games: tuple[str, ...] = ()
    series: str = ""  # "": the season's own name (a series of one)
    tier: int = 1
    promote: int = 0  # how many of its top go up when the series' next season is drawn
    relegate: int = 0  # how many of its bottom go down
    min_field: int = 0  # the least field of the tier's next race, robots filling it (0: none)
    bench_newcomers: bool = False  # the bench volunteers of the kind drawn in as newcomers


def season_rules(season: Season) -> SeasonRules:
    return SeasonRules(
        ScoringTable.parse(season.scoring),
        drop=season.drop_results,
        no_show_penalty=season.no_show_penalty,
        nmr_penalty=season.nmr_penalty,
        races=season.races_planned,
    )


def find_season(session: Session, name: str) -> Season | None:
    return session.scalar(select(Season).where(Season.name == name.strip().lower()))


_RACES = "flagman.season_races"  # Session.info: game id -> its season race, if any (`read_ahead`)


def season_of(session: Session, game: Game) -> tuple[Season, int] | None:
    """The season a game is a race of, and its round; None: it is not one (from `read_ahead`
    when the session read it ahead)."""
    known = store.read_back(session, _RACES, game.id, SeasonRace)
    if known is not None:
        race = known[0] if known else None
    else:
        race = session.scalar(select(SeasonRace).where(SeasonRace.game_id == game.id))
    return (race.season, race.round) if race is not None else None


def seat_goes_on(session: Session, game: Game, who: str) -> str:
    """What a seat changing hands in a race of a season means for the season, said to `who`:
    "taker" (the new holder drives it in the season's next races), "offered" (the bench, before
    anyone took it) or "leaver" (the holder who resigned runs no more races of it); "" for a game
    of no season."""
    found = season_of(session, game)
    if found is None:
        return ""
    season, round_ = found
    return say(
        "season_seat_goes_on", game=game.name, round=round_, races=season.races_planned, season=season.name, who=who
    )


def read_ahead(session: Session, game_ids: Iterable[int]) -> None:
    """The season races of `game_ids` in one query, for `season_of` in this snapshot
    (`store.read_ahead`): a deadline's letters of a chunk of turns ask for each game's."""
    store.read_ahead(
        session,
        _RACES,
        game_ids,
        lambda chunk: (
            (race.game_id, race) for race in session.scalars(select(SeasonRace).where(SeasonRace.game_id.in_(chunk)))
        ),
    )


def create_season(shell: Shell, session: Session, settings: SeasonSettings) -> Season:
    """A new season with its first races (existing games of its kind, in round order)."""
    name = settings.name.strip().lower()
    if not NAME_RE.match(name) or name == GM_SEAT:
        raise SeasonRequestError(say("season_bad_name", season=name[:40]))
    if find_season(session, name) is not None:
        raise SeasonRequestError(say("season_exists", season=name))
    try:
        rules = find_game(settings.kind)
    except UnknownGameError:
        raise SeasonRequestError(say("season_unknown_kind", kind=settings.kind[:40])) from None
    try:
        table = ScoringTable.parse(settings.scoring)
        SeasonRules(table, settings.drop, settings.no_show_penalty, settings.nmr_penalty)
    except SeasonError as error:
        raise SeasonRequestError(say("season_bad_setting", reason=str(error))) from None
    for honour, _ in table.bonus:
        if honour not in rules.honours:
            raise SeasonRequestError(
                say("season_no_honour", title=rules.title, honour=honour, honours=list(rules.honours))
            )
    if not 1 <= settings.races <= MAX_RACES:
        raise SeasonRequestError(say("season_bad_races", most=MAX_RACES))
    if settings.drop >= settings.races:
        raise SeasonRequestError(say("season_drops_all", drop=settings.drop, races=settings.races))
    tracks = tuple(t.strip().lower() for t in settings.tracks if t.strip())
    if tracks:
        option = TRACK_OPTION.get(rules.name)
        if option is None:
            raise SeasonRequestError(say("season_no_tracks", title=rules.title))
        if len(tracks) > MAX_TRACKS:
            raise SeasonRequestError(say("season_too_many_tracks", most=MAX_TRACKS))
        for track in tracks:
            try:
                rules.new_game([f"p{i}" for i in range(rules.min_players)], {option: track}, random.Random(0))
            except ValueError as error:
                raise SeasonRequestError(say("season_bad_track", track=track[:40], reason=str(error))) from None
    if len(settings.games) > settings.races:
        raise SeasonRequestError(say("season_more_games_than_races", games=len(settings.games), races=settings.races))
    series, edition = _series_place(session, settings, name, rules.name)
    season = Season(
        name=name,
        kind=rules.name,
        gm_address=settings.gm_address.strip().lower(),
        scoring=table.shown(),
        drop_results=settings.drop,
        no_show_penalty=settings.no_show_penalty,
        nmr_penalty=settings.nmr_penalty,
        races_planned=settings.races,
        tracks=list(tracks),
        created_at=shell.now(),
        series=series,
        tier=settings.tier,
        edition=edition,
        promote=settings.promote,
        relegate=settings.relegate,
        min_field=settings.min_field,
        bench_newcomers=settings.bench_newcomers,
    )
    session.add(season)
    session.flush()
    for game_name in settings.games:
        add_race(session, season, game_name)
    return season


def _series_place(session: Session, settings: SeasonSettings, name: str, kind: str) -> tuple[str, int]:
    """The series a new season joins and its edition there (the series' latest, 1 for a new
    series): refused if the tier is out of range or taken, or the series is of another kind."""
    series = settings.series.strip().lower() or name
    if not NAME_RE.match(series) or series == GM_SEAT:
        raise SeasonRequestError(say("season_bad_name", season=series[:40]))
    if not 1 <= settings.tier <= MAX_TIERS:
        raise SeasonRequestError(say("season_bad_tier", most=MAX_TIERS))
    if not (0 <= settings.promote <= MAX_MOVERS and 0 <= settings.relegate <= MAX_MOVERS):
        raise SeasonRequestError(say("season_bad_movers", most=MAX_MOVERS))
    if not 0 <= settings.min_field <= find_game(kind).max_players:
        raise SeasonRequestError(say("season_bad_field", most=find_game(kind).max_players))
    known = list(session.scalars(select(Season).where(Season.series == series)))
    edition = max((s.edition for s in known), default=1)
    for other in known:
        if other.kind != kind:
            raise SeasonRequestError(say("season_series_kind", series=series, kind=other.kind))
        if other.edition == edition and other.tier == settings.tier:
            raise SeasonRequestError(say("season_tier_taken", series=series, tier=settings.tier, season=other.name))
    return series, edition


def add_race(session: Session, season: Season, game_name: str) -> SeasonRace:
    """The game `game_name` as the season's next race."""
    game = store.find_game_row(session, game_name)
    if game is None:
        raise SeasonRequestError(say("season_no_game", game=game_name[:40]))
    if game.kind != season.kind:
        raise SeasonRequestError(say("season_wrong_kind", game=game.name, kind=game.kind, season=season.name))
    if game.practice:
        raise SeasonRequestError(say("season_practice_game", game=game.name))
    if session.scalar(select(SeasonRace.id).where(SeasonRace.game_id == game.id)) is not None:
        raise SeasonRequestError(say("season_game_taken", game=game.name))
    rounds = len(season.races)
    if rounds >= season.races_planned:
        raise SeasonRequestError(say("season_full", season=season.name, races=season.races_planned))
    race = SeasonRace(season=season, round=rounds + 1, game_id=game.id)
    session.add(race)
    session.flush()
    return race


def track_for(season: Season, round_: int) -> dict[str, str]:
    """The game option the season's rotation sets for race `round_` ({} without tracks)."""
    option = TRACK_OPTION.get(season.kind)
    if option is None or not season.tracks:
        return {}
    return {option: season.tracks[(round_ - 1) % len(season.tracks)]}


# -- results and the table -------------------------------------------------------------------


def driver_of(seat: Seat) -> Driver:
    """A season's key for a seat's holder: the player's number (never their address)."""
    return str(seat.player_id)


def result_from(
    game: Game,
    rules: AnyGame,
    state: GameState,
    driven: set[int],
    round_: int,
    correction: int,
    left: Mapping[int, Outcome] | None = None,
) -> RaceResult:
    """What a race whose final state is `state` gives the season: each person's outcome (robots'
    seats score for nobody); `driven`: the seats that ever sent orders (by mail or the GM's ORDER);
    `left`: the people whose seat went on without them (`left_seats`), by player, and their outcome."""
    view = rules.view(state, None, Viewer.PUBLIC)
    where: dict[str, tuple[int, bool]] = {}
    for placing in view.standings:
        for name in placing.players:
            where[name] = (placing.place, bool(placing.note))
    finishes: list[Finish] = []
    for seat in game.seats:
        if seat.robot:
            continue
        if seat.id not in driven:
            finishes.append(Finish(driver_of(seat), Outcome.NO_SHOW))
        elif not seat.active:
            out_by_nmr = game.nmr_limit is not None and seat.nmr_streak >= game.nmr_limit
            finishes.append(Finish(driver_of(seat), Outcome.NMR_OUT if out_by_nmr else Outcome.DID_NOT_FINISH))
        elif seat.name in where and not where[seat.name][1]:
            finishes.append(Finish(driver_of(seat), Outcome.FINISHED, where[seat.name][0]))
        else:
            finishes.append(Finish(driver_of(seat), Outcome.DID_NOT_FINISH))
    scored = {finish.driver for finish in finishes}
    finishes += [Finish(str(p), outcome) for p, outcome in sorted((left or {}).items()) if str(p) not in scored]
    # A race's honours (the pole ...) go to whoever holds the seat at the end, as its place does.
    holders = {seat.name: driver_of(seat) for seat in game.seats if not seat.robot}
    honours = tuple((h.kind, holders[h.player]) for h in view.honours if h.player in holders)
    return RaceResult(round_, correction, tuple(finishes), honours)


def left_seats(session: Session, game: Game) -> dict[int, Outcome]:
    """The people of `game` whose seat went on without them (to the substitutes bench, or to the
    GM), by player: put out by the NMR limit (its penalty), or resigned (did not finish)."""
    why = {ChangeWhy.NMR_LIMIT: Outcome.NMR_OUT, ChangeWhy.RESIGNED: Outcome.DID_NOT_FINISH}
    return {
        change.player_id: why[ChangeWhy(change.why)]
        for change in session.scalars(
            select(SeatChange).where(
                SeatChange.game_id == game.id, SeatChange.successor_id.is_not(None), SeatChange.why.in_(list(why))
            )
        )
    }


def driven_seats(session: Session, game: Game) -> set[int]:
    """The seats of `game` that sent orders at least once, by mail or by the GM's ORDER."""
    return set(
        session.scalars(
            select(OrderSubmission.seat_id)
            .join(Turn, Turn.id == OrderSubmission.turn_id)
            .where(Turn.game_id == game.id, OrderSubmission.source.in_(_DRIVEN))
        )
    )


def race_result(session: Session, game: Game, round_: int) -> RaceResult | None:
    """What the finished race `game` gives the season, from its record (None: not finished)."""
    if game.status != GameStatus.FINISHED:
        return None
    last = store.last_resolved_turn(session, game)
    if last is None or last.state_after is None:
        return None
    rules = find_game(game.kind)
    state = rules.load_state(last.state_after)
    return result_from(
        game, rules, state, driven_seats(session, game), round_, last.corrections, left_seats(session, game)
    )


def results_of(session: Session, season: Season) -> list[RaceResult]:
    """Every finished race's result, as the record holds it now."""
    found = (race_result(session, race.game, race.round) for race in season.races)
    return [result for result in found if result is not None]


def _cell(points: int, penalty: int, dropped: bool, bonus: int = 0) -> str:
    """A race's cell: ``18``, ``18+1`` (a bonus of 1 in it), ``(18)`` dropped, ``0-3`` a penalty."""
    scored = f"{points - bonus}+{bonus}" if bonus else str(points)
    shown = f"({scored})" if dropped else scored
    return f"{shown}-{penalty}" if penalty else shown


def table_of(session: Session, season: Season, also: RaceResult | None = None) -> SeasonTable:
    """The season's table now, computed from its races' results (and `also`, the result of a
    race finishing now, before its record says so)."""
    results = results_of(session, season)
    if also is not None:
        results = [r for r in results if r.race != also.race] + [also]
    rows = standings(season_rules(season), results)
    over = progression(season_rules(season), results)
    names = _names(session, [row.driver for row in rows])
    return SeasonTable(
        season.name,
        find_game(season.kind).title,
        season.scoring,
        season.drop_results,
        len(results),
        season.races_planned,
        tuple(_row(row, rows, names, season.races_planned, over.get(row.driver, ())) for row in rows),
        tuple(race.game.name for race in season.races),
    )


def _row(
    row: Standing, rows: Sequence[Standing], names: dict[str, str], planned: int, after: tuple[int, ...]
) -> SeasonRow:
    by_race = {score.race: score for score in row.races}
    cells = tuple(
        _cell(by_race[n].points, by_race[n].penalty, by_race[n].dropped, by_race[n].bonus) if n in by_race else "-"
        for n in range(1, planned + 1)
    )
    shared = sum(1 for other in rows if other.place == row.place) > 1
    return SeasonRow(
        row.place, names.get(row.driver, row.driver), row.points, cells, shared, row.tied and not shared, after
    )


def for_letters(
    session: Session, game: Game, rules: AnyGame, state: GameState, resolved: Turn, *, finished: bool
) -> SeasonTable | None:
    """The table a results letter of `game` shows (None: `game` is no season's race): the
    finished races', with this one's once it is over (`state` its final state)."""
    found = season_of(session, game)
    if found is None:
        return None
    season, round_ = found
    also = (
        result_from(
            game, rules, state, driven_seats(session, game), round_, resolved.corrections, left_seats(session, game)
        )
        if finished
        else None
    )
    return table_of(session, season, also)


def _names(session: Session, drivers: Sequence[Driver]) -> dict[str, str]:
    ids = [int(d) for d in drivers if d.isdigit()]
    return {str(p.id): p.name for p in session.scalars(select(Player).where(Player.id.in_(ids)))} if ids else {}


__all__ = [
    "TRACK_OPTION",
    "SeasonRequestError",
    "SeasonSettings",
    "driven_seats",
    "left_seats",
    "for_letters",
    "result_from",
    "add_race",
    "create_season",
    "driver_of",
    "find_season",
    "race_result",
    "results_of",
    "season_of",
    "season_rules",
    "table_of",
    "track_for",
]
