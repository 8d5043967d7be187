"""robots: how strong each game's robot driver is, head to head against reference drivers
written from the rules, in seeded races of every field size the game allows.

The drivers (one a seat):

* ``robot``: the game's robot at its normal level (`Game.robot_orders`), with the rng the
  shell gives it (`rules.api.robot_rng` of the turn's seed and the seat);
* ``easy``: the same robot at its easy level (`RobotLevel.EASY`);
* ``nmr``: the NMR default (`Game.default_orders`), what a seat gets when nobody orders;
* ``greedy``: each game's greedy reference (`rules.<game>.references.greedy`);
* ``heuristic``: Racecraft's fixed rule of thumb (`rules.racecraft.references.heuristic`:
  USE 3 at the start, OVERTAKE when behind with 3 EP or more, else CRUISE).

A matchup is a driver against an opponent in one field size: `races` races whose fields
hold 1 to size-1 seats of the driver (drawn) and the opponent in the rest. In each race the
driver's share is over every pair of its seat and an opponent's seat: ``ahead`` counts the
pairs it finished strictly ahead in (a shared place is not a win), ``behind`` those the
opponent finished strictly ahead in, ``score`` the pairs ahead with a shared place counted
half, and ``lead`` is ahead minus behind. The figures are the mean over the races with a 95%
interval (normal approximation over races: pairs of one race are not independent).

"Ahead head to head" is the bench's one meaning of beating a reference: the driver finished
strictly ahead of it in more pairs than it finished strictly behind it (``lead`` above 0,
the same as ``score`` above 50%); a shared place counts for neither. In Racecraft many
places are shared (a rule of thumb that cruises ends level with a robot that cruises), so
``ahead`` alone is far below 50% against any reference that plays alike.

Targets, in every game and field size: the robot's ``ahead`` against the NMR default at
least 70%; ahead head to head (``lead`` > 0) of the best reference (greedy, and Racecraft's
heuristic) and of its easy level.

The races: Racecraft 5 to 8 runners, 3 to 9 turns; Speed Circuit 2 to 6 cars, 1 lap of
either bundled track; SpeedPhreakz 2 to 8 cars on either bundled map, at most 40 rounds.
Everything is seeded: the same ``races`` and seed give the same figures, whatever the
number of worker processes. No servers, no database: the rules alone.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from rules import find_game
from rules.api import AnyGame, GameOrder, GameState, PlayerId, RobotLevel, robot_rng, turn_rng, turn_seed
from rules.racecraft import references as racecraft_references
from rules.speed_circuit import references as speed_circuit_references
from rules.speedphreakz import references as speedphreakz_references

GAMES = ("racecraft", "speed_circuit", "speedphreakz")
TARGET = 0.70
RACES = 2
"""Races a matchup by default: the CI case (every matchup run, the intervals wide)."""
FULL_RACES = 60
"""Races a matchup in the full measurement (``--full``)."""
MAX_TURNS = 200  # a guard: no race of these options takes as many

Driver = Callable[[AnyGame, GameState, PlayerId, int, frozenset[PlayerId]], tuple[GameOrder, ...]]
"""A driver's orders for a seat: the game, the state, the seat, the turn's seed, the seats
driven by robots (the shell tells a robot which they are)."""


@dataclass(frozen=True, slots=True)
class Setup:
    """How one game's races are drawn: the field sizes, the options, the references."""

    players: tuple[int, int]
    options: Callable[[random.Random], dict[str, str]]
    references: tuple[str, ...]


SETUPS: dict[str, Setup] = {
    "racecraft": Setup((5, 8), lambda rng: {"turns": str(rng.randint(3, 9))}, ("greedy", "heuristic")),
    "speed_circuit": Setup(
        (2, 6), lambda rng: {"laps": "1", "track": rng.choice(("harbour_loop", "quarry_ring"))}, ("greedy",)
    ),
    "speedphreakz": Setup(
        (2, 8), lambda rng: {"map": rng.choice(("ring", "chicane")), "max_rounds": "40"}, ("greedy",)
    ),
}


def matchups(name: str) -> tuple[tuple[str, str], ...]:
    """(driver, opponent) pairs measured in every field size of game `name`."""
    refs = SETUPS[name].references
    return (("robot", "nmr"), *(("robot", ref) for ref in refs), ("robot", "easy"), ("easy", "nmr"))


# -- the drivers -----------------------------------------------------------------------------


def robot(
    game: AnyGame, state: GameState, seat: PlayerId, seed: int, robots: frozenset[PlayerId]
) -> tuple[GameOrder, ...]:
    return game.robot_orders(state, seat, robot_rng(seed, seat), RobotLevel.NORMAL, robots)


