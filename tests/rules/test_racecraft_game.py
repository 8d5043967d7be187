"""Racecraft as a `rules.api.Game`: help, views, GM overrides, storage, events."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import find_game
from rules.api import FigureError, Game, Placing, StateError, TableRow, Viewer
from rules.racecraft import GAME, RacecraftView, RunnerPosition
from rules.racecraft.model import Cruise, Overtake, Use, ordinal
from rules.racecraft.parse import ORDER_FORMS, allowed_now
from tests.rules.racecraft_strategies import make_race

RNG = random.Random(0)
FIVE = ["kelly", "seb", "steve", "roger", "zed"]


def resolve_texts(race: Any, texts: dict[str, str]) -> Any:
    orders = {}
    for player in GAME.expected_players(race):
        parsed = GAME.parse_orders(race, player, texts[player]) if player in texts else None
        orders[player] = parsed.orders if parsed else GAME.default_orders(race, player)
    return GAME.resolve(race, orders, RNG)


def worked_example() -> tuple[Any, Any]:
    """The worked example with a fifth runner, zed, who uses 0 then cruises at the back."""
    start = GAME.new_game(FIVE, {}, RNG)
    one = resolve_texts(start, {"kelly": "0", "seb": "2", "steve": "2", "roger": "5", "zed": "0"})
    two = resolve_texts(
        one.state, {"roger": "CRUISE", "seb": "USE 3", "steve": "OVERTAKE", "kelly": "USE 2", "zed": "B"}
    )
    return one, two


def test_racecraft_is_registered_and_is_a_game() -> None:
    """`rules.find_game("racecraft")` is this game, and it implements the Game protocol."""
    registered: object = GAME
    assert find_game("Racecraft") is registered
    assert isinstance(GAME, Game)
    assert (GAME.name, GAME.title, GAME.min_players, GAME.max_players) == ("racecraft", "Racecraft", 5, 8)


def test_bad_player_names_are_refused() -> None:
    """Player ids are lower-case letters, digits, - and _ (rules.api.PlayerId), each once."""
    with pytest.raises(ValueError, match="bad player name"):
        GAME.new_game(["Kelly", "seb", "steve", "roger", "zed"], {}, RNG)
    with pytest.raises(ValueError, match="twice"):
        GAME.new_game(["seb", "seb", "steve", "roger", "zed"], {}, RNG)


def test_everyone_is_level_before_the_start() -> None:
    """Before turn 1 nobody has run: one position, by name."""
    race = GAME.new_game(FIVE, {}, RNG)
    assert GAME.standings(race) == (("kelly", "roger", "seb", "steve", "zed"),)
    assert GAME.expected_players(race) == frozenset(FIVE)


def test_option_help_and_rules_summary_name_the_turns_option() -> None:
    """option_help lists each option with its range and default."""
    assert "turns" in GAME.option_help() and "3 to 9" in GAME.option_help() and "default 5" in GAME.option_help()
    assert "10 energy points" in GAME.rules_summary()


# -- order help and canonical text -------------------------------------------------------


def test_format_orders_is_canonical() -> None:
    """format_orders writes `USE 3`, `CRUISE`, `OVERTAKE`."""
    assert GAME.format_orders([Use(3)]) == "USE 3"
    assert GAME.format_orders([Cruise()]) == "CRUISE"
    assert GAME.format_orders([Overtake()]) == "OVERTAKE"
    assert GAME.format_orders([]) == ""


def test_order_help_is_generated_from_the_grammar_table_and_tailored() -> None:
    """HELP lists every form the table allows now, with the player's EP. It never states the
    default on its own: the GM's plot may replace the game's default, and the mail says which
    one counts, once, from the outlook (issue: "the syntax block never states the default")."""
    race = make_race([["a"], ["b"]], {"a": 7, "b": 0})
    text = GAME.order_help(race, "a")
    for form in ORDER_FORMS:
        assert form.keyword in text
        for alias in form.aliases:
            assert f"{alias}" in text
    assert "You have 7 EP" in text and "n from 0 to 7" in text
    assert "no order arrives" not in text.lower() and "default" not in text.lower()
    at_zero = GAME.order_help(race, "b")
    assert "OVERTAKE is not possible now" in at_zero


def test_order_help_at_zero_ep_says_use_0_not_a_range_of_one() -> None:
    """racecraft.md: a runner spends "0 to all of their EP"; with none left the only number is
    0. Played by mail (playtest5 RC4): the help read "n from 0 to 0"; it says "you have no EP
    left: USE 0", and what may be sent now says USE 0 alone."""
    race = make_race([["a"], ["b"]], {"a": 7, "b": 0})
    at_zero = GAME.order_help(race, "b")
    assert "from 0 to 0" not in at_zero, at_zero
    assert "you have no EP left: USE 0" in at_zero, at_zero
    assert "from 0 to 0" not in allowed_now(race, "b")
    assert "USE 0 (you have no EP left)" in allowed_now(race, "b")


