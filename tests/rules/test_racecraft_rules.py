"""Racecraft, one test per rule of shared/design/racecraft.md (each docstring quotes it)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from rules.api import IllegalOrderError, OptionError, Placing, ProblemKind, Resolution
from rules.racecraft import GAME
from rules.racecraft.model import Cruise, Order, Overtake, Race, Stage, Use, score_text
from rules.racecraft.resolve import TurnReport, run_turn
from tests.rules.racecraft_strategies import make_race

RNG = random.Random(0)
FIVE = ["kelly", "seb", "steve", "roger", "zed"]


def orders_of(race: Race, texts: dict[str, str]) -> dict[str, tuple[Order, ...]]:
    """Parse each player's mail with the game's parser; every one must be accepted."""
    orders = {}
    for player, text in texts.items():
        parsed = GAME.parse_orders(race, player, text)
        assert parsed.ok, (player, text, parsed.problems)
        orders[player] = parsed.orders
    return orders


def play(race: Race, texts: dict[str, str]) -> Resolution[Race]:
    return GAME.resolve(race, orders_of(race, texts), RNG)


def trace(race: Race, texts: dict[str, str]) -> TurnReport:
    return run_turn(race, orders_of(race, texts))


def ep(race: Race) -> dict[str, int]:
    return {runner.name: runner.ep for runner in race.runners}


def refusal(race: Race, player: str, text: str) -> tuple[ProblemKind, str]:
    parsed = GAME.parse_orders(race, player, text)
    assert parsed.orders == ()
    assert len(parsed.problems) == 1
    return parsed.problems[0].kind, parsed.problems[0].reason


# -- the worked example -------------------------------------------------------------------


def worked_example_start() -> Race:
    return make_race([["kelly", "roger", "seb", "steve"]], turn=1)


def test_worked_example_turn_1() -> None:
    """Worked example, turn 1: "Kelly USE 0, Seb USE 2, Steve USE 2, Roger USE 5. Order:
    [Roger] [Seb, Steve] [Kelly]. EP: Roger 5, Seb 8, Steve 8, Kelly 10."""
    after = play(worked_example_start(), {"kelly": "USE 0", "seb": "USE 2", "steve": "USE 2", "roger": "USE 5"}).state
    assert after.positions == (("roger",), ("seb", "steve"), ("kelly",))
    assert ep(after) == {"roger": 5, "seb": 8, "steve": 8, "kelly": 10}


def test_worked_example_turn_2() -> None:
    """Worked example, turn 2: "Roger CRUISE, Seb USE 3, Steve OVERTAKE, Kelly USE 2 ...
    Order: [Seb, Steve] [Roger] [Kelly]. Adjustment: Seb and Steve are 1st: 4 and 6. Roger is
    2nd: 7. Kelly is 3rd and last: 8."""
    after_1 = play(worked_example_start(), {"kelly": "USE 0", "seb": "USE 2", "steve": "USE 2", "roger": "USE 5"}).state
    report = trace(after_1, {"roger": "CRUISE", "seb": "USE 3", "steve": "OVERTAKE", "kelly": "USE 2"})
    # "Scores: Seb 3, Steve 1, Kelly 2; cruise average (3+1+2)/3 = 2, so Roger 2."
    assert {leg.name: leg.score for leg in report.legs} == {"seb": 3, "steve": 1, "kelly": 2, "roger": 2}
    # "Costs: Seb 8-3 = 5, Steve 8-1 = 7, Kelly 10-2 = 8; Roger cruises: 5+1 = 6."
    assert {leg.name: leg.ep_before - leg.spent + leg.cruise_gain for leg in report.legs} == {
        "seb": 5,
        "steve": 7,
        "kelly": 8,
        "roger": 6,
    }
    after_2 = play(after_1, {"roger": "CRUISE", "seb": "USE 3", "steve": "OVERTAKE", "kelly": "USE 2"}).state
    assert after_2.positions == (("seb", "steve"), ("roger",), ("kelly",))
    assert ep(after_2) == {"seb": 4, "steve": 6, "roger": 7, "kelly": 8}


# -- set-up -------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [5, 8])
def test_five_to_eight_players_may_race(count: int) -> None:
    """Set-up: "5 to 8 players. Each starts with 10 EP (energy points)."""
    players = [f"p{n}" for n in range(count)]
    race = GAME.new_game(players, {}, RNG)
    assert GAME.players(race) == tuple(players)
    assert all(GAME.figures(race, p) == {"ep": 10} for p in players)