def easy(
    game: AnyGame, state: GameState, seat: PlayerId, seed: int, robots: frozenset[PlayerId]
) -> tuple[GameOrder, ...]:
    return game.robot_orders(state, seat, robot_rng(seed, seat), RobotLevel.EASY, robots)


def nmr(
    game: AnyGame, state: GameState, seat: PlayerId, seed: int, robots: frozenset[PlayerId]
) -> tuple[GameOrder, ...]:
    return game.default_orders(state, seat)


def _reference(kind: str) -> Driver:
    modules: dict[str, Any] = {
        "racecraft": racecraft_references,
        "speed_circuit": speed_circuit_references,
        "speedphreakz": speedphreakz_references,
    }

    def drive(
        game: AnyGame, state: GameState, seat: PlayerId, seed: int, robots: frozenset[PlayerId]
    ) -> tuple[GameOrder, ...]:
        orders: tuple[GameOrder, ...] = getattr(modules[game.name], kind)(state, seat)
        return orders

    return drive


DRIVERS: dict[str, Driver] = {
    "robot": robot,
    "easy": easy,
    "nmr": nmr,
    "greedy": _reference("greedy"),
    "heuristic": _reference("heuristic"),
}


# -- the races -------------------------------------------------------------------------------


def race(game: AnyGame, kinds: Sequence[str], options: dict[str, str], seed: int) -> tuple[list[int], int, bool]:
    """One seeded race of `kinds` (one driver a seat): each seat's place, the turns played,
    whether it finished. Chance as the shell has it: `new_game` gets the turn-0 rng, turn t
    `turn_rng(seed, t)`."""
    seats = [f"s{i}" for i in range(len(kinds))]
    state = game.new_game(seats, options, turn_rng(seed, 0))
    robots = frozenset(seat for seat, kind in zip(seats, kinds, strict=True) if kind in ("robot", "easy"))
    turn = 0
    while not game.is_finished(state) and turn < MAX_TURNS:
        turn += 1
        expected = game.expected_players(state)
        orders = {
            seat: DRIVERS[kind](game, state, seat, turn_seed(seed, turn), robots)
            for seat, kind in zip(seats, kinds, strict=True)
            if seat in expected
        }
        state = game.resolve(state, orders, turn_rng(seed, turn)).state
    place = {seat: index + 1 for index, position in enumerate(game.standings(state)) for seat in position}
    last = len(game.standings(state)) + 1
    return [place.get(seat, last) for seat in seats], turn, game.is_finished(state)


@dataclass(frozen=True, slots=True)
class Spec:
    """One race to run: the game, a driver a seat, the options, the seed."""

    game: str
    kinds: tuple[str, ...]
    options: dict[str, str]
    seed: int


def specs(name: str, driver: str, opponent: str, size: int, races: int, seed: int = 0) -> list[Spec]:
    """The races of one matchup, drawn from a stream of their own."""
    setup = SETUPS[name]
    rng = random.Random(f"{name}:{driver}:{opponent}:{size}:{seed}")
    out = []
    for _ in range(races):
        mine = rng.randint(1, size - 1)
        kinds = [driver] * mine + [opponent] * (size - mine)
        rng.shuffle(kinds)
        out.append(Spec(name, tuple(kinds), setup.options(rng), rng.randrange(2**62)))
    return out


def run_spec(spec: Spec) -> tuple[list[int], int, bool, float]:
    """One race: each seat's place, the turns, whether it finished, the CPU seconds it took."""
    start = time.process_time()
    places, turns, finished = race(find_game(spec.game), spec.kinds, spec.options, spec.seed)
    return places, turns, finished, time.process_time() - start


def interval(values: Sequence[float], low: float = 0.0) -> tuple[float, float, float]:
    """The mean of `values` and its 95% interval (normal approximation), clipped to low..1
    (a share: 0..1; a lead, ahead minus behind: -1..1)."""
    n = len(values)
    mean = sum(values) / n if n else 0.0
    if n < 2:
        return mean, low, 1.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = 1.96 * sd / math.sqrt(n)
    return mean, max(low, mean - half), min(1.0, mean + half)