def test_order_help_on_turn_one_offers_only_a_number() -> None:
    """Turn 1: only a number of EP; the help says so and offers no CRUISE or OVERTAKE."""
    text = GAME.order_help(GAME.new_game(FIVE, {}, RNG), "seb")
    assert "USE n" in text and "CRUISE" not in text and "OVERTAKE" not in text
    assert "n from 0 to 10" in text


def test_order_help_in_the_sprint_and_after_the_race() -> None:
    """The final sprint needs no orders; after it there are none."""
    race = make_race([["a"], ["b"]], 6, turn=5, turns=5)
    assert "no orders are needed" in GAME.order_help(race, "a")
    assert "6 EP" in GAME.order_help(race, "a")
    assert "over" in GAME.order_help(make_race([["a"], ["b"]], 6, turn=6, turns=5), "a")


def test_merge_orders_the_later_set_replaces() -> None:
    """Orders in mail: "a later mail before the deadline replaces the earlier"."""
    assert GAME.merge_orders((Use(3),), (Cruise(),)) == (Cruise(),)
    assert GAME.merge_orders((Use(3),), ()) == (Use(3),)


# -- views --------------------------------------------------------------------------------


def test_view_has_the_common_keys() -> None:
    """rules.api "Views": title, turn_label, finished, standings, columns, table, events,
    private, summary; and every runner's place and EP, front first, for the picture."""
    _one, two = worked_example()
    view = GAME.view(two.state, two, Viewer.PUBLIC)
    assert isinstance(view, RacecraftView)
    assert view.title == "Racecraft"
    assert view.turn_label == "Turn 3 of 5: tactical"
    assert view.finished is False
    assert view.standings == (
        Placing(1, ("seb", "steve")),
        Placing(2, ("roger",)),
        Placing(3, ("kelly", "zed")),
    )
    assert view.columns == ("EP", "Last order", "Score")
    assert view.table[0] == TableRow("seb", 1, ("4", "USE 3", "3"))
    assert [row.player for row in view.table] == ["seb", "steve", "roger", "kelly", "zed"]
    assert view.events == tuple(event.text for event in two.events)
    assert view.private == ()
    assert view.summary == "seb and steve share the lead; kelly and zed are last."
    assert view.runners[:3] == (
        RunnerPosition("seb", 1, 4),
        RunnerPosition("steve", 1, 6),
        RunnerPosition("roger", 2, 7),
    )
    assert (view.turn, view.turns, view.stage) == (3, 5, "tactical")


def test_a_view_reads_as_a_mapping_of_its_fields() -> None:
    """rules.api "Views": shell code written for dict views still reads ``view["x"]``,
    ``view.get("x")`` and ``dict(view)``; nothing but the fields is a key."""
    _one, two = worked_example()
    view = GAME.view(two.state, two, Viewer.PUBLIC)
    assert isinstance(view, RacecraftView)
    assert view["summary"] == view.summary and view.get("finished") is False
    assert list(view) == [f.name for f in dataclasses.fields(view)]
    assert dict(view)["runners"] is view.runners
    assert "get" not in view and view.get("nope") is None
    with pytest.raises(KeyError):
        view["__class__"]


def test_private_lines_only_for_the_player() -> None:
    """A player's view adds their EP and place, never the NMR default (the sheet states the one
    default that counts, from the outlook); PUBLIC and GM views show nothing private."""
    _one, two = worked_example()
    assert GAME.view(two.state, two, "roger").private == ("You have 7 EP and are 2nd.",)
    assert GAME.view(two.state, two, Viewer.GM).private == ()
    public = repr(GAME.view(two.state, two, Viewer.PUBLIC))
    assert "NMR default" not in public


def test_view_before_any_turn_and_after_the_race() -> None:
    """No events before the first turn; `finished` and a winner after the sprint."""
    race = GAME.new_game(FIVE, {"turns": "3"}, RNG)
    view = GAME.view(race, None, Viewer.PUBLIC)
    assert view.events == () and view.turn_label == "Turn 1 of 3: start"
    assert GAME.view(race, None, "seb").private == ("You have 10 EP.",)
    assert all(row.cells == ("10", "", "") for row in view.table)
    while not GAME.is_finished(race):
        race = resolve_texts(race, {}).state
    view = GAME.view(race, None, "kelly")
    assert view.finished is True
    assert view.summary.endswith(("wins.", "share the win."))
    assert view.private[0].startswith("You finished")


