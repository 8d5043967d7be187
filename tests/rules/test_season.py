"""A season's points and table (rules.season; docs/championships.md), from its races' results alone.

The requirement: "its scoring table (presets: F1 25-18-15-12-10-8-6-4-2-1, CFR, a linear table;
custom), tie-breaks (countback), dropped results, ... penalties (a no-show, a DNF by NMR limit)";
"the standings equal a recomputation from the archived results, whatever order results and
corrections (ROLLBACK) came in"."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.season import (
    CFR_POINTS,
    F1_POINTS,
    Finish,
    Outcome,
    Preset,
    RaceResult,
    ScoringTable,
    SeasonError,
    SeasonRules,
    standings,
)

F1 = SeasonRules(ScoringTable.parse("f1"))


def race(number: int, *order: str, correction: int = 0, **others: Outcome) -> RaceResult:
    """A race where `order` finished in that order (one place each) and `others` ended otherwise."""
    finishes = [Finish(d, Outcome.FINISHED, i + 1) for i, d in enumerate(order)]
    finishes += [Finish(d, outcome) for d, outcome in others.items()]
    return RaceResult(number, correction, tuple(finishes))


def table(rules: SeasonRules, *results: RaceResult) -> list[tuple[int, str, int]]:
    return [(row.place, row.driver, row.points) for row in standings(rules, results)]


def test_the_f1_preset_is_25_18_15_12_10_8_6_4_2_1() -> None:
    # "presets: F1 25-18-15-12-10-8-6-4-2-1".
    assert F1_POINTS == (25, 18, 15, 12, 10, 8, 6, 4, 2, 1)
    eleven = [f"d{i:02d}" for i in range(11)]
    assert [points for _, _, points in table(F1, race(1, *eleven))] == [25, 18, 15, 12, 10, 8, 6, 4, 2, 1, 0]


def test_the_cfr_preset_and_linear_and_custom_tables() -> None:
    assert ScoringTable.parse("CFR") == ScoringTable(Preset.CFR, CFR_POINTS)
    linear = SeasonRules(ScoringTable.parse("linear"))
    assert table(linear, race(1, "a", "b", "c")) == [(1, "a", 3), (2, "b", 2), (3, "c", 1)]
    custom = SeasonRules(ScoringTable.parse("custom:5,3,1"))
    assert custom.table.shown() == "custom:5,3,1"
    assert table(custom, race(1, "a", "b", "c", "d")) == [(1, "a", 5), (2, "b", 3), (3, "c", 1), (4, "d", 0)]


@pytest.mark.parametrize(
    "text", ["custom:", "custom:3,5", "custom:a,b", "f2", "linear:3", "custom:" + ",".join(["1"] * 41)]
)
def test_a_table_that_cannot_be_used_is_refused(text: str) -> None:
    with pytest.raises(SeasonError):
        ScoringTable.parse(text)


def test_a_shared_race_place_scores_that_place_for_each() -> None:
    shared = RaceResult(
        1, 0, (Finish("a", Outcome.FINISHED, 1), Finish("b", Outcome.FINISHED, 1), Finish("c", Outcome.FINISHED, 3))
    )
    assert table(F1, shared) == [(1, "a", 25), (1, "b", 25), (3, "c", 15)]


def test_did_not_finish_scores_nothing_and_penalties_take_points_away() -> None:
    rules = SeasonRules(ScoringTable.parse("f1"), no_show_penalty=5, nmr_penalty=3)
    result = race(1, "a", "b", c=Outcome.DID_NOT_FINISH, d=Outcome.NO_SHOW, e=Outcome.NMR_OUT)
    assert table(rules, result) == [(1, "a", 25), (2, "b", 18), (3, "c", 0), (4, "e", -3), (5, "d", -5)]


def test_the_lowest_results_are_dropped_but_never_a_penalty() -> None:
    rules = SeasonRules(ScoringTable.parse("f1"), drop=1, no_show_penalty=5)
    # a: 25, 18, no-show (0, -5): the no-show's 0 is dropped, its 5 points lost stand.
    rows = standings(rules, [race(1, "a", "b"), race(2, "b", "a"), race(3, "b", a=Outcome.NO_SHOW)])
    by = {row.driver: row for row in rows}
    assert by["a"].points == 25 + 18 - 5
    assert [s.dropped for s in by["a"].races] == [False, False, True]
    assert by["b"].points == 25 + 25  # 18 dropped
    assert [s.dropped for s in by["b"].races] == [True, False, False]


def test_the_best_races_less_drop_results_count_so_nothing_is_dropped_before_a_driver_has_more() -> None:
    """docs/championships.md, "Dropped results": each driver's best (races - drop) results count.
    Played by mail (playtest3): with DROP 1 of 3 races, after race 1 every driver's one result was
    dropped ("1* Steve 0 (25) - -"), and a substitute who drove two of the three races lost one
    of them, where the drivers of all three dropped theirs from three."""
    rules = SeasonRules(ScoringTable.parse("f1"), drop=1, races=3)
    after_one = {row.driver: row for row in standings(rules, [race(1, "a", "b")])}
    assert (after_one["a"].points, after_one["b"].points) == (25, 18)
    assert not any(s.dropped for row in after_one.values() for s in row.races)
    after_two = [race(1, "a", "b"), race(2, "b", "a", sub=Outcome.DID_NOT_FINISH)]
    assert {row.driver: row.points for row in standings(rules, after_two)} == {"a": 43, "b": 43, "sub": 0}
    final = [*after_two, race(3, "sub", "a", "b")]
    by = {row.driver: row for row in standings(rules, final)}
    assert by["a"].points == 25 + 18 and [s.dropped for s in by["a"].races] == [False, True, False]
    assert by["sub"].points == 0 + 25 and not any(s.dropped for s in by["sub"].races), "2 results of 2 count"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 5), st.integers(0, 6))
def test_a_driver_has_dropped_only_the_results_past_the_best_that_count(races: int, drop: int, ran: int) -> None:
    """docs/championships.md, "Dropped results": of a driver's results, the best (races - drop)
    count; at most `drop` go, and none while the driver has no more than that."""
    drop = min(drop, races - 1)
    ran = min(ran, races)
    rules = SeasonRules(ScoringTable.parse("f1"), drop=drop, races=races)
    results = [race(n, "x", "y") for n in range(1, ran + 1)]
    for row in standings(rules, results):
        assert sum(s.dropped for s in row.races) == max(0, ran - (races - drop))


def test_a_tie_on_points_is_broken_by_countback() -> None:
    # a: 25 + 1 = 26 (a win); b: 18 + 8 = 26 (no win): a ahead on countback.
    ten = [f"x{i}" for i in range(8)]
    r1 = race(1, "a", "b", *ten)
    r2 = race(2, *ten[:5], "b", "x8", "x9", "x10", "a")
    rows = standings(F1, [r1, r2])
    by = {row.driver: row for row in rows}
    assert by["a"].points == by["b"].points == 26
    assert by["a"].place < by["b"].place
    assert by["a"].tied and by["b"].tied
    assert by["a"].countback[0] == 1 and by["b"].countback[0] == 0


def test_level_on_points_and_countback_share_the_place() -> None:
    rows = standings(F1, [race(1, "a", "b"), race(2, "b", "a")])
    assert [(r.place, r.driver) for r in rows] == [(1, "a"), (1, "b")]


def test_a_correction_replaces_the_race_it_corrects_whatever_came_first() -> None:
    first, corrected = race(1, "a", "b"), race(1, "b", "a", correction=1)
    assert table(F1, corrected, first) == table(F1, first, corrected) == [(1, "b", 25), (2, "a", 18)]


@pytest.mark.parametrize("drop", [-1, 1001])
def test_settings_out_of_range_are_refused(drop: int) -> None:
    with pytest.raises(SeasonError):
        SeasonRules(ScoringTable.parse("f1"), drop=drop)


# -- the property ---------------------------------------------------------------------------------

DRIVERS = ("ann", "bob", "cat", "dan", "eve", "fay")
OUTCOMES = (Outcome.DID_NOT_FINISH, Outcome.NO_SHOW, Outcome.NMR_OUT)


@st.composite
def race_results(draw: st.DrawFn, number: int, correction: int) -> RaceResult:
    entrants = draw(st.lists(st.sampled_from(DRIVERS), min_size=1, unique=True))
    finishers = draw(st.integers(0, len(entrants)))
    finishes: list[Finish] = []
    place = 1
    for i, driver in enumerate(entrants[:finishers]):
        if i and draw(st.booleans()):  # shares the place before
            finishes.append(Finish(driver, Outcome.FINISHED, finishes[-1].place))
        else:
            finishes.append(Finish(driver, Outcome.FINISHED, place))
        place = i + 2
    finishes += [Finish(d, draw(st.sampled_from(OUTCOMES))) for d in entrants[finishers:]]
    return RaceResult(number, correction, tuple(finishes))


@st.composite
def archives(draw: st.DrawFn) -> list[RaceResult]:
    """Every result the record holds: each race's first result and its corrections."""
    results = []
    for number in range(1, draw(st.integers(1, 5)) + 1):
        for correction in range(draw(st.integers(1, 3))):
            results.append(draw(race_results(number, correction)))
    return results


