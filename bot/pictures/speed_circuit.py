"""Speed Circuit: the track with every car where it ended the turn, its path this turn, and
crash and spin marks.

Read only from the public view (`SpeedCircuitView`) and the turn's public events:

* the track from the view's ``track``, a `TrackPlan`: every space's outline and middle, its
  lane and row, its posted speed; the finish line;
* where each car is from the view's ``cars``, now and before the turn (a car off the track
  is drawn at the space it is beside; one in the pits or out of the race is not drawn);
* the path: the spaces named by the turn's ``path`` event for that car (a blocked car's
  actual path) when there is one, else the lanes and rows between where the car was and
  where it is, along the track (the game does not publish every car's exact path; see the
  report of issue 11);
* crash and spin marks from the ``crash`` and ``spin`` events, placed on the space the
  event names, else on the car.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bot.pictures import Picture, Scene, typed_view
from bot.pictures.common import (
    BLACK,
    CORNER,
    DARK,
    GREY,
    LIGHT,
    PLAYER_COLOURS,
    WHITE,
    Sheet,
    crash_mark,
    dotted_path,
    letters_for,
    shorten,
    spin_mark,
)
from rules.speed_circuit import CarOnTrack, SpeedCircuitView, Status, TrackPlan

HISTORY = False
SPACE_ID = re.compile(r"\b([A-C])(\d{1,3})\b")
MARGIN = 18


@dataclass(frozen=True, slots=True)
class Space:
    id: str
    lane: int
    row: int
    points: tuple[tuple[float, float], ...]
    corner: bool

    @property
    def centre(self) -> tuple[float, float]:
        xs = [p[0] for p in self.points]
        ys = [p[1] for p in self.points]
        return sum(xs) / len(xs), sum(ys) / len(ys)


@dataclass(frozen=True, slots=True, eq=False)
class Geometry:
    spaces: Mapping[str, Space]
    labels: tuple[tuple[float, float, str, str], ...]  # posted speeds: x, y, text, the space
    finish: tuple[float, float, float, float]
    box: tuple[float, float, float, float]
    rows: int

    @property
    def centre(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.box
        return (x0 + x1) / 2, (y0 + y1) / 2


@lru_cache(maxsize=16)
def geometry(plan: TrackPlan) -> Geometry:
    """The picture's geometry of a track (cached: the track does not change)."""
    spaces = {s.id: Space(s.id, s.lane, s.row, s.outline, s.speed is not None) for s in plan.spaces}
    labels = tuple((s.mid[0], s.mid[1], str(s.speed), s.id) for s in plan.spaces if s.speed is not None)
    (fx0, fy0), (fx1, fy1) = plan.finish
    xs = [x for s in spaces.values() for x, _ in s.points]
    ys = [y for s in spaces.values() for _, y in s.points]
    box = (min(xs) - MARGIN, min(ys) - MARGIN, max(xs) + MARGIN, max(ys) + MARGIN)
    return Geometry(spaces, labels, (fx0, fy0, fx1, fy1), box, plan.rows)


@lru_cache(maxsize=16)
def _background(geo: Geometry, occupied: frozenset[str]) -> Sheet:
    """The track alone, drawn once per track and copied for each picture. A posted speed is
    left out where a car stands (its marker goes there)."""
    x0, y0, x1, y1 = geo.box
    sheet = Sheet(int(x1 - x0), int(y1 - y0))
    d = sheet.draw
    for space in geo.spaces.values():
        d.polygon([(x - x0, y - y0) for x, y in space.points], fill=CORNER if space.corner else LIGHT, outline=GREY)
    for x, y, text, space_id in geo.labels:
        if space_id not in occupied:
            sheet.text((x - x0, y - y0), text, 9, DARK, "mm")
    fx0, fy0, fx1, fy1 = geo.finish[0] - x0, geo.finish[1] - y0, geo.finish[2] - x0, geo.finish[3] - y0
    d.line((fx0, fy0, fx1, fy1), fill=BLACK, width=5)
    dotted_path(d, [(fx0, fy0), (fx1, fy1)], WHITE, width=3, dash=4, gap=4)
    return sheet


