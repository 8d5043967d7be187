"""Cornering (§2.7): speed is checked on entering each space with a posted speed; the
cornering chart is paid once per corner for the worst excess and topped up when the limit
drops (P9, P10); a racing line adds its bonus while the car follows it (P11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rules.speed_circuit.car import Car, CornerRun
from rules.speed_circuit.move import line_bonus, step_line
from rules.speed_circuit.tables import tier
from rules.speed_circuit.track import Track


@dataclass(frozen=True, slots=True)
class CornerEntry:
    """What entering one space asks for: the corner run after entry and the chart row due."""

    run: CornerRun | None
    due: int
    """The cornering chart row the corner now needs (0: nothing); pay `due` if above `run.tier`."""
    excess: int


def enter_space(
    track: Track, run: CornerRun | None, space_id: str, speed: int, bonus: int, left_line: bool
) -> CornerEntry:
    here = track.space(space_id)
    if here.corner is None or here.speed is None:
        return CornerEntry(None, 0, 0)
    if run is None or run.corner != here.corner:
        run = CornerRun(here.corner)  # P9: a new corner id starts a new payment
    raw = speed - here.speed
    run = replace(run, worst_raw=max(run.worst_raw, raw))
    due = tier(raw - bonus)
    if left_line:
        # P11: leaving the line recomputes the corner without the bonus
        due = max(due, tier(run.worst_raw))
    return CornerEntry(run, due, raw - bonus)


def coast(track: Track, car: Car, path: Sequence[str], speed: int) -> Car | None:
    """The car after running `path` at `speed` if that calls for no cornering chart, else
    None (the safe plot, §8). Position, line and corner records only; no lap bookkeeping."""
    run = car.corner_run
    line = car.line_run
    barred = car.barred_line
    for space_id in path:
        step = step_line(track, line, barred, space_id)
        left = step.left is not None and run is not None and track.lines[step.left].corner == run.corner
        line = step.run
        entry = enter_space(track, run, space_id, speed, line_bonus(track, line, space_id), left)
        if entry.run is not None and entry.due > entry.run.tier:
            return None
        run = entry.run
        if run is None:
            barred = None
    space = path[-1] if path else car.space
    return replace(car, space=space, speed=speed, corner_run=run, line_run=line, barred_line=barred, spun=False)


def path_needs_payment(track: Track, car: Car, path: Sequence[str], speed: int) -> bool:
    """Whether running `path` at `speed` would call for the cornering chart."""
    return coast(track, car, path, speed) is None
