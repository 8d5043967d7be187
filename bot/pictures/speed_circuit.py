"""Speed Circuit: the track with every car where it ended the turn, its path this turn, and
crash and spin marks.

Read only from the public view and the turn's public events:

* the track's geometry from the view's ``track_svg`` extra (the game's own drawing: one
  ``<polygon>`` per space, titled with the space's id; yellow ones are corner spaces, whose
  posted speeds are ``<text>`` labels);
* where each car is from the public table's ``Space`` column, now and before the turn;
* the path: the spaces named by the turn's ``path`` event for that car (a blocked car's
  actual path) when there is one, else the lanes and rows between where the car was and
  where it is, along the track (the game does not publish every car's exact path; see the
  report of issue 11);
* crash and spin marks from the ``crash`` and ``spin`` events, placed on the space the
  event names, else on the car.

If the view has no SVG the picture shows the view's ``track_text`` instead.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bot.pictures import Picture, Scene, column
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

HISTORY = False
SPACE_ID = re.compile(r"\b([A-C])(\d{1,3})\b")
_SVG = "{http://www.w3.org/2000/svg}"
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
    labels: tuple[tuple[float, float, str], ...]  # posted speeds
    finish: tuple[float, float, float, float] | None
    box: tuple[float, float, float, float]
    rows: int

    @property
    def centre(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.box
        return (x0 + x1) / 2, (y0 + y1) / 2


def _points(text: str) -> tuple[tuple[float, float], ...]:
    out = []
    for pair in text.split():
        x, _, y = pair.partition(",")
        out.append((float(x), float(y)))
    return tuple(out)


@lru_cache(maxsize=16)
def geometry(svg_track: str) -> Geometry | None:
    """The spaces of the track drawn in the game's SVG (cached: the track does not change)."""
    try:
        root = ET.fromstring(svg_track)
    except ET.ParseError:
        return None
    spaces: dict[str, Space] = {}
    labels: list[tuple[float, float, str]] = []
    finish = None
    for element in root:
        tag = element.tag.removeprefix(_SVG)
        if tag == "polygon":
            title = element.find(f"{_SVG}title")
            match = SPACE_ID.fullmatch((title.text or "").strip()) if title is not None else None
            if match is None:
                continue
            fill = (element.get("fill") or "").lower()
            pts = _points(element.get("points", ""))
            if len(pts) >= 3:
                spaces[match.group(0)] = Space(match.group(0), "ABC".index(match.group(1)), int(match.group(2)), pts,
                                               fill not in ("#777777", "#777", "grey", "gray"))
        elif tag == "text" and (element.text or "").strip().isdigit():
            labels.append((float(element.get("x", 0)), float(element.get("y", 0)), element.text.strip()))  # type: ignore[union-attr]
        elif tag == "line" and (element.get("stroke") or "").lower() in ("white", "#fff", "#ffffff"):
            finish = (float(element.get("x1", 0)), float(element.get("y1", 0)),
                      float(element.get("x2", 0)), float(element.get("y2", 0)))
    if not spaces:
        return None
    xs = [x for s in spaces.values() for x, _ in s.points]
    ys = [y for s in spaces.values() for _, y in s.points]
    box = (min(xs) - MARGIN, min(ys) - MARGIN, max(xs) + MARGIN, max(ys) + MARGIN)
    return Geometry(spaces, tuple(labels), finish, box, max(s.row for s in spaces.values()))


@lru_cache(maxsize=16)
def _background(geo: Geometry) -> Sheet:
    """The track alone, drawn once per track and copied for each picture."""
    x0, y0, x1, y1 = geo.box
    sheet = Sheet(int(x1 - x0), int(y1 - y0))
    d = sheet.draw
    for space in geo.spaces.values():
        d.polygon([(x - x0, y - y0) for x, y in space.points], fill=CORNER if space.corner else LIGHT, outline=GREY)
    for x, y, text in geo.labels:
        sheet.text((x - x0, y - y0), text, 9, DARK, "mm")
    if geo.finish:
        fx0, fy0, fx1, fy1 = geo.finish[0] - x0, geo.finish[1] - y0, geo.finish[2] - x0, geo.finish[3] - y0
        d.line((fx0, fy0, fx1, fy1), fill=BLACK, width=5)
        dotted_path(d, [(fx0, fy0), (fx1, fy1)], WHITE, width=3, dash=4, gap=4)
    return sheet


