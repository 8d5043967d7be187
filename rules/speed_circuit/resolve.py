"""Resolving a turn: the set-up turns (car design, qualifying) and the race turn
sequence of speed-circuit.md §2.15.

Every 2d6 roll is drawn from the turn's rng and reported as an `Event` with its `Roll`.
Part 2 (slipstreaming, forced passing, off-track, crash involvement, pits) plugs in where
the comments marked "part 2" say; the plot already carries its requests.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rules.api import Event, Roll
from rules.speed_circuit.car import DEFAULT_DESIGN, Car, CornerRun, Design, Status, Tyre
from rules.speed_circuit.corner import CornerEntry, coast, enter_space
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.move import (
    desired_path,
    line_bonus,
    longest_path,
    order_of_movement,
    step_line,
)
from rules.speed_circuit.plot import (
    BidOrder,
    DesignOrder,
    Order,
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
    START_TEST,
    Outcome,
    Penalty,
    Table,
    tier,
)

# -- set-up turns --------------------------------------------------------------------------


def resolve_design(state: RaceState, orders: Mapping[str, Sequence[Order]]) -> tuple[RaceState, list[Event]]:
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
    return replace(state, cars=tuple(cars), phase=Phase.QUALIFYING), events


def build_car(car: Car, design: Design, tyre: Tyre, laps: int) -> Car:
    return replace(
        car,
        design=design,
        tyres=tyre,
        acc=design.rating("ACC"),
        dec=design.rating("DEC"),
        top=design.rating("TOP"),
        start=design.rating("START"),
        wear=design.tyre_wear(tyre, laps),
        skill=design.skill_chips(laps),
    )


def resolve_qualifying(state: RaceState, orders: Mapping[str, Sequence[Order]], rng: random.Random) -> tuple[RaceState, list[Event]]:
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
    return replace(state, cars=tuple(cars[c.player] for c in state.cars), phase=Phase.RACE), events


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
    order_index: int = 0
    excess: int = 0
    decel_paid: Paid = field(default_factory=Paid)
    spin_at_end: bool = False
    spun: bool = False
    out: str | None = None
    engine_failed: bool = False
    rows_past: int | None = None


def plot_speed(state: RaceState, car: Car, plot: Plot) -> int:
    """The speed a plot asks for: SPEED n, MPS, or (no SPEED line) the safe plot (§8)."""
    if plot.mps:
        return car.speed
    if plot.speed is None:
        return safe_speed(state, car)
    return plot.speed


SAFE_LOOKAHEAD = 5
"""Turns of hardest free braking the safe plot checks beyond the turn it plots."""


def safe_speed(state: RaceState, car: Car) -> int:
    """§8 NMR: the highest speed within the car's limits whose planned path (keeping lane,
    following lines) needs no wear, test or roll, or the least deceleration that gets there.

    [DES] "Keeps the car on track": the speed must also leave the car able to make the
    following turns at no cost by braking at its free deceleration, so that a car plotted
    for is not left too fast in front of a slow corner.
    """
    lim = limits(car, state.track)
    for speed in range(lim.safe, -1, -20):
        if _coasts(state, car, speed, SAFE_LOOKAHEAD):
            return speed
    return 0


def _coasts(state: RaceState, car: Car, speed: int, turns: int) -> bool:
    from rules.speed_circuit.plot import PathKind, PathOrder

    plot = Plot(path=PathOrder(PathKind.LINE))
    path = desired_path(state.track, car, plot, speed // 20, staggered=state.options.staggered_lane_change)
    after = coast(state.track, car, path, speed)
    if after is None:
        return False
    if speed == 0 or turns == 0:
        return True
    return _coasts(state, after, max(0, speed - car.dec), turns - 1)


class RaceTurn:
    def __init__(self, state: RaceState, rng: random.Random) -> None:
        self.state = state
        self.track = state.track
        self.rng = rng
        self.events: list[Event] = []
        self.cars: dict[str, Car] = {c.player: c for c in state.cars}
        self.occupied: dict[str, str] = {c.space: c.player for c in state.cars if c.status is Status.RACING and c.space is not None}
        self.crash_rows: list[int] = []  # part 2: crash involvement reads these marks
        self.race_turn = state.race_turn + 1

    # -- reporting and dice ------------------------------------------------------------
    def say(self, kind: str, text: str, player: str, roll: Roll | None = None) -> None:
        self.events.append(Event(kind, text, (player,), roll))

    def roll_on(self, m: Mover, table: Table, skill: SkillTable, why: str) -> Outcome:
        """Roll 2d6 on `table`, or bypass it with skill chips if the plot says so (P5)."""
        car = self.cars[m.player]
        cost = table.skill_cost
        if cost is not None and skill in m.plot.skill and car.skill >= cost:
            self.cars[m.player] = replace(car, skill=car.skill - cost)
            best = table.rows[0][2]
            self.say("skill", f"{m.player} spends {cost} skill to pass the {table.name} ({why}): {best.value}", m.player)
            return best
        roll = Roll.of(self.rng, 2, 6)
        outcome = table.lookup(roll.total)
        self.say("roll", f"{m.player} rolls {roll.total} on the {table.name} ({why}): {outcome.value}", m.player, roll)
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
        movers: dict[str, Mover] = {}
        for car in self.state.racing():
            plot = plots.get(car.player, Plot())
            asked = plot_speed(self.state, car, plot)
            speed = closest_achievable(car, self.track, asked)
            if speed != asked:
                self.say("plot", f"{car.player}'s plot of {asked} is impossible; the closest achievable is {speed}", car.player)
            movers[car.player] = Mover(car.player, plot, car.speed, speed)
        seats = {c.player: i for i, c in enumerate(self.state.cars)}
        order = order_of_movement(self.track, [self.cars[p] for p in movers], {p: m.speed for p, m in movers.items()}, seats)
        self.events.append(Event("order", "Order of movement: " + ", ".join(f"{p} ({movers[p].speed})" for p in order), tuple(order)))
        for index, player in enumerate(order):
            m = movers[player]
            m.order_index = index
            self.move(m)
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
                return
        if m.engine_failed:
            m.speed = (m.speed // 40) * 20  # P24: half, floored to a multiple of 20
            self.say("engine", f"{m.player}'s engine fails: moves {m.speed} this turn, then leaves the track", m.player)
        # 3. movement space by space
        car = self.cars[m.player]
        assert car.space is not None
        steps = m.speed // 20
        staggered = self.state.options.staggered_lane_change
        desired = desired_path(self.track, car, m.plot, steps, staggered=staggered)
        path = longest_path(self.track, car.space, steps, desired, self.blocked_for(m.player), staggered=staggered)
        if len(path) < steps:
            self.emergency_brake(m, len(path) * 20)
            if m.out:
                return
            if m.spun:
                self.end_spin(m)
                return
        elif list(path) != desired[:steps]:
            self.say("path", f"{m.player} is blocked on the plotted path and takes {' '.join(path)}", m.player)
        for space_id in path:
            self.enter(m, space_id)
            if m.out or m.spun:
                break
        if m.out:
            return
        if m.spin_at_end and not m.spun:
            self.say("spin", f"{m.player} spins after braking 80 mph or more over the deceleration limit", m.player)
            m.spun = True
        if m.spun:
            self.end_spin(m)
        if m.engine_failed and m.rows_past is None:
            self.retire(m, "engine failure")

    def blocked_for(self, player: str) -> Callable[[str], bool]:
        return lambda space: space in self.occupied and self.occupied[space] != player

    def push_test(self, m: Mover, kind: str) -> None:
        car = self.cars[m.player]
        options = self.state.options
        replaceable = kind in ("acceleration", "start speed") or (kind == "top speed" and options.option_tyres_top_speed)
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

    def emergency_brake(self, m: Mover, speed: int) -> None:
        """P15 rear ending: brake to the greatest usable distance; P14: charge the total."""
        lost = m.speed - speed
        self.say("brake", f"{m.player} cannot use {m.speed // 20} spaces and emergency brakes to {speed}", m.player)
        m.speed = speed
        m.excess += lost
        self.decelerate(m, m.excess, "emergency braking")

    def enter(self, m: Mover, space_id: str) -> None:
        car = self.cars[m.player]
        assert car.space is not None
        track = self.track
        before, after = track.space(car.space), track.space(space_id)
        lap = car.lap + (1 if after.row < before.row else 0)
        progress = lap * track.rows + after.row
        step = step_line(track, car.line_run, car.barred_line, space_id)
        left = step.left is not None and car.corner_run is not None and track.lines[step.left].corner == car.corner_run.corner
        entry = enter_space(track, car.corner_run, space_id, m.speed, line_bonus(track, step.run, space_id), left)
        del self.occupied[car.space]
        self.occupied[space_id] = m.player
        self.cars[m.player] = replace(
            car,
            space=space_id,
            lap=lap,
            progress=progress,
            line_run=step.run,
            corner_run=entry.run,
            barred_line=car.barred_line if entry.run is not None else None,
        )
        finish = self.state.finish_progress()
        if progress >= finish:
            if m.rows_past is None:
                self.say("finish", f"{m.player} crosses the finish line", m.player)
            m.rows_past = progress - finish
        if entry.run is not None and entry.due > entry.run.tier:
            self.pay_corner(m, entry, space_id)

    def pay_corner(self, m: Mover, entry: CornerEntry, space_id: str) -> None:
        run = entry.run
        assert run is not None
        space = self.track.space(space_id)
        if entry.due >= CORNER_CRASH_TIER:
            # P10: 80+ over any space: crash off course, out, no crash-row mark
            self.say("crash", f"{m.player} enters {space_id} ({space.speed}) at {m.speed}: {entry.excess} over, crashes off course", m.player)
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
        self.cars[m.player] = replace(car, corner_run=CornerRun(run.corner, entry.due, paid.wear, paid.rolled, run.worst_raw))
        if outcome is Outcome.CRASH:
            self.crash_rows.append(space.row)  # part 2: crash involvement
            self.say("crash", f"{m.player} crashes on course in {space_id}", m.player)
            self.remove(m, "crashed on course")
        elif outcome is Outcome.SPIN or unpaid:
            if outcome is Outcome.SPIN:
                self.say("spin", f"{m.player} spins in {space_id}", m.player)
            m.spun = True

    def end_spin(self, m: Mover) -> None:
        """P19: the car stops where it spun, speed 0; a line it spun on gives no more benefit."""
        car = self.cars[m.player]
        barred = car.line_run.line if car.line_run is not None else car.barred_line
        self.cars[m.player] = replace(car, line_run=None, barred_line=barred if car.corner_run is not None else None)
        m.spun = True

    def remove(self, m: Mover, why: str) -> None:
        car = self.cars[m.player]
        if car.space is not None:
            self.occupied.pop(car.space, None)
        self.cars[m.player] = replace(car, status=Status.OUT, space=None, speed=0, out_turn=self.race_turn, note=why, line_run=None, corner_run=None)
        m.out = why
        self.say("out", f"{m.player} is out of the race ({why})", m.player)

    def retire(self, m: Mover, why: str) -> None:
        """P24: after moving at half speed the car leaves the track."""
        self.remove(m, why)

    def finish_turn(self, movers: Mapping[str, Mover]) -> RaceState:
        for player, m in movers.items():
            car = self.cars[player]
            if car.status is not Status.RACING:
                continue
            if m.rows_past is not None:
                # P27: same-turn finishers by rows past the line, then order of movement;
                # a spun finisher is last among them
                key = (self.race_turn, 1 if m.spun else 0, -m.rows_past, m.order_index)
                if car.space is not None:
                    self.occupied.pop(car.space, None)
                self.cars[player] = replace(car, status=Status.FINISHED, finish_key=key, space=None, speed=m.speed, spun=m.spun)
                continue
            self.cars[player] = replace(car, speed=0 if m.spun else m.speed, spun=m.spun)
        cars = tuple(self.cars[c.player] for c in self.state.cars)
        phase = Phase.FINISHED if all(c.status is not Status.RACING for c in cars) else Phase.RACE
        return replace(self.state, cars=cars, race_turn=self.race_turn, phase=phase)


def resolve_race(state: RaceState, orders: Mapping[str, Sequence[Order]], rng: random.Random) -> tuple[RaceState, list[Event]]:
    plots = {p: plot_of(o) for p, o in orders.items()}
    turn = RaceTurn(state, rng)
    new_state = turn.run(plots)
    return new_state, turn.events
