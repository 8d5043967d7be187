"""SpeedPhreakz: the grid map with every car, its heading and its path this round; and one
player's own options for the round they order (issue 16).

Drawn to plot from (issue 16): x runs along the top and bottom edges and y down both sides,
as ``START x,y`` names a square (a units digit over every column, the tens digit over every
tenth); the checkpoints are outlined and numbered in the order they must be passed, an arrow
at each shows the way the race goes through it (and over the line); every terrain of the
key is in the legend with its fill and its pattern (so a black-and-white print still tells
grass from gravel) and what it does.

Read only from the view (`SpeedPhreakzView`) and the round's public events: the terrain
from the view's ``circuit`` (``grid[y][x]``, one character per square; its ``terrain_key``),
the race direction from ``course``, every car (letter, colour, square, heading, status, and
its ``trail``: each square it drove through this round) from the view's ``cars``, where it
started the round from the view before, and crash squares from the ``crash`` events. A car
with no trail is drawn with a straight line from where it started to where it ended.

`draw_options` draws one player's options from *their own* view (``options``): the part of
the map around where their round starts, each square a program can end on marked with what
the cheapest such program costs against the round's control range, and the squares furthest
along the race in each band ringed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

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
    Sheet,
    arrow_head,
    crash_mark,
    dotted_path,
    shorten,
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
MAP_WIDTH = 420
"""The map part's width budget: with the rulers the picture stays under ~460 px, which a
phone shows at about 0.7 (text of 12 px reads at 8.5 px)."""
RULER = 18
TEXT = 12


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


def _map(sheet: Sheet, circuit: Circuit, frame: Frame) -> None:
    """The terrain in `frame`, a light grid, and x,y rulers on all four edges."""
    d = sheet.draw
    cell = frame.cell
    for y in range(frame.y0, frame.y1 + 1):
        for x in range(frame.x0, frame.x1 + 1):
            px, py = frame.corner(Square(x, y))
            _terrain_cell(sheet, px, py, cell, circuit.grid[y][x])
    for x in range(frame.x1 - frame.x0 + 2):  # the grid, so squares can be counted
        d.line((frame.left + x * cell, frame.top, frame.left + x * cell, frame.top + frame.height), fill=LIGHT, width=1)
    for y in range(frame.y1 - frame.y0 + 2):
        d.line((frame.left, frame.top + y * cell, frame.left + frame.width, frame.top + y * cell), fill=LIGHT, width=1)
    for x in range(frame.x0, frame.x1 + 1):
        cx = frame.centre(Square(x, frame.y0))[0]
        for y_text, y_unit in (
            (frame.top - 24, frame.top - 9),
            (frame.top + frame.height + 22, frame.top + frame.height + 8),
        ):
            if x % 10 == 0 or x == frame.x0:
                sheet.text((cx, y_text), str(x // 10), TEXT, DARK, "mm")
            sheet.text((cx, y_unit), str(x % 10), TEXT, BLACK, "mm")
    for y in range(frame.y0, frame.y1 + 1):
        cy = frame.centre(Square(frame.x0, y))[1]
        sheet.text((frame.left - 3, cy), str(y), TEXT, BLACK, "rm")
        sheet.text((frame.left + frame.width + 3, cy), str(y), TEXT, BLACK, "lm")


def _course(sheet: Sheet, circuit: Circuit, course: Sequence[CourseMark], frame: Frame) -> None:
    """The checkpoints outlined and numbered, and the race's direction at each and at the line."""
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
        r = max(7.0, cell * 0.45)
        bx, by = cx - dx * cell * 0.2 - dy * cell * 0.9, cy - dy * cell * 0.2 + dx * cell * 0.9
        d.ellipse((bx - r, by - r, bx + r, by + r), fill=WHITE, outline=BLUE, width=2)
        sheet.text((bx, by), label, TEXT, BLUE, "mm")


def _cars(
    sheet: Sheet, frame: Frame, cars: Sequence[CarOnMap], before: SpeedPhreakzView | None, events: Sequence[object]
) -> None:
    d = sheet.draw
    cell = frame.cell
    squares_before = {car.player: car.square for car in before.cars} if before else {}
    r = max(5.0, cell * 0.42)
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


