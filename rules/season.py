"""A season's points and standings, from its races' results alone. Pure: no clock, no database.

The shell feeds it what the archive holds of each race (`RaceResult`: who finished where, who
did not finish, who never showed, who was put out by the NMR limit) and the season's rules
(`SeasonRules`: the scoring table, the dropped results, the penalties); `standings` gives the
table. A correction (a ROLLBACK of a race's last turn and its new result) is another
`RaceResult` for the same race with a higher `correction`: the highest counts, whatever order
the results came in, so the table is always a recomputation from the archived results.

Scoring (docs/championships.md):

* a finisher scores the table's points for their place (a place shared in the race: each of
  them scores that place's points); past the end of the table, nothing;
* the holder of a race's honour (the pole ...) scores the table's bonus for it, whatever their
  outcome, as part of that race's score (dropped with it);
* a driver classified "did not finish" by the game scores nothing;
* a no-show (a seat that never sent orders) scores nothing and loses `no_show_penalty` points;
* a driver put out by the NMR limit scores nothing and loses `nmr_penalty` points;
* each driver's best `races - drop` race scores count (`races`: the races the season runs): a
  driver's lowest scores are dropped only once they have more results than that, `drop` of them
  at most (the earliest race first among equals) -- after race 1 of 3 with one dropped, the one
  result counts, and a substitute who drove two of the three keeps both; penalties are never
  dropped;
* ties on points are broken by countback: more wins, then more second places, and so on, over
  every race (dropped ones too); drivers still level share the place (names in order).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Driver = str
"""A season's driver: the shell's key for a person across the season's games."""

F1_POINTS: tuple[int, ...] = (25, 18, 15, 12, 10, 8, 6, 4, 2, 1)
# Championship Formula Racing's own points table is not in the sources the project holds; this
# preset is our choice (docs/championships.md): eight scoring places, 10-8-6-5-4-3-2-1.
CFR_POINTS: tuple[int, ...] = (10, 8, 6, 5, 4, 3, 2, 1)
MAX_TABLE = 40  # places a custom table may score
MAX_POINTS = 1000  # points a place may score


class SeasonError(ValueError):
    """A season's setting that cannot be used (a table, a number of dropped results ...)."""


class Preset(enum.StrEnum):
    """The scoring tables a season may name."""

    F1 = "f1"
    CFR = "cfr"
    LINEAR = "linear"  # the field's size for a win, one less a place, 1 for last
    CUSTOM = "custom"


HONOURS = ("pole", "lap-leader", "fastest-lap")  # the bonus points a scoring table may give
MAX_BONUS = 100  # points an honour may score


@dataclass(frozen=True, slots=True)
class ScoringTable:
    """Points by place (1-based); `LINEAR` has no fixed table: it counts the race's field.
    `bonus`: points for a race's honours (``("pole", 1)``: one point for the pole), each
    written after the table, ``f1+pole:1``."""

    preset: Preset
    points: tuple[int, ...] = ()
    bonus: tuple[tuple[str, int], ...] = ()

    def bonus_for(self, honour: str) -> int:
        return dict(self.bonus).get(honour, 0)

    def for_place(self, place: int, field: int) -> int:
        if self.preset is Preset.LINEAR:
            return max(0, field - place + 1)
        return self.points[place - 1] if 1 <= place <= len(self.points) else 0

    def shown(self) -> str:
        """The table as the CLI and the mails write it: ``f1``, ``linear``, ``custom:5,3,1``,
        then its bonus points, ``f1+pole:1``."""
        base = "custom:" + ",".join(str(p) for p in self.points) if self.preset is Preset.CUSTOM else self.preset.value
        return base + "".join(f"+{honour}:{points}" for honour, points in self.bonus)

    @staticmethod
    def parse(text: str) -> ScoringTable:
        """``f1``, ``cfr``, ``linear`` or ``custom:25,18,15`` (points for 1st, 2nd ..., none
        rising), then any bonus points for a race's honours, each ``+<honour>:<points>``
        (``f1+pole:1+fastest-lap:1``; the honours are `HONOURS`, each given once)."""
        table, *extras = text.strip().lower().split("+")
        bonus: list[tuple[str, int]] = []
        for extra in extras:
            honour, _, points = extra.strip().partition(":")
            if honour not in HONOURS or any(honour == known for known, _ in bonus):
                raise SeasonError(
                    "bonus points are +<honour>:<points> after the table, each honour once, e.g. f1+pole:1; "
                    "the honours: " + ", ".join(HONOURS)
                )
            if not points.isdigit() or len(points) > 3 or int(points) > MAX_BONUS:
                raise SeasonError(f"a bonus is a whole number of points from 0 to {MAX_BONUS}, e.g. +pole:1")
            bonus.append((honour, int(points)))
        found = ScoringTable._table(table)
        return ScoringTable(found.preset, found.points, tuple(bonus))

    @staticmethod
    def _table(text: str) -> ScoringTable:
        word, _, rest = text.strip().partition(":")
        if word == Preset.F1 and not rest:
            return ScoringTable(Preset.F1, F1_POINTS)
        if word == Preset.CFR and not rest:
            return ScoringTable(Preset.CFR, CFR_POINTS)
        if word == Preset.LINEAR and not rest:
            return ScoringTable(Preset.LINEAR)
        if word == Preset.CUSTOM:
            items = [item.strip() for item in rest.split(",")]
            if not rest or not all(item.isdigit() and len(item) <= 4 for item in items):
                raise SeasonError("a custom table is points for each place, e.g. custom:10,6,4,3,2,1")
            points = tuple(int(item) for item in items)
            if len(points) > MAX_TABLE or max(points) > MAX_POINTS:
                raise SeasonError(f"a custom table scores at most {MAX_TABLE} places, at most {MAX_POINTS} points each")
            if any(later > earlier for earlier, later in zip(points, points[1:], strict=False)):
                raise SeasonError("a custom table never gives a place more points than the place before it")
            return ScoringTable(Preset.CUSTOM, points)
        raise SeasonError("the scoring table is f1, cfr, linear or custom:<points>, e.g. custom:10,6,4,3,2,1")


