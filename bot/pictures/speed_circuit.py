"""Speed Circuit: the track as a chart to plot from, with every car where it ended the turn,
its path this turn, and crash and spin marks; and one player's own options.

The track is drawn as the orders name it: the lap cut into three columns of
rows, read top to bottom in the direction of travel, lanes A, B and C side by side with
their letters over each column and in every plain space, the row number beside every row,
so that ``B16`` is found as on a chart. Corner spaces carry their posted speed, racing lines
run through their spaces (+20 solid, +40 dashed), the pit lane runs beside its rows
(hatched) with an arrow in each pit-entry space, and the finish line is chequered. A column
is cut only where no space spans the cut and no corner goes on across it. The three columns
are 324 px wide together, so a 360 px phone shows the chart unscaled: car letters
9 px, row numbers and the legend 10 px; the title takes two lines if it must, long names are
shortened in the legend and the key runs onto extra lines rather than past the edge.

Read only from the view (`SpeedCircuitView`) and the turn's public events:

* the track from the view's ``track`` (`TrackPlan`: every space's lane, rows, posted speed,
  pit arrow; the pit lanes) and ``racing_lines`` (each line's spaces);
* where each car is from the view's ``cars``, now and before the turn (a car off the track
  is drawn beside the space it is beside, one in the pits in the pit lane at its row, one
  out of the race not at all);
* the path: the spaces named by the turn's ``path`` event for that car (a blocked car's
  actual path) when there is one, else the lanes and rows between where the car was and
  where it is;
* crash and spin marks from the ``crash`` and ``spin`` events, placed on the space the
  event names, else on the car.

`draw_options` draws one player's options from *their own* view (``options``): the rows
ahead of their car, each space marked with the speeds whose move ends there and what that
costs (free, wear, a test or roll, a spin, a crash), the corner limit ahead and the fastest
free plot as a dashed path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bot.pictures import Picture, Scene, typed_view
from bot.pictures.common import (
    BLACK,
    CORNER,
    DANGER,
    DARK,
    FREE,
    GREEN,
    GREY,
    PALE,
    PIT,
    PLAYER_COLOURS,
    RED,
    ROLL,
    WEAR,
    WHITE,
    KeyEntry,
    Sheet,
    arrow_head,
    crash_mark,
    dotted_path,
    draw_key,
    hatch,
    key_lines,
    letters_for,
    shorten,
    spin_mark,
)
from rules.speed_circuit import (
    CarOnTrack,
    Cost,
    PlotOptions,
    RacingLine,
    Reach,
    SpeedCircuitView,
    Status,
    TrackPlan,
)

HISTORY = False
SPACE_ID = re.compile(r"\b([A-C])(\d{1,3})\b")
LANES = "ABC"


@dataclass(frozen=True, slots=True)
class Layout:
    """The sizes of one chart: rows, lanes, the gutters, the text."""

    row_h: int
    lane_w: int
    label_w: int
    side_w: int
    gap: int
    margin: int
    top: int
    label_size: int
    speed_size: int


TRACK = Layout(row_h=16, lane_w=22, label_w=16, side_w=11, gap=4, margin=2, top=48, label_size=10, speed_size=11)
"""Three columns of 104 px: the chart is 324 px wide, which a 360 px phone shows unscaled
(`bot.pictures.PHONE_WIDTH`), so every label keeps its size there."""
TITLE = 12
TEXT = 10  # the legend and the key
R = 9  # a car's marker: a 9 px letter
OPTIONS = Layout(row_h=28, lane_w=80, label_w=28, side_w=14, gap=0, margin=12, top=0, label_size=12, speed_size=11)


@dataclass(frozen=True, slots=True)
class Space:
    """One space as drawn: its lane and front-edge row, its box and whether it is a corner space."""

    id: str
    lane: int
    row: int
    box: tuple[float, float, float, float]
    corner: bool

    @property
    def centre(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.box
        return (x0 + x1) / 2, (y0 + y1) / 2


@dataclass(frozen=True, slots=True)
class Strip:
    """One column of the chart: rows `first`..`last` (in the order of the race), drawn from `x`."""

    first: int
    last: int
    x: float
    rows: tuple[int, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Geometry:
    """The chart of a track (or of the rows ahead of one car): its columns, each space's box,
    the picture's size (`box`: 0, 0, width, height of the chart part) and the layout."""

    plan: TrackPlan
    layout: Layout
    strips: tuple[Strip, ...]
    spaces: Mapping[str, Space]
    box: tuple[float, float, float, float]
    y0: float

    def strip_of(self, row: int) -> Strip | None:
        for strip in self.strips:
            if row in strip.rows:
                return strip
        return None

    def row_top(self, row: int) -> float:
        strip = self.strip_of(row)
        assert strip is not None
        return self.y0 + strip.rows.index(row) * self.layout.row_h

    def lane_x(self, strip: Strip, lane: int) -> float:
        """The left edge of `lane` (-1 and 3: the side columns beside lanes A and C)."""
        lay = self.layout
        base = strip.x + lay.label_w + lay.side_w
        if lane < 0:
            return base - lay.side_w
        return base + lane * lay.lane_w

    def beside(self, space_id: str, side: int) -> tuple[float, float]:
        """Where a car beside `space_id` off the track (or in the pits) on `side` is drawn."""
        space = self.spaces[space_id]
        strip = self.strip_of(space.row)
        assert strip is not None
        lay = self.layout
        x = self.lane_x(strip, -1) + lay.side_w / 2 if side < 0 else self.lane_x(strip, 3) + lay.side_w / 2
        return x, space.centre[1]


