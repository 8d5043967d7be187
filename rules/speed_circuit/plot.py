"""The orders (speed-circuit.md §8) as values, the race plot they make, and what a car may
plot (speed limits, §2.5, P8, P19). The grammar that reads them from mail is `parse`.

A race plot is one mail: SPEED is required, every other line optional.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rules.api import IllegalOrderError
from rules.speed_circuit.car import Car, Design, Tyre
from rules.speed_circuit.track import Track


class PathKind(enum.Enum):
    KEEP = "KEEP"  # no path line: stay in lane
    LANES = "PATH"
    LANE = "LANE"
    LINE = "LINE"


class SkillTable(enum.Enum):
    ACCEL = "ACCEL"
    TOP = "TOP"
    START = "START"
    BRAKES = "BRAKES"
    CHANCE = "CHANCE"
    PASS = "PASS"
    CRASH = "CRASH"


SKILL_ORDER = tuple(SkillTable)


# -- the orders ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DesignOrder:
    design: Design


@dataclass(frozen=True, slots=True)
class TyresOrder:
    tyre: Tyre


@dataclass(frozen=True, slots=True)
class BidOrder:
    wear: int
    skill: int


@dataclass(frozen=True, slots=True)
class SpeedOrder:
    mph: int | None  # None: MPS, maintain present speed


@dataclass(frozen=True, slots=True)
class PathOrder:
    kind: PathKind
    lanes: tuple[int, ...] = ()  # PATH: a lane per space; LANE: the one end lane


@dataclass(frozen=True, slots=True)
class PayOrder:
    wear_first: bool


@dataclass(frozen=True, slots=True)
class SkillOrder:
    tables: tuple[SkillTable, ...]  # canonical order, no repeats


@dataclass(frozen=True, slots=True)
class PushOrder:
    allowed: bool


@dataclass(frozen=True, slots=True)
class SlipOrder:
    spaces: int


@dataclass(frozen=True, slots=True)
class PassOrder:
    allowed: bool


@dataclass(frozen=True, slots=True)
class PitOrder:
    tyre: Tyre


Order = (
    DesignOrder
    | TyresOrder
    | BidOrder
    | SpeedOrder
    | PathOrder
    | PayOrder
    | SkillOrder
    | PushOrder
    | SlipOrder
    | PassOrder
    | PitOrder
)
SETUP_DESIGN = (DesignOrder, TyresOrder)
SETUP_QUALIFYING = (BidOrder,)
RACE_ORDERS = (SpeedOrder, PathOrder, PayOrder, SkillOrder, PushOrder, SlipOrder, PassOrder, PitOrder)


@dataclass(frozen=True, slots=True)
class Plot:
    """A race plot with every default filled in (§8, Redscape defaults [SRC 18])."""

    speed: int | None = None
    """None: no SPEED line (defaulted) or MPS (`mps`)."""
    mps: bool = False
    path: PathOrder = PathOrder(PathKind.KEEP)
    wear_first: bool = True
    skill: tuple[SkillTable, ...] = ()
    push: bool = False
    slip: int = 0
    force_pass: bool = False
    pit: Tyre | None = None


def plot_of(orders: Sequence[Order]) -> Plot:
    """The plot a set of race orders makes, every line left out at its default."""
    fields: dict[str, Any] = {}
    for order in orders:
        if isinstance(order, SpeedOrder):
            fields["speed"] = order.mph
            fields["mps"] = order.mph is None
        elif isinstance(order, PathOrder):
            fields["path"] = order
        elif isinstance(order, PayOrder):
            fields["wear_first"] = order.wear_first
        elif isinstance(order, SkillOrder):
            fields["skill"] = order.tables
        elif isinstance(order, PushOrder):
            fields["push"] = order.allowed
        elif isinstance(order, SlipOrder):
            fields["slip"] = order.spaces
        elif isinstance(order, PassOrder):
            fields["force_pass"] = order.allowed
        elif isinstance(order, PitOrder):
            fields["pit"] = order.tyre
    return Plot(**fields)


# -- speed limits (§2.5, P8, P19) ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    """What a car may plot this turn.

    `safe` is the highest speed needing no test; `push` the test that allows `safe + 20`
    (None when no push is allowed: corner ban, after a spin); `free_low` the lowest speed
    needing no deceleration chart. Any multiple of 20 from 0 to the top is legal.
    """

    base: int
    safe: int
    push: str | None
    free_low: int
    reason: str

    @property
    def highest(self) -> int:
        return self.safe + 20 if self.push else self.safe

    def describe(self) -> str:
        text = f"0..{self.safe} mph"
        if self.push:
            article = "an" if self.push[0] in "aeiou" else "a"
            text += f" ({self.highest} with PUSH YES and {article} {self.push} test)"
        if self.free_low > 0:
            text += f"; below {self.free_low} costs the deceleration chart"
        return text


def limits(car: Car, track: Track) -> Limits:
    lim = _limits(car, track)
    if car.pit is not None and track.pit is not None:
        # P28 / seed "Speed Limit": in the pits a car slows to the pit limit by the usual
        # means; a car slower than the limit may accelerate up to it, as usual
        cap = track.pit.limit
        if lim.base > cap:
            return Limits(lim.base, cap, None, lim.free_low, f"in the pits: down to the pit limit {cap}")
        return Limits(lim.base, min(lim.safe, cap), None, lim.free_low, f"in the pits: at most the pit limit {cap}")
    if car.off_track and car.space is not None:
        # P22: off track a car may not exceed its acceleration, its top speed, or the posted
        # speed of the spaces next to it, and may not use wear or tables to do so
        cap = lim.safe
        while cap > 0 and not _beside_ok(track, car.space, car.off_track, cap):
            cap -= 20
        return Limits(lim.base, cap, None, lim.free_low, "off track: no push, no faster than the spaces beside")
    return lim


def _beside_ok(track: Track, space: str, side: int, speed: int) -> bool:
    here = space
    for _ in range(speed // 20):
        here = track.beside_step(here, side)
        posted = track.space(here).speed
        if posted is not None and speed > posted:
            return False
    return True


def _limits(car: Car, track: Track) -> Limits:
    base = car.speed
    free_low = max(0, base - car.dec)
    push: str | None
    if car.spun:
        # P19: the turn after a spin, min(start, accel), no pushing
        cap = min(car.start, car.acc, car.top)
        return Limits(base, cap, None, free_low, "after a spin: min(start speed, acceleration), no tests")
    if base == 0:
        safe, push, reason = min(car.start, car.top), "start speed", "from a standstill: start speed"
        if car.start >= car.top:
            push = "top speed"
    else:
        by_acc = base + car.acc
        if by_acc >= car.top:
            safe, push, reason = car.top, "top speed", "top speed"
        else:
            safe, push, reason = by_acc, "acceleration", "acceleration"
    if base > car.top:
        safe, push = car.top, None
    if car.space is not None and base > 0:
        # [DES] from a standstill the ban does not apply, or a car stopped in a corner could never leave
        here = track.space(car.space)
        if here.corner is not None and not track.is_last_of_corner(car.space):
            # P8: no acceleration once a corner has been entered, except from the last
            # marked space (per lane) or into a higher limit of a changing-radius corner
            ahead = track.straight_ahead(car.space)
            rise = 0
            if ahead is not None and here.speed is not None:
                nxt = track.space(ahead)
                if nxt.corner == here.corner and nxt.speed is not None and nxt.speed > here.speed:
                    rise = nxt.speed - here.speed
            if safe >= base + rise or push is not None:
                safe = min(safe, base + rise)
                push = None
                reason = "in a corner: no acceleration" + (f" beyond the rising limit (+{rise})" if rise else "")
    return Limits(base, safe, push, free_low, reason)


def check_speed(car: Car, track: Track, mph: int | None, push: bool) -> int:
    """The speed a plot asks for, or IllegalOrderError with the legal range."""
    lim = limits(car, track)
    speed = car.speed if mph is None else mph
    if speed <= lim.safe:
        return speed
    if lim.push and speed == lim.highest:
        if push:
            return speed
        raise IllegalOrderError(
            f"SPEED {speed} is above your safe limit {lim.safe} ({lim.reason}); add PUSH YES to test for it. Legal: {lim.describe()}"
        )
    raise IllegalOrderError(f"SPEED {speed} is impossible ({lim.reason}). Legal: {lim.describe()}")


def closest_achievable(car: Car, track: Track, mph: int | None, *, push: bool = True) -> int:
    """WBC plot errors: an impossible plot becomes the closest achievable speed, assuming
    the maximum use of tests (so a push where one is allowed); `push=False` for a plot that
    says PUSH NO, which keeps to the safe range."""
    lim = limits(car, track)
    speed = car.speed if mph is None else mph
    return max(0, min(speed, lim.highest if push else lim.safe))
