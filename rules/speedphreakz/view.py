"""What SpeedPhreakz shows: the race order, each car's figures, the text map, the views.

The view is a `SpeedPhreakzView`: the common view, the circuit (the grid and its terrain,
the start, the line and the checkpoints), the direction of the race through each checkpoint
and over the line (`course`), and every car on it (`CarOnMap`), which is what the turn
picture is drawn from, plus the text map the results mail can print. A player's own view
adds their options for the round they order (`options`, the squares its programs
can reach and their control cost) and the same as text (`plot_map`), private to them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from rules.api import Figures, Placing, PlayerId, Resolution, Standings, TableRow, View, Viewer
from rules.speedphreakz.data import distances
from rules.speedphreakz.model import Car, CarStatus, Circuit, Heading, Race, Square
from rules.speedphreakz.options import (
    ProgramOptions,
    drive,
    options_text,
    program_options,
    round_actions,
)

UNREACHABLE = 10_000


def progress_key(race: Race, car: Car) -> tuple[int, int, int]:
    """Laps done, checkpoints passed, and the (negated) distance to the next target."""
    far = UNREACHABLE
    if car.square is not None:
        far = distances(race.circuit, car.progress.checkpoint).get(car.square, UNREACHABLE)
    return (car.progress.lap, car.progress.checkpoint, -far)


def standings(race: Race) -> Standings:
    """Finished cars first, in finishing order; then the rest by progress (ties share)."""
    order: list[tuple[PlayerId, ...]] = [(p,) for p in race.finish_order]
    # (a race ended by max_rounds classifies the cars still racing: they are in finish_order)
    rest = [c for c in race.cars if c.racing and c.player not in race.finish_order]
    groups: dict[tuple[int, int, int], list[PlayerId]] = {}
    for car in rest:
        groups.setdefault(progress_key(race, car), []).append(car.player)
    for key in sorted(groups, reverse=True):
        order.append(tuple(sorted(groups[key])))
    return tuple(order)


def figures(race: Race, player: PlayerId) -> Figures:
    car = race.car(player)
    return {
        "square": str(car.square) if car.square is not None else "",
        "heading": car.heading.value,
        "recklessness": car.recklessness,
        "crashes": car.crashes,
        "lap": min(car.progress.lap + 1, race.circuit.laps),
        "checkpoint": car.progress.checkpoint,
        "status": car.status.value,
    }


def map_lines(race: Race) -> list[str]:
    """The map with a column ruler and row numbers; cars as their letters (lower case for
    a car that crashed last round and waits to be re-placed)."""
    grid = [list(row) for row in race.circuit.grid]
    placed: set[tuple[int, int]] = set()
    for car in race.cars:
        if car.square is None or car.status in (CarStatus.FINISHED, CarStatus.OUT):
            continue
        letter = car.letter.lower() if car.status is CarStatus.CRASHED else car.letter
        where = (car.square.x, car.square.y)
        grid[car.square.y][car.square.x] = "*" if where in placed else letter
        placed.add(where)
    width = race.circuit.width
    tens = "".join(str(x // 10) if x % 10 == 0 else " " for x in range(width))
    units = "".join(str(x % 10) for x in range(width))
    lines = [f"    {tens}".rstrip(), f"    {units}"]
    lines += [f"{y:>3} {''.join(row)}" for y, row in enumerate(grid)]
    return lines


def set_up_map(race: Race) -> tuple[str, ...]:
    """The set-up's text map for a player choosing a start: the whole circuit with a ruler and
    row numbers (x runs right, y down, as START x,y reads them), each start square marked '+',
    the terrain's key and the start squares and the race's direction in words."""
    circuit = race.circuit
    grid = [list(row) for row in circuit.grid]
    for square in circuit.start_squares:
        grid[square.y][square.x] = "+"
    width = circuit.width
    tens = "".join(str(x // 10) if x % 10 == 0 else " " for x in range(width))
    units = "".join(str(x % 10) for x in range(width))
    starts = " ".join(str(square) for square in circuit.start_squares)
    return (
        f"The circuit: choose your start among the squares marked '+' ({starts});",
        f"the race crosses the line heading {circuit.finish_direction.value}.",
        "",
        f"    {tens}".rstrip(),
        f"    {units}",
        *(f"{y:>3} {''.join(row)}" for y, row in enumerate(grid)),
        "",
        "'.' tarmac, ',' grass +10, ':' gravel +20, 'o' oil, '#' barrier, 'S' the line,",
        "'+' a start square. x runs right, y down, as in START x,y.",
    )


def legend(race: Race) -> list[str]:
    lines = [f"{car.letter} = {car.player} ({car.colour or 'no colour yet'})" for car in race.cars]
    lines.append("* = two or more cars; lower case = crashed, waiting to be re-placed")
    return lines


def turn_label(race: Race) -> str:
    if race.finished:
        return f"Race over after round {race.round - 1}"
    # Short, as every game's label is in a subject ("[sp1] SpeedPhreakz: Round 4, due ..."):
    # what to send is the sheet's to say (`order_help`: "Now send: ROUND 5").
    if race.set_up:
        return "Set-up and round 1"
    return f"Round {race.round}"


COLUMNS = ("Square", "Heading", "Lap", "Checkpoint", "Recklessness", "Crashes", "Status")


@dataclass(frozen=True, slots=True)
class CarOnMap:
    """One car on the map: its letter and colour (None until chosen), its place, its square
    (None before the start), heading and status, and `trail`, the squares it drove through
    in the last round, in order (empty if it did not move)."""

    player: PlayerId
    letter: str
    colour: str | None
    place: int
    square: Square | None
    heading: Heading
    status: CarStatus
    trail: tuple[Square, ...]


@dataclass(frozen=True, slots=True)
class CourseMark:
    """Where the race goes: checkpoint `number` (1, 2, ...; 0 is the start/finish line), the
    square in the middle of its cells and the heading the race takes through it (toward the
    next checkpoint, or over the line in its direction)."""

    number: int
    square: Square
    heading: Heading


def course(circuit: Circuit) -> tuple[CourseMark, ...]:
    """The line first (its direction, §4.7), then each checkpoint in order with the heading
    across it (a row of cells is crossed north or south, a column east or west) that leads
    on to the next target soonest (`data.distances`)."""
    marks = [CourseMark(0, _middle(circuit.finish_cells), circuit.finish_direction)]
    for index, cells in enumerate(circuit.checkpoints):
        middle = _middle(cells)
        far = distances(circuit, index + 1)
        across: tuple[Heading, ...] = tuple(Heading)
        if len({c.y for c in cells}) == 1 and len(cells) > 1:
            across = (Heading.N, Heading.S)
        elif len({c.x for c in cells}) == 1 and len(cells) > 1:
            across = (Heading.E, Heading.W)
        steps = [(far.get(middle.step(h), UNREACHABLE), h.index, h) for h in across if not circuit.blocked(middle, h)]
        heading = min(steps)[2] if steps else circuit.finish_direction
        marks.append(CourseMark(index + 1, middle, heading))
    return tuple(marks)


def _middle(cells: tuple[Square, ...]) -> Square:
    ordered = sorted(cells, key=lambda s: (s.x, s.y))
    return ordered[len(ordered) // 2]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeedPhreakzView(View):
    """The common view plus the circuit (`circuit`: ``grid[y][x]`` is the terrain character of
    square x,y, `terrain_key` says what each is), every car still racing or finished, in race
    order (`cars`), the text map (`map_lines`: a ruler, then a row a line, cars as letters;
    `map_legend`), `map_name`, `round` (the next round to run) and `control` (the last control
    roll, None before the first); `course`, the race's direction at the line and through each
    checkpoint. A player's own view adds `options` (None for anyone else, at the set-up and
    when the round in hand drives the car into a solid) and `plot_map` (the same as text)."""

    PRIVATE_FIELDS: ClassVar[tuple[str, ...]] = ("options", "plot_map")
    """The fields beside `private` that only the player's own view fills (empty for others)."""

    circuit: Circuit
    cars: tuple[CarOnMap, ...]
    map_name: str
    map_lines: tuple[str, ...]
    map_legend: tuple[str, ...]
    round: int
    control: int | None
    course: tuple[CourseMark, ...] = ()
    options: ProgramOptions | None = None
    plot_map: tuple[str, ...] = ()


