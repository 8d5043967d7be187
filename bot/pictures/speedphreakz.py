"""SpeedPhreakz: the grid map with every car, its heading and its path this round; and one
player's own options for the round they order.

Drawn to plot from: x runs along the top and bottom edges and y down both sides,
as ``START x,y`` names a square (a units digit over every column, the tens digit over every
tenth); the checkpoints are outlined and numbered in the order they must be passed, an arrow
at each shows the way the race goes through it (and over the line); every terrain of the
key is in the legend with its fill and its pattern (so a black-and-white print still tells
grass from gravel) and what it does.

Drawn for a phone: at most `WIDTH` px wide, the width a 360 px screen gives a
picture, so it is shown unscaled and every label (car letters 9 px, rulers, numbers and
legend 10 px) reads. A map of more than 16 columns does not fit across a phone with squares
a car's letter fits in, so it is cut into bands of about 16 columns drawn one under the
other, each with its own rulers; each band is drawn on a sheet of its own, so a car's path
that crosses a band's edge is cut there and picks up in the next band; cuts are moved off
checkpoints, the line and their arrows where they can be. Long names are wrapped in the
legend, never cut off.

Read only from the view (`SpeedPhreakzView`) and the round's public events: the terrain
from the view's ``circuit`` (``grid[y][x]``, one character per square; its ``terrain_key``),
the race direction from ``course``, every car (letter, colour, square, heading, status, and
its ``trail``: each square it drove through this round) from the view's ``cars``, where it
started the round from the view before, and crash squares from the ``crash`` events. A car
with no trail is drawn with a straight line from where it started to where it ended.

`draw_options` draws one player's options from *their own* view (``options``): the part of
the map around where their round starts, each square a program can end on marked with what
the cheapest such program costs against the round's control range, and the squares furthest
along the race in each band ringed; its part of the map is cut into bands of columns as the
map is when it is more than 16 columns wide.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from bot.pictures import Picture, Scene, typed_view
from bot.pictures.common import (
    BLACK,
    BLUE,
    DARK,
    FREE,
    GRASS,
    GRAVEL,
    GREY,
    LIGHT,
    OIL,
    PLAYER_COLOURS,
    ROLL,
    WEAR,
    WHITE,
    KeyEntry,
    Sheet,
    arrow_head,
    crash_mark,
    dotted_path,
    draw_key,
    key_lines,
)
from rules.speedphreakz import (
    Band,
    CarOnMap,
    CarStatus,
    Circuit,
    CourseMark,
    ProgramOptions,
    SpeedPhreakzView,
    Square,
    Terrain,
)

HISTORY = False
CRASH_AT = re.compile(r"crashes at (\d+),(\d+)")
WIDTH = 326  # bot.pictures.PHONE_WIDTH: shown unscaled on a 360 px phone
MARGIN = 3
TEXT = 10
"""Rulers, checkpoint numbers and the legend: at least `bot.pictures.LEGIBLE` on a phone."""
TITLE = 12
BAND_COLUMNS = 16
"""About this many columns a band: 17-22 px squares fit a phone with the rulers beside them."""
WIDEST_BAND = 17
"""A cut moved off a checkpoint's arrow leaves a band at most this many columns wide."""
CELL = 22  # the largest square
RULER = 26  # the x ruler over and under a band: a units digit, and a tens digit above (below) it
BAND_GAP = 8
R = 9.0  # a car's marker radius at least: a 9 px letter