@pytest.mark.parametrize("count", [0, 4, 9])
def test_fewer_than_five_or_more_than_eight_players_are_refused(count: int) -> None:
    """Set-up: "5 to 8 players."""
    with pytest.raises(ValueError, match="5 to 8 players"):
        GAME.new_game([f"p{n}" for n in range(count)], {}, RNG)


def test_turns_option_defaults_to_five_with_start_tactical_and_sprint() -> None:
    """Set-up: "A game has N turns, default 5 ... Turn 1 is the *start*, turns 2..N-1 are
    *tactical* turns, turn N is the *final sprint*."""
    race = GAME.new_game(FIVE, {}, RNG)
    labels = []
    while not GAME.is_finished(race):
        labels.append(GAME.turn_label(race))
        race = GAME.resolve(race, {p: GAME.default_orders(race, p) for p in GAME.expected_players(race)}, RNG).state
    assert labels == [
        "Turn 1 of 5: start",
        "Turn 2 of 5: tactical",
        "Turn 3 of 5: tactical",
        "Turn 4 of 5: tactical",
        "Turn 5 of 5: final sprint",
    ]


@pytest.mark.parametrize("turns", ["3", "9", " 7 "])
def test_turns_option_accepts_three_to_nine(turns: str) -> None:
    """Set-up: "`turns` option, 3..9"."""
    race = GAME.new_game(FIVE, {"turns": turns}, RNG)
    assert race.turns == int(turns)


@pytest.mark.parametrize(
    "options", [{"turns": "2"}, {"turns": "10"}, {"turns": "five"}, {"turns": "-4"}, {"laps": "5"}]
)
def test_bad_options_are_refused_with_option_error(options: dict[str, str]) -> None:
    """Set-up: "`turns` option, 3..9"; anything else is an OptionError naming what is allowed."""
    with pytest.raises(OptionError, match="turns"):
        GAME.new_game(FIVE, options, RNG)


# -- positions ----------------------------------------------------------------------------


def test_positions_are_numbered_densely() -> None:
    """Positions: "in `Roger 5 / Seb 2, Steve 2 / Kelly 0` Roger is 1st, Seb and Steve share
    2nd, Kelly is 3rd"."""
    after = play(worked_example_start(), {"kelly": "0", "seb": "2", "steve": "2", "roger": "5"})
    standings = GAME.view(after.state, after, "kelly").standings
    assert standings == (
        Placing(1, ("roger",)),
        Placing(2, ("seb", "steve")),
        Placing(3, ("kelly",)),
    )


# -- turn 1 -------------------------------------------------------------------------------


def test_start_deducts_and_orders_by_ep_used_most_first() -> None:
    """Turn 1: "Every player names a number of EP to use, 0..their EP. It is deducted. Players
    are ordered by EP used, most first; equal EP share a position."""
    race = make_race([["a", "b", "c", "d", "e"]], turn=1)
    after = play(race, {"a": "1", "b": "10", "c": "4", "d": "4", "e": "0"}).state
    assert after.positions == (("b",), ("c", "d"), ("a",), ("e",))
    assert ep(after) == {"a": 9, "b": 0, "c": 6, "d": 6, "e": 10}


def test_no_adjustment_after_the_start() -> None:
    """Turn 1: "No end-of-turn adjustment follows turn 1": the leader and the last keep
    what they did not use, 2nd and 3rd gain nothing."""
    race = make_race([["a", "b", "c", "d", "e"]], turn=1)
    after = play(race, {"a": "5", "b": "4", "c": "3", "d": "2", "e": "1"}).state
    assert ep(after) == {"a": 5, "b": 6, "c": 7, "d": 8, "e": 9}


