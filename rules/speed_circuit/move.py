"""Movement: the order of movement (P6), racing-line following (P11) and path planning
around blocked spaces (§2.6, P15).

A plot says in advance what a board player decides while moving (§8). The engine turns the
plot's path policy into a *desired* path (ignoring other cars), then picks the legal path of
the plotted length that strays least from it: every space entered straight ahead or
diagonally forward, none occupied (a forced pass may move through one: §2.10). When no path of the full
length exists the car must emergency brake to the longest one that does (P15).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from rules.speed_circuit.car import Car, LineRun
from rules.speed_circuit.plot import PathKind, Plot
from rules.speed_circuit.track import Track

# -- order of movement (§2.6, P6) ----------------------------------------------------------


def movement_key(track: Track, car: Car, speed: int, seat: int) -> tuple[int, int, int, int, int, int]:
    """Sort key: front-most row first (P7: the progress index), then an off-track car last
    (it loses every tie-breaker: P6), then a car moving after a spin last in its row (P19),
    then higher speed this turn, then the grey-line side (grey, middle, far: P6), then
    seating order (only identical cars reach it)."""
    assert car.space is not None
    here = track.space(car.space)
    grey = track.grey_lane(here.row)
    return (-car.progress, 1 if car.off_track else 0, 1 if car.spun else 0, -speed, abs(here.lane - grey), seat)


def order_of_movement(
    track: Track, cars: Collection[Car], speeds: Mapping[str, int], seats: Mapping[str, int]
) -> list[str]:
    movers = [c for c in cars if c.space is not None]
    movers.sort(key=lambda c: movement_key(track, c, speeds[c.player], seats[c.player]))
    return [c.player for c in movers]


def moves_first(car: Car, other: Car) -> bool:
    """Whether `other` moves before `car` this turn whatever either of them plots: it is
    further ahead (§2.6 rule 1, "the car furthest ahead moves first"; P7: the progress index,
    so a car a lap down moves after the car lapping it). The other keys of `movement_key`
    (spun, speed, grey side) only order cars of one row, which never stand in each other's way."""
    return other.progress > car.progress


# -- racing lines (P11) --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineStep:
    """What entering a space does to the line a car follows."""

    run: LineRun | None
    left: str | None = None
    """The line the car left before its end (its bonus is recomputed away), if any."""


def step_line(track: Track, run: LineRun | None, barred: str | None, target: str) -> LineStep:
    """Follow a line space by space from its first space ([DES] §2.7); stepping off before its
    end loses the bonus; entering a line's first space starts following it."""
    left: str | None = None
    if run is not None:
        line = track.lines[run.line]
        if run.index + 1 < len(line.spaces):
            if line.spaces[run.index + 1] == target:
                return LineStep(LineRun(run.line, run.index + 1))
            left = run.line
    for line in sorted(track.lines_from(target), key=lambda ln: ln.id):
        if line.id != barred:
            return LineStep(LineRun(line.id, 0), left)
    return LineStep(None, left)


def line_bonus(track: Track, run: LineRun | None, space_id: str) -> int:
    """The bonus of the line the car follows, on a space of that line's corner."""
    if run is None:
        return 0
    line = track.lines[run.line]
    here = track.space(space_id)
    if line.spaces[run.index] == space_id and here.corner == line.corner:
        return line.bonus
    return 0


# -- the desired path ----------------------------------------------------------------------