def recomputed(rules: SeasonRules, archived: list[RaceResult]) -> list[tuple[str, int, tuple[int, ...]]]:
    """The table worked out longhand: the last correction of each race, points by the table,
    the lowest dropped, penalties taken, sorted by points then countback."""
    latest: dict[int, RaceResult] = {}
    for result in sorted(archived, key=lambda r: (r.race, r.correction)):
        latest[result.race] = result
    scores: dict[str, list[tuple[int, int, int, int]]] = {}  # driver -> (race, points, penalty, place)
    for number, result in latest.items():
        for f in result.finishes:
            points = rules.table.for_place(f.place, len(result.finishes)) if f.outcome is Outcome.FINISHED else 0
            penalty = (
                rules.no_show_penalty
                if f.outcome is Outcome.NO_SHOW
                else rules.nmr_penalty
                if f.outcome is Outcome.NMR_OUT
                else 0
            )
            scores.setdefault(f.driver, []).append(
                (number, points, penalty, f.place if f.outcome is Outcome.FINISHED else 0)
            )
    rows = []
    for driver, mine in scores.items():
        kept = sorted(mine, key=lambda s: (s[1], s[0]))[rules.drop :]
        total = sum(s[1] for s in kept) - sum(s[2] for s in mine)
        countback = tuple(sum(1 for s in mine if s[3] == p) for p in range(1, len(DRIVERS) + 1))
        rows.append((driver, total, countback))
    rows.sort(key=lambda r: (-r[1], [-n for n in r[2]], r[0]))
    return rows


