"""A season's next race, created and started by the bot when its last race ends
(docs/championships.md, "The next race").

`next_races` runs with every tick: for each running season whose last race has finished, it
makes the next race as a new game with the last race's settings (deadlines, zone, grace, options,
NMR limit, press) and the next track of the rotation, its seats the last race's people in grid
order (the season's table, leader first) and its robots behind them, and starts it: every driver gets a turn sheet saying
which race of the season it is and where they start. The season's last race finished, the season
is finished. All in one transaction per season: a crash makes the race whole or not at all, and
the next tick makes it then (its round is the season's next one, never a second time)."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.facts import DrawnTier
from bot.games import seasons, turns
from bot.letters.words import say
from bot.models import Game, GameStatus, Player, PressMode, Season, SeasonRace, SeasonStatus
from bot.shell import Shell
from rules import find_game
from rules.season import grid, standings

log = logging.getLogger("flagman.seasons")


def next_races(shell: Shell) -> list[str]:
    """The races made now (their game names), for the seasons whose last race has finished."""
    made: list[str] = []
    with shell.db.read() as reader:
        ids = list(reader.scalars(select(Season.id).where(Season.status == SeasonStatus.RUNNING)))
    for season_id in ids:
        with shell.db.transaction() as session:
            season = session.get(Season, season_id, with_for_update=True)
            if season is None or season.status != SeasonStatus.RUNNING:
                continue
            try:
                name = _advance(shell, session, season)
            except (turns.GameError, seasons.SeasonRequestError) as refused:
                # The last race's people cannot make a race of it (too few left): the GM makes it.
                log.warning("season %s: the next race cannot be made: %s", season.name, refused)
                continue
            if name is not None:
                made.append(name)
    return made


def _advance(shell: Shell, session: Session, season: Season) -> str | None:
    if not season.races:
        return None
    last = season.races[-1].game
    if last.status != GameStatus.FINISHED:
        return None
    round_ = len(season.races) + 1
    if round_ > season.races_planned:
        season.status = SeasonStatus.FINISHED
        log.info("season %s finished after %d races", season.name, len(season.races))
        return None
    table = standings(seasons.season_rules(season), seasons.results_of(session, season))
    people = [seat for seat in last.seats if not seat.robot]
    order = grid(table, [seasons.driver_of(seat) for seat in people])
    by_driver = {seasons.driver_of(seat): seat for seat in people}
    seated = [(by_driver[driver].name, by_driver[driver].player) for driver in order]
    robots = [f"{seat.name}:{seat.robot_level}" for seat in last.seats if seat.robot]
    handed = {seat.name for seat in people if seat.handed_over}
    return make_race(shell, session, season, round_, last, seated, robots, handed).name


def make_race(
    shell: Shell,
    session: Session,
    season: Season,
    round_: int,
    last: Game,
    seated: Sequence[tuple[str, Player]],
    robots: Sequence[str] = (),
    handed: Collection[str] = (),
    drawn: DrawnTier | None = None,
) -> Game:
    """Race `round_` of `season`, made and started now with the settings of the race `last`
    (deadlines, zone, grace, early resolution, press, reminders, NMR limit, options) and the
    track of the rotation; its seats `seated` (seat name, person) in grid order, then the
    `robots` (``NAME:LEVEL``) at the back. The seats named in `handed` keep a name that was
    another person's (a seat taken over from the bench, or by REPLACE): they are marked handed
    over, so the letters show them with their holder's name, "anna (Kim)", as in the race before.
    `drawn`: the tier of a series' new season this race opens (its grid is the draw, each
    driver's move beside their name), None: the grid is the season's table."""
    options = {k: str(v) for k, v in (last.options or {}).items()}
    options.update(seasons.track_for(season, round_))
    name = _free_name(session, season.name, round_)
    note = say(
        "season_next_race",
        season=season.name,
        round=round_,
        races=season.races_planned,
        grid=[player.name for _, player in seated],
        drawn=drawn,
        series=season.series,
        edition=season.edition,
    )
    game = turns.create_game(
        shell,
        session,
        kind=season.kind,
        name=name,
        players=[turns.PlayerSpec(seat, player.address, player.name, player.timezone) for seat, player in seated],
        gm_address=season.gm_address,
        options=options,
        deadline=last.deadline_spec,
        timezone=last.timezone,
        seed=(last.seed + round_) % (1 << 62),
        grace=f"{last.grace_minutes}m" if last.grace_minutes else "",
        early_resolution=last.early_resolution,
        press=PressMode(last.press),
        robot_seats=robots,
        signup=True,  # started below, once the seats taken over are marked
    )
    for seat in game.seats:
        seat.handed_over = seat.name in handed and not seat.robot
    turns.start_game(shell, session, game, note=note)
    game.nmr_limit, game.nmr_action, game.reminder_spec = last.nmr_limit, last.nmr_action, last.reminder_spec
    session.add(SeasonRace(season_id=season.id, round=round_, game_id=game.id))
    session.flush()
    log.info("season %s: race %d is %s (%s)", season.name, round_, name, find_game(season.kind).title)
    return game


def _free_name(session: Session, season: str, round_: int) -> str:
    """The next race's game name: ``<season>-r<round>``, with a number after it if taken."""
    base = f"{season[:24]}-r{round_}"
    name, n = base, 1
    while session.scalar(select(Game.id).where(Game.name == name)) is not None:
        n += 1
        name = f"{base}-{n}"
    return name


__all__ = ["make_race", "next_races"]