@pytest.mark.parametrize("text", ["CRUISE", "B", "OVERTAKE", "c"])
def test_start_allows_only_a_number_of_ep(text: str) -> None:
    """Turn 1: "Every player names a number of EP to use" (CRUISE/OVERTAKE are refused)."""
    kind, reason = refusal(make_race([["a", "b"]], turn=1), "a", text)
    assert kind is ProblemKind.ILLEGAL
    assert "turn 1" in reason and "number of EP" in reason


# -- tactical turns: the orders -------------------------------------------------------------


def test_use_deducts_and_scores_the_ep_used() -> None:
    """USE x: "0 <= x <= current EP. x is deducted. The player's *score* this turn is x."""
    race = make_race([["a"], ["b"], ["c"]], {"a": 4, "b": 6, "c": 3})
    report = trace(race, {"a": "USE 0", "b": "USE 6", "c": "USE 2"})
    legs = {leg.name: leg for leg in report.legs}
    assert (legs["b"].spent, legs["b"].score) == (6, Fraction(6))
    assert (legs["c"].spent, legs["c"].score) == (2, Fraction(2))
    assert (legs["a"].spent, legs["a"].score) == (0, Fraction(0))


def test_use_more_than_you_have_is_refused_naming_the_maximum() -> None:
    """USE x: "0 <= x <= current EP"; more is refused as illegal, naming the maximum."""
    kind, reason = refusal(make_race([["a"], ["b"]], {"a": 8, "b": 8}), "a", "USE 9")
    assert kind is ProblemKind.ILLEGAL
    assert reason == "you have only 8 EP, so USE 8 at most"


def test_cruise_scores_the_exact_average_of_those_who_did_not_cruise() -> None:
    """CRUISE: "the player's score is the average of the scores of all players who did not
    cruise this turn (exact fraction ...)". The seed's example: others 0, 2, 3 -> 5/3."""
    race = make_race([["a"], ["b"], ["c"], ["d"]], 5)
    report = trace(race, {"a": "USE 0", "b": "USE 2", "c": "USE 3", "d": "CRUISE"})
    assert report.cruise_average == Fraction(5, 3)
    assert {leg.name: leg.score for leg in report.legs}["d"] == Fraction(5, 3)


def test_cruise_average_is_exact_when_comparing() -> None:
    """CRUISE: "(exact fraction ...)": a cruiser scoring 5/3 beats a position whose best score
    is 1 and does not beat one whose best is 2."""
    race = make_race([["e"], ["f"], ["q"], ["d"]], 5)
    report = trace(race, {"e": "USE 2", "f": "USE 2", "q": "OVERTAKE", "d": "CRUISE"})
    assert report.cruise_average == Fraction(5, 3)
    assert report.positions == (("e",), ("f",), ("d",), ("q",))
    race = make_race([["e"], ["q"], ["f"], ["d"]], 5)
    report = trace(race, {"e": "USE 2", "f": "USE 2", "q": "OVERTAKE", "d": "CRUISE"})
    assert ("d",) not in [p.passers for p in report.passes]
    assert report.positions[-1] == ("d",)


def test_cruise_average_is_zero_when_everyone_cruises() -> None:
    """CRUISE: "(exact fraction; 0 if everyone cruised)"."""
    race = make_race([["a"], ["b"], ["c"]], 5)
    report = trace(race, {"a": "CRUISE", "b": "CRUISE", "c": "CRUISE"})
    assert report.cruise_average == 0
    assert all(leg.score == 0 for leg in report.legs)
    assert report.passes == ()


def test_cruise_score_is_shown_truncated_to_one_decimal() -> None:
    """CRUISE: "Shown to players truncated to one decimal, as in the seed (5/3 shows as 1.6)."""
    assert score_text(Fraction(5, 3)) == "1.6"
    assert score_text(Fraction(2, 3)) == "0.6"
    assert score_text(Fraction(3, 2)) == "1.5"
    assert score_text(Fraction(2)) == "2"
    race = make_race([["a"], ["b"], ["c"], ["d"]], 5)
    resolution = play(race, {"a": "USE 0", "b": "USE 2", "c": "USE 3", "d": "CRUISE"})
    assert any(event.text.startswith("d: CRUISE, score 1.6: the average of 0, 2 and 3,") for event in resolution.events)
    row = next(row for row in GAME.view(resolution.state, resolution, "a").table if row.player == "d")
    assert row.cells[1:] == ("CRUISE", "1.6")


