"""SpeedPhreakz values: headings, squares, the action chart, the circuit, cars, orders, the race.

Everything here is a frozen value. The chart, the terrain key and the maps are data
(`rules/speedphreakz/data/`, loaded by `data.py`); this module only gives them types.
Rule references (§4.x, S1..S16) are to `shared/design/speedphreakz.md`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from rules.api import PlayerId


class Heading(enum.Enum):
    """The 8 compass headings, clockwise from north (§4.4). x runs right, y runs down (§4.7)."""

    N = "N"
    NE = "NE"
    E = "E"
    SE = "SE"
    S = "S"
    SW = "SW"
    W = "W"
    NW = "NW"

    @property
    def index(self) -> int:
        return _HEADING_ORDER.index(self)

    @property
    def vector(self) -> tuple[int, int]:
        return _VECTORS[self]

    def turned(self, eighths: int) -> Heading:
        """The heading after turning `eighths` x 45 degrees (positive = right, clockwise)."""
        return _HEADING_ORDER[(self.index + eighths) % 8]

    @classmethod
    def parse(cls, text: str) -> Heading:
        try:
            return cls(text.strip().upper())
        except ValueError:
            names = " ".join(h.value for h in _HEADING_ORDER)
            raise ValueError(f"unknown heading {text.strip()!r}; use one of {names}") from None


_HEADING_ORDER: tuple[Heading, ...] = tuple(Heading)
_VECTORS: dict[Heading, tuple[int, int]] = {
    Heading.N: (0, -1),
    Heading.NE: (1, -1),
    Heading.E: (1, 0),
    Heading.SE: (1, 1),
    Heading.S: (0, 1),
    Heading.SW: (-1, 1),
    Heading.W: (-1, 0),
    Heading.NW: (-1, -1),
}


@dataclass(frozen=True, slots=True, order=True)
class Square:
    """One grid square; written ``x,y`` in orders and reports."""

    x: int
    y: int

    def __str__(self) -> str:
        return f"{self.x},{self.y}"

    def step(self, heading: Heading) -> Square:
        dx, dy = heading.vector
        return Square(self.x + dx, self.y + dy)

    def touches(self, other: Square) -> bool:
        """Same square or one of the 8 neighbours (the adjacency of §4.5)."""
        return max(abs(self.x - other.x), abs(self.y - other.y)) <= 1

    @classmethod
    def parse(cls, text: str) -> Square:
        parts = text.replace(" ", "").split(",")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"a square is written x,y (e.g. 2,4), not {text.strip()!r}")
        return cls(int(parts[0]), int(parts[1]))


# -- the chart (§4.4) ------------------------------------------------------------------


class ActionKind(enum.Enum):
    """Straight tail = movement, curved tail = turn only (§4.2 chart legend, S11)."""

    MOVE = "move"
    TURN = "turn"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One line of a loss-of-control table: what the action becomes.

    In order: turn `pre_turn` x 45 degrees in place, shift one square towards `pre_shift`
    (45-degree steps from the heading, -2 = the car's left), then the action itself unless
    `keeps_action` is false, with `extra_squares` more squares (min 0) if it moves and
    `extra_turn` x 45 degrees more turning (magnitude, min 0) if it turns.
    """

    name: str
    pre_turn: int = 0
    pre_shift: int | None = None
    keeps_action: bool = True
    extra_squares: int = 0
    extra_turn: int = 0


@dataclass(frozen=True, slots=True)
class Action:
    """One code of the action chart: move `squares` squares towards `step` (45-degree steps
    from the heading: 0 ahead, 4 back, -1 forward-left), then turn `turn` x 45 degrees."""

    code: str
    name: str
    kind: ActionKind
    cost: int
    squares: int
    step: int
    turn: int
    table: tuple[Outcome, ...]  # indexed by the d10 face after recklessness, 0..9 (S1)
    effect: str = ""

    @property
    def is_turn(self) -> bool:
        return self.kind is ActionKind.TURN


@dataclass(frozen=True, slots=True)
class Chart:
    actions: tuple[Action, ...]

    def get(self, code: str) -> Action | None:
        for action in self.actions:
            if action.code == code:
                return action
        return None

    def __getitem__(self, code: str) -> Action:
        action = self.get(code)
        if action is None:
            raise KeyError(code)
        return action

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(a.code for a in self.actions)


