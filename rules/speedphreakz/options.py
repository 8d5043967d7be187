"""Where a car can get in the round its player orders now ("your own options,
drawn"): every square a program of that round can end on, with the cheapest such program and
its control cost, set against the round's control range.

§4.2: control C = 1d100+100 (101-200), rolled after the programs are in, the same for
everyone; the action during which the cumulative cost exceeds C, and every later one, is
rolled on the loss-of-control table. So a program costing 101 or less never loses control
(`Band.IN_CONTROL`), one costing 102-200 loses it when C comes out below its cost
(`Band.MAY_LOSE`, with that chance), and one costing more than 200 always loses it (not
listed). Costs count as the resolver charges them (§4.4 "Cost accounting"): every action's
chart cost, the terrain surcharges of the squares entered (§4.6), and on the first action
the deficit and crash surcharge carried into the round.

A program here is driven as ordered: §4.2's restrictions hold (the first action a movement,
never two turns in a row, at most `max_actions`); none drives into a solid or squeezes
between two (§4.5, a crash); none drives on after entering oil (§4.6: the next action is
rolled). Other cars are left out: they do not block during a round (§4.5), and where they
end it is not known.

Which round and from where (§5, orders one round ahead): a racing car orders round r+1
while round r is still to run, so its options start where its program for round r leaves it
driven as ordered (and the deficit that round may leave is not known yet); a car that
crashed orders round r again from where it is re-placed (the S10 default, unless it asks for
another square).
"""

from __future__ import annotations

import enum
import functools
import heapq
import textwrap
from dataclasses import dataclass

from rules.speedphreakz.data import chart, distances
from rules.speedphreakz.model import (
    Action,
    Car,
    CarStatus,
    Circuit,
    Heading,
    NoOrders,
    Progress,
    Race,
    Square,
    progress_on_entry,
)
from rules.speedphreakz.resolve import default_restart, previous_program

CONTROL_LOW = 101
"""The least control a round can have (1d100+100): a program costing this or less never
loses control."""
CONTROL_HIGH = 200
"""The most control a round can have: a program costing more always loses control."""


RISKY = 150
"""Up to here a program loses control less often than not (C below its cost: at most 49%)."""


class Band(enum.Enum):
    """How sure a program's control is: never lost (cost 101 or less), lost less often than
    not (102-150), lost more often than not (151-200)."""

    IN_CONTROL = "in control whatever the roll"
    RISKY = "may lose control"
    LONG_SHOT = "likely to lose control"

    @classmethod
    def of(cls, cost: int) -> Band:
        if cost <= CONTROL_LOW:
            return cls.IN_CONTROL
        return cls.RISKY if cost <= RISKY else cls.LONG_SHOT

    @property
    def digit(self) -> str:
        """Its mark in the text map: 1, 2, 3."""
        return str(list(Band).index(self) + 1)


@dataclass(frozen=True, slots=True)
class SquareOption:
    """A square a program can end on: the cheapest program there, its control cost and the
    heading it ends with."""

    square: Square
    cost: int
    program: tuple[str, ...]
    heading: Heading

    @property
    def band(self) -> Band:
        return Band.of(self.cost)

    @property
    def chance_lost(self) -> int:
        """The chance in percent that control C (1d100+100) comes out below the cost."""
        return max(0, min(100, self.cost - CONTROL_LOW))


@dataclass(frozen=True, slots=True)
class ProgramOptions:
    """The options of one car for `round`: from `start` facing `heading`, with `extra` added
    to the first action (deficit and crash surcharge known now), `assumes` saying where the
    start comes from (the words after the heading, up to the full stop: " (after your round 2
    program ...)" or, for a crashed car, ", if you restart there (the default). RESTART ..."); every square reachable for at most 200 (`squares`), the squares of
    each band nearest the next checkpoint or the line (`best`), and the rectangle of the map
    an excerpt shows (`window`: x0, y0, x1, y1, inclusive). `first_rolled`: the car starts
    the round on oil, so its first action is rolled whatever it costs (§4.6)."""

    player: str
    round: int
    start: Square
    heading: Heading
    extra: int
    assumes: str
    squares: tuple[SquareOption, ...]
    best: tuple[SquareOption, ...]
    window: tuple[int, int, int, int]
    first_rolled: bool = False

    def at(self, square: Square) -> SquareOption | None:
        for option in self.squares:
            if option.square == square:
                return option
        return None


