"""Where a car can get this turn ("your own options, drawn"): every legal speed, the
spaces the car can end its move in at that speed, and what each costs: free, wear, a test or
a roll, or a spin or crash for certain.

`plot_options(state, player)` is pure and walks the rules the resolver applies to a plot
`SPEED s` + `PATH <lanes>` with the defaults of §8 (`PAY WEAR`, no `SKILL`, no `SLIP`, no
`PASS`), in the order `resolve.RaceTurn.move` applies them:

1. a push above the safe limit is a test (§2.5; 1 wear instead on option tyres where P12
   allows it);
2. braking beyond the free deceleration is the deceleration chart (§2.8, seed "Deceleration
   Chart"), paid wear first; a brakes test is a roll (1 wear instead on option tyres, P12);
   80 mph or more over spins the car after its move;
3. every space with a posted speed entered is checked (§2.7, P9-P11): the cornering chart is
   paid once per corner for the worst excess, a racing line followed from its first space
   gives its bonus, 80 or more over crashes the car off course (P10); wear the car does not
   have spins it (P13, seed "Wear Penalties").

Other cars (§8, NOTES.md "Cars in the way"): a car that moves after this one (behind it) is
still in its space when this car moves, so no path enters it; a car that moves first is
treated as gone, as the safe plot does, because where it goes is secret until the reveal.
The engine steers round wherever it did go, so an option is exact only where the cars ahead
stay out of its way: the results say so when they do not.

The chance and test outcomes are not foreseen: "test or roll" means a 2d6 roll decides.
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from rules.speed_circuit.car import Car, CornerRun, LineRun, PitStage, Status, Tyre
from rules.speed_circuit.corner import enter_space
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.move import desired_path, line_bonus, moves_first, step_line
from rules.speed_circuit.plot import Limits, Order, limits, plot_of
from rules.speed_circuit.resolve import STOPPED_TURNS
from rules.speed_circuit.tables import (
    CORNER_CRASH_TIER,
    CORNERING_CHART,
    DECELERATION_CHART,
    DECELERATION_SPIN_TIER,
    Penalty,
    tier,
)
from rules.speed_circuit.track import LANES, Track

EXCERPT_ROWS = 24
"""The most rows an excerpt of the track ahead shows (text and picture)."""


class Cost(enum.Enum):
    """What a plot costs, worst first wins: free < wear < a test or roll < a spin < a crash."""

    FREE = "free"
    WEAR = "wear"
    ROLL = "test or roll"
    SPIN = "spin"
    CRASH = "crash"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    @property
    def mark(self) -> str:
        """The one-character mark of the text map: none for free."""
        return _MARKS[self]


_RANKS = {cost: index for index, cost in enumerate(Cost)}
_MARKS = {Cost.FREE: "", Cost.WEAR: "w", Cost.ROLL: "r", Cost.SPIN: "!", Cost.CRASH: "X"}


@dataclass(frozen=True, slots=True)
class Reach:
    """One space the car can end its move in at `speed`, by the cheapest path there (`path`:
    the spaces entered, so `lanes` is what `PATH` would say), and what that plot costs:
    `wear` used, the tests and tables rolled on (`rolls`), and why (`charges`). `retires`:
    the plot leaves the car where it stands for its `STOPPED_TURNS`th race turn in a row, so
    the car retires after its move (NOTES.md, "Stopped cars"), whatever else it costs."""

    speed: int
    space: str
    path: tuple[str, ...]
    cost: Cost
    wear: int
    rolls: tuple[str, ...]
    charges: tuple[str, ...]
    retires: bool = False

    @property
    def lanes(self) -> str:
        """The lane of each space entered, as PATH takes them (``BBAA``)."""
        return "".join(space[0] for space in self.path)

    def describe(self) -> str:
        """What the plot costs, short: ``free``, ``1 wear``, ``2 wear + chance table (T1)``,
        ``spins``, ``crashes``; a plot that retires the car says so after its cost
        (``free, then retires (5th turn in a row without moving)``)."""
        if self.cost is Cost.CRASH:
            return "crashes"
        if self.cost is Cost.SPIN:
            text = "spins"
        else:
            parts = [f"{self.wear} wear"] if self.wear else []
            parts.extend(self.rolls)
            text = " + ".join(parts) or "free"
        if self.retires:
            text += f", then retires ({STOPPED_TURNS}th turn in a row without moving)"
        return text


@dataclass(frozen=True, slots=True)
class SpeedChoice:
    """One legal speed: the test a push needs (None: no push), the mph braked beyond the
    free deceleration (`braking`, 0: none) and where the car can end its move (by lane).
    No reach means no path of that length is open (the car would emergency brake, P15)."""

    speed: int
    push: str | None
    braking: int
    reaches: tuple[Reach, ...]

    @property
    def cheapest(self) -> Reach | None:
        return min(self.reaches, key=lambda r: (r.cost.rank, r.wear, len(r.rolls)), default=None)


@dataclass(frozen=True, slots=True)
class CornerAhead:
    """The corner the car is in or meets next: its rows, the lowest posted speed of each of
    its rows in the order met (`posted`), its racing lines (id, bonus), how many rows ahead
    it starts (0: the car is in it) and what the car has paid for it already (+mph)."""

    corner: str
    first_row: int
    last_row: int
    rows_ahead: int
    posted: tuple[int, ...]
    lines: tuple[tuple[str, int], ...]
    paid: int
    goes_on: bool = False  # the rows shown stop inside the corner: `last_row` is the last shown
    past_rows_shown: bool = False  # the corner starts after the last row shown: no row is named

    def rows(self, track_rows: int) -> tuple[int, ...]:
        """The corner's rows from `first_row` to `last_row`, in the order the race meets them."""
        return tuple(
            (self.first_row - 1 + k) % track_rows + 1
            for k in range(_ahead_rows(track_rows, self.first_row, self.last_row) + 1)
        )

    def shown_in(self, shown: tuple[int, ...], track_rows: int) -> CornerAhead:
        """The corner as the excerpt of the track `shown` (its rows, from the car's) shows it:
        the rows it names are rows of the excerpt."""
        mine = [row for row in self.rows(track_rows) if row in shown]
        if not mine:
            return replace(self, past_rows_shown=True)
        return replace(self, first_row=mine[0], last_row=mine[-1], goes_on=mine[-1] != self.last_row)

    def describe(self) -> str:
        speeds: list[int] = []
        for mph in self.posted:
            if not speeds or speeds[-1] != mph:
                speeds.append(mph)
        where = (
            "you are in it"
            if self.rows_ahead == 0
            else f"{self.rows_ahead} row{'s' if self.rows_ahead != 1 else ''} ahead"
        )
        if self.past_rows_shown:
            named = f"past the rows shown ({where})"
        else:
            rows = (
                f"row {self.first_row}" if self.first_row == self.last_row else f"rows {self.first_row}-{self.last_row}"
            )
            named = f"{rows}{' and on' if self.goes_on else ''} ({where})"
        text = f"Corner {self.corner}, {named}: limit {' then '.join(map(str, speeds))} mph"
        if self.lines:
            text += "; racing line " + ", ".join(f"{line} +{bonus}" for line, bonus in self.lines)
        if self.paid:
            text += f"; you have paid for +{self.paid}"
        return text


