"""Ratings: a Plackett-Luce rating over finishing orders (openskill's Weng-Lin model), per
kind of game, worked out from the finished, rated races in the order they ended.

Pure arithmetic, nothing of the database: the caller (`bot.games.ratings`) feeds the rated
races of one kind of game in the order they ended; the same races in the same order always
give the same ratings. A person's rating is a `Rating`: `mu` (the skill estimated), `sigma` (how
unsure that is) and the `ordinal` shown, mu - 3 sigma, a number that only rises with rated races
finished well. Everyone starts at openskill's defaults (mu 25, sigma 25/3, so ordinal 0).

Each race is a finishing order: groups of people, best first, the people of a group sharing
their place (a shared place, or all of those who did not finish, behind every finisher).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

MU = 25.0
SIGMA = MU / 3.0
Z = 3.0  # the ordinal: mu - Z sigma
# The spread of one race's performance about a driver's skill: three times openskill's default
# (25/6). A race of these games turns on dice and one another's moves as much as on skill, and
# with its default the rating trusts each result too much: in `python -m bench --only ratings`
# (simulated fields, bench/README.md) 12.5 predicted held-out races best of 25/6, 25/3, 12.5
# and 16 on every seed tried.
BETA = MU / 2.0


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA
    races: int = 0  # rated races counted

    @property
    def ordinal(self) -> float:
        return self.mu - Z * self.sigma

    @property
    def shown(self) -> int:
        """The number a person reads: the ordinal, rounded."""
        return round(self.ordinal)


@dataclass(frozen=True, slots=True)
class RatedRace:
    """One rated race: `order`, groups of people's keys, best place first."""

    game: str
    order: tuple[tuple[str, ...], ...]

    @property
    def people(self) -> tuple[str, ...]:
        return tuple(person for group in self.order for person in group)


@dataclass(frozen=True, slots=True)
class Change:
    """What one race did to one person's rating, and the race's reason for it: of the others
    rated above them before the race, how many they finished ahead of (`beat_above`); of those
    rated below them, how many finished ahead of them (`lost_below`)."""

    person: str
    before: Rating
    after: Rating
    beat_above: int
    lost_below: int
    field: int

    @property
    def delta(self) -> int:
        return self.after.shown - self.before.shown

    @property
    def first(self) -> bool:
        return self.before.races == 0


def _model(beta: float = BETA) -> PlackettLuce:
    return PlackettLuce(mu=MU, sigma=SIGMA, beta=beta)


def _places(race: RatedRace) -> dict[str, int]:
    return {person: place for place, group in enumerate(race.order) for person in group}


def _rate_one(model: PlackettLuce, ratings: dict[str, Rating], race: RatedRace) -> list[Change]:
    people = race.people
    if len(people) < 2 or len(set(people)) != len(people):
        return []  # one person (or the same person twice) is no race to rate
    places = _places(race)
    before = {person: ratings.get(person, Rating()) for person in people}
    teams = [[model.rating(mu=before[p].mu, sigma=before[p].sigma)] for p in people]
    rated = model.rate(teams, ranks=[float(places[p]) for p in people])
    changes: list[Change] = []
    for person, team in zip(people, rated, strict=True):
        new: PlackettLuceRating = team[0]
        after = Rating(new.mu, new.sigma, before[person].races + 1)
        mine = before[person].ordinal
        beat_above = sum(1 for o in people if before[o].ordinal > mine and places[o] > places[person])
        lost_below = sum(1 for o in people if before[o].ordinal < mine and places[o] < places[person])
        changes.append(Change(person, before[person], after, beat_above, lost_below, len(people)))
    for change in changes:
        ratings[change.person] = change.after
    return changes


def rate(
    races: Iterable[RatedRace], *, beta: float = BETA, start: Mapping[str, Rating] | None = None
) -> dict[str, Rating]:
    """Every person's rating after `races`, in the order given (the order they ended), from
    `start` (the ratings before them; none: everyone new); `beta`: the spread of a race's
    performance (the bench tries others)."""
    model, ratings = _model(beta), dict(start or {})
    for race in races:
        _rate_one(model, ratings, race)
    return ratings


def changes_of(
    races: Sequence[RatedRace], game: str, *, start: Mapping[str, Rating] | None = None
) -> tuple[dict[str, Rating], list[Change]]:
    """The ratings after `races` (from `start`, as `rate`), and what the race of `game` among
    them did (empty if it is not one of them)."""
    model, ratings = _model(), dict(start or {})
    found: list[Change] = []
    for race in races:
        changes = _rate_one(model, ratings, race)
        if race.game == game:
            found = changes
    return ratings, found


def order_probability(ratings: Mapping[str, Rating], order: Sequence[str], *, beta: float = BETA) -> float:
    """The Plackett-Luce probability of the finishing order `order` (best first, no shared
    places) from `ratings` (unknown people at the start), with openskill's strengths
    exp(mu / c), c the field's combined spread."""
    rs = [ratings.get(p, Rating()) for p in order]
    c = math.sqrt(sum(r.sigma**2 + beta**2 for r in rs))
    strengths = [math.exp(r.mu / c) for r in rs]
    p = 1.0
    for i in range(len(strengths)):
        p *= strengths[i] / sum(strengths[i:])
    return p


__all__ = ["BETA", "MU", "SIGMA", "Change", "RatedRace", "Rating", "changes_of", "order_probability", "rate"]