def _breaks(plan: TrackPlan, count: int) -> list[int]:
    """Where to cut the lap into `count` columns: after rows where every space has its front
    edge (none spans the cut) and no corner goes on into the next row, near equal parts."""
    spans = {(s.back_row, s.row) for s in plan.spaces}
    corner_of: dict[int, set[str]] = {}
    for s in plan.spaces:
        if s.corner is not None:
            for r in range(s.back_row + 1, s.row + 1):
                corner_of.setdefault(r, set()).add(s.corner)

    def fine(row: int) -> bool:
        if any(back < row < front for back, front in spans):
            return False
        return not (corner_of.get(row, set()) & corner_of.get(row + 1, set()))

    cuts: list[int] = []
    for k in range(1, count):
        target = round(k * plan.rows / count)
        for offset in sorted(range(-10, 11), key=abs):
            row = target + offset
            if 1 <= row < plan.rows and fine(row) and (not cuts or row > cuts[-1]):
                cuts.append(row)
                break
    return cuts


def _chart(plan: TrackPlan, lay: Layout, rows_by_strip: Sequence[Sequence[int]], y0: float) -> Geometry:
    width_strip = lay.label_w + 2 * lay.side_w + 3 * lay.lane_w
    strips = []
    for index, rows in enumerate(rows_by_strip):
        x = lay.margin + index * (width_strip + lay.gap)
        strips.append(Strip(rows[0], rows[-1], x, tuple(rows)))
    geo = Geometry(plan, lay, tuple(strips), {}, (0, 0, 0, 0), y0)
    spaces: dict[str, Space] = {}
    for s in plan.spaces:
        strip = geo.strip_of(s.row)
        if strip is None:
            continue
        covered = [r for r in range(s.back_row + 1, s.row + 1) if r in strip.rows]
        top = y0 + strip.rows.index(covered[0]) * lay.row_h
        bottom = y0 + (strip.rows.index(s.row) + 1) * lay.row_h
        left = geo.lane_x(strip, s.lane)
        spaces[s.id] = Space(s.id, s.lane, s.row, (left, top, left + lay.lane_w, bottom), s.speed is not None)
    width = lay.margin * 2 + len(strips) * width_strip + (len(strips) - 1) * lay.gap
    height = y0 + max(len(r) for r in rows_by_strip) * lay.row_h
    return Geometry(plan, lay, tuple(strips), spaces, (0, 0, width, height), y0)


