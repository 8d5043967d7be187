"""Turn pictures for HTML mail and the archive: one module per game, PNG out.

A picture is drawn from a `Scene`: the game's *public* views (`Viewer.PUBLIC`) and the
public events of the turn just resolved, nothing else, so the same bytes may go to every
player, the GM and the archive without showing anyone's private part. The shell draws a
turn's picture once and reuses it for every mail of that turn (see `bot.html`).

Each game module exports ``HISTORY`` (whether it needs every frame since the start, or only
the frame before the turn and the frame after) and ``draw(scene) -> Picture``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_BYTES = 150 * 1024  # issue 11: pictures stay small; the tests hold every game to it

_MODULES: dict[str, str] = {
    "racecraft": "bot.pictures.racecraft",
    "speed_circuit": "bot.pictures.speed_circuit",
    "speedphreakz": "bot.pictures.speedphreakz",
}


@dataclass(frozen=True, slots=True)
class Picture:
    png: bytes = field(repr=False)
    alt: str
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Scene:
    """What a picture may show.

    `frames` are public views, oldest first: ``frames[-1]`` is the state now, and
    ``frames[-2]`` (when there is one) the state the last resolved turn started from; for
    games with ``HISTORY`` the frames run from the start. `events` are the public events of
    the turn just resolved (``Event.to_json()`` dicts: kind, text, players); empty for a
    turn sheet before any turn.
    """

    frames: tuple[Mapping[str, Any], ...]
    events: tuple[Mapping[str, Any], ...] = ()

    @property
    def now(self) -> Mapping[str, Any]:
        return self.frames[-1]

    @property
    def before(self) -> Mapping[str, Any] | None:
        return self.frames[-2] if len(self.frames) > 1 else None


def _module(kind: str) -> Any | None:
    name = _MODULES.get(kind)
    return importlib.import_module(name) if name else None


def needs_history(kind: str) -> bool:
    """Whether the game's picture needs every frame since the start (Racecraft's chart)."""
    module = _module(kind)
    return bool(module is not None and module.HISTORY)


def draw(kind: str, scene: Scene) -> Picture | None:
    """The picture of `scene` for game `kind`; None for a game without pictures."""
    module = _module(kind)
    if module is None or not scene.frames:
        return None
    picture: Picture = module.draw(scene)
    return picture


def column(view: Mapping[str, Any], name: str) -> dict[str, str]:
    """One column of a view's public table, by heading: player -> cell ('' when absent)."""
    columns: Sequence[str] = view.get("columns", ())
    if name not in columns:
        return {}
    index = list(columns).index(name)
    return {row["player"]: row["cells"][index] for row in view.get("table", ()) if index < len(row["cells"])}
