"""Resolving one SpeedPhreakz round (§4.2-§4.7, S1-S16).

Shell turn t resolves round t (`Race.round`): set-up first at turn 1, re-placing the cars
that crashed last round, queueing the programs sent this turn, then the control roll and
the round itself, step by step (§4.5). All chance comes from the rng passed in; every roll
is an `Event` with its `Roll`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence

from rules.api import Event, PlayerId, Resolution, Roll
from rules.speedphreakz.data import chart, distances
from rules.speedphreakz.model import (
    Action,
    Car,
    CarStatus,
    Colour,
    Heading,
    NoOrders,
    Order,
    Outcome,
    Passing,
    Program,
    Progress,
    Race,
    Restart,
    Square,
    Start,
    progress_on_entry,
)

COLOURS: tuple[str, ...] = (
    "red",
    "blue",
    "green",
    "yellow",
    "orange",
    "purple",
    "white",
    "black",
    "pink",
    "silver",
)
CRASH_SURCHARGE = 50  # S9: +50, and +50 per point of recklessness held at the crash
UNREACHABLE = 10_000  # the squares to a target from a square that cannot reach it
MIDDLE_LOW = 4  # S1: faces 0-9, the middle is 4.5; r <= 4 moves down, r >= 5 moves up


def reckless_result(face: int, recklessness: int) -> int:
    """The d10 result after recklessness (§4.3): pushed `recklessness` steps away from 4.5."""
    return face - recklessness if face <= MIDDLE_LOW else face + recklessness


def crash_surcharge(recklessness: int) -> int:
    return CRASH_SURCHARGE * (1 + recklessness)


def previous_program(car: Car, round_no: int) -> tuple[str, ...]:
    """What "repeat the previous program" (S14 alternative) repeats for `round_no`."""
    earlier = car.program(round_no - 1)
    return earlier.actions if earlier is not None else car.last_program


def default_start(race: Race) -> Start:
    """§5: "A player silent at the set-up is placed on a start square no one chose ...,
    facing the race direction": which square is known only once every START is in, so the
    default asks for a free one (`starting_grid` places it)."""
    return Start.free(race.circuit.finish_direction)


def starting_grid(race: Race, starts: Mapping[int, Start]) -> dict[int, Start]:
    """Where each car starts, by seat, from the START each one gave (`starts`).

    A chosen start square stands (S13: squares may be shared). The others (START FREE, the
    silent players' default) are placed afterwards, in seat order, each on the first start
    square in the map's order that no car holds yet; when none is free, on the first of
    those with the fewest cars (§5).
    """
    cars_on = {square: 0 for square in race.circuit.start_squares}
    for start in starts.values():
        if start.square in cars_on:
            cars_on[start.square] += 1
    placed: dict[int, Start] = {}
    for seat in sorted(starts):
        start = starts[seat]
        if start.square not in cars_on:  # free (or, never from parsed orders, off the line)
            square = min(race.circuit.start_squares, key=lambda s: cars_on[s])  # the first of the emptiest
            cars_on[square] += 1
            start = Start(square, start.heading)
        placed[seat] = start
    return placed


def restart_squares(race: Race, car: Car) -> tuple[Square, ...]:
    """Where a crashed car may be re-placed: the crash square or a neighbour, not solid and
    not taken by a car that is not itself being re-placed (§4.2, S10)."""
    if car.square is None:
        return ()
    taken = {c.square for c in race.cars if c.status is CarStatus.RACING and c.player != car.player}
    around = [car.square, *(car.square.step(h) for h in Heading)]
    return tuple(s for s in around if race.circuit.on_map(s) and not race.circuit.solid(s) and s not in taken)


def default_restart(race: Race, car: Car, taken: set[Square]) -> Restart:
    """S10: the crash square if legal, else the first legal neighbour clockwise from the
    car's heading; heading towards the next checkpoint (the first step of a shortest way)."""
    assert car.square is not None
    circuit = race.circuit

    def legal(square: Square) -> bool:
        return circuit.on_map(square) and not circuit.solid(square) and square not in taken

    square = car.square
    if not legal(square):
        for turn in range(8):
            candidate = car.square.step(car.heading.turned(turn))
            if legal(candidate):
                square = candidate
                break
    return Restart(square, heading_towards_target(race, car, square))


def heading_towards_target(race: Race, car: Car, square: Square) -> Heading:
    circuit = race.circuit
    far = distances(circuit, car.progress.checkpoint)
    best: tuple[int, Heading] | None = None
    for turn in range(8):
        heading = car.heading.turned(turn)
        if circuit.blocked(square, heading):
            continue
        distance = far.get(square.step(heading))
        if distance is not None and (best is None or distance < best[0]):
            best = (distance, heading)
    if best is None:
        return car.heading
    if far.get(square) == 0 and car.progress.checkpoint >= len(circuit.checkpoints):
        return circuit.finish_direction  # on the line with every checkpoint passed: cross it
    return best[1]


@dataclasses.dataclass
class _Run:
    """One car's round while it is being resolved (private, mutable working copy)."""

    car: Car
    seat: int
    actions: tuple[Action, ...]
    square: Square
    heading: Heading
    recklessness: int
    oil: bool
    extra: int  # carried deficit + crash surcharge, added to the first action (§4.4)
    progress: Progress
    spent: int = 0
    charged: bool = False
    lost: bool = False
    deficit_points: int = 0
    crashed: bool = False
    surcharge: int = 0
    finished: bool = False
    finish_control: int | None = None
    trail: list[Square] = dataclasses.field(default_factory=list)

    @property
    def active(self) -> bool:
        return not self.crashed and not self.finished


class _Round:
    def __init__(self, race: Race, control: int, rng: random.Random, events: list[Event]) -> None:
        self.race = race
        self.circuit = race.circuit
        self.control = control
        self.rng = rng
        self.events = events

    # -- costs and control ----------------------------------------------------------------

    def charge(self, run: _Run, amount: int) -> None:
        """Add to the cumulative cost; each 100 of deficit crossed adds a point of
        recklessness at once (S6, S7)."""
        run.spent += amount
        points = max(0, run.spent - self.control) // 100
        if points > run.deficit_points:
            gained = points - run.deficit_points
            run.deficit_points = points
            run.recklessness += gained
            self.events.append(
                Event(
                    "recklessness",
                    f"{run.car.player} is {run.spent - self.control} over control: recklessness +{gained}, now {run.recklessness}.",
                    (run.car.player,),
                )
            )

    def check_control(self, run: _Run, index: int, action: Action) -> bool:
        """S4: the action that takes the cumulative cost above C (strictly) loses control;
        on the round's first action that is +1 recklessness, at once (S6)."""
        if run.lost or run.spent <= self.control:
            return False
        run.lost = True
        text = f"{run.car.player} loses control on action {index + 1} ({action.code}): {run.spent} spent of {self.control}."
        if index == 0:
            run.recklessness += 1
            text += f" First action out of control: recklessness +1, now {run.recklessness}."
        self.events.append(Event("lost control", text, (run.car.player,)))
        return True

    def roll(self, run: _Run, index: int, action: Action) -> Outcome | None:
        """One d10 on the action's table; None is a crash (a result outside 0..9, S1)."""
        roll = Roll.of(self.rng, 1, 10, low=0)
        face = roll.total
        reckless = run.recklessness if run.lost else 0  # recklessness only while out of control (§4.2)
        result = reckless_result(face, reckless)
        why = "out of control" if run.lost else "on oil"
        text = f"{run.car.player}, action {index + 1} ({action.code}), {why}: d10 {face}"
        if reckless:
            text += f", recklessness {reckless} -> {result}"
        outcome = action.table[result] if 0 <= result <= 9 else None
        text += f": {outcome.name}." if outcome is not None else ": off the table, crash!"
        self.events.append(Event("d10", text, (run.car.player,), roll))
        return outcome

    # -- crashes and finishing ---------------------------------------------------------

    def crash(self, run: _Run, why: str) -> None:
        """§4.2 Crash: stop at once, lose the rest of the round; surcharge from the
        recklessness held at the crash, then recklessness 0 (S6, S9)."""
        run.crashed = True
        run.surcharge = crash_surcharge(run.recklessness)
        self.events.append(
            Event(
                "crash",
                f"{run.car.player} {why} and crashes at {run.square} (next first action +{run.surcharge}).",
                (run.car.player,),
            )
        )
        run.recklessness = 0
        run.oil = False

    def enter(self, run: _Run, heading: Heading) -> bool:
        """One square of movement; False if the car crashed or finished on it."""
        if self.circuit.blocked(run.square, heading):
            target = run.square.step(heading)
            if self.circuit.solid(target):
                why = f"drives into the {self.circuit.terrain(target).name} at {target}"
            else:
                why = f"squeezes diagonally between two solids towards {target}"
            self.crash(run, why)
            return False
        frm, run.square = run.square, run.square.step(heading)
        run.trail.append(run.square)
        terrain = self.circuit.terrain(run.square)
        if terrain.surcharge:
            self.charge(run, terrain.surcharge)
        if terrain.oil:
            run.oil = True
        progress, passing = progress_on_entry(self.circuit, run.progress, frm, run.square)
        run.progress = progress
        player = run.car.player
        if passing is Passing.CHECKPOINT:
            self.events.append(
                Event("checkpoint", f"{player} passes checkpoint {progress.checkpoint} at {run.square}.", (player,))
            )
        elif passing is Passing.LAP:
            self.events.append(
                Event("lap", f"{player} completes lap {progress.lap} of {self.circuit.laps}.", (player,))
            )
        elif passing is Passing.FINISH:
            run.finished = True
            run.finish_control = self.control - run.spent  # S12: may be negative
            self.events.append(
                Event(
                    "finish",
                    f"{player} crosses the finish line at {run.square} with {run.finish_control} control left.",
                    (player,),
                )
            )
            return False
        return True

    # -- one action ---------------------------------------------------------------------

    def transform(self, run: _Run, action: Action, squares: int, turn: int, outcome: Outcome) -> tuple[int, int] | None:
        """Apply a table result to what is left of the action: (squares, turn), or None if
        the car crashed or finished on the way."""
        run.heading = run.heading.turned(outcome.pre_turn)
        if outcome.pre_shift is not None and not self.enter(run, run.heading.turned(outcome.pre_shift)):
            return None
        if not outcome.keeps_action:
            return 0, 0
        if action.squares > 0:
            squares = max(0, squares + outcome.extra_squares)
        if action.turn != 0:
            sign = 1 if action.turn > 0 else -1
            turn = sign * max(0, abs(turn) + outcome.extra_turn)
        return squares, turn

    def act(self, run: _Run, index: int) -> None:
        action = run.actions[index]
        self.charge(run, action.cost + (run.extra if index == 0 else 0))
        run.charged = True
        self.check_control(run, index, action)
        oily, run.oil = run.oil, False
        squares, turn = action.squares, action.turn
        rolled = False
        if run.lost or oily:
            rolled = True
            outcome = self.roll(run, index, action)
            if outcome is None:
                self.crash(run, "rolls off the loss-of-control table")
                return
            left = self.transform(run, action, squares, turn, outcome)
            if left is None:
                return
            squares, turn = left
            self.check_control(run, index, action)
        while squares > 0:
            if not self.enter(run, run.heading.turned(action.step)):
                return
            squares -= 1
            # §4.6: a surcharge can take the car over C mid-action; the rest of the
            # action is then rolled (one roll per action at most).
            if self.check_control(run, index, action) and not rolled:
                rolled = True
                outcome = self.roll(run, index, action)
                if outcome is None:
                    self.crash(run, "rolls off the loss-of-control table")
                    return
                left = self.transform(run, action, squares, turn, outcome)
                if left is None:
                    return
                squares, turn = left
        run.heading = run.heading.turned(turn)


def _set_up(race: Race, orders: Mapping[PlayerId, Sequence[Order]], events: list[Event]) -> list[Car]:
    cars = list(race.cars)
    asked = {
        seat: next((o for o in reversed(orders.get(car.player, ())) if isinstance(o, Start)), default_start(race))
        for seat, car in enumerate(cars)
        if car.status is not CarStatus.OUT  # dropped before the start
    }
    starts = starting_grid(race, asked)
    # S13: a colour is one car's, the first seat's to ask for it; a seat that asked for none
    # gets one nobody asked for (never the colour a later seat asked for).
    wanted: dict[int, str] = {}
    taken: set[str] = set()
    for seat, car in enumerate(cars):
        if seat in starts:
            wanted_colour = next(
                (o.colour for o in reversed(orders.get(car.player, ())) if isinstance(o, Colour)), None
            )
            if wanted_colour is not None:
                wanted[seat] = wanted_colour
    for seat, car in enumerate(cars):
        if seat not in starts:
            continue
        colour = wanted.get(seat)
        if colour is not None and colour in taken:
            events.append(Event("colour", f"{car.player} asked for {colour}, already taken.", (car.player,)))
            colour = None
        if colour is None:
            asked_for = {c for s, c in wanted.items() if s > seat}
            colour = next(
                c for c in (*COLOURS, *(f"car {n}" for n in range(1, 20))) if c not in taken and c not in asked_for
            )
        taken.add(colour)
        start = starts[seat]
        how = "" if asked[seat].square == start.square else " (a start square no one chose)"
        cars[seat] = dataclasses.replace(car, colour=colour, square=start.square, heading=start.heading)
        events.append(
            Event(
                "start",
                f"{car.player} ({colour}, car {car.letter}) starts at {start.square} facing {start.heading.value}{how}.",
                (car.player,),
            )
        )
    return cars


def _recolour(cars: list[Car], orders: Mapping[PlayerId, Sequence[Order]], events: list[Event]) -> None:
    for seat, car in enumerate(cars):
        colour = next((o.colour for o in reversed(orders.get(car.player, ())) if isinstance(o, Colour)), None)
        if colour is None or colour == car.colour:
            continue
        if any(c.colour == colour for c in cars):
            events.append(Event("colour", f"{car.player} asked for {colour}, already taken.", (car.player,)))
            continue
        cars[seat] = dataclasses.replace(car, colour=colour)


def _restarts(race: Race, cars: list[Car], orders: Mapping[PlayerId, Sequence[Order]], events: list[Event]) -> None:
    taken = {c.square for c in cars if c.status is CarStatus.RACING and c.square is not None}
    for seat, car in enumerate(cars):
        if car.status is not CarStatus.CRASHED or car.square is None:
            continue
        wanted = next((o for o in reversed(orders.get(car.player, ())) if isinstance(o, Restart)), None)
        if (
            wanted is not None
            and wanted.square.touches(car.square)
            and race.circuit.on_map(wanted.square)
            and not race.circuit.solid(wanted.square)
            and wanted.square not in taken
        ):
            restart, how = wanted, ""
        else:
            restart = default_restart(race, car, taken)
            how = " by default" if wanted is None else f" by default: {wanted.square} is taken"
        taken.add(restart.square)
        cars[seat] = dataclasses.replace(car, square=restart.square, heading=restart.heading, status=CarStatus.RACING)
        events.append(
            Event(
                "restart",
                f"{car.player} is re-placed at {restart.square} facing {restart.heading.value}{how}.",
                (car.player,),
            )
        )


def _queue(race: Race, car: Car, mine: Sequence[Order], allowed: tuple[int, ...]) -> Car:
    programs = {p.round: p for p in car.programs}
    for order in mine:
        if isinstance(order, Program) and order.round in allowed:
            programs[order.round] = order
    if race.round not in programs and car.racing:
        actions = previous_program(car, race.round) if race.options.nmr is NoOrders.REPEAT else ()
        programs[race.round] = Program(race.round, actions)
    return dataclasses.replace(car, programs=tuple(programs[r] for r in sorted(programs)))


def arrivals_after(
    race: Race, allowed: Mapping[PlayerId, tuple[int, ...]], submitted: Sequence[PlayerId]
) -> tuple[tuple[int, tuple[PlayerId, ...]], ...]:
    """S16's "whoever submitted first": the order in which each round's programs arrived,
    with this turn's (every round a car may send now, `allowed`) put after those of earlier
    turns, in the order this turn's final sets arrived (`submitted`), then the players who
    sent nothing (an NMR default, a GM plot), in seating order. A program sent again (a car
    that crashed sends its round again, S9) counts from when it was sent again."""
    seats = [car.player for car in race.cars]
    sent = [p for p in dict.fromkeys(submitted) if allowed.get(p)]
    ordered = sent + [p for p in seats if p not in sent and allowed.get(p)]
    by_round = {number: list(players) for number, players in race.arrivals}
    for player in ordered:
        for number in allowed[player]:
            queue = by_round.setdefault(number, [])
            if player in queue:
                queue.remove(player)
            queue.append(player)
    return tuple((number, tuple(by_round[number])) for number in sorted(by_round))


def resolve_round(
    race: Race, orders: Mapping[PlayerId, Sequence[Order]], rng: random.Random, submitted: Sequence[PlayerId] = ()
) -> Resolution[Race]:
    """Resolve the open turn: set-up (turn 1), re-placing, then round `race.round`.
    `submitted`: the players in the order their final sets of this turn arrived (S16)."""
    events: list[Event] = []
    allowed = {car.player: race.allowed_rounds(car.player) for car in race.cars}
    race = dataclasses.replace(race, arrivals=arrivals_after(race, allowed, submitted))
    if race.set_up:  # the set-up gives each car its colour, once
        cars = _set_up(race, orders, events)
    else:
        cars = list(race.cars)
        _recolour(cars, orders, events)
    _restarts(race, cars, orders, events)
    cars = [_queue(race, car, orders.get(car.player, ()), allowed[car.player]) for car in cars]

    roll = Roll.of(rng, 1, 100)
    control = roll.total + 100  # §4.2: C = 1d100+100, the same for everyone
    events.append(Event("control", f"Round {race.round}: control d100 {roll.total} + 100 = {control}.", (), roll))

    runs = _runs(race, cars)
    resolver = _Round(race, control, rng, events)
    _run_the_round(resolver, runs)
    by_seat = {run.seat: run for run in runs}
    finishers: list[_Run] = []
    got_nearer = False
    for seat, car in enumerate(cars):
        ran = by_seat.get(seat)
        if ran is None:
            continue
        cars[seat], nearer = _after_round(race, car, ran, control, events)
        got_nearer = got_nearer or nearer
        if ran.finished:
            finishers.append(ran)
    # S12, S16: more control at the crossing, then fewer crashes, then whoever submitted
    # their program for this round first (`Race.arrival`; seating order where none is known).
    finishers.sort(
        key=lambda r: (-(r.finish_control or 0), r.car.crashes, race.arrival(race.round, r.car.player), r.seat)
    )
    finish_order = race.finish_order + tuple(r.car.player for r in finishers)
    if finishers and not race.finish_order:
        events.append(Event("winner", f"{finishers[0].car.player} wins the race!", (finishers[0].car.player,)))
    racing = [c for c in cars if c.racing]
    limit = race.options.max_rounds  # §5: none by default, the race runs until a car finishes
    over = bool(finishers) or not racing or (limit is not None and race.round >= limit)
    if over and not finishers and racing:
        finish_order = race.finish_order + _classified_at_the_limit(race, cars, racing, events)
    state = dataclasses.replace(
        race,
        cars=tuple(cars),
        round=race.round + 1,
        finished=over,
        finish_order=finish_order,
        last_control=control,
        arrivals=tuple((number, players) for number, players in race.arrivals if number > race.round),
        stalled=0 if got_nearer or over else race.stalled + 1,
    )
    return Resolution(state, tuple(events))


def _runs(race: Race, cars: Sequence[Car]) -> list[_Run]:
    """A run of this round's program for every racing car on the map, in seating order."""
    table = chart()
    runs: list[_Run] = []
    for seat, car in enumerate(cars):
        if car.status is not CarStatus.RACING or car.square is None:
            continue
        program = car.program(race.round)
        actions = tuple(table[c] for c in (program.actions if program else ()) if table.get(c) is not None)
        runs.append(
            _Run(
                car=car,
                seat=seat,
                actions=actions,
                square=car.square,
                heading=car.heading,
                recklessness=car.recklessness,
                oil=car.oil,
                extra=car.deficit + car.surcharge,
                progress=car.progress,
                trail=[car.square],
            )
        )
    return runs


def _run_the_round(resolver: _Round, runs: list[_Run]) -> None:
    """Every car's actions, step by step, then the crashes of cars sharing a square at the end."""
    steps = max((len(r.actions) for r in runs), default=0)
    for index in range(steps):
        # §4.5: step k runs every car's k-th action together; cars do not block each other
        crashed: list[_Run] = []
        for run in runs:
            if run.active and index < len(run.actions):
                resolver.act(run, index)
                if run.crashed:
                    crashed.append(run)
        _adjacency(resolver, runs, crashed, "in the same step")
    # §4.5: at the end of the round, cars sharing a square crash, then one adjacency pass.
    # The seed: "end the round on the same square as someone": a car that crashed this round
    # is still someone, its wreck on its square until it is re-placed; only a finisher is
    # gone ("removed at once"). A wreck cannot crash twice: the cars still running do.
    by_square: dict[Square, list[_Run]] = {}
    for run in runs:
        if not run.finished:
            by_square.setdefault(run.square, []).append(run)
    shared = [run for group in by_square.values() if len(group) > 1 for run in group if run.active]
    for run in shared:
        others = ", ".join(o.car.player for o in by_square[run.square] if o is not run)
        resolver.crash(run, f"ends the round on the same square as {others}")
    _adjacency(resolver, runs, shared, "at the end of the round")


def _classified_at_the_limit(
    race: Race, cars: Sequence[Car], racing: Sequence[Car], events: list[Event]
) -> tuple[PlayerId, ...]:
    """The racing cars in order when the last round allowed ends the race with no finisher."""
    # §5: "a max_rounds option may end it (classified by distance to the next
    # checkpoint, then the tie-break of S16)": laps and checkpoints done, then nearest
    # the next one, then fewer crashes, then the earlier submission (as for the finish).
    classified = sorted(
        racing,
        key=lambda c: (distance_behind(race, c), c.crashes, race.arrival(race.round, c.player), cars.index(c)),
    )
    events.append(
        Event(
            "over",
            f"The race ends after round {race.round}, the last round allowed; "
            f"{classified[0].player} is classified first, nearest the next checkpoint.",
            (classified[0].player,),
        )
    )
    return tuple(c.player for c in classified)


def distance_behind(race: Race, car: Car) -> tuple[int, int, int]:
    """How far behind the race a car is: laps and checkpoints not yet done (negated), then
    the squares to its next checkpoint (the view's `progress_key`, the other way round)."""
    far = distances(race.circuit, car.progress.checkpoint).get(car.square, 10_000) if car.square is not None else 10_000
    return (-car.progress.lap, -car.progress.checkpoint, far)


def _adjacency(resolver: _Round, runs: list[_Run], crashed: list[_Run], when: str) -> None:
    """S8: every car next to a car that crashed in this step crashes too; no chains."""
    caught = [
        (run, wreck)
        for run in runs
        if run.active
        for wreck in [next((w for w in crashed if w.square.touches(run.square)), None)]
        if wreck is not None
    ]
    for run, wreck in caught:
        resolver.crash(run, f"is caught in {wreck.car.player}'s crash {when}")


def _after_round(race: Race, car: Car, run: _Run, control: int, events: list[Event]) -> tuple[Car, bool]:
    """The car after the round, and whether it got nearer the end of the race (`STALL_ROUNDS`):
    it passed a checkpoint or the line, or ended the round nearer its next target than it has
    ended a round since it passed the last one (or than where it began, on its first leg)."""
    far = distances(race.circuit, run.progress.checkpoint).get(run.square, UNREACHABLE)
    if run.finished or (run.progress.lap, run.progress.checkpoint) != (car.progress.lap, car.progress.checkpoint):
        nearer, nearest = True, far
    else:
        best = car.nearest
        if best is None:
            best = distances(race.circuit, car.progress.checkpoint).get(run.trail[0], UNREACHABLE)
        nearer, nearest = far < best, min(far, best)
    return _car_after_round(race, car, run, control, events, nearest), nearer


def _car_after_round(race: Race, car: Car, run: _Run, control: int, events: list[Event], nearest: int) -> Car:
    program = car.program(race.round)
    ran = program.actions if program is not None else ()
    deficit = max(0, run.spent - control) if run.charged else car.deficit
    surcharge = 0 if run.charged else car.surcharge
    keep_from = race.round + 1
    changes: dict[str, object] = {
        "square": run.square,
        "heading": run.heading,
        "progress": run.progress,
        "oil": run.oil,
        "last_program": ran,
        "deficit": deficit,
        "trail": tuple(run.trail),
        "nearest": nearest,
    }
    if run.finished:
        changes.update(
            status=CarStatus.FINISHED,
            programs=(),
            finish_round=race.round,
            finish_control=run.finish_control,
            recklessness=run.recklessness,
            surcharge=surcharge,
        )
    elif run.crashed:
        # S9: the queued program for the next round is scrapped; it is sent again. Said in the
        # results (never silently), without its actions: a program is its player's secret. An
        # empty program (S14's default, or a hold) loses nothing: nothing is said of it. Queued,
        # not "sent": the rules cannot tell a player's program from a default (nmr=repeat).
        for scrapped in (p for p in car.programs if race.round < p.round <= keep_from and p.actions):
            events.append(
                Event(
                    "scrapped",
                    f"{car.player}'s queued program for round {scrapped.round} is scrapped "
                    f"(a crashed car's queued orders are): {car.player} sends RESTART and the programs again.",
                    (car.player,),
                )
            )
        changes.update(
            status=CarStatus.CRASHED,
            crashes=car.crashes + 1,
            recklessness=0,
            surcharge=surcharge + run.surcharge,
            oil=False,
            programs=tuple(p for p in car.programs if p.round > keep_from),
        )
    else:
        # §4.2: recklessness is reset after a round with no loss of control
        changes.update(
            recklessness=run.recklessness if run.lost else 0,
            surcharge=surcharge,
            programs=tuple(p for p in car.programs if p.round >= keep_from),
        )
        if ran:
            events.append(
                Event(
                    "drive",
                    f"{car.player} drove {' '.join(ran)}: at {run.square} facing {run.heading.value}, {run.spent} spent of {control}"
                    + (f", {deficit} carried over." if deficit else "."),
                    (car.player,),
                )
            )
    return dataclasses.replace(car, **changes)  # type: ignore[arg-type]