def _track_part(svg: str) -> str:
    """The SVG up to the cars: the cache key for the geometry (cars move, the track does not)."""
    cut = svg.find("<circle")
    return svg if cut < 0 else svg[:cut] + "</svg>"


def draw(scene: Scene) -> Picture:
    now = scene.now
    svg = str(now.get("track_svg", "") or "")
    geo = geometry(_track_part(svg)) if svg else None
    if geo is None:
        return _text_picture(now)
    x0, y0, x1, y1 = geo.box
    width, height = int(x1 - x0), int(y1 - y0)
    sheet = _background(geo).copy()
    d = sheet.draw

    def at(p: tuple[float, float]) -> tuple[float, float]:
        return p[0] - x0, p[1] - y0

    players = [row["player"] for row in now.get("table", ())]
    seating = sorted(players)
    index = {p: i for i, p in enumerate(seating)}
    letters = letters_for(seating)
    where_now = spaces_of(now, geo)
    before = scene.before
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
    order = now.get("table", ())
    status = column(now, "Status")
    line_h = 17
    top = cy - (len(order) + 3) * line_h / 2
    sheet.text((cx, top), shorten(str(now.get("track_name", "")), 24), 14, BLACK, "mm")
    for k, row in enumerate(order):
        player = row["player"]
        y = top + (k + 1.4) * line_h
        sheet.marker(index[player], cx - 78, y, 7, letters[player])
        label = f"{row['place']}. {shorten(player, 12)}"
        state = status.get(player, "")
        if state and state != "racing":
            label += f" ({shorten(state.split(' (')[0], 12)})"  # the detail is in the alt text and the table
        sheet.text((cx - 66, y), label, 12, BLACK, "lm")
    key_y = top + (len(order) + 2) * line_h
    crash_mark(d, cx - 74, key_y, 5)
    sheet.text((cx - 64, key_y), "crash", 11, BLACK, "lm")
    spin_mark(d, cx - 16, key_y, 6)
    sheet.text((cx - 6, key_y), "spin", 11, BLACK, "lm")
    dotted_path(d, [(cx + 26, key_y), (cx + 44, key_y)], BLACK, width=3, dash=4, gap=3)
    sheet.text((cx + 48, key_y), "path", 11, BLACK, "lm")
    return Picture(sheet.png(), alt_text(now, scene.events), width, height)


def spaces_of(view: Mapping[str, Any], geo: Geometry) -> dict[str, str]:
    """Each car's space from the public table: ``B12``, or the space named in ``beside B12
    (off track)``; cars in the pits or out of the race have none."""
    out = {}
    for player, cell in column(view, "Space").items():
        match = SPACE_ID.search(cell)
        if match and match.group(0) in geo.spaces:
            out[player] = match.group(0)
    return out


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


def alt_text(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
    spaces = column(view, "Space")
    status = column(view, "Status")
    cars = "; ".join(
        f"{row['place']}. {row['player']} "
        + (f"in {spaces[row['player']]}" if spaces.get(row["player"], "-") not in ("", "-") else status.get(row["player"], ""))
        for row in view.get("table", ())
    )
    marks = [str(e.get("text", "")) for e in events if e.get("kind") in ("crash", "spin")]
    tail = (" Crashes and spins: " + "; ".join(marks) + ".") if marks else ""
    return f"{view.get('track_name', 'The track')}, {view.get('summary', '')}: {cars}.{tail}"


def _text_picture(view: Mapping[str, Any]) -> Picture:
    """No SVG in the view: the text rendering of the track, drawn."""
    lines = str(view.get("track_text", "") or view.get("summary", "")).splitlines() or [""]
    width = max(240, 8 * max(len(line) for line in lines) + 24)
    height = 18 * len(lines) + 24
    sheet = Sheet(width, height)
    for k, line in enumerate(lines):
        sheet.text((12, 12 + 18 * k), line, 13, BLACK)
    return Picture(sheet.png(), alt_text(view, ()), width, height)