@lru_cache(maxsize=16)
def geometry(plan: TrackPlan) -> Geometry:
    """The chart of a whole lap in three columns (cached: the track does not change)."""
    cuts = [0, *_breaks(plan, 3), plan.rows]
    parts = [list(range(a + 1, b + 1)) for a, b in zip(cuts, cuts[1:], strict=False)]
    return _chart(plan, TRACK, parts, TRACK.top)


# -- drawing the track -------------------------------------------------------------------------


def _track(
    sheet: Sheet, geo: Geometry, lines: Sequence[RacingLine], occupied: Iterable[str], *, names: bool = False
) -> None:
    """The chart's spaces, pit lane, racing lines, finish line and row numbers. `occupied`:
    spaces where a car stands (its marker goes there, not the space's labels); `names`: print
    each space's name (the options picture) instead of its lane letter."""
    d = sheet.draw
    lay = geo.layout
    plan = geo.plan
    taken = set(occupied)
    by_id = {s.id: s for s in plan.spaces}
    pit = plan.pit
    for strip in geo.strips:
        for row in strip.rows:
            y = geo.row_top(row)
            sheet.text(
                (strip.x + lay.label_w - 3, y + lay.row_h / 2),
                str(row),
                lay.label_size,
                BLACK if row == plan.rows else DARK,
                "rm",
            )
            if pit is not None and pit.first <= row <= pit.last:
                x = geo.lane_x(strip, -1 if pit.side < 0 else 3)
                box = (x + 1, y, x + lay.side_w - 1, y + lay.row_h)
                d.rectangle(box, fill=PIT)
                hatch(d, box, GREY, 4)
    for space in geo.spaces.values():
        x0, y0, x1, y1 = space.box
        d.rectangle((x0, y0, x1 - 1, y1 - 1), fill=CORNER if space.corner else PALE, outline=GREY)
    for line in lines:
        runs = _runs(geo, [s for s in line.spaces if s in geo.spaces])
        for run in runs:
            pts = [geo.spaces[s].centre for s in run]
            if len(pts) < 2:
                continue
            if line.bonus >= 40:
                dotted_path(d, pts, GREEN, width=3, dash=5, gap=3)
            else:
                d.line(pts, fill=RED, width=2)
        if line.spaces[-1] in geo.spaces and runs and len(runs[-1]) >= 2:
            (ax, ay), (bx, by) = geo.spaces[runs[-1][-2]].centre, geo.spaces[runs[-1][-1]].centre
            arrow_head(d, (bx, by), math.atan2(by - ay, bx - ax), 7, GREEN if line.bonus >= 40 else RED)
    for space in geo.spaces.values():
        info = by_id[space.id]
        cx, cy = space.centre
        x0, y0, x1, y1 = space.box
        if info.pit_arrow and pit is not None:
            # the red arrow of seed 003 ("spaces marked with a small red arrow"), pointing to the pits
            tip_x = x1 - 2 if pit.side > 0 else x0 + 2
            arrow_head(d, (tip_x, cy), 0.0 if pit.side > 0 else math.pi, 7, RED)
        if space.id in taken:
            continue
        if names:
            sheet.text((x0 + 3, y0 + 2), space.id, 9, DARK)
            if info.speed is not None:
                sheet.text((x1 - 3, y0 + 2), f"{info.speed} mph", 10, BLACK, "ra", halo=CORNER)
        elif info.speed is not None:
            sheet.text((cx, cy), str(info.speed), lay.speed_size, BLACK, "mm", halo=CORNER)
        else:
            sheet.text((cx, cy), LANES[space.lane], 10, GREY, "mm")
    last = geo.strip_of(plan.rows)
    if last is not None:
        y = geo.row_top(plan.rows) + lay.row_h
        xa, xb = geo.lane_x(last, 0), geo.lane_x(last, 3)
        d.line((xa, y, xb, y), fill=BLACK, width=5)
        dotted_path(d, [(xa, y), (xb, y)], WHITE, width=3, dash=4, gap=4)


def _runs(geo: Geometry, ids: Sequence[str]) -> list[list[str]]:
    """`ids` cut where the chart's column changes (a path or line over a cut)."""
    runs: list[list[str]] = []
    last: Strip | None = None
    for space_id in ids:
        strip = geo.strip_of(geo.spaces[space_id].row)
        if not runs or strip is not last:
            runs.append([])
        runs[-1].append(space_id)
        last = strip
    return runs