def test_a_cruiser_below_ten_gains_one_ep() -> None:
    """CRUISE: "nothing is deducted ... A cruising player below 10 EP gains 1 EP." (Checked
    before the adjustment: the middle one of three positions gets +1 for 2nd as well.)"""
    race = make_race([["a"], ["b"], ["c"]], {"a": 5, "b": 9, "c": 10})
    report = trace(race, {"a": "USE 0", "b": "CRUISE", "c": "CRUISE"})
    gains = {leg.name: leg.cruise_gain for leg in report.legs}
    assert gains == {"a": 0, "b": 1, "c": 0}
    assert all(leg.spent == 0 for leg in report.legs)


def test_overtake_costs_one_ep_and_scores_one_in_the_cruise_average() -> None:
    """OVERTAKE: "costs 1 EP ... The player's score is 1 (it counts in the cruise average)."""
    race = make_race([["a"], ["b"], ["c"]], 5)
    report = trace(race, {"a": "USE 4", "b": "CRUISE", "c": "OVERTAKE"})
    legs = {leg.name: leg for leg in report.legs}
    assert (legs["c"].spent, legs["c"].score) == (1, Fraction(1))
    assert report.cruise_average == Fraction(5, 2)


def test_overtake_at_zero_ep_is_refused() -> None:
    """OVERTAKE: "refused at 0 EP (an error reply, not a silent default)."""
    race = make_race([["a"], ["b"]], {"a": 5, "b": 0})
    kind, reason = refusal(race, "b", "OVERTAKE")
    assert kind is ProblemKind.ILLEGAL
    assert "costs 1 EP" in reason and "0 EP" in reason
    with pytest.raises(IllegalOrderError):
        GAME.resolve(race, {"a": (Use(0),), "b": (Overtake(),)}, RNG)


# -- movement -----------------------------------------------------------------------------


def test_overtaken_runner_cannot_overtake() -> None:
    """Movement: "`[A] [B] [C]`, B and C both OVERTAKE. C is processed first and passes B; B
    has been overtaken, so B cannot pass A (B still pays its 1 EP). Result: `[A] [C] [B]`."""
    race = make_race([["a"], ["b"], ["c"]], 5)
    report = trace(race, {"a": "USE 0", "b": "OVERTAKE", "c": "OVERTAKE"})
    assert report.positions == (("a",), ("c",), ("b",))
    assert {leg.name: leg.spent for leg in report.legs}["b"] == 1
    assert [(b.player, b.overtaken_by) for b in report.blocked] == [("b", ("c",))]


def test_the_back_has_priority_for_use_too() -> None:
    """Movement: "when players at the back and further forward both try to pass, the ones at
    the back have priority" (the same last-to-first order for every option)."""
    race = make_race([["a"], ["b"], ["c"]], 10)
    report = trace(race, {"a": "USE 0", "b": "USE 5", "c": "USE 6"})
    assert report.positions == (("a",), ("c",), ("b",))


def test_a_leaders_overtake_costs_one_ep_and_does_nothing() -> None:
    """Movement: "OVERTAKE always does (a leader's OVERTAKE costs 1 EP and does nothing)"."""
    race = make_race([["a"], ["b"], ["c"]], 5)
    report = trace(race, {"a": "OVERTAKE", "b": "USE 0", "c": "USE 0"})
    assert report.positions == race.positions
    assert report.passes == ()
    assert {leg.name: leg.spent for leg in report.legs}["a"] == 1


def test_use_must_beat_everyone_in_the_position_ahead() -> None:
    """Movement: "USE or CRUISE does if their score is greater than the score of **every**
    player in that position" -- equal is not enough, nor beating only some who share it."""
    race = make_race([["a", "b"], ["c"], ["d"]], 10)
    report = trace(race, {"a": "USE 1", "b": "USE 4", "c": "USE 3", "d": "USE 3"})
    assert report.positions == race.positions
    assert report.passes == ()