def test_results_events_read_well() -> None:
    """Events: one line per runner (score and EP change), one per pass, the adjustment, the
    positions after the turn."""
    _one, two = worked_example()
    texts = [event.text for event in two.events]
    assert (
        "roger: CRUISE, score 2: the average of 3, 1 and 2, the scores of those who did not cruise (EP 5 -> 6, +1 for cruising)."
        in texts
    )
    assert "seb: USE 3, score 3 (EP 8 -> 5)." in texts
    assert "steve: OVERTAKE, score 1 (EP 8 -> 7, 1 EP paid)." in texts
    assert "seb (3) and steve (OVERTAKE) pass roger (2)." in texts
    assert "kelly is 3rd and last: no change (8 EP)." in texts
    assert texts[-1] == (
        "After turn 2: 1st seb (4 EP) and steve (6 EP); 2nd roger (7 EP); 3rd kelly (8 EP) and zed (10 EP)."
    )
    kinds = [event.kind for event in two.events]
    assert kinds.count("order") == 5 and kinds.count("overtake") == 1 and kinds[-1] == "positions"


def test_no_results_line_parses_as_an_order() -> None:
    """testing.md: "Never put a line that parses as a valid order into the bot's own mail"."""
    one, two = worked_example()
    race = two.state
    lines = [event.text for event in one.events + two.events]
    view = GAME.view(race, two, "roger")
    lines += [*view.private, view.summary, view.turn_label]
    for line in lines:
        assert not GAME.parse_orders(race, "roger", line).orders, line


# -- GM overrides -------------------------------------------------------------------------


def test_set_figure_sets_ep() -> None:
    """GM SET: `SET <game> <seat> ep 7`."""
    race = GAME.set_figure(GAME.new_game(FIVE, {}, RNG), "seb", "EP", "7")
    assert GAME.figures(race, "seb") == {"ep": 7}
    assert GAME.figures(race, "kelly") == {"ep": 10}


@pytest.mark.parametrize(
    ("player", "name", "value"),
    [("seb", "ep", "11"), ("seb", "ep", "-1"), ("seb", "ep", "x"), ("seb", "wear", "1"), ("nobody", "ep", "3")],
)
def test_set_figure_refuses_bad_figures(player: str, name: str, value: str) -> None:
    """GM SET: FigureError with the allowed names or range."""
    with pytest.raises(FigureError):
        GAME.set_figure(GAME.new_game(FIVE, {}, RNG), player, name, value)


