"""The rules core: pure, deterministic games behind one protocol (`rules.api.Game`).

Games are listed here explicitly, by name; `find_game(name)` imports the one asked for.
"""

from __future__ import annotations

import importlib
from typing import cast

from rules.api import AnyGame

# name -> module exporting GAME (an instance implementing rules.api.Game)
GAMES: dict[str, str] = {
    "racecraft": "rules.racecraft",
    "speed_circuit": "rules.speed_circuit",
    "speedphreakz": "rules.speedphreakz",
}


class UnknownGameError(ValueError):
    """No game of that name is registered."""


def find_game(name: str) -> AnyGame:
    """The game registered under `name` (case-insensitive); UnknownGameError otherwise.

    As the shell holds it (`rules.api.AnyGame`): its states and orders opaque. The one place
    that is said, with a cast: whatever the game's own types, the shell hands it back only
    the states and orders it made itself."""
    key = name.strip().lower().replace("-", "_")
    module_name = GAMES.get(key)
    if module_name is None:
        known = ", ".join(sorted(GAMES))
        raise UnknownGameError(f"unknown game {name!r}; known games: {known}")
    return cast(AnyGame, importlib.import_module(module_name).GAME)


def game_names() -> tuple[str, ...]:
    return tuple(sorted(GAMES))
