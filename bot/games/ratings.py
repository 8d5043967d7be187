"""The rated races of a kind of game, read from the record, and each person's rating from them
(`bot.ratings`), stored and kept equal to a recomputation from the record.

A race is rated when it finished, is not a practice game, no seat of it was driven by a robot
for any turn (a robot seat as it ended, or a seat that passed to or from a robot under way: the
GM's REPLACE ... ROBOT, a seat a robot drove while it was offered to the substitutes bench),
and it had at least two people in it. Its finishing order is the rules' final standings: the finishers by their
place (a shared place shared), then everyone else (did not finish, no-show, out by the NMR
limit, dropped) sharing the place behind the last finisher.

The ratings of a kind are stored (`StoredRating`, with `RatingKind` saying which rated races
they count: how many, and a digest of their game numbers in the order they ended). A rated
final adds its race to them (`final_changes`, written with the turn: `write`); a ROLLBACK of a finished race works the kind
out again (`rebuild`), as `flagman rating rebuild` does for every kind. Whoever reads them
(`ratings_of`) first checks the digest against the record's rated races (one query of game
numbers, no results read): stored ratings that do not count exactly those races are never
used, they are worked out again from the record instead. So the ratings read always equal a
recomputation from the archived results, in the order the races ended.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Exists, Select, delete, exists, insert, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from bot.games import robots
from bot.games.seasons import driven_seats, race_result, result_from
from bot.models import Game, GameStatus, Player, RatingKind, Seat, SeatChange, StoredRating
from bot.ratings import Change, RatedRace, Rating, changes_of, rate
from rules import game_names
from rules.api import AnyGame, GameState
from rules.season import Outcome, RaceResult


def rated(game: Game) -> bool:
    """Whether `game`, finished, counts for ratings as far as the game itself says (not a
    practice game, no robot seat as it ended); `robot_driven` says the rest."""
    return game.status == GameStatus.FINISHED and not game.practice and not any(seat.robot for seat in game.seats)


def _robot_changes(game_id: InstrumentedAttribute[int] | int) -> Exists:
    """Whether a seat of the game changed hands to or from a robot while it was under way (the
    GM's REPLACE ... ROBOT, a seat offered to the substitutes bench, a robot seat handed to a
    person): a robot drove it for some turn, whoever holds it at the end."""
    robot = select(Player.id).where(Player.address == robots.ROBOT_ADDRESS).scalar_subquery()
    return exists().where(
        SeatChange.game_id == game_id, or_(SeatChange.player_id == robot, SeatChange.successor_id == robot)
    )


def robot_driven(session: Session, game: Game) -> bool:
    """Whether a robot drove one of `game`'s seats for any turn: a robot seat now, or a seat
    that passed to or from a robot while it was under way."""
    return any(seat.robot for seat in game.seats) or bool(session.scalar(select(_robot_changes(game.id))))


def unrated_robot(session: Session, game: Game) -> frozenset[int]:
    """The seats whose holders opted in (RATING ON) of `game`, finished between people alone,
    that is not rated because a robot drove a seat of it for a while (their final result says
    so); empty for any other game."""
    if not rated(game) or not robot_driven(session, game):
        return frozenset()
    return frozenset(seat.id for seat in game.seats if not seat.robot and seat.player.rating)


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


def _rated_games(kind: str) -> Select[Game]:
    """The query of the rated games of `kind`, in the order they ended (then by game number)."""
    return (
        select(Game)
        .where(
            Game.kind == kind,
            Game.status == GameStatus.FINISHED,
            Game.practice.is_(False),
            ~exists().where(Seat.game_id == Game.id, Seat.robot.is_(True)),
            ~_robot_changes(Game.id),
        )
        .order_by(Game.finished_at, Game.id)
    )


def rated_ids(session: Session, kind: str) -> list[int]:
    """The game numbers of every rated race of `kind`, in the order they ended."""
    return list(session.scalars(_rated_games(kind).with_only_columns(Game.id)))


def digest(ids: Sequence[int]) -> str:
    """What identifies a sequence of rated races: the SHA-256 of their game numbers in order."""
    return hashlib.sha256(",".join(str(i) for i in ids).encode()).hexdigest()


def rated_races(session: Session, kind: str) -> list[RatedRace]:
    """Every rated race of `kind`, in the order they ended (then by game number), each read
    from its archived result."""
    games = session.scalars(_rated_games(kind))
    return races_of((game, race_result(session, game, 0) if rated(game) else None) for game in games)


def _counts(session: Session, kind: str, ids: Sequence[int]) -> bool:
    counted = session.get(RatingKind, kind)
    return counted is not None and counted.races == len(ids) and counted.digest == digest(ids)


def current(session: Session, kind: str) -> bool:
    """Whether the stored ratings of `kind` count exactly the record's rated races."""
    return _counts(session, kind, rated_ids(session, kind))


