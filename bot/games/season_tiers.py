"""A series' next season, its tiers drawn by the bot from the final tables of the last one
(docs/championships.md, "Tiers: promotion and relegation"), made only when the GM confirms.

A series' seasons of one edition are its tiers (1 the top). Once every one of them has
finished, `draw_of` works out the next edition's tiers by `rules.season.draw_tiers` (the top of
each tier up, the bottom down, ties by the last races then a lot seeded by the series and
edition). The first time the draw is shown (`show_draw`: the GM's digest, ``SEASON <game>
NEXT``, ``flagman season next``) it is stored (`SeasonDraw`) with what it was drawn from, and
from then on the stored draw is the one shown and the one `confirm_next` makes (``SEASON
<game> NEXT CONFIRM`` by mail, ``flagman season next <series> --confirm``): each tier's
season, with the settings of the tier it follows, its first race started with the drawn
drivers in grid order (those coming down, those staying, those coming up). A result corrected
after the draw was shown (a ROLLBACK) makes it stale: it is shown so, confirming it is
refused, and the GM draws again (`redraw`). All in the caller's transaction: the next edition is
made whole or not at all, and once made it is not drawn again.

The drivers who go on are the people holding an active seat of their tier's last race
(robots stay out); the others (resigned, dropped, out by the NMR limit) are leavers."""

from __future__ import annotations

import dataclasses
import random
import re
import zlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot import letters
from bot.clock import as_utc
from bot.facts import DrawnDriver, DrawnTier, SeriesDraw
from bot.games import season_races, seasons, turns
from bot.letters import ToGm
from bot.letters.words import say
from bot.mail_in.auth import GM_SEAT, NAME_RE
from bot.models import (
    Game,
    GameStatus,
    Player,
    Season,
    SeasonDraw,
    SeasonRace,
    SeasonStatus,
    SeriesEntry,
    Substitute,
    Turn,
)
from bot.shell import Shell
from rules import find_game
from rules.season import Drawn, Move, SeasonError, TierSeason, draw_tiers, standings

# How long after its last race a draw not confirmed is still in the GM's digest.
DIGEST_DAYS = 14


def latest_edition(session: Session, series: str) -> list[Season]:
    """The series' seasons of its latest edition (its tiers), top first."""
    found = list(session.scalars(select(Season).where(Season.series == series)))
    edition = max((s.edition for s in found), default=0)
    return sorted((s for s in found if s.edition == edition), key=lambda s: s.tier)


def drawable(tiers: Sequence[Season]) -> bool:
    """Whether a series' latest edition has a next season to draw: every tier has finished, and
    it is a series (two tiers or more, or a season given a series of its own)."""
    if not tiers or any(s.status != SeasonStatus.FINISHED for s in tiers):
        return False
    return len(tiers) > 1 or tiers[0].series != tiers[0].name


def _staying(season: Season) -> frozenset[str]:
    if not season.races:
        return frozenset()
    last = season.races[-1].game
    return frozenset(seasons.driver_of(s) for s in last.seats if s.active and not s.robot)


def lot_for(series: str, edition: int) -> random.Random:
    """The lot that settles ties at the line in the draw after `edition` of `series`."""
    return random.Random(zlib.crc32(f"{series}:{edition}".encode()))


def _draw(session: Session, tiers: Sequence[Season]) -> tuple[tuple[Drawn, ...], ...]:
    readings = []
    for season in tiers:
        results = tuple(seasons.results_of(session, season))
        table = standings(seasons.season_rules(season), results)
        readings.append(TierSeason(season.tier, table, results, _staying(season), season.promote, season.relegate))
    room = find_game(tiers[-1].kind).max_players
    try:
        return draw_tiers(readings, lot_for(tiers[0].series, tiers[0].edition), newcomers(session, tiers), room)
    except SeasonError as error:
        raise seasons.SeasonRequestError(say("season_bad_setting", reason=str(error))) from None


def newcomers(session: Session, tiers: Sequence[Season]) -> list[str]:
    """The series' newcomers in line, first come first: the people who joined the series
    (`SeriesEntry`), then, when its lowest tier takes them (`bench_newcomers`), the bench
    volunteers of its kind who drove in none of its tiers' races and are not the tier's GM."""
    series = tiers[0].series
    line = [
        str(p)
        for p in session.scalars(
            select(SeriesEntry.player_id).where(SeriesEntry.series == series).order_by(SeriesEntry.id)
        )
    ]
    if tiers[-1].bench_newcomers:
        drove = {seasons.driver_of(seat) for s in tiers for race in s.races for seat in race.game.seats}
        gm = tiers[-1].gm_address
        for sub in session.scalars(select(Substitute).where(Substitute.kind == tiers[-1].kind).order_by(Substitute.id)):
            if str(sub.player_id) not in drove and sub.player.address != gm:
                line.append(str(sub.player_id))
    return list(dict.fromkeys(line))