@dataclass(frozen=True, slots=True)
class PlotOptions:
    """Everything a driver can plot this turn, from `space` at `speed`: `limits` in words,
    every legal speed (`choices`, slowest first), the corner ahead, the rows of the excerpt
    of the track ahead (`rows`, from the car's own), the spaces of the cars that will still
    be there when it moves (`staying`) and of those that move first (`gone`)."""

    player: str
    space: str
    speed: int
    limits: str
    choices: tuple[SpeedChoice, ...]
    corner: CornerAhead | None
    rows: tuple[int, ...]
    staying: tuple[str, ...]
    gone: tuple[str, ...]

    def reaches(self) -> tuple[Reach, ...]:
        return tuple(r for choice in self.choices for r in choice.reaches)

    def at(self, space: str) -> tuple[Reach, ...]:
        """The reaches ending in `space`, slowest first."""
        return tuple(r for r in self.reaches() if r.space == space)


def plot_options(state: RaceState, player: str) -> PlotOptions | None:
    """The options of `player`'s car this turn; None outside the race, for a car that is not
    racing, in the pits or off the track (its limits are in its private lines)."""
    if state.phase is not Phase.RACE:
        return None
    car = state.car(player)
    if car.status is not Status.RACING or car.space is None or car.off_track or car.pit is not None:
        return None
    track = state.track
    lim = limits(car, track)
    staying = tuple(
        sorted(
            c.space
            for c in state.cars
            if c.on_track and c.space is not None and c.player != player and not moves_first(car, c)
        )
    )
    gone = tuple(
        sorted(
            c.space
            for c in state.cars
            if c.on_track and c.space is not None and c.player != player and moves_first(car, c)
        )
    )
    speeds = list(range(0, lim.safe + 1, 20))
    if lim.push is not None:
        speeds.append(lim.highest)
    choices = tuple(_choice(state, car, lim, speed, frozenset(staying)) for speed in speeds)
    corner = corner_ahead(track, car)
    here = track.space(car.space).row
    far = max((_ahead(track, here, track.space(r.space).row) for c in choices for r in c.reaches), default=0)
    span = far + 2
    if corner is not None and corner.rows_ahead <= EXCERPT_ROWS:  # the whole corner, if it fits
        span = max(span, corner.rows_ahead + len(corner.rows(track.rows)))
    span = min(max(span, 6), EXCERPT_ROWS, track.rows)
    rows = tuple((here - 1 + k) % track.rows + 1 for k in range(span))
    if corner is not None:
        corner = corner.shown_in(rows, track.rows)
    return PlotOptions(player, car.space, car.speed, lim.describe(), choices, corner, rows, staying, gone)