class Frame:
    """Where squares x0..x1, y0..y1 of a map are drawn: `cell` px a square, from (`left`, `top`)."""

    def __init__(self, x0: int, y0: int, x1: int, y1: int, cell: int, left: float, top: float) -> None:
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, y1
        self.cell, self.left, self.top = cell, left, top

    @property
    def width(self) -> float:
        return (self.x1 - self.x0 + 1) * self.cell

    @property
    def height(self) -> float:
        return (self.y1 - self.y0 + 1) * self.cell

    def shows(self, square: Square) -> bool:
        return self.x0 <= square.x <= self.x1 and self.y0 <= square.y <= self.y1

    def corner(self, square: Square) -> tuple[float, float]:
        return self.left + (square.x - self.x0) * self.cell, self.top + (square.y - self.y0) * self.cell

    def centre(self, square: Square) -> tuple[float, float]:
        x, y = self.corner(square)
        return x + self.cell / 2, y + self.cell / 2

    def local(self) -> Frame:
        """The same squares drawn from (0, 0): on a sheet of the band alone."""
        return Frame(self.x0, self.y0, self.x1, self.y1, self.cell, 0, 0)


def frame_of(frames: Sequence[Frame], square: Square) -> Frame:
    """The band that shows `square`."""
    return next(frame for frame in frames if frame.shows(square))


def _terrain_cell(sheet: Sheet, x: float, y: float, size: int, char: str) -> None:
    """One square of terrain: fill plus a pattern, so black and white prints tell them apart."""
    d = sheet.draw
    box = (x, y, x + size - 1, y + size - 1)
    if char == "#":
        d.rectangle(box, fill=DARK)
        d.line((x, y + size - 1, x + size - 1, y), fill=BLACK, width=2)
    elif char == " ":
        d.rectangle(box, fill=GREY)
    elif char == ",":
        d.rectangle(box, fill=GRASS)
        for k in (0.3, 0.7):
            d.point([(x + size * k, y + size * k), (x + size * (1 - k), y + size * k)], fill=BLACK)
    elif char == ":":
        d.rectangle(box, fill=GRAVEL)
        for dx in (0.25, 0.5, 0.75):
            for dy in (0.25, 0.5, 0.75):
                d.point((x + size * dx, y + size * dy), fill=BLACK)
    elif char == "o":
        d.rectangle(box, fill=WHITE)
        d.ellipse((x + size * 0.2, y + size * 0.2, x + size * 0.8, y + size * 0.8), fill=OIL)
    elif char == "S":
        half = size / 2
        d.rectangle(box, fill=WHITE)
        d.rectangle((x, y, x + half, y + half), fill=BLACK)
        d.rectangle((x + half, y + half, x + size - 1, y + size - 1), fill=BLACK)
    else:
        d.rectangle(box, fill=WHITE)


# -- bands: a map cut into parts a phone shows whole ------------------------------------------------


def _spans(circuit: Circuit, course: Sequence[CourseMark], y0: int, y1: int) -> list[tuple[float, float]]:
    """The stretches of x (in squares) a cut between columns should not cross, among rows
    y0..y1: each checkpoint's and the line's row of cells, and each course mark's arrow and
    number."""
    rows = range(y0, y1 + 1)
    spans: list[tuple[float, float]] = []
    for cells in (*circuit.checkpoints, circuit.finish_cells):
        xs = [s.x for s in cells if s.y in rows]
        if xs:
            spans.append((min(xs), max(xs) + 1.0))
    for mark in course:
        if mark.square.y not in rows:
            continue
        cx = mark.square.x + 0.5
        dx, dy = mark.heading.vector
        badge = cx - 0.2 * dx - 0.9 * dy
        reach = [cx + 0.2 * dx, cx + 1.6 * dx, badge - 0.45, badge + 0.45, cx - 0.3, cx + 0.3]
        spans.append((min(reach), max(reach)))
    return spans


def _cuts(x0: int, x1: int, spans: Sequence[tuple[float, float]]) -> list[int]:
    """The first column of each band after the first: columns x0..x1 in bands of about
    `BAND_COLUMNS`, near equal, each cut moved (by up to 3 columns, no band over
    `WIDEST_BAND`) off a checkpoint or its arrow where it can be."""
    columns = x1 - x0 + 1
    count = math.ceil(columns / BAND_COLUMNS)
    cuts: list[int] = []
    for k in range(1, count):
        even = x0 + k * columns / count
        ideal = round(even)
        before = cuts[-1] if cuts else x0
        fits = [
            c
            for c in range(ideal - 3, ideal + 4)
            if 0 < c - before <= WIDEST_BAND and 0 < x1 + 1 - c <= WIDEST_BAND * (count - k)
        ]
        cuts.append(min(fits or [ideal], key=lambda c: (sum(lo < c < hi for lo, hi in spans), abs(c - even), c)))
    return cuts