@dataclass(frozen=True, slots=True)
class SeasonRules:
    table: ScoringTable
    drop: int = 0  # each driver's lowest race scores left out, once they have more than races - drop
    no_show_penalty: int = 0
    nmr_penalty: int = 0
    races: int = 0  # the races the season runs (0: not known, so each driver's `drop` lowest always go)

    def dropped_of(self, results: int) -> int:
        """How many of a driver's `results` race scores are dropped: those past the best
        `races - drop` that count, `drop` at most."""
        if not self.races:
            return self.drop
        return min(self.drop, max(0, results - (self.races - self.drop)))

    def __post_init__(self) -> None:
        for value in (self.drop, self.no_show_penalty, self.nmr_penalty):
            if not 0 <= value <= MAX_POINTS:
                raise SeasonError(f"dropped results and penalties are whole numbers from 0 to {MAX_POINTS}")
        if not 0 <= self.races <= MAX_POINTS:
            raise SeasonError(f"a season runs 0 to {MAX_POINTS} races")


class Outcome(enum.StrEnum):
    """How a driver's race ended, as the season counts it."""

    FINISHED = "finished"  # classified at a place
    DID_NOT_FINISH = "did not finish"  # classified by the game as not finishing (or dropped by the GM)
    NO_SHOW = "no-show"  # never sent orders
    NMR_OUT = "out by the NMR limit"


@dataclass(frozen=True, slots=True)
class Finish:
    driver: Driver
    outcome: Outcome
    place: int = 0  # FINISHED: 1-based, competition places (1, 2, 2, 4)


@dataclass(frozen=True, slots=True)
class RaceResult:
    """One race's result as archived: `race` its round in the season (1, 2, ...), `correction`
    how often it was corrected (0: the first result)."""

    race: int
    correction: int
    finishes: tuple[Finish, ...]
    honours: tuple[tuple[str, Driver], ...] = ()  # (honour, driver): the race's honours the game reported

    @property
    def field(self) -> int:
        return len(self.finishes)


@dataclass(frozen=True, slots=True)
class RaceScore:
    race: int
    outcome: Outcome
    place: int  # 0 unless FINISHED
    points: int  # before penalties, the bonus included
    penalty: int
    dropped: bool
    bonus: int = 0  # of `points`, those for the race's honours


@dataclass(frozen=True, slots=True)
class Standing:
    place: int
    driver: Driver
    points: int  # counted points less penalties
    races: tuple[RaceScore, ...]  # in race order
    countback: tuple[int, ...]  # wins, second places, ... (how ties were broken)
    tied: bool  # level on points with a neighbour (the countback decided, or could not)


def counted(results: Iterable[RaceResult]) -> tuple[RaceResult, ...]:
    """The result that counts for each race: its latest correction, in race order. Two results
    of one race with the same correction: the greater (by value), so that any order of arrival
    counts the same one."""
    best: dict[int, RaceResult] = {}
    for result in results:
        known = best.get(result.race)
        if known is None or _rank(result) > _rank(known):
            best[result.race] = result
    return tuple(best[race] for race in sorted(best))


