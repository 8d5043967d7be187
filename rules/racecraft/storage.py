"""A `Race` as versioned JSON, and back (rules.api: dump_state / load_state).

Version 1::

    {"version": 1, "turns": 5, "turn": 2,
     "runners": [{"name": "roger", "ep": 5, "last_play": "USE 5", "last_score": "5"}, ...],
     "positions": [["roger"], ["seb", "steve"], ["kelly"]], "retired": ["anna"]}

`retired` (runners who left the race, in the order they left) only when someone has.

`last_play` is ``USE n``, ``CRUISE``, ``OVERTAKE``, ``sprint n`` or null; `last_score` an
exact fraction as text (``"5/3"``) or null.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from rules.api import InvalidOrderError, StateError
from rules.racecraft.model import (
    MAX_EP,
    MAX_TURNS,
    MIN_TURNS,
    PLAYER_ID,
    Play,
    Race,
    Runner,
    Sprint,
)
from rules.racecraft.parse import read_order
from rules.racecraft.resolve import play_text

VERSION = 1


def dump_state(race: Race) -> dict[str, Any]:
    return {
        "version": VERSION,
        "turns": race.turns,
        "turn": race.turn,
        "runners": [
            {
                "name": runner.name,
                "ep": runner.ep,
                "last_play": None if runner.last_play is None else play_text(runner.last_play),
                "last_score": None if runner.last_score is None else str(runner.last_score),
            }
            for runner in race.runners
        ],
        "positions": [list(position) for position in race.positions],
        # Only when someone left, so that every other state stays as it was written before.
        **({"retired": list(race.retired)} if race.retired else {}),
    }


def _int(data: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise StateError(f"{key!r} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _play(value: Any) -> Play | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise StateError(f"last_play must be text or null, not {value!r}")
    words = value.split()
    if len(words) == 2 and words[0] == "sprint" and words[1].isdigit():
        return Sprint(int(words[1]))
    try:
        return read_order(value)
    except InvalidOrderError as error:
        raise StateError(f"last_play {value!r}: {error.reason}") from None


def _score(value: Any) -> Fraction | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise StateError(f"last_score must be a fraction as text or null, not {value!r}")
    try:
        score = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise StateError(f"last_score {value!r} is not a fraction") from None
    if score < 0:
        raise StateError(f"last_score {value!r} is negative")
    return score


def _runner(data: Any) -> Runner:
    if not isinstance(data, Mapping):
        raise StateError(f"a runner must be an object, not {data!r}")
    name = data.get("name")
    if not isinstance(name, str) or not PLAYER_ID.fullmatch(name):
        raise StateError(f"bad runner name {name!r}")
    return Runner(
        name=name,
        ep=_int(data, "ep", 0, MAX_EP),
        last_play=_play(data.get("last_play")),
        last_score=_score(data.get("last_score")),
    )


def load_state(data: Mapping[str, Any]) -> Race:
    if not isinstance(data, Mapping):
        raise StateError(f"a Racecraft state must be an object, not {type(data).__name__}")
    if data.get("version") != VERSION:
        raise StateError(f"unknown Racecraft state version {data.get('version')!r} (expected {VERSION})")
    turns = _int(data, "turns", MIN_TURNS, MAX_TURNS)
    turn = _int(data, "turn", 1, turns + 1)
    raw_runners = data.get("runners")
    if not isinstance(raw_runners, list):
        raise StateError("'runners' must be a list")
    runners = tuple(_runner(item) for item in raw_runners)
    names = [runner.name for runner in runners]
    if len(set(names)) != len(names):
        raise StateError("a runner is listed twice")
    raw_positions = data.get("positions")
    if not isinstance(raw_positions, list) or not all(
        isinstance(position, list) and position and all(isinstance(name, str) for name in position)
        for position in raw_positions
    ):
        raise StateError("'positions' must be a list of non-empty lists of runner names")
    placed = [name for position in raw_positions for name in position]
    if sorted(placed) != sorted(names):
        raise StateError("'positions' must list every runner exactly once")
    positions = tuple(tuple(sorted(position)) for position in raw_positions)
    retired = data.get("retired", [])
    if (
        not isinstance(retired, list)
        or not all(isinstance(name, str) and PLAYER_ID.fullmatch(name) for name in retired)
        or set(retired) & set(names)
        or len(set(retired)) != len(retired)
    ):
        raise StateError("'retired' must list runners who left the race, each once, none still running")
    return Race(runners=runners, positions=positions, turns=turns, turn=turn, retired=tuple(retired))
