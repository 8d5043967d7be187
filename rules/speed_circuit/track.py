"""Tracks as data: the text format, the loader, the validator and the renderings.

The format is ours (speed-circuit.md §2.16 proposes JSON; this is the same model written one
row per line so that a GM can draw a track in a text editor). `tracks/README.md` documents it
for GMs. In short::

    name Harbour Loop
    laps 3
    # row  A    B    C    notes
    1      .    .    .    grey=A
    11     80   80   |    corner=T1
    12     80   80   80   corner=T1
    line T1 T1 +20 B10 A11 A12 B13
    grid A74 B74 C74 A73 B73 C73

Each numbered line is one *row*: the front edges that line up across the track (seed 003,
"Definition of a Row"). Rows run 1..L around the lap; the start/finish line is the front
edge of row L. A cell says what lane A, B or C has at that row:

* ``.`` a plain space whose front edge is this row;
* a number: a corner space with that posted speed (mph, a multiple of 20);
* ``|`` the lane's space goes on: its front edge is at a later row (the long outside
  spaces of a corner, whose front edges are staggered, §2.2);
* ``x`` the lane does not exist here (a 2-wide section).

A cell may end in ``>`` to mark a pit-entry arrow; ``pit C 66 74 40`` places the pit lanes
beside lane C (or A) along rows 66..74 with a 40 mph limit.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

LANES = "ABC"


class TrackError(ValueError):
    """A track text that cannot be used; `problems` lists every fault found, one per line."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("track is not valid:\n" + "\n".join(f"  - {p}" for p in self.problems))


@dataclass(frozen=True, slots=True)
class Space:
    """One space: lane 0..2 (A..C), its front edge `row` and the previous front edge in its lane."""

    id: str
    lane: int
    row: int
    back_row: int
    speed: int | None = None
    corner: str | None = None
    pit_arrow: bool = False


@dataclass(frozen=True, slots=True)
class RacingLine:
    """A racing line (arrow) through a corner: +20 (red) or +40 (green) over the posted speeds."""

    id: str
    corner: str
    bonus: int
    spaces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PitLane:
    """The pit lanes (seed 003 "Pitting Procedure"): the entrance lane and the pit lane run
    beside the track on `side` (-1: beside lane A, +1: beside the highest lane) along rows
    `first`..`last`; `limit` is the pit speed limit. Entry is from the spaces marked with a
    red arrow (`>` in the text), which lie in those rows."""

    side: int
    first: int
    last: int
    limit: int

    @property
    def side_name(self) -> str:
        return "the lane A side" if self.side < 0 else "the outside (far from lane A)"