def program_options(race: Race, player: str) -> ProgramOptions | None:
    """`player`'s options for the round they order now; None at the set-up (no car is on the
    map yet), once the race is over, for a car out of it, or one whose round in hand drives
    it into a solid."""
    if race.finished or race.set_up:
        return None
    car = race.car(player)
    if car.square is None or car.status not in (CarStatus.RACING, CarStatus.CRASHED):
        return None
    circuit = race.circuit
    if car.status is CarStatus.CRASHED:
        taken = {c.square for c in race.cars if c.status is CarStatus.RACING and c.square is not None}
        restart = default_restart(race, car, taken)
        start, heading, progress = restart.square, restart.heading, car.progress
        oil = False  # §4.2: a crash ends the oil's hold on the car
        round_no = race.round
        extra = car.deficit + car.surcharge
        assumes = ", if you restart there (the default). RESTART may instead name the crash square or a neighbour"
    else:
        queued = round_actions(race, car)
        ahead = drive(circuit, car, queued)
        if ahead is None:
            return None
        start, heading, progress, cost_then, oil, rolled = ahead
        round_no = race.round + 1
        # §4.2: the deficit goes onto the next round's first action; a round with no action
        # leaves the deficit and the crash surcharge carried as they are (S14)
        extra = 0 if queued else car.deficit + car.surcharge
        assumes = (
            f" (after your round {race.round} program {' '.join(queued)} runs as ordered"
            if queued
            else f" (after your car holds position in round {race.round}"
        )
        if cost_then > CONTROL_LOW:
            assumes += (
                f"; it costs {cost_then}, so it loses control if control is below that, and then leaves a "
                "deficit on round " + str(round_no) + "'s first action"
            )
        if rolled:
            assumes += "; oil makes one of its actions rolled, so it may end elsewhere"
        if oil:
            assumes += "; it ends on oil, so your first action is rolled"
        assumes += ")"
    squares = _search(circuit, race.options.max_actions, start, heading, extra)
    far = distances(circuit, progress.checkpoint)
    best: list[SquareOption] = []
    for band in Band:
        inside = [o for o in squares if o.band is band and o.square != start]
        if inside:
            best.append(min(inside, key=lambda o: (far.get(o.square, 10_000), o.cost, o.square)))
    xs = [o.square.x for o in squares] + [start.x]
    ys = [o.square.y for o in squares] + [start.y]
    window = (
        max(0, min(xs) - 1),
        max(0, min(ys) - 1),
        min(circuit.width - 1, max(xs) + 1),
        min(circuit.height - 1, max(ys) + 1),
    )
    return ProgramOptions(player, round_no, start, heading, extra, assumes, squares, tuple(best), window, oil)


def round_actions(race: Race, car: Car) -> tuple[str, ...]:
    """The program the car runs in the round in hand: the one queued, else (nothing sent) the
    NMR default of S14: hold position, or with ``nmr=repeat`` the previous program."""
    program = car.program(race.round)
    if program is not None:
        return program.actions
    return previous_program(car, race.round) if race.options.nmr is NoOrders.REPEAT else ()


def drive(
    circuit: Circuit, car: Car, codes: tuple[str, ...]
) -> tuple[Square, Heading, Progress, int, bool, bool] | None:
    """Where the program `codes` leaves the car driven as ordered (no loss of control):
    square, heading, progress, what it costs (with the deficit and surcharge the car
    carries), whether it ends on oil, and whether oil makes one of its actions rolled; None
    if it drives into a solid (a crash)."""
    assert car.square is not None
    actions = chart()
    square, heading, progress = car.square, car.heading, car.progress
    cost = car.deficit + car.surcharge if codes else 0
    oil = car.oil
    rolled = False
    for code in codes:
        action = actions[code]
        cost += action.cost
        rolled = rolled or oil
        oil = False
        step = heading.turned(action.step)
        for _ in range(action.squares):
            if circuit.blocked(square, step):
                return None
            nxt = square.step(step)
            progress, _ = progress_on_entry(circuit, progress, square, nxt)
            square = nxt
            terrain = circuit.terrain(square)
            cost += terrain.surcharge
            oil = oil or terrain.oil
        heading = heading.turned(action.turn)
    return square, heading, progress, cost, oil, rolled


