"""Resolving a turn: the set-up turns (car design, qualifying) and the race turn
sequence of speed-circuit.md §2.15.

`resolve_turn` resolves the open turn, whatever it is; each resolver returns a
`rules.api.Resolution`. Every 2d6 roll is drawn from the turn's rng and reported as an
`Event` with its `Roll`.
Part 2 added forced passing and off-track movement to the move, the slip offer, crash
involvement and pit entry after it, the pits after every track car, and the off-track loss
at the end of the turn (NOTES.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rules.api import Event, Resolution, Roll
from rules.speed_circuit.car import (
    DEFAULT_DESIGN,
    Car,
    CornerRun,
    Design,
    PitStage,
    PitStop,
    Status,
    Tyre,
)
from rules.speed_circuit.corner import CornerEntry, coast, enter_space, path_needs_payment
from rules.speed_circuit.model import OffTrackRemoval, Phase, RaceState, TyreRule
from rules.speed_circuit.move import (
    LineStep,
    desired_path,
    line_bonus,
    longest_path,
    moves_first,
    order_of_movement,
    plan_path,
    step_line,
)
from rules.speed_circuit.plot import (
    BidOrder,
    DesignOrder,
    Order,
    PathKind,
    PathOrder,
    Plot,
    SkillTable,
    TyresOrder,
    closest_achievable,
    limits,
    plot_of,
)
from rules.speed_circuit.tables import (
    ACCEL_TOP_TEST,
    BRAKES_TEST,
    CHANCE,
    CORNER_CRASH_TIER,
    CORNERING_CHART,
    DECELERATION_CHART,
    DECELERATION_SPIN_TIER,
    PASSING,
    PIT_CREW,
    START_TEST,
    Outcome,
    Penalty,
    Table,
    tier,
)

STOPPED_TURNS = 5
"""NOTES.md, "Stopped cars": a car that ends this many race turns in a row without moving
retires, so a car left at 0 mph (MPS, `plot_default=mps`) never holds the race up forever."""
STOPPED_REPORT = 2
"""The turns a car has stood still when the GM is first told (`game.stall`)."""


def resolve_turn(state: RaceState, orders: Mapping[str, Sequence[Order]], rng: random.Random) -> Resolution[RaceState]:
    """The open turn resolved: car design, qualifying or a race turn (nothing once finished)."""
    if state.phase is Phase.DESIGN:
        return resolve_design(state, orders)
    if state.phase is Phase.QUALIFYING:
        return resolve_qualifying(state, orders, rng)
    if state.phase is Phase.RACE:
        return resolve_race(state, orders, rng)
    return Resolution(state, ())


# -- set-up turns --------------------------------------------------------------------------


def resolve_design(state: RaceState, orders: Mapping[str, Sequence[Order]]) -> Resolution[RaceState]:
    """Turn 1: car design (seed 003 design table, P1, P3) and the starting tyre set."""
    events: list[Event] = []
    cars = []
    for car in state.cars:
        design = DEFAULT_DESIGN
        tyre = Tyre.PRIME
        for order in orders.get(car.player, ()):
            if isinstance(order, DesignOrder):
                design = order.design
            elif isinstance(order, TyresOrder):
                tyre = order.tyre
        if design.problems():
            design = DEFAULT_DESIGN
        car = build_car(car, design, tyre, state.laps)
        cars.append(car)
        events.append(
            Event(
                "design",
                f"{car.player}: ACC {car.acc} DEC {car.dec} TOP {car.top} START {car.start}; "
                f"PRIME {design.tyre_wear(Tyre.PRIME, state.laps)}w OPTION {design.tyre_wear(Tyre.OPTION, state.laps)}w; "
                f"{car.skill} skill; starts on {tyre.value}",
                (car.player,),
            )
        )
    return Resolution(replace(state, cars=tuple(cars), phase=Phase.QUALIFYING), tuple(events))


def build_car(car: Car, design: Design, tyre: Tyre, laps: int) -> Car:
    return replace(
        car,
        design=design,
        tyres=tyre,
        tyres_used=(tyre,),
        acc=design.rating("ACC"),
        dec=design.rating("DEC"),
        top=design.rating("TOP"),
        start=design.rating("START"),
        wear=design.tyre_wear(tyre, laps),
        skill=design.skill_chips(laps),
    )


def resolve_qualifying(
    state: RaceState, orders: Mapping[str, Sequence[Order]], rng: random.Random
) -> Resolution[RaceState]:
    """Turn 2: the secret wear + skill bid for the grid (seed 003, P31): wear from the
    starting set only, skill counts as wear, all of it lost; ties by d100, higher first."""
    events: list[Event] = []
    bids: dict[str, int] = {}
    cars: dict[str, Car] = {c.player: c for c in state.cars}
    for car in state.racing():
        bid = BidOrder(0, 0)
        for order in orders.get(car.player, ()):
            if isinstance(order, BidOrder):
                bid = order
        wear, skill = min(bid.wear, car.wear), min(bid.skill, car.skill)
        cars[car.player] = replace(car, wear=car.wear - wear, skill=car.skill - skill)
        bids[car.player] = wear + skill
        events.append(Event("bid", f"{car.player} bids {wear} wear + {skill} skill = {wear + skill}", (car.player,)))
    ranking = sorted(bids, key=lambda p: -bids[p])
    tie_rolls: dict[str, tuple[int, ...]] = {p: () for p in ranking}
    groups: dict[int, list[str]] = {}
    for p in ranking:
        groups.setdefault(bids[p], []).append(p)
    for group in groups.values():
        pending = [group]
        while pending:
            tied = pending.pop()
            if len(tied) < 2:
                continue
            faces: dict[str, int] = {}
            for p in tied:
                roll = Roll.of(rng, 1, 100)
                faces[p] = roll.total
                tie_rolls[p] = (*tie_rolls[p], roll.total)
                events.append(Event("roll", f"{p} rolls {roll.total} on d100 to break a tie at {bids[p]}", (p,), roll))
            by_face: dict[int, list[str]] = {}
            for p in tied:
                by_face.setdefault(faces[p], []).append(p)
            pending.extend(by_face.values())
    ranking.sort(key=lambda p: (-bids[p], tuple(-f for f in tie_rolls[p])))
    grid = state.track.grid
    placed = []
    for slot, player in enumerate(ranking):
        space = state.track.space(grid[slot])
        car = replace(cars[player], space=space.id, lap=0, progress=space.row, speed=0)
        cars[player] = car
        placed.append(f"{slot + 1}. {player} ({space.id})")
    events.append(Event("grid", "Starting grid: " + ", ".join(placed), tuple(ranking)))
    pole = ranking[0] if ranking else None
    cars_now = tuple(cars[c.player] for c in state.cars)
    return Resolution(replace(state, cars=cars_now, phase=Phase.RACE, pole=pole), tuple(events))


# -- the race turn -------------------------------------------------------------------------


@dataclass
class Paid:
    """What has been paid on one chart so far this turn (P14: it counts toward a top-up)."""

    wear: int = 0
    rolled: bool = False


@dataclass
class Mover:
    """One car's working record while the turn is resolved."""

    player: str
    plot: Plot
    base: int
    speed: int
    plotted: int = 0
    """The speed plotted for this turn (after the closest-achievable rule, P29), before any
    test's replot: an engine failure halves it (P24)."""
    order_index: int = 0
    excess: int = 0
    decel_paid: Paid = field(default_factory=Paid)
    entered: list[str] = field(default_factory=list)
    """The spaces the car entered this turn, in order (its path, for the report)."""
    spin_at_end: bool = False
    spun: bool = False
    out: str | None = None
    engine_failed: bool = False
    rows_past: int | None = None
    start_progress: int = 0
    started_off: bool = False
    started_overflow: bool = False
    moved: int = 0
    """Spaces moved (or moved beside the track) this turn."""
    done: bool = False
    """Has completed its move this turn."""
    passes: int = 0
    """Successful forced passes in this move (P5, P20: +2 to the roll, +1 chip, for each)."""
    lineless: bool = False
    """Attempted a forced pass this move: no racing line (P11)."""
    slipped_by: str | None = None
    """The car that took this car's slipstream this turn (P18)."""


