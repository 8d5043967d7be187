"""robots: how strong each game's robot driver is (issue 32), in seeded races of mixed fields.

Every seat of a race is driven by one of three drivers:

* ``robot``: the game's robot (`Game.robot_orders`), with the rng the shell would give it
  (`rules.api.robot_rng` of the turn's seed and the seat);
* ``nmr``: the NMR default (`Game.default_orders`), what a seat gets when nobody orders;
* ``random``: a random legal driver: every turn one of the orders the game would take from
  the seat, drawn at random (below, per game).

Each field has at least one robot and one NMR default; the other seats are drawn from the
three. Per game the figures are each driver's mean finishing place (the place in the final
standings, 1 the winner; seats that share a position share the place) and the head-to-head:
for every pair of a robot and an NMR default in one race, whether the robot finished ahead
of it (strictly; a shared place is not a win). Target: the robot beats the NMR default in at
least 70% of those head-to-heads in every game.

The races: Racecraft with 5 to 8 runners and 3 to 9 turns; Speed Circuit, 1 lap of either
bundled track with 2 to 6 cars (a lap is 25 turns or so: laps of the same board add turns,
not situations); SpeedPhreakz with 2 to 8 cars on either bundled map, at most 40 rounds
(a field of NMR defaults never moves). Everything is seeded: the same ``--races`` and seed
give the same figures. No servers, no database: the rules alone.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rules import find_game
from rules.api import AnyGame, GameOrder, GameState, PlayerId, robot_rng, turn_rng, turn_seed

GAMES = ("racecraft", "speed_circuit", "speedphreakz")
KINDS = ("robot", "nmr", "random")
TARGET = 0.70
RACES = 1000
MAX_TURNS = 200  # a guard: no race of these options takes as many

Driver = Callable[[AnyGame, GameState, PlayerId, random.Random, int], tuple[GameOrder, ...]]


@dataclass(frozen=True, slots=True)
class Setup:
    """How one game's races are drawn: the field size and the options."""

    players: tuple[int, int]
    options: Callable[[random.Random], dict[str, str]]


SETUPS: dict[str, Setup] = {
    "racecraft": Setup((5, 8), lambda rng: {"turns": str(rng.randint(3, 9))}),
    "speed_circuit": Setup((2, 6), lambda rng: {"laps": "1", "track": rng.choice(("harbour_loop", "quarry_ring"))}),
    "speedphreakz": Setup((2, 8), lambda rng: {"map": rng.choice(("ring", "chicane")), "max_rounds": "40"}),
}


# -- the drivers -----------------------------------------------------------------------------


def robot(game: AnyGame, state: GameState, seat: PlayerId, rng: random.Random, seed: int) -> tuple[GameOrder, ...]:
    return game.robot_orders(state, seat, robot_rng(seed, seat))


def nmr(game: AnyGame, state: GameState, seat: PlayerId, rng: random.Random, seed: int) -> tuple[GameOrder, ...]:
    return game.default_orders(state, seat)


def random_legal(
    game: AnyGame, state: GameState, seat: PlayerId, rng: random.Random, seed: int
) -> tuple[GameOrder, ...]:
    """One of the seat's legal order sets at random: a one-line order where the game offers
    them (Racecraft: every order; Speed Circuit: every legal speed by its cheapest path), else
    the text the game's own drawer below writes; the NMR default if nothing parses whole."""
    texts = [order.text for order in game.one_line_orders(state, seat)]
    drawer = _TEXTS.get(game.name)
    text = rng.choice(texts) if texts else drawer(game, state, seat, rng) if drawer is not None else ""
    parsed = game.parse_orders(state, seat, text)
    if parsed.ok and parsed.complete and parsed.orders:
        return parsed.orders
    return game.default_orders(state, seat)


