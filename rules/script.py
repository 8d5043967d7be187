"""Resolve a scripted game offline: the engine behind ``flagman play`` (mail-interface.md).

Generic over every registered game: it uses only `rules.api.Game`. A script is::

    {"players": ["kelly", ...], "options": {"turns": 5}, "seed": 1,
     "turns": [{"kelly": "USE 0", "seb": "2", ...}, ...]}

`options` and `seed` may be left out (no options; seed 0); option values may be numbers or
text and reach the game as text. Each turn maps players to the text of their orders, as a
mail body; an expected player missing from a turn gets the NMR default (`default_orders`).
A turn may also say in which order the players' orders arrived, ``"submitted": ["bob",
"ann"]`` (a list, where orders are text), for a game whose rules ask who submitted first
(SpeedPhreakz's last tie-break, S16); players left out, and every player of a turn that does
not say, count after in seating order (`Game.resolve`).
After the scripted turns, turns that need no orders (Racecraft's final sprint) are resolved
while the game is not finished. Chance: `new_game` gets ``turn_rng(seed, 0)``, turn *t* gets
``turn_rng(seed, t)``, as the shell does.

The output (keys in this order)::

    {"turns": [{"turn": 1, "label": "Turn 1 of 5: start", "positions": [["roger"], ...],
                "players": {"roger": {"ep": 5}, ...}, "defaulted": ["kelly"],
                "events": [Event.to_json(), ...]}, ...],
     "finished": true, "result": [["roger"], ...]}     # "result" is null until finished

Anything wrong raises `ScriptError`, naming the turn (0 for the set-up), the player if one
is concerned, and the reason; for an order, the first refused line and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rules import find_game
from rules.api import Game, PlayerId, standings_json, turn_rng

MAX_UNSCRIPTED_TURNS = 100
"""A guard: a game that keeps needing no orders for this many turns is a bug, not a race."""

_SCRIPT_KEYS = ("players", "options", "seed", "turns")


class ScriptError(ValueError):
    """The script cannot be played: `turn` (0 = set-up), `player` (or None) and `reason`."""

    def __init__(self, turn: int, player: PlayerId | None, reason: str) -> None:
        self.turn = turn
        self.player = player
        self.reason = reason
        where = f"turn {turn}" if turn else "set-up (turn 0)"
        if player is not None:
            where += f", player {player}"
        super().__init__(f"{where}: {reason}")


def run_script(game_name: str, script: Mapping[str, Any]) -> dict[str, Any]:
    """Play `script` with the game registered as `game_name`; UnknownGameError if none is."""
    return play_script(find_game(game_name), script)


def _players(script: Mapping[str, Any]) -> list[PlayerId]:
    players = script.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise ScriptError(0, None, "'players' must be a list of player names")
    return players


def _options(script: Mapping[str, Any]) -> dict[str, str]:
    options = script.get("options", {})
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ScriptError(0, None, "'options' must be an object of option names and values")
    result: dict[str, str] = {}
    for key, value in options.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ScriptError(0, None, f"option {key!r}: the value must be text or a number, not {value!r}")
        result[str(key)] = str(value)
    return result


def _seed(script: Mapping[str, Any]) -> int:
    seed = script.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScriptError(0, None, f"'seed' must be a whole number, not {seed!r}")
    return seed


SUBMITTED = "submitted"
"""The key of a turn's submission order (a list of players; a player's orders are text)."""


def _turns(script: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    turns = script.get("turns", [])
    if not isinstance(turns, list):
        raise ScriptError(0, None, "'turns' must be a list of objects (player -> orders)")
    for number, turn in enumerate(turns, start=1):
        if not isinstance(turn, Mapping):
            raise ScriptError(number, None, "a turn must be an object mapping players to their orders")
        for player, text in turn.items():
            if player == SUBMITTED and isinstance(text, list):
                if not all(isinstance(p, str) for p in text) or len(set(text)) != len(text):
                    raise ScriptError(number, None, f"'{SUBMITTED}' must list players, each once, not {text!r}")
                continue
            if not isinstance(text, str):
                raise ScriptError(number, str(player), f"orders must be text, not {text!r}")
    return turns


def play_script(game: Game[Any, Any], script: Mapping[str, Any]) -> dict[str, Any]:
    """Play `script` with `game` (see the module docstring)."""
    if not isinstance(script, Mapping):
        raise ScriptError(0, None, "the script must be a JSON object")
    unknown = [key for key in script if key not in _SCRIPT_KEYS]
    if unknown:
        raise ScriptError(0, None, f"unknown key {unknown[0]!r}; a script has: {', '.join(_SCRIPT_KEYS)}")
    players = _players(script)
    options = _options(script)
    seed = _seed(script)
    turns = _turns(script)
    if not game.min_players <= len(players) <= game.max_players:
        raise ScriptError(
            0,
            None,
            f"{game.title} needs {game.min_players} to {game.max_players} players; the script has {len(players)}",
        )
    try:
        state = game.new_game(players, options, turn_rng(seed, 0))
    except ValueError as error:  # OptionError included
        raise ScriptError(0, None, str(error)) from error

    played: list[dict[str, Any]] = []
    number = 0
    for number, scripted in enumerate(turns, start=1):
        if game.is_finished(state):
            raise ScriptError(number, None, f"the game finished after turn {number - 1}; nothing more can be scripted")
        state = _play_turn(game, state, number, scripted, seed, played)
    unscripted = 0
    while not game.is_finished(state) and not game.expected_players(state):
        unscripted += 1
        if unscripted > MAX_UNSCRIPTED_TURNS:
            raise ScriptError(number + unscripted, None, "the game keeps resolving without orders and never finishes")
        state = _play_turn(game, state, number + unscripted, {}, seed, played)
    finished = game.is_finished(state)
    return {
        "turns": played,
        "finished": finished,
        "result": standings_json(game.standings(state)) if finished else None,
    }


def _play_turn(
    game: Game[Any, Any],
    state: Any,
    number: int,
    turn: Mapping[str, Any],
    seed: int,
    played: list[dict[str, Any]],
) -> Any:
    in_game = game.players(state)
    expected = game.expected_players(state)
    submitted: list[str] = []
    if isinstance(turn.get(SUBMITTED), list):
        submitted = list(turn[SUBMITTED])
        for player in submitted:
            if player not in in_game:
                raise ScriptError(
                    number, player, f"'{SUBMITTED}' names a player not in this game (players: {', '.join(in_game)})"
                )
    scripted: dict[str, str] = {p: text for p, text in turn.items() if isinstance(text, str)}
    for player in scripted:
        if player not in in_game:
            raise ScriptError(number, player, f"not a player in this game (players: {', '.join(in_game)})")
    orders: dict[PlayerId, Sequence[Any]] = {}
    defaulted: list[PlayerId] = []
    for player in in_game:
        if player not in scripted:
            if player in expected:
                orders[player] = game.default_orders(state, player)
                defaulted.append(player)
            continue
        parsed = game.parse_orders(state, player, scripted[player])
        if parsed.problems:
            problem = parsed.problems[0]
            reason = f"{problem.line}: {problem.reason}" if problem.line else problem.reason
            raise ScriptError(number, player, reason)
        if player not in expected:
            if parsed.orders:
                raise ScriptError(number, player, "no orders are expected from this player this turn")
            continue
        if parsed.complete:
            orders[player] = parsed.orders
        else:
            # An incomplete set still counts; the rest is defaulted (rules.api.Parsed).
            orders[player] = game.merge_orders(game.default_orders(state, player), parsed.orders)
    label = game.turn_label(state)
    resolution = game.resolve(state, orders, turn_rng(seed, number), submitted=tuple(submitted))
    new_state = resolution.state
    played.append(
        {
            "turn": number,
            "label": label,
            "positions": standings_json(game.standings(new_state)),
            "players": {player: dict(game.figures(new_state, player)) for player in game.players(new_state)},
            "defaulted": defaulted,
            "events": [event.to_json() for event in resolution.events],
        }
    )
    return new_state
