"""`rules.script`: the engine behind `flagman play` (mail-interface.md, the command line)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

import pytest

from rules import UnknownGameError
from rules.api import (
    Event,
    FigureError,
    InvalidOrderError,
    OneLineOrder,
    OrderProblem,
    Parsed,
    Resolution,
    RobotLevel,
    Roll,
    Stall,
    View,
    Viewer,
    placings,
    turn_rng,
)
from rules.script import ScriptError, play_script, run_script

PLAYERS = ["kelly", "seb", "steve", "roger", "zed"]
WORKED_EXAMPLE: dict[str, Any] = {
    "players": PLAYERS,
    "options": {"turns": 5},
    "seed": 1,
    "turns": [
        {"kelly": "USE 0", "seb": "USE 2", "steve": "USE 2", "roger": "USE 5", "zed": "0"},
        {"roger": "CRUISE", "seb": "USE 3", "steve": "OVERTAKE", "kelly": "USE 2", "zed": "CRUISE"},
    ],
}


def script(**changes: Any) -> dict[str, Any]:
    return {**WORKED_EXAMPLE, **changes}


def test_worked_example_positions_and_ep_after_each_turn() -> None:
    """racecraft.md, worked example (with zed at the back): positions and EP after turns 1, 2."""
    output = run_script("racecraft", WORKED_EXAMPLE)
    one, two = output["turns"]
    assert one["turn"] == 1 and one["label"] == "Turn 1 of 5: start"
    assert one["positions"] == [["roger"], ["seb", "steve"], ["kelly", "zed"]]
    assert one["players"] == {
        "kelly": {"ep": 10},
        "seb": {"ep": 8},
        "steve": {"ep": 8},
        "roger": {"ep": 5},
        "zed": {"ep": 10},
    }
    assert two["label"] == "Turn 2 of 5: tactical"
    assert two["positions"] == [["seb", "steve"], ["roger"], ["kelly", "zed"]]
    assert two["players"] == {
        "kelly": {"ep": 8},
        "seb": {"ep": 4},
        "steve": {"ep": 6},
        "roger": {"ep": 7},
        "zed": {"ep": 10},
    }
    assert one["defaulted"] == [] and two["defaulted"] == []
    assert output["finished"] is False and output["result"] is None


def test_output_keys_are_in_a_stable_order() -> None:
    """The output's keys come in the documented order, so the JSON text is stable."""
    output = run_script("racecraft", WORKED_EXAMPLE)
    assert list(output) == ["turns", "finished", "result"]
    assert list(output["turns"][0]) == ["turn", "label", "positions", "players", "defaulted", "events"]
    assert list(output["turns"][1]["events"][0]) == ["kind", "text", "players"]


def test_a_player_missing_from_a_turn_gets_the_nmr_default() -> None:
    """mail-interface.md: "a player missing from a turn gets the NMR default"."""
    turns = [{"seb": "USE 2", "steve": "USE 2", "roger": "USE 6"}]
    output = run_script("racecraft", script(turns=turns))
    (one,) = output["turns"]
    assert one["defaulted"] == ["kelly", "zed"]
    assert one["players"]["kelly"] == {"ep": 5} and one["players"]["zed"] == {"ep": 5}
    assert one["positions"] == [["roger"], ["kelly", "zed"], ["seb", "steve"]]


def test_the_sprint_is_resolved_after_the_scripted_turns() -> None:
    """Turns that need no orders (Racecraft's final sprint) are resolved until the end."""
    turns = [*WORKED_EXAMPLE["turns"], {}]
    output = run_script("racecraft", script(options={"turns": "4"}, turns=turns))
    assert [turn["label"] for turn in output["turns"]] == [
        "Turn 1 of 4: start",
        "Turn 2 of 4: tactical",
        "Turn 3 of 4: tactical",
        "Turn 4 of 4: final sprint",
    ]
    assert output["turns"][2]["defaulted"] == PLAYERS
    assert output["finished"] is True
    assert output["result"] == output["turns"][-1]["positions"]


def test_the_sprint_may_also_be_scripted_empty() -> None:
    """A scripted turn with no orders for the sprint is the same as leaving it out."""
    turns = [*WORKED_EXAMPLE["turns"], {}]
    left_out = run_script("racecraft", script(options={"turns": 4}, turns=turns))
    scripted = run_script("racecraft", script(options={"turns": 4}, turns=[*turns, {}]))
    assert scripted == left_out


def test_options_may_be_numbers_or_text() -> None:
    """Options values in the script may be numbers or strings: they reach the game as text."""
    assert run_script("racecraft", script(options={"turns": 3})) == run_script(
        "racecraft", script(options={"turns": "3"})
    )
    assert run_script("racecraft", script(options={"turns": 3}))["turns"][0]["label"] == "Turn 1 of 3: start"


