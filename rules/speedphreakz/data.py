"""Loading SpeedPhreakz data: the action chart, the terrain key and the maps (S2, S3).

The files live in `rules/speedphreakz/data/` (formats in its README.md) and are read as
package data with `importlib.resources`: deterministic, no outside world. A GM adds a map
by dropping `<name>.json` into `data/maps/`; `validate_map` says what is wrong with it.
"""

from __future__ import annotations

import functools
import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from rules.speedphreakz.model import (
    Action,
    ActionKind,
    Chart,
    Circuit,
    Heading,
    Outcome,
    Passing,
    Progress,
    Square,
    Terrain,
    progress_on_entry,
)

MAX_SIDE = 99  # the results mail prints the map with a two-digit ruler


class MapError(ValueError):
    """A map that cannot be raced on; `problems` lists every reason, one sentence each."""

    def __init__(self, name: str, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__(f"map {name!r}: " + "; ".join(self.problems))


def _read(*parts: str) -> Any:
    node = resources.files("rules.speedphreakz").joinpath("data")
    for part in parts:
        node = node.joinpath(part)
    return json.loads(node.read_text(encoding="utf-8"))


# -- the chart ------------------------------------------------------------------------------


def _outcome(entry: Mapping[str, Any]) -> Outcome:
    pre_shift = entry.get("pre_shift")
    return Outcome(
        name=str(entry["name"]),
        pre_turn=int(entry.get("pre_turn", 0)),
        pre_shift=None if pre_shift is None else int(pre_shift),
        keeps_action=bool(entry.get("keeps_action", True)),
        extra_squares=int(entry.get("extra_squares", 0)),
        extra_turn=int(entry.get("extra_turn", 0)),
    )


def chart_from_json(data: Mapping[str, Any]) -> Chart:
    tables: dict[str, tuple[Outcome, ...]] = {}
    for name, entries in data["tables"].items():
        ordered = sorted(entries, key=lambda e: int(e["face"]))
        if [int(e["face"]) for e in ordered] != list(range(10)):
            raise ValueError(f"loss-of-control table {name!r} must have faces 0..9 exactly")
        tables[name] = tuple(_outcome(e) for e in ordered)
    actions = []
    for entry in data["actions"]:
        code = str(entry["code"]).upper()
        if not code.isalnum():
            raise ValueError(f"action code {code!r} must be letters and digits")
        actions.append(
            Action(
                code=code,
                name=str(entry["name"]),
                kind=ActionKind(entry["kind"]),
                cost=int(entry["cost"]),
                squares=int(entry.get("squares", 0)),
                step=int(entry.get("step", 0)),
                turn=int(entry.get("turn", 0)),
                table=tables[str(entry["table"])],
                effect=str(entry.get("effect", "")),
            )
        )
    if len({a.code for a in actions}) != len(actions):
        raise ValueError("action codes must be unique")
    return Chart(tuple(actions))


@functools.cache
def chart() -> Chart:
    """The bundled action chart (§4.4)."""
    return chart_from_json(_read("chart.json"))


@functools.cache
def terrain_key() -> tuple[Terrain, ...]:
    """The bundled terrain key (§4.6)."""
    return tuple(
        Terrain(
            char=str(t["char"]),
            name=str(t["name"]),
            solid=bool(t.get("solid", False)),
            surcharge=int(t.get("surcharge", 0)),
            oil=bool(t.get("oil", False)),
        )
        for t in _read("terrain.json")["terrain"]
    )


# -- maps --------------------------------------------------------------------------------------


def map_names() -> tuple[str, ...]:
    folder = resources.files("rules.speedphreakz").joinpath("data").joinpath("maps")
    return tuple(sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json")))


@functools.cache
def bundled_map(name: str) -> Circuit:
    """A bundled map by file name (``ring``); ValueError naming the known maps otherwise."""
    if name not in map_names():
        raise ValueError(f"unknown map {name!r}; bundled maps: {', '.join(map_names())}")
    return circuit_from_json(_read("maps", f"{name}.json"))


def _square(value: Any, what: str, problems: list[str]) -> Square | None:
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return Square(int(value[0]), int(value[1]))
    problems.append(f"{what} must be a pair [x, y] of whole numbers, not {value!r}")
    return None


def _squares(values: Any, what: str, problems: list[str]) -> tuple[Square, ...]:
    if not isinstance(values, list | tuple) or not values:
        problems.append(f"{what} must be a non-empty list of [x, y] pairs")
        return ()
    found = (_square(v, what, problems) for v in values)
    return tuple(s for s in found if s is not None)


def circuit_from_json(data: Mapping[str, Any], *, check_route: bool = False) -> Circuit:
    """A `Circuit` from the map format of §4.7; MapError lists every problem found."""
    problems: list[str] = []
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append('the map needs a "name"')
        name = "?"
    key = terrain_key()
    known = {t.char for t in key}
    solid = {t.char for t in key if t.solid}
    grid = data.get("grid")
    if not isinstance(grid, list) or not grid or not all(isinstance(r, str) for r in grid):
        raise MapError(name, [*problems, '"grid" must be a non-empty list of strings, one per row'])
    _check_grid(grid, known, problems)

    def where(square: Square) -> str | None:
        if not (0 <= square.y < len(grid) and 0 <= square.x < len(grid[square.y])):
            return "off the map"
        if grid[square.y][square.x] in solid:
            return "solid"
        return None

    starts = _squares(data.get("start_squares"), '"start_squares"', problems)
    for s in starts:
        if where(s) is not None:
            problems.append(f"start square {s} is {where(s)}")
        elif grid[s.y][s.x] != "S":
            problems.append(f"start square {s} is not on the start line (an 'S' square)")
    cells, direction = _finish_line(data, grid, where, problems)
    checkpoints = _checkpoints(data, cells, where, problems)
    laps = data.get("laps", 1)
    if not isinstance(laps, int) or isinstance(laps, bool) or not 1 <= laps <= 20:
        problems.append(f'"laps" must be a whole number from 1 to 20, not {laps!r}')
        laps = 1
    if problems:
        raise MapError(name, problems)
    circuit = Circuit(
        name=name,
        grid=tuple(grid),
        start_squares=starts,
        finish_cells=cells,
        finish_direction=direction,
        checkpoints=tuple(checkpoints),
        laps=laps,
        terrain_key=key,
    )
    if check_route:
        problem = route_problem(circuit, chart())
        if problem is not None:
            raise MapError(name, [problem])
    return circuit


def _check_grid(grid: Sequence[str], known: set[str], problems: list[str]) -> None:
    """The grid's size (it fits a results mail), its rows' widths, its terrain characters."""
    width = len(grid[0])
    if width > MAX_SIDE or len(grid) > MAX_SIDE:
        problems.append(
            f"the map is {width} x {len(grid)} squares; at most {MAX_SIDE} x {MAX_SIDE} fit in a results mail"
        )
    for y, row in enumerate(grid):
        if len(row) != width:
            problems.append(f"row {y} is {len(row)} squares wide; row 0 is {width}: all rows must be the same width")
        for x, char in enumerate(row):
            if char not in known:
                problems.append(
                    f"square {x},{y}: unknown terrain character {char!r} (known: {''.join(sorted(known))!r})"
                )


def _finish_line(
    data: Mapping[str, Any], grid: Sequence[str], where: Callable[[Square], str | None], problems: list[str]
) -> tuple[tuple[Square, ...], Heading]:
    """The finish line's cells (every 'S' square among them, none off the map or solid) and
    its direction."""
    finish = data.get("finish_line")
    if not isinstance(finish, Mapping):
        problems.append('"finish_line" must be {"cells": [[x, y], ...], "direction": "N"}')
        finish = {}
    cells = _squares(finish.get("cells"), '"finish_line" cells', problems)
    for s in cells:
        if where(s) is not None:
            problems.append(f"finish line cell {s} is {where(s)}")
    for y, row in enumerate(grid):
        for x, char in enumerate(row):
            if char == "S" and Square(x, y) not in cells:
                problems.append(f"'S' square {x},{y} is not listed in the finish line cells")
    try:
        direction = Heading.parse(str(finish.get("direction", "")))
    except ValueError as error:
        problems.append(f"finish line direction: {error}")
        direction = Heading.N
    return cells, direction


def _checkpoints(
    data: Mapping[str, Any],
    finish: tuple[Square, ...],
    where: Callable[[Square], str | None],
    problems: list[str],
) -> list[tuple[Square, ...]]:
    """The checkpoints' cells, in order: none off the map or solid, none on the finish line or
    on another checkpoint."""
    raw_checkpoints = data.get("checkpoints")
    checkpoints: list[tuple[Square, ...]] = []
    if not isinstance(raw_checkpoints, list) or not raw_checkpoints:
        problems.append('"checkpoints" must be a non-empty list of {"cells": [[x, y], ...]}')
        raw_checkpoints = []
    seen: dict[Square, str] = {s: "the finish line" for s in finish}
    for number, checkpoint in enumerate(raw_checkpoints, start=1):
        raw_cells = checkpoint.get("cells") if isinstance(checkpoint, Mapping) else None
        squares = _squares(raw_cells, f"checkpoint {number} cells", problems)
        for s in squares:
            if where(s) is not None:
                problems.append(f"checkpoint {number} cell {s} is {where(s)}")
            if s in seen:
                problems.append(f"checkpoint {number} cell {s} is also on {seen[s]}")
            seen[s] = f"checkpoint {number}"
        checkpoints.append(squares)
    return checkpoints


def circuit_to_json(circuit: Circuit) -> dict[str, Any]:
    return {
        "name": circuit.name,
        "grid": list(circuit.grid),
        "start_squares": [[s.x, s.y] for s in circuit.start_squares],
        "finish_line": {
            "cells": [[s.x, s.y] for s in circuit.finish_cells],
            "direction": circuit.finish_direction.value,
        },
        "checkpoints": [{"cells": [[s.x, s.y] for s in cp]} for cp in circuit.checkpoints],
        "laps": circuit.laps,
    }


# -- distances and the route check ------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def distances(circuit: Circuit, checkpoint: int) -> Mapping[Square, int]:
    """King-move distance from every reachable square to the cells a car with `checkpoint`
    checkpoints passed heads for (solids and diagonal squeezes respected)."""
    targets = circuit.target_cells(checkpoint)
    result: dict[Square, int] = {s: 0 for s in targets}
    queue = deque(targets)
    while queue:
        square = queue.popleft()
        for heading in Heading:
            # the reverse step: a car at `nxt` stepping back towards `square`
            nxt = square.step(heading)
            if nxt in result or circuit.solid(nxt) or circuit.blocked(nxt, heading.turned(4)):
                continue
            result[nxt] = result[square] + 1
            queue.append(nxt)
    return result


@functools.lru_cache(maxsize=32)
def route_problem(circuit: Circuit, chart: Chart) -> str | None:
    """None if a car can race every lap from every start square with the chart's actions
    (driven as ordered, never two turns in a row); otherwise what cannot be reached."""
    for start in circuit.start_squares:
        found = _search(circuit, chart, start)
        if isinstance(found, Route):
            continue
        lap, checkpoint = found
        if checkpoint < len(circuit.checkpoints):
            return f"from start square {start} no car can reach checkpoint {checkpoint + 1} on lap {lap + 1}"
        return f"from start square {start} no car can cross the finish line going {circuit.finish_direction.value} on lap {lap + 1}"
    return None


@dataclass(frozen=True, slots=True)
class Route:
    """A shortest way round (fewest actions): the heading to start with, then the actions."""

    start: Square
    heading: Heading
    actions: tuple[str, ...]


def shortest_route(circuit: Circuit, chart: Chart, start: Square) -> Route | None:
    """The fewest actions that finish the race from `start`, driven as ordered (no loss of
    control, oil ignored), never two turns in a row; None if there is no way round."""
    found = _search(circuit, chart, start)
    return found if isinstance(found, Route) else None


_Node = tuple[Square, Heading, Progress, bool]


def _search(circuit: Circuit, chart: Chart, start: Square) -> Route | tuple[int, int]:
    """Breadth-first search over (square, heading, progress, last action was a turn): a
    `Route` if the race can be finished, else the furthest (lap, checkpoint) reached."""
    frontier: deque[_Node] = deque((start, h, Progress(), False) for h in Heading)
    parent: dict[_Node, tuple[_Node, str] | None] = {node: None for node in frontier}
    furthest = (0, 0)

    def route(node: _Node, last: str) -> Route:
        actions = [last]
        step = parent[node]
        while step is not None:
            node, code = step
            actions.append(code)
            step = parent[node]
        return Route(start, node[1], tuple(reversed(actions)))

    while frontier:
        node = frontier.popleft()
        square, heading, progress, after_turn = node
        furthest = max(furthest, (progress.lap, progress.checkpoint))
        for action in chart.actions:
            if after_turn and action.is_turn:
                continue
            here, now, ok = square, progress, True
            step_heading = heading.turned(action.step)
            for _ in range(action.squares):
                if circuit.blocked(here, step_heading):
                    ok = False
                    break
                there = here.step(step_heading)
                now, passing = progress_on_entry(circuit, now, here, there)
                here = there
                if passing is Passing.FINISH:
                    return route(node, action.code)
            if not ok:
                continue
            nxt = (here, heading.turned(action.turn), now, action.is_turn)
            if nxt not in parent:
                parent[nxt] = (node, action.code)
                frontier.append(nxt)
    return furthest