def _speed_circuit_text(game: AnyGame, state: GameState, seat: PlayerId, rng: random.Random) -> str:
    """The set-up turns (no one-line orders there): a random design within the 2 points and
    a random starting set; a random bid within the starting set and the chips."""
    figures = game.figures(state, seat)
    if game.turn_label(state).endswith("car design"):
        while True:
            levels = {
                name: rng.randint(-1 if name in ("ACC", "DEC") else -2, 2)
                for name in ("ACC", "DEC", "TOP", "START", "PRIME", "OPTION", "SKILL")
            }
            if sum(levels.values()) <= 2:
                break
        design = " ".join(f"{name} {level}" for name, level in levels.items())
        return f"DESIGN {design}\nTYRES {rng.choice(('PRIME', 'OPTION'))}"
    if game.turn_label(state).endswith("qualifying"):
        wear, skill = int(str(figures["wear"])), int(str(figures["skill"]))
        return f"BID WEAR {rng.randint(0, wear)} SKILL {rng.randint(0, skill)}"
    return ""  # off the track: the NMR default


def _speedphreakz_text(game: AnyGame, state: GameState, seat: PlayerId, rng: random.Random) -> str:
    """The default's lines (START FREE at the set-up, a restart after a crash), each program
    replaced by a random legal one: 1 to 7 actions, a movement first, never two turns in a
    row (speedphreakz.md §4.2)."""
    moves, turns = ("F1", "F2", "F3", "RV", "VL", "VR"), ("TL", "TR", "HL", "HR")
    lines = []
    for line in game.format_orders(game.default_orders(state, seat)).splitlines():
        if line.startswith("ROUND"):
            program: list[str] = []
            for _ in range(rng.randint(1, 7)):
                program.append(rng.choice(moves + turns if program and program[-1] not in turns else moves))
            line = f"{line.split(':')[0]}: {' '.join(program)}"
        lines.append(line)
    return "\n".join(lines)


_TEXTS: dict[str, Callable[[AnyGame, GameState, PlayerId, random.Random], str]] = {
    "speed_circuit": _speed_circuit_text,
    "speedphreakz": _speedphreakz_text,
}

DRIVERS: dict[str, Driver] = {"robot": robot, "nmr": nmr, "random": random_legal}


# -- the races -------------------------------------------------------------------------------


