"""Ratings (docs/championships.md, "Ratings": a Plackett-Luce rating over finishing orders, by
openskill, per kind of game; a race with a robot seat or a practice race never rated): the
arithmetic against openskill's own figures, and properties of the ratings worked out again
from the results in order."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import ratings as bench_ratings
from bench.run import main as bench_main
from bot.games.ratings import order_of, races_of
from bot.models import Game, GameStatus, Seat
from bot.ratings import BETA, MU, SIGMA, RatedRace, Rating, changes_of, order_probability, rate
from rules.season import Finish, Outcome, RaceResult


def race(game: str, *order: str) -> RatedRace:
    return RatedRace(game, tuple((person,) for person in order))


def test_three_newcomers_rated_as_openskill_rates_them() -> None:
    """openskill 6's PlackettLuce: three new players (mu 25, sigma 25/3) finishing 1-2-3 become,
    with its default beta 25/6, mu 27.869, 25.717, 21.414 and sigma 8.205, 8.058, 8.058; with
    beta 12.5 (ours), mu 26.779, 25.445, 22.776 and sigma 8.303, 8.269, 8.269."""
    after = rate([race("r1", "a", "b", "c")], beta=25 / 6)
    assert [round(after[p].mu, 6) for p in "abc"] == [27.869049, 25.717262, 21.413689]
    assert [round(after[p].sigma, 6) for p in "abc"] == [8.205243, 8.058224, 8.058224]
    ours = rate([race("r1", "a", "b", "c")])
    assert BETA == 12.5
    assert [round(ours[p].mu, 6) for p in "abc"] == [26.779352, 25.444838, 22.77581]
    assert [round(ours[p].sigma, 6) for p in "abc"] == [8.303276, 8.268858, 8.268858]
    assert [ours[p].races for p in "abc"] == [1, 1, 1]
    assert ours["a"].ordinal == ours["a"].mu - 3 * ours["a"].sigma
    assert Rating().shown == 0 and (Rating().mu, Rating().sigma) == (MU, SIGMA)


def test_a_shared_place_moves_both_alike() -> None:
    after = rate([RatedRace("r1", (("a",), ("b", "c")))])
    assert math.isclose(after["b"].mu, after["c"].mu) and after["a"].mu > after["b"].mu


def test_the_reason_counts_drivers_beaten_who_were_rated_above() -> None:
    races = [race("r1", "x", "y", "z", "me"), race("r2", "me", "x", "y", "z")]
    _, changes = changes_of(races, "r2")
    mine = next(c for c in changes if c.person == "me")
    assert (mine.beat_above, mine.lost_below, mine.field, mine.first) == (3, 0, 4, False)
    assert mine.delta > 0
    x = next(c for c in changes if c.person == "x")
    assert (x.beat_above, x.lost_below) == (0, 1)


def test_a_race_of_one_person_rates_nobody() -> None:
    assert rate([race("r1", "a")]) == {}


def test_the_likelier_order_puts_the_stronger_first() -> None:
    ratings = rate([race(f"r{i}", "a", "b") for i in range(5)])
    assert order_probability(ratings, ["a", "b"]) > 0.5 > order_probability(ratings, ["b", "a"])
    assert math.isclose(order_probability(ratings, ["a", "b"]) + order_probability(ratings, ["b", "a"]), 1.0)


PEOPLE = st.sampled_from(["ann", "bob", "cy", "dee", "eve", "fay"])
ORDERS = st.lists(PEOPLE, min_size=2, max_size=6, unique=True)


@given(st.lists(ORDERS, max_size=8))
@settings(max_examples=60, deadline=None)
def test_ratings_are_a_function_of_the_results_in_order(orders: list[list[str]]) -> None:
    """Worked out twice from the same results, or race by race up to each point, the same."""
    races = [race(f"r{i}", *order) for i, order in enumerate(orders)]
    assert rate(races) == rate(list(races))
    for i in range(len(races)):
        ratings, changes = changes_of(races, f"r{i}")
        assert ratings == rate(races)
        upto = rate(races[: i + 1])
        assert {c.person: c.after for c in changes} == {p: upto[p] for p in races[i].people}


# -- the rated races among the finished ones (bot.games.ratings) ------------------------------


def finished_game(name: str, order: list[str], *, robot: bool = False, practice: bool = False) -> Game:
    game = Game(name=name, kind="racecraft", status=GameStatus.FINISHED, practice=practice)
    game.seats = [Seat(name=p, player_id=int(p), robot=False) for p in order]
    if robot:
        game.seats.append(Seat(name="robot", player_id=999, robot=True))
    return game


def result_of(order: list[str], robot: bool) -> RaceResult:
    """The season's result of a race finished in `order` (robots' seats are not in it)."""
    return RaceResult(0, 0, tuple(Finish(p, Outcome.FINISHED, i + 1) for i, p in enumerate(order)))


NUMBERS = st.lists(st.sampled_from(["1", "2", "3", "4", "5"]), min_size=2, max_size=5, unique=True)


@given(
    st.lists(NUMBERS, max_size=6),
    st.lists(st.tuples(st.integers(0, 6), NUMBERS, st.booleans()), max_size=4),
)
@settings(max_examples=60, deadline=None)
def test_a_race_with_a_robot_or_a_practice_race_never_changes_a_rating(
    people: list[list[str]], others: list[tuple[int, list[str], bool]]
) -> None:
    """docs/championships.md: "Such a race changes nobody's rating": a robot's or practice
    race put anywhere among the rated ones changes nobody's rating."""
    plain = [(finished_game(f"r{i}", order), result_of(order, False)) for i, order in enumerate(people)]
    mixed = list(plain)
    for j, (where, order, practice) in enumerate(others):
        game = finished_game(f"x{j}", order, robot=not practice, practice=practice)
        mixed.insert(min(where, len(mixed)), (game, result_of(order, True)))
    assert rate(races_of(mixed)) == rate(races_of(plain))
    assert [r.game for r in races_of(mixed)] == [f"r{i}" for i in range(len(people))]