def test_passing_a_shared_position_passes_everyone_in_it() -> None:
    """Movement: "the passers ... form a new position directly in front of the one they
    passed; everyone in the passed position counts as overtaken" (the seed: "they may
    overtake more than one player if they happen to be sharing the position")."""
    race = make_race([["x"], ["a", "b"], ["c"]], 10)
    report = trace(race, {"x": "USE 0", "a": "OVERTAKE", "b": "USE 9", "c": "USE 3"})
    # c (3) does not beat b (9), so c stays; a (OVERTAKE) and b (9 > 0) pass x together.
    assert report.positions == (("a", "b"), ("x",), ("c",))
    report = trace(race, {"x": "USE 5", "a": "OVERTAKE", "b": "USE 2", "c": "USE 3"})
    assert report.positions == (("x",), ("c",), ("a", "b"))
    assert [(p.passers, p.passed) for p in report.passes] == [(("c",), ("a", "b"))]
    assert [(b.player, b.overtaken_by) for b in report.blocked] == [("a", ("c",))]


def test_passers_from_one_position_stay_level() -> None:
    """Movement: "several passers from one position stay level with each other" (worked
    example: "Seb (3 > 2) and Steve (OVERTAKE) pass Roger together")."""
    race = make_race([["x"], ["a"], ["b", "c", "d"]], 10)
    report = trace(race, {"x": "USE 9", "a": "USE 2", "b": "USE 6", "c": "OVERTAKE", "d": "USE 2"})
    assert report.positions == (("x",), ("b", "c"), ("a",), ("d",))


def test_nobody_gains_more_than_one_position() -> None:
    """Movement: "so a player gains at most one position a turn"."""
    race = make_race([["a"], ["b"], ["c"]], 10)
    report = trace(race, {"a": "USE 0", "b": "USE 0", "c": "USE 10"})
    assert report.positions == (("a",), ("c",), ("b",))


# -- the end-of-turn adjustment ---------------------------------------------------------------


def test_adjustment_second_and_third_gain_first_and_last_lose() -> None:
    """Adjustment: "players in 2nd or 3rd place gain 1 EP; players in 1st place lose 1 EP;
    players in last place lose 1 EP"."""
    race = make_race([["a"], ["b"], ["c"], ["d"], ["e"]], 5)
    after = play(race, {p: "USE 0" for p in "abcde"}).state
    assert ep(after) == {"a": 4, "b": 6, "c": 6, "d": 5, "e": 4}


def test_first_and_last_at_once_lose_only_one() -> None:
    """Adjustment: "never more than one -1 (a single position that is both 1st and last
    loses 1 ...)"."""
    race = make_race([["a", "b", "c"]], 5)
    after = play(race, {p: "USE 0" for p in "abc"}).state
    assert ep(after) == {"a": 4, "b": 4, "c": 4}


def test_third_that_is_also_last_nets_zero() -> None:
    """Adjustment: "3rd that is also last nets 0" (and so does 2nd that is also last)."""
    race = make_race([["a"], ["b"], ["c"]], 5)
    assert ep(play(race, {p: "USE 0" for p in "abc"}).state) == {"a": 4, "b": 6, "c": 5}
    race = make_race([["a"], ["b"]], 5)
    assert ep(play(race, {p: "USE 0" for p in "ab"}).state) == {"a": 4, "b": 5}


def test_adjustment_never_goes_above_ten_or_below_zero() -> None:
    """Adjustment: "EP never go above 10 or below 0 ("Unless this would take players above 10
    or below 0")"."""
    race = make_race([["a"], ["b"], ["c"], ["d"]], {"a": 1, "b": 10, "c": 10, "d": 0})
    after = play(race, {"a": "USE 1", "b": "USE 0", "c": "CRUISE", "d": "USE 0"}).state
    assert ep(after) == {"a": 0, "b": 10, "c": 10, "d": 0}