@dataclass(frozen=True)
class Track:
    name: str
    laps: int
    rows: int
    spaces: Mapping[str, Space]
    lines: Mapping[str, RacingLine]
    grey: tuple[int, ...]
    """Grey-line side per row (index row-1): the lane that wins order-of-movement ties."""
    grid: tuple[str, ...]
    source: str = field(repr=False, compare=False, default="")
    pit: PitLane | None = None
    _successors: dict[bool, dict[str, tuple[str, ...]]] = field(init=False, repr=False, compare=False)
    _cover: dict[tuple[int, int], Space] = field(init=False, repr=False, compare=False)
    _plan: TrackPlan | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        cover: dict[tuple[int, int], Space] = {}
        for s in self.spaces.values():
            for r in range(s.back_row + 1, s.row + 1):
                cover[(s.lane, r)] = s
        object.__setattr__(self, "_cover", cover)
        object.__setattr__(
            self,
            "_successors",
            {flag: _build_successors(self.spaces, self.rows, flag) for flag in (False, True)},
        )

    # -- geometry -----------------------------------------------------------------------
    def space(self, space_id: str) -> Space:
        return self.spaces[space_id]

    def moves(self, space_id: str, *, staggered: bool = False) -> tuple[str, ...]:
        """Spaces a car may enter next from `space_id`: straight first, then diagonals.

        §2.16: straight when the lane is the same and ``t.back_row == s.row``; diagonal to an
        adjacent lane when the rows align (base rule) or, with the optional lane-change rule
        (P32), when ``t.back_row <= s.row < t.row``.
        """
        return self._successors[staggered].get(space_id, ())

    def width(self, row: int) -> int:
        """How many lanes have a space covering the front edge of `row`."""
        return len({s.lane for s in self.spaces.values() if s.back_row < row <= s.row})

    def grey_lane(self, row: int) -> int:
        return self.grey[(row - 1) % self.rows]

    def corner_spaces(self, corner: str) -> tuple[Space, ...]:
        return tuple(s for s in self.spaces.values() if s.corner == corner)

    def is_last_of_corner(self, space_id: str) -> bool:
        """The last marked space of its corner in its lane (seed 003: may accelerate from it)."""
        here = self.spaces[space_id]
        if here.corner is None:
            return False
        ahead = self.straight_ahead(space_id)
        return ahead is None or self.spaces[ahead].corner != here.corner

    def straight_ahead(self, space_id: str) -> str | None:
        here = self.spaces[space_id]
        for target in self.moves(space_id):
            if self.spaces[target].lane == here.lane:
                return target
        return None

    def corners(self) -> tuple[str, ...]:
        seen: dict[str, int] = {}
        for s in self.spaces.values():
            if s.corner is not None:
                seen[s.corner] = min(seen.get(s.corner, s.row), s.row)
        return tuple(sorted(seen, key=lambda c: seen[c]))

    def covering(self, lane: int, row: int) -> Space | None:
        """The space of `lane` that covers the front edge of `row` (its own or a long one's)."""
        return self._cover.get((lane, row))

    def edge_lanes(self, row: int) -> tuple[int, int]:
        """The lowest and highest lane that exist at `row`."""
        lanes = [lane for lane in range(3) if self.covering(lane, row) is not None]
        return min(lanes), max(lanes)

    def edge_space(self, row: int, side: int) -> Space:
        """The track space at the edge of `row` on `side` (-1: lowest lane, +1: highest)."""
        low, high = self.edge_lanes(row)
        space = self.covering(low if side < 0 else high, row)
        assert space is not None
        return space

    def beside_step(self, space_id: str, side: int, *, staggered: bool = False) -> str:
        """Off the track (P22: "as if there are spaces just off the side of the track"): the
        edge space that a car beside `space_id` on `side` is beside after one more space.
        It is the move from `space_id` furthest toward that side."""
        moves = self.moves(space_id, staggered=staggered)
        return max(moves, key=lambda m: (side * self.spaces[m].lane, -moves.index(m)))

    def lines_from(self, space_id: str) -> tuple[RacingLine, ...]:
        return tuple(line for line in self.lines.values() if line.spaces[0] == space_id)


def _build_successors(spaces: Mapping[str, Space], rows: int, staggered: bool) -> dict[str, tuple[str, ...]]:
    by_lane_back: dict[tuple[int, int], Space] = {}
    by_lane: dict[int, list[Space]] = {0: [], 1: [], 2: []}
    for s in spaces.values():
        by_lane_back[(s.lane, s.back_row)] = s
        by_lane[s.lane].append(s)
    table: dict[str, tuple[str, ...]] = {}
    for s in spaces.values():
        edge = s.row % rows  # the front edge of row L is the back edge of row 1 (= 0)
        found: list[str] = []
        straight = by_lane_back.get((s.lane, edge))
        if straight is not None:
            found.append(straight.id)
        for lane in (s.lane - 1, s.lane + 1):
            if lane not in by_lane:
                continue
            if staggered:
                for t in sorted(by_lane[lane], key=lambda t: t.row):
                    if t.back_row <= edge < t.row:
                        found.append(t.id)
            else:
                aligned = by_lane_back.get((lane, edge))
                if aligned is not None:
                    found.append(aligned.id)
        table[s.id] = tuple(found)
    return table


