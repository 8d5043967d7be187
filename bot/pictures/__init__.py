"""Turn pictures for HTML mail and the archive: one module per game, PNG out.

A picture is drawn from a `Scene`: the game's *public* views (`Viewer.PUBLIC`) and the
public events of the turn just resolved, nothing else, so the same bytes may go to every
player, the GM and the archive without showing anyone's private part. The shell draws a
turn's picture once and reuses it for every mail of that turn (see `bot.mail_out.html`).

A view is the game's typed `rules.api.View` subclass, published by the game's package
(`rules.speed_circuit.SpeedCircuitView`, ...); it carries the geometry the picture needs, so
nothing is read back out of text or SVG. Each game module exports ``HISTORY`` (whether it
needs every frame since the start, or only the frame before the turn and the frame after)
and ``draw(scene) -> Picture``, and reads its frames through `typed_view`.

A game with a board also exports ``draw_options(view) -> Picture``: one
player's own options this turn, from *that player's* view (its ``options``), so that picture
is drawn per seat and goes only into that seat's mail; the public picture stays one per turn.

Every picture is drawn to be read on a phone: a 360 px screen shows it
`PHONE_WIDTH` px wide, and no text in it is smaller than `LEGIBLE` px there.
"""

from __future__ import annotations

import importlib
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

from rules.api import View

MAX_BYTES = 150 * 1024  # pictures stay small; the tests hold every game to it

_MODULES: dict[str, str] = {
    "racecraft": "bot.pictures.racecraft",
    "speed_circuit": "bot.pictures.speed_circuit",
    "speedphreakz": "bot.pictures.speedphreakz",
}


PHONE_WIDTH = 326
"""How wide a picture is shown on a 360 px phone screen: the mail layout
(`templates/_common/_macros.html`) leaves 360 - 2 x 6 (page) - 2 x 1 (border) - 2 x 10
(the picture's cell) px; a wider picture is scaled down to it."""

LEGIBLE = 9
"""The smallest label (text, or a car's or runner's letter), in px as shown on that phone,
that still reads."""


@dataclass(frozen=True, slots=True)
class Picture:
    """A drawn picture: PNG bytes, alt text, its size, the smallest label drawn in it
    (`min_label_px`: text or a marker's letter, px; 0: none) and any text that runs past an
    edge (`clipped`: none in a good picture), so that tests can hold it legible on a phone."""

    png: bytes = field(repr=False)
    alt: str
    width: int
    height: int
    min_label_px: int = 0
    clipped: tuple[str, ...] = ()

    def smallest_on_phone(self) -> float:
        """The smallest label as a 360 px phone shows it (the picture scaled to `PHONE_WIDTH`)."""
        return self.min_label_px * min(1.0, PHONE_WIDTH / self.width)


@dataclass(frozen=True, slots=True)
class Scene:
    """What a picture may show.

    `frames` are public views (`rules.api.View`), oldest first: ``frames[-1]`` is the state
    now, and ``frames[-2]`` (when there is one) the state the last resolved turn started
    from; for games with ``HISTORY`` the frames run from the start. `events` are the public
    events of the turn just resolved (``Event.to_json()`` dicts: kind, text, players); empty
    for a turn sheet before any turn. (`frames` is typed as mappings while shell code may
    still hand a view over as a plain mapping of its fields; a `View` is one: see `typed_view`.)
    """

    frames: tuple[Mapping[str, object], ...]
    events: tuple[Mapping[str, Any], ...] = ()  # Event.to_json() dicts, as stored (JSON)

    @property
    def now(self) -> Mapping[str, object]:
        return self.frames[-1]

    @property
    def before(self) -> Mapping[str, object] | None:
        return self.frames[-2] if len(self.frames) > 1 else None


def _module(kind: str) -> types.ModuleType | None:
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


def draw_options(kind: str, view: View) -> Picture | None:
    """The picture of one player's own options this turn, from their own view
    (never the public one: it is private to them); None when the game draws none or the view
    holds no options (outside the race, in the pits, at a set-up)."""
    module = _module(kind)
    drawer = getattr(module, "draw_options", None) if module is not None else None
    if drawer is None or getattr(view, "options", None) is None:
        return None
    picture: Picture = drawer(view)
    return picture


def column(view: View, name: str) -> dict[str, str]:
    """One column of a view's public table, by heading: player -> cell (none when absent)."""
    if name not in view.columns:
        return {}
    index = view.columns.index(name)
    return {row.player: row.cells[index] for row in view.table if index < len(row.cells)}


V = TypeVar("V", bound=View)


def typed_view(frame: Mapping[str, object], kind: type[V]) -> V:
    """`frame` as the game's view class `kind`.

    Transitional, while shell code still treats views as dicts: a view copied into a plain
    mapping (``dict(view)``, to add to it) is built back into `kind` from its items; a field
    the mapping lacks takes the empty value of its type (``""``, 0, False, ``()``, None), and
    a field that has none (a track) is an error.
    """
    if isinstance(frame, kind):
        return frame
    if isinstance(frame, View) or not isinstance(frame, Mapping):
        raise TypeError(f"a {kind.__name__} is needed to draw this picture, not {type(frame).__name__}")
    hints = typing.get_type_hints(kind)
    values: dict[str, Any] = {}
    for f in fields(kind):
        if f.name in frame:
            values[f.name] = frame[f.name]
        elif f.default is not MISSING:
            values[f.name] = f.default
        else:
            values[f.name] = _empty(hints[f.name], f"{kind.__name__}.{f.name}")
    return kind(**values)


def _empty(hint: object, name: str) -> object:
    origin = typing.get_origin(hint) or hint
    if origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint):
        return None
    empties: dict[object, object] = {str: "", int: 0, bool: False, tuple: (), list: [], dict: {}}
    if origin in empties:
        return empties[origin]
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return {}
    raise TypeError(f"{name} is missing and has no empty value")