MAP_TOP = 50
"""Where the map starts: under the title and the x ruler."""


def map_frame(circuit: Circuit) -> Frame:
    """Where the whole map is drawn in the turn picture: a square of 8 to 22 px, to fit."""
    cell = max(8, min(22, MAP_WIDTH // max(circuit.width, 1)))
    return Frame(0, 0, circuit.width - 1, circuit.height - 1, cell, RULER + 6, MAP_TOP)


def draw(scene: Scene) -> Picture:
    now = typed_view(scene.now, SpeedPhreakzView)
    before = typed_view(scene.before, SpeedPhreakzView) if scene.before is not None else None
    circuit = now.circuit
    frame = map_frame(circuit)
    cars = sorted(now.cars, key=lambda c: c.letter)
    width = int(max(frame.left * 2 + frame.width, 340))
    map_bottom = frame.top + frame.height + 30
    key = _terrains(circuit)
    legend_h = 18 * (len(cars) + 1) + 18 * math.ceil(len(key) / 2) + 18 * 2 + 15 * 2 + 10
    height = int(map_bottom + legend_h)
    sheet = Sheet(width, height)
    sheet.text((8, 4), shorten(f"{now.map_name}: {moment(now)}", 52), 14, BLACK)
    _map(sheet, circuit, frame)
    _course(sheet, circuit, now.course, frame)
    _cars(sheet, frame, cars, before, scene.events)

    # The legend under the map: the cars, the terrain key, the marks.
    d = sheet.draw
    y = map_bottom + 8
    for car in cars:
        sheet.marker(_index(car), 16, y, 8, car.letter, hollow=car.status is CarStatus.CRASHED)
        where = f"at {car.square} facing {car.heading.value}" if car.square else ""
        sheet.text(
            (30, y),
            shorten(f"{car.player} ({car.colour or 'no colour yet'}) {where}, {car.status.value}", 46),
            TEXT,
            BLACK,
            "lm",
        )
        y += 18
    y += 4
    column = (width - 16) / 2
    for k, terrain in enumerate(key):
        x = 8 + (k % 2) * column
        row_y = y + (k // 2) * 18
        _terrain_cell(sheet, x, row_y - 7, 14, terrain.char)
        d.rectangle((x, row_y - 7, x + 13, row_y + 6), outline=GREY)
        sheet.text((x + 19, row_y), _terrain_text(terrain), TEXT, BLACK, "lm")
    y += 18 * math.ceil(len(key) / 2) + 4
    crash_mark(d, 14, y, 5)
    sheet.text((24, y), "crash", TEXT, BLACK, "lm")
    dotted_path(d, [(72, y), (92, y)], BLACK, width=3, dash=4, gap=3)
    sheet.text((96, y), "path this round", TEXT, BLACK, "lm")
    arrow_head(d, (206, y), 0.0, 9)
    sheet.text((210, y), "heading; hollow: crashed", TEXT, BLACK, "lm")
    y += 18
    d.rectangle((8, y - 7, 21, y + 6), outline=BLUE, width=2)
    sheet.text((27, y), "checkpoint, numbered in order; F: the line", TEXT, BLACK, "lm")
    y += 18
    arrow_head(d, (24, y), 0.0, 9, BLUE)
    for line in sheet.wrap(_direction_text(now), TEXT, width - 40):
        sheet.text((30, y), line, TEXT, BLACK, "lm")
        y += 15
    return Picture(sheet.png(), alt_text(now, cars), width, height, sheet.smallest, tuple(sheet.clipped))


def _terrains(circuit: Circuit) -> tuple[Terrain, ...]:
    """Every terrain of the key (issue 16: "every terrain in the legend"), void only where
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


# -- one player's options (issue 16) -------------------------------------------------------------

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


def draw_options(view: SpeedPhreakzView) -> Picture:
    """One player's options (their own view's ``options``): see the module docstring."""
    typed = typed_view(view, SpeedPhreakzView)
    options = typed.options
    assert options is not None
    circuit = typed.circuit
    probe = Sheet(1, 1)
    head = [
        f"Your options for round {options.round}: from {options.start} facing {options.heading.value} ({options.assumes})."
    ]
    if options.extra:
        head.append(f"Your first action costs {options.extra} more.")
    head.append("Control that round: 101-200. A square shows what the cheapest program ending there costs.")
    lines = [line for part in head for line in probe.wrap(part, TEXT, OPTIONS_WIDTH - 16)]
    x0, y0, x1, y1 = options.window
    cols = x1 - x0 + 1
    cell = max(12, min(30, int((OPTIONS_WIDTH - 2 * (RULER + 6)) // cols)))
    top = 8 + len(lines) * 15 + 34
    frame = Frame(x0, y0, x1, y1, cell, RULER + 6, top)
    best = [
        f"{option.band.digit}: {option.square} facing {option.heading.value}, cost {option.cost}, by "
        f"{' '.join(option.program)}"
        for option in options.best
    ]
    best_lines = [line for text in best for line in probe.wrap(text, TEXT, OPTIONS_WIDTH - 40)]
    meanings = {
        Band.IN_CONTROL: "cost 101 or less: never out of control",
        Band.RISKY: "102-150: out of control if control comes out below",
        Band.LONG_SHOT: "151-200: out of control more often than not",
    }
    key = {band: probe.wrap(text, TEXT, OPTIONS_WIDTH - 36) for band, text in meanings.items()}
    ring = probe.wrap("ringed: the square furthest along the race in its band, reached by:", TEXT, OPTIONS_WIDTH - 36)
    legend_top = frame.top + frame.height + 36
    height = int(legend_top + sum(3 + 15 * len(v) for v in key.values()) + 15 * len(ring) + len(best_lines) * 15 + 16)
    width = int(max(OPTIONS_WIDTH, frame.left * 2 + frame.width))
    sheet = Sheet(width, height)
    for k, line in enumerate(lines):
        sheet.text((8, 8 + k * 15), line, TEXT, BLACK)
    _map(sheet, circuit, frame)
    _course(sheet, circuit, typed.course, frame)
    d = sheet.draw
    size = max(10.0, cell * 0.62)
    ringed = {option.square for option in options.best}
    for option in options.squares:
        if not frame.shows(option.square) or option.square == options.start:
            continue
        cx, cy = frame.centre(option.square)
        _band_badge(sheet, cx, cy, size, option.band)
        if option.square in ringed:
            r = cell * 0.62
            d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=BLACK, width=2)
    me = next((c for c in typed.cars if c.player == options.player), None)
    others = [c for c in typed.cars if c.player != options.player and c.status in (CarStatus.RACING, CarStatus.CRASHED)]
    _cars(sheet, frame, others, None, ())
    if me is not None:
        cx, cy = frame.centre(options.start)
        dx, dy = options.heading.vector
        angle = math.atan2(dy, dx)
        r = max(6.0, cell * 0.42)
        arrow_head(
            d,
            (cx + (r + cell * 0.45) * math.cos(angle), cy + (r + cell * 0.45) * math.sin(angle)),
            angle,
            max(6.0, cell * 0.45),
        )
        sheet.marker(_index(me), cx, cy, r, me.letter)
    y = legend_top
    for band in Band:
        _band_badge(sheet, 16, y, 14, band)
        for line in key[band]:
            sheet.text((28, y), line, TEXT, BLACK, "lm")
            y += 15
        y += 3
    d.ellipse((9, y - 7, 23, y + 7), outline=BLACK, width=2)
    for line in ring:
        sheet.text((28, y), line, TEXT, BLACK, "lm")
        y += 15
    for line in best_lines:
        sheet.text((28, y), line, TEXT, BLACK, "lm")
        y += 15
    return Picture(sheet.png(), options_alt(options), width, height, sheet.smallest, tuple(sheet.clipped))


def options_alt(options: ProgramOptions) -> str:
    counts = {band: sum(1 for o in options.squares if o.band is band) for band in Band}
    best = "; ".join(f"{o.band.value}: {o.square} for {o.cost} by {' '.join(o.program)}" for o in options.best)
    return (
        f"Your options for round {options.round} from {options.start} facing {options.heading.value}: "
        f"{counts[Band.IN_CONTROL]} squares in control whatever the roll, {counts[Band.RISKY]} at some risk, "
        f"{counts[Band.LONG_SHOT]} likely out of control. Furthest along: {best}."
    )