# -- the text format -----------------------------------------------------------------------


def load_track(text: str) -> Track:
    """Parse and validate a track text; TrackError lists every problem found."""
    return _load_cached(text)


@lru_cache(maxsize=32)
def _load_cached(text: str) -> Track:
    track = _parse(text)
    problems = validate(track)
    if problems:
        raise TrackError(problems)
    return track


def _parse(text: str) -> Track:
    problems: list[str] = []
    name, laps, row_cells, line_defs, grid, pit = _read_lines(text, problems)
    if not name:
        problems.append("the track has no 'name'")
    rows = len(row_cells)
    if rows < 8:
        problems.append(f"a track needs at least 8 rows, this one has {rows}")
    spaces, grey = _spaces(row_cells, problems)
    lines = _racing_lines(line_defs, problems)
    if not grid:
        problems.append("the track has no 'grid'")
    if problems:
        raise TrackError(problems)
    return Track(name, laps, rows, spaces, lines, tuple(grey), tuple(grid), text, pit)


_Rows = list[tuple[int, list[str], dict[str, str]]]  # (row number, its three cells, its notes)


def _read_lines(
    text: str, problems: list[str]
) -> tuple[str, int, _Rows, list[tuple[int, list[str]]], list[str], PitLane | None]:
    """The track file's lines, each read for what it says: (name, laps, the rows' cells and
    notes, the racing lines' words by line number, the grid, the pit lane); what cannot be read
    is added to `problems`."""
    name = ""
    laps = 3
    row_cells: _Rows = []
    line_defs: list[tuple[int, list[str]]] = []
    grid: list[str] = []
    pit: PitLane | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        head = words[0].lower()
        if head == "name":
            name = " ".join(words[1:])
        elif head == "laps":
            if len(words) != 2 or not words[1].isdigit() or not 1 <= int(words[1]) <= 10:
                problems.append(f"line {number}: 'laps' needs a number 1..10")
            else:
                laps = int(words[1])
        elif head == "line":
            line_defs.append((number, words[1:]))
        elif head == "grid":
            grid = [w.upper() for w in words[1:]]
        elif head == "pit":
            args = [w.upper() for w in words[1:]]
            if len(args) != 4 or args[0] not in ("A", "C") or not all(a.isdigit() for a in args[1:]):
                problems.append(f"line {number}: 'pit SIDE FIRST LAST LIMIT' (SIDE A or C, e.g. pit C 66 74 40)")
            else:
                pit = PitLane(-1 if args[0] == "A" else 1, int(args[1]), int(args[2]), int(args[3]))
        elif words[0].isdigit():
            if len(words) < 4:
                problems.append(f"line {number}: a row needs its number and three cells (A B C)")
                continue
            notes: dict[str, str] = {}
            for note in words[4:]:
                key, sep, value = note.partition("=")
                if not sep or key.lower() not in ("corner", "grey"):
                    problems.append(f"line {number}: unknown note {note!r} (use corner=ID or grey=A|B|C)")
                    continue
                notes[key.lower()] = value
            row_cells.append((int(words[0]), [w for w in words[1:4]], notes))
            if int(words[0]) != len(row_cells):
                problems.append(f"line {number}: row {words[0]} out of sequence (expected {len(row_cells)})")
        else:
            problems.append(
                f"line {number}: cannot read {words[0]!r} (expected name, laps, a row number, line or grid)"
            )
    return name, laps, row_cells, line_defs, grid, pit


