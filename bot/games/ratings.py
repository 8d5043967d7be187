"""The rated races of a kind of game, read from the record, and each person's rating from them
(`bot.ratings`), never stored: worked out again each time from the finished races the database
holds, in the order they ended.

A race is rated when it finished, is not a practice game, has no robot seat, and had at least
two people in it. Its finishing order is the rules' final standings: the finishers by their
place (a shared place shared), then everyone else (did not finish, no-show, out by the NMR
limit, dropped) sharing the place behind the last finisher.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.games.seasons import race_result
from bot.models import Game, GameStatus, Player
from bot.ratings import Change, RatedRace, Rating, changes_of, rate
from rules.season import Outcome, RaceResult


def rated(game: Game) -> bool:
    """Whether `game`, finished, counts for ratings (not a practice game, no robot seat)."""
    return game.status == GameStatus.FINISHED and not game.practice and not any(seat.robot for seat in game.seats)


def order_of(game: Game, result: RaceResult) -> tuple[tuple[str, ...], ...]:
    """The finishing order of a finished race: groups of people (their player numbers), best first."""
    places: dict[int, list[str]] = {}
    behind: list[str] = []
    for finish in result.finishes:
        if finish.outcome == Outcome.FINISHED and finish.place > 0:
            places.setdefault(finish.place, []).append(finish.driver)
        else:
            behind.append(finish.driver)
    groups = [tuple(sorted(places[place])) for place in sorted(places)]
    if behind:
        groups.append(tuple(sorted(behind)))
    return tuple(groups)


def races_of(finished: Iterable[tuple[Game, RaceResult | None]]) -> list[RatedRace]:
    """The rated races among `finished` (games and their results, in the order they ended)."""
    races: list[RatedRace] = []
    for game, result in finished:
        if result is None or not rated(game):
            continue
        race = RatedRace(game.name, order_of(game, result))
        if len(race.people) >= 2:
            races.append(race)
    return races


def rated_races(session: Session, kind: str) -> list[RatedRace]:
    """Every rated race of `kind`, in the order they ended (then by game number)."""
    games = session.scalars(
        select(Game)
        .where(Game.kind == kind, Game.status == GameStatus.FINISHED, Game.practice.is_(False))
        .order_by(Game.finished_at, Game.id)
    )
    return races_of((game, race_result(session, game, 0) if rated(game) else None) for game in games)


def ratings_of(session: Session, kind: str) -> dict[str, Rating]:
    """Every person's rating in `kind` (keyed by player number as text)."""
    return rate(rated_races(session, kind))


@dataclass(frozen=True, slots=True)
class Shown:
    """What a person's results letter says of their rating: the change the race made."""

    change: Change
    kind: str


def shown_for(session: Session, game: Game, player: Player, shown_after: int) -> Shown | None:
    """The rating change `game` made for `player`, if it is to be shown to them: the game is
    rated, they opted in (RATING ON) and have finished `shown_after` rated races of its kind."""
    if not player.rating or not rated(game):
        return None
    _, changes = changes_of(rated_races(session, game.kind), game.name)
    for change in changes:
        if change.person == str(player.id) and change.after.races >= shown_after:
            return Shown(change, game.kind)
    return None


__all__ = ["Shown", "order_of", "races_of", "rated", "rated_races", "ratings_of", "shown_for"]