@dataclass(frozen=True, slots=True)
class Matchup:
    """One matchup's figures (see the module docstring)."""

    game: str
    driver: str
    opponent: str
    size: int
    races: int
    pairs: int
    ahead: tuple[float, float, float]
    behind: tuple[float, float, float]
    lead: tuple[float, float, float]
    score: tuple[float, float, float]
    unfinished: int
    seconds: float

    @property
    def target(self) -> str:
        """What this matchup must reach: "" where it has no target."""
        if self.driver != "robot":
            return ""
        return f"ahead >= {TARGET:.0%}" if self.opponent == "nmr" else "ahead > behind"

    @property
    def met(self) -> bool:
        if self.driver != "robot":
            return True
        return self.ahead[0] >= TARGET if self.opponent == "nmr" else self.lead[0] > 0

    def line(self) -> str:
        a, b, d, s = self.ahead, self.behind, self.lead, self.score
        target = f"; target {self.target} {'OK' if self.met else 'MISSED'}" if self.target else ""
        return (
            f"{self.game:<13} {self.size} seats {self.driver:>5} vs {self.opponent:<9} {self.races} races: "
            f"ahead {a[0]:.1%} [{a[1]:.1%}, {a[2]:.1%}], behind {b[0]:.1%} [{b[1]:.1%}, {b[2]:.1%}], "
            f"lead {d[0]:+.1%} [{d[1]:+.1%}, {d[2]:+.1%}], score {s[0]:.1%} [{s[1]:.1%}, {s[2]:.1%}]{target}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "driver": self.driver,
            "opponent": self.opponent,
            "size": self.size,
            "races": self.races,
            "pairs": self.pairs,
            "ahead": {"mean": self.ahead[0], "low": self.ahead[1], "high": self.ahead[2]},
            "behind": {"mean": self.behind[0], "low": self.behind[1], "high": self.behind[2]},
            "lead": {"mean": self.lead[0], "low": self.lead[1], "high": self.lead[2]},
            "score": {"mean": self.score[0], "low": self.score[1], "high": self.score[2]},
            "target": self.target,
            "met": self.met,
            "unfinished": self.unfinished,
            "cpu_seconds": self.seconds,
        }


def tally(game: str, driver: str, opponent: str, size: int, races: Sequence[Spec], outcomes: Sequence[Any]) -> Matchup:
    ahead: list[float] = []
    behind: list[float] = []
    score: list[float] = []
    pairs = unfinished = 0
    seconds = 0.0
    for spec, (places, _turns, finished, spent) in zip(races, outcomes, strict=True):
        unfinished += not finished
        seconds += spent
        wins = level = losses = count = 0
        for a, mine in zip(spec.kinds, places, strict=True):
            for b, theirs in zip(spec.kinds, places, strict=True):
                if a == driver and b == opponent:
                    count += 1
                    wins += mine < theirs
                    level += mine == theirs
                    losses += mine > theirs
        pairs += count
        ahead.append(wins / count)
        behind.append(losses / count)
        score.append((wins + level / 2) / count)
    lead = [a - b for a, b in zip(ahead, behind, strict=True)]
    return Matchup(
        game,
        driver,
        opponent,
        size,
        len(races),
        pairs,
        interval(ahead),
        interval(behind),
        interval(lead, -1.0),
        interval(score),
        unfinished,
        seconds,
    )


def run(races: int = RACES, seed: int = 0, games: Sequence[str] = GAMES, jobs: int | None = None) -> dict[str, Any]:
    """Every matchup of every game and field size (in `jobs` worker processes: every core
    unless said; 1 runs them here), its figures, and the lines `python -m bench` prints."""
    cells = [
        (name, driver, opponent, size)
        for name in games
        for size in range(SETUPS[name].players[0], SETUPS[name].players[1] + 1)
        for driver, opponent in matchups(name)
    ]
    drawn = [specs(name, driver, opponent, size, races, seed) for name, driver, opponent, size in cells]
    every = [spec for cell in drawn for spec in cell]
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            done = list(pool.map(run_spec, every, chunksize=max(1, len(every) // (jobs * 20))))
    else:
        done = [run_spec(spec) for spec in every]
    found: list[Matchup] = []
    at = 0
    for (name, driver, opponent, size), cell in zip(cells, drawn, strict=True):
        found.append(tally(name, driver, opponent, size, cell, done[at : at + len(cell)]))
        at += len(cell)
    met = all(m.met for m in found)
    missed = [m for m in found if not m.met]
    summary = f"robots: {len(found)} matchups of {races} races, targets {'met' if met else 'MISSED'}" + (
        f" ({len(missed)} missed)" if missed else ""
    )
    return {
        "benchmark": "robots",
        "races": races,
        "seed": seed,
        "target": TARGET,
        "jobs": jobs,
        "matchups": [m.to_json() for m in found],
        "unfinished": sum(m.unfinished for m in found),
        "cpu_seconds": sum(m.seconds for m in found),
        "met": met,
        "line": summary + "\n" + "\n".join(f"  {m.line()}" for m in found),
    }