def test_order_of_operations_deduct_then_cruise_then_move_then_adjust() -> None:
    """ "Order of operations in a turn: deduct USE/OVERTAKE costs -> cruise +1 -> movement ->
    adjustment." At 10 EP, USE 3 then 2nd: 7 + 1 = 8 (adjusting first would give 7). At 10,
    cruising into 1st: no cruise gain at 10, then -1 = 9 (adjusting first would give 10)."""
    race = make_race([["a"], ["b"], ["c"], ["d"]], {"a": 10, "b": 10, "c": 10, "d": 10})
    after = play(race, {"a": "CRUISE", "b": "USE 3", "c": "USE 3", "d": "USE 3"}).state
    assert after.positions == (("a",), ("b",), ("c",), ("d",))
    assert ep(after)["b"] == 8
    assert ep(after)["a"] == 9


def test_movement_uses_positions_after_movement_for_the_adjustment() -> None:
    """Adjustment: "Using positions after movement": a runner who passes the leader is 1st."""
    race = make_race([["a"], ["b"], ["c"]], 5)
    after = play(race, {"a": "USE 0", "b": "USE 2", "c": "USE 0"}).state
    assert after.positions == (("b",), ("a",), ("c",))
    assert ep(after) == {"b": 2, "a": 6, "c": 5}


# -- the final sprint ---------------------------------------------------------------------


def test_sprint_needs_no_orders() -> None:
    """Final sprint: "No orders are needed" (expected_players is empty; an order is refused)."""
    race = make_race([["a"], ["b"]], 5, turn=5, turns=5)
    assert race.stage is Stage.SPRINT
    assert GAME.expected_players(race) == frozenset()
    assert GAME.default_orders(race, "a") == ()
    kind, reason = refusal(race, "a", "USE 3")
    assert kind is ProblemKind.ILLEGAL and "sprint" in reason


def test_sprint_scores_all_remaining_ep_moving_at_most_one_position() -> None:
    """Final sprint: "every player's score is all their remaining EP. Movement as in a
    tactical turn (last to first, beat everyone in the position ahead, at most one position
    gained). No adjustment. The order after the sprint is the result; players who share a
    position share the place."""
    race = make_race([["a"], ["b", "c"], ["d"], ["e"]], {"a": 3, "b": 4, "c": 2, "d": 2, "e": 9}, turn=5, turns=5)
    resolution = GAME.resolve(race, {}, RNG)
    after = resolution.state
    # e (9) passes d (2) only; d was overtaken; b (4) beats a (3), c (2) does not.
    assert after.positions == (("b",), ("a",), ("c",), ("e",), ("d",))
    assert GAME.is_finished(after)
    assert GAME.standings(after) == after.positions
    # The EP are used in the sprint; there is no adjustment afterwards.
    assert all(runner.ep == 0 for runner in after.runners)
    assert not any(event.kind == "adjustment" for event in resolution.events)


def test_sprint_ties_share_the_place() -> None:
    """Final sprint: "players who share a position share the place"."""
    race = make_race([["a", "b"], ["c"]], {"a": 1, "b": 1, "c": 1}, turn=3, turns=3)
    after = GAME.resolve(race, {}, RNG).state
    assert GAME.standings(after) == (("a", "b"), ("c",))
    assert GAME.view(after, None, "c").standings[0] == Placing(1, ("a", "b"))


# -- NMR ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("ep_now", "default"), [(10, 5), (7, 3), (1, 0), (0, 0)])
def test_nmr_uses_half_the_remaining_ep_rounded_down(ep_now: int, default: int) -> None:
    """NMR: "The player uses half their remaining EP, rounded down (turn 1: 5; a player at 7
    EP: USE 3; at 1 EP: USE 0)."""
    race = make_race([["a"], ["b"]], {"a": ep_now, "b": 5})
    assert GAME.default_orders(race, "a") == (Use(default),)


def test_a_runner_without_orders_gets_the_nmr_default_in_resolve() -> None:
    """NMR: "The player uses half their remaining EP, rounded down (turn 1: 5 ...)"."""
    race = GAME.new_game(FIVE, {}, RNG)
    after = GAME.resolve(race, orders_of(race, {"kelly": "0", "seb": "2", "steve": "2", "roger": "5"}), RNG).state
    assert ep(after)["zed"] == 5
    assert after.positions[0] == ("roger", "zed")