def _spaces(row_cells: _Rows, problems: list[str]) -> tuple[dict[str, Space], list[int]]:
    """The spaces the rows' cells draw (a space runs from its back edge to its front edge, '|'
    continues it), and each row's grey lane; what does not make a space is added to `problems`."""
    rows = len(row_cells)
    spaces: dict[str, Space] = {}
    grey: list[int] = []
    current_grey = 0
    last_front: dict[int, int] = {}  # lane -> last front edge seen while the lane exists
    for row, cells, notes in row_cells:
        corner = notes.get("corner")
        if "grey" in notes:
            g = notes["grey"].upper()
            if g not in LANES:
                problems.append(f"row {row}: grey={notes['grey']} is not a lane (A, B or C)")
            else:
                current_grey = LANES.index(g)
        grey.append(current_grey)
        for lane, cell in enumerate(cells):
            arrow = cell.endswith(">")
            body = cell[:-1] if arrow else cell
            if body == "x":
                if lane in last_front and last_front[lane] != row - 1:
                    problems.append(
                        f"row {row} lane {LANES[lane]}: the lane ends inside a space ('|' above must end with a front edge)"
                    )
                last_front.pop(lane, None)
                continue
            if body == "|":
                if lane not in last_front:
                    problems.append(f"row {row} lane {LANES[lane]}: '|' continues a space but the lane has none above")
                    last_front[lane] = row - 1
                if row == rows:
                    problems.append(
                        f"row {row} lane {LANES[lane]}: every lane needs a front edge at the finish line (last row)"
                    )
                continue
            speed: int | None = None
            if body != ".":
                if not body.isdigit() or int(body) % 20 or not 20 <= int(body) <= 300:
                    problems.append(
                        f"row {row} lane {LANES[lane]}: {cell!r} is not '.', '|', 'x' or a posted speed (a multiple of 20)"
                    )
                    continue
                speed = int(body)
                if corner is None:
                    problems.append(f"row {row} lane {LANES[lane]}: a posted speed needs the row's corner=ID")
            back = last_front.get(lane, row - 1)
            space_id = f"{LANES[lane]}{row}"
            spaces[space_id] = Space(space_id, lane, row, back, speed, corner if speed is not None else None, arrow)
            last_front[lane] = row
    return spaces, grey


def _racing_lines(line_defs: list[tuple[int, list[str]]], problems: list[str]) -> dict[str, RacingLine]:
    """The racing lines (``line ID CORNER +20|+40 SPACE SPACE ...``); what is wrong with one is
    added to `problems`."""
    lines: dict[str, RacingLine] = {}
    for number, words in line_defs:
        if len(words) < 4:
            problems.append(f"line {number}: 'line ID CORNER +20|+40 SPACE SPACE ...' needs at least two spaces")
            continue
        lid, corner_id, bonus_text, *ids = words
        if bonus_text not in ("+20", "+40"):
            problems.append(f"line {number}: the bonus must be +20 (red) or +40 (green), not {bonus_text!r}")
            continue
        if lid in lines:
            problems.append(f"line {number}: racing line {lid} is defined twice")
        lines[lid] = RacingLine(lid, corner_id, int(bonus_text), tuple(i.upper() for i in ids))
    return lines