def desired_path(track: Track, car: Car, plot: Plot, steps: int, *, staggered: bool) -> list[str]:
    """The path the plot asks for when nothing is in the way (may be shorter at a dead end)."""
    assert car.space is not None
    here = car.space
    start_lane = track.space(here).lane
    run = car.line_run
    path: list[str] = []
    for i in range(steps):
        moves = track.moves(here, staggered=staggered)
        if not moves:
            break
        chosen: str | None = None
        kind = plot.path.kind
        if kind is PathKind.LINE:
            if run is not None:
                line = track.lines[run.line]
                if run.index + 1 < len(line.spaces) and line.spaces[run.index + 1] in moves:
                    chosen = line.spaces[run.index + 1]
            if chosen is None:
                starts = [
                    ln
                    for ln in sorted(track.lines.values(), key=lambda ln: ln.id)
                    if ln.spaces[0] in moves and ln.id != car.barred_line
                ]
                if starts:
                    chosen = starts[0].spaces[0]
            target = track.space(here).lane if chosen is None else track.space(chosen).lane
            if chosen is None:
                target = _lane_of_next_line(track, here, steps - i, car.barred_line, target)
        elif kind is PathKind.LANES:
            target = plot.path.lanes[min(i, len(plot.path.lanes) - 1)]
        elif kind is PathKind.LANE:
            target = plot.path.lanes[0]
        else:
            target = start_lane
        if chosen is None:
            chosen = min(moves, key=lambda m: (abs(track.space(m).lane - target), moves.index(m)))
        run = step_line(track, run, car.barred_line, chosen).run
        path.append(chosen)
        here = chosen
    return path


def _lane_of_next_line(track: Track, here: str, reach: int, barred: str | None, default: int) -> int:
    """Steer toward the first space of the nearest racing line ahead (LINE policy)."""
    row = track.space(here).row
    best: tuple[int, int] | None = None
    for line in track.lines.values():
        if line.id == barred:
            continue
        first = track.space(line.spaces[0])
        ahead = (first.row - row) % track.rows
        if 1 <= ahead <= max(reach, 1) + 2 and (best is None or ahead < best[0]):
            best = (ahead, first.lane)
    return default if best is None else best[1]


# -- planning around other cars (P15) ------------------------------------------------------


def plan_path(
    track: Track,
    start: str,
    steps: int,
    desired: list[str],
    blocked: Callable[[str], bool],
    *,
    staggered: bool,
    passable: Callable[[str], bool] | None = None,
) -> tuple[str, ...] | None:
    """The legal path of exactly `steps` spaces closest to `desired`, or None.

    Cost per space entered: 10 per lane away from the desired space's lane, +1 for a
    different space; ties keep the first found (straight before diagonal, lane A first).
    With `passable` (a forced pass, §2.10) a blocked space that is passable may be moved
    through, never ended in, at a cost of 1000 (as few passes as possible).
    """
    if steps == 0:
        return ()
    want = [track.space(s).lane for s in desired]
    while len(want) < steps:
        want.append(want[-1] if want else track.space(start).lane)
    memo: dict[tuple[str, int], tuple[int, tuple[str, ...]] | None] = {}

    def best(here: str, i: int) -> tuple[int, tuple[str, ...]] | None:
        if i == steps:
            return 0, ()
        key = (here, i)
        if key in memo:
            return memo[key]
        found: tuple[int, tuple[str, ...]] | None = None
        for nxt in track.moves(here, staggered=staggered):
            through = 0
            if blocked(nxt):
                if passable is None or i + 1 == steps or not passable(nxt):
                    continue
                through = 1000
            rest = best(nxt, i + 1)
            if rest is None:
                continue
            cost = (
                through
                + 10 * abs(track.space(nxt).lane - want[i])
                + (0 if i < len(desired) and desired[i] == nxt else 1)
            )
            total = cost + rest[0]
            if found is None or total < found[0]:
                found = (total, (nxt, *rest[1]))
        memo[key] = found
        return found

    result = best(start, 0)
    return None if result is None else result[1]


def longest_path(
    track: Track,
    start: str,
    steps: int,
    desired: list[str],
    blocked: Callable[[str], bool],
    *,
    staggered: bool,
) -> tuple[str, ...]:
    """The plotted path if it can be used, else the longest usable one (P15); () if boxed in."""
    for n in range(steps, 0, -1):
        path = plan_path(track, start, n, desired[:n], blocked, staggered=staggered)
        if path is not None:
            return path
    return ()
