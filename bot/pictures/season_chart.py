"""A season's chart of points over races, for its archive page: inline SVG laid out on a
360-unit-wide canvas that the page scales to the screen (width 100%), so at 360 px every label
is at its written size (11 px and more) and on a wider screen it grows with it.

One line per driver, the table's points after each race (`rules.season.progression`), from 0
before the first race; the races planned along the bottom (every one labelled up to ten, every
second or third beyond), the points up the side. Colour is never the only key: each line ends in
its driver's place in the table, and the page's legend lists place, name and points."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

WIDTH = 360
HEIGHT = 220
LEFT, RIGHT, TOP, BOTTOM = 36, 28, 12, 32  # margins, for the labels
LABEL_GAP = 12  # the least distance between two lines' end labels
# Colours distinct in print and for the commonest colour blindness, as the games' pictures use.
COLOURS = (
    "#d62728",
    "#1f77b4",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#555555",
)


@dataclass(frozen=True, slots=True)
class ChartLine:
    place: str  # the driver's place as the table shows it ("1", "2=", ...)
    name: str
    points: int
    colour: str
    path: str  # SVG polyline points: "x,y x,y ..."
    end_x: float
    label_y: float  # where its place is written at its end (moved apart from its neighbours')


@dataclass(frozen=True, slots=True)
class Tick:
    at: float
    label: str


@dataclass(frozen=True, slots=True)
class SeasonChart:
    width: int
    height: int
    left: int
    right: float  # the plot's right edge
    top: int
    bottom: float  # the plot's bottom edge (the zero line may be above it)
    zero: float
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    lines: tuple[ChartLine, ...]


def _step(span: int) -> int:
    """A round step giving at most five ticks over `span` points."""
    raw = max(1.0, span / 5)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return int(factor * power)
    return int(10 * power)


def chart(rows: Sequence[tuple[str, str, int, Sequence[int]]], planned: int) -> SeasonChart | None:
    """The chart of `rows` (place shown, name, points, the points after each race run), top of
    the table first, over `planned` races; None before any race has counted."""
    runs = max((len(r[3]) for r in rows), default=0)
    if not runs:
        return None
    planned = max(planned, runs)
    values = [v for r in rows for v in r[3]]
    low, high = min(0, *values), max(1, *values)
    step = _step(high - low)
    low, high = step * math.floor(low / step), step * math.ceil(high / step)
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM

    def x(race: int) -> float:
        return round(LEFT + (right - LEFT) * race / planned, 1)

    def y(points: int) -> float:
        return round(bottom - (bottom - TOP) * (points - low) / (high - low), 1)

    every = 1 if planned <= 10 else math.ceil(planned / 10)
    x_ticks = tuple(Tick(x(n), str(n)) for n in range(1, planned + 1) if n % every == 0 or n == 1)
    y_ticks = tuple(Tick(y(v), str(v)) for v in range(low, high + 1, step))
    lines = []
    for index, (place, name, points, after) in enumerate(rows):
        dots = [(x(0), y(0)), *((x(n + 1), y(v)) for n, v in enumerate(after))]
        lines.append(
            ChartLine(
                place=place,
                name=name,
                points=points,
                colour=COLOURS[index % len(COLOURS)],
                path=" ".join(f"{a},{b}" for a, b in dots),
                end_x=dots[-1][0],
                label_y=dots[-1][1],
            )
        )
    return SeasonChart(WIDTH, HEIGHT, LEFT, right, TOP, bottom, y(0), x_ticks, y_ticks, _apart(lines))


def _apart(lines: list[ChartLine]) -> tuple[ChartLine, ...]:
    """The lines with their end labels at least `LABEL_GAP` apart, in table order among equals,
    and none below the canvas (with more lines than the canvas has room for, the top ones crowd)."""
    order = sorted(range(len(lines)), key=lambda i: (lines[i].label_y, i))
    at: dict[int, float] = {}
    floor = -float("inf")
    for i in order:
        at[i] = floor = max(lines[i].label_y, floor + LABEL_GAP)
    ceiling = float(HEIGHT - 4)  # then, from the bottom up, none below the canvas
    for i in reversed(order):
        at[i] = ceiling = min(at[i], ceiling)
        ceiling -= LABEL_GAP
    return tuple(replace(line, label_y=round(at[i], 1)) for i, line in enumerate(lines))


__all__ = ["ChartLine", "SeasonChart", "Tick", "chart"]