def validate(track: Track) -> list[str]:
    """Every fault of a parsed track, each a sentence a GM can act on (empty when valid)."""
    problems: list[str] = []
    spaces = track.spaces
    for s in spaces.values():
        if not track.moves(s.id):
            problems.append(f"{s.id}: a car there could not move on (no space straight or diagonally ahead)")
    corner_rows: dict[str, list[int]] = {}
    for s in spaces.values():
        if s.corner is not None:
            corner_rows.setdefault(s.corner, []).append(s.row)
    for corner, rows in corner_rows.items():
        wanted = set(range(min(rows), max(rows) + 1))
        missing = sorted(wanted - {r for r in rows} - _continued_rows(track, corner))
        if missing:
            problems.append(f"corner {corner}: its rows are not contiguous (gap at row {missing[0]})")
    for line in track.lines.values():
        if line.corner not in corner_rows:
            problems.append(f"line {line.id}: names corner {line.corner}, which has no posted spaces")
        unknown = [i for i in line.spaces if i not in spaces]
        if unknown:
            problems.append(f"line {line.id}: no such space {unknown[0]}")
            continue
        for a, b in zip(line.spaces, line.spaces[1:], strict=False):
            if b not in track.moves(a):
                problems.append(f"line {line.id}: {a} -> {b} is not a legal move (straight or diagonal forward)")
        if not any(spaces[i].corner == line.corner for i in line.spaces):
            problems.append(f"line {line.id}: runs over no space of corner {line.corner}")
    if len(set(track.grid)) != len(track.grid):
        problems.append("grid: a space is listed twice")
    for g in track.grid:
        if g not in spaces:
            problems.append(f"grid: no such space {g}")
        elif spaces[g].speed is not None:
            problems.append(f"grid: {g} is a corner space")
    if len(track.grid) < 2:
        problems.append("grid: needs at least two spaces")
    arrows = sorted({s.row for s in spaces.values() if s.pit_arrow})
    pit = track.pit
    if pit is None:
        if arrows:
            problems.append(f"row {arrows[0]}: a pit-entry arrow but the track has no 'pit' statement")
    else:
        if not 1 <= pit.first <= pit.last <= track.rows:
            problems.append(f"pit: rows {pit.first}..{pit.last} are not rows of the track (1..{track.rows})")
        if pit.limit <= 0 or pit.limit % 20:
            problems.append(f"pit: the speed limit {pit.limit} is not a positive multiple of 20")
        if not arrows:
            problems.append("pit: no space is marked with a pit-entry arrow ('>')")
        for row in arrows:
            if not pit.first <= row <= pit.last:
                problems.append(f"row {row}: a pit-entry arrow outside the pit rows {pit.first}..{pit.last}")
            unmarked = [s.id for s in spaces.values() if s.row == row and not s.pit_arrow]
            if unmarked:
                problems.append(
                    f"row {row}: every space across an arrow row is marked (seed 003); {unmarked[0]} is not"
                )
        for row in range(max(1, pit.first), min(track.rows, pit.last) + 1):
            edge = track.edge_space(row, pit.side) if any(track.covering(lane, row) for lane in range(3)) else None
            if edge is None or edge.row != row:
                problems.append(
                    f"row {row}: the pit rows need a space with its front edge on this row beside the pit lane"
                )
                break
    if not problems and track.grid:
        seen = _reachable(track, track.grid[0])
        unreachable = sorted(set(spaces) - seen, key=lambda i: (spaces[i].row, i))
        if unreachable:
            problems.append(
                f"{unreachable[0]}: cannot be reached from the grid ({len(unreachable)} spaces unreachable)"
            )
    return problems


def _continued_rows(track: Track, corner: str) -> set[int]:
    covered: set[int] = set()
    for s in track.spaces.values():
        if s.corner == corner:
            covered.update(range(s.back_row + 1, s.row + 1))
    return covered


def _reachable(track: Track, start: str) -> set[str]:
    seen = {start}
    todo = deque([start])
    while todo:
        here = todo.popleft()
        for nxt in track.moves(here):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def bundled_tracks() -> tuple[str, ...]:
    """Names of the tracks shipped with the game (file stems under `tracks/`)."""
    folder = resources.files("rules.speed_circuit") / "tracks"
    return tuple(sorted(p.name[: -len(".track")] for p in folder.iterdir() if p.name.endswith(".track")))


def bundled_track_text(name: str) -> str:
    path = resources.files("rules.speed_circuit") / "tracks" / f"{name}.track"
    return path.read_text(encoding="utf-8")


# -- renderings ----------------------------------------------------------------------------


