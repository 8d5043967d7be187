"""Orders by mail (speed-circuit.md §8): the set-up orders and the race plot.

Syntax (context-free) is checked by `parse_line`; legality against the state by
`check_order`. A race plot is one mail: SPEED is required, every other line optional.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rules.api import IllegalOrderError, InvalidOrderError
from rules.speed_circuit.car import DESIGN_FIELDS, Car, Design, Tyre
from rules.speed_circuit.track import LANES, Track


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
    DesignOrder | TyresOrder | BidOrder | SpeedOrder | PathOrder | PayOrder | SkillOrder | PushOrder | SlipOrder | PassOrder | PitOrder
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


# -- syntax --------------------------------------------------------------------------------


def _yes_no(word: str, line: str) -> bool:
    if word in ("YES", "Y", "ON"):
        return True
    if word in ("NO", "N", "OFF"):
        return False
    raise InvalidOrderError(f"{line.split()[0].upper()} takes YES or NO, not {word!r}")


def _lane(word: str) -> int:
    if len(word) != 1 or word not in LANES:
        raise InvalidOrderError(f"{word!r} is not a lane; lanes are A, B and C")
    return LANES.index(word)


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise InvalidOrderError(f"{what} must be a whole number, not {word!r}") from None


def parse_line(line: str) -> Order:
    """One order line, syntax only (raises InvalidOrderError)."""
    words = line.split("#", 1)[0].upper().replace("=", " ").replace(",", " ").split()
    if not words:
        raise InvalidOrderError("empty line")
    head, args = words[0], words[1:]
    if head == "SPEED":
        if len(args) == 2 and args[1] == "MPH":
            args = args[:1]
        if len(args) != 1:
            raise InvalidOrderError("SPEED takes one value: a speed in mph (a multiple of 20) or MPS")
        if args[0] == "MPS":
            return SpeedOrder(None)
        mph = _int(args[0].removesuffix("MPH"), "SPEED")
        if mph < 0 or mph % 20:
            raise InvalidOrderError(f"SPEED {mph}: speeds are 0 or more, in steps of 20 mph")
        return SpeedOrder(mph)
    if head == "MPS" and not args:
        return SpeedOrder(None)
    if head == "PATH":
        if not args:
            raise InvalidOrderError("PATH needs the lane of each space entered, e.g. PATH B B A A")
        lanes = [c for word in args for c in word]
        return PathOrder(PathKind.LANES, tuple(_lane(c) for c in lanes))
    if head == "LANE":
        if len(args) != 1:
            raise InvalidOrderError("LANE takes one lane: A, B or C")
        return PathOrder(PathKind.LANE, (_lane(args[0]),))
    if head == "LINE":
        if args:
            raise InvalidOrderError("LINE takes nothing (follow the racing lines)")
        return PathOrder(PathKind.LINE)
    if head == "PAY":
        if args not in (["WEAR"], ["ROLL"]):
            raise InvalidOrderError("PAY takes WEAR (use wear where a chart allows it) or ROLL")
        return PayOrder(args[0] == "WEAR")
    if head == "SKILL":
        names: set[SkillTable] = set()
        for word in args:
            if word in ("NONE", "NO"):
                continue
            if word == "ALL":
                names.update(SkillTable)
                continue
            if word == "TESTS":
                names.update((SkillTable.ACCEL, SkillTable.TOP, SkillTable.START, SkillTable.BRAKES))
                continue
            try:
                names.add(SkillTable(word.removesuffix("S") if word == "BRAKE" else word))
            except ValueError:
                known = " ".join(t.value for t in SkillTable)
                raise InvalidOrderError(f"SKILL: unknown table {word!r}; tables: {known}, ALL, TESTS, NONE") from None
        return SkillOrder(tuple(t for t in SKILL_ORDER if t in names))
    if head == "PUSH":
        if len(args) != 1:
            raise InvalidOrderError("PUSH takes YES or NO")
        return PushOrder(_yes_no(args[0], line))
    if head == "SLIP":
        if len(args) != 1 or args[0] not in ("0", "1", "2"):
            raise InvalidOrderError("SLIP takes 0, 1 or 2 (spaces of slipstream to take)")
        return SlipOrder(int(args[0]))
    if head == "PASS":
        if len(args) != 1:
            raise InvalidOrderError("PASS takes YES or NO")
        return PassOrder(_yes_no(args[0], line))
    if head == "PIT":
        if len(args) != 1 or args[0] not in ("PRIME", "OPTION"):
            raise InvalidOrderError("PIT takes the tyres to fit: PRIME or OPTION")
        return PitOrder(Tyre(args[0]))
    if head == "DESIGN":
        if len(args) % 2:
            raise InvalidOrderError("DESIGN takes pairs, e.g. DESIGN ACC 1 DEC 0 TOP 1 START 0 PRIME 0 OPTION 0 SKILL 0")
        levels = dict.fromkeys(DESIGN_FIELDS, 0)
        aliases = {"ACCEL": "ACC", "DECEL": "DEC", "SS": "START", "TS": "TOP"}
        for name, value in zip(args[::2], args[1::2], strict=True):
            key = aliases.get(name, name)
            if key not in levels:
                raise InvalidOrderError(f"DESIGN: unknown row {name!r}; rows: {' '.join(DESIGN_FIELDS)}")
            levels[key] = _int(value.replace("+", ""), f"DESIGN {key}")
        return DesignOrder(Design(*(levels[f] for f in DESIGN_FIELDS)))
    if head in ("TYRES", "TIRES", "TYRE", "TIRE"):
        if len(args) != 1 or args[0] not in ("PRIME", "OPTION"):
            raise InvalidOrderError("TYRES takes the starting set: PRIME or OPTION")
        return TyresOrder(Tyre(args[0]))
    if head == "BID":
        pairs = dict(zip(args[::2], args[1::2], strict=False))
        if len(args) % 2 or set(pairs) - {"WEAR", "SKILL"}:
            raise InvalidOrderError("BID takes WEAR n and/or SKILL n, e.g. BID WEAR 2 SKILL 1")
        wear = _int(pairs.get("WEAR", "0"), "BID WEAR")
        skill = _int(pairs.get("SKILL", "0"), "BID SKILL")
        if wear < 0 or skill < 0:
            raise InvalidOrderError("a bid cannot be negative")
        return BidOrder(wear, skill)
    raise InvalidOrderError(
        f"{words[0]!r} is not an order; race orders: SPEED, PATH, LANE, LINE, PAY, SKILL, PUSH, SLIP, PASS, PIT; "
        "set-up orders: DESIGN, TYRES, BID"
    )


def format_order(order: Order) -> str:
    if isinstance(order, DesignOrder):
        return f"DESIGN {order.design.text()}"
    if isinstance(order, TyresOrder):
        return f"TYRES {order.tyre.value}"
    if isinstance(order, BidOrder):
        return f"BID WEAR {order.wear} SKILL {order.skill}"
    if isinstance(order, SpeedOrder):
        return "SPEED MPS" if order.mph is None else f"SPEED {order.mph}"
    if isinstance(order, PathOrder):
        if order.kind is PathKind.LANES:
            return "PATH " + " ".join(LANES[i] for i in order.lanes)
        if order.kind is PathKind.LANE:
            return f"LANE {LANES[order.lanes[0]]}"
        if order.kind is PathKind.LINE:
            return "LINE"
        raise ValueError("keeping the lane is the default path, not an order line")
    if isinstance(order, PayOrder):
        return "PAY WEAR" if order.wear_first else "PAY ROLL"
    if isinstance(order, SkillOrder):
        return "SKILL " + (" ".join(t.value for t in order.tables) or "NONE")
    if isinstance(order, PushOrder):
        return f"PUSH {'YES' if order.allowed else 'NO'}"
    if isinstance(order, SlipOrder):
        return f"SLIP {order.spaces}"
    if isinstance(order, PassOrder):
        return f"PASS {'YES' if order.allowed else 'NO'}"
    return f"PIT {order.tyre.value}"


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
            text += f" ({self.highest} with PUSH YES and a {self.push} test)"
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
        raise IllegalOrderError(f"SPEED {speed} is above your safe limit {lim.safe} ({lim.reason}); add PUSH YES to test for it. Legal: {lim.describe()}")
    raise IllegalOrderError(f"SPEED {speed} is impossible ({lim.reason}). Legal: {lim.describe()}")


def closest_achievable(car: Car, track: Track, mph: int | None) -> int:
    """WBC plot errors: an impossible plot becomes the closest achievable speed, assuming
    the maximum use of tests (so a push where one is allowed)."""
    lim = limits(car, track)
    speed = car.speed if mph is None else mph
    return max(0, min(speed, lim.highest))