def robots_for(season: Season, drivers: int) -> int:
    """How many robots the next race of `season`'s tier seats beside its `drivers`: up to the
    tier's least field (`min_field`; 0, the default: none), never past what a race seats."""
    rules = find_game(season.kind)
    return max(0, min(season.min_field, rules.max_players) - drivers)


def open_to_newcomers(session: Session, name: str) -> str | None:
    """The series `JOIN <name>` enters for its next season: `name` is a series in tiers (or one
    of its seasons) and no race of its latest season is open for sign-ups (None: it is not, and
    the JOIN is a game's)."""
    series = series_of(session, name)
    if series is None:
        return None
    tiers = latest_edition(session, series)
    if not tiers or (len(tiers) == 1 and tiers[0].series == tiers[0].name):
        return None  # a season alone has no next season
    if any(race.game.status == GameStatus.SIGNUP for s in tiers for race in s.races):
        return None
    return series


def enter_series(session: Session, name: str, player: Player, now: datetime) -> str | None:
    """JOIN <series> (or one of its seasons) with no race of it open for sign-ups: `player`
    joins the series' next season, a newcomer drawn into its lowest tier. Returns the series
    (None: `open_to_newcomers` says the JOIN is a game's)."""
    series = open_to_newcomers(session, name)
    if series is None:
        return None
    known = session.scalar(select(SeriesEntry).where(SeriesEntry.series == series, SeriesEntry.player_id == player.id))
    if known is None:
        session.add(SeriesEntry(series=series, player_id=player.id, since=now))
        session.flush()
    return series


def _next_name(session: Session, series: str, edition: int, tier: int, tiers: int) -> str:
    base = f"{series[:18]}-{edition}" + (f"-t{tier}" if tiers > 1 else "")
    name, n = base, 1
    while seasons.find_season(session, name) is not None:
        n += 1
        name = f"{base}-{n}"
    return name


def _settled(tiers: Sequence[Season]) -> bool:
    """Whether every race of the tiers has its result (none reopened by a ROLLBACK)."""
    return all(race.game.status == GameStatus.FINISHED for season in tiers for race in season.races)


def _basis(session: Session, tiers: Sequence[Season]) -> list[list[object]]:
    """What a draw is drawn from: for each race of each tier its game, status, and how often its
    turns were reopened by a ROLLBACK (a count that only grows); then the newcomers in line."""
    games = [race.game_id for season in tiers for race in season.races]
    line: list[object] = ["newcomers", *newcomers(session, tiers)]
    reopened: dict[int, int] = {
        game: int(total)
        for game, total in session.execute(
            select(Turn.game_id, func.coalesce(func.sum(Turn.corrections), 0))
            .where(Turn.game_id.in_(games))
            .group_by(Turn.game_id)
        )
    }
    return [
        *(
            [race.game_id, str(race.game.status), int(reopened.get(race.game_id, 0))]
            for season in tiers
            for race in season.races
        ),
        line,
    ]


def _stored(session: Session, series: str, edition: int) -> SeasonDraw | None:
    return session.scalar(select(SeasonDraw).where(SeasonDraw.series == series, SeasonDraw.edition == edition))


def _to_rows(drawn: tuple[tuple[Drawn, ...], ...]) -> list[list[dict[str, object]]]:
    return [
        [{"driver": d.driver, "came_from": d.came_from, "move": d.move.value, "place": d.place} for d in tier]
        for tier in drawn
    ]


def _from_rows(rows: list[list[dict[str, Any]]]) -> tuple[tuple[Drawn, ...], ...]:
    return tuple(
        tuple(Drawn(str(d["driver"]), n + 1, int(d["came_from"]), Move(str(d["move"])), int(d["place"])) for d in tier)
        for n, tier in enumerate(rows)
    )