@given(
    archives(),
    st.sampled_from(["f1", "cfr", "linear", "custom:7,3,1"]),
    st.integers(0, 2),
    st.integers(0, 10),
    st.integers(0, 10),
    st.randoms(use_true_random=False),
)
def test_standings_equal_a_recomputation_whatever_order_results_and_corrections_came_in(
    archived: list[RaceResult], scoring: str, drop: int, no_show: int, nmr: int, shuffler: random.Random
) -> None:
    rules = SeasonRules(ScoringTable.parse(scoring), drop=drop, no_show_penalty=no_show, nmr_penalty=nmr)
    arrived = list(archived)
    shuffler.shuffle(arrived)
    got = standings(rules, arrived)
    assert [
        (row.driver, row.points, row.countback[: len(DRIVERS)] + (0,) * (len(DRIVERS) - len(row.countback)))
        for row in got
    ] == recomputed(rules, archived)
    assert got == standings(rules, archived)
    # Places: 1 for the first; equal only when level on points and countback.
    for before, after in zip(got, got[1:], strict=False):
        level = (before.points, before.countback) == (after.points, after.countback)
        assert after.place == (before.place if level else got.index(after) + 1)


def test_the_grid_is_drawn_from_the_table_newcomers_last() -> None:
    from rules.season import grid

    rows = standings(F1, [race(1, "b", "a", "c")])
    assert grid(rows, ["a", "new", "c", "b"]) == ("b", "a", "c", "new")