def plot_speed(state: RaceState, car: Car, plot: Plot) -> int:
    """The speed a plot asks for: SPEED n, MPS, or (no SPEED line) the safe plot (§8)."""
    if plot.mps:
        return car.speed
    if plot.speed is None:
        return safe_speed(state, car)
    return plot.speed


SAFE_LOOKAHEAD = 5
"""Turns of hardest free braking the safe plot checks beyond the turn it plots."""


@dataclass(frozen=True, slots=True)
class SafePlot:
    """The bot's plot for a driver who sent none (§8): a speed, the lanes of its path (None:
    follow the racing lines) and the tyres to pit for (None: no pit stop this turn)."""

    speed: int
    lanes: tuple[int, ...] | None = None
    pit: Tyre | None = None


@dataclass(frozen=True, slots=True)
class PlannedMove:
    """One speed the safe plot may send: the path it plans, whether that is the path the
    racing lines give (else it is sent as PATH), and whether the speed is within the free
    deceleration (no deceleration chart)."""

    speed: int
    path: tuple[str, ...]
    as_desired: bool
    free: bool


def safe_speed(state: RaceState, car: Car) -> int:
    return safe_plot(state, car).speed


def safe_plot(state: RaceState, car: Car) -> SafePlot:
    """§8 NMR: the highest speed within the car's limits whose planned path (following
    lines) needs no wear, test or roll, or the least deceleration that gets there.

    [DES] "Keeps the car on track": the speed must also leave the car able to make the
    following turns at no cost by braking at its free deceleration, so that a car plotted
    for is not left too fast in front of a slow corner. The path steers around the spaces
    of the cars that move after this one (they are still there when it moves); a car that
    moves before it is no obstacle, as it will have moved on by then (NOTES.md). A speed
    whose every path is blocked is not planned (it would end in emergency braking, P15).
    A car that has not yet run both compounds (P4) plans its stop on the last lap: it ends
    a move on a pit-entry arrow slowly enough to reach the pit limit by free braking,
    holding back before the arrows if it must; it never pays the deceleration chart to make
    the stop while a free speed exists.
    In the pits, or off track, it is the highest speed its limits allow.
    """
    track = state.track
    lim = limits(car, track)
    if car.space is None or car.off_track:
        return SafePlot(lim.safe)
    staggered = state.options.staggered_lane_change
    staying = {c.space for c in state.cars if c.on_track and c.player != car.player and not moves_first(car, c)}
    line = Plot(path=PathOrder(PathKind.LINE))
    candidates: list[PlannedMove] = []
    for speed in range(lim.safe, -1, -20):
        steps = speed // 20
        desired = desired_path(track, car, line, steps, staggered=staggered)
        path = plan_path(track, car.space, steps, desired[:steps], lambda s: s in staying, staggered=staggered)
        if path is None:
            continue
        after = coast(track, car, path, speed)
        if after is None or not brakes_in_time(state, after):
            continue
        candidates.append(PlannedMove(speed, path, list(path) == desired[:steps], speed >= lim.free_low))
    if not candidates:
        return SafePlot(0)
    pit = pit_plan(state, car, candidates)
    move = pit[0] if pit is not None else candidates[0]
    lanes = None if move.as_desired else tuple(track.space(s).lane for s in move.path)
    tyre = None if pit is None or not pit[1] else next(t for t in Tyre if t not in car.tyres_used)
    return SafePlot(move.speed, lanes, tyre)


def pit_plan(state: RaceState, car: Car, candidates: Sequence[PlannedMove]) -> tuple[PlannedMove, bool] | None:
    """The compulsory stop (P4) on the last lap, as (move, pits now), or None: no stop planned.

    §8 "needs no wear, test or roll" comes first, so while any candidate is free (no
    deceleration chart) only free ones are planned, in this order: the fastest that ends on
    an arrow at no more than pit limit + deceleration, so that next turn's slowing is free
    (pits), or stays short of the arrows and can still end on them so (holds back); then the
    fastest that ends on an arrow faster (pits; its slowing is charged next turn, in the
    entrance lane, where no free speed is left); then the fastest that stays short of the
    arrows. With no free candidate at all, the first of the first kind among the rest."""
    track = state.track
    pit = track.pit
    if pit is None or car.ran_both_compounds() or car.lap != state.laps or car.space is None:
        return None
    arrows = sorted({s.row for s in track.spaces.values() if s.pit_arrow})
    first = car.lap * track.rows + arrows[0]
    last = car.lap * track.rows + arrows[-1]
    if car.progress > last:
        return None
    cap = pit.limit + car.dec
    here = track.space(car.space)

    def end(move: PlannedMove) -> tuple[bool, int]:
        """Whether the move ends on an arrow, and the progress it ends at."""
        space = track.space(move.path[-1]) if move.path else here
        return space.pit_arrow, car.progress + (space.row - here.row) % track.rows

    def slow_enough(move: PlannedMove) -> bool | None:
        on_arrow, progress = end(move)
        if on_arrow and move.speed <= cap:
            return True
        if progress < first and _reaches_pit(first - progress, len(arrows), move.speed, car, cap):
            return False
        return None

    free = [m for m in candidates if m.free]
    for move in free:
        stop = slow_enough(move)
        if stop is not None:
            return move, stop
    for move in free:
        if end(move)[0]:
            return move, True
    for move in free:
        if end(move)[1] < first:
            return move, False
    if free:
        return None  # no free way to make the stop this lap: it is not bought on the chart
    for move in candidates:
        stop = slow_enough(move)
        if stop is not None:
            return move, stop
    return None