def _ahead(track: Track, here: int, row: int) -> int:
    return _ahead_rows(track.rows, here, row)


def _ahead_rows(track_rows: int, here: int, row: int) -> int:
    return (row - here) % track_rows


# -- one speed -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Purse:
    """What a plot has cost so far on its way (the resolver's `Paid` and wear, for one car)."""

    wear_left: int
    wear: int = 0
    rolls: tuple[str, ...] = ()
    charges: tuple[str, ...] = ()
    spin: bool = False
    crash: bool = False

    def cost(self) -> Cost:
        if self.crash:
            return Cost.CRASH
        if self.spin:
            return Cost.SPIN
        if self.rolls:
            return Cost.ROLL
        return Cost.WEAR if self.wear else Cost.FREE

    def spend(self, wear: int, roll: str | None, why: str) -> _Purse:
        """Pay `wear` and/or make `roll`, for the reason `why` (said once)."""
        rolls = (*self.rolls, roll) if roll else self.rolls
        charges = self.charges if not why or why in self.charges else (*self.charges, why)
        return replace(self, wear_left=self.wear_left - wear, wear=self.wear + wear, rolls=rolls, charges=charges)


def _pay(
    purse: _Purse, options: Sequence[Penalty], paid_wear: int, paid_roll: bool, tyres: Tyre, replace_roll: bool
) -> tuple[int, bool, bool, bool]:
    """One chart row as `RaceTurn.pay` pays it under PAY WEAR: (wear now, a roll now, wear
    replaced the roll, paid) for the first affordable way with the fewest rolls, else the
    cheapest way, unpaid (P13: the car spins; a roll it requires is still made)."""
    choices: list[tuple[int, bool, bool]] = []
    for option in options:
        need_wear = max(0, option.wear - paid_wear)
        need_roll = option.roll and not paid_roll
        choices.append((need_wear, need_roll, False))
        if need_roll and replace_roll and tyres is Tyre.OPTION:
            choices.append((need_wear + 1, False, True))
    affordable = sorted((c for c in choices if c[0] <= purse.wear_left), key=lambda c: (c[1], c[0]))
    if affordable:
        wear, roll, replaced = affordable[0]
        return wear, roll, replaced, True
    cheapest = min(choices, key=lambda c: (c[2], c[0]))
    return 0, cheapest[1], False, False