def _stored(session: Session, kind: str, ids: Sequence[int]) -> dict[str, Rating] | None:
    """The stored ratings of `kind` if they count exactly the rated races `ids`, else None."""
    if not _counts(session, kind, ids):
        return None
    rows = session.scalars(select(StoredRating).where(StoredRating.kind == kind))
    return {str(row.player_id): Rating(row.mu, row.sigma, row.races) for row in rows}


@dataclass(frozen=True, slots=True)
class RatingWrites:
    """What a rated final writes of the ratings (`write`): the ratings of `kind` now count the
    rated races `ids`; `rows` (player number, mu, sigma, races) replace those people's stored
    ratings, or with `every`, all of the kind's."""

    kind: str
    ids: tuple[int, ...]
    rows: tuple[tuple[int, float, float, int], ...]
    every: bool


def _writes(
    kind: str, ids: Sequence[int], ratings: dict[str, Rating], people: Iterable[str], every: bool
) -> RatingWrites:
    rows = tuple((int(p), ratings[p].mu, ratings[p].sigma, ratings[p].races) for p in dict.fromkeys(people))
    return RatingWrites(kind, tuple(ids), rows, every)


def write(session: Session, writes: RatingWrites) -> None:
    """Store `writes`: a statement per table (the objects need not be loaded)."""
    kind = writes.kind
    gone = delete(StoredRating).where(StoredRating.kind == kind)
    if not writes.every:
        gone = gone.where(StoredRating.player_id.in_([row[0] for row in writes.rows]))
    session.execute(gone, execution_options={"synchronize_session": False})
    if writes.rows:
        session.execute(
            insert(StoredRating),
            [{"kind": kind, "player_id": p, "mu": mu, "sigma": sigma, "races": n} for p, mu, sigma, n in writes.rows],
        )
    session.execute(delete(RatingKind).where(RatingKind.kind == kind), execution_options={"synchronize_session": False})
    session.execute(insert(RatingKind), [{"kind": kind, "races": len(writes.ids), "digest": digest(writes.ids)}])
    for held in list(session.identity_map.values()):  # loaded before: read back as written
        if isinstance(held, StoredRating | RatingKind) and held.kind == kind:
            session.expire(held)


def rebuild(session: Session, kind: str) -> dict[str, Rating]:
    """Work the ratings of `kind` out again from the archived results and store them (every
    stored rating of the kind replaced)."""
    session.flush()  # the record as this session has it (a ROLLBACK's game reopened)
    ids = rated_ids(session, kind)
    ratings = rate(rated_races(session, kind))
    write(session, _writes(kind, ids, ratings, ratings, every=True))
    return ratings


def ratings_of(session: Session, kind: str) -> dict[str, Rating]:
    """Every person's rating in `kind` (keyed by player number as text): the stored ones when
    they count exactly the record's rated races, else worked out from the record."""
    stored = _stored(session, kind, rated_ids(session, kind))
    return stored if stored is not None else rate(rated_races(session, kind))


def final_changes(
    session: Session, game: Game, rules: AnyGame, state: GameState
) -> tuple[list[Change], RatingWrites | None]:
    """What the race `game`, finishing now in `state` (nothing written yet: `session` may be a
    snapshot), does to the ratings of its people, and what storing that writes (`write`): it
    counts after every other rated race of its kind. The others' ratings are the stored ones
    when they count exactly those races (no result read again), else worked out from the record
    (and then all stored anew)."""
    if not rated(game) or robot_driven(session, game):
        return [], None
    earlier = [i for i in rated_ids(session, game.kind) if i != game.id]
    before = _stored(session, game.kind, earlier)
    every = before is None
    if before is None:
        before = rate(race for race in rated_races(session, game.kind) if race.game != game.name)
    this = races_of([(game, result_from(game, rules, state, driven_seats(session, game), 0, 0))])
    if not this:
        return [], (_writes(game.kind, earlier, before, before, every=True) if every else None)
    after, changes = changes_of(this, game.name, start=before)
    people = [*(before if every else ()), *(c.person for c in changes)]
    return changes, _writes(game.kind, [*earlier, game.id], after, people, every)


def changes_shown(changes: Iterable[Change], game: Game, shown_after: int) -> dict[int, Change]:
    """Of what a final did to the ratings (`final_changes`), what the people to be shown it
    read, by seat number: the seat's holder opted in (RATING ON) and has finished
    `shown_after` rated races of its kind, this one counted."""
    wanting = {str(seat.player_id): seat.id for seat in game.seats if seat.player.rating}
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
    "RatingWrites",
    "changes_shown",
    "current",
    "digest",
    "final_changes",
    "rebuild",
    "rated_ids",
    "robot_driven",
    "unrated_robot",
    "kind_key",
    "kinds_raced",
    "order_of",
    "races_of",
    "rated",
    "rated_races",
    "ratings_of",
    "ratings_of_person",
    "standings",
    "write",
]
