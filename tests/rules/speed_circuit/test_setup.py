"""The set-up turns: car design (seed 003 design table; P1, P2, P3), the starting tyre set,
and qualifying by wear + skill bid (seed 003 "Starting Grid"; P31)."""

from __future__ import annotations

import random

import pytest

from rules.api import OptionError, ProblemKind
from rules.speed_circuit import GAME
from rules.speed_circuit.car import Design, Tyre
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.plot import Order
from tests.rules.speed_circuit.helpers import ScriptedDice

PLAYERS = ["ann", "bob", "cat"]


def new(**options: str) -> RaceState:
    return GAME.new_game(PLAYERS, options, random.Random(0))


def design_turn(state: RaceState, texts: dict[str, str]) -> RaceState:
    orders: dict[str, tuple[Order, ...]] = {}
    for p in GAME.expected_players(state):
        if p in texts:
            parsed = GAME.parse_orders(state, p, texts[p])
            assert parsed.ok, parsed.problems
            orders[p] = parsed.orders
        else:
            orders[p] = GAME.default_orders(state, p)
    return GAME.resolve(state, orders, random.Random(0)).state


def test_the_first_two_turns_are_design_and_qualifying() -> None:
    """api.py: set-up turns (car design, qualifying) are the first shell turns."""
    state = new()
    assert GAME.turn_label(state) == "Turn 1: car design"
    assert GAME.expected_players(state) == frozenset(PLAYERS)
    state = design_turn(state, {})
    assert GAME.turn_label(state) == "Turn 2: qualifying"
    state = GAME.resolve(state, {p: GAME.default_orders(state, p) for p in PLAYERS}, random.Random(1)).state
    assert state.phase is Phase.RACE
    assert GAME.turn_label(state).startswith("Race turn 1")


def test_design_table_ratings() -> None:
    """Seed 003 Car Design Table: Acceleration n.a./20/40/60/80, Deceleration the same,
    Top Speed 120/140/160/180/200, Start Speed 20/40/60/100/120 (P2: no 80)."""
    low = Design(acc=-1, dec=-1, top=-2, start=-2)
    high = Design(acc=2, dec=2, top=2, start=2, prime=-2, option=-2, skill=-2)
    assert [low.rating(n) for n in ("ACC", "DEC", "TOP", "START")] == [20, 20, 120, 20]
    assert [high.rating(n) for n in ("ACC", "DEC", "TOP", "START")] == [80, 80, 200, 120]
    assert [Design(start=s).rating("START") for s in range(-2, 3)] == [20, 40, 60, 100, 120]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("DESIGN ACC 2 TOP 1", "add up to +3"),
        ("DESIGN ACC -2 TOP 2", "ACC -2 is n.a."),
        ("DESIGN DEC -2", "DEC -2 is n.a."),
        ("DESIGN SKILL 3", "each column is -2..+2"),
    ],
)
def test_design_over_two_points_or_na_is_refused(text: str, reason: str) -> None:
    """P1: the sum of the chosen column values is at most 2; -2 is not allowed for accel and decel."""
    parsed = GAME.parse_orders(new(), "ann", text)
    assert not parsed.orders
    assert parsed.problems[0].kind is ProblemKind.ILLEGAL
    assert reason in parsed.problems[0].reason


def test_design_with_traded_points_is_accepted() -> None:
    """P1: "2 total" is a budget; minus columns pay for plus columns."""
    parsed = GAME.parse_orders(new(), "ann", "DESIGN ACC 2 DEC 1 TOP 1 START -2 PRIME 0 OPTION 0 SKILL 0\nTYRES OPTION")
    assert parsed.ok and parsed.complete


@pytest.mark.parametrize("laps", [1, 3, 5])
def test_wear_and_skill_scale_with_the_laps(laps: int) -> None:
    """P3 / seed 003: wear per set = laps x 1..5 by level; skill = laps x 0..4 by level
    (3/6/9/12/15 wear and 0/3/6/9/12 chips for 3 laps)."""
    state = new(laps=str(laps))
    state = design_turn(
        state,
        {
            "ann": "DESIGN PRIME 2 OPTION -1 SKILL 1\nTYRES PRIME",
            "bob": "DESIGN PRIME -2 OPTION 2 SKILL 2\nTYRES OPTION",
            "cat": "DESIGN SKILL -2 PRIME 2 OPTION 2",
        },
    )
    ann, bob, cat = (state.car(p) for p in PLAYERS)
    assert (ann.wear, ann.skill, ann.tyres) == (5 * laps, 3 * laps, Tyre.PRIME)
    assert (bob.wear, bob.skill, bob.tyres) == (5 * laps, 4 * laps, Tyre.OPTION)
    assert (cat.wear, cat.skill) == (5 * laps, 0)
    assert ann.design is not None and ann.design.tyre_wear(Tyre.OPTION, laps) == 2 * laps