# -- terrain and the circuit (§4.6, §4.7) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Terrain:
    char: str
    name: str
    solid: bool = False
    surcharge: int = 0  # control per square entered (§4.6)
    oil: bool = False  # the next action is rolled (§4.6)


@dataclass(frozen=True, slots=True)
class Circuit:
    """A map (§4.7). `grid[y][x]`; anything off the grid is void (solid)."""

    name: str
    grid: tuple[str, ...]
    start_squares: tuple[Square, ...]
    finish_cells: tuple[Square, ...]
    finish_direction: Heading
    checkpoints: tuple[tuple[Square, ...], ...]
    laps: int
    terrain_key: tuple[Terrain, ...] = field(compare=True)

    @property
    def width(self) -> int:
        return len(self.grid[0]) if self.grid else 0

    @property
    def height(self) -> int:
        return len(self.grid)

    def on_map(self, square: Square) -> bool:
        return 0 <= square.y < self.height and 0 <= square.x < self.width

    def terrain(self, square: Square) -> Terrain:
        char = self.grid[square.y][square.x] if self.on_map(square) else " "
        for terrain in self.terrain_key:
            if terrain.char == char:
                return terrain
        return VOID

    def solid(self, square: Square) -> bool:
        return self.terrain(square).solid

    def blocked(self, frm: Square, heading: Heading) -> bool:
        """Whether one step from `frm` towards `heading` hits a solid or squeezes
        diagonally between two orthogonally adjacent solids (§4.5)."""
        to = frm.step(heading)
        if self.solid(to):
            return True
        dx, dy = heading.vector
        if dx and dy:
            return self.solid(Square(frm.x + dx, frm.y)) and self.solid(Square(frm.x, frm.y + dy))
        return False

    def target_cells(self, checkpoint: int) -> tuple[Square, ...]:
        """The cells a car with `checkpoint` checkpoints passed this lap heads for."""
        if checkpoint < len(self.checkpoints):
            return self.checkpoints[checkpoint]
        return self.finish_cells


VOID = Terrain(" ", "void", solid=True)


@dataclass(frozen=True, slots=True)
class Progress:
    """Laps completed and checkpoints passed on the current lap."""

    lap: int = 0
    checkpoint: int = 0


class Passing(enum.Enum):
    NOTHING = "nothing"
    CHECKPOINT = "checkpoint"
    LAP = "lap"
    FINISH = "finish"


def progress_on_entry(circuit: Circuit, progress: Progress, frm: Square, to: Square) -> tuple[Progress, Passing]:
    """What entering `to` from `frm` scores (§4.7): the next checkpoint in order, or, with
    every checkpoint passed, the line crossed with a positive component in its direction."""
    if progress.checkpoint < len(circuit.checkpoints):
        if to in circuit.checkpoints[progress.checkpoint]:
            return Progress(progress.lap, progress.checkpoint + 1), Passing.CHECKPOINT
        return progress, Passing.NOTHING
    if to in circuit.finish_cells:
        dx, dy = circuit.finish_direction.vector
        if (to.x - frm.x) * dx + (to.y - frm.y) * dy > 0:
            lap = progress.lap + 1
            if lap >= circuit.laps:
                return Progress(lap, 0), Passing.FINISH
            return Progress(lap, 0), Passing.LAP
    return progress, Passing.NOTHING


# -- orders (§5) ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Colour:
    """``COLOUR red``."""

    colour: str


@dataclass(frozen=True, slots=True)
class Start:
    """``START 2,4 FACING N``: before round 1, on a start square (S13: may be shared).

    ``START FREE FACING N`` (`square` None) asks for "a start square no one chose" (§5): it
    is placed by the resolver once every START of the set-up is known, and it is what a
    silent player gets.
    """

    square: Square | None
    heading: Heading

    @classmethod
    def free(cls, heading: Heading) -> Start:
        return cls(None, heading)

    @property
    def is_free(self) -> bool:
        return self.square is None


@dataclass(frozen=True, slots=True)
class Restart:
    """``RESTART 3,5 FACING E``: after a crash, the crash square or a neighbour (S10)."""

    square: Square
    heading: Heading