def _start(state: RaceState, car: Car, lim: Limits, speed: int) -> _Purse:
    """What a plot of `speed` costs before the car moves: a push test, the deceleration chart."""
    purse = _Purse(car.wear)
    if speed > lim.safe and lim.push is not None:
        kind = lim.push
        replaceable = kind in ("acceleration", "start speed") or (
            kind == "top speed" and state.options.option_tyres_top_speed
        )
        if replaceable and car.tyres is Tyre.OPTION and car.wear >= 1:
            purse = purse.spend(1, None, f"1 wear on option tyres in place of the {kind} test")
        else:
            purse = purse.spend(0, f"{kind} test", "")
    excess = max(0, lim.free_low - speed)
    row = min(tier(excess), DECELERATION_SPIN_TIER)
    if row == 0:
        return purse
    why = f"braking {excess} over your deceleration"
    wear, roll, _, ok = _pay(purse, DECELERATION_CHART[row], 0, False, car.tyres, replace_roll=False)
    purse = purse.spend(wear, None, why)
    if roll:
        # `RaceTurn.brake_test`: on option tyres 1 wear may replace the brakes test (P12)
        purse = (
            purse.spend(1, None, "")
            if car.tyres is Tyre.OPTION and purse.wear_left >= 1
            else purse.spend(0, "brakes test", "")
        )
    if not ok:
        purse = replace(purse, spin=True, charges=(*purse.charges, "not enough wear"))
    if row >= DECELERATION_SPIN_TIER:
        purse = replace(purse, spin=True, charges=(*purse.charges, "80 or more over spins"))
    return purse


@dataclass(frozen=True, slots=True)
class _Way:
    """A path being followed: where it is, the line and corner records, what it cost."""

    space: str
    line_run: LineRun | None
    barred: str | None
    corner_run: CornerRun | None
    purse: _Purse
    path: tuple[str, ...]

    def key(self) -> tuple[object, ...]:
        return (
            self.space,
            self.line_run,
            self.barred,
            self.corner_run,
            self.purse.wear_left,
            self.purse.spin,
            self.purse.crash,
        )

    def rank(self, track: Track) -> tuple[object, ...]:
        lanes = [track.space(s).lane for s in self.path]
        changes = sum(1 for a, b in zip(lanes, lanes[1:], strict=False) if a != b)
        return (self.purse.cost().rank, self.purse.wear, len(self.purse.rolls), changes, tuple(lanes))


def _enter(track: Track, way: _Way, target: str, speed: int, tyres: Tyre) -> _Way:
    """`RaceTurn.enter` and `pay_corner` for one space, on the plot's costs."""
    step = step_line(track, way.line_run, way.barred, target)
    run = way.corner_run
    leaves = step.left is not None and run is not None and track.lines[step.left].corner == run.corner
    entry = enter_space(track, run, target, speed, line_bonus(track, step.run, target), leaves)
    purse = way.purse
    barred = way.barred if entry.run is not None else None
    corner = entry.run
    if not (purse.spin or purse.crash) and corner is not None and entry.due > corner.tier:
        posted = track.space(target).speed
        why = f"{corner.corner} +{entry.due * 20} in {target} ({posted})"
        if entry.due >= CORNER_CRASH_TIER:
            purse = replace(purse, crash=True, charges=(*purse.charges, why))
        else:
            wear, roll, replaced, ok = _pay(
                purse, CORNERING_CHART[entry.due], corner.wear_paid, corner.rolled, tyres, replace_roll=True
            )
            if ok:
                purse = purse.spend(wear, f"chance table ({corner.corner})" if roll else None, why)
                corner = CornerRun(
                    corner.corner,
                    entry.due,
                    corner.wear_paid + wear - (1 if replaced else 0),
                    corner.rolled or roll or replaced,
                    corner.worst_raw,
                )
            else:
                purse = replace(purse, spin=True, charges=(*purse.charges, why, "not enough wear"))
                if roll:
                    purse = replace(purse, rolls=(*purse.rolls, f"chance table ({corner.corner})"))
    return _Way(target, step.run, barred, corner, purse, (*way.path, target))


def _successors(track: Track, space: str, staggered: bool) -> list[str]:
    """The moves a PATH can ask for: the first move into each lane, as `desired_path` picks
    for a lane (so a path of these is exactly what its PATH makes the resolver drive)."""
    seen: set[int] = set()
    out: list[str] = []
    for target in track.moves(space, staggered=staggered):
        lane = track.space(target).lane
        if lane not in seen:
            seen.add(lane)
            out.append(target)
    return out