def draw(scene: Scene) -> Picture:
    now = typed_view(scene.now, SpeedCircuitView)
    before = typed_view(scene.before, SpeedCircuitView) if scene.before is not None else None
    geo = geometry(now.track)
    x0, y0, x1, y1 = geo.box
    width, height = int(x1 - x0), int(y1 - y0)
    sheet = _background(geo, _occupied(now)).copy()
    d = sheet.draw

    def at(p: tuple[float, float]) -> tuple[float, float]:
        return p[0] - x0, p[1] - y0

    players = [car.player for car in now.cars]
    seating = sorted(players)
    index = {p: i for i, p in enumerate(seating)}
    letters = letters_for(seating)
    where_now = spaces_of(now, geo)
    where_before = spaces_of(before, geo) if before else {}
    paths = _event_paths(scene.events, geo)

    # Paths first (under the cars): each in the car's colour, dashed, with a white edge.
    for player in seating:
        start, end = where_before.get(player), where_now.get(player)
        ids = _path(geo, start, end, paths.get(player))
        if len(ids) > 1:
            pts = [at(geo.spaces[i].centre) for i in ids]
            d.line(pts, fill=WHITE, width=6)
            dotted_path(d, pts, PLAYER_COLOURS[index[player] % len(PLAYER_COLOURS)], width=4)
    marks = _marks(scene.events, geo, where_now, where_before)
    for player in seating:
        space = where_now.get(player)
        if space is not None:
            x, y = at(geo.spaces[space].centre)
            sheet.marker(index[player], x, y, 10, letters[player])
    for kind, space in marks:
        x, y = at(geo.spaces[space].centre)
        if kind == "spin":
            spin_mark(d, x, y, 15)
        else:
            crash_mark(d, x + 10, y - 10, 7)

    # The legend inside the ring.
    cx, cy = at(geo.centre)
    order = now.cars
    line_h = 17
    top = cy - (len(order) + 3) * line_h / 2
    sheet.text((cx, top), shorten(now.track_name, 24), 14, BLACK, "mm")
    for k, car in enumerate(order):
        player = car.player
        y = top + (k + 1.4) * line_h
        sheet.marker(index[player], cx - 78, y, 7, letters[player])
        label = f"{car.place}. {shorten(player, 12)}"
        if car.status is not Status.RACING:
            label += f" ({shorten(car.status.value, 12)})"  # the detail is in the alt text and the table
        sheet.text((cx - 66, y), label, 12, BLACK, "lm")
    key_y = top + (len(order) + 2) * line_h
    crash_mark(d, cx - 74, key_y, 5)
    sheet.text((cx - 64, key_y), "crash", 11, BLACK, "lm")
    spin_mark(d, cx - 16, key_y, 6)
    sheet.text((cx - 6, key_y), "spin", 11, BLACK, "lm")
    dotted_path(d, [(cx + 26, key_y), (cx + 44, key_y)], BLACK, width=3, dash=4, gap=3)
    sheet.text((cx + 48, key_y), "path", 11, BLACK, "lm")
    return Picture(sheet.png(), alt_text(now, scene.events), width, height)


def _occupied(view: SpeedCircuitView) -> frozenset[str]:
    """The spaces cars stand on (not beside): no posted speed is drawn there."""
    return frozenset(car.space for car in view.cars if car.space is not None and car.off_track == 0)


def spaces_of(view: SpeedCircuitView, geo: Geometry) -> dict[str, str]:
    """Each car's space: the one it is on, or beside when off the track; cars in the pits or
    out of the race have none."""
    return {car.player: car.space for car in view.cars if car.space is not None and car.space in geo.spaces}


def _event_paths(events: Sequence[Mapping[str, Any]], geo: Geometry) -> dict[str, list[str]]:
    """The spaces a `path` event names for its car (a blocked car's actual path)."""
    out: dict[str, list[str]] = {}
    for event in events:
        players = event.get("players") or []
        if event.get("kind") == "path" and len(players) == 1:
            ids = [m.group(0) for m in SPACE_ID.finditer(str(event.get("text", ""))) if m.group(0) in geo.spaces]
            if ids:
                out[players[0]] = ids
    return out


def _path(geo: Geometry, start: str | None, end: str | None, named: list[str] | None) -> list[str]:
    if start is None or end is None:
        return []
    if named:
        return [start, *named] if named[0] != start else named
    a, b = geo.spaces[start], geo.spaces[end]
    span = (b.row - a.row) % geo.rows
    if span == 0:
        return [start] if start == end else [start, end]
    by_lane_row = {(s.lane, s.row): s.id for s in geo.spaces.values()}
    ids = [start]
    for k in range(1, span):
        row = (a.row + k - 1) % geo.rows + 1
        lane = round(a.lane + (b.lane - a.lane) * k / span)
        found = by_lane_row.get((lane, row)) or next(
            (by_lane_row[(other, row)] for other in sorted(range(3), key=lambda o: abs(o - lane)) if (other, row) in by_lane_row),
            None)
        if found is not None:
            ids.append(found)
    ids.append(end)
    return ids


def _marks(events: Sequence[Mapping[str, Any]], geo: Geometry, now: Mapping[str, str],
           before: Mapping[str, str]) -> list[tuple[str, str]]:
    """(crash|spin, space) for each crash and spin of the turn."""
    out: list[tuple[str, str]] = []
    for event in events:
        kind = event.get("kind")
        if kind not in ("crash", "spin"):
            continue
        players = event.get("players") or []
        named = [m.group(0) for m in SPACE_ID.finditer(str(event.get("text", ""))) if m.group(0) in geo.spaces]
        player = players[0] if players else ""
        space = named[-1] if named else now.get(player) or before.get(player)
        if space is not None:
            out.append((str(kind), space))
    return out


def alt_text(view: SpeedCircuitView, events: Sequence[Mapping[str, Any]]) -> str:
    cars = "; ".join(f"{car.place}. {car.player} " + (f"in {car.where}" if car.where else _status_text(car))
                     for car in view.cars)
    marks = [str(e.get("text", "")) for e in events if e.get("kind") in ("crash", "spin")]
    tail = (" Crashes and spins: " + "; ".join(marks) + ".") if marks else ""
    return f"{view.track_name}, {view.summary}: {cars}.{tail}"


def _status_text(car: CarOnTrack) -> str:
    """As the public table's Status column says it."""
    return car.status.value if car.status is not Status.OUT else f"out ({car.note})"