def draw_of(
    session: Session, series: str, viewer: str | None = None
) -> tuple[SeriesDraw, tuple[tuple[Drawn, ...], ...]] | None:
    """The next season of `series`: the draw stored when it was first shown, else as it would be
    drawn now (None: its latest season has not ended, or it is a season alone, or a race of it
    is reopened and no draw was shown before). `viewer`: the GM it is shown to (the race it
    names for their CONFIRM is of their own tier)."""
    tiers = latest_edition(session, series)
    if not drawable(tiers):
        return None
    stored = _stored(session, series, tiers[0].edition + 1)
    if stored is not None:
        drawn = _from_rows(stored.drawn)
        stale = stored.basis != _basis(session, tiers)
        return _fact(session, tiers, drawn, stale=stale, confirmed=stored.confirmed, viewer=viewer), drawn
    if not _settled(tiers):
        return None
    drawn = _draw(session, tiers)
    return _fact(session, tiers, drawn, stale=False, confirmed=(), viewer=viewer), drawn


def show_draw(
    session: Session, series: str, now: datetime, viewer: str | None = None
) -> tuple[SeriesDraw, tuple[tuple[Drawn, ...], ...]] | None:
    """`draw_of`, the draw stored the first time it is shown (in the caller's transaction): from
    then on it is the draw shown and the draw confirmed, stale once a result it was drawn from
    is corrected, until the GM draws again (`redraw`)."""
    found = draw_of(session, series, viewer)
    if found is None:
        return None
    tiers = latest_edition(session, series)
    if _stored(session, series, tiers[0].edition + 1) is None:
        row = SeasonDraw(
            series=series,
            edition=tiers[0].edition + 1,
            drawn=_to_rows(found[1]),
            basis=_basis(session, tiers),
            confirmed=[],
            shown_at=now,
        )
        session.add(row)
        session.flush()
    return found


def redraw(
    session: Session, series: str, now: datetime, viewer: str | None = None
) -> tuple[SeriesDraw, tuple[tuple[Drawn, ...], ...]]:
    """The next season of `series` drawn again from the tables as they are now, and stored in
    place of the draw shown before (the tiers' GMs' confirmations of it gone with it): refused
    while a race of it is reopened, or with nothing to draw."""
    tiers = latest_edition(session, series)
    if not drawable(tiers):
        raise seasons.SeasonRequestError(say("season_no_draw", series=series))
    if not _settled(tiers):
        raise seasons.SeasonRequestError(say("season_draw_unsettled", series=series, reopened=_reopened(tiers)))
    stored = _stored(session, series, tiers[0].edition + 1)
    if stored is not None:
        session.delete(stored)
        session.flush()
    found = show_draw(session, series, now, viewer)
    assert found is not None, "drawable and settled: there is a draw"
    return found


def _fact(
    session: Session,
    tiers: Sequence[Season],
    drawn: tuple[tuple[Drawn, ...], ...],
    *,
    stale: bool,
    confirmed: Sequence[int],
    viewer: str | None,
) -> SeriesDraw:
    ids = {int(d.driver) for tier in drawn for d in tier} | {int(d) for s in tiers for d in _every_driver(session, s)}
    names = {p.id: p.name for p in session.scalars(select(Player).where(Player.id.in_(ids)))} if ids else {}
    going = {d.driver for tier in drawn for d in tier}
    leavers = sorted({d for s in tiers for d in _every_driver(session, s)} - going, key=lambda d: names.get(int(d), d))
    edition = tiers[0].edition + 1
    return SeriesDraw(
        series=tiers[0].series,
        title=find_game(tiers[0].kind).title,
        edition=edition,
        tiers=tuple(
            DrawnTier(
                n + 1,
                _next_name(session, tiers[0].series, edition, n + 1, len(drawn)),
                tuple(DrawnDriver(names.get(int(d.driver), d.driver), d.move.value, d.came_from) for d in tier),
                robot_names(robots_for(tiers[n], len(tier))),
            )
            for n, tier in enumerate(drawn)
        ),
        leavers=tuple(names.get(int(d), d) for d in leavers),
        confirm_game=_confirm_game(tiers, viewer),
        made=False,
        stale=stale,
        several_gms=len({s.gm_address for s in tiers}) > 1,
        confirmed=tuple(sorted(confirmed)),
        reopened=_reopened(tiers),
    )


def _reopened(tiers: Sequence[Season]) -> tuple[tuple[str, int], ...]:
    """The races of the tiers reopened by a ROLLBACK, without their result again (game, tier)."""
    return tuple(
        (race.game.name, season.tier)
        for season in tiers
        for race in season.races
        if race.game.status != GameStatus.FINISHED
    )