# -- orders in mail -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("USE 3", Use(3)),
        ("use 3", Use(3)),
        ("A 3", Use(3)),
        ("a 3", Use(3)),
        ("3", Use(3)),
        ("BID 3", Use(3)),
        ("bid 3", Use(3)),
        ("CRUISE", Cruise()),
        ("cruise", Cruise()),
        ("B", Cruise()),
        ("b", Cruise()),
        ("OVERTAKE", Overtake()),
        ("Overtake", Overtake()),
        ("C", Overtake()),
        ("c", Overtake()),
        ("  USE 3  ", Use(3)),
        ("\nUSE 3\n\n", Use(3)),
    ],
)
def test_accepted_spellings_are_case_insensitive(text: str, order: object) -> None:
    """Orders in mail: "Case-insensitive ... Accepted spellings (at least): `USE 3`, `A 3`,
    `3`, `BID 3` (turn 1), `CRUISE`, `B`, `OVERTAKE`, `C`."""
    parsed = GAME.parse_orders(make_race([["a"], ["b"]], 5), "a", text)
    assert parsed.ok and parsed.complete
    assert parsed.orders == (order,)


def test_bid_is_accepted_on_turn_one() -> None:
    """Orders in mail: "`BID 3` (turn 1)"."""
    parsed = GAME.parse_orders(make_race([["a", "b"]], turn=1), "a", "BID 3")
    assert parsed.orders == (Use(3),)


def test_one_order_per_mail() -> None:
    """Orders in mail: "one order per mail body": two orders are both refused, so the
    previous valid order stays in force."""
    parsed = GAME.parse_orders(make_race([["a"], ["b"]], 5), "a", "USE 3\n\nCRUISE")
    assert parsed.orders == ()
    assert [(p.line_no, p.line) for p in parsed.problems] == [(1, "USE 3"), (3, "CRUISE")]
    assert all("one order per turn" in p.reason for p in parsed.problems)


def test_anything_else_is_refused_quoting_the_line_and_listing_what_is_allowed() -> None:
    """Orders in mail: "Anything else is answered with a clear error that quotes the line and
    lists what is allowed"."""
    parsed = GAME.parse_orders(make_race([["a"], ["b"]], {"a": 6, "b": 5}), "a", "\nsprint hard")
    assert parsed.orders == () and not parsed.complete
    (problem,) = parsed.problems
    assert (problem.line_no, problem.line, problem.kind) == (2, "sprint hard", ProblemKind.INVALID)
    for allowed in ("USE n", "0 to 6", "CRUISE", "OVERTAKE", "A n", "B", "C"):
        assert allowed in problem.reason


def test_a_mail_without_an_order_is_refused() -> None:
    """Orders in mail: "one order per mail body": an empty mail carries none."""
    parsed = GAME.parse_orders(make_race([["a"], ["b"]], 5), "a", "\n  \n")
    assert parsed.orders == () and not parsed.complete
    assert "no order found" in parsed.problems[0].reason


def test_a_runner_who_leaves_stays_in_the_classification_as_not_finishing() -> None:
    """ "the dropped driver vanishes from the standings and from the final
    classification (no DNF)". racecraft.md is silent on leaving; the rule chosen
    (`resolve.drop_runner`): out of the race, the places close up, and classified after every
    runner as "did not finish", the last to leave last."""
    import random as _random

    from rules import find_game
    from rules.racecraft.view import DID_NOT_FINISH

    game = find_game("racecraft")
    race = game.new_game(["anna", "kelly", "roger", "seb", "steve"], {}, _random.Random(1))
    race = game.drop_player(game.drop_player(race, "seb"), "anna")
    assert "seb" not in game.players(race) and all("seb" not in p for p in game.standings(race))
    view = game.view(race, None, "kelly")
    assert [(p.players, p.note) for p in view.standings[-2:]] == [
        (("anna",), DID_NOT_FINISH),
        (("seb",), DID_NOT_FINISH),
    ]
    assert all(not p.note for p in view.standings[:-2])
    again = game.load_state(game.dump_state(race))
    assert again == race and game.dump_state(race)["retired"] == ["seb", "anna"]
    untouched = game.new_game(["anna", "kelly", "roger", "seb", "steve"], {}, _random.Random(1))
    assert "retired" not in game.dump_state(untouched), "states without a departure are written as before"
