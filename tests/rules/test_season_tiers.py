"""A series' tiers from one season to the next (rules.season.draw_tiers; docs/championships.md,
"Tiers: promotion and relegation").

The requirement: "Tiers with promotion and relegation between seasons (N up, N down, settings), and
the next season's tiers drawn by the bot". The rule (docs/championships.md): "the top N up of
tier k+1 go up, the bottom N down of tier k go down, the rest stay"; "drivers level on points
and countback at the line: the better place in the tier's last race decides, then the race
before ...; still level: by lot"; "a leaver is never moved and not counted: the next driver in
the table moves in their place"."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.season import (
    Drawn,
    Finish,
    Move,
    Outcome,
    RaceResult,
    ScoringTable,
    SeasonError,
    SeasonRules,
    TierSeason,
    draw_tiers,
    final_order,
    standings,
)

F1 = SeasonRules(ScoringTable.parse("f1"))
CUSTOM = SeasonRules(ScoringTable.parse("custom:10,6,4"))


def race(number: int, *order: str) -> RaceResult:
    return RaceResult(number, 0, tuple(Finish(d, Outcome.FINISHED, i + 1) for i, d in enumerate(order)))


def tier(number: int, *results: RaceResult, up: int = 0, down: int = 0, leavers: tuple[str, ...] = ()) -> TierSeason:
    rules = CUSTOM if number > 0 else F1
    table = standings(rules, results)
    staying = frozenset(row.driver for row in table) - set(leavers)
    return TierSeason(number, table, results, staying, up, down)


def names(drawn: tuple[tuple[Drawn, ...], ...]) -> list[list[str]]:
    return [[d.driver for d in t] for t in drawn]


def test_the_top_n_of_tier_2_go_up_the_bottom_n_of_tier_1_go_down_the_rest_stay() -> None:
    one = tier(1, race(1, "a", "b", "c", "d"), up=2, down=2)
    two = tier(2, race(1, "e", "f", "g", "h"), up=2, down=2)
    drawn = draw_tiers([two, one], random.Random(0))
    # Tier 1: those who stay, then those come up; tier 2: those come down, then those who stay.
    assert names(drawn) == [["a", "b", "e", "f"], ["c", "d", "g", "h"]]
    assert [d.move for d in drawn[0]] == [Move.STAYS, Move.STAYS, Move.UP, Move.UP]
    assert [d.move for d in drawn[1]] == [Move.DOWN, Move.DOWN, Move.STAYS, Move.STAYS]


def test_a_middle_tier_sends_its_top_up_and_its_bottom_down() -> None:
    one = tier(1, race(1, "a", "b", "c"), down=1)
    two = tier(2, race(1, "d", "e", "f"), up=1, down=1)
    three = tier(3, race(1, "g", "h", "i"), up=1)
    assert names(draw_tiers([one, two, three], random.Random(0))) == [
        ["a", "b", "d"],
        ["c", "e", "g"],
        ["f", "h", "i"],
    ]


def test_level_on_points_and_countback_the_last_race_decides_then_the_lot() -> None:
    # custom:10,6,4: a and b level (16 points, a win and a second each), as are c and d (4
    # points, a third each); b and d were ahead in the last race: b above a, and c goes down.
    one = tier(1, race(1, "a", "b", "c", "d"), race(2, "b", "a", "d", "c"), down=1)
    two = tier(2, race(1, "e", "f"), up=1)
    assert names(draw_tiers([one, two], random.Random(0))) == [["b", "a", "d", "e"], ["c", "f"]]
    # Level in every race too (neither finished): the lot, the same for the same seed.
    dnf = RaceResult(
        1, 0, (*race(1, "a", "b").finishes, Finish("c", Outcome.DID_NOT_FINISH), Finish("d", Outcome.DID_NOT_FINISH))
    )
    level = tier(1, dnf, down=1)
    orders = {final_order(level, random.Random(seed))[2:] for seed in range(20)}
    assert orders == {("c", "d"), ("d", "c")}
    assert final_order(level, random.Random(5)) == final_order(level, random.Random(5))


def test_a_leaver_is_never_moved_and_the_next_driver_moves_in_their_place() -> None:
    one = tier(1, race(1, "a", "b", "c", "d"), down=1, leavers=("d",))
    two = tier(2, race(1, "e", "f", "g", "h"), up=1, leavers=("e",))
    drawn = draw_tiers([one, two], random.Random(0))
    assert names(drawn) == [["a", "b", "f"], ["c", "g", "h"]]


def test_a_tier_moves_at_most_its_stayers_promotion_first() -> None:
    one = tier(1, race(1, "a", "b"), down=1)
    two = tier(2, race(1, "c", "d"), up=2, down=2)
    three = tier(3, race(1, "e"), up=1)
    assert names(draw_tiers([one, two, three], random.Random(0))) == [["a", "c", "d"], ["b", "e"], []]


def test_tiers_must_be_numbered_from_1_with_none_missing() -> None:
    with pytest.raises(SeasonError):
        draw_tiers([tier(1, race(1, "a")), tier(3, race(1, "b"))], random.Random(0))


# -- the property ---------------------------------------------------------------------------------


@st.composite
def series(draw: st.DrawFn) -> list[TierSeason]:
    tiers = draw(st.integers(1, 4))
    seasons = []
    for number in range(1, tiers + 1):
        drivers = [f"t{number}d{i}" for i in range(draw(st.integers(0, 7)))]
        results = []
        for r in range(1, draw(st.integers(1, 3)) + 1):
            order = draw(st.permutations(drivers))
            finishers = draw(st.integers(0, len(order)))
            finishes = [Finish(d, Outcome.FINISHED, i + 1) for i, d in enumerate(order[:finishers])]
            finishes += [Finish(d, Outcome.DID_NOT_FINISH) for d in order[finishers:]]
            results.append(RaceResult(r, 0, tuple(finishes)))
        leavers = draw(st.sets(st.sampled_from(drivers))) if drivers else set()
        table = standings(CUSTOM, results)
        staying = frozenset(row.driver for row in table) - leavers
        seasons.append(
            TierSeason(number, table, tuple(results), staying, draw(st.integers(0, 4)), draw(st.integers(0, 4)))
        )
    return seasons


@given(series(), st.integers(0, 2**32))
def test_every_driver_is_in_one_tier_sizes_kept_and_the_moves_as_set(seasons: list[TierSeason], seed: int) -> None:
    drawn = draw_tiers(seasons, random.Random(seed))
    bottom = len(seasons)
    assert len(drawn) == bottom
    everyone = [d.driver for t in drawn for d in t]
    staying = [d for s in seasons for d in s.staying]
    assert sorted(everyone) == sorted(staying), "every driver who stays on is in exactly one tier; leavers in none"
    ups = {s.tier: sum(1 for t in drawn for d in t if d.came_from == s.tier and d.move is Move.UP) for s in seasons}
    downs = {s.tier: sum(1 for t in drawn for d in t if d.came_from == s.tier and d.move is Move.DOWN) for s in seasons}
    for s in seasons:
        n = len(s.staying)
        want_up = min(s.up, n) if s.tier > 1 else 0
        want_down = min(s.down, n - want_up) if s.tier < bottom else 0
        assert (ups[s.tier], downs[s.tier]) == (want_up, want_down), "promotion and relegation counts as set"
    for index, s in enumerate(seasons):
        came_in = (downs[s.tier - 1] if s.tier > 1 else 0) + (ups[s.tier + 1] if s.tier < bottom else 0)
        went = ups[s.tier] + downs[s.tier]
        assert len(drawn[index]) == len(s.staying) - went + came_in
        if not (set(d.driver for d in s.table) - s.staying) and all(
            ups.get(t.tier + 1, 0) == downs[t.tier] for t in seasons if t.tier < bottom
        ):
            assert len(drawn[index]) == len(s.table), "sizes kept when as many go up as come down"
    # Those who go are the tier's ends: every stayer placed above every relegated, below every promoted.
    for s in seasons:
        mine = [d for t in drawn for d in t if d.came_from == s.tier]
        for a in mine:
            for b in mine:
                if a.move is Move.UP and b.move is not Move.UP or a.move is not Move.DOWN and b.move is Move.DOWN:
                    assert a.place < b.place
    assert drawn == draw_tiers(list(reversed(seasons)), random.Random(seed)), "the same draw for the same seed"


# -- newcomers ------------------------------------------------------------------------------------


def test_newcomers_go_into_the_lowest_tier_behind_everyone_while_a_race_has_room() -> None:
    """docs/championships.md, "Newcomers": "people who joined the series ... are drawn into the
    next season's lowest tier, behind its drivers, first come first, while its race has room"."""
    one = tier(1, race(1, "a", "b", "c"), down=1)
    two = tier(2, race(1, "d", "e"), up=1)
    drawn = draw_tiers([one, two], random.Random(0), newcomers=("x", "a", "y", "x", "z"), room=5)
    assert names(drawn) == [["a", "b", "d"], ["c", "e", "x", "y", "z"]], "one already drawn is not a newcomer"
    assert [(d.move, d.came_from, d.place) for d in drawn[1][2:]] == [
        (Move.NEW, 0, 1),
        (Move.NEW, 0, 2),
        (Move.NEW, 0, 3),
    ]
    full = draw_tiers([one, two], random.Random(0), newcomers=("x", "y", "z"), room=4)
    assert names(full)[1] == ["c", "e", "x", "y"], "no room: the last in line waits"


@given(series(), st.lists(st.sampled_from([f"n{i}" for i in range(6)] + ["t1d0", "t2d1"])), st.integers(0, 9))
def test_newcomers_never_displace_a_driver_and_are_drawn_once_into_the_lowest_tier(
    seasons: list[TierSeason], newcomers: list[str], room: int
) -> None:
    without = draw_tiers(seasons, random.Random(1))
    drawn = draw_tiers(seasons, random.Random(1), newcomers=newcomers, room=room)
    assert [t[: len(w)] for t, w in zip(drawn, without, strict=True)] == list(without), "the rest untouched"
    new = [d for t in drawn for d in t if d.move is Move.NEW]
    assert all(d in drawn[-1] and d.came_from == 0 for d in new), "newcomers in the lowest tier only"
    everyone = [d.driver for t in drawn for d in t]
    assert len(everyone) == len(set(everyone)), "nobody drawn twice"
    assert len(drawn[-1]) <= max(room, len(without[-1])), "never past the room of the lowest tier's race"
    waiting = [d for d in dict.fromkeys(newcomers) if d not in {x.driver for t in without for x in t}]
    assert [d.driver for d in new] == waiting[: max(0, room - len(without[-1]))], "first come first"
