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

from bot.games.seasons import driven_seats, race_result, result_from
from bot.models import Game, GameStatus, Player
from bot.ratings import Change, RatedRace, Rating, changes_of, rate
from rules import game_names
from rules.api import AnyGame, GameState
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


def changes_shown(
    session: Session, game: Game, rules: AnyGame, state: GameState, shown_after: int
) -> dict[int, Change]:
    """What the race `game`, finishing now in `state` (not yet written), does to the ratings of
    its people who are to be shown it, by seat number: the race is rated, the seat's holder
    opted in (RATING ON) and has finished `shown_after` rated races of its kind, this one
    counted. It counts after every other finished race of its kind."""
    if not rated(game):
        return {}
    wanting = {str(seat.player_id): seat.id for seat in game.seats if seat.player.rating}
    if not wanting:
        return {}  # nobody to tell: the ratings are not worked out
    earlier = [race for race in rated_races(session, game.kind) if race.game != game.name]
    this = races_of([(game, result_from(game, rules, state, driven_seats(session, game), 0, 0))])
    _, changes = changes_of([*earlier, *this], game.name)
    return {
        wanting[change.person]: change
        for change in changes
        if change.person in wanting and change.after.races >= shown_after
    }


@dataclass(frozen=True, slots=True)
class Rated:
    """One person's rating in one kind of game: `place` among those listed (best rating
    first), and whether it is `shown` (they sent RATING ON and have finished `shown_after`
    rated races of the kind)."""

    kind: str
    place: int
    player: int
    name: str
    address: str
    rating: Rating
    shown: bool


def kind_key(text: str) -> str | None:
    """The kind of game `text` names (``speed-circuit`` or ``Speed_Circuit``), None if none."""
    key = text.strip().lower().replace("-", "_")
    return key if key in game_names() else None


def kinds_raced(session: Session) -> list[str]:
    """Every kind of game with a finished game, in name order."""
    return sorted(set(session.scalars(select(Game.kind).where(Game.status == GameStatus.FINISHED).distinct())))


def standings(session: Session, kind: str, shown_after: int, *, shown_only: bool) -> list[Rated]:
    """Everyone rated in `kind`, best rating (the number shown, then the estimate behind it)
    first, then by name; with `shown_only`, only those whose rating is shown (for the public
    page: RATING ON and `shown_after` rated races finished)."""
    ratings = ratings_of(session, kind)
    ids = [int(person) for person in ratings]
    people = {p.id: p for p in session.scalars(select(Player).where(Player.id.in_(ids)))} if ids else {}
    listed = [
        (people[int(key)], rating, bool(people[int(key)].rating) and rating.races >= shown_after)
        for key, rating in ratings.items()
        if int(key) in people
    ]
    listed = [row for row in listed if row[2] or not shown_only]
    listed.sort(key=lambda row: (-row[1].shown, -row[1].ordinal, row[0].name.lower(), row[0].id))
    return [
        Rated(kind, place, player.id, player.name, player.address, rating, shown)
        for place, (player, rating, shown) in enumerate(listed, start=1)
    ]


def ratings_of_person(session: Session, player: Player, shown_after: int) -> list[Rated]:
    """The person's rating in every kind of game they have finished a rated race of, by kind;
    `place` is their place among everyone rated in that kind."""
    found: list[Rated] = []
    for kind in kinds_raced(session):
        mine = next(
            (row for row in standings(session, kind, shown_after, shown_only=False) if row.player == player.id), None
        )
        if mine is not None:
            found.append(mine)
    return found


__all__ = [
    "Rated",
    "changes_shown",
    "kind_key",
    "kinds_raced",
    "order_of",
    "races_of",
    "rated",
    "rated_races",
    "ratings_of",
    "ratings_of_person",
    "standings",
]
