"""SpeedPhreakz: the grid map with every car, its heading and its path this round.

Read only from the public view and the round's public events: the terrain from the view's
``map_lines`` extra (the text map: a ruler, then one line per row), each car's letter from
``map_legend``, its square, heading and status from the public table, where it started the
round from the view before, and crash squares from the ``crash`` events.

The path this round is the view's ``paths`` extra (each square the car drove through), or a
straight line from start to end where a view has none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.pictures import Picture, Scene, column
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

HISTORY = False
TERRAIN = set(".S,:o# ")
HEADINGS = {"N": (0, -1), "NE": (1, -1), "E": (1, 0), "SE": (1, 1), "S": (0, 1), "SW": (-1, 1), "W": (-1, 0), "NW": (-1, -1)}
LEGEND_LINE = re.compile(r"^([A-Z]) = (\S+)(?: \((.*)\))?$")
SQUARE = re.compile(r"^(\d+),(\d+)$")
CRASH_AT = re.compile(r"crashes at (\d+),(\d+)")
MAX_WIDTH = 600


def grid_of(view: Mapping[str, Any]) -> list[str]:
    """The map's rows without the ruler and row numbers (``"  5 #ABC###"`` -> ``"#ABC###"``)."""
    rows = []
    for line in view.get("map_lines", ()):
        head = line[:4].strip()
        if head.isdigit():
            rows.append(line[4:])
    return rows


def terrain(now: list[str], before: list[str]) -> list[str]:
    """The terrain under the cars: a car's letter is replaced by what the other frame shows
    there, else tarmac (cars stand only where a car may drive)."""
    out = []
    for y, row in enumerate(now):
        cells = []
        for x, char in enumerate(row):
            if char in TERRAIN:
                cells.append(char)
                continue
            other = before[y][x] if y < len(before) and x < len(before[y]) else "."
            cells.append(other if other in TERRAIN else ".")
        out.append("".join(cells))
    return out


def _square(text: str) -> tuple[int, int] | None:
    match = SQUARE.match(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def draw(scene: Scene) -> Picture:
    now, before = scene.now, scene.before
    grid = terrain(grid_of(now), grid_of(before) if before else [])
    cols = max((len(r) for r in grid), default=1)
    cell = max(10, min(26, MAX_WIDTH // max(cols, 1)))
    cars = _cars(now)
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

    def centre(square: tuple[int, int]) -> tuple[float, float]:
        return square[0] * cell + cell / 2, square[1] * cell + cell / 2

    squares_before = {p: _square(s) for p, s in column(before, "Square").items()} if before else {}
    on_square: dict[tuple[int, int], int] = {}
    r = max(5.0, cell * 0.42)
    # Paths under the cars.
    trails = now.get("paths", {})
    for car in cars:
        start, end = squares_before.get(car["player"]), car["square"]
        # The squares the car drove through, when the game names them (the view's "paths");
        # else a straight line from where it started the round to where it ended.
        trail = [sq for sq in (_square(t) for t in trails.get(car["player"], ())) if sq is not None]
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
            dotted_path(d, pts, PLAYER_COLOURS[car["index"] % len(PLAYER_COLOURS)], width=3, dash=5, gap=3)
    for car in cars:
        square = car["square"]
        if square is None or car["status"] in ("finished", "out"):
            continue
        shift = on_square.get(square, 0)
        on_square[square] = shift + 1
        cx, cy = centre(square)
        cx, cy = cx + shift * r * 0.6, cy - shift * r * 0.6
        vector = HEADINGS.get(car["heading"])
        if vector:
            angle = math.atan2(vector[1], vector[0])
            tip = (cx + (r + cell * 0.45) * math.cos(angle), cy + (r + cell * 0.45) * math.sin(angle))
            arrow_head(d, tip, angle, max(6.0, cell * 0.45))
        sheet.marker(car["index"], cx, cy, r, car["letter"], hollow=car["status"] == "crashed")
    for event in scene.events:
        if event.get("kind") == "crash":
            match = CRASH_AT.search(str(event.get("text", "")))
            if match:
                cx, cy = centre((int(match.group(1)), int(match.group(2))))
                crash_mark(d, cx + cell * 0.35, cy - cell * 0.35, max(4.0, cell * 0.25))

    # The legend under the map.
    top = map_h + 8
    sheet.text((8, top), shorten(f"{now.get('map_name', '')}: {moment(now)}", 70), 13, BLACK)
    for k, car in enumerate(cars):
        y = top + 20 * (k + 1) + 8
        sheet.marker(car["index"], 16, y, 8, car["letter"], hollow=car["status"] == "crashed")
        where = f"at {car['square_text']} facing {car['heading']}" if car["square"] else ""
        sheet.text((30, y), shorten(f"{car['player']} ({car['colour']}) {where}, {car['status']}", 70), 12, BLACK, "lm")
    key_y = top + 20 * (len(cars) + 1) + 8
    crash_mark(d, 14, key_y, 5)
    sheet.text((24, key_y), "crash", 11, BLACK, "lm")
    dotted_path(d, [(70, key_y), (90, key_y)], BLACK, width=3, dash=4, gap=3)
    sheet.text((94, key_y), "path this round", 11, BLACK, "lm")
    arrow_head(d, (196, key_y), 0.0, 9)
    sheet.text((200, key_y), "heading; hollow: crashed", 11, BLACK, "lm")
    return Picture(sheet.png(), alt_text(now, cars), width, map_h + legend_h)


def _cars(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    letters: dict[str, tuple[str, str]] = {}
    for line in view.get("map_legend", ()):
        match = LEGEND_LINE.match(line)
        if match:
            letters[match.group(2)] = (match.group(1), match.group(3) or "")
    squares, headings, status = column(view, "Square"), column(view, "Heading"), column(view, "Status")
    cars = []
    for row in view.get("table", ()):
        player = row["player"]
        letter, colour = letters.get(player, (player[:1].upper(), ""))
        cars.append({
            "player": player, "letter": letter, "colour": colour or "no colour",
            "index": ord(letter) - ord("A") if "A" <= letter <= "Z" else 0,
            "square": _square(squares.get(player, "")), "square_text": squares.get(player, ""),
            "heading": headings.get(player, ""), "status": status.get(player, ""),
        })
    return sorted(cars, key=lambda c: c["letter"])


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


def alt_text(view: Mapping[str, Any], cars: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for car in cars:
        where = f"at {car['square_text']} facing {car['heading']}" if car["square"] else "off the map"
        parts.append(f"{car['letter']} {car['player']} {where} ({car['status']})")
    return f"Map of {view.get('map_name', 'the circuit')}, {moment(view)}: {'; '.join(parts)}."


def moment(view: Mapping[str, Any]) -> str:
    """The round the picture shows: the view's ``round`` is the next one to be run."""
    done = int(view.get("round", 1) or 1) - 1
    return f"after round {done}" if done > 0 else "before the start"