def render_text(
    track: Track, cars: Mapping[str, str], *, rows: Iterable[int] | None = None, notes: Mapping[int, str] | None = None
) -> str:
    """The track as text, one row a line, cars by name (first 6 letters) in their spaces.

    `cars` maps a space id to the label to show there; `notes` adds text to a row's line
    (cars off the track or in the pits beside it). Rows default to the whole lap.
    """
    wanted = list(rows) if rows is not None else list(range(1, track.rows + 1))
    at: dict[tuple[int, int], Space] = {(s.lane, s.row): s for s in track.spaces.values()}
    covering: dict[tuple[int, int], Space] = {}
    for s in track.spaces.values():
        for r in range(s.back_row + 1, s.row + 1):
            covering[(s.lane, r)] = s
    out = [f"{'row':>4}  {'A':<7} {'B':<7} {'C':<7}"]
    for r in wanted:
        cells = []
        for lane in range(3):
            cell = at.get((lane, r))
            if cell is not None:
                label = cars.get(cell.id)
                if label is not None:
                    cells.append(f"[{label[:5]}]")
                elif cell.speed is not None:
                    cells.append(str(cell.speed))
                else:
                    cells.append(".")
            elif (lane, r) in covering:
                cells.append(":")
            else:
                cells.append("")
        note = []
        corner = next((s.corner for (lane, rr), s in at.items() if rr == r and s.corner), None)
        if corner:
            note.append(corner)
        if track.pit is not None and track.pit.first <= r <= track.pit.last:
            note.append("pit>" if any(s.pit_arrow for (lane, rr), s in at.items() if rr == r) else "pit")
        if r == track.rows:
            note.append("== finish line ==")
        if notes and r in notes:
            note.append(notes[r])
        out.append(f"{r:>4}  {cells[0]:<7} {cells[1]:<7} {cells[2]:<7} {' '.join(note)}".rstrip())
    return "\n".join(out)


