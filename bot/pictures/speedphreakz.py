"""SpeedPhreakz: the grid map with every car, its heading and its path this round.

Read only from the public view (`SpeedPhreakzView`) and the round's public events: the
terrain from the view's ``circuit`` (``grid[y][x]``, one character per square), every car
(letter, colour, square, heading, status, and its ``trail``: each square it drove through
this round) from the view's ``cars``, where it started the round from the view before, and
crash squares from the ``crash`` events. A car with no trail is drawn with a straight line
from where it started to where it ended.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from bot.pictures import Picture, Scene, typed_view
from bot.pictures.common import (
    BLACK,
    DARK,
    GRASS,
    GRAVEL,
    GREY,
    LIGHT,
    OIL,
    PLAYER_COLOURS,
    WHITE,
    Sheet,
    arrow_head,
    crash_mark,
    dotted_path,
    shorten,
)
from rules.speedphreakz import CarOnMap, CarStatus, SpeedPhreakzView, Square

HISTORY = False
CRASH_AT = re.compile(r"crashes at (\d+),(\d+)")
MAX_WIDTH = 600


def draw(scene: Scene) -> Picture:
    now = typed_view(scene.now, SpeedPhreakzView)
    before = typed_view(scene.before, SpeedPhreakzView) if scene.before is not None else None
    grid = now.circuit.grid
    cols = max((len(r) for r in grid), default=1)
    cell = max(10, min(26, MAX_WIDTH // max(cols, 1)))
    cars = sorted(now.cars, key=lambda c: c.letter)
    legend_h = 20 * (len(cars) + 2) + 10
    width = max(cols * cell, 320)
    map_h = len(grid) * cell
    sheet = Sheet(width, map_h + legend_h)
    d = sheet.draw
    for y, row in enumerate(grid):
        for x, char in enumerate(row):
            _terrain_cell(sheet, x * cell, y * cell, cell, char)
    for x in range(cols + 1):  # a light grid, so squares can be counted
        d.line((x * cell, 0, x * cell, map_h), fill=LIGHT, width=1)
    for y in range(len(grid) + 1):
        d.line((0, y * cell, cols * cell, y * cell), fill=LIGHT, width=1)

    def centre(square: Square) -> tuple[float, float]:
        return square.x * cell + cell / 2, square.y * cell + cell / 2

    squares_before = {car.player: car.square for car in before.cars} if before else {}
    on_square: dict[Square, int] = {}
    r = max(5.0, cell * 0.42)
    # Paths under the cars.
    for car in cars:
        start, end = squares_before.get(car.player), car.square
        # The squares the car drove through, when the game names them (the car's trail);
        # else a straight line from where it started the round to where it ended.
        trail = list(car.trail)
        if start is not None and trail and trail[0] != start:
            trail.insert(0, start)
        if len(trail) >= 2:
            pts = [centre(sq) for sq in trail]
        elif start is not None and end is not None and start != end:
            pts = [centre(start), centre(end)]
        else:
            pts = []
        if pts:
            d.line(pts, fill=WHITE, width=6)
            dotted_path(d, pts, PLAYER_COLOURS[_index(car) % len(PLAYER_COLOURS)], width=3, dash=5, gap=3)
    for car in cars:
        square = car.square
        if square is None or car.status in (CarStatus.FINISHED, CarStatus.OUT):
            continue
        shift = on_square.get(square, 0)
        on_square[square] = shift + 1
        cx, cy = centre(square)
        cx, cy = cx + shift * r * 0.6, cy - shift * r * 0.6
        dx, dy = car.heading.vector
        angle = math.atan2(dy, dx)
        tip = (cx + (r + cell * 0.45) * math.cos(angle), cy + (r + cell * 0.45) * math.sin(angle))
        arrow_head(d, tip, angle, max(6.0, cell * 0.45))
        sheet.marker(_index(car), cx, cy, r, car.letter, hollow=car.status is CarStatus.CRASHED)
    for event in scene.events:
        if event.get("kind") == "crash":
            match = CRASH_AT.search(str(event.get("text", "")))
            if match:
                cx, cy = centre(Square(int(match.group(1)), int(match.group(2))))
                crash_mark(d, cx + cell * 0.35, cy - cell * 0.35, max(4.0, cell * 0.25))

    # The legend under the map.
    top = map_h + 8
    sheet.text((8, top), shorten(f"{now.map_name}: {moment(now)}", 70), 13, BLACK)
    for k, car in enumerate(cars):
        y = top + 20 * (k + 1) + 8
        sheet.marker(_index(car), 16, y, 8, car.letter, hollow=car.status is CarStatus.CRASHED)
        where = f"at {car.square} facing {car.heading.value}" if car.square else ""
        sheet.text((30, y), shorten(f"{car.player} ({car.colour or 'no colour yet'}) {where}, {car.status.value}", 70), 12, BLACK, "lm")
    key_y = top + 20 * (len(cars) + 1) + 8
    crash_mark(d, 14, key_y, 5)
    sheet.text((24, key_y), "crash", 11, BLACK, "lm")
    dotted_path(d, [(70, key_y), (90, key_y)], BLACK, width=3, dash=4, gap=3)
    sheet.text((94, key_y), "path this round", 11, BLACK, "lm")
    arrow_head(d, (196, key_y), 0.0, 9)
    sheet.text((200, key_y), "heading; hollow: crashed", 11, BLACK, "lm")
    return Picture(sheet.png(), alt_text(now, cars), width, map_h + legend_h)


def _index(car: CarOnMap) -> int:
    """The car's marker (shape and colour) by its letter: A is the first."""
    return ord(car.letter) - ord("A") if "A" <= car.letter <= "Z" else 0


def _terrain_cell(sheet: Sheet, x: int, y: int, size: int, char: str) -> None:
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