@dataclass(frozen=True, slots=True)
class Program:
    """``ROUND 7: F2 F1 VR F1 TL F1``; an empty program holds position (S14)."""

    round: int
    actions: tuple[str, ...]


Order = Colour | Start | Restart | Program


# -- the race -----------------------------------------------------------------------------


class CarStatus(enum.Enum):
    RACING = "racing"
    CRASHED = "crashed"  # crashed last round: re-placed at the start of the next (S9, S10)
    FINISHED = "finished"
    OUT = "out"  # dropped by the GM or resigned


class NoOrders(enum.Enum):
    """What a car does when its player sends nothing (S14)."""

    EMPTY = "empty"
    REPEAT = "repeat"


STALL_ROUNDS = 10
"""A race in which no car has got nearer the end (passed a checkpoint or the line, or come
nearer its next one than it had been) for this many rounds in a row is stalled: the GM is told
then, and every this many rounds after while it lasts (`Game.stall`)."""


@dataclass(frozen=True, slots=True)
class Options:
    map: str = "ring"
    max_actions: int = 12  # S15
    nmr: NoOrders = NoOrders.EMPTY
    max_rounds: int | None = None  # §5: "No round limit by default"; a GM may set a cap


@dataclass(frozen=True, slots=True)
class Car:
    player: PlayerId
    letter: str
    colour: str | None = None
    square: Square | None = None
    heading: Heading = Heading.N
    status: CarStatus = CarStatus.RACING
    recklessness: int = 0
    crashes: int = 0
    deficit: int = 0  # carried to the next first action (§4.2)
    surcharge: int = 0  # crash surcharge on the next first action (S9)
    oil: bool = False  # the next action is rolled (§4.6)
    progress: Progress = Progress()
    programs: tuple[Program, ...] = ()  # queued, by round
    last_program: tuple[str, ...] = ()
    finish_round: int | None = None
    finish_control: int | None = None  # control left on crossing (S12)
    trail: tuple[Square, ...] = ()  # the squares of the last round, in order (for the map)
    nearest: int | None = None
    """The fewest squares to its next target (checkpoint, or the line) it has been at since it
    passed the last one: how far it has got on this leg (None before the start)."""

    @property
    def racing(self) -> bool:
        return self.status in (CarStatus.RACING, CarStatus.CRASHED)

    def program(self, round_no: int) -> Program | None:
        for program in self.programs:
            if program.round == round_no:
                return program
        return None


@dataclass(frozen=True, slots=True)
class Race:
    """The state between shell turns: turn t resolves round `round` (= t)."""

    circuit: Circuit
    options: Options
    cars: tuple[Car, ...]
    round: int = 1
    finished: bool = False
    finish_order: tuple[PlayerId, ...] = ()
    last_control: int | None = None
    arrivals: tuple[tuple[int, tuple[PlayerId, ...]], ...] = ()
    """S16: for each round not yet resolved, the players in the order their programs for it
    arrived (earlier turns first; within a turn, the order the shell gives to `resolve`)."""
    stalled: int = 0
    """Rounds in a row in which no car got nearer the end of the race (`STALL_ROUNDS`)."""

    def car(self, player: PlayerId) -> Car:
        for car in self.cars:
            if car.player == player:
                return car
        raise KeyError(player)

    def arrival(self, round_no: int, player: PlayerId) -> int:
        """Where `player` comes in the order programs for `round_no` arrived (S16: "whoever
        submitted first"): its place in `arrivals`, else after every listed player, by seat."""
        listed = next((players for number, players in self.arrivals if number == round_no), ())
        if player in listed:
            return listed.index(player)
        seats = [car.player for car in self.cars]
        return len(listed) + (seats.index(player) if player in seats else len(seats))

    @property
    def set_up(self) -> bool:
        """Whether the open turn is the set-up (colour, start, rounds 1 and 2)."""
        return self.round == 1

    def allowed_rounds(self, player: PlayerId) -> tuple[int, ...]:
        """The rounds `player` may send programs for now (§5, S9)."""
        if self.finished:
            return ()
        car = self.car(player)
        if not car.racing:
            return ()
        if self.set_up or car.status is CarStatus.CRASHED:
            return (self.round, self.round + 1)
        return (self.round + 1,)