BINDING_CAP = 11
"""A program of 12 actions costs at least 210 (turns cost 15 at least and never come two in
a row; movements 20): any cap of 11 or more never binds a program of 200 or less, so the
search need not tell programs apart by their length (which costs it a factor of 12)."""

_HEADINGS = tuple(Heading)


@dataclass(frozen=True, slots=True)
class _Ground:
    """A circuit's terrain for the search, squares as (x, y) and headings as 0..7 (clockwise
    from N): what is solid, what entering a square costs, where the oil is, and each action's
    result from each place and heading, worked out once per circuit (`moves`)."""

    solid: frozenset[tuple[int, int]]
    surcharge: dict[tuple[int, int], int]
    oil: frozenset[tuple[int, int]]
    width: int
    height: int
    moves: dict[tuple[int, int, int, int], tuple[int, int, int, int] | None]

    def is_solid(self, x: int, y: int) -> bool:
        return (x, y) in self.solid or not (0 <= x < self.width and 0 <= y < self.height)

    def move(self, x: int, y: int, h: int, index: int, action: Action) -> tuple[int, int, int, int] | None:
        """`action` from (x, y) facing `h`, driven as ordered: where it ends, the heading, the
        surcharges; None if it drives into a solid or squeezes between two (§4.5), or enters
        oil before its last square (the rest of it would be rolled, §4.6)."""
        key = (x, y, h, index)
        if key in self.moves:
            return self.moves[key]
        dx, dy = _HEADINGS[(h + action.step) % 8].vector
        surcharge = 0
        result: tuple[int, int, int, int] | None = None
        for k in range(action.squares):
            if self.is_solid(x + dx, y + dy) or (dx and dy and self.is_solid(x + dx, y) and self.is_solid(x, y + dy)):
                break
            x, y = x + dx, y + dy
            surcharge += self.surcharge.get((x, y), 0)
            if (x, y) in self.oil and k + 1 < action.squares:
                break
        else:
            result = (x, y, (h + action.turn) % 8, surcharge)
        self.moves[key] = result
        return result


@functools.lru_cache(maxsize=16)
def _ground(circuit: Circuit) -> _Ground:
    kinds = {(x, y): circuit.terrain(Square(x, y)) for y in range(circuit.height) for x in range(circuit.width)}
    return _Ground(
        frozenset(s for s, t in kinds.items() if t.solid),
        {s: t.surcharge for s, t in kinds.items() if t.surcharge},
        frozenset(s for s, t in kinds.items() if t.oil),
        circuit.width,
        circuit.height,
        {},
    )


