"""The robot driver: a SpeedPhreakz driver for a seat no person plays.

It sees what a player at that seat sees (speedphreakz.md §4.2: control is rolled after the
orders are in, the same for everyone): the map, every car's square, heading, progress and
crashes, and its own programs, deficit, crash surcharge and oil; never another player's
programs or what that player carries (`_seen` blanks them before it plans). Its orders are
the orders a player could send: legal and complete whenever the seat has something to order
(a property test checks it).

How it drives, with the control-cost bands of `options.Band` in mind (§4.2: control C is
d100+100, 101 to 200; the action that takes the cumulative cost above C and every later one
is rolled on the loss-of-control table, and the deficit is added to the next round's first
action):

* From where the round it orders will start (where its queued program leaves it, driven as
  ordered, or the square it restarts on after a crash, S10), it looks at the cheapest
  program to every square (`options.reachable`, which already keeps §4.2's restrictions,
  the terrain surcharges of §4.6 and keeps off oil mid-action) and takes the one that gets
  furthest round the circuit: the most checkpoints passed, then the fewest squares to the
  next one, then a heading that points along the way, then the least control.
* It stays in the band that never loses control (cost 101 or less: `Band.IN_CONTROL`),
  because a program sent one round ahead cannot know the deficit the round before may
  leave, and a deficit on a first action adds recklessness and a crash surcharge chases
  it. It reaches into the next band (`Band.RISKY`, up to 150) only where that crosses the
  line the safe band cannot reach this round; over the line, in either band, it takes the
  cheapest crossing (S12, S16: more control left at the crossing wins a crossing in the
  same round), and a crossing is never passed over for one that costs more. Of its `LOOKAHEAD`
  furthest programs it takes the one from whose end the best program of the round after
  gets furthest (`_next_best`), then the furthest.
* It expects the other cars to move (§4.5: cars that end a round on one square crash, and
  a car crashing takes its neighbours along), guessed two ways from what anyone can see.
  Told which seats are robots (`robots`; not told: every seat counted one), it plans every
  robot as it plans itself, in seating order, from where it stands (`_field_plan`); the
  earlier robot has the way, so a robot never ends a round where a robot seated before it
  is expected to end, and keeps off the squares round it where that costs nothing; where
  that robot is expected to end on or next to a car that is not a robot's end (this round
  or the round before), its end is not certain and is only at risk (giving way to such
  guesses cost more than the crashes it saved, bench `robots`). Every
  other car it plans headlong and does not give way to: where that car is expected to end
  is at risk (below), as the squares a headlong driver would not yield cost it more than
  the odd crash (bench `robots`). Headlong (`_headlong`, a driver heedless of the others, as the greedy
  reference): the square two of them would end on, and round it, is at risk, and a program
  ending there counts as `RISK` squares shorter. Fields of
  robots race without a crash (a test). It never ends a round on oil (§4.6: the next first
  action would be rolled).
* At the set-up (S13: start squares may be shared) it takes, of every start square facing
  the race direction or 45 degrees off it, the one from which its round 1 (planned as
  above, the robots seated before it given way to) ends furthest round, then from whose
  end round 2 gets furthest, then its own place in the seating order round the start
  squares (`_start`; every robot reads the same choice from the field's plan); after a
  crash it restarts where S10 puts it, facing the next checkpoint.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Iterable, Mapping

from rules.api import RobotLevel
from rules.speedphreakz.data import chart, distances
from rules.speedphreakz.model import (
    Car,
    CarStatus,
    Circuit,
    Heading,
    Order,
    Program,
    Progress,
    Race,
    Restart,
    Square,
    Start,
    progress_on_entry,
)
from rules.speedphreakz.options import CONTROL_LOW, RISKY, drive, reachable, round_actions
from rules.speedphreakz.resolve import default_restart, heading_towards_target, restart_squares

UNREACHABLE = 10_000
RISK = 1
"""Squares a program ending on a square at risk counts as short of where it ends (`_Keep.risk`):
a crash at the end of a round costs the car its next first action's +50 (S9), two or so
squares; a guess of where a car ends is right about half the time (a robot gives way where a
headlong driver does not), so one square. Measured (bench `robots`): 2 squares, or keeping
off those squares outright, lost more to the greedy driver than 1."""


LOOKAHEAD = 8
"""How many of its furthest programs a robot ranks by the round after (`_next_best`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Style:
    """How a driver plans (the robot at each level, and the greedy reference): whether it keeps
    off the squares round the other cars (`careful`), how many squares short of the furthest
    program it may end (`slack`: one of those at random), whether it ever reaches into the
    risky band (`risky`)."""

    careful: bool
    slack: int
    risky: bool
    lookahead: bool = False


NORMAL = Style(careful=True, slack=0, risky=True, lookahead=True)
EASY = Style(careful=True, slack=3, risky=False)
GREEDY = Style(careful=False, slack=0, risky=True)


def robot_orders(
    race: Race,
    player: str,
    rng: random.Random,
    level: RobotLevel = RobotLevel.NORMAL,
    robots: frozenset[str] | None = None,
) -> tuple[Order, ...]:
    """The robot's orders for `player` in the open turn (none when the car has none to give).
    `robots`: the seats driven by robots (None: not told, every seat counted one); it gives
    way to those seated before it whose end is certain and to no other car. At the easy level it never reaches
    into the risky band and ends its rounds up to three squares short of the furthest it
    could (one such program at random)."""
    return orders_in_style(race, player, rng, EASY if level is RobotLevel.EASY else NORMAL, robots)


def orders_in_style(
    race: Race, player: str, rng: random.Random, style: Style, robots: frozenset[str] | None = None
) -> tuple[Order, ...]:
    """The orders of a driver planning in `style` (see `robot_orders`)."""
    if race.finished:
        return ()
    race = _seen(race, player)
    car = race.car(player)
    if not car.racing:
        return ()
    circuit = race.circuit
    cap = race.options.max_actions
    placing: Order | None = None
    plan = _expected(race, player, robots) if style.careful else None
    ends = (plan.keep[0][plan.me], plan.keep[1][plan.me]) if plan is not None else (_Keep(), _Keep())
    if race.set_up:
        seat = [c.player for c in race.cars].index(player)
        chosen = plan.starts[plan.me] if plan is not None else None
        placing = (
            Start(*chosen)
            if chosen is not None
            else Start(circuit.start_squares[seat % len(circuit.start_squares)], circuit.finish_direction)
        )
        assert placing.square is not None
        car = dataclasses.replace(car, square=placing.square, heading=placing.heading)
    elif car.status is CarStatus.CRASHED:
        placing = _restart(race, car)
        car = dataclasses.replace(car, square=placing.square, heading=placing.heading)
    if placing is not None:
        # the round in hand and the next: from the start (or restart) square, what it carries
        # on the first action of the first (S9), nothing known yet on the second
        assert car.square is not None
        extra = car.deficit + car.surcharge
        now = _plan(circuit, cap, car.square, car.heading, car.progress, extra, ends[0], rng, style)
        after = _after(circuit, car, now)
        nxt = _plan(circuit, cap, *after, 0, ends[1], rng, style) if after is not None else ()
        return (placing, Program(race.round, now), Program(race.round + 1, nxt))
    queued = round_actions(race, car)
    ahead = _after(circuit, car, queued)
    if ahead is None:
        return (Program(race.round + 1, ()),)  # its round in hand crashes it: it sends this round again
    # §4.2: what the round in hand leaves on the next first action is not known yet (0);
    # with nothing queued the deficit and surcharge it carries wait for the next first action
    extra = 0 if queued else car.deficit + car.surcharge
    return (Program(race.round + 1, _plan(circuit, cap, *ahead, extra, ends[1], rng, style)),)


@dataclasses.dataclass(frozen=True, slots=True)
class _Keep:
    """The squares a car planning one round keeps off (`off`: it ends nowhere there), those at
    risk (`risk`: a program ending there counts as `RISK` squares short of where it ends), and
    those it keeps off only where that costs it nothing (`clear`: a tie-break after progress)."""

    off: frozenset[Square] = frozenset()
    clear: frozenset[Square] = frozenset()
    risk: frozenset[Square] = frozenset()


_Place = tuple[Square | None, Heading, Progress, CarStatus]


@dataclasses.dataclass(frozen=True, slots=True)
class _Expected:
    """The field's plan (`_field_plan`) and the seat of the robot reading it (`me`)."""

    me: int
    keep: tuple[tuple[_Keep, ...], tuple[_Keep, ...]]
    starts: tuple[tuple[Square, Heading] | None, ...]


def _expected(race: Race, player: str, robots: frozenset[str] | None) -> _Expected:
    """What to keep off at the end of the round in hand and of the next (§4.5: two cars
    ending a round on one square both crash; a car next to a crash crashes too), and at the
    set-up where to start, from what anyone can see: the squares, headings, progress and
    status of the cars, and which seats are robots (`_field_plan`; None: every seat counted
    a robot)."""
    places = tuple((c.square, c.heading, c.progress, c.status) for c in race.cars)
    driven = tuple(robots is None or c.player in robots or c.player == player for c in race.cars)
    plan = _field_plan(race.circuit, race.options.max_actions, race.set_up, places, driven)
    me = [c.player for c in race.cars].index(player)
    return _Expected(me, plan.keep, plan.starts)


def _ring(squares: Iterable[Square]) -> frozenset[Square]:
    """The squares and their eight neighbours."""
    return frozenset(Square(s.x + dx, s.y + dy) for s in squares for dx in (-1, 0, 1) for dy in (-1, 0, 1))


def _hazards(circuit: Circuit, cap: int, places: tuple[_Place, ...]) -> tuple[frozenset[Square], ...]:
    """For each seat, the squares a headlong guess of the others (`_headlong`) puts at risk at
    the end of a round that starts at `places`: a square two of them would end on and the
    squares round it (§4.5: they crash there, and take their neighbours along). A square one
    of them would end on alone is not: a robot gives way there, and keeping off every such
    guess lost more to the greedy driver in 8-car fields than it saved (bench `robots`)."""
    guesses = [_headlong(circuit, cap, *place) for place in places]
    out = []
    for me in range(len(places)):
        squares = [g for i, g in enumerate(guesses) if i != me and g is not None]
        shared = [s for s in set(squares) if squares.count(s) > 1]
        out.append(_ring(shared))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _headlong(
    circuit: Circuit, cap: int, square: Square | None, heading: Heading, progress: Progress, status: CarStatus
) -> Square | None:
    """Where a car driven headlong (the furthest program, heedless of the others) ends a round
    it starts at `square`; a crashed car where it crashed; None: not racing."""
    if square is None or status in (CarStatus.FINISHED, CarStatus.OUT):
        return None
    if status is CarStatus.CRASHED:
        return square
    program = _plan(circuit, cap, square, heading, progress, 0, _Keep(), random.Random(0), GREEDY)
    return _walk(circuit, square, heading, progress, program)[0]


@dataclasses.dataclass(frozen=True, slots=True)
class _FieldPlan:
    """Each seat's expected end of the round in hand and of the next (`ends`, None: not
    racing), and what each seat keeps off at the end of each (`keep`)."""

    ends: tuple[tuple[Square, Square] | None, ...]
    keep: tuple[tuple[_Keep, ...], tuple[_Keep, ...]]
    starts: tuple[tuple[Square, Heading] | None, ...] = ()


@functools.lru_cache(maxsize=256)
def _field_plan(
    circuit: Circuit, cap: int, set_up: bool, cars: tuple[_Place, ...], robots: tuple[bool, ...]
) -> _FieldPlan:
    """Every car planned round by round from what anyone can see (at the set-up, each from
    the start square its seat gives it; a crashed car stays where it crashed): a robot seat
    (`robots`) as `robot_orders` plans it, any other headlong (`_headlong`). Robots give way
    to robots in seating order, the earlier seat having the way, where the earlier robot's
    end is certain: a robot keeps off the squares where those robots seated before it are
    expected to end, and the squares round them where it can. An earlier robot's end is
    not certain once, in the round in hand or the next, it is expected to end on or next to
    the square where a car that is not a robot is expected to end (that car may crash it,
    or it the car, and the robot then ends elsewhere or nowhere): such an end is only at
    risk, as another car's. Among robots alone every end is certain, so a field of robots
    races without a crash. To no other car: where one is expected to end is at risk (a
    program ending there counts as `RISK` squares short), and the squares round it kept off
    where that costs nothing; so two robots never both give way to each other nor both go,
    and a robot loses no ground to a driver who would not give way to it. What a headlong guess of the others puts at risk (`_hazards`) is
    guessed from where the plan puts every car at the start of that round: the guess for
    the next round made now is the guess for the round in hand made a turn later, so robots'
    plans of successive turns agree. Pure, so kept: every robot of a turn reads the same
    plan."""
    places = tuple(
        (circuit.start_squares[seat % len(circuit.start_squares)], circuit.finish_direction, *place[2:])
        if set_up
        else place
        for seat, place in enumerate(cars)
    )
    ends: list[list[Square]] = [[] for _ in places]
    keeps: list[tuple[_Keep, ...]] = []
    starts: list[tuple[Square, Heading] | None] = [None for _ in places]
    unsure: set[int] = set()
    for _round in (0, 1):
        hazards = _hazards(circuit, cap, places)
        keep: list[_Keep] = []
        after: list[_Place] = []
        before: list[Square] = []
        others: list[Square] = []
        doubtful: list[Square] = []
        near = _ring(
            end
            for seat, place in enumerate(places)
            if not robots[seat] and (end := _headlong(circuit, cap, *place)) is not None
        )
        for seat, (square, heading, progress, status) in enumerate(places):
            ring = _ring(before + others)
            keep.append(_Keep(frozenset(before), ring, hazards[seat] | frozenset(others) | frozenset(doubtful)))
            if square is None or status in (CarStatus.FINISHED, CarStatus.OUT) or status is CarStatus.CRASHED:
                after.append((square, heading, progress, status))
                if square is not None and status is CarStatus.CRASHED:
                    ends[seat].append(square)
                    before.append(square)
                continue
            if robots[seat] and set_up and _round == 0:
                square, heading, program = _start(circuit, cap, seat, progress, keep[-1])
                starts[seat] = (square, heading)
            elif robots[seat]:
                program = _plan(circuit, cap, square, heading, progress, 0, keep[-1], random.Random(0), NORMAL)
            else:
                program = _plan(circuit, cap, square, heading, progress, 0, _Keep(), random.Random(0), GREEDY)
            end, facing, done = _walk(circuit, square, heading, progress, program)
            after.append((end, facing, done, status))
            ends[seat].append(end)
            if robots[seat] and (seat in unsure or end in near):
                unsure.add(seat)
                doubtful.append(end)
            else:
                (before if robots[seat] else others).append(end)
        keeps.append(tuple(keep))
        places = tuple(after)
    return _FieldPlan(tuple((e[0], e[1]) if e else None for e in ends), (keeps[0], keeps[1]), tuple(starts))


START_TURNS = (0, 1, -1)
"""The headings a robot may start with, in eighths of a turn from the race direction: a
start facing back round the course looks short on the distance map but costs the turns."""


def _start(
    circuit: Circuit, cap: int, seat: int, progress: Progress, keep: _Keep
) -> tuple[Square, Heading, tuple[str, ...]]:
    """Where a robot starts (S13: any start square, shared or not, any heading) and its
    round 1: of every start square and heading, the one whose round 1 (planned as `_plan`
    plans it, keeping off `keep`) ends furthest round, a square at risk counted `RISK`
    short; then the one from whose end the round after gets furthest; then its seat's own
    square round the start squares, facing the race direction."""
    squares = circuit.start_squares
    own = squares[seat % len(squares)]
    headings = [circuit.finish_direction.turned(k) for k in START_TURNS]
    maps: dict[int, Mapping[Square, int]] = {}
    best: tuple[tuple[int, ...], Square, Heading, tuple[str, ...]] | None = None
    for index, square in enumerate(squares):
        for turn, heading in enumerate(headings):
            program = _plan(circuit, cap, square, heading, progress, 0, keep, random.Random(0), NORMAL)
            end, facing, done = _walk(circuit, square, heading, progress, program)
            lap, cp, here, away = _progress_key(circuit, maps, end, facing, done)
            onward = _next_best(circuit, cap, end, facing, done)
            key = (
                lap,
                cp,
                here + RISK * (end in keep.risk),
                *onward,
                away,
                int(end in keep.clear),
                int(square != own),
                turn,
                index,
            )
            if best is None or key < best[0]:
                best = (key, square, heading, program)
    assert best is not None
    return best[1], best[2], best[3]


def _seen(race: Race, player: str) -> Race:
    """The race as `player` sees it: every other car's queued programs, deficit, crash
    surcharge and oil blanked (the view shows them to their own player only)."""
    cars = tuple(
        car if car.player == player else dataclasses.replace(car, programs=(), deficit=0, surcharge=0, oil=False)
        for car in race.cars
    )
    return dataclasses.replace(race, cars=cars)


def _restart(race: Race, car: Car) -> Restart:
    """Where to be re-placed after a crash (§4.2, S10: the crash square or a neighbour), facing
    the next checkpoint: a square no other crashed car may also ask for (one next to its own
    crash square), so it is not moved elsewhere (the earlier seat gets a contested square)
    and its program still fits; then the nearest the next target; then away from the cars."""
    crashed = [c.square for c in race.cars if c.player != car.player and c.status is CarStatus.CRASHED and c.square]
    racing = [c.square for c in race.cars if c.player != car.player and c.status is CarStatus.RACING and c.square]
    far = distances(race.circuit, car.progress.checkpoint)
    squares = restart_squares(race, car)
    if not squares:
        taken = {c.square for c in race.cars if c.status is CarStatus.RACING and c.square is not None}
        return default_restart(race, car, taken)

    def key(square: Square) -> tuple[int, int, int, int, int]:
        return (
            int(any(square.touches(other) for other in crashed)),
            far.get(square, UNREACHABLE),
            int(any(square.touches(other) for other in racing)),
            square.y,
            square.x,
        )

    square = min(squares, key=key)
    return Restart(square, heading_towards_target(race, car, square))


def _after(circuit: Circuit, car: Car, codes: tuple[str, ...]) -> tuple[Square, Heading, Progress] | None:
    """Where `codes` leave the car driven as ordered (square, heading, progress); None if it
    drives into a solid."""
    driven = drive(circuit, car, codes)
    return None if driven is None else driven[:3]


def _plan(
    circuit: Circuit,
    cap: int,
    start: Square,
    heading: Heading,
    progress: Progress,
    extra: int,
    keep: _Keep,
    rng: random.Random,
    style: Style = NORMAL,
) -> tuple[str, ...]:
    """The program it sends for a round that starts at `start` facing `heading` with
    `progress`, `extra` on its first action (see the module docstring)."""
    taken, near = keep.off, keep.clear
    safe: list[tuple[tuple[int, ...], tuple[str, ...]]] = []
    risky: list[tuple[tuple[int, ...], tuple[str, ...]]] = []
    # The risky band is searched only when the line may be within its reach (every
    # checkpoint of the last lap passed): it is taken only to cross the line.
    last_leg = style.risky and progress.lap + 1 >= circuit.laps and progress.checkpoint >= len(circuit.checkpoints)
    maps: dict[int, Mapping[Square, int]] = {}
    for option in reachable(circuit, cap, start, heading, extra, RISKY if last_leg else CONTROL_LOW):
        if option.square in taken:
            continue
        end, facing, done = _walk(circuit, start, heading, progress, option.program)
        if done.lap < circuit.laps and circuit.terrain(option.square).oil:
            continue  # §4.6: the next round's first action would be rolled on the loss-of-control table
        if done.lap >= circuit.laps:
            # over the line: the race is run, and more control left at the crossing wins a
            # crossing in the same round (S12, S16): only the cost counts
            key = (-done.lap, 0, 0, 0, 0, option.cost)
        else:
            lap, cp, here, away = _progress_key(circuit, maps, end, facing, done)
            at_risk = option.square in keep.risk
            key = (lap, cp, here + RISK * at_risk, away, int(option.square in near), option.cost)
        if option.cost <= CONTROL_LOW:
            safe.append((key, option.program))
        elif done.lap >= circuit.laps:
            risky.append((key, option.program))  # it crosses the line: worth the risk
    # over the line in either band, the cheapest crossing (a crossing's key comes first)
    pool = safe + risky
    if not pool:
        return ()
    best = min(pool)
    if style.lookahead and best[0][0] > -circuit.laps:  # not over the line this round
        # the furthest few, ranked by how far the best program of the round after gets from
        # where each ends (its risk penalty kept), then as before
        ranked = sorted(pool)[:LOOKAHEAD]

        def onward(item: tuple[tuple[int, ...], tuple[str, ...]]) -> tuple[int, ...]:
            end, facing, done = _walk(circuit, start, heading, progress, item[1])
            lap, cp, here = _next_best(circuit, cap, end, facing, done)
            penalty = item[0][2] - _progress_key(circuit, maps, end, facing, done)[2]
            return (lap, cp, here + penalty, *item[0])

        return min(ranked, key=onward)[1]
    # The furthest (normal: `slack` 0); the easy level takes one at random of those that end
    # at most `slack` squares short, facing the same way.
    close = sorted(
        item
        for item in pool
        if item[0][:2] == best[0][:2] and item[0][2] <= best[0][2] + style.slack and item[0][3] == best[0][3]
    )
    return rng.choice(close)[1] if style.slack else best[1]


@functools.lru_cache(maxsize=8192)
def _next_best(
    circuit: Circuit, cap: int, square: Square, heading: Heading, progress: Progress
) -> tuple[int, int, int]:
    """The furthest round a car gets in the round that starts at this place (the greedy key)."""
    last_leg = progress.lap + 1 >= circuit.laps and progress.checkpoint >= len(circuit.checkpoints)
    best = (UNREACHABLE, UNREACHABLE, UNREACHABLE)
    maps: dict[int, Mapping[Square, int]] = {}
    for option in reachable(circuit, cap, square, heading, 0, RISKY if last_leg else CONTROL_LOW):
        end, facing, done = _walk(circuit, square, heading, progress, option.program)
        if done.lap >= circuit.laps:
            key = (-done.lap, 0, option.cost - 1000)
        elif option.cost > CONTROL_LOW or circuit.terrain(option.square).oil:
            continue
        else:
            key = _progress_key(circuit, maps, end, facing, done)[:3]
        best = min(best, key)
    return best


def _walk(
    circuit: Circuit, square: Square, heading: Heading, progress: Progress, codes: tuple[str, ...]
) -> tuple[Square, Heading, Progress]:
    """Where a program found by `reachable` leaves the car, driven as ordered: `drive`
    without its checks (the search already kept it off solids and oil)."""
    table = chart()
    for code in codes:
        action = table[code]
        step = heading.turned(action.step)
        for _ in range(action.squares):
            nxt = square.step(step)
            progress, _ = progress_on_entry(circuit, progress, square, nxt)
            square = nxt
        heading = heading.turned(action.turn)
    return square, heading, progress


def _progress_key(
    circuit: Circuit, maps: dict[int, Mapping[Square, int]], square: Square, heading: Heading, progress: Progress
) -> tuple[int, int, int, int]:
    """Smaller is further round: laps and checkpoints done (negated), the squares to the next
    target, and whether the car faces away from it (`maps`: the distance maps read so far)."""
    far = maps.get(progress.checkpoint)
    if far is None:
        far = maps[progress.checkpoint] = distances(circuit, progress.checkpoint)
    here = far.get(square, UNREACHABLE)
    ahead = far.get(square.step(heading), UNREACHABLE)
    return (-progress.lap, -progress.checkpoint, here, 0 if ahead < here else 1)


__all__ = ["robot_orders"]