def _confirm_game(tiers: Sequence[Season], viewer: str | None) -> str:
    """The race a GM names in ``SEASON <game> NEXT CONFIRM``: the last race of the lowest tier
    they run (`viewer` None, or a GM of none: the lowest tier's)."""
    mine = [s for s in tiers if viewer is not None and s.gm_address == viewer.strip().lower() and s.races]
    chosen = mine[-1] if mine else tiers[-1]
    return chosen.races[-1].game.name if chosen.races else ""


def _every_driver(session: Session, season: Season) -> set[str]:
    return {row.driver for row in standings(seasons.season_rules(season), seasons.results_of(session, season))}


def series_of(session: Session, name: str) -> str | None:
    """The series called `name`, or the series of the season called `name` (None: neither)."""
    wanted = name.strip().lower()
    if session.scalar(select(Season.id).where(Season.series == wanted).limit(1)) is not None:
        return wanted
    season = seasons.find_season(session, wanted)
    return season.series if season is not None else None


def gm_of_a_tier(session: Session, series: str, gm_address: str) -> list[int]:
    """The tiers of the series' latest season `gm_address` is the GM of; refuses
    (SeasonRequestError) when none."""
    address = gm_address.strip().lower()
    mine = [s.tier for s in latest_edition(session, series) if s.gm_address == address]
    if not mine:
        raise seasons.SeasonRequestError(say("season_none_of_yours", season=series))
    return mine


def confirm_next(shell: Shell, session: Session, series: str, *, gm_address: str | None = None) -> SeriesDraw:
    """Make the next season of `series` as drawn (the draw stored when first shown): each tier's
    season and its first race, started. `gm_address`: the GM confirming by mail (None: the CLI,
    the site's operator, who makes it at once). A GM confirms the tiers they run; the draw is
    made once the GMs of every tier have confirmed it (at once when one GM runs them all): until
    then the fact returned says which tiers have (`confirmed`), nothing made."""
    mine = gm_of_a_tier(session, series, gm_address) if gm_address is not None else []
    tiers = latest_edition(session, series)
    found = show_draw(session, series, shell.now(), gm_address)
    if found is None:
        raise seasons.SeasonRequestError(say("season_no_draw", series=series))
    fact, drawn = found
    if fact.stale:
        raise seasons.SeasonRequestError(
            say("season_draw_stale_refused", series=series, game=fact.confirm_game, reopened=fact.reopened)
        )
    for tier, drawn_tier in zip(fact.tiers, drawn, strict=True):
        if not drawn_tier and not tier.robots:
            raise seasons.SeasonRequestError(say("season_empty_tier", tier=tier.tier, series=series))
    stored = _stored(session, series, fact.edition)
    assert stored is not None, "show_draw stored it"
    if gm_address is not None:
        stored.confirmed = sorted(set(stored.confirmed) | set(mine))
        if any(s.tier not in stored.confirmed for s in tiers):
            return dataclasses.replace(fact, confirmed=tuple(stored.confirmed))
    people = {p.id: p for p in session.scalars(select(Player).where(Player.id.in_(_ids(drawn))))}
    first_races: dict[str, Game] = {}  # each other GM's first new race (they are told it is made)
    for old, tier, drawn_tier in zip(tiers, fact.tiers, drawn, strict=True):
        season = Season(
            name=tier.season,
            kind=old.kind,
            gm_address=old.gm_address,
            scoring=old.scoring,
            drop_results=old.drop_results,
            no_show_penalty=old.no_show_penalty,
            nmr_penalty=old.nmr_penalty,
            races_planned=old.races_planned,
            tracks=list(old.tracks),
            created_at=shell.now(),
            series=series,
            tier=tier.tier,
            edition=fact.edition,
            promote=old.promote,
            relegate=old.relegate,
            min_field=old.min_field,
            bench_newcomers=old.bench_newcomers,
        )
        session.add(season)
        session.flush()
        seated, handed = _seat_names(session, tiers, drawn_tier, people)
        try:
            level = next((seat.robot_level for seat in old.races[-1].game.seats if seat.robot), "normal")
            robots = [f"{name}:{level}" for name in tier.robots]
            race = season_races.make_race(shell, session, season, 1, old.races[-1].game, seated, robots, handed, tier)
        except turns.GameError as refused:
            raise seasons.SeasonRequestError(say("season_next_refused", tier=tier.tier, reason=str(refused))) from None
        if gm_address is not None and season.gm_address != gm_address.strip().lower():
            first_races.setdefault(season.gm_address, race)
    stored.made_at = shell.now()
    made = dataclasses.replace(fact, made=True)
    # A GM who confirmed before another GM's confirm made the draw is told it is made (the
    # confirming GM reads it in the answer to their CONFIRM).
    for race in first_races.values():
        letters.notice(
            shell,
            session,
            ToGm(race),
            say("season_made_title", series=series, edition=fact.edition),
            say("season_made_by_another", draw=made, game=race.name),
            kind="season_made",
        )
    drawn_in = [int(d.driver) for tier in drawn for d in tier if d.move is Move.NEW]
    for entry in session.scalars(select(SeriesEntry).where(SeriesEntry.series == series)):
        if entry.player_id in drawn_in:
            session.delete(entry)
    return made