def test_an_illegal_order_names_the_turn_the_player_and_the_reason() -> None:
    """An order that is illegal: ScriptError naming the turn, the player and the reason."""
    turns = [WORKED_EXAMPLE["turns"][0], {"seb": "USE 9"}]
    with pytest.raises(ScriptError) as caught:
        run_script("racecraft", script(turns=turns))
    error = caught.value
    assert (error.turn, error.player) == (2, "seb")
    assert error.reason == "USE 9: you have only 8 EP, so USE 8 at most"
    assert str(error) == "turn 2, player seb: USE 9: you have only 8 EP, so USE 8 at most"


def test_an_order_that_does_not_parse_is_refused() -> None:
    """An order that does not parse: ScriptError naming the turn, the player and the line."""
    with pytest.raises(ScriptError, match=r"^turn 1, player zed: JUMP: not a Racecraft order"):
        run_script("racecraft", script(turns=[{"zed": "JUMP"}]))


@pytest.mark.parametrize(
    ("changes", "turn", "player", "message"),
    [
        ({"players": PLAYERS[:4]}, 0, None, "needs 5 to 8 players; the script has 4"),
        ({"options": {"turns": 12}}, 0, None, "turns must be a whole number from 3 to 9"),
        ({"options": {"laps": 3}}, 0, None, "unknown option 'laps'"),
        ({"options": {"turns": True}}, 0, None, "must be text or a number"),
        ({"players": "kelly seb"}, 0, None, "'players' must be a list"),
        ({"seed": "one"}, 0, None, "'seed' must be a whole number"),
        ({"rounds": []}, 0, None, "unknown key 'rounds'"),
        ({"turns": [{"nobody": "USE 1"}]}, 1, "nobody", "not a player in this game"),
        ({"turns": [{"seb": 3}]}, 1, "seb", "orders must be text"),
        ({"turns": ["USE 3"]}, 1, None, "a turn must be an object"),
        ({"turns": [{"submitted": ["seb", "seb"]}]}, 1, None, "'submitted' must list players, each once"),
        ({"turns": [{"submitted": ["seb", 3]}]}, 1, None, "'submitted' must list players, each once"),
        ({"turns": [{"submitted": ["seb", "nobody"]}]}, 1, "nobody", "'submitted' names a player not in this game"),
    ],
)
def test_bad_scripts_are_refused_clearly(changes: dict[str, Any], turn: int, player: str | None, message: str) -> None:
    """Wrong player count, bad options, an unknown player: ScriptError (turn 0 = set-up)."""
    with pytest.raises(ScriptError) as caught:
        run_script("racecraft", script(**changes))
    assert (caught.value.turn, caught.value.player) == (turn, player)
    assert message in caught.value.reason


def test_a_turn_scripted_after_the_game_finished_is_refused() -> None:
    """A turn scripted after the game finished: ScriptError naming that turn."""
    turns = [*WORKED_EXAMPLE["turns"], {}, {"seb": "USE 1"}]
    with pytest.raises(ScriptError, match="the game finished after turn 3") as caught:
        run_script("racecraft", script(options={"turns": 3}, turns=turns))
    assert caught.value.turn == 4


def test_an_unknown_game_is_refused() -> None:
    """`flagman play NOSUCHGAME` names the known games."""
    with pytest.raises(UnknownGameError, match="racecraft"):
        run_script("nosuchgame", WORKED_EXAMPLE)


# -- generic over any game: a toy game with dice -------------------------------------------


@dataclass(frozen=True)
class Dash:
    """A toy race: each turn every player says GO or REST; GO rolls a d6 and moves that far."""

    players: tuple[str, ...]
    distance: dict[str, int]
    turn: int
    turns: int
    start_roll: int


@dataclass(frozen=True)
class Go:
    pass


