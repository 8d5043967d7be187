"""The robot driver: a Speed Circuit driver for a seat no person plays.

It sees what a driver at that seat sees: its own car card, wear, chips and damage, and the
public race (every car's space, speed, lap and pit stage, the track); never another
driver's plot. Its orders are the orders a player could send: `robot_orders` is legal and
complete whenever the seat has something to order (a property test checks it).

How it drives (speed-circuit.md; every cost as the resolver charges it):

* **Design (turn 1).** Acceleration, deceleration and top speed bought with the start speed
  (a driver that plans to finish level with a faster car loses on the straights: a greedy
  driver on TOP 200 beat it); the starting tyre set bought up and the other set
  bought down, since the compulsory stop (P4) comes on the last lap and the second set only
  has to finish it. It starts on OPTION tyres: there 1 wear replaces a chance roll, an
  acceleration or start speed test and a brakes test (P12), so it never has to roll.
* **Qualifying (turn 2).** It bids a share of its starting set for the grid (P31: wear
  from the starting set, lost): the front of the grid is worth the wear in a field where
  passing means a table roll.
* **The race.** Like the safe plot (§8) it follows the racing lines and steers round the
  cars that move after it; unlike it, it spends wear, never dice: each turn it takes the
  fastest speed whose move costs only wear it can spare (corners over their posted speed,
  braking beyond its deceleration, a push on option tyres) and from which it can still
  brake through the corners ahead at its free deceleration paying only wear it has left.
  Wear is spread over the stint: it keeps back the share of its set that the rest of the
  stint will want. It asks for a slipstream (SLIP 2) when its move ends outside a corner
  with room to brake after the slip.
* **The stop.** It plans the compulsory stop on the last lap as the safe plot does, pushes
  the pit crew (PUSH YES: the pit crew table gains a space more often than it loses one)
  and leaves the pits as fast as the limit allows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from rules.api import RobotLevel
from rules.speed_circuit.car import Car, CornerRun, Design, PitStage, Status, Tyre
from rules.speed_circuit.corner import enter_space
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.move import desired_path, line_bonus, moves_first, plan_path, step_line
from rules.speed_circuit.plot import (
    BidOrder,
    DesignOrder,
    Limits,
    Order,
    PathKind,
    PathOrder,
    PayOrder,
    PitOrder,
    Plot,
    PushOrder,
    SkillOrder,
    SkillTable,
    SlipOrder,
    SpeedOrder,
    TyresOrder,
    limits,
)
from rules.speed_circuit.resolve import PlannedMove, pit_plan, safe_plot
from rules.speed_circuit.tables import CORNER_CRASH_TIER, CORNERING_CHART, tier
from rules.speed_circuit.track import Track

SAFETY = 1
"""Wear it never plans to spend while corners remain in its stint: a car ahead that does not
get out of its way can push it off a racing line, and then a corner costs more than planned."""

LOOKAHEAD = 5
"""Turns of free braking it checks beyond the move it plots (as the safe plot, §8)."""

DESIGN = Design(acc=1, dec=1, top=1, start=-1, prime=-2, option=2, skill=0)
"""ACC 60, DEC 60, TOP 180, START 40; OPTION 5 wear a lap, PRIME 1 a lap; 2 chips a lap."""


def robot_orders(
    state: RaceState, player: str, rng: random.Random, level: RobotLevel = RobotLevel.NORMAL
) -> tuple[Order, ...]:
    """The robot's orders for `player` in the open turn (none when the car has none to give).
    At the easy level it builds and starts its car as the normal robot does, bids nothing
    for the grid and races the safe plot (§8): it never spends wear to go faster."""
    state = _seen(state, player)
    car = state.car(player)
    if car.status is not Status.RACING:
        return ()
    if state.phase is Phase.DESIGN:
        return (DesignOrder(DESIGN), TyresOrder(Tyre.OPTION))
    if state.phase is Phase.QUALIFYING:
        return (BidOrder(0, 0),) if level is RobotLevel.EASY else (_bid(state, car),)
    if state.phase is not Phase.RACE:
        return ()
    if level is RobotLevel.EASY:
        return _safe(state, car)
    return _race(state, car)


def _safe(state: RaceState, car: Car) -> tuple[Order, ...]:
    """The safe plot (§8) as orders: its speed, its path, its stop."""
    plot = safe_plot(state, car)
    if car.pit is not None or car.space is None or car.off_track:
        return (SpeedOrder(plot.speed), PayOrder(True))
    path = PathOrder(PathKind.LINE) if plot.lanes is None else PathOrder(PathKind.LANES, plot.lanes)
    return (SpeedOrder(plot.speed), path, PayOrder(True), *((PitOrder(plot.pit),) if plot.pit else ()))


def _seen(state: RaceState, player: str) -> RaceState:
    """The race as `player` sees it: what another car has paid for the corner it is in, the
    racing line it follows and the line it may no longer use are that driver's private
    lines (view.private_lines), so they are blanked; the rest (space, speed, wear, skill,
    tyres, the card published at the design, damage reported in the results) is public."""
    return replace(
        state,
        cars=tuple(
            car if car.player == player else replace(car, corner_run=None, line_run=None, barred_line=None)
            for car in state.cars
        ),
    )


def _bid(state: RaceState, car: Car) -> BidOrder:
    """A third of the starting set and every chip but one (P31: from the starting set only)."""
    return BidOrder(car.wear // 3, max(0, car.skill - 1))


# -- the race ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Move:
    """One speed it may plot: the path, the wear it costs now, whether it pushes (and pays
    the test with a chip: `skill`), and whether the path is the one the lines give."""

    speed: int
    path: tuple[str, ...]
    wear: int
    push: bool
    skill: SkillTable | None
    as_desired: bool
    free: bool


def _race(state: RaceState, car: Car) -> tuple[Order, ...]:
    track = state.track
    lim = limits(car, track)
    if car.pit is not None:
        return _in_pits(state, car, lim)
    if car.space is None or car.off_track:
        return (SpeedOrder(lim.safe), PayOrder(True))
    moves = _moves(state, car, lim)
    if not moves:
        return _safe(state, car)
    planned = [PlannedMove(m.speed, m.path, m.as_desired, m.free) for m in moves]
    stop = pit_plan(state, car, planned)
    chosen = moves[planned.index(stop[0])] if stop is not None else moves[0]
    orders: list[Order] = [SpeedOrder(chosen.speed)]
    if chosen.as_desired:
        orders.append(PathOrder(PathKind.LINE))
    else:
        orders.append(PathOrder(PathKind.LANES, tuple(track.space(s).lane for s in chosen.path)))
    orders.append(PayOrder(True))
    if chosen.skill is not None:
        orders.append(SkillOrder((chosen.skill,)))
    if chosen.push:
        orders.append(PushOrder(True))
    if stop is not None and stop[1]:
        orders.append(PitOrder(next(t for t in Tyre if t not in car.tyres_used)))
    elif _slip_room(state, car, chosen):
        orders.append(SlipOrder(2))
    return tuple(orders)


def _in_pits(state: RaceState, car: Car, lim: Limits) -> tuple[Order, ...]:
    """The fastest speed the pits allow whose slowing costs only wear it has (else the
    fastest, as the safe plot); PUSH YES for the pit crew roll when the tyres are changed."""
    assert car.pit is not None
    speed = lim.safe
    if car.pit.stage is PitStage.ENTRANCE:
        for candidate in range(lim.safe, -1, -20):
            cost = _decel_wear(car, lim, candidate)
            if cost is not None and cost <= car.wear:
                speed = candidate
                break
        return (SpeedOrder(speed), PayOrder(True), PushOrder(True))
    return (SpeedOrder(speed), PayOrder(True))


def _moves(state: RaceState, car: Car, lim: Limits) -> list[_Move]:
    """Every speed it may plot this turn, fastest first, that costs only wear it can spare
    and leaves it able to brake through what comes next (only the fastest of them unless
    the compulsory stop is to be planned)."""
    track = state.track
    assert car.space is not None
    staggered = state.options.staggered_lane_change
    staying = {c.space for c in state.cars if c.on_track and c.player != car.player and not moves_first(car, c)}
    staying |= _ahead_ends(state, car, lim.highest // 20)
    line = Plot(path=PathOrder(PathKind.LINE))
    spare = car.wear - _reserve(state, car)
    # the compulsory stop (resolve.pit_plan) chooses among every speed; otherwise the fastest does
    every = track.pit is not None and not car.ran_both_compounds() and car.lap == state.laps
    found: list[_Move] = []
    for speed in range(lim.highest, -1, -20):
        push = speed > lim.safe
        skill: SkillTable | None = None
        wear = 0
        if push:
            cost = _push_cost(state, car, lim)
            if cost is None:
                continue
            wear, skill = cost
        else:
            decel = _decel_wear(car, lim, speed)
            if decel is None:
                continue
            wear = decel
        steps = speed // 20
        desired = desired_path(track, car, line, steps, staggered=staggered)
        path = plan_path(track, car.space, steps, desired[:steps], lambda s: s in staying, staggered=staggered)
        if path is None:
            continue
        ran = _run(track, car, path, speed, car.wear - wear)
        if ran is None:
            continue
        after, corner_wear = ran
        wear += corner_wear
        # A move over the line ends its race: nothing to keep back, nothing to brake for after
        # it, and the rows past the line rank the cars that finish in one turn (P27).
        rows = (track.space(path[-1]).row - track.space(car.space).row) % track.rows if path else 0
        finishing = car.progress + rows >= state.finish_progress()
        if wear > max(car.wear if finishing else spare, 0) and wear > 0:
            continue
        if not finishing and not _brakes_in_time(state, after, car.wear - wear):
            continue
        found.append(_Move(speed, path, wear, push, skill, list(path) == desired[:steps], speed >= lim.free_low))
        if not every:
            break
    return found


def _ahead_ends(state: RaceState, car: Car, reach: int) -> set[str]:
    """Where the cars that move before it and stand within its reach are likely to end
    their moves: where the safe plot (§8) would take each of them, worked out from what
    anyone can see of it (its space, speed and card). It plans round those spaces, so a car
    ahead that goes no faster than that does not block it into an unplanned corner cost."""
    track = state.track
    assert car.space is not None
    ends: set[str] = set()
    for other in state.cars:
        if other.player == car.player or not other.on_track or other.space is None or not moves_first(car, other):
            continue
        if other.progress - car.progress > reach + 1:
            continue
        plot = safe_plot(state, other)
        line = (
            Plot(path=PathOrder(PathKind.LINE))
            if plot.lanes is None
            else Plot(path=PathOrder(PathKind.LANES, plot.lanes))
        )
        path = desired_path(track, other, line, plot.speed // 20, staggered=state.options.staggered_lane_change)
        ends.add(path[-1] if path else other.space)
    return ends


def _reserve(state: RaceState, car: Car) -> int:
    """The wear it keeps for the rest of its stint: its set's share for the rows still to
    run before the stop (or the finish), so it does not spend a set in its first corners."""
    track = state.track
    if car.design is None:
        return 0
    total = car.design.tyre_wear(car.tyres, state.laps)
    end = state.finish_progress()
    if not car.ran_both_compounds() and track.pit is not None:
        end = state.laps * track.rows + track.pit.first
    start = 0 if len(car.tyres_used) < 2 else end  # (after the stop the set runs to the finish)
    left = max(0, end - car.progress)
    span = max(1, end - start)
    return max(SAFETY, (total * left) // (span * 2)) if left > 0 else 0


def _push_cost(state: RaceState, car: Car, lim: Limits) -> tuple[int, SkillTable | None] | None:
    """What a push costs it without a roll: 1 wear on option tyres where P12 allows, else a
    skill chip; None when neither is to be had."""
    kind = lim.push
    if kind is None:
        return None
    replaceable = kind in ("acceleration", "start speed") or (
        kind == "top speed" and state.options.option_tyres_top_speed
    )
    if replaceable and car.tyres is Tyre.OPTION and car.wear >= 1:
        return 1, None
    if car.skill >= 1:
        table = {"acceleration": SkillTable.ACCEL, "start speed": SkillTable.START, "top speed": SkillTable.TOP}[kind]
        return 0, table
    return None


def _decel_wear(car: Car, lim: Limits, speed: int) -> int | None:
    """The wear the deceleration chart costs paid with wear alone (PAY WEAR), or None when it
    needs a roll it cannot replace or spins the car (seed "Deceleration Chart")."""
    row = tier(max(0, lim.free_low - speed))
    if row == 0:
        return 0
    if row <= 2:
        return row
    if row == 3 and car.tyres is Tyre.OPTION:
        return 3  # 2 wear, and 1 wear instead of the brakes test (P12)
    return None


def _corner_wear(run: CornerRun, due: int, tyres: Tyre) -> tuple[int, int, bool] | None:
    """Paying row `due` of the cornering chart with wear alone, counting what `run` paid:
    (wear now, wear paid after, rolled after), or None when it needs a roll (P9, P12)."""
    if due >= CORNER_CRASH_TIER:
        return None
    best: tuple[int, int, bool] | None = None
    for option in CORNERING_CHART[due]:
        need = max(0, option.wear - run.wear_paid)
        if option.roll and not run.rolled:
            if tyres is not Tyre.OPTION:
                continue
            way = (need + 1, run.wear_paid + need, True)  # 1 wear instead of the chance roll
        else:
            way = (need, run.wear_paid + need, run.rolled)
        if best is None or way[0] < best[0]:
            best = way
    return best


def _run(track: Track, car: Car, path: tuple[str, ...], speed: int, wear: int) -> tuple[Car, int] | None:
    """The car after running `path` at `speed`, paying every corner with wear alone, and the
    wear that takes; None when a corner needs a roll or more wear than `wear`."""
    run, line, barred = car.corner_run, car.line_run, car.barred_line
    used = 0
    for space_id in path:
        step = step_line(track, line, barred, space_id)
        left = step.left is not None and run is not None and track.lines[step.left].corner == run.corner
        line = step.run
        entry = enter_space(track, run, space_id, speed, line_bonus(track, line, space_id), left)
        run = entry.run
        if run is not None and entry.due > run.tier:
            paid = _corner_wear(run, entry.due, car.tyres)
            if paid is None or used + paid[0] > wear:
                return None
            used += paid[0]
            run = CornerRun(run.corner, entry.due, paid[1], paid[2], run.worst_raw)
        if run is None:
            barred = None
    space = path[-1] if path else car.space
    return replace(car, space=space, speed=speed, corner_run=run, line_run=line, barred_line=barred, spun=False), used


def _brakes_in_time(state: RaceState, car: Car, wear: int) -> bool:
    """Whether from `car` (at `car.speed`) it can brake at its free deceleration for
    `LOOKAHEAD` turns, following the lines, paying every corner with the `wear` it has."""
    line = Plot(path=PathOrder(PathKind.LINE))
    staggered = state.options.staggered_lane_change
    for _ in range(LOOKAHEAD):
        speed = max(0, car.speed - car.dec)
        if speed == 0:
            return True
        path = desired_path(state.track, car, line, speed // 20, staggered=staggered)
        ran = _run(state.track, car, tuple(path), speed, wear)
        if ran is None:
            return False
        car, used = ran
        wear -= used
    return True


def _slip_room(state: RaceState, car: Car, move: _Move) -> bool:
    """Whether a slip of 2 more spaces after `move` leaves it outside corners and able to
    brake in time (a slip is offered only behind a car plotted for 120 or more)."""
    if move.speed == 0 or not move.path:
        return False
    track = state.track
    end = track.space(move.path[-1])
    if end.corner is not None:
        return False
    line = Plot(path=PathOrder(PathKind.LINE))
    steps = move.speed // 20 + 2
    longer = desired_path(track, car, line, steps, staggered=state.options.staggered_lane_change)
    if len(longer) < steps or any(track.space(s).corner for s in longer[-2:]):
        return False
    ran = _run(track, car, tuple(longer), move.speed, car.wear - move.wear)
    return ran is not None and ran[1] == 0 and _brakes_in_time(state, ran[0], car.wear - move.wear)