def _search(
    circuit: Circuit, cap: int, start: Square, heading: Heading, extra: int, limit: int = CONTROL_HIGH
) -> tuple[SquareOption, ...]:
    """The cheapest program (cost <= `limit`, 200 unless said) to every square: Dijkstra over
    the end of each action (§4.2 order restrictions, §4.4 costs, §4.6 surcharges, §4.5
    solids). A state is (x, y, heading, the last action was a turn, actions so far where the
    cap can bind)."""
    actions = tuple((index, action, action.is_turn) for index, action in enumerate(chart().actions))
    ground = _ground(circuit)
    first = (start.x, start.y, heading.index, False, 0)
    best: dict[tuple[int, int, int, bool, int], int] = {first: 0}
    queue: list[tuple[int, int, tuple[str, ...], tuple[int, int, int, bool, int]]] = [(0, 0, (), first)]
    found: dict[tuple[int, int], tuple[int, tuple[str, ...], int]] = {}
    counter = 0
    while queue:
        cost, _, program, state = heapq.heappop(queue)
        if best.get(state, cost + 1) < cost:
            continue
        x, y, h, after_turn, _ = state
        count = len(program)
        if program:
            known = found.get((x, y))
            if known is None or (cost, count) < (known[0], len(known[1])):
                found[(x, y)] = (cost, program, h)
        if count >= cap or (program and (x, y) in ground.oil):
            continue  # the cap, or oil: the next action would be rolled (§4.6)
        for index, action, is_turn in actions:
            if is_turn and (count == 0 or after_turn):
                continue  # §4.2: a round opens with a movement; never two turns in a row
            moved = ground.move(x, y, h, index, action)
            if moved is None:
                continue
            tx, ty, th, surcharge = moved
            total = cost + action.cost + surcharge + (extra if count == 0 else 0)
            if total > limit:
                continue
            nxt = (tx, ty, th, is_turn, count + 1 if cap < BINDING_CAP else 1)
            if best.get(nxt, total + 1) <= total:
                continue
            best[nxt] = total
            counter += 1
            heapq.heappush(queue, (total, counter, (*program, action.code), nxt))
    return tuple(
        SquareOption(Square(x, y), cost, program, _HEADINGS[h])
        for (x, y), (cost, program, h) in sorted(found.items(), key=lambda item: (item[0][1], item[0][0]))
    )


def reachable(
    circuit: Circuit, cap: int, start: Square, heading: Heading, extra: int, limit: int = CONTROL_HIGH
) -> tuple[SquareOption, ...]:
    """Every square a program of at most `cap` actions can end on from `start` facing
    `heading`, driven as ordered for `limit` control or less (200 unless said), with the
    cheapest such program (`extra` added to its first action): what `program_options`
    shows, from any place."""
    return _search(circuit, cap, start, heading, extra, limit)


# -- the options as text ---------------------------------------------------------------------