def test_design_nmr_gets_the_balanced_default() -> None:
    """§8 NMR at set-up: a car that was not designed gets the base card with one point on each tyre."""
    state = design_turn(new(), {})
    ann = state.car("ann")
    assert (ann.acc, ann.dec, ann.top, ann.start, ann.wear, ann.skill) == (40, 40, 160, 60, 12, 6)


def test_bids_are_limited_to_the_starting_set_and_the_chips_held() -> None:
    """P31: wear bids come from the starting tyre set only; the bid can't exceed that wear
    plus the skill chips held; zero bids are allowed."""
    state = design_turn(new(), {"ann": "DESIGN PRIME 2 OPTION -2 SKILL 0\nTYRES OPTION"})
    ann = state.car("ann")
    assert ann.wear == 3  # the option set, bought at -2
    refused = GAME.parse_orders(state, "ann", "BID WEAR 4 SKILL 0")
    assert "starting set has 3" in refused.problems[0].reason
    refused = GAME.parse_orders(state, "ann", "BID WEAR 0 SKILL 7")
    assert "hold 6 chips" in refused.problems[0].reason
    assert GAME.parse_orders(state, "ann", "BID WEAR 0 SKILL 0").ok


def test_grid_by_bid_with_skill_equal_to_wear_and_all_of_it_lost() -> None:
    """Seed 003 Starting Grid: the most chips gets the pole; skill chips equal wear chips;
    all bid wear and skill is lost."""
    state = design_turn(new(), {})
    texts = {"ann": "BID WEAR 1 SKILL 1", "bob": "BID WEAR 0 SKILL 3", "cat": "BID WEAR 1"}
    orders = {p: GAME.parse_orders(state, p, t).orders for p, t in texts.items()}
    after = GAME.resolve(state, orders, ScriptedDice()).state
    assert [after.car(p).space for p in ("bob", "ann", "cat")] == list(state.track.grid[:3])
    assert GAME.standings(after) == (("bob",), ("ann",), ("cat",))
    assert (after.car("ann").wear, after.car("ann").skill) == (11, 5)
    assert (after.car("bob").wear, after.car("bob").skill) == (12, 3)


def test_tied_bids_are_broken_by_d100_higher_first() -> None:
    """Seed 003: "Ties are broken by percentile die roll, highest result receiving the better
    position"; P31. Equal percentiles roll again."""
    state = design_turn(new(), {})
    orders = {p: GAME.parse_orders(state, p, "BID WEAR 2").orders for p in PLAYERS}
    # ann 40, bob 90, cat 40 -> bob first; ann and cat roll again: ann 10, cat 70
    resolution = GAME.resolve(state, orders, ScriptedDice(40, 90, 40, 10, 70))
    after = resolution.state
    assert GAME.standings(after) == (("bob",), ("cat",), ("ann",))
    rolls = [e.roll for e in resolution.events if e.roll is not None]
    assert [r.dice for r in rolls] == ["d100"] * 5


def test_set_up_orders_are_refused_in_the_race_and_race_orders_in_set_up() -> None:
    """api.py: parse_orders accepts the set-up orders in the set-up turns only."""
    state = new()
    parsed = GAME.parse_orders(state, "ann", "SPEED 60")
    assert parsed.problems and "takes DESIGN and TYRES" in parsed.problems[0].reason


def test_bad_options_are_refused() -> None:
    """api.py new_game raises OptionError for bad options."""
    for options in ({"track": "monza"}, {"laps": "0"}, {"lane_change": "sideways"}, {"colour": "red"}):
        with pytest.raises(OptionError):
            GAME.new_game(PLAYERS, options, random.Random(0))


def test_the_pole_is_the_qualifying_bids_winner_and_the_view_reports_it_to_the_end() -> None:
    """Seed 003 Starting Grid: "The driver who has bid the most chips gets the pole": the
    views report it as the race's honour (`Honour("pole", ...)`) from the grid on, and a state
    stored and read back keeps it."""
    from rules.api import Honour, Viewer

    state = design_turn(new(), {})
    assert GAME.view(state, None, Viewer.PUBLIC).honours == (), "no pole before the bid"
    texts = {"ann": "BID WEAR 1 SKILL 1", "bob": "BID WEAR 0 SKILL 3", "cat": "BID WEAR 1"}
    orders = {p: GAME.parse_orders(state, p, t).orders for p, t in texts.items()}
    after = GAME.resolve(state, orders, ScriptedDice()).state
    assert after.pole == "bob"
    assert GAME.view(after, None, Viewer.PUBLIC).honours == (Honour("pole", "bob"),)
    assert GAME.load_state(GAME.dump_state(after)).pole == "bob"
    assert "pole" not in GAME.dump_state(state), "a state before the bid is stored as before"
    assert GAME.honours == ("pole",)


def test_racecraft_and_speedphreakz_define_no_honour() -> None:
    """docs/championships.md, "Bonus points": neither game's text has a pole, a lap leader or a
    fastest lap."""
    from rules import find_game

    assert find_game("racecraft").honours == () and find_game("speedphreakz").honours == ()