def summary(race: Race, places: Standings) -> str:
    """One sentence saying where the race stands, with its full stop (as Racecraft's)."""
    if race.finish_order:
        return f"{race.finish_order[0]} wins the race."
    if not places:
        return "No cars are racing."
    if race.set_up:
        return "The cars are on the grid."
    front = places[0]
    if len(front) > 1:
        return f"{' and '.join(front)} share the lead."
    return f"{front[0]} leads."


def build_view(race: Race, resolution: Resolution[Race] | None, viewer: PlayerId | Viewer) -> SpeedPhreakzView:
    places = standings(race)
    rows: list[TableRow] = []
    cars: list[CarOnMap] = []
    place_of: dict[PlayerId, int] = {}
    place = 1
    for position in places:
        for p in position:
            place_of[p] = place
        place += len(position)
    for position in places:
        for p in position:
            f = figures(race, p)
            cells = (
                str(f["square"]),
                str(f["heading"]),
                f"{f['lap']}/{race.circuit.laps}",
                f"{f['checkpoint']}/{len(race.circuit.checkpoints)}",
                str(f["recklessness"]),
                str(f["crashes"]),
                str(f["status"]),
            )
            rows.append(TableRow(p, place_of[p], cells))
            car = race.car(p)
            cars.append(
                CarOnMap(p, car.letter, car.colour, place_of[p], car.square, car.heading, car.status, car.trail)
            )
    public = SpeedPhreakzView(
        title="SpeedPhreakz",
        turn_label=turn_label(race),
        finished=race.finished,
        standings=tuple(Placing(place_of[position[0]], tuple(position)) for position in places),
        columns=COLUMNS,
        table=tuple(rows),
        events=tuple(e.text for e in resolution.events) if resolution is not None else (),
        private=(),
        summary=summary(race, places),
        circuit=race.circuit,
        cars=tuple(cars),
        map_name=race.circuit.name,
        map_lines=tuple(map_lines(race)),
        map_legend=tuple(legend(race)),
        round=race.round,
        control=race.last_control,
        course=course(race.circuit),
        options=None,
        plot_map=(),
    )
    if isinstance(viewer, Viewer) or not any(c.player == viewer for c in race.cars):
        return public
    return player_view(race, public, viewer)