@dataclass
class Tally:
    """One game's figures so far."""

    races: int = 0
    places: dict[str, list[int]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    wins: int = 0
    ties: int = 0
    pairs: int = 0
    turns: int = 0
    seconds: float = 0.0
    unfinished: int = 0

    def line(self, name: str) -> str:
        means = ", ".join(f"{kind} {sum(p) / len(p):.2f}" for kind, p in self.places.items() if p)
        share = self.wins / self.pairs if self.pairs else 0.0
        met = "OK" if share >= TARGET else "MISSED"
        return (
            f"{name:<13} {self.races} races: mean place {means}; robot ahead of the NMR default in "
            f"{share:.1%} of {self.pairs} head-to-heads ({self.ties} shared places; target >= {TARGET:.0%}) "
            f"{met}; CPU {self.seconds:.1f} s"
        )


def race(game: AnyGame, kinds: Sequence[str], options: dict[str, str], seed: int) -> tuple[list[int], int, bool]:
    """One seeded race of `kinds` (one driver a seat): each seat's place, the turns played,
    whether it finished. Chance as the shell has it: `new_game` gets the turn-0 rng, turn t
    `turn_rng(seed, t)`; the random drivers draw from a stream of their own."""
    seats = [f"s{i}" for i in range(len(kinds))]
    state = game.new_game(seats, options, turn_rng(seed, 0))
    chooser = random.Random(seed ^ 0x5EED)
    turn = 0
    while not game.is_finished(state) and turn < MAX_TURNS:
        turn += 1
        expected = game.expected_players(state)
        orders = {
            seat: DRIVERS[kind](game, state, seat, chooser, turn_seed(seed, turn))
            for seat, kind in zip(seats, kinds, strict=True)
            if seat in expected
        }
        state = game.resolve(state, orders, turn_rng(seed, turn)).state
    place = {seat: index + 1 for index, position in enumerate(game.standings(state)) for seat in position}
    last = len(game.standings(state)) + 1
    return [place.get(seat, last) for seat in seats], turn, game.is_finished(state)


def field_of(rng: random.Random, count: int) -> list[str]:
    """A mixed field: a robot, an NMR default, and the rest drawn from the three drivers."""
    kinds = ["robot", "nmr"] + [rng.choice(KINDS) for _ in range(count - 2)]
    rng.shuffle(kinds)
    return kinds


@dataclass(frozen=True, slots=True)
class Spec:
    """One race to run: the game, a driver a seat, the options, the seed."""

    game: str
    kinds: tuple[str, ...]
    options: dict[str, str]
    seed: int


def specs(name: str, races: int, seed: int = 0) -> list[Spec]:
    """The races of one game, drawn in order from one stream (so the figures do not depend
    on how the races are shared among worker processes)."""
    setup = SETUPS[name]
    rng = random.Random(f"{name}:{seed}")
    out = []
    for _ in range(races):
        kinds = tuple(field_of(rng, rng.randint(*setup.players)))
        out.append(Spec(name, kinds, setup.options(rng), rng.randrange(2**62)))
    return out


def run_spec(spec: Spec) -> tuple[list[int], int, bool, float]:
    """One race: each seat's place, the turns, whether it finished, the CPU seconds it took."""
    start = time.process_time()
    places, turns, finished = race(find_game(spec.game), spec.kinds, spec.options, spec.seed)
    return places, turns, finished, time.process_time() - start


def tally(races: Sequence[Spec], outcomes: Sequence[tuple[list[int], int, bool, float]]) -> Tally:
    found = Tally()
    for spec, (places, turns, finished, seconds) in zip(races, outcomes, strict=True):
        found.races += 1
        found.turns += turns
        found.unfinished += not finished
        found.seconds += seconds
        for kind, place in zip(spec.kinds, places, strict=True):
            found.places[kind].append(place)
        for a, mine in zip(spec.kinds, places, strict=True):
            for b, theirs in zip(spec.kinds, places, strict=True):
                if a == "robot" and b == "nmr":
                    found.pairs += 1
                    found.wins += mine < theirs
                    found.ties += mine == theirs
    return found


def run(races: int = RACES, seed: int = 0, games: Sequence[str] = GAMES, jobs: int | None = None) -> dict[str, Any]:
    """Every game's races (in `jobs` worker processes: every core unless said; 1 runs them
    here), its figures, and the lines `python -m bench` prints."""
    drawn = {name: specs(name, races, seed) for name in games}
    every = [spec for name in games for spec in drawn[name]]
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            done = list(pool.map(run_spec, every, chunksize=max(1, len(every) // (jobs * 20))))
    else:
        done = [run_spec(spec) for spec in every]
    results: dict[str, Any] = {
        "benchmark": "robots",
        "races": races,
        "seed": seed,
        "target": TARGET,
        "jobs": jobs,
        "games": {},
    }
    lines = []
    at = 0
    for name in games:
        found = tally(drawn[name], done[at : at + len(drawn[name])])
        at += len(drawn[name])
        share = found.wins / found.pairs if found.pairs else 0.0
        results["games"][name] = {
            "races": found.races,
            "mean_place": {kind: sum(p) / len(p) for kind, p in found.places.items() if p},
            "seats": {kind: len(p) for kind, p in found.places.items()},
            "head_to_head": {"pairs": found.pairs, "robot_ahead": found.wins, "shared": found.ties, "share": share},
            "met": share >= TARGET,
            "turns": found.turns,
            "unfinished": found.unfinished,
            "cpu_seconds": found.seconds,
        }
        lines.append(found.line(name))
    results["met"] = all(g["met"] for g in results["games"].values())
    results["line"] = "robots\n" + "\n".join(f"  {line}" for line in lines)
    return results