def render_svg(track: Track, cars: Mapping[str, str]) -> str:
    """A picture of the track as an SVG ring (`plan_track`): rows run clockwise, lane A innermost."""
    plan = plan_track(track)
    size = plan.size
    centre = size / 2
    by_id = {s.id: s for s in plan.spaces}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
        f"<title>{_escape(track.name)}</title>",
        f'<rect width="{size}" height="{size}" fill="#3a6b35"/>',
    ]
    for s in plan.spaces:
        fill = "#f2c14e" if s.speed is not None else "#777777"
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in s.outline)
        parts.append(
            f'<polygon points="{path}" fill="{fill}" stroke="#222" stroke-width="0.6"><title>{s.id}</title></polygon>'
        )
        if s.speed is not None and s.id not in cars:
            x, y = s.mid
            parts.append(
                f'<text x="{x:.1f}" y="{y:.1f}" font-size="8" text-anchor="middle" dominant-baseline="middle">{s.speed}</text>'
            )
    for line in plan.lines:
        colour = "#2e9e2e" if line.bonus == 40 else "#d62828"
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in line.points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
    (x0, y0), (x1, y1) = plan.finish
    parts.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="white" stroke-width="3"/>')
    # cars are numbered in the picture (labels may share their first letters); a legend names them
    for number, (sid, label) in enumerate(sorted(cars.items(), key=lambda item: item[1]), start=1):
        x, y = by_id[sid].mid
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="#1d3557" stroke="white"><title>{_escape(label)}</title></circle>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="9" fill="white" text-anchor="middle" dominant-baseline="middle">{number}</text>'
        )
        parts.append(
            f'<text x="10" y="{18 + 14 * number}" font-size="12" fill="white">{number} {_escape(label)} ({sid})</text>'
        )
    parts.append(
        f'<text x="{centre}" y="{centre}" font-size="18" text-anchor="middle" fill="white">{_escape(track.name)}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


# -- the plan: the track as coordinates ----------------------------------------------------

Point = tuple[float, float]
"""x right, y down, in the units of a `TrackPlan` (its drawing is `size` x `size`)."""

PLAN_SIZE = 600
PLAN_INNER = 150.0
"""The radius of lane A's inner edge."""
PLAN_LANE_WIDTH = 34.0


@dataclass(frozen=True, slots=True)
class SpacePlan:
    """One space of the track as drawn: where it is in the race (lane 0..2 for A..C, the row
    of its front edge and of its back edge, 0 before row 1), what it posts, its outline
    (back-inner, front-inner, front-outer, back-outer corner) and `mid`, the middle of its
    lane halfway along it, where its posted speed, a racing line and a car are drawn."""

    id: str
    lane: int
    row: int
    back_row: int
    speed: int | None
    corner: str | None
    pit_arrow: bool
    outline: tuple[Point, ...]
    mid: Point


@dataclass(frozen=True, slots=True)
class LinePlan:
    """A racing line as drawn: the `mid` of each of its spaces, in order."""

    id: str
    corner: str
    bonus: int
    points: tuple[Point, ...]


@dataclass(frozen=True, slots=True)
class PitPlan:
    """The pit lanes beside the track (`side` -1: beside lane A, +1: beside the far edge) along
    rows `first`..`last`, with their speed limit, and the outline of the strip they run in."""

    side: int
    first: int
    last: int
    limit: int
    outline: tuple[Point, ...]


@dataclass(frozen=True, slots=True)
class TrackPlan:
    """The track as coordinates: a ring of `rows` rows running clockwise from the top, lane A
    innermost, in a `size` x `size` drawing centred on `centre`. Spaces by row, then lane;
    `finish` the start/finish line (the front edge of the last row), inside to outside.
    Coordinates are rounded to a tenth (as the SVG prints them)."""

    name: str
    rows: int
    size: int
    centre: Point
    spaces: tuple[SpacePlan, ...]
    lines: tuple[LinePlan, ...]
    finish: tuple[Point, Point]
    pit: PitPlan | None
    grid: tuple[str, ...]
    corners: tuple[str, ...]
    """Corner ids in the order the race meets them."""

    def space(self, space_id: str) -> SpacePlan:
        for s in self.spaces:
            if s.id == space_id:
                return s
        raise KeyError(space_id)


def plan_track(track: Track) -> TrackPlan:
    """The coordinates of `track` (computed once per track: it never changes)."""
    if track._plan is None:
        object.__setattr__(track, "_plan", _plan(track))
    assert track._plan is not None
    return track._plan


def _plan(track: Track) -> TrackPlan:
    size = PLAN_SIZE
    centre = size / 2
    inner, width = PLAN_INNER, PLAN_LANE_WIDTH

    def point(row: float, radius: float) -> Point:
        angle = 2 * math.pi * row / track.rows - math.pi / 2
        return round(centre + radius * math.cos(angle), 1), round(centre + radius * math.sin(angle), 1)

    spaces = []
    mids: dict[str, Point] = {}
    for s in sorted(track.spaces.values(), key=lambda s: (s.row, s.lane)):
        r0 = inner + s.lane * width
        r1 = r0 + width
        back = s.back_row if s.back_row else 0
        mid = point((back + s.row) / 2, r0 + width / 2)
        mids[s.id] = mid
        outline = (point(back, r0), point(s.row, r0), point(s.row, r1), point(back, r1))
        spaces.append(SpacePlan(s.id, s.lane, s.row, s.back_row, s.speed, s.corner, s.pit_arrow, outline, mid))
    lines = tuple(
        LinePlan(line.id, line.corner, line.bonus, tuple(mids[sid] for sid in line.spaces))
        for line in track.lines.values()
    )
    finish = (point(track.rows, inner - 4), point(track.rows, inner + 3 * width + 4))
    pit: PitPlan | None = None
    if track.pit is not None:
        near = inner - width if track.pit.side < 0 else inner + 3 * width
        rows = range(track.pit.first - 1, track.pit.last + 1)
        strip = tuple(point(r, near) for r in rows) + tuple(point(r, near + width) for r in reversed(rows))
        pit = PitPlan(track.pit.side, track.pit.first, track.pit.last, track.pit.limit, strip)
    return TrackPlan(
        name=track.name,
        rows=track.rows,
        size=size,
        centre=(centre, centre),
        spaces=tuple(spaces),
        lines=lines,
        finish=finish,
        pit=pit,
        grid=track.grid,
        corners=track.corners(),
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