class DashGame:
    name: ClassVar[str] = "dash"
    title: ClassVar[str] = "Dash"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 3
    early_resolution: ClassVar[bool] = True
    later_replaces: ClassVar[bool] = True
    chance: ClassVar[bool] = True
    honours: ClassVar[tuple[str, ...]] = ()

    def new_game(self, players: Sequence[str], options: Mapping[str, str], rng: random.Random) -> Dash:
        turns = int(options.get("turns", "2"))
        return Dash(tuple(players), {p: 0 for p in players}, 1, turns, rng.randint(1, 1000))

    def turn_label(self, state: Dash) -> str:
        return f"Dash {state.turn}"

    def expected_players(self, state: Dash) -> frozenset[str]:
        # the last turn is automatic, like Racecraft's sprint
        return frozenset(state.players) if state.turn < state.turns else frozenset()

    def parse_orders(self, state: Dash, player: str, text: str) -> Parsed[Go]:
        if text.strip() == "GO":
            return Parsed((Go(),))
        if text.strip() == "REST":
            return Parsed(())
        return Parsed((), (OrderProblem.from_error(1, text, InvalidOrderError("GO or REST")),), complete=False)

    def default_orders(self, state: Dash, player: str) -> tuple[Go, ...]:
        return ()

    def merge_orders(self, earlier: Sequence[Go], later: Sequence[Go]) -> tuple[Go, ...]:
        return tuple(later)

    def resolve(
        self, state: Dash, orders: Mapping[str, Sequence[Go]], rng: random.Random, submitted: Sequence[str] = ()
    ) -> Resolution[Dash]:
        distance = dict(state.distance)
        events = []
        for player in state.players:
            if orders.get(player) or state.turn == state.turns:
                roll = Roll.of(rng, 1, 6)
                distance[player] += roll.total
                events.append(Event("roll", f"{player} rolls {roll.total}", (player,), roll))
        return Resolution(replace(state, distance=distance, turn=state.turn + 1), tuple(events))

    def is_finished(self, state: Dash) -> bool:
        return state.turn > state.turns

    def players(self, state: Dash) -> tuple[str, ...]:
        return state.players

    def standings(self, state: Dash) -> tuple[tuple[str, ...], ...]:
        levels = sorted(set(state.distance.values()), reverse=True)
        return tuple(tuple(sorted(p for p in state.players if state.distance[p] == d)) for d in levels)

    def figures(self, state: Dash, player: str) -> dict[str, int]:
        return {"distance": state.distance[player], "start_roll": state.start_roll}

    def view(self, state: Dash, resolution: Resolution[Dash] | None, viewer: str | Viewer) -> View:
        return View(
            title=self.title,
            turn_label=self.turn_label(state),
            finished=self.is_finished(state),
            standings=placings(self.standings(state)),
            columns=(),
            table=(),
            events=(),
            private=(),
            summary="",
        )

    def player_view(self, state: Dash, public: View, player: str) -> View:
        return public

    # The rest of the protocol, which a script never asks for: the plainest answers.
    def option_help(self) -> str:
        return "turns: how many turns (default 2)"

    def rules_summary(self) -> str:
        return "Each turn, GO rolls a die and moves that far; the farthest wins."

    def orders_label(self, state: Dash, player: str) -> str:
        return self.turn_label(state)

    def format_orders(self, orders: Sequence[Go]) -> str:
        return "GO" if orders else "REST"

    def plot_orders(self, state: Dash, player: str, plot: str) -> tuple[Go, ...] | None:
        return self.parse_orders(state, player, plot).orders

    def is_complete(self, state: Dash, player: str, orders: Sequence[Go]) -> bool:
        return True

    def missing_orders(self, state: Dash, player: str, orders: Sequence[Go]) -> tuple[str, ...]:
        return ()

    def filled_orders(self, state: Dash, player: str, orders: Sequence[Go]) -> tuple[Go, ...]:
        return tuple(orders)

    def normal_orders(self, state: Dash, player: str, orders: Sequence[Go]) -> tuple[Go, ...]:
        return tuple(orders)

    def consequences(self, state: Dash, player: str, orders: Sequence[Go]) -> tuple[str, ...]:
        return ()

    def taken(
        self, state: Dash, player: str, orders: Sequence[Go], others: Mapping[str, Sequence[Go]]
    ) -> tuple[tuple[Go, str], ...]:
        return ()

    def one_line_orders(self, state: Dash, player: str) -> tuple[OneLineOrder, ...]:
        return ()

    def order_help(self, state: Dash, player: str) -> str:
        return "GO or REST"

    def robot_orders(
        self,
        state: Dash,
        player: str,
        rng: random.Random,
        level: RobotLevel = RobotLevel.NORMAL,
        robots: frozenset[str] | None = None,
    ) -> tuple[Go, ...]:
        return (Go(),)

    def stall(self, state: Dash) -> Stall | None:
        return None

    def set_figure(self, state: Dash, player: str, name: str, value: str) -> Dash:
        raise FigureError("Dash has no figures to set")

    def drop_player(self, state: Dash, player: str) -> Dash:
        return replace(state, players=tuple(p for p in state.players if p != player))

    def dump_state(self, state: Dash) -> dict[str, Any]:
        return {"version": 1, **asdict(state)}

    def load_state(self, data: Mapping[str, Any]) -> Dash:
        return Dash(tuple(data["players"]), dict(data["distance"]), data["turn"], data["turns"], data["start_roll"])