def _ids(drawn: tuple[tuple[Drawn, ...], ...]) -> list[int]:
    return [int(d.driver) for tier in drawn for d in tier]


def robot_names(count: int) -> tuple[str, ...]:
    """The seats of the robots a drawn tier's first race seats: ``robot-1``, ``robot-2`` ..."""
    return tuple(f"robot-{n}" for n in range(1, count + 1))


def _seat_names(
    session: Session, tiers: Sequence[Season], drawn: Sequence[Drawn], people: dict[int, Player]
) -> tuple[list[tuple[str, Player]], set[str]]:
    """Each drawn driver's seat in the new race: the seat's name they held in their tier's last
    race (a number after it when two drivers held the same name in different tiers), a
    newcomer's from their name; and the seats among them whose name was another person's (taken
    over from the bench or by REPLACE), which the letters show with their holder's name."""
    held: dict[str, str] = {}
    was_handed: set[str] = set()
    for season in tiers:
        if season.races:
            for seat in season.races[-1].game.seats:
                if seat.active and not seat.robot:
                    held[seasons.driver_of(seat)] = seat.name
                    if seat.handed_over:
                        was_handed.add(seasons.driver_of(seat))
    seated: list[tuple[str, Player]] = []
    handed: set[str] = set()
    taken: set[str] = set()
    for d in drawn:
        base = held.get(d.driver) or _seat_of_name(people[int(d.driver)].name, d.driver)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base[:26]}-{n}"
        taken.add(name)
        seated.append((name, people[int(d.driver)]))
        if d.driver in was_handed:
            handed.add(name)
    return seated, handed


def _seat_of_name(name: str, driver: str) -> str:
    """A newcomer's seat: their name in lower-case letters, digits and '-' (``p<number>``
    when nothing of it is left)."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:24].strip("-")
    return cleaned if cleaned and NAME_RE.match(cleaned) and cleaned != GM_SEAT else f"p{driver}"


def digest_draws(session: Session, gm_address: str, now: datetime) -> list[SeriesDraw]:
    """The draws waiting for `gm_address` (the GM of a tier of the series) whose last race ended
    in the last `DIGEST_DAYS` days: what the GM's digest shows (each stored if not shown before)."""
    address = gm_address.strip().lower()
    waiting: list[SeriesDraw] = []
    for series in _recent_series(session, now):
        tiers = latest_edition(session, series)
        if not any(s.gm_address == address for s in tiers):
            continue
        found = show_draw(session, series, now, address)
        if found is not None:
            waiting.append(found[0])
    return waiting


def digest_gms(session: Session, now: datetime) -> set[str]:
    """The GMs with a draw waiting for them (`digest_draws`), who get a digest for it even with
    no game running."""
    found: set[str] = set()
    for series in _recent_series(session, now):
        tiers = latest_edition(session, series)
        if drawable(tiers):
            found |= {s.gm_address for s in tiers}
    return found


def _recent_series(session: Session, now: datetime) -> list[str]:
    since = now - timedelta(days=DIGEST_DAYS)
    ended = session.execute(
        select(Season.series, func.max(Game.finished_at))
        .join(SeasonRace, SeasonRace.season_id == Season.id)
        .join(Game, Game.id == SeasonRace.game_id)
        .where(Season.status == SeasonStatus.FINISHED)
        .group_by(Season.series)
    )
    return sorted(series for series, last in ended if last is not None and as_utc(last) >= since)


__all__ = [
    "DIGEST_DAYS",
    "confirm_next",
    "digest_draws",
    "digest_gms",
    "draw_of",
    "enter_series",
    "open_to_newcomers",
    "newcomers",
    "robot_names",
    "robots_for",
    "gm_of_a_tier",
    "drawable",
    "latest_edition",
    "lot_for",
    "redraw",
    "series_of",
    "show_draw",
]