def _choice(state: RaceState, car: Car, lim: Limits, speed: int, staying: frozenset[str]) -> SpeedChoice:
    track = state.track
    assert car.space is not None
    start = _start(state, car, lim, speed)
    push = lim.push if speed > lim.safe else None
    braking = max(0, lim.free_low - speed)
    if speed == 0:
        reach = replace(_reach(speed, car.space, (), start), retires=_retires(car))
        return SpeedChoice(speed, push, braking, (reach,))
    ways: dict[tuple[object, ...], _Way] = {}
    first = _Way(car.space, car.line_run, car.barred_line, car.corner_run, start, ())
    ways[first.key()] = first
    staggered = state.options.staggered_lane_change
    for _ in range(speed // 20):
        after: dict[tuple[object, ...], _Way] = {}
        for way in ways.values():
            for target in _successors(track, way.space, staggered):
                if target in staying:
                    continue
                new = _enter(track, way, target, speed, car.tyres)
                known = after.get(new.key())
                if known is None or new.rank(track) < known.rank(track):
                    after[new.key()] = new
        ways = after
    best: dict[str, _Way] = {}
    for way in ways.values():
        known = best.get(way.space)
        if known is None or way.rank(track) < known.rank(track):
            best[way.space] = way
    reaches = tuple(
        _reach(speed, space, way.path, way.purse)
        for space, way in sorted(best.items(), key=lambda item: track.space(item[0]).lane)
    )
    return SpeedChoice(speed, push, braking, reaches)


def _reach(speed: int, space: str, path: tuple[str, ...], purse: _Purse) -> Reach:
    return Reach(speed, space, path, purse.cost(), purse.wear, purse.rolls, purse.charges)


def _retires(car: Car) -> bool:
    """Whether a move of no space retires `car`: it would be its `STOPPED_TURNS`th race turn
    in a row without moving (NOTES.md, "Stopped cars"; the resolver counts `Car.standing`)."""
    return car.standing + 1 >= STOPPED_TURNS


@dataclass(frozen=True, slots=True)
class PlotCost:
    """What one plot costs as ordered (`plot_cost`): its reach, and the spaces on its way
    held by cars that move after it (`blocked`: the engine steers round them, P15)."""

    reach: Reach
    blocked: tuple[str, ...]

    def describe(self) -> str:
        """The confirmation's words (mail-interface.md, "The confirmation": "this plot costs
        2 wear and a top-speed test")."""
        reach = self.reach
        where = (
            f"This plot ({reach.speed} mph, ending in {reach.space})"
            if reach.path
            else f"This plot ({reach.speed} mph)"
        )
        why = f" ({'; '.join(reach.charges)})" if reach.charges else ""
        if reach.cost is Cost.CRASH:
            text = f"{where} crashes the car off course{why}."
        elif reach.cost is Cost.SPIN:
            text = f"{where} spins the car after its move{why}."
        elif reach.cost is Cost.FREE:
            text = f"{where} costs nothing: no wear, no test, no roll."
        else:
            text = f"{where} costs {' and '.join(reach.describe().split(' + '))}{why}."
        if reach.retires:
            text += (
                f" The car does not move, for the {STOPPED_TURNS}th turn in a row: it retires from the race"
                " after this turn."
            )
        if self.blocked:
            text += (
                f" A car that moves after you is in {', '.join(self.blocked)}: the engine steers round it, "
                "so the cost may differ."
            )
        return text


def plot_cost(state: RaceState, player: str, orders: Sequence[Order]) -> PlotCost | None:
    """What `orders` cost as plotted, charged as `plot_options` charges its paths (PAY WEAR,
    §8; the path the orders ask for, `move.desired_path`). None where no such cost can be
    said: outside the race, for a car not racing, in the pits or off the track, without a
    speed, or for a plot whose cost the dice decide (PAY ROLL, SKILL, SLIP, a pit entry)."""
    if state.phase is not Phase.RACE:
        return None
    car = state.car(player)
    if car.status is not Status.RACING or car.space is None or car.off_track or car.pit is not None:
        return None
    plot = plot_of(orders)
    if not plot.wear_first or plot.skill or plot.slip or plot.pit is not None:
        return None
    speed = car.speed if plot.mps else plot.speed
    lim = limits(car, state.track)
    if speed is None or speed % 20 or speed > lim.highest or (speed > lim.safe and not plot.push):
        return None
    track = state.track
    way = _Way(car.space, car.line_run, car.barred_line, car.corner_run, _start(state, car, lim, speed), ())
    for target in desired_path(track, car, plot, speed // 20, staggered=state.options.staggered_lane_change):
        way = _enter(track, way, target, speed, car.tyres)
    staying = {
        c.space
        for c in state.cars
        if c.on_track and c.space is not None and c.player != player and not moves_first(car, c)
    }
    blocked = tuple(space for space in way.path if space in staying)
    reach = replace(_reach(speed, way.space, way.path, way.purse), retires=not way.path and _retires(car))
    return PlotCost(reach, blocked)


# -- in the pits ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PitSpeed:
    """One legal speed of a car in the pits (P28, seed "Using the Pits"): what plotting it
    costs (`cost`: the deceleration chart below the free deceleration, paid as `PAY WEAR`
    pays it) and what the car does with it this turn (`does`)."""

    speed: int
    cost: Reach
    does: str


def pit_speeds(state: RaceState, player: str) -> tuple[PitSpeed, ...]:
    """Every speed a car in the pits may plot this turn, slowest first (`plot.limits`: up to
    the pit limit, or down to it by the usual means), with its cost; empty for a car that is
    not in the pits. In the entrance lane the car slows into the pit lane and fits its new
    tyres; in the pit lane it goes back onto the track at that speed (seed "Exiting the
    Pits"). Nothing is foreseen of the pit crew roll (PUSH YES) or of other cars."""
    if state.phase is not Phase.RACE:
        return ()
    car = state.car(player)
    if car.status is not Status.RACING or car.pit is None:
        return ()
    lim = limits(car, state.track)
    found = []
    for speed in range(0, lim.safe + 1, 20):
        if car.pit.stage is PitStage.LANE:
            # `RaceTurn.run_pits`: a car leaving the pit lane is placed on the track at its
            # plotted speed, charged nothing
            cost, does = _reach(speed, "", (), _Purse(car.wear)), "back onto the track"
        else:
            cost = _reach(speed, "", (), _start(state, car, lim, speed))
            # seed "Speed Limit": "If a car spins ... the car is replot at 0 and not moved to the pit lane"
            does = "stays in the entrance lane" if cost.cost is Cost.SPIN else "into the pit lane, new tyres"
        found.append(PitSpeed(speed, cost, does))
    return tuple(found)


# -- the corner ahead ------------------------------------------------------------------------


def corner_ahead(track: Track, car: Car) -> CornerAhead | None:
    """The corner the car is in, else the first one its lane or any lane meets ahead."""
    assert car.space is not None
    here = track.space(car.space)
    by_row: dict[int, list[tuple[str, int]]] = {}
    for s in track.spaces.values():
        if s.corner is not None and s.speed is not None:
            by_row.setdefault(s.row, []).append((s.corner, s.speed))
    corner: str | None = here.corner
    start = 0
    if corner is None:
        for k in range(1, track.rows):
            row = (here.row - 1 + k) % track.rows + 1
            if row in by_row:
                corner, start = by_row[row][0][0], k
                break
    if corner is None:
        return None
    rows = sorted({s.row for s in track.corner_spaces(corner)}, key=lambda r: _ahead(track, here.row, r))
    if start == 0:
        # in the corner: from the car's row to the corner's end (its rows behind do not count)
        rows = [r for r in rows if _ahead(track, here.row, r) < track.rows // 2] or rows
    ahead = [r for r in rows if _ahead(track, here.row, r) >= start] or rows
    posted = tuple(min(mph for c, mph in by_row[r] if c == corner) for r in ahead)
    lines = tuple(
        (line.id, line.bonus) for line in sorted(track.lines.values(), key=lambda ln: ln.id) if line.corner == corner
    )
    paid = car.corner_run.tier * 20 if car.corner_run is not None and car.corner_run.corner == corner else 0
    return CornerAhead(corner, ahead[0], ahead[-1], start, posted, lines, paid)


# -- the options as text -----------------------------------------------------------------------

_CELL = 14


def options_text(track: Track, options: PlotOptions, names: Mapping[str, str]) -> tuple[str, ...]:
    """The options in plain text: the track ahead as a map with lane letters and
    row numbers, each space marked with the speeds that end there, then every speed with
    where it ends, what it costs and the lanes to plot it (PATH takes them).

    `names` maps the spaces of the other cars to their names. No line reads as an order (each
    starts with a number or a word that is no order keyword: testing.md)."""
    lines_by_space: dict[str, str] = {}
    for line in track.lines.values():
        for space in line.spaces:
            lines_by_space.setdefault(space, line.id)
    head = f"Where you can get this turn, from {options.space} at {options.speed} mph (you may plot {options.limits})."
    out = textwrap.wrap(head, width=72, break_on_hyphens=False)
    if options.corner is not None:
        out.extend(textwrap.wrap(options.corner.describe() + ".", width=72, break_on_hyphens=False))
    out.append("")
    out.append(f"{'row':>5}  " + "".join(f"{'lane ' + lane:<{_CELL}}" for lane in LANES).rstrip())
    at: dict[tuple[int, int], str] = {(s.lane, s.row): s.id for s in track.spaces.values()}
    for row in options.rows:
        cells = []
        for lane in range(3):
            space_id = at.get((lane, row))
            if space_id is None:
                cells.append("|" if track.covering(lane, row) is not None else "")
                continue
            cells.append(_cell(track, options, space_id, names, lines_by_space))
        notes = _row_notes(track, row)
        out.append(f"{row:>5}  " + "".join(f"{c:<{_CELL}}" for c in cells).rstrip() + (f"  {notes}" if notes else ""))
    out.append("")
    out.append("In a space: its posted speed (corner) or '.'; '~' racing line; '>' pit-entry")
    out.append("arrow; '|' a long space goes on. @60: a move at 60 mph ends there, free;")
    out.append("@60w costs wear, @60r a test or roll, @60! a spin, @60X a crash. [name] a car")
    out.append("still there when you move; (name) moves first and will have gone. The race")
    out.append("runs down the rows. Costs as with PAY WEAR; lanes: one per space, for PATH.")
    out.append("")
    for choice in options.choices:
        out.extend(_choice_text(choice))
    return tuple(out)


def _cell(
    track: Track, options: PlotOptions, space_id: str, names: Mapping[str, str], lines_by_space: Mapping[str, str]
) -> str:
    space = track.space(space_id)
    if space_id == options.space:
        return "[you]"
    marks = [f"@{r.speed}{r.cost.mark}" for r in options.at(space_id)]
    if space_id in names:
        name = names[space_id][:6]
        if space_id not in options.gone:
            return f"[{name}]"
        text = " ".join([f"({name})", *marks])  # it will have gone: its space is open to this car
        return text if len(text) < _CELL else " ".join([f"({name})", marks[0], "+"])
    base = str(space.speed) if space.speed is not None else "."
    if space_id in lines_by_space:
        base += "~"
    if space.pit_arrow:
        base += ">"
    text = " ".join([base, *marks])
    if len(text) >= _CELL:
        text = " ".join([base, marks[0], "+"])
    return text


def _row_notes(track: Track, row: int) -> str:
    notes = sorted({s.corner for s in track.spaces.values() if s.row == row and s.corner})
    if track.pit is not None and track.pit.first <= row <= track.pit.last:
        notes.append(
            "pit entry" if any(s.pit_arrow for s in track.spaces.values() if s.row == row) else "pit lane beside"
        )
    if row == track.rows:
        notes.append("finish line")
    return " ".join(notes)


def _choice_text(choice: SpeedChoice) -> list[str]:
    """``  100 mph: free A13 (CCBAA); 1 wear (T1 +20) B13 (BBBBB), C14 (BBBBC)``."""
    head = f"{choice.speed:>5} mph"
    if choice.push:
        head += f" (PUSH YES, {choice.push} test)"
    groups: dict[str, list[str]] = {}
    for reach in sorted(choice.reaches, key=lambda r: (r.cost.rank, r.wear, len(r.rolls), r.space)):
        why = sorted({c.split(" in ")[0] for c in reach.charges if c})
        label = reach.describe() + (f" ({', '.join(why)})" if why else "")
        groups.setdefault(label, []).append(f"{reach.space} ({reach.lanes})" if reach.path else reach.space)
    if not groups:
        body = "no way through, every path is blocked (you would emergency brake)"
    else:
        body = "; ".join(f"{label} {', '.join(spaces)}" for label, spaces in groups.items())
    return textwrap.wrap(f"{head}: {body}", width=72, subsequent_indent=" " * 11, break_on_hyphens=False)