def player_view(race: Race, public: SpeedPhreakzView, player: PlayerId) -> SpeedPhreakzView:
    """`public` (the public view of `race`) with `player`'s own part: their private lines,
    their program options and the map of them (`PRIVATE_FIELDS`); `public` itself for
    anyone without a car in the race."""
    if not any(c.player == player for c in race.cars):
        return public
    private: list[str] = []
    options = program_options(race, player)
    plot_map: tuple[str, ...]
    if race.set_up:
        plot_map = set_up_map(race)
    else:
        plot_map = options_text(race, options) if options is not None else _no_options(race, race.car(player))
    car = race.car(player)
    for program in car.programs:
        private.append(f"Your program for round {program.round}: {' '.join(program.actions) or '(hold position)'}")
    if car.deficit:
        private.append(f"Deficit carried to your next first action: {car.deficit}")
    if car.surcharge:
        private.append(f"Crash surcharge on your next first action: {car.surcharge}")
    if car.oil:
        private.append("Oil: your next action will be rolled on the loss-of-control table")
    if car.status is CarStatus.CRASHED and not race.finished:
        private.append(f"You crashed: send RESTART x,y FACING h, ROUND {race.round} and ROUND {race.round + 1}")
    return replace(public, private=tuple(private), options=options, plot_map=plot_map)


def _no_options(race: Race, car: Car) -> tuple[str, ...]:
    """Why a racing car has no options to show: its round in hand crashes it as ordered."""
    if race.finished or race.set_up or car.status is not CarStatus.RACING or car.square is None:
        return ()
    codes = round_actions(race, car)
    if drive(race.circuit, car, codes) is None:
        return (
            f"Your round {race.round} program ({' '.join(codes)}), driven as ordered, runs into a solid square:",
            f"you would crash, and then send round {race.round + 1} again from where you are re-placed.",
        )
    return ()