def options_text(race: Race, options: ProgramOptions) -> tuple[str, ...]:
    """The options in plain text: the map around the car with x,y coordinates,
    beside it the same squares marked with what the cheapest program there costs, then the
    squares of each band nearest the next checkpoint, with a program to get there.

    No line reads as an order: programs are printed without ``ROUND n:`` (testing.md)."""
    circuit = race.circuit
    x0, y0, x1, y1 = options.window
    mine = race.car(options.player)
    cars: dict[Square, str] = {}
    for car in race.cars:
        if car.square is not None and car.racing and car.player != options.player:
            cars[car.square] = car.letter.lower() if car.status is CarStatus.CRASHED else car.letter
    head = f"Where you can get in round {options.round}, from {options.start} facing {options.heading.value}{options.assumes}."
    out = textwrap.wrap(head, width=72, break_on_hyphens=False)
    if options.extra:
        out.append(f"Your first action costs {options.extra} more (deficit and crash surcharge carried).")
    if options.first_rolled:
        out.append("You start on oil: your first action is rolled on the loss-of-control table.")
    out.append(f"Control that round: {CONTROL_LOW}-{CONTROL_HIGH} (1d100+100, rolled after the orders are in).")
    out.append("")
    width = x1 - x0 + 1
    gap = "   "
    tens = "".join(str(x // 10) if x % 10 == 0 or x == x0 else " " for x in range(x0, x1 + 1))
    units = "".join(str(x % 10) for x in range(x0, x1 + 1))
    out.append(f"{'':4}{tens:<{width}}{gap}{tens}".rstrip())
    out.append(f"{'':4}{units:<{width}}{gap}{units}")
    for y in range(y0, y1 + 1):
        left = []
        right = []
        for x in range(x0, x1 + 1):
            square = Square(x, y)
            char = circuit.grid[y][x]
            if square == options.start:
                left.append(mine.letter)
                right.append("@")
                continue
            left.append(cars.get(square, char))
            option = options.at(square)
            if option is not None:
                right.append(option.band.digit)
            else:
                right.append("#" if circuit.solid(square) else "-")
        out.append(f"{y:>3} {''.join(left)}{gap}{''.join(right)}")
    out.append("")
    out.append("Left: the map ('.' tarmac, ',' grass +10, ':' gravel +20, 'o' oil, '#' barrier,")
    out.append(f"'S' the line; letters are cars, yours {mine.letter}). Right: the cheapest program ending")
    out.append(
        f"there costs 1: {CONTROL_LOW} or less (never out of control), 2: {CONTROL_LOW + 1}-{RISKY}, 3: {RISKY + 1}-{CONTROL_HIGH};"
    )
    out.append("'@' where you start, '-' out of reach. x runs right, y down, as in x,y.")
    for option in options.best:
        risk = (
            "never loses control" if option.band is Band.IN_CONTROL else f"{option.chance_lost}% chance to lose control"
        )
        text = (
            f"Furthest along at {option.band.digit}: {option.square} facing {option.heading.value}, cost {option.cost} "
            f"({risk}), by {' '.join(option.program)}"
        )
        out.extend(textwrap.wrap(text, width=72, initial_indent="  ", subsequent_indent="    "))
    return tuple(out)


# -- what a program sent costs (the confirmation) --------------------------------------------


def action_costs(
    circuit: Circuit, start: Square, heading: Heading, extra: int, codes: tuple[str, ...]
) -> tuple[int, ...] | None:
    """The cumulative control cost after each action of `codes` driven as ordered from
    `start` facing `heading`, `extra` (carried deficit and crash surcharge, §4.4) added to
    the first action and every terrain surcharge where it is entered (§4.6); None if the
    program drives into a solid (a crash, §4.2)."""
    actions = chart()
    square, cost, after = start, extra, []
    for code in codes:
        action = actions[code]
        cost += action.cost
        step = heading.turned(action.step)
        for _ in range(action.squares):
            if circuit.blocked(square, step):
                return None
            square = square.step(step)
            cost += circuit.terrain(square).surcharge
        heading = heading.turned(action.turn)
        after.append(cost)
    return tuple(after)


def _control_words(after: tuple[int, ...]) -> str:
    """What C (1d100+100, 101-200) does to a program of these cumulative costs (S4: the action
    that takes the cost above C is the first rolled)."""
    may = next((i for i, cost in enumerate(after, 1) if cost > CONTROL_LOW), None)
    will = next((i for i, cost in enumerate(after, 1) if cost > CONTROL_HIGH), None)
    if may is None:
        return f"control this round is {CONTROL_LOW}-{CONTROL_HIGH}, so you stay in control whatever the roll"
    text = f"control this round is {CONTROL_LOW}-{CONTROL_HIGH}, so you may lose control from action {may}"
    if will is not None:
        text += f", and will by action {will} at the latest"
    return text


def program_costs(race: Race, player: str, programs: tuple[tuple[int, tuple[str, ...]], ...]) -> tuple[str, ...]:
    """For the confirmation (mail-interface.md: "program cost 125 of a 101-200 control
    range"): what each program sent (round, actions) costs and from which action it may lose
    control. The round the car orders now is driven from where it will start it
    (`program_options`: its terrain and what it carries count); a later round's program is
    priced from the action chart alone."""
    options = program_options(race, player)
    table = chart()
    said: list[str] = []
    for round_no, codes in programs:
        if not codes:
            continue
        if options is not None and round_no == options.round:
            after = action_costs(race.circuit, options.start, options.heading, options.extra, codes)
            if after is None:
                said.append(
                    f"Round {round_no}, as ordered from {options.start} facing {options.heading.value}, "
                    "drives into a solid: a crash."
                )
                continue
            carried = f" ({options.extra} carried over included)" if options.extra else ""
            rolled = "; oil makes your first action rolled whatever it costs" if options.first_rolled else ""
            said.append(f"Round {round_no} program cost {after[-1]}{carried}; {_control_words(after)}{rolled}.")
        else:
            running, after_list = 0, []
            for code in codes:
                running += table[code].cost
                after_list.append(running)
            said.append(
                f"Round {round_no} program cost {running} before terrain and what is carried over; "
                f"{_control_words(tuple(after_list))}."
            )
    return tuple(said)
