"""Racecraft's values: the orders, the runners and the race (shared/design/racecraft.md).

Everything here is a frozen value. A `Race` is the whole state between two turns; `turn` is
the open turn (1..turns), and ``turns + 1`` once the final sprint has been run.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from fractions import Fraction

from rules.api import PlayerId, Standings

MAX_EP = 10
"""Every runner starts with 10 EP; EP are whole numbers 0..10 (racecraft.md, Set-up)."""

MIN_PLAYERS = 5
MAX_PLAYERS = 8
DEFAULT_TURNS = 5
MIN_TURNS = 3
MAX_TURNS = 9

PLAYER_ID = re.compile(r"[a-z0-9_-]+")
"""A seat's short name, as rules.api.PlayerId says: lower-case letters, digits, - and _."""


class Stage(enum.Enum):
    """What the open turn is (racecraft.md: turn 1 the start, 2..N-1 tactical, N the sprint)."""

    START = "start"
    TACTICAL = "tactical"
    SPRINT = "final sprint"
    FINISHED = "finished"


# -- orders -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Use:
    """Option A, "Use EPs": spend `ep` EP; the score is `ep`. Also the whole of turn 1."""

    ep: int


@dataclass(frozen=True, slots=True)
class Cruise:
    """Option B: score the average of the non-cruisers' scores; +1 EP below 10."""


@dataclass(frozen=True, slots=True)
class Overtake:
    """Option C: pay 1 EP and pass the position ahead, unless overtaken first this turn."""


Order = Use | Cruise | Overtake
"""One runner's order for one turn, as a player can write it."""


@dataclass(frozen=True, slots=True)
class Sprint:
    """What every runner does in the final sprint (not an order anyone writes): use all `ep`."""

    ep: int


Play = Use | Cruise | Overtake | Sprint
"""What a runner did in a turn: an order, or the sprint."""


# -- the race ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Runner:
    """One player in the race: their EP now and what they did in the last turn resolved."""

    name: PlayerId
    ep: int
    last_play: Play | None = None
    last_score: Fraction | None = None


@dataclass(frozen=True, slots=True)
class Race:
    """The state of a Racecraft game between turns.

    `runners` in seating order; `positions` front first, each position's players sorted by
    name; `turn` the open turn, ``turns + 1`` once the race is run.
    """

    runners: tuple[Runner, ...]
    positions: Standings
    turns: int = DEFAULT_TURNS
    turn: int = 1
    retired: tuple[PlayerId, ...] = ()
    """Runners who left the race (GM DROP, RESIGN), in the order they left: classified after
    every runner, as not finishing."""

    @property
    def stage(self) -> Stage:
        if self.turn > self.turns:
            return Stage.FINISHED
        if self.turn == 1:
            return Stage.START
        if self.turn == self.turns:
            return Stage.SPRINT
        return Stage.TACTICAL

    def runner(self, name: PlayerId) -> Runner:
        for runner in self.runners:
            if runner.name == name:
                return runner
        raise KeyError(name)

    def names(self) -> tuple[PlayerId, ...]:
        return tuple(runner.name for runner in self.runners)

    def place_of(self, name: PlayerId) -> int:
        """The 1-based (dense) place of a runner: players who share a position share it."""
        for index, position in enumerate(self.positions):
            if name in position:
                return index + 1
        raise KeyError(name)


def nmr_default(ep: int) -> Use:
    """racecraft.md, NMR: "The player uses half their remaining EP, rounded down"."""
    return Use(ep // 2)


def score_text(score: Fraction) -> str:
    """A score as players see it: whole numbers as is, else truncated to one decimal.

    racecraft.md, CRUISE: "Shown to players truncated to one decimal, as in the seed (5/3
    shows as 1.6)". Scores are never negative, so truncation is the floor.
    """
    if score.denominator == 1:
        return str(score.numerator)
    tenths = (score.numerator * 10) // score.denominator
    return f"{tenths // 10}.{tenths % 10}"


def ordinal(place: int) -> str:
    if 10 <= place % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def names_text(names: tuple[PlayerId, ...] | list[PlayerId]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if not names:
        return "nobody"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]