def _directions(sheet: Sheet, geo: Geometry, *, continues: bool) -> None:
    """The direction of travel: an arrow down each column's row numbers, and where the next
    column takes over (`continues`)."""
    d = sheet.draw
    lay = geo.layout
    for index, strip in enumerate(geo.strips):
        top = geo.row_top(strip.first)
        x = strip.x + lay.label_w / 2
        arrow_head(d, (x - 2, top - 3), math.pi / 2, 9, DARK)
        for lane in range(3):
            sheet.text((geo.lane_x(strip, lane) + lay.lane_w / 2, top - 10), LANES[lane], 12, BLACK, "mm")
        if continues:
            bottom = geo.row_top(strip.last) + lay.row_h
            nxt = geo.strips[(index + 1) % len(geo.strips)].first
            sheet.text((geo.lane_x(strip, 0), bottom + 9), f"on to row {nxt}", 10, DARK, "lm")


@lru_cache(maxsize=16)
def _background(geo: Geometry, lines: tuple[RacingLine, ...], occupied: frozenset[str], height: int) -> Sheet:
    """The chart alone, drawn once per track and set of occupied spaces, copied for each picture."""
    x0, y0, x1, y1 = geo.box
    sheet = Sheet(int(x1), height)
    _track(sheet, geo, lines, occupied)
    _directions(sheet, geo, continues=True)
    return sheet


def _title(view: SpeedCircuitView, width: int) -> list[str]:
    """The title in at most two lines over the chart (the second shortened if need be)."""
    room = width - 2 * TRACK.margin - 4  # drawn from margin + 2, with a 2 px spare at the end
    lines = Sheet(1, 1).wrap(f"{view.track_name}: {view.summary}", TITLE, room)
    if len(lines) > 2:
        lines = [lines[0], Sheet(1, 1).fit(" ".join(lines[1:]), TITLE, room)]
    return lines


def _car_label(sheet: Sheet, car: CarOnTrack, room: float) -> str:
    """`place. name (status)` in `room` px at `TEXT`: the name shortened first, so the status
    shows (its detail is in the alt text and the table)."""
    status = ""
    if car.status is not Status.RACING:
        status = f" ({car.status.value})"
    elif car.where and car.where.startswith(("pits", "beside")):
        status = f" ({car.where})"
    lead = f"{car.place}. "
    name = sheet.fit(car.player, TEXT, room - sheet.text_width(lead + status, TEXT) - 4)
    return sheet.fit(lead + name + status, TEXT, room)


CAR_LINE = 20  # a line of the legend's cars
KEY_LINE = 16