def _rank(
    result: RaceResult,
) -> tuple[int, tuple[tuple[str, str, int], ...], tuple[tuple[str, str], ...]]:
    return (
        result.correction,
        tuple(sorted((f.driver, f.outcome.value, f.place) for f in result.finishes)),
        tuple(sorted(result.honours)),
    )


def race_scores(rules: SeasonRules, result: RaceResult) -> dict[Driver, RaceScore]:
    """Each driver's score in one race, before any result is dropped."""
    scores: dict[Driver, RaceScore] = {}
    for finish in result.finishes:
        points = rules.table.for_place(finish.place, result.field) if finish.outcome is Outcome.FINISHED else 0
        penalty = {Outcome.NO_SHOW: rules.no_show_penalty, Outcome.NMR_OUT: rules.nmr_penalty}.get(finish.outcome, 0)
        place = finish.place if finish.outcome is Outcome.FINISHED else 0
        bonus = sum(rules.table.bonus_for(honour) for honour, holder in result.honours if holder == finish.driver)
        scores[finish.driver] = RaceScore(
            result.race, finish.outcome, place, points + bonus, penalty, dropped=False, bonus=bonus
        )
    return scores


def _with_drops(scores: Sequence[RaceScore], drop: int) -> tuple[RaceScore, ...]:
    """The scores with the `drop` lowest (earliest first among equals) marked dropped."""
    lowest = sorted(scores, key=lambda s: (s.points, s.race))[:drop]
    gone = {s.race for s in lowest}
    return tuple(
        RaceScore(s.race, s.outcome, s.place, s.points, s.penalty, dropped=s.race in gone, bonus=s.bonus)
        for s in sorted(scores, key=lambda s: s.race)
    )


def standings(rules: SeasonRules, results: Iterable[RaceResult]) -> tuple[Standing, ...]:
    """The season's table from its races' results, whatever order they (and their corrections)
    came in: front first, ties on points broken by countback."""
    races = counted(results)
    by_driver: dict[Driver, list[RaceScore]] = {}
    for result in races:
        for driver, score in race_scores(rules, result).items():
            by_driver.setdefault(driver, []).append(score)
    longest = max((r.field for r in races), default=0)
    rows: list[tuple[int, tuple[int, ...], Driver, tuple[RaceScore, ...]]] = []
    for driver, scores in by_driver.items():
        marked = _with_drops(scores, rules.dropped_of(len(scores)))
        total = sum(s.points for s in marked if not s.dropped) - sum(s.penalty for s in marked)
        countback = tuple(sum(1 for s in marked if s.place == place) for place in range(1, longest + 1))
        rows.append((total, countback, driver, marked))
    rows.sort(key=lambda row: (-row[0], tuple(-n for n in row[1]), row[2]))
    table: list[Standing] = []
    for index, (total, countback, driver, marked) in enumerate(rows):
        level_before = index > 0 and rows[index - 1][:2] == (total, countback)
        place = table[-1].place if level_before else index + 1
        tied = any(other[0] == total for j, other in enumerate(rows) if j != index)
        table.append(Standing(place, driver, total, marked, countback, tied))
    return tuple(table)


def grid(table: Sequence[Standing], entrants: Iterable[Driver]) -> tuple[Driver, ...]:
    """A race's grid drawn from the standings: the leader first, then in table order; entrants
    without a result yet after them, in the order given."""
    placed = {row.driver: i for i, row in enumerate(table)}
    given = list(dict.fromkeys(entrants))
    return tuple(sorted(given, key=lambda d: (d not in placed, placed.get(d, 0), given.index(d))))


def progression(rules: SeasonRules, results: Iterable[RaceResult]) -> dict[Driver, tuple[int, ...]]:
    """Each driver's points in the table after each race counted (the table of races 1..n, its
    dropped results and penalties as they stood then), in race order: what a chart of points
    over races draws. A driver not yet in the table at a race has 0 there."""
    races = counted(results)
    after: dict[Driver, list[int]] = {}
    for n in range(1, len(races) + 1):
        table = {row.driver: row.points for row in standings(rules, races[:n])}
        for driver in table:
            after.setdefault(driver, [0] * (n - 1))
        for driver, points in after.items():
            points.append(table.get(driver, 0))
    return {driver: tuple(points) for driver, points in after.items()}


# -- tiers: promotion and relegation between seasons ---------------------------------------------


@dataclass(frozen=True, slots=True)
class TierSeason:
    """One tier's season as the draw reads it: `tier` (1 the top), its table, its results (for
    the tie rule), the drivers who stay on for the next season (`staying`: the others are
    leavers), and its settings: how many of its top go up (`up`, unused in tier 1) and of its
    bottom go down (`down`, unused in the bottom tier)."""

    tier: int
    table: tuple[Standing, ...]
    results: tuple[RaceResult, ...]
    staying: frozenset[Driver]
    up: int = 0
    down: int = 0