def test_everyone_not_finishing_shares_the_place_behind_the_finishers() -> None:
    result = RaceResult(
        0,
        0,
        (
            Finish("1", Outcome.FINISHED, 2),
            Finish("2", Outcome.FINISHED, 1),
            Finish("3", Outcome.NO_SHOW),
            Finish("4", Outcome.DID_NOT_FINISH),
            Finish("5", Outcome.FINISHED, 2),
        ),
    )
    assert order_of(finished_game("r", ["1", "2", "3", "4", "5"]), result) == (("2",), ("1", "5"), ("3", "4"))


def test_the_rating_predicts_held_out_races_better_than_elo() -> None:
    """bench/README.md, "Ratings": the rating's log-loss on held-out simulated races (robot
    fields of known strength) below pairwise Elo's on the same races (`python -m bench --only
    ratings`, here two small seeded fields; the same figures twice)."""
    result = bench_ratings.run(train=300, test=100, seeds=(42, 7))
    assert result["target_met"] and result["rating_lower_in"] == 2
    assert result["pairwise_truth"] < result["pairwise_rating"] < result["pairwise_elo"] < math.log(2)
    assert bench_ratings.run(train=300, test=100, seeds=(42, 7))["fields"] == result["fields"]


def test_the_ratings_benchmark_runs_from_the_bench_command_without_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m bench --only ratings`: no server started; the figures on its line and in the JSON."""
    out = tmp_path / "ratings.json"
    assert bench_main(["--only", "ratings", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no servers" in printed and "target rating < Elo: met" in printed
    result = json.loads(out.read_text())["benchmarks"]["ratings"]
    assert "error" not in result, result.get("error")
    assert len(result["fields"]) == 8 and result["target_met"] is True
    assert result["pairwise_rating"] < result["pairwise_elo"]
    # bench/README.md, "Ratings": the held-out log-loss for each beta tried, ours among them.
    by_beta = result["pairwise_by_beta"]
    assert list(by_beta) == ["4.167", "8.333", "12.5", "16", "25"] and "by beta 4.167 " in printed
    assert math.isclose(by_beta["12.5"], result["pairwise_rating"])
    assert by_beta["4.167"] > by_beta["12.5"] < by_beta["25"], "the default trusts each race too much, 25 too little"