def draw(scene: Scene) -> Picture:
    now = typed_view(scene.now, SpeedCircuitView)
    before = typed_view(scene.before, SpeedCircuitView) if scene.before is not None else None
    geo = geometry(now.track)
    width = int(geo.box[2])
    lay = geo.layout
    cars = now.cars
    seating = sorted(car.player for car in cars)
    index = {p: i for i, p in enumerate(seating)}
    letters = letters_for(seating)
    legend_top = geo.box[3] + 22
    rows_of_cars = math.ceil(len(cars) / 2)
    key = _key(geo)
    key_w = width - 2 * lay.margin
    height = int(legend_top + rows_of_cars * CAR_LINE + key_lines(key, TEXT, key_w) * KEY_LINE + 6)
    sheet = _background(geo, now.racing_lines, _occupied(now), height).copy()
    d = sheet.draw
    for k, line in enumerate(_title(now, width)):
        sheet.text((lay.margin + 2, 3 + 15 * k), line, TITLE, BLACK)
    where_now = spots(now, geo)
    where_before = spots(before, geo) if before else {}
    paths = _event_paths(scene.events, geo)

    # Paths first (under the cars): each in the car's colour, dashed, with a white edge.
    for player in seating:
        start, end = where_before.get(player), where_now.get(player)
        if start is None or end is None or start[0] is None or end[0] is None:
            continue
        ids = _path(geo, start[0], end[0], paths.get(player))
        for run in _runs(geo, ids):
            if len(run) > 1:
                pts = [geo.spaces[i].centre for i in run]
                d.line(pts, fill=WHITE, width=6)
                dotted_path(d, pts, PLAYER_COLOURS[index[player] % len(PLAYER_COLOURS)], width=4)
    marks = _marks(scene.events, geo, where_now, where_before)
    for player in seating:
        spot = where_now.get(player)
        if spot is not None:
            sheet.marker(index[player], spot[1][0], spot[1][1], R, letters[player])
    for kind, space in marks:
        x, y = geo.spaces[space].centre
        if kind == "spin":
            spin_mark(d, x, y, 12)
        else:
            crash_mark(d, x + 8, y - 6, 6)

    # The legend under the chart: the cars in race order (long names shortened), then the key.
    column_w = (width - 2 * lay.margin) / 2
    for k, car in enumerate(cars):
        x = lay.margin + (k % 2) * column_w
        y = legend_top + (k // 2) * CAR_LINE
        sheet.marker(index[car.player], x + R + 1, y, R, letters[car.player])
        label = _car_label(sheet, car, column_w - 2 * R - 8)
        sheet.text((x + 2 * R + 5, y), label, TEXT, BLACK, "lm")
    draw_key(sheet, key, (lay.margin, legend_top + rows_of_cars * CAR_LINE - 2), TEXT, key_w, KEY_LINE)
    return Picture(sheet.png(), alt_text(now, scene.events), width, height, sheet.smallest, tuple(sheet.clipped))


def _key(geo: Geometry) -> list[KeyEntry]:
    """What the chart's marks mean, in shapes as well as colours: entries run on to the next
    line when the width is used (none is cut at the edge)."""

    def corner(sheet: Sheet, x: float, y: float) -> None:
        sheet.draw.rectangle((x, y - 6, x + 22, y + 6), fill=CORNER, outline=GREY)
        sheet.text((x + 11, y), "80", TEXT, BLACK, "mm")

    def red(sheet: Sheet, x: float, y: float) -> None:
        sheet.draw.line((x, y, x + 20, y), fill=RED, width=2)

    def green(sheet: Sheet, x: float, y: float) -> None:
        dotted_path(sheet.draw, [(x, y), (x + 20, y)], GREEN, width=3, dash=5, gap=3)

    def pit_lane(sheet: Sheet, x: float, y: float) -> None:
        box = (x, y - 6, x + 12, y + 6)
        sheet.draw.rectangle(box, fill=PIT)
        hatch(sheet.draw, box, GREY, 4)
        arrow_head(sheet.draw, (x + 28, y), 0.0, 7, RED)

    def finish(sheet: Sheet, x: float, y: float) -> None:
        sheet.draw.line((x, y, x + 20, y), fill=BLACK, width=5)
        dotted_path(sheet.draw, [(x, y), (x + 20, y)], WHITE, width=3, dash=4, gap=4)

    def crash(sheet: Sheet, x: float, y: float) -> None:
        crash_mark(sheet.draw, x + 5, y, 5)

    def spin(sheet: Sheet, x: float, y: float) -> None:
        spin_mark(sheet.draw, x + 6, y, 6)

    def path(sheet: Sheet, x: float, y: float) -> None:
        dotted_path(sheet.draw, [(x, y), (x + 18, y)], BLACK, width=3, dash=4, gap=3)

    def down(sheet: Sheet, x: float, y: float) -> None:
        arrow_head(sheet.draw, (x + 4, y + 5), math.pi / 2, 9, DARK)

    pit = geo.plan.pit
    return [
        KeyEntry(22, corner, "posted speed"),
        KeyEntry(20, red, "racing line +20"),
        KeyEntry(20, green, "+40"),
        KeyEntry(30, pit_lane, f"pit lane (limit {pit.limit}) and pit-entry arrow" if pit else "no pit lane"),
        KeyEntry(20, finish, "finish"),
        KeyEntry(11, crash, "crash"),
        KeyEntry(13, spin, "spin"),
        KeyEntry(18, path, "path"),
        KeyEntry(9, down, "race runs down the rows"),
    ]


def _occupied(view: SpeedCircuitView) -> frozenset[str]:
    """The spaces cars stand on (not beside): no posted speed is drawn there."""
    return frozenset(car.space for car in view.cars if car.space is not None and car.off_track == 0)


def spots(view: SpeedCircuitView, geo: Geometry) -> dict[str, tuple[str | None, tuple[float, float]]]:
    """Each car's space (the one it is on, or beside) and the point its marker goes: in the
    space, beside it off the track, in the pit lane at its row; cars out of the race have none."""
    out: dict[str, tuple[str | None, tuple[float, float]]] = {}
    plan = geo.plan
    for car in view.cars:
        if car.space is not None and car.space in geo.spaces:
            point = geo.spaces[car.space].centre if car.off_track == 0 else geo.beside(car.space, car.off_track)
            out[car.player] = (car.space, point)
        elif car.pit is not None and car.pit_row is not None and plan.pit is not None:
            edge = next((s.id for s in plan.spaces if s.row == car.pit_row and s.id in geo.spaces), None)
            if edge is not None:
                out[car.player] = (None, geo.beside(edge, plan.pit.side))
    return out


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


def _path(geo: Geometry, start: str, end: str, named: list[str] | None) -> list[str]:
    if named:
        return [start, *named] if named[0] != start else named
    rows = geo.plan.rows
    a, b = geo.spaces[start], geo.spaces[end]
    span = (b.row - a.row) % rows
    if span == 0:
        return [start] if start == end else [start, end]
    by_lane_row = {(s.lane, s.row): s.id for s in geo.spaces.values()}
    ids = [start]
    for k in range(1, span):
        row = (a.row + k - 1) % rows + 1
        lane = round(a.lane + (b.lane - a.lane) * k / span)
        found = by_lane_row.get((lane, row)) or next(
            (
                by_lane_row[(other, row)]
                for other in sorted(range(3), key=lambda o: abs(o - lane))
                if (other, row) in by_lane_row
            ),
            None,
        )
        if found is not None:
            ids.append(found)
    ids.append(end)
    return ids


def _marks(
    events: Sequence[Mapping[str, Any]],
    geo: Geometry,
    now: Mapping[str, tuple[str | None, tuple[float, float]]],
    before: Mapping[str, tuple[str | None, tuple[float, float]]],
) -> list[tuple[str, str]]:
    """(crash|spin, space) for each crash and spin of the turn."""
    out: list[tuple[str, str]] = []
    for event in events:
        kind = event.get("kind")
        if kind not in ("crash", "spin"):
            continue
        players = event.get("players") or []
        named = [m.group(0) for m in SPACE_ID.finditer(str(event.get("text", ""))) if m.group(0) in geo.spaces]
        player = players[0] if players else ""
        space = named[-1] if named else (now.get(player) or (None, None))[0] or (before.get(player) or (None, None))[0]
        if space is not None:
            out.append((str(kind), space))
    return out


def alt_text(view: SpeedCircuitView, events: Sequence[Mapping[str, Any]]) -> str:
    cars = "; ".join(
        f"{car.place}. {car.player} " + (f"in {car.where}" if car.where else _status_text(car)) for car in view.cars
    )
    marks = [str(e.get("text", "")) for e in events if e.get("kind") in ("crash", "spin")]
    tail = (" Crashes and spins: " + "; ".join(marks) + ".") if marks else ""
    return f"{view.track_name}, {view.summary}: {cars}.{tail}"


def _status_text(car: CarOnTrack) -> str:
    """As the public table's Status column says it."""
    return car.status.value if car.status is not Status.OUT else f"out ({car.note})"


# -- one player's options -------------------------------------------------------------

_BADGE = {Cost.FREE: FREE, Cost.WEAR: WEAR, Cost.ROLL: ROLL, Cost.SPIN: DANGER, Cost.CRASH: DANGER}
OPTIONS_WIDTH = 320
"""Narrower than a phone shows a picture (`bot.pictures.PHONE_WIDTH`): drawn at full size there."""


def _badge_width(sheet: Sheet, reach: Reach) -> int:
    return sheet.text_width(f"{reach.speed}{reach.cost.mark}", 11) + 8


def _badge(sheet: Sheet, x: float, y: float, reach: Reach) -> float:
    """One speed's mark, left edge at `x`, centred on `y`: the speed and the cost's letter in
    a box whose fill and edge say the cost (a thick edge for wear, a double one for a roll, a
    black one for a spin or crash). Returns its width."""
    text = f"{reach.speed}{reach.cost.mark}"
    w = _badge_width(sheet, reach)
    box = (x, y - 7, x + w, y + 7)
    d = sheet.draw
    d.rectangle(box, fill=_BADGE[reach.cost], outline=DARK, width=2 if reach.cost is Cost.WEAR else 1)
    if reach.cost is Cost.ROLL:
        d.rectangle((x + 2, y - 5, x + w - 2, y + 5), outline=DARK, width=1)
    if reach.cost in (Cost.SPIN, Cost.CRASH):
        d.rectangle(box, outline=BLACK, width=2)
    sheet.text((x + w / 2, y), text, 11, BLACK, "mm")
    return w


def _options_heading(options: PlotOptions, fastest: Reach | None) -> list[str]:
    """The sentences above the options' chart: where the car is, the corner, the dashed move,
    the speeds with no way through."""
    head = [f"Your options: from {options.space} at {options.speed} mph; you may plot {options.limits}."]
    if options.corner is not None:
        head.append(options.corner.describe() + ".")
    if fastest is not None:
        head.append(f"Dashed: the fastest free move, {fastest.speed} mph to {fastest.space}, lanes {fastest.lanes}.")
    blocked = [c.speed for c in options.choices if not c.reaches]
    if blocked:
        head.append("No way through at " + ", ".join(map(str, blocked)) + " mph (you would emergency brake).")
    return head


def _badges_on_spaces(sheet: Sheet, geo: Geometry, options: PlotOptions) -> None:
    """Each space's badges (the speeds whose move ends there) along its foot; those that do
    not fit are counted ("+2"), the text part lists them."""
    for space_id, space in geo.spaces.items():
        reaches = options.at(space_id)
        if not reaches:
            continue
        x = space.box[0] + 3
        y = space.box[3] - 9
        right = space.box[2] - 3
        for k, reach in enumerate(reaches):
            w = _badge_width(sheet, reach)
            rest = len(reaches) - k - 1
            if x + w > right - (22 if rest else 0):
                sheet.text((x + 1, y), f"+{len(reaches) - k}", 11, BLACK, "lm")  # the rest are in the text part
                break
            x += _badge(sheet, x, y, reach) + 3


def _cars_beside_badges(
    sheet: Sheet,
    geo: Geometry,
    options: PlotOptions,
    cars_at: Mapping[str, CarOnTrack],
    index: Mapping[str, int],
    letters: Mapping[str, str],
) -> None:
    """The cars on the options' chart (hollow: one that moves first), the player's own clear
    of its badges, every other named beside its marker, never past the edge."""
    for space_id, car in cars_at.items():
        if space_id not in geo.spaces:
            continue
        cx, cy = geo.spaces[space_id].centre
        if space_id == options.space:
            cx = geo.spaces[space_id].box[2] - 14  # clear of the badges of slowing to a stop
        gone = space_id in options.gone
        sheet.marker(index[car.player], cx, cy, 10, letters[car.player], hollow=gone)
        if car.player != options.player:
            # beside the marker, shortened to the room there (never past the edge)
            name = shorten(car.player, 8)
            beside = OPTIONS_WIDTH - 2 - (cx + 13)
            if sheet.text_width(name, 10) <= beside:
                sheet.text((cx + 13, cy), name, 10, BLACK, "lm", halo=WHITE)
            else:
                sheet.text((cx - 13, cy), sheet.fit(name, 10, cx - 15), 10, BLACK, "rm", halo=WHITE)


def _options_key(sheet: Sheet, margin: int, top: float, key: Sequence[str]) -> float:
    """The key under the options' chart, from `top` at the left `margin`: each cost as its
    badge, then the `key` lines. Returns the last line's y."""
    x = float(margin)
    y = top
    samples = [Reach(60, "", (), cost, 0, (), ()) for cost in Cost]
    for reach in samples:
        drawn = _badge(sheet, x, y, reach)
        sheet.text((x + drawn + 4, y), reach.cost.value, 11, BLACK, "lm")
        x += drawn + 4 + sheet.text_width(reach.cost.value, 11) + 12
        if x > OPTIONS_WIDTH - 90:
            x, y = float(margin), y + 18
    y += 2
    for line in key:
        y += 16
        sheet.text((margin, y), line, 11, BLACK, "lm")
    return y


def draw_options(view: SpeedCircuitView) -> Picture:
    """One player's options (their own view's ``options``): see the module docstring."""
    typed = typed_view(view, SpeedCircuitView)
    options = typed.options
    assert options is not None
    plan = typed.track
    lay = OPTIONS
    probe = Sheet(1, 1)
    me = next((c for c in typed.cars if c.space == options.space and c.off_track == 0), None)
    fastest = _fastest_free(options)
    text_lines = [
        line
        for part in _options_heading(options, fastest)
        for line in probe.wrap(part, 12, OPTIONS_WIDTH - 2 * lay.margin)
    ]
    y0 = 10 + len(text_lines) * 15 + 24
    geo = _chart(plan, lay, [list(options.rows)], y0)
    legend_top = geo.box[3] + 14
    # The key's sentences wrapped to the picture (at 11 px they ran past its edge).
    key = [
        line
        for part in (
            "A number is a speed (mph) whose move ends in that space.",
            "Hollow: a car that moves first (it will have gone).",
        )
        for line in probe.wrap(part, 11, OPTIONS_WIDTH - 2 * lay.margin)
    ]
    room = int(legend_top + 3 * 18 + 16 * len(key) + 8)  # cropped to what is drawn at the end
    sheet = Sheet(OPTIONS_WIDTH, room)
    for k, line in enumerate(text_lines):
        sheet.text((lay.margin, 10 + k * 15), line, 12, BLACK)
    cars_at = {c.space: c for c in typed.cars if c.space is not None and c.off_track == 0}
    _track(sheet, geo, typed.racing_lines, cars_at, names=True)
    _directions(sheet, geo, continues=False)
    d = sheet.draw
    seating = sorted(c.player for c in typed.cars)
    index = {p: i for i, p in enumerate(seating)}
    letters = letters_for(seating)
    if fastest is not None and fastest.path:
        pts = [geo.spaces[s].centre for s in (options.space, *fastest.path) if s in geo.spaces]
        colour = PLAYER_COLOURS[index[me.player] % len(PLAYER_COLOURS)] if me is not None else BLACK
        if len(pts) > 1:
            d.line(pts, fill=WHITE, width=6)
            dotted_path(d, pts, colour, width=3)
    _badges_on_spaces(sheet, geo, options)
    _cars_beside_badges(sheet, geo, options, cars_at, index, letters)
    y = _options_key(sheet, lay.margin, legend_top + 6, key)
    height = min(room, int(y + 14))
    sheet = Sheet(0, 0, image=sheet.image.crop((0, 0, OPTIONS_WIDTH, height))).adopt(sheet)
    return Picture(sheet.png(), options_alt(options), OPTIONS_WIDTH, height, sheet.smallest, tuple(sheet.clipped))


def _fastest_free(options: PlotOptions) -> Reach | None:
    free = [r for r in options.reaches() if r.cost is Cost.FREE and r.path]
    return max(free, key=lambda r: (r.speed, -len({s[0] for s in r.path})), default=None)


def options_alt(options: PlotOptions) -> str:
    parts = []
    for choice in options.choices:
        cheapest = choice.cheapest
        if cheapest is None:
            parts.append(f"{choice.speed} mph: no way through")
            continue
        spaces = ", ".join(f"{r.space} {r.describe()}" for r in choice.reaches)
        parts.append(f"{choice.speed} mph: {spaces}")
    return f"Your options from {options.space} at {options.speed} mph: " + "; ".join(parts) + "."