def _reaches_pit(distance: int, span: int, speed: int, car: Car, cap: int) -> bool:
    """Whether braking at most `car.dec` a turn the car can end a move in the arrow rows
    (`distance` rows ahead, `span` rows deep) at `cap` or slower."""
    seen: set[tuple[int, int]] = set()

    def reach(d: int, v: int) -> bool:
        if (d, v) in seen:
            return False
        seen.add((d, v))
        for u in range(max(20, v - car.dec), min(v + car.acc, car.top) + 1, 20):
            steps = u // 20
            if d <= steps < d + span and u <= cap:
                return True
            if steps < d and reach(d - steps, u):
                return True
        return False

    return reach(distance, speed)


def brakes_in_time(state: RaceState, car: Car) -> bool:
    """Whether a car that ends its move as `car` (at `car.speed`) can go on braking at its
    free deceleration for `SAFE_LOOKAHEAD` turns, following the racing lines, without a
    cornering payment: the safe plot's [DES] "keeps the car on track" (§8)."""
    return car.speed == 0 or _coasts(state, car, max(0, car.speed - car.dec), SAFE_LOOKAHEAD)


def _coasts(state: RaceState, car: Car, speed: int, turns: int) -> bool:
    plot = Plot(path=PathOrder(PathKind.LINE))
    path = desired_path(state.track, car, plot, speed // 20, staggered=state.options.staggered_lane_change)
    after = coast(state.track, car, path, speed)
    if after is None:
        return False
    if speed == 0 or turns == 0:
        return True
    return _coasts(state, after, max(0, speed - car.dec), turns - 1)


@dataclass(frozen=True, slots=True)
class CrashMark:
    """The row of an on-course crash, marked for the rest of the turn (§2.11, P26)."""

    progress: int
    row: int
    three_wide: bool
    by: str


class RaceTurn:
    def __init__(self, state: RaceState, rng: random.Random) -> None:
        self.state = state
        self.track = state.track
        self.rng = rng
        self.events: list[Event] = []
        self.cars: dict[str, Car] = {c.player: c for c in state.cars}
        self.occupied: dict[str, str] = {c.space: c.player for c in state.cars if c.on_track and c.space is not None}
        self.crash_rows: list[CrashMark] = []
        self.movers: dict[str, Mover] = {}
        self.race_turn = state.race_turn + 1
        self.arrivals = 0
        self.staggered = state.options.staggered_lane_change
        self.crew: dict[str, int] = {}
        """Pit crew results this turn (+1/-1 space), shared by a stacked team-mate."""

    # -- reporting and dice ------------------------------------------------------------
    def say(self, kind: str, text: str, player: str, roll: Roll | None = None) -> None:
        self.events.append(Event(kind, text, (player,), roll))

    def say_moved(self, m: Mover, start: str | None) -> None:
        """What the car did, in a line ("bob 60 mph B74 -> B3"): the speed it ran (and
        the one plotted, where the turn changed it), from where to where; the costs and dice are
        the events before it."""
        car = self.cars[m.player]
        run = f"{m.speed} mph" + (f" (plotted {m.plotted})" if m.plotted != m.speed else "")
        if m.out:
            end = "out of the race"
        elif car.pit is not None:
            end = "the pits"
        elif car.off_track:
            end = f"off track beside {car.space}" if car.space else "off track"
        else:
            end = str(car.space)
        via = f" (entered {' '.join(m.entered)})" if len(m.entered) > 1 else ""
        self.say("moved", f"{m.player} {run}: {start or 'the pits'} -> {end}{via}", m.player)

    def roll_on(
        self, m: Mover, table: Table, skill: SkillTable | None, why: str, *, modifier: int = 0, cost: int | None = None
    ) -> Outcome:
        """Roll 2d6 on `table` (plus `modifier`, clamped: P30), or bypass it with skill chips
        if the plot says so (P5; `cost` overrides the table's chips)."""
        car = self.cars[m.player]
        chips = table.skill_cost if cost is None else cost
        if (
            chips is not None
            and table.skill_cost is not None
            and skill is not None
            and skill in m.plot.skill
            and car.skill >= chips
        ):
            self.cars[m.player] = replace(car, skill=car.skill - chips)
            best = table.rows[0][2]
            self.say(
                "skill", f"{m.player} spends {chips} skill to pass the {table.name} ({why}): {best.value}", m.player
            )
            return best
        roll = Roll.of(self.rng, 2, 6)
        outcome = table.lookup(roll.total + modifier)
        shown = f"{roll.total}{modifier:+d} = {min(12, max(2, roll.total + modifier))}" if modifier else str(roll.total)
        self.say("roll", f"{m.player} rolls {shown} on the {table.name} ({why}): {outcome.value}", m.player, roll)
        return outcome

    def spend_wear(self, m: Mover, wear: int, why: str) -> None:
        if wear <= 0:
            return
        car = self.cars[m.player]
        self.cars[m.player] = replace(car, wear=car.wear - wear)
        self.say("wear", f"{m.player} uses {wear} wear ({why}); {car.wear - wear} left", m.player)

    def pay(
        self,
        m: Mover,
        options: Sequence[Penalty],
        paid: Paid,
        why: str,
        roll: Callable[[], Outcome],
        *,
        option_tyres_replace_roll: bool,
    ) -> tuple[Paid, Outcome | None, bool]:
        """Pay one chart row, counting what was paid before (P9, P14).

        PAY WEAR prefers wear to rolls, PAY ROLL the opposite; option tyres may pay 1 wear
        instead of the roll (P12). If no way is affordable the car spins (P13), after any
        required roll (a crash result wins). Returns (paid, roll outcome, unpaid).
        """
        car = self.cars[m.player]
        choices: list[tuple[int, bool, bool]] = []  # (wear now, roll now, wear replaces roll)
        for option in options:
            need_wear = max(0, option.wear - paid.wear)
            need_roll = option.roll and not paid.rolled
            choices.append((need_wear, need_roll, False))
            if need_roll and option_tyres_replace_roll and car.tyres is Tyre.OPTION:
                choices.append((need_wear + 1, False, True))
        affordable = [c for c in choices if c[0] <= car.wear]
        if m.plot.wear_first:
            affordable.sort(key=lambda c: (c[1], c[0]))
        else:
            affordable.sort(key=lambda c: (c[0], c[1], c[2]))
        if affordable:
            wear, must_roll, replaced = affordable[0]
            if replaced:
                self.spend_wear(m, wear, why + ", 1 of it instead of the roll on option tyres")
            else:
                self.spend_wear(m, wear, why)
            outcome = roll() if must_roll else None
            return Paid(paid.wear + wear - (1 if replaced else 0), paid.rolled or must_roll or replaced), outcome, False
        cheapest = min(choices, key=lambda c: (c[2], c[0]))
        self.say("unpaid", f"{m.player} cannot pay the {cheapest[0]} wear due ({why}; {car.wear} left): spin", m.player)
        outcome = roll() if cheapest[1] else None
        return Paid(paid.wear, paid.rolled or cheapest[1]), outcome, True

    # -- the turn ----------------------------------------------------------------------
    def run(self, plots: Mapping[str, Plot]) -> RaceState:
        movers = self.movers
        for car in self.state.racing():
            plot = plots.get(car.player, Plot())
            asked = plot_speed(self.state, car, plot)
            speed = closest_achievable(car, self.track, asked)
            if speed != asked:
                self.say(
                    "plot",
                    f"{car.player}'s plot of {asked} is impossible; the closest achievable is {speed}",
                    car.player,
                )
            movers[car.player] = Mover(car.player, plot, car.speed, speed, plotted=speed, start_progress=car.progress)
            movers[car.player].started_off = car.off_track != 0
            movers[car.player].started_overflow = car.overflow
        seats = {c.player: i for i, c in enumerate(self.state.cars)}
        on_course = [self.cars[p] for p in movers if self.cars[p].space is not None]
        order = order_of_movement(self.track, on_course, {p: m.speed for p, m in movers.items()}, seats)
        self.events.append(
            Event("order", "Order of movement: " + ", ".join(f"{p} ({movers[p].speed})" for p in order), tuple(order))
        )
        for index, player in enumerate(order):
            m = movers[player]
            m.order_index = index
            start = self.cars[player].space
            self.move(m)
            m.done = True
            self.say_moved(m, start)
        self.run_pits([m for p, m in movers.items() if self.state.car(p).pit is not None])
        return self.finish_turn(movers)

    def move(self, m: Mover) -> None:
        car = self.cars[m.player]
        lim = limits(car, self.track)
        # 1. tests for pushing above the safe limit (§2.5)
        if m.speed > lim.safe and lim.push is not None:
            self.push_test(m, lim.push)
            if m.out:
                return
        # 2. the deceleration chart (§2.8)
        m.excess = max(0, lim.free_low - m.speed)
        if m.excess:
            self.decelerate(m, m.excess, "deceleration")
            if m.spun and not m.out:
                self.end_spin(m)
            if m.out or m.spun:
                if not m.out:
                    self.after_move(m)
                return
        if m.engine_failed:
            # seed 003: "immediately reduce their plotted speed by half (rounding down)", P24:
            # floored to a multiple of 20; half the speed plotted, not of the failed test's replot
            m.speed = (m.plotted // 40) * 20
            self.say(
                "engine",
                f"{m.player}'s engine fails: moves {m.speed} this turn (half its plotted {m.plotted}), then leaves the track",
                m.player,
            )
        # 3. movement space by space
        car = self.cars[m.player]
        assert car.space is not None
        steps = m.speed // 20
        if car.off_track:
            self.move_off(m, steps, may_rejoin=True)
        else:
            self.move_on(m, steps)
        if m.out:
            return
        self.settle(m)
        if m.spin_at_end and not m.spun:
            self.say("spin", f"{m.player} spins after braking 80 mph or more over the deceleration limit", m.player)
            m.spun = True
        if m.spun:
            self.end_spin(m)
        if m.engine_failed and m.rows_past is None:
            self.retire(m, "engine failure")
            return
        self.after_move(m)

    def move_on(self, m: Mover, steps: int) -> None:
        """Move on the track: the plotted path, else the nearest legal one, else a forced
        pass (PASS YES, P20), else emergency braking to the longest usable path (P15)."""
        car = self.cars[m.player]
        assert car.space is not None
        desired = desired_path(self.track, car, m.plot, steps, staggered=self.staggered)
        blocked = self.blocked_for(m.player)
        path = plan_path(self.track, car.space, steps, desired[:steps], blocked, staggered=self.staggered)
        if path is None and m.plot.force_pass and steps > 1:
            path = plan_path(
                self.track, car.space, steps, desired[:steps], blocked, staggered=self.staggered, passable=blocked
            )
            if path is not None:
                passees = [self.occupied[s] for s in path if blocked(s)]
                self.say(
                    "pass",
                    f"{m.player} is blocked and tries to force past {', '.join(passees)}: {' '.join(path)}",
                    m.player,
                )
        if path is None:
            path = longest_path(self.track, car.space, steps, desired, blocked, staggered=self.staggered)
            self.emergency_brake(m, len(path) * 20)
            if m.out:
                return
            if m.spun:
                self.end_spin(m)
                return
        elif list(path) != desired[:steps] and not any(blocked(s) for s in path):
            self.say("path", f"{m.player} is blocked on the plotted path and takes {' '.join(path)}", m.player)
        for space_id in path:
            if blocked(space_id):
                if not self.forced_pass(m, space_id):
                    return
            self.enter(m, space_id)
            if m.out or m.spun:
                return

    def blocked_for(self, player: str) -> Callable[[str], bool]:
        return lambda space: space in self.occupied and self.occupied[space] != player

    # -- forced passing (§2.10, P20, P21) ----------------------------------------------
    def forced_pass(self, m: Mover, space_id: str) -> bool:
        """One pass attempt through `space_id`: the passing table, +2 per earlier pass in
        this move (+1 skill chip); a car attempting a pass loses its racing line (P11)."""
        passee = self.occupied[space_id]
        m.lineless = True
        why = f"forcing past {passee} into {space_id}" + (f", pass {m.passes + 1} of the move" if m.passes else "")
        outcome = self.roll_on(
            m, PASSING, SkillTable.PASS, why, modifier=2 * m.passes, cost=(PASSING.skill_cost or 0) + m.passes
        )
        if outcome is Outcome.PASS:
            m.passes += 1
            return True
        if outcome is Outcome.CONTACT:
            self.contact(m, passee)
        self.failed_pass(m)
        return False

    def contact(self, m: Mover, passee: str) -> None:
        """Unsuccessful pass with contact: passer and passee both lose 2 wear; a car that
        cannot pay spins (seed "Wear Penalties", P13)."""
        for player in (m.player, passee):
            car = self.cars[player]
            who = self.movers[player]
            if car.wear >= 2:
                self.spend_wear(who, 2, "contact in a forced pass")
            else:
                self.say("unpaid", f"{player} cannot pay the 2 wear of the contact ({car.wear} left): spin", player)
                who.spun = True
                if player != m.player:
                    self.end_spin(who)

    def failed_pass(self, m: Mover) -> None:
        """P20: the car stops in the space before the pass; its speed becomes 20 x spaces
        moved (or, with failed_pass=decel, the deceleration chart is charged). P21: if that
        space holds the car it passed before (a chained pass), it goes off track."""
        car = self.cars[m.player]
        assert car.space is not None
        if self.occupied.get(car.space) not in (None, m.player):
            half = m.speed // 40  # P22: half speed, floored to a multiple of 20
            side = self.nearest_side(m, car.space)
            self.go_off(m, side, f"its failed pass leaves it in {car.space}, a blocked row")
            m.speed = half * 20
            self.say("offtrack", f"{m.player} replots at half speed: {m.speed}", m.player)
            if half > m.moved:
                self.move_off(m, half - m.moved, may_rejoin=False)
            return
        new = m.moved * 20
        self.say("pass", f"{m.player} stops in {car.space} after the failed pass: speed {new}", m.player)
        if self.state.options.failed_pass_decel:
            m.excess += m.speed - new
            m.speed = new
            self.decelerate(m, m.excess, "failed pass")
        m.speed = new

    # -- off track (P22, P23) -----------------------------------------------------------
    def nearest_side(self, m: Mover, space_id: str) -> int:
        """The side of the track nearest `space_id`; a d2 breaks a tie (seed: "randomly")."""
        here = self.track.space(space_id)
        low, high = self.track.edge_lanes(here.row)
        if here.lane - low != high - here.lane:
            return -1 if here.lane - low < high - here.lane else 1
        roll = Roll.of(self.rng, 1, 2)
        side = -1 if roll.total == 1 else 1
        self.say(
            "roll",
            f"{m.player} rolls {roll.total} on d2 for the side it leaves the track: {'lane A side' if side < 0 else 'far side'}",
            m.player,
            roll,
        )
        return side

    def go_off(self, m: Mover, side: int, why: str) -> None:
        car = self.cars[m.player]
        assert car.space is not None
        here = self.track.space(car.space)
        edge = self.track.edge_space(here.row, side)
        if self.occupied.get(car.space) == m.player:
            del self.occupied[car.space]
        self.cars[m.player] = replace(
            car, space=edge.id, off_track=side, overflow=False, line_run=None, corner_run=None
        )
        self.say("offtrack", f"{m.player} goes off track beside {edge.id} ({why})", m.player)

    def move_off(self, m: Mover, steps: int, *, may_rejoin: bool) -> None:
        """Off track a car moves as if there were spaces just off the side (P22). [DES] It
        rejoins the track at the first space it can enter that is empty and needs no
        cornering payment, from where the rest of its move must be usable on the track. Off
        the track cars do not block each other (as several cars may wait beside one row
        after leaving the pits, seed 003)."""
        car = self.cars[m.player]
        assert car.space is not None
        side = car.off_track
        beside: list[str] = []
        here = car.space
        for _ in range(steps):
            here = self.track.beside_step(here, side, staggered=self.staggered)
            beside.append(here)
        rejoin: tuple[int, tuple[str, ...]] | None = None
        if may_rejoin:
            for k, target in enumerate(beside):
                posted = self.track.space(target).speed
                if target in self.occupied or (posted is not None and m.speed > posted):
                    continue
                rest = steps - k - 1
                back = replace(car, space=target, off_track=0, line_run=None, corner_run=None)
                desired = desired_path(self.track, back, m.plot, rest, staggered=self.staggered)
                path = plan_path(
                    self.track, target, rest, desired, self.blocked_for(m.player), staggered=self.staggered
                )
                if path is not None and not path_needs_payment(self.track, back, path, m.speed):
                    rejoin = (k, path)
                    break
        for k, b in enumerate(beside):
            if rejoin is not None and k == rejoin[0]:
                self.rejoin(m, b)
                for space_id in rejoin[1]:
                    self.enter(m, space_id)
                    if m.out or m.spun:
                        return
                return
            self.place_off(m, b)

    def place_off(self, m: Mover, space_id: str) -> None:
        car = self.cars[m.player]
        assert car.space is not None
        self.advance(m, space_id, {})

    def rejoin(self, m: Mover, space_id: str) -> None:
        car = self.cars[m.player]
        assert car.space is not None
        self.cars[m.player] = replace(car, off_track=0, overflow=False)
        self.say("offtrack", f"{m.player} rejoins the track in {space_id}", m.player)
        self.enter(m, space_id)

    def settle(self, m: Mover) -> None:
        """[DES] A car that stops (spins) in the space of a car it was passing goes off
        track on the nearest side (as P21)."""
        car = self.cars[m.player]
        if car.on_track and car.space is not None and self.occupied.get(car.space) not in (None, m.player):
            self.go_off(
                m, self.nearest_side(m, car.space), f"it stops in {car.space}, where {self.occupied[car.space]} is"
            )

    # -- after the move: slipstream, crash involvement, pit entry (§2.15 4.3) -----------
    def after_move(self, m: Mover) -> None:
        if m.out:
            return
        self.offer_slip(m)
        if not m.out:
            self.involve(m)
        if not m.out:
            self.enter_pits(m)

    def offer_slip(self, m: Mover) -> None:
        """Slipstreaming (§2.9, P16-P18): on request, a car that ends its move in the space
        directly behind a car that has moved this turn plotted for 120 or more may move 1 or 2
        more spaces; neither car may have started at 0; each car is slipped by the first
        claimant only (the earlier in the order of movement, P18).

        Seed 003: "The front car must be plotted for at least 120 mph": its plot as it
        stands when it moves (`Mover.plotted`, after the closest-achievable rule of P29),
        whatever it then ran after a failed test, a replot or a spin (§2.9 (b), P16)."""
        want = m.plot.slip
        car = self.cars[m.player]
        if want <= 0 or m.spun or m.out or not car.on_track or car.space is None:
            return
        ahead = self.track.straight_ahead(car.space)
        front = None if ahead is None else self.occupied.get(ahead)
        if front is None:
            return
        fm = self.movers.get(front)
        reason = ""
        if fm is None or not fm.done:
            reason = f"{front} has not moved this turn"
        elif fm.plotted < 120:
            reason = f"{front} was plotted for {fm.plotted} (a slip needs 120 or more)"
        elif fm.base == 0 or m.base == 0:
            reason = "a car began the turn at 0 mph"
        elif fm.slipped_by is not None:
            reason = f"{fm.slipped_by} already took {front}'s slip"
        here = self.track.space(car.space)
        corner_rule = not self.state.options.optional_slip
        if not reason and corner_rule and here.corner is not None and self.track.is_last_of_corner(car.space):
            reason = "it is on the last space of a corner (optional_slip rule not in play)"
        if reason:
            self.say("slip", f"{m.player} gets no slip behind {front}: {reason}", m.player)
            return
        desired = desired_path(self.track, car, m.plot, want, staggered=self.staggered)
        blocked = self.blocked_for(m.player)
        path: tuple[str, ...] | None = None
        for n in range(want, 0, -1):
            path = plan_path(self.track, car.space, n, desired[:n], blocked, staggered=self.staggered)
            if (
                path is not None
                and corner_rule
                and here.corner is None
                and any(self.track.space(s).corner for s in path)
            ):
                path = None  # P17: a slip alone may not carry a car into a corner (base rule)
            if path is not None:
                break
        if not path:
            self.say("slip", f"{m.player} is behind {front} but has no free space to slip into", m.player)
            return
        assert fm is not None
        fm.slipped_by = m.player
        self.say("slip", f"{m.player} slips {len(path)} behind {front}: {' '.join(path)}", m.player)
        for space_id in path:
            self.enter(m, space_id)
            if m.out or m.spun:
                break
        if m.spun and not m.out:
            self.end_spin(m)

    def involve(self, m: Mover) -> None:
        """Crash involvement (§2.11, P26): a car that ends its move in or beyond a row marked
        by an earlier crash this turn rolls on the chance table, -2 if 0-2 rows past, -1 if
        3 or more, another -1 if the row is 3-wide; 1 skill chip bypasses it at -2/-3, else
        2 (P5); on option tyres 1 wear may replace the roll (P12)."""
        for mark in list(self.crash_rows):
            car = self.cars[m.player]
            if mark.by == m.player or car.space is None or car.progress < mark.progress:
                continue
            past = car.progress - mark.progress
            modifier = (-2 if past <= 2 else -1) - (1 if mark.three_wide else 0)
            why = f"{past} rows past {mark.by}'s crash in row {mark.row}, {modifier:+d}"
            if (
                car.tyres is Tyre.OPTION
                and m.plot.wear_first
                and car.wear >= 1
                and SkillTable.CRASH not in m.plot.skill
            ):
                self.spend_wear(m, 1, f"instead of the chance roll ({why}), on option tyres")
                continue
            outcome = self.roll_on(m, CHANCE, SkillTable.CRASH, why, modifier=modifier, cost=1 if modifier <= -2 else 2)
            if outcome is Outcome.SPIN:
                self.say("spin", f"{m.player} spins avoiding the crash", m.player)
                m.spun = True
                self.end_spin(m)
                return
            if outcome is Outcome.CRASH:
                self.crash_on_course(m, car.space)
                return

    def enter_pits(self, m: Mover) -> None:
        """Seed "Entering the Pits": after completing its move on a red-arrow space a car
        that asked for it (PIT OPTION|PRIME) moves sideways into the entrance lane, at any
        speed, even after a spin."""
        car = self.cars[m.player]
        if m.plot.pit is None or m.out or car.space is None or m.rows_past is not None:
            return
        if self.track.pit is None or not car.on_track or not self.track.space(car.space).pit_arrow:
            return
        del self.occupied[car.space]
        self.arrivals += 1
        stop = PitStop(
            PitStage.ENTRANCE, car.progress, self.race_turn * 100 + self.arrivals, m.plot.pit, self.race_turn
        )
        self.cars[m.player] = replace(car, space=None, pit=stop, line_run=None, corner_run=None, barred_line=None)
        self.say("pit", f"{m.player} enters the pits from {car.space} for {m.plot.pit.value} tyres", m.player)

    # -- the pits (§2.13, P28) -----------------------------------------------------------
    def run_pits(self, movers: Sequence[Mover]) -> None:
        """Cars in the pits move after every car on the track (P28), furthest down the pit
        lane first, then by who got to that space first."""
        pit = self.track.pit
        if pit is None:
            return

        def key(m: Mover) -> tuple[int, int]:
            stop = self.cars[m.player].pit
            assert stop is not None
            return (-stop.progress, stop.arrival)

        ordered = sorted(movers, key=key)
        served: dict[tuple[str, ...], tuple[str, int]] = {}
        exits: list[Mover] = []
        for m in ordered:
            car = self.cars[m.player]
            stop = car.pit
            assert stop is not None
            m.order_index = len(self.movers) + len(exits)
            if stop.stage is PitStage.LANE:
                exits.append(m)
                continue
            # the turn after entering: slow to the limit by the usual means
            lim = limits(car, self.track)
            m.excess = max(0, lim.free_low - m.speed)
            if m.excess:
                self.decelerate(m, m.excess, "slowing for the pit lane")
                if m.out:
                    continue
                if m.spun or m.spin_at_end:
                    m.spun = True
                    self.say(
                        "pit",
                        f"{m.player} spins slowing for the pits: replots 0 and stays in the entrance lane",
                        m.player,
                    )
                    continue
            team = self.state.options.team_of(m.player)
            mate, entered = served.get(team, ("", 0))
            if mate and entered == stop.entered:
                # seed "If playing with teams": two team-mates in the entrance lane in one
                # turn stacked their pit; the car further down goes on, the other waits 3
                # spaces on in the entrance lane and shares the first car's crew result
                shift = self.crew.get(mate, 0)
                self.cars[m.player] = replace(
                    car, pit=replace(stop, progress=stop.progress + 3 + shift), progress=stop.progress + 3 + shift
                )
                shared = f", and shares {mate}'s crew result ({shift:+d})" if shift else ""
                self.say(
                    "pit",
                    f"{m.player}'s team stacked its pit behind {mate}: {m.player} waits, 3 spaces on in the entrance lane{shared}",
                    m.player,
                )
                continue
            served[team] = (m.player, stop.entered)
            self.change_tyres(m)

        for m in exits:
            self.exit_pits(m, exits)

    def change_tyres(self, m: Mover) -> None:
        """Seed "Tire Change": old wear discarded, the compound's rating received; then the
        optional pit crew roll (PUSH YES), +1 or -1 space along the pit lane."""
        car = self.cars[m.player]
        stop = car.pit
        assert stop is not None and car.design is not None
        tyre = m.plot.pit or stop.tyre
        wear = car.design.tyre_wear(tyre, self.state.laps)
        used = car.tyres_used if tyre in car.tyres_used else (*car.tyres_used, tyre)
        self.say(
            "pit",
            f"{m.player} moves into the pit lane and fits {tyre.value} tyres: wear {car.wear} discarded, {wear} new",
            m.player,
        )
        shift = 0
        if m.plot.push:
            outcome = self.roll_on(m, PIT_CREW, None, "pushing the pit crew")
            shift = {Outcome.PLUS_SPACE: 1, Outcome.MINUS_SPACE: -1}.get(outcome, 0)
        self.crew[m.player] = shift
        self.arrivals += 1
        arrival = stop.arrival if not shift else self.race_turn * 100 + self.arrivals
        self.cars[m.player] = replace(
            car,
            wear=wear,
            tyres=tyre,
            tyres_used=used,
            progress=stop.progress + shift,
            pit=PitStop(PitStage.LANE, stop.progress + shift, arrival, tyre, stop.entered),
        )

    def exit_pits(self, m: Mover, exits: Sequence[Mover]) -> None:
        """Seed "Exiting the Pits": back onto the track, sideways to the empty space on the
        pit side closest to the car; cars from one pit space: the first to get there goes
        furthest inside; cars without room wait beside the outside edge (not off track)."""
        pit = self.track.pit
        car = self.cars[m.player]
        stop = car.pit
        if stop is None:
            return  # placed with the first car of its pit space
        assert pit is not None
        rows = self.track.rows
        row = (stop.progress - 1) % rows + 1
        lap = (stop.progress - row) // rows
        group = sorted(
            (
                o
                for o in exits
                if (self.cars[o.player].pit or stop).progress == stop.progress and self.cars[o.player].pit is not None
            ),
            key=lambda o: (self.cars[o.player].pit or stop).arrival,
        )
        if group[0].player != m.player:
            return  # placed with the first of its pit space
        lanes = range(2, -1, -1) if pit.side > 0 else range(3)
        empty: list[str] = []
        for lane in lanes:
            space = self.track.covering(lane, row)
            if space is not None and space.id not in self.occupied and space.id not in empty:
                empty.append(space.id)
        taken = empty[: len(group)]
        for index, o in enumerate(group):
            ocar = self.cars[o.player]
            if index < len(taken):
                space_id = taken[len(taken) - 1 - index]  # the first arrival goes furthest inside
                self.occupied[space_id] = o.player
                placed = replace(ocar, space=space_id, pit=None, off_track=0, overflow=False)
                self.say("pit", f"{o.player} leaves the pits into {space_id} at {o.speed}", o.player)
            else:
                edge = self.track.edge_space(row, pit.side)
                placed = replace(ocar, space=edge.id, pit=None, off_track=pit.side, overflow=True)
                self.say(
                    "pit",
                    f"{o.player} leaves the pits but has no room: beside {edge.id}, it must be on track by the end of next turn",
                    o.player,
                )
            space = self.track.space(placed.space or "")
            progress = lap * rows + space.row
            self.cars[o.player] = replace(placed, lap=lap, progress=progress)
            finish = self.state.finish_progress()
            if progress >= finish:
                o.rows_past = progress - finish
                self.say("finish", f"{o.player} crosses the finish line", o.player)

    # -- moving space by space -----------------------------------------------------------
    def advance(self, m: Mover, space_id: str, changes: Mapping[str, object]) -> None:
        """Lap, progress and finish bookkeeping for a move into (or beside) `space_id`."""
        car = self.cars[m.player]
        assert car.space is not None
        track = self.track
        before, after = track.space(car.space), track.space(space_id)
        lap = car.lap + (1 if after.row < before.row else 0)
        progress = lap * track.rows + after.row
        self.cars[m.player] = replace(car, space=space_id, lap=lap, progress=progress, **changes)  # type: ignore[arg-type]
        m.moved += 1
        finish = self.state.finish_progress()
        if progress >= finish:
            if m.rows_past is None:
                self.say("finish", f"{m.player} crosses the finish line", m.player)
            m.rows_past = progress - finish

    def emergency_brake(self, m: Mover, speed: int) -> None:
        """P15 rear ending: brake to the greatest usable distance; P14: charge the total."""
        lost = m.speed - speed
        self.say("brake", f"{m.player} cannot use {m.speed // 20} spaces and emergency brakes to {speed}", m.player)
        m.speed = speed
        m.excess += lost
        self.decelerate(m, m.excess, "emergency braking")

    def enter(self, m: Mover, space_id: str) -> None:
        m.entered.append(space_id)
        car = self.cars[m.player]
        assert car.space is not None
        track = self.track
        step = step_line(track, car.line_run, car.barred_line, space_id)
        if m.lineless:
            # P11 / seed: a car attempting a forced pass may not use a racing line
            left = step.left
            if (
                left is None
                and car.line_run is not None
                and step.run is not None
                and step.run.line == car.line_run.line
            ):
                left = car.line_run.line
            step = LineStep(None, left)
        leaves = (
            step.left is not None
            and car.corner_run is not None
            and track.lines[step.left].corner == car.corner_run.corner
        )
        entry = enter_space(track, car.corner_run, space_id, m.speed, line_bonus(track, step.run, space_id), leaves)
        if self.occupied.get(car.space) == m.player:
            del self.occupied[car.space]
        if space_id not in self.occupied:
            self.occupied[space_id] = m.player
        self.advance(
            m,
            space_id,
            {
                "line_run": step.run,
                "corner_run": entry.run,
                "barred_line": car.barred_line if entry.run is not None else None,
            },
        )
        if entry.run is not None and entry.due > entry.run.tier:
            self.pay_corner(m, entry, space_id)

    def pay_corner(self, m: Mover, entry: CornerEntry, space_id: str) -> None:
        run = entry.run
        assert run is not None
        space = self.track.space(space_id)
        if entry.due >= CORNER_CRASH_TIER:
            # P10: 80+ over any space: crash off course, out, no crash-row mark
            self.say(
                "crash",
                f"{m.player} enters {space_id} ({space.speed}) at {m.speed}: {entry.excess} over, crashes off course",
                m.player,
            )
            self.remove(m, "crashed off course")
            return
        why = f"corner {run.corner} at {m.speed}, {entry.due * 20} over"
        paid, outcome, unpaid = self.pay(
            m,
            CORNERING_CHART[entry.due],
            Paid(run.wear_paid, run.rolled),
            why,
            lambda: self.roll_on(m, CHANCE, SkillTable.CHANCE, why),
            option_tyres_replace_roll=True,  # seed: 1 wear instead of the chance table, any situation
        )
        car = self.cars[m.player]
        self.cars[m.player] = replace(
            car, corner_run=CornerRun(run.corner, entry.due, paid.wear, paid.rolled, run.worst_raw)
        )
        if outcome is Outcome.CRASH:
            self.crash_on_course(m, space_id)
        elif outcome is Outcome.SPIN or unpaid:
            if outcome is Outcome.SPIN:
                self.say("spin", f"{m.player} spins in {space_id}", m.player)
            m.spun = True

    def crash_on_course(self, m: Mover, space_id: str) -> None:
        """§2.11: the car is removed and its row is marked for the rest of the turn (P26)."""
        car = self.cars[m.player]
        space = self.track.space(space_id)
        self.crash_rows.append(CrashMark(car.progress, space.row, self.track.width(space.row) == 3, m.player))
        self.say("crash", f"{m.player} crashes on course in {space_id}; row {space.row} is marked", m.player)
        self.remove(m, "crashed on course")

    def push_test(self, m: Mover, kind: str) -> None:
        car = self.cars[m.player]
        options = self.state.options
        replaceable = kind in ("acceleration", "start speed") or (
            kind == "top speed" and options.option_tyres_top_speed
        )
        if replaceable and car.tyres is Tyre.OPTION and m.plot.wear_first and car.wear >= 1:
            self.spend_wear(m, 1, f"instead of the {kind} test, on option tyres")
            return
        if kind == "start speed":
            outcome = self.roll_on(m, START_TEST, SkillTable.START, f"start speed {m.speed}")
        else:
            skill = SkillTable.TOP if kind == "top speed" else SkillTable.ACCEL
            outcome = self.roll_on(m, ACCEL_TOP_TEST, skill, f"{kind} {m.speed}")
        if outcome is Outcome.GAIN:
            return
        if outcome is Outcome.MISSHIFT:
            m.speed = max(0, m.speed - 40)
            self.say("test", f"{m.player} mis-shifts: replots {m.speed}", m.player)
            return
        if outcome is Outcome.STALL:
            m.speed = 0
            self.engine_damage(m, "acc", "stalls: replots 0")
            return
        m.speed -= 20
        self.engine_damage(m, "top" if kind == "top speed" else "acc", f"fails the {kind} test: replots {m.speed}")

    def engine_damage(self, m: Mover, rating: str, what: str) -> None:
        car = self.cars[m.player]
        damage = car.engine_damage + 1
        car = replace(car, engine_damage=damage, **{rating: max(0, getattr(car, rating) - 20)})
        self.cars[m.player] = car
        label = "acceleration" if rating == "acc" else "top speed"
        self.say("damage", f"{m.player} {what}; engine damage: {label} now {getattr(car, rating)}", m.player)
        if damage >= 2:
            m.engine_failed = True

    def brake_test(self, m: Mover, why: str) -> Outcome:
        car = self.cars[m.player]
        if car.tyres is Tyre.OPTION and m.plot.wear_first and car.wear >= 1:
            # P12: on option tyres 1 wear may replace the deceleration (brakes) test
            self.spend_wear(m, 1, f"instead of the brakes test ({why}), on option tyres")
            return Outcome.SAFE
        outcome = self.roll_on(m, BRAKES_TEST, SkillTable.BRAKES, why)
        if outcome is Outcome.BRAKE_FAIL:
            car = self.cars[m.player]
            damage = car.brake_damage + 1
            if damage >= 2:
                self.say("damage", f"{m.player}'s brakes fail completely", m.player)
                self.cars[m.player] = replace(car, brake_damage=damage)
                self.remove(m, "brake failure")
                return outcome
            # P25: 1 wear now plus the damage; no recurring penalty
            self.cars[m.player] = replace(car, brake_damage=damage, dec=max(0, car.dec - 20))
            self.say("damage", f"{m.player}'s brakes are damaged: deceleration now {car.dec - 20}", m.player)
            if self.cars[m.player].wear >= 1:
                self.spend_wear(m, 1, "failed brakes test")
            else:
                self.say("unpaid", f"{m.player} cannot pay the wear of the failed brakes test: spin", m.player)
                m.spun = True
        return outcome

    def decelerate(self, m: Mover, excess: int, why: str) -> None:
        """The deceleration chart for `excess` mph over the car's deceleration, counting what
        was already paid this turn (P14)."""
        row = min(tier(excess), DECELERATION_SPIN_TIER)
        if row == 0:
            return
        paid, _, unpaid = self.pay(
            m,
            DECELERATION_CHART[row],
            m.decel_paid,
            f"{why}: {excess} over",
            lambda: self.brake_test(m, f"{why}: {excess} over"),
            option_tyres_replace_roll=False,  # brake_test itself applies the option-tyre rule
        )
        m.decel_paid = paid
        if unpaid and not m.out:
            m.spun = True
        if row >= DECELERATION_SPIN_TIER:
            m.spin_at_end = True

    def end_spin(self, m: Mover) -> None:
        """P19: the car stops where it spun, speed 0; a line it spun on gives no more benefit."""
        car = self.cars[m.player]
        barred = car.line_run.line if car.line_run is not None else car.barred_line
        self.cars[m.player] = replace(car, line_run=None, barred_line=barred if car.corner_run is not None else None)
        m.spun = True

    def remove(self, m: Mover, why: str) -> None:
        car = self.cars[m.player]
        if car.space is not None and self.occupied.get(car.space) == m.player:
            del self.occupied[car.space]
        self.cars[m.player] = replace(
            car,
            status=Status.OUT,
            space=None,
            speed=0,
            out_turn=self.race_turn,
            note=why,
            line_run=None,
            corner_run=None,
            off_track=0,
            overflow=False,
            pit=None,
        )
        m.out = why
        self.say("out", f"{m.player} is out of the race ({why})", m.player)

    def retire(self, m: Mover, why: str) -> None:
        """P24: after moving at half speed the car leaves the track."""
        self.remove(m, why)

    def finish_turn(self, movers: Mapping[str, Mover]) -> RaceState:
        options = self.state.options
        for player, m in movers.items():
            car = self.cars[player]
            if car.status is not Status.RACING:
                continue
            if m.rows_past is not None:
                # P27: same-turn finishers by rows past the line, then order of movement;
                # a finisher off track or spun is last among them
                key = (self.race_turn, 1 if m.spun or car.off_track else 0, -m.rows_past, m.order_index)
                if car.space is not None and self.occupied.get(car.space) == player:
                    del self.occupied[car.space]
                finished = replace(
                    car,
                    status=Status.FINISHED,
                    finish_key=key,
                    space=None,
                    speed=m.speed,
                    spun=m.spun,
                    off_track=0,
                    overflow=False,
                )
                if options.tyre_rule is TyreRule.DISQUALIFY and not car.ran_both_compounds():
                    # P4 (tyre_rule=disqualify): a finisher that never ran both compounds
                    finished = replace(
                        finished,
                        status=Status.OUT,
                        note="disqualified: did not run both tyre compounds",
                        out_turn=self.race_turn,
                    )
                    self.say(
                        "out", f"{player} finishes but is disqualified: it did not run both tyre compounds", player
                    )
                self.cars[player] = finished
                continue
            if car.overflow and m.started_overflow:
                # seed "Multiple Cars Reentering": it had to be on track by now
                car = replace(car, overflow=False)
                self.say(
                    "offtrack", f"{player} did not get back on track after leaving the pits: it is off track", player
                )
            before = self.state.car(player)
            still = m.moved == 0 and car.pit == before.pit and car.progress == before.progress
            car = replace(
                car, speed=0 if m.spun else m.speed, spun=m.spun, standing=before.standing + 1 if still else 0
            )
            self.cars[player] = car
            if car.off_track and not car.overflow:
                self.off_track_penalty(m)
            if self.cars[player].status is Status.RACING and car.standing >= STOPPED_TURNS:
                self.remove(m, f"stopped: it has not moved for {STOPPED_TURNS} turns in a row")
        cars = tuple(self.cars[c.player] for c in self.state.cars)
        phase = Phase.FINISHED if all(c.status is not Status.RACING for c in cars) else Phase.RACE
        return replace(self.state, cars=cars, race_turn=self.race_turn, phase=phase)

    def off_track_penalty(self, m: Mover) -> None:
        """P22/P23: at the end of every turn off track the car loses 1 wear and 1 skill chip;
        one it cannot pay (or, with offtrack_removal=neither, neither) removes it."""
        car = self.cars[m.player]
        wear, skill = min(1, car.wear), min(1, car.skill)
        self.cars[m.player] = replace(car, wear=car.wear - wear, skill=car.skill - skill)
        self.say(
            "offtrack",
            f"{m.player} is off track: loses {wear} wear and {skill} skill ({car.wear - wear} and {car.skill - skill} left)",
            m.player,
        )
        missing = (wear == 0) + (skill == 0)
        either = self.state.options.offtrack_removal is OffTrackRemoval.EITHER_MISSING
        if (either and missing >= 1) or missing == 2:
            self.remove(m, "stuck in the kitty-litter")


def resolve_race(state: RaceState, orders: Mapping[str, Sequence[Order]], rng: random.Random) -> Resolution[RaceState]:
    """One race turn (§2.15)."""
    plots = {p: plot_of(o) for p, o in orders.items()}
    turn = RaceTurn(state, rng)
    new_state = turn.run(plots)
    return Resolution(new_state, tuple(turn.events))