def test_the_points_over_races_are_each_tables_points_after_that_race() -> None:
    from rules.season import progression

    rules = SeasonRules(ScoringTable.parse("f1"), drop=1, no_show_penalty=5)
    results = [race(1, "a", "b"), race(2, "b", "a", c=Outcome.NO_SHOW), race(3, "a", "c", "b")]
    # One result dropped from the first race on: after race 1 the one race is dropped (0 each);
    # a: (25,18) drop 18 = 25, (25,18,25) drop 18 = 50; b: (18,25) = 25, (18,25,15) = 43; c
    # arrives in race 2 a no-show: 0 dropped, the penalty stands (-5), then (0,18) = 18-5.
    assert progression(rules, results) == {"a": (0, 25, 50), "b": (0, 25, 43), "c": (0, -5, 13)}


@given(archives(), st.integers(0, 2))
def test_the_last_points_over_races_are_the_table(archived: list[RaceResult], drop: int) -> None:
    from rules.season import progression

    rules = SeasonRules(ScoringTable.parse("f1"), drop=drop, no_show_penalty=3)
    over = progression(rules, archived)
    assert {row.driver: row.points for row in standings(rules, archived)} == {d: p[-1] for d, p in over.items()}
    assert {len(p) for p in over.values()} <= {len({r.race for r in archived})}


# -- bonus points ---------------------------------------------------------------------------------


def test_bonus_points_are_written_after_the_table_and_refused_unless_known() -> None:
    """docs/championships.md, "Bonus points": "+pole:1 after the table gives the pole one point"."""
    scoring = ScoringTable.parse("f1+pole:1+fastest-lap:2")
    assert scoring.bonus == (("pole", 1), ("fastest-lap", 2)) and scoring.shown() == "f1+pole:1+fastest-lap:2"
    assert ScoringTable.parse("custom:3,1+lap-leader:1").shown() == "custom:3,1+lap-leader:1"
    for text in ("f1+pole", "f1+pole:x", "f1+pole:1+pole:2", "f1+podium:1", "f1+pole:101"):
        with pytest.raises(SeasonError):
            ScoringTable.parse(text)


def test_the_pole_scores_its_bonus_for_its_holder_whatever_their_finish_and_is_dropped_with_the_race() -> None:
    rules = SeasonRules(ScoringTable.parse("custom:10,6,4+pole:2"), drop=1)
    first = RaceResult(1, 0, race(1, "a", "b", c=Outcome.DID_NOT_FINISH).finishes, (("pole", "c"),))
    second = RaceResult(2, 0, race(2, "c", "a", "b").finishes, (("pole", "a"),))
    rows = {row.driver: row for row in standings(rules, [first, second])}
    assert [(s.points, s.bonus, s.dropped) for s in rows["c"].races] == [(2, 2, True), (10, 0, False)]
    assert [(s.points, s.bonus, s.dropped) for s in rows["a"].races] == [(10, 0, False), (8, 2, True)]
    assert (rows["a"].points, rows["c"].points, rows["b"].points) == (10, 10, 6)
    assert rows["a"].countback[:2] == (1, 1), "countback counts places, not bonuses"


@given(
    st.lists(st.permutations(["a", "b", "c", "d"]), min_size=1, max_size=4),
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=4, max_size=4),
    st.integers(0, 5),
)
def test_bonus_points_add_exactly_the_bonus_to_each_holder(
    orders: list[list[str]], poles: list[str], bonus: int
) -> None:
    """Without dropped results, each driver's points with a pole bonus are their points without
    it plus the bonus times the poles they held."""
    plain = SeasonRules(ScoringTable.parse("f1"))
    with_bonus = SeasonRules(ScoringTable.parse(f"f1+pole:{bonus}"))
    results = [
        RaceResult(n, 0, race(n, *order).finishes, (("pole", poles[n - 1]),)) for n, order in enumerate(orders, 1)
    ]
    before = {row.driver: row.points for row in standings(plain, results)}
    after = {row.driver: row.points for row in standings(with_bonus, results)}
    for driver, points in before.items():
        assert after[driver] == points + bonus * poles[: len(orders)].count(driver)