class Move(enum.StrEnum):
    UP = "up"
    DOWN = "down"
    STAYS = "stays"
    NEW = "new"  # a newcomer to the series, drawn into its lowest tier


@dataclass(frozen=True, slots=True)
class Drawn:
    """A driver's place in the next season: `tier` (1 the top), where they came from and how."""

    driver: Driver
    tier: int
    came_from: int  # 0: a newcomer, from no tier
    move: Move
    place: int  # their final place in their tier's table (ties settled); a newcomer: their turn in line


def final_order(season: TierSeason, lot: random.Random) -> tuple[Driver, ...]:
    """A tier's table in a strict order, for the draw: by place (points, then countback); drivers
    still level: the better place in the tier's last race, then in the race before, and so on;
    still level: by lot (`lot`, seeded by the shell). Leavers are in it too."""
    latest = counted(season.results)

    def recent(driver: Driver) -> tuple[int, ...]:
        places = []
        for result in reversed(latest):
            mine = [f for f in result.finishes if f.driver == driver and f.outcome is Outcome.FINISHED]
            places.append(mine[0].place if mine else MAX_TABLE * MAX_TABLE)
        return tuple(places)

    rows = sorted(season.table, key=lambda row: row.driver)
    draws = {row.driver: lot.random() for row in rows}
    return tuple(row.driver for row in sorted(rows, key=lambda row: (row.place, recent(row.driver), draws[row.driver])))


def draw_tiers(
    seasons: Sequence[TierSeason], lot: random.Random, newcomers: Sequence[Driver] = (), room: int | None = None
) -> tuple[tuple[Drawn, ...], ...]:
    """The next season's tiers, top first, each in its first grid's order (those come down
    first, then those who stay, then those come up, each group in its table order, then the
    newcomers):

    * tier k's bottom `down` go down to tier k+1, tier k+1's top `up` go up to tier k;
    * leavers (not `staying`) leave, are never moved, and are not counted: the next driver in
      the table moves in their place; a tier with leavers is that much smaller next season;
    * a tier moves at most its stayers: promotion first, then relegation from those left;
    * `newcomers` (in line, first come first) go into the lowest tier, behind everyone, while it
      has `room` (the most drivers a race seats; None: no limit); one already drawn, or given
      twice, is drawn once.

    `seasons` are the tiers 1..T of one series, in any order; SeasonError if they are not."""
    ordered = sorted(seasons, key=lambda s: s.tier)
    if [s.tier for s in ordered] != list(range(1, len(ordered) + 1)):
        raise SeasonError("a series' tiers are numbered 1, 2, ... with none missing")
    bottom = len(ordered)
    stayers: list[list[tuple[Driver, int]]] = []
    for season in ordered:
        order = final_order(season, lot)
        stayers.append([(d, i + 1) for i, d in enumerate(order) if d in season.staying])
    tiers: list[list[Drawn]] = [[] for _ in ordered]
    for index, season in enumerate(ordered):
        mine = stayers[index]
        ups = min(season.up, len(mine)) if season.tier > 1 else 0
        downs = min(season.down, len(mine) - ups) if season.tier < bottom else 0
        for n, (driver, place) in enumerate(mine):
            if n < ups:
                tiers[index - 1].append(Drawn(driver, season.tier - 1, season.tier, Move.UP, place))
            elif n >= len(mine) - downs:
                tiers[index + 1].append(Drawn(driver, season.tier + 1, season.tier, Move.DOWN, place))
            else:
                tiers[index].append(Drawn(driver, season.tier, season.tier, Move.STAYS, place))
    ordered_tiers = [sorted(tier, key=lambda d: (d.came_from, d.place)) for tier in tiers]
    drawn = {d.driver for tier in ordered_tiers for d in tier}
    lowest = ordered_tiers[-1] if ordered_tiers else []
    line = [d for d in dict.fromkeys(newcomers) if d not in drawn]
    for n, driver in enumerate(line):
        if room is not None and len(lowest) >= room:
            break
        lowest.append(Drawn(driver, bottom, 0, Move.NEW, n + 1))
    return tuple(tuple(tier) for tier in ordered_tiers)


__all__ = [
    "CFR_POINTS",
    "F1_POINTS",
    "HONOURS",
    "Driver",
    "Drawn",
    "Finish",
    "Move",
    "Outcome",
    "Preset",
    "RaceResult",
    "RaceScore",
    "ScoringTable",
    "SeasonError",
    "SeasonRules",
    "Standing",
    "TierSeason",
    "counted",
    "draw_tiers",
    "final_order",
    "grid",
    "progression",
    "race_scores",
    "standings",
]
