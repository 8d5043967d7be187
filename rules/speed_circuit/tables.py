"""Every 2d6 race table of seed 003 as data (speed-circuit.md §2.14), and the two charts.

Low rolls are good. A modified roll is clamped to 2..12 before lookup (P30). `skill_cost` is
the chips that bypass the table (P5); None means it cannot be bypassed (the pit crew table).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.Enum):
    GAIN = "gain 20 mph this turn"
    FAIL = "fail"
    MISSHIFT = "mis-shift"
    STALL = "stall"
    SAFE = "safe"
    BRAKE_FAIL = "brakes fail"
    SPIN = "spin"
    CRASH = "crash on course"
    PASS = "successful pass"
    NO_PASS = "unsuccessful pass"
    CONTACT = "unsuccessful pass with contact"
    PLUS_SPACE = "+1 space"
    NO_EFFECT = "no effect"
    MINUS_SPACE = "-1 space"


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    rows: tuple[tuple[int, int, Outcome], ...]
    skill_cost: int | None

    def lookup(self, total: int) -> Outcome:
        roll = min(12, max(2, total))  # P30
        for low, high, outcome in self.rows:
            if low <= roll <= high:
                return outcome
        raise AssertionError(f"{self.name}: no row for {roll}")


ACCEL_TOP_TEST = Table("acceleration/top speed test", ((2, 9, Outcome.GAIN), (10, 12, Outcome.FAIL)), 1)
START_TEST = Table(
    "start speed test",
    ((2, 8, Outcome.GAIN), (9, 9, Outcome.MISSHIFT), (10, 12, Outcome.STALL)),
    1,
)
BRAKES_TEST = Table("brakes test", ((2, 9, Outcome.SAFE), (10, 12, Outcome.BRAKE_FAIL)), 1)
CHANCE = Table("chance table", ((2, 6, Outcome.SAFE), (7, 9, Outcome.SPIN), (10, 12, Outcome.CRASH)), 2)
PASSING = Table("passing table", ((2, 5, Outcome.PASS), (6, 9, Outcome.NO_PASS), (10, 12, Outcome.CONTACT)), 2)
PIT_CREW = Table(
    "pit crew table",
    ((2, 5, Outcome.PLUS_SPACE), (6, 9, Outcome.NO_EFFECT), (10, 12, Outcome.MINUS_SPACE)),
    None,
)


@dataclass(frozen=True, slots=True)
class Penalty:
    """One way to pay a chart row: so much wear, and a roll (brakes test / chance table) or not."""

    wear: int
    roll: bool


# Deceleration Chart (seed): over by 20 / 40 / 60 / 80+; the 80+ row also spins the car.
DECELERATION_CHART: dict[int, tuple[Penalty, ...]] = {
    1: (Penalty(1, False), Penalty(0, True)),
    2: (Penalty(2, False), Penalty(1, True)),
    3: (Penalty(2, True),),
    4: (Penalty(3, True),),
}
DECELERATION_SPIN_TIER = 4

# Cornering Chart (seed): over by 20 / 40 / 60; 80+ is a crash off course (P10).
CORNERING_CHART: dict[int, tuple[Penalty, ...]] = {
    1: (Penalty(1, False), Penalty(0, True)),
    2: (Penalty(2, False), Penalty(1, True)),
    3: (Penalty(2, True),),
}
CORNER_CRASH_TIER = 4


def tier(excess: int) -> int:
    """Chart row of an excess in mph: 0 for none, 1 for +20 ... (80+ is row 4 or more)."""
    return 0 if excess <= 0 else -(-excess // 20)