def _ruler_w(y1: int) -> int:
    """How wide the y ruler beside a band is: its widest number and a gap."""
    return Sheet(1, 1).text_width(str(y1), TEXT) + 4


@lru_cache(maxsize=256)
def bands(
    circuit: Circuit,
    course: tuple[CourseMark, ...],
    window: tuple[int, int, int, int],
    width: int,
    top: float,
    largest: int = CELL,
) -> tuple[Frame, ...]:
    """The squares of `window` (x0, y0, x1, y1) as bands one under the other, each under its
    x ruler from `top` on, with y rulers beside it, centred in `width`: squares as large as
    the widest band lets (up to `largest`). (Cached: a map's bands do not change; the frames
    are not to be changed.)"""
    x0, y0, x1, y1 = window
    firsts = [x0, *_cuts(x0, x1, _spans(circuit, course, y0, y1))]
    lasts = [c - 1 for c in firsts[1:]] + [x1]
    room = width - 2 * (MARGIN + _ruler_w(y1))
    cell = max(8, min(largest, room // max(b - a + 1 for a, b in zip(firsts, lasts, strict=True))))
    frames = []
    y = top + RULER
    for a, b in zip(firsts, lasts, strict=True):
        frame = Frame(a, y0, b, y1, cell, 0, y)
        frame.left = (width - frame.width) // 2
        frames.append(frame)
        y += frame.height + 2 * RULER + BAND_GAP
    return tuple(frames)


def bands_bottom(frames: Sequence[Frame]) -> float:
    """Where the last band's lower ruler ends."""
    return frames[-1].top + frames[-1].height + RULER


def _map(sheet: Sheet, circuit: Circuit, frame: Frame) -> None:
    """The terrain in `frame` (a band's own sheet) and a light grid, so squares can be counted."""
    d = sheet.draw
    cell = frame.cell
    for y in range(frame.y0, frame.y1 + 1):
        for x in range(frame.x0, frame.x1 + 1):
            px, py = frame.corner(Square(x, y))
            _terrain_cell(sheet, px, py, cell, circuit.grid[y][x])
    for x in range(frame.x1 - frame.x0 + 2):
        d.line((frame.left + x * cell, frame.top, frame.left + x * cell, frame.top + frame.height), fill=LIGHT, width=1)
    for y in range(frame.y1 - frame.y0 + 2):
        d.line((frame.left, frame.top + y * cell, frame.left + frame.width, frame.top + y * cell), fill=LIGHT, width=1)


def _rulers(sheet: Sheet, frame: Frame) -> None:
    """x over and under the band (a units digit over every column, the tens digit over every
    tenth and the band's first), y on both sides of it."""
    for x in range(frame.x0, frame.x1 + 1):
        cx = frame.centre(Square(x, frame.y0))[0]
        for y_tens, y_unit in (
            (frame.top - 20, frame.top - 8),
            (frame.top + frame.height + 20, frame.top + frame.height + 8),
        ):
            if x % 10 == 0 or x == frame.x0:
                sheet.text((cx, y_tens), str(x // 10), TEXT, DARK, "mm")
            sheet.text((cx, y_unit), str(x % 10), TEXT, BLACK, "mm")
    for y in range(frame.y0, frame.y1 + 1):
        cy = frame.centre(Square(frame.x0, y))[1]
        sheet.text((frame.left - 3, cy), str(y), TEXT, BLACK, "rm")
        sheet.text((frame.left + frame.width + 3, cy), str(y), TEXT, BLACK, "lm")


def _course(sheet: Sheet, circuit: Circuit, course: Sequence[CourseMark], frame: Frame) -> None:
    """The checkpoints outlined and numbered, and the race's direction at each and at the line
    (on a band's own sheet: an arrow over the band's edge is cut there, its number kept inside)."""
    d = sheet.draw
    cell = frame.cell
    for cells in circuit.checkpoints:
        for square in cells:
            if frame.shows(square):
                x, y = frame.corner(square)
                d.rectangle((x + 1, y + 1, x + cell - 2, y + cell - 2), outline=BLUE, width=2)
    for mark in course:
        if not frame.shows(mark.square):
            continue
        cx, cy = frame.centre(mark.square)
        dx, dy = mark.heading.vector
        angle = math.atan2(dy, dx)
        tail = (cx + dx * cell * 0.2, cy + dy * cell * 0.2)
        tip = (cx + dx * cell * 1.6, cy + dy * cell * 1.6)
        d.line((tail, tip), fill=WHITE, width=6)
        d.line((tail, tip), fill=BLUE, width=3)
        arrow_head(d, tip, angle, max(7.0, cell * 0.55), BLUE)
        label = "F" if mark.number == 0 else str(mark.number)
        r = max(8.0, cell * 0.45)
        bx, by = cx - dx * cell * 0.2 - dy * cell * 0.9, cy - dy * cell * 0.2 + dx * cell * 0.9
        bx = min(max(bx, frame.left + r + 1), frame.left + frame.width - r - 1)
        by = min(max(by, frame.top + r + 1), frame.top + frame.height - r - 1)
        d.ellipse((bx - r, by - r, bx + r, by + r), fill=WHITE, outline=BLUE, width=2)
        sheet.text((bx, by), label, TEXT, BLUE, "mm")


def _radius(cell: int) -> float:
    return max(R, cell * 0.42)


def _paths(sheet: Sheet, frame: Frame, cars: Sequence[CarOnMap], before: SpeedPhreakzView | None) -> None:
    """Each car's path this round, dashed in its colour (on a band's own sheet: a path over the
    band's edge is cut there and goes on in the next band)."""
    d = sheet.draw
    squares_before = {car.player: car.square for car in before.cars} if before else {}
    for car in cars:
        start, end = squares_before.get(car.player), car.square
        trail = list(car.trail)
        if start is not None and trail and trail[0] != start:
            trail.insert(0, start)
        if len(trail) >= 2:
            pts = [frame.centre(sq) for sq in trail]
        elif start is not None and end is not None and start != end:
            pts = [frame.centre(start), frame.centre(end)]
        else:
            pts = []
        if pts:
            d.line(pts, fill=WHITE, width=6)
            dotted_path(d, pts, PLAYER_COLOURS[_index(car) % len(PLAYER_COLOURS)], width=3, dash=5, gap=3)


def _cars(sheet: Sheet, frame: Frame, cars: Sequence[CarOnMap], events: Sequence[object]) -> None:
    """Each car on its square in `frame` with its heading; the round's crashes."""
    d = sheet.draw
    cell = frame.cell
    r = _radius(cell)
    on_square: dict[Square, int] = {}
    for car in cars:
        square = car.square
        if square is None or car.status in (CarStatus.FINISHED, CarStatus.OUT) or not frame.shows(square):
            continue
        shift = on_square.get(square, 0)
        on_square[square] = shift + 1
        cx, cy = frame.centre(square)
        cx, cy = cx + shift * r * 0.6, cy - shift * r * 0.6
        dx, dy = car.heading.vector
        angle = math.atan2(dy, dx)
        tip = (cx + (r + cell * 0.45) * math.cos(angle), cy + (r + cell * 0.45) * math.sin(angle))
        arrow_head(d, tip, angle, max(6.0, cell * 0.45))
        sheet.marker(_index(car), cx, cy, r, car.letter, hollow=car.status is CarStatus.CRASHED)
    for event in events:
        if isinstance(event, Mapping) and event.get("kind") == "crash":
            match = CRASH_AT.search(str(event.get("text", "")))
            if match:
                square = Square(int(match.group(1)), int(match.group(2)))
                if frame.shows(square):
                    cx, cy = frame.centre(square)
                    crash_mark(d, cx + cell * 0.35, cy - cell * 0.35, max(4.0, cell * 0.25))


def _draw_bands(
    sheet: Sheet,
    circuit: Circuit,
    course: tuple[CourseMark, ...],
    frames: tuple[Frame, ...],
    draw_on: Callable[[Sheet, Frame], None],
) -> None:
    """The map in `frames` (see `bands`), its rulers and what `draw_on` adds on it. Each band
    is drawn on a sheet of its own (what runs past its edges is cut off there) and pasted in
    place; the terrain, the course and the rulers come from a background drawn once per map."""
    sheet.paste(_background(circuit, course, frames, sheet.width), (0, 0))
    for frame in frames:
        local = frame.local()
        part = _band_base(circuit, course, local.x0, local.y0, local.x1, local.y1, local.cell).copy()
        draw_on(part, local)
        sheet.paste(part, (frame.left, frame.top))


@lru_cache(maxsize=64)
def _background(circuit: Circuit, course: tuple[CourseMark, ...], frames: tuple[Frame, ...], width: int) -> Sheet:
    """The bands with their terrain and course marks, and their rulers, on white."""
    sheet = Sheet(width, int(bands_bottom(frames)) + 1)
    for frame in frames:
        local = frame.local()
        sheet.paste(
            _band_base(circuit, course, local.x0, local.y0, local.x1, local.y1, local.cell), (frame.left, frame.top)
        )
        _rulers(sheet, frame)
    return sheet


@lru_cache(maxsize=64)
def _band_base(
    circuit: Circuit, course: tuple[CourseMark, ...], x0: int, y0: int, x1: int, y1: int, cell: int
) -> Sheet:
    """A band's terrain, grid and course marks, drawn once per map and band (they do not
    change in a race) and copied for each picture."""
    frame = Frame(x0, y0, x1, y1, cell, 0, 0)
    part = Sheet(int(frame.width) + 1, int(frame.height) + 1)
    _map(part, circuit, frame)
    _course(part, circuit, course, frame)
    return part


def map_frames(view: SpeedPhreakzView) -> tuple[Frame, ...]:
    """Where the whole map is drawn in the turn picture: in bands of about 16 columns one
    under the other (a phone shows 326 px: 16 squares of 18 px and the rulers)."""
    circuit = view.circuit
    lines = len(_title(view))
    window = (0, 0, circuit.width - 1, circuit.height - 1)
    return bands(circuit, tuple(view.course), window, WIDTH, MARGIN + 15 * lines + 2)


def _title(view: SpeedPhreakzView) -> list[str]:
    return Sheet(1, 1).wrap(f"{view.map_name}: {moment(view)}", TITLE, WIDTH - 2 * MARGIN)


LINE = 13  # a line of legend text
MARK_LINE = 20  # a legend line with a sample or a marker in it


def _car_text(car: CarOnMap) -> str:
    where = f"at {car.square} facing {car.heading.value}" if car.square else ""
    return f"{car.player} ({car.colour or 'no colour yet'}) {where}, {car.status.value}"


def _marks_key(view: SpeedPhreakzView) -> list[KeyEntry]:
    def crash(sheet: Sheet, x: float, y: float) -> None:
        crash_mark(sheet.draw, x + 5, y, 5)

    def path(sheet: Sheet, x: float, y: float) -> None:
        dotted_path(sheet.draw, [(x, y), (x + 20, y)], BLACK, width=3, dash=4, gap=3)

    def heading(sheet: Sheet, x: float, y: float) -> None:
        arrow_head(sheet.draw, (x + 9, y), 0.0, 9)

    def checkpoint(sheet: Sheet, x: float, y: float) -> None:
        sheet.draw.rectangle((x, y - 7, x + 13, y + 6), outline=BLUE, width=2)

    def way(sheet: Sheet, x: float, y: float) -> None:
        arrow_head(sheet.draw, (x + 10, y), 0.0, 9, BLUE)

    return [
        KeyEntry(11, crash, "crash"),
        KeyEntry(20, path, "path this round"),
        KeyEntry(10, heading, "heading; hollow: crashed"),
        KeyEntry(14, checkpoint, "checkpoint, numbered in order; F: the line"),
        KeyEntry(11, way, _direction_text(view)),
    ]


def draw(scene: Scene) -> Picture:
    now = typed_view(scene.now, SpeedPhreakzView)
    before = typed_view(scene.before, SpeedPhreakzView) if scene.before is not None else None
    circuit = now.circuit
    frames = map_frames(now)
    cars = sorted(now.cars, key=lambda c: c.letter)
    probe = Sheet(1, 1)
    text_x = MARGIN + 2 * R + 6
    about = {car.player: probe.wrap(_car_text(car), TEXT, WIDTH - MARGIN - text_x) for car in cars}
    key = _terrains(circuit)
    column = (WIDTH - 2 * MARGIN) // 2
    terrain_lines = [probe.wrap(_terrain_text(t), TEXT, column - 24) for t in key]
    terrain_rows = [
        max(MARK_LINE, LINE * max(len(lines) for lines in terrain_lines[k : k + 2]) + 6) for k in range(0, len(key), 2)
    ]
    marks = _marks_key(now)
    legend_top = bands_bottom(frames) + 8
    cars_h = sum(max(MARK_LINE, LINE * len(lines) + 7) for lines in about.values())
    height = int(
        legend_top + MARK_LINE / 2 + cars_h + sum(terrain_rows) + 4 + key_lines(marks, TEXT, WIDTH - 2 * MARGIN) * 16
    )
    sheet = Sheet(WIDTH, height)

    def on_map(part: Sheet, frame: Frame) -> None:
        _paths(part, frame, cars, before)
        _cars(part, frame, cars, scene.events)

    _draw_bands(sheet, circuit, tuple(now.course), frames, on_map)
    for k, line in enumerate(_title(now)):
        sheet.text((MARGIN, MARGIN + 15 * k), line, TITLE, BLACK)

    # The legend under the map: the cars, the terrain key, the marks.
    d = sheet.draw
    y = legend_top + MARK_LINE / 2
    for car in cars:
        lines = about[car.player]
        sheet.marker(_index(car), MARGIN + R + 1, y, R, car.letter, hollow=car.status is CarStatus.CRASHED)
        for k, line in enumerate(lines):
            sheet.text((text_x, y + k * LINE), line, TEXT, BLACK, "lm")
        y += max(MARK_LINE, LINE * len(lines) + 7)
    for k, terrain in enumerate(key):
        x = MARGIN + (k % 2) * column
        if k % 2 == 0 and k:
            y += terrain_rows[k // 2 - 1]
        _terrain_cell(sheet, x, y - 7, 14, terrain.char)
        d.rectangle((x, y - 7, x + 13, y + 6), outline=GREY)
        for n, line in enumerate(terrain_lines[k]):
            sheet.text((x + 19, y + n * LINE), line, TEXT, BLACK, "lm")
    if key:
        y += terrain_rows[-1]
    draw_key(sheet, marks, (MARGIN, y + 4), TEXT, WIDTH - 2 * MARGIN, 16)
    return Picture(sheet.png(), alt_text(now, cars), WIDTH, height, sheet.smallest, tuple(sheet.clipped))


def _terrains(circuit: Circuit) -> tuple[Terrain, ...]:
    """Every terrain of the key ("every terrain in the legend"), void only where
    the map has some."""
    used = {char for row in circuit.grid for char in row}
    return tuple(t for t in circuit.terrain_key if t.char != " " or " " in used)


def _terrain_text(terrain: Terrain) -> str:
    if terrain.solid:
        return f"{terrain.name}: solid, a crash"
    if terrain.surcharge:
        return f"{terrain.name}: +{terrain.surcharge} control"
    if terrain.oil:
        return f"{terrain.name}: next action rolled"
    return terrain.name


def _direction_text(view: SpeedPhreakzView) -> str:
    line = next((m for m in view.course if m.number == 0), None)
    count = len(view.circuit.checkpoints)
    heading = line.heading.value if line is not None else view.circuit.finish_direction.value
    through = f"checkpoints 1 to {count}" if count > 1 else "checkpoint 1"
    return f"the race: from the line heading {heading}, through {through} in order, back over the line"


def _index(car: CarOnMap) -> int:
    """The car's marker (shape and colour) by its letter: A is the first."""
    return ord(car.letter) - ord("A") if "A" <= car.letter <= "Z" else 0


def alt_text(view: SpeedPhreakzView, cars: Sequence[CarOnMap]) -> str:
    parts = []
    for car in cars:
        where = f"at {car.square} facing {car.heading.value}" if car.square else "off the map"
        parts.append(f"{car.letter} {car.player} {where} ({car.status.value})")
    return f"Map of {view.map_name or 'the circuit'}, {moment(view)}: {'; '.join(parts)}."


def moment(view: SpeedPhreakzView) -> str:
    """The round the picture shows: the view's ``round`` is the next one to be run."""
    done = (view.round or 1) - 1
    return f"after round {done}" if done > 0 else "before the start"


# -- one player's options -------------------------------------------------------------

OPTIONS_WIDTH = 320
_BANDS = {Band.IN_CONTROL: FREE, Band.RISKY: WEAR, Band.LONG_SHOT: ROLL}


def _band_badge(sheet: Sheet, cx: float, cy: float, size: float, band: Band) -> None:
    """A band's mark: its digit (1, 2, 3) on its colour, a single, double or thick edge."""
    d = sheet.draw
    half = size / 2
    box = (cx - half, cy - half, cx + half, cy + half)
    d.rectangle(box, fill=_BANDS[band], outline=DARK, width=2 if band is Band.LONG_SHOT else 1)
    if band is Band.RISKY:
        d.rectangle((cx - half + 2, cy - half + 2, cx + half - 2, cy + half - 2), outline=DARK, width=1)
    sheet.text((cx, cy), band.digit, TEXT, BLACK, "mm")


OPTIONS_TEXT = 11
"""The options picture's captions (at its full size on a phone: at least `LEGIBLE`)."""


def _options_head(options: ProgramOptions) -> list[str]:
    """The options picture's caption lines, wrapped to its width."""
    head = [
        f"Your options for round {options.round}: from {options.start} facing {options.heading.value} ({options.assumes})."
    ]
    if options.extra:
        head.append(f"Your first action costs {options.extra} more.")
    head.append("Control that round: 101-200. A square shows what the cheapest program ending there costs.")
    probe = Sheet(1, 1)
    return [line for part in head for line in probe.wrap(part, OPTIONS_TEXT, OPTIONS_WIDTH - 2 * MARGIN)]


def options_frames(view: SpeedPhreakzView) -> tuple[Frame, ...]:
    """Where the part of the map around one player's options is drawn: in bands, as the map
    is, under the caption (a window of more than 16 columns is cut in two)."""
    options = view.options
    assert options is not None
    top = MARGIN + 14 * len(_options_head(options)) + 4
    return bands(view.circuit, tuple(view.course), options.window, OPTIONS_WIDTH, top, largest=30)


def draw_options(view: SpeedPhreakzView) -> Picture:
    """One player's options (their own view's ``options``): see the module docstring."""
    typed = typed_view(view, SpeedPhreakzView)
    options = typed.options
    assert options is not None
    circuit = typed.circuit
    probe = Sheet(1, 1)
    lines = _options_head(options)
    frames = options_frames(typed)
    room = OPTIONS_WIDTH - MARGIN - 28
    best = [
        f"{option.band.digit}: {option.square} facing {option.heading.value}, cost {option.cost}, by "
        f"{' '.join(option.program)}"
        for option in options.best
    ]
    best_lines = [line for text in best for line in probe.wrap(text, OPTIONS_TEXT, room)]
    meanings = {
        Band.IN_CONTROL: "cost 101 or less: never out of control",
        Band.RISKY: "102-150: out of control if control comes out below",
        Band.LONG_SHOT: "151-200: out of control more often than not",
    }
    key = {band: probe.wrap(text, OPTIONS_TEXT, room) for band, text in meanings.items()}
    ring = probe.wrap("ringed: the square furthest along the race in its band, reached by:", OPTIONS_TEXT, room)
    legend_top = bands_bottom(frames) + 16
    height = int(legend_top + sum(3 + 14 * len(v) for v in key.values()) + 14 * len(ring) + len(best_lines) * 14 + 8)
    sheet = Sheet(OPTIONS_WIDTH, height)
    ringed = {option.square for option in options.best}
    me = next((c for c in typed.cars if c.player == options.player), None)
    others = [c for c in typed.cars if c.player != options.player and c.status in (CarStatus.RACING, CarStatus.CRASHED)]

    def on_map(part: Sheet, frame: Frame) -> None:
        d = part.draw
        cell = frame.cell
        size = max(12.0, cell * 0.62)
        for option in options.squares:
            if not frame.shows(option.square) or option.square == options.start:
                continue
            cx, cy = frame.centre(option.square)
            _band_badge(part, cx, cy, size, option.band)
            if option.square in ringed:
                r = cell * 0.62
                d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=BLACK, width=2)
        _cars(part, frame, others, ())
        if me is not None and frame.shows(options.start):
            cx, cy = frame.centre(options.start)
            dx, dy = options.heading.vector
            angle = math.atan2(dy, dx)
            r = _radius(cell)
            arrow_head(
                d,
                (cx + (r + cell * 0.45) * math.cos(angle), cy + (r + cell * 0.45) * math.sin(angle)),
                angle,
                max(6.0, cell * 0.45),
            )
            part.marker(_index(me), cx, cy, r, me.letter)

    _draw_bands(sheet, circuit, tuple(typed.course), frames, on_map)
    for k, line in enumerate(lines):
        sheet.text((MARGIN, MARGIN + k * 14), line, OPTIONS_TEXT, BLACK)
    d = sheet.draw
    y = legend_top
    text_x = MARGIN + 24
    for band in Band:
        _band_badge(sheet, MARGIN + 8, y, 14, band)
        for line in key[band]:
            sheet.text((text_x, y), line, OPTIONS_TEXT, BLACK, "lm")
            y += 14
        y += 3
    d.ellipse((MARGIN + 1, y - 7, MARGIN + 15, y + 7), outline=BLACK, width=2)
    for line in ring:
        sheet.text((text_x, y), line, OPTIONS_TEXT, BLACK, "lm")
        y += 14
    for line in best_lines:
        sheet.text((text_x, y), line, OPTIONS_TEXT, BLACK, "lm")
        y += 14
    return Picture(sheet.png(), options_alt(options), OPTIONS_WIDTH, height, sheet.smallest, tuple(sheet.clipped))


def options_alt(options: ProgramOptions) -> str:
    counts = {band: sum(1 for o in options.squares if o.band is band) for band in Band}
    best = "; ".join(f"{o.band.value}: {o.square} for {o.cost} by {' '.join(o.program)}" for o in options.best)
    return (
        f"Your options for round {options.round} from {options.start} facing {options.heading.value}: "
        f"{counts[Band.IN_CONTROL]} squares in control whatever the roll, {counts[Band.RISKY]} at some risk, "
        f"{counts[Band.LONG_SHOT]} likely out of control. Furthest along: {best}."
    )
