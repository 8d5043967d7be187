"""The car: its design (seed 003 car design table), tyres, wear, skill chips and damage."""

from __future__ import annotations

import enum
from dataclasses import dataclass

# Seed 003, "Car Design Table": columns -2..+2 (None = n.a.).
DESIGN_TABLE: dict[str, dict[int, int | None]] = {
    "ACC": {-2: None, -1: 20, 0: 40, 1: 60, 2: 80},
    "DEC": {-2: None, -1: 20, 0: 40, 1: 60, 2: 80},
    "TOP": {-2: 120, -1: 140, 0: 160, 1: 180, 2: 200},
    "START": {-2: 20, -1: 40, 0: 60, 1: 100, 2: 120},  # no 80: P2
}
DESIGN_FIELDS = ("ACC", "DEC", "TOP", "START", "PRIME", "OPTION", "SKILL")
DESIGN_POINTS = 2  # P1: the sum of the chosen columns may not exceed 2


class Tyre(enum.Enum):
    PRIME = "PRIME"
    OPTION = "OPTION"


class Status(enum.Enum):
    RACING = "racing"
    FINISHED = "finished"
    OUT = "out"


@dataclass(frozen=True, slots=True)
class Design:
    """The column chosen (-2..+2) for each row of the car design table."""

    acc: int = 0
    dec: int = 0
    top: int = 0
    start: int = 0
    prime: int = 0
    option: int = 0
    skill: int = 0

    def levels(self) -> dict[str, int]:
        return dict(
            zip(
                DESIGN_FIELDS,
                (self.acc, self.dec, self.top, self.start, self.prime, self.option, self.skill),
                strict=True,
            )
        )

    def problems(self) -> list[str]:
        """Why this design is not allowed (P1), empty when it is."""
        found = []
        for name, level in self.levels().items():
            if not -2 <= level <= 2:
                found.append(f"{name} {level}: each column is -2..+2")
            elif name in ("ACC", "DEC") and level == -2:
                found.append(f"{name} -2 is n.a. on the design table (lowest is -1)")
        total = sum(self.levels().values())
        if total > DESIGN_POINTS:
            found.append(f"the columns add up to {total:+d}; the design allows {DESIGN_POINTS} points in total")
        return found

    def rating(self, name: str) -> int:
        value = DESIGN_TABLE[name][self.levels()[name]]
        assert value is not None
        return value

    def tyre_wear(self, tyre: Tyre, laps: int) -> int:
        """Wear of one set: laps x 1..5 by level (P3; 3/6/9/12/15 for 3 laps)."""
        level = self.prime if tyre is Tyre.PRIME else self.option
        return laps * (level + 3)

    def skill_chips(self, laps: int) -> int:
        """Skill chips: laps x 0..4 by level (P3; 0/3/6/9/12 for 3 laps)."""
        return laps * (self.skill + 2)

    def text(self) -> str:
        return " ".join(f"{n} {v}" for n, v in self.levels().items())


DEFAULT_DESIGN = Design(prime=1, option=1)


@dataclass(frozen=True, slots=True)
class CornerRun:
    """What a car has paid for the corner it is in (P9): once per corner, topped up.

    `worst_raw` is the worst excess over the posted speeds (no line bonus) of the spaces
    entered in this corner, kept so that leaving a racing line can recompute (P11).
    `tier` is the row of the cornering chart paid for; `wear_paid` and `rolled` what paid it.
    """

    corner: str
    tier: int = 0
    wear_paid: int = 0
    rolled: bool = False
    worst_raw: int = 0


@dataclass(frozen=True, slots=True)
class LineRun:
    """The racing line a car follows: its id and the index of the line space it is on."""

    line: str
    index: int


class PitStage(enum.Enum):
    """Where a car is in the pits (seed 003 "Pitting Procedure", P28)."""

    ENTRANCE = "entrance"
    """Moved sideways into the entrance lane after its move; next turn: slow to the limit."""
    LANE = "lane"
    """In the pit lane with new tyres; next turn: back onto the track."""


@dataclass(frozen=True, slots=True)
class PitStop:
    """A car in the pits: its stage, its place along the pit lanes (progress units, so a
    crew bonus past the lane's end simply extends it), the order in which it reached its
    place (seed: "note which car got to that space first"), the tyres it is fitting, and the
    race turn in which it entered the pits (team stacking)."""

    stage: PitStage
    progress: int
    arrival: int
    tyre: Tyre
    entered: int


@dataclass(frozen=True, slots=True)
class Car:
    player: str
    design: Design | None = None
    tyres: Tyre = Tyre.PRIME
    acc: int = 40
    dec: int = 40
    top: int = 160
    start: int = 60
    wear: int = 0
    skill: int = 0
    space: str | None = None
    lap: int = 0
    speed: int = 0
    status: Status = Status.RACING
    engine_damage: int = 0
    brake_damage: int = 0
    spun: bool = False
    """Spun last turn: the next plot is capped at min(start, accel), no tests, moves last (P19)."""
    corner_run: CornerRun | None = None
    line_run: LineRun | None = None
    barred_line: str | None = None
    """A line the car spun on: no more benefit from it this time through (seed 003)."""
    progress: int = 0
    """Rows covered: lap x L + row (kept for the standings of cars that left the race)."""
    finish_key: tuple[int, int, int, int] | None = None
    """(race turn, spun/off-track last, -rows past the line, order of movement) (P27)."""
    out_turn: int = 0
    note: str = ""
    off_track: int = 0
    """0 on track; -1 just off the track beside the lowest lane, +1 beside the highest (P22).
    `space` is then the edge space the car is beside; it occupies no track space."""
    overflow: bool = False
    """Off the outside edge after re-entering from the pits without room: not off track (no
    wear or skill lost) but it must be on track by the end of the next turn (seed 003)."""
    pit: PitStop | None = None
    """In the pits (then `space` is None)."""
    tyres_used: tuple[Tyre, ...] = ()
    """Compounds run so far, in the order first fitted (P4: each must be used)."""
    standing: int = 0
    """Race turns in a row it ended without moving (NOTES.md, "Stopped cars"): at
    `STOPPED_TURNS` it retires."""

    @property
    def on_track(self) -> bool:
        """Racing in a space of the track (not off it, not in the pits)."""
        return self.status is Status.RACING and self.space is not None and self.off_track == 0

    def ran_both_compounds(self) -> bool:
        return set(self.tyres_used) >= set(Tyre)