def test_any_game_can_be_scripted_with_per_turn_rngs() -> None:
    """new_game gets turn_rng(seed, 0) and turn t gets turn_rng(seed, t); every expected
    player with no orders is defaulted; automatic turns run to the end."""
    output = play_script(
        DashGame(),
        {"players": ["a", "b"], "options": {"turns": 3}, "seed": 7, "turns": [{"a": "GO"}, {"a": "GO", "b": "REST"}]},
    )
    start_roll = turn_rng(7, 0).randint(1, 1000)
    assert output["turns"][0]["players"]["a"]["start_roll"] == start_roll
    expected_a = [turn_rng(7, t).randint(1, 6) for t in (1, 2)]
    rolls = [[e["roll"]["total"] for e in turn["events"]] for turn in output["turns"]]
    assert rolls[0] == [expected_a[0]] and rolls[1] == [expected_a[1]]
    third = turn_rng(7, 3)
    assert rolls[2] == [third.randint(1, 6), third.randint(1, 6)]
    assert [turn["defaulted"] for turn in output["turns"]] == [["b"], [], []]
    assert output["finished"] is True
    assert [turn["label"] for turn in output["turns"]] == ["Dash 1", "Dash 2", "Dash 3"]


def test_a_different_seed_gives_different_dice() -> None:
    """The seed drives every roll: another seed, other dice (for this fixed example)."""
    base = {"players": ["a", "b"], "options": {"turns": 4}, "turns": [{"a": "GO", "b": "GO"}] * 3}
    assert play_script(DashGame(), {**base, "seed": 1}) != play_script(DashGame(), {**base, "seed": 2})


def test_player_count_comes_from_the_game() -> None:
    """The set-up check uses the game's own min_players and max_players."""
    with pytest.raises(ScriptError, match="Dash needs 2 to 3 players; the script has 4"):
        play_script(DashGame(), {"players": ["a", "b", "c", "d"], "turns": []})


def test_an_order_in_the_sprint_is_refused() -> None:
    """racecraft.md, Final sprint: "No orders are needed"; a scripted one is the game's
    refusal, named like any other."""
    turns = [*WORKED_EXAMPLE["turns"], {"seb": "USE 1"}]
    with pytest.raises(ScriptError, match=r"^turn 3, player seb: USE 1: the final sprint needs no orders"):
        run_script("racecraft", script(options={"turns": 3}, turns=turns))


# -- who submitted first (SpeedPhreakz S16) --------------------------------------------------

RING_ROUNDS = {
    1: "F2 VR TR",
    2: "F3 F1",
    3: "F3 F1",
    4: "F3 F1",
    5: "F3 F1",
    6: "F1 VR TR",
    7: "F3 F1",
    8: "VR TR F2",
    9: "F3 F1",
    10: "F3 F1",
    11: "F3 F1",
    12: "F3",
    13: "VR TR F1",
    14: "F1",
}
"""A lap of the ring (SpeedPhreakz's bundled `ring`), never over 95 control a round: ann from
1,5 and bob from 3,5 drive the same programs two squares apart and cross the line together in
round 14 with the same control left and no crashes."""


def _ring_script(submitted: dict[int, list[str]]) -> dict[str, Any]:
    first = f"ROUND 1: {RING_ROUNDS[1]}\nROUND 2: {RING_ROUNDS[2]}"
    turns: list[dict[str, Any]] = [{"ann": f"START 1,5 FACING N\n{first}", "bob": f"START 3,5 FACING N\n{first}"}]
    for turn in range(2, 14):
        turns.append({p: f"ROUND {turn + 1}: {RING_ROUNDS[turn + 1]}" for p in ("ann", "bob")})
    turns.append({})  # turn 14 resolves round 14 (programs for round 15: the defaults)
    for turn, order in submitted.items():
        turns[turn - 1]["submitted"] = order
    return {"players": ["ann", "bob"], "options": {"map": "ring"}, "seed": 4, "turns": turns}


def test_a_script_may_say_who_submitted_first() -> None:
    """The seed's last tie-break: "... whoever has crashed the least then, whoever submitted
    first". ann and bob cross in round 14, level on control and crashes: with no submission
    order scripted, seating order (ann); with turn 13's (which carried the round 14 programs)
    saying bob's came first, bob; turn 14's order (the round 15 programs) changes nothing."""

    def winner(submitted: dict[int, list[str]]) -> list[list[str]]:
        played = run_script("speedphreakz", _ring_script(submitted))
        assert played["finished"]
        finishes = [e["text"] for e in played["turns"][-1]["events"] if e["kind"] == "finish"]
        assert len(finishes) == 2 and all("with 112 control left" in text for text in finishes), finishes
        result: list[list[str]] = played["result"]
        return result

    assert winner({}) == [["ann"], ["bob"]]
    assert winner({13: ["bob", "ann"]}) == [["bob"], ["ann"]]
    assert winner({13: ["bob"]}) == [["bob"], ["ann"]]  # ann's not submitted: after bob's
    assert winner({13: ["ann", "bob"], 14: ["bob", "ann"]}) == [["ann"], ["bob"]]