@pytest.mark.parametrize(
    "value",
    [
        "9" * 5000,  # int() refuses more than 4300 digits with a ValueError
        "0" * 5000 + "7",
        "99999999999999999999",
        "10.0",
        "1e1",
        "0x0a",
        "+5",
        " - 3",
        "",
        "   ",
        "\u00b2",  # superscript two: isdigit() is true, int() refuses it
        "\u0667",  # Arabic-Indic seven: int() would read it
        "\uff17",  # full-width seven
        "7\nPROCESS rc1",
    ],
)
def test_set_figure_refuses_hostile_numbers_with_the_legal_range(value: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    FigureError names the range (racecraft.md: EP 0..10) and quotes at most 40 characters."""
    with pytest.raises(FigureError, match="from 0 to 10") as caught:
        GAME.set_figure(GAME.new_game(FIVE, {}, RNG), "seb", "ep", value)
    message = str(caught.value)
    assert "\n" not in message and "9" * 41 not in message and "0" * 41 not in message


def test_set_figure_quotes_a_long_figure_name_cut() -> None:
    with pytest.raises(FigureError, match="ep \\(0 to 10\\)") as caught:
        GAME.set_figure(GAME.new_game(FIVE, {}, RNG), "seb", "x" * 5000, "3")
    assert "x" * 41 not in str(caught.value)


@settings(max_examples=300, deadline=None)
@given(
    name=st.one_of(st.just("ep"), st.just(" EP "), st.text(max_size=20)),
    value=st.one_of(
        st.text(max_size=30),
        st.text(alphabet="0123456789 +-", max_size=30),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
    ),
)
def test_set_figure_on_any_text_sets_a_legal_ep_or_raises_figure_error(name: str, value: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    race = GAME.new_game(FIVE, {}, RNG)
    try:
        changed = GAME.set_figure(race, "seb", name, value)
    except FigureError as exc:
        assert "\n" not in str(exc)
    else:
        assert GAME.figures(changed, "seb")["ep"] == int(value.strip())
        assert 0 <= int(value.strip()) <= 10


def test_drop_player_removes_the_runner_and_closes_up_the_places() -> None:
    """GM DROP (rule chosen): the runner leaves the race and the standings; an emptied
    position disappears."""
    one, _two = worked_example()
    race = GAME.drop_player(one.state, "roger")
    assert GAME.standings(race) == (("seb", "steve"), ("kelly", "zed"))
    assert "roger" not in GAME.players(race)
    assert "roger" not in GAME.expected_players(race)
    after = resolve_texts(race, {})
    assert "roger" not in [p for position in GAME.standings(after.state) for p in position]
    assert GAME.view(race, None, "roger").private == ("You are no longer in the race.",)
    with pytest.raises(ValueError):
        GAME.drop_player(race, "roger")


# -- storage ------------------------------------------------------------------------------


def test_dump_state_is_versioned_json_and_loads_back() -> None:
    """dump_state: JSON-ready with a "version" key; load_state(dump_state(s)) == s."""
    _one, two = worked_example()
    data = GAME.dump_state(two.state)
    assert data["version"] == 1
    assert GAME.load_state(json.loads(json.dumps(data))) == two.state


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(version=2),
        lambda d: d.pop("runners"),
        lambda d: d.update(turns=12),
        lambda d: d["runners"][0].update(ep=11),
        lambda d: d["runners"][0].update(last_play="JUMP"),
        lambda d: d["runners"][0].update(last_score="x/y"),
        lambda d: d["positions"].pop(),
        lambda d: d["positions"].append([]),
        lambda d: d["runners"].append(dict(d["runners"][0])),
    ],
)
def test_load_state_refuses_bad_data(damage: Any) -> None:
    """load_state raises StateError on an unknown version or a bad shape."""
    _one, two = worked_example()
    data = json.loads(json.dumps(GAME.dump_state(two.state)))
    damage(data)
    with pytest.raises(StateError):
        GAME.load_state(data)


def test_a_clamped_adjustment_says_why_nothing_changed() -> None:
    """Adjustment: "EP never go above 10 or below 0": the report says the +1 was due."""
    race = make_race([["a"], ["b"], ["c"]], {"a": 5, "b": 10, "c": 5})
    resolution = resolve_texts(race, {"a": "USE 0", "b": "USE 0", "c": "USE 0"})
    assert "b is 2nd: +1 EP due, but EP stay within 0 to 10 (10 EP)." in [e.text for e in resolution.events]


def test_the_sprint_report_gives_what_each_runner_sprinted_with_and_the_result() -> None:
    """Final sprint: each runner's EP used, the passes, then the result (no EP: all are used)."""
    race = make_race([["a"], ["b"]], {"a": 2, "b": 7}, turn=3, turns=3)
    texts = [event.text for event in GAME.resolve(race, {}, RNG).events]
    assert texts == [
        "a sprints with all 2 EP (EP 2 -> 0).",
        "b sprints with all 7 EP (EP 7 -> 0).",
        "b (7) passes a (2).",
        "Final result: 1st b; 2nd a.",
    ]


def test_the_final_result_is_in_competition_places() -> None:
    """racecraft.md, Final sprint: "players who share a position share the place"; a result is
    written in competition places, the next place counting everyone ahead: 1, 2, 3, 3, 5 (the
    places during the race stay the rule's dense positions: "Kelly will be deemed to be in third
    place")."""
    race = make_race([["a"], ["b"], ["c", "d"], ["e"]], {"a": 5, "b": 4, "c": 3, "d": 3, "e": 0}, turn=5, turns=5)
    during = GAME.view(race, None, Viewer.PUBLIC)
    assert [p.place for p in during.standings] == [1, 2, 3, 4]
    resolution = GAME.resolve(race, {}, RNG)
    assert "Final result: 1st a; 2nd b; 3rd c and d; 5th e." in [e.text for e in resolution.events]
    after = GAME.view(resolution.state, resolution, Viewer.PUBLIC)
    assert [(p.place, p.players) for p in after.standings] == [(1, ("a",)), (2, ("b",)), (3, ("c", "d")), (5, ("e",))]
    assert [row.place for row in after.table] == [1, 2, 3, 3, 5]


def test_a_surprising_final_order_says_the_rule_that_explains_it_in_one_line() -> None:
    """racecraft.md, Final sprint: "Movement as in a tactical turn (last to first, beat everyone
    in the position ahead, at most one position gained)". The leader with 0 EP wins when the
    runner behind with 5 passes the position between and no further: the report says why."""
    race = make_race(
        [["anna"], ["seb", "steve"], ["kelly"]], {"anna": 0, "seb": 4, "steve": 3, "kelly": 5}, turn=5, turns=5
    )
    texts = [event.text for event in GAME.resolve(race, {}, RNG).events]
    why = [text for text in texts if "a runner gains at most one place a turn" in text]
    assert why == [
        "anna wins: a runner gains at most one place a turn (kelly, sprinting with 5, passed seb and steve and no further)."
    ]
    # An order no rule needs explaining gets no such line.
    plain = make_race([["a"], ["b"]], {"a": 7, "b": 2}, turn=3, turns=3)
    assert all(event.kind != "why" for event in GAME.resolve(plain, {}, RNG).events)


def test_runners_level_at_the_finish_need_no_reason_and_a_shared_win_is_said_of_whom_it_explains() -> None:
    """racecraft.md, Final sprint: "The order after the sprint is the result; players who share a
    position share the place." Runners who finish sharing a position finished level, whatever
    each sprinted with: no line explains why one is "ahead" of the other. Where only one of two
    joint winners sprinted with less than a runner behind, the line says that one shares the win."""
    level = make_race([["a", "b"]], {"a": 1, "b": 2}, turn=3, turns=3)
    texts = [event.text for event in GAME.resolve(level, {}, RNG).events]
    assert "Final result: 1st a and b." in texts
    assert not [text for text in texts if "the win:" in text or "ahead of" in text], texts
    shared = make_race(
        [["robbie", "walt"], ["vic"], ["uma", "xia"]],
        {"robbie": 5, "walt": 1, "vic": 2, "uma": 4, "xia": 4},
        turn=3,
        turns=3,
    )
    texts = [event.text for event in GAME.resolve(shared, {}, RNG).events]
    assert "Final result: 1st robbie and walt; 3rd uma and xia; 5th vic." in texts
    assert [text for text in texts if "the win:" in text] == [
        "walt shares the win: a runner gains at most one place a turn (uma, sprinting with 4, passed vic and no further)."
    ]


def test_the_private_part_after_the_sprint_gives_the_results_own_place() -> None:
    """racecraft.md, Final sprint: "players who share a position share the place"; the result is in
    competition places (1, 2, 2, 4), so a runner behind a shared place is told the place the
    final result and the season's table give, never the dense in-race position."""
    race = make_race([["a"], ["b", "c"], ["d"]], {"a": 5, "b": 4, "c": 4, "d": 1}, turn=3, turns=3)
    resolution = GAME.resolve(race, {}, RNG)
    assert "Final result: 1st a; 2nd b and c; 4th d." in [e.text for e in resolution.events]
    assert GAME.view(resolution.state, resolution, "d").private == ("You finished 4th with 0 EP left.",)
    assert GAME.view(resolution.state, resolution, "b").private == ("You finished 2nd with 0 EP left.",)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=3), min_size=1, max_size=5),
    st.lists(st.integers(0, 10), min_size=8, max_size=8),
)
def test_after_any_sprint_each_place_told_is_the_results_and_no_reason_names_a_level_runner(
    groups: list[list[str]], eps: list[int]
) -> None:
    """racecraft.md, Final sprint: "players who share a position share the place". Over any field
    going into the sprint: each runner's private place is their place in the result's table, and
    a line explaining the order never names a runner who shares the explained runner's place."""
    seen: set[str] = set()
    positions = []
    for group in groups:
        fresh = [name for name in dict.fromkeys(group) if name not in seen]
        seen.update(fresh)
        if fresh:
            positions.append(fresh)
    ep = {name: eps["abcdefgh".index(name)] for name in seen}
    race = make_race(positions, ep, turn=3, turns=3)
    resolution = GAME.resolve(race, {}, RNG)
    public = GAME.view(resolution.state, resolution, Viewer.PUBLIC)
    place = {row.player: row.place for row in public.table}
    for name in seen:
        assert GAME.view(resolution.state, resolution, name).private == (
            f"You finished {ordinal(place[name])} with 0 EP left.",
        )
    for event in resolution.events:
        if event.kind == "why":
            explained, named = event.players[-1], event.players[:-1]
            assert all(place[other] < place[explained] for other in named), event.text
