"""Helpers for the SpeedPhreakz tests: a scripted rng, hand-made arenas and races."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rules.api import Event, Resolution
from rules.speedphreakz import GAME
from rules.speedphreakz.data import circuit_from_json
from rules.speedphreakz.model import Car, Circuit, Heading, Options, Order, Program, Race, Square


class ScriptedRandom(random.Random):
    """A `random.Random` whose `randint` returns the values given, in order.

    Every roll of the game goes through `randint` (via `rules.api.Roll.of`), so a test names
    each die: the control d100 (1..100) first, then each d10 face (0..9) in the order the
    round rolls them. Running out of values, or a value outside the asked range, fails.
    """

    def __init__(self, values: Iterable[int]) -> None:
        super().__init__(0)
        self.values = list(values)
        self.asked: list[tuple[int, int]] = []

    def randint(self, a: int, b: int) -> int:
        self.asked.append((a, b))
        if not self.values:
            raise AssertionError(f"the test gave no value for randint({a}, {b}) (call {len(self.asked)})")
        value = self.values.pop(0)
        if not a <= value <= b:
            raise AssertionError(f"scripted value {value} is outside randint({a}, {b})")
        return value


def control(c: int) -> int:
    """The d100 face that makes control C (C = d100 + 100)."""
    assert 101 <= c <= 200
    return c - 100


OPEN = [
    "##############",
    "#............#",
    "#............#",
    "#S...........#",
    "#............#",
    "#............#",
    "##############",
]


def arena(
    rows: Sequence[str] = OPEN,
    *,
    checkpoints: Sequence[Sequence[tuple[int, int]]] | None = None,
    direction: str = "N",
    laps: int = 1,
    finish: Sequence[tuple[int, int]] | None = None,
) -> Circuit:
    """A circuit from `rows`: every 'S' is a start square and on the line (unless `finish`
    names the line cells); one checkpoint in the far top-right corner unless given."""
    starts = [[x, y] for y, row in enumerate(rows) for x, c in enumerate(row) if c == "S"]
    width = len(rows[0])
    cps = checkpoints if checkpoints is not None else [[(width - 2, 1)]]
    data: dict[str, Any] = {
        "name": "test arena",
        "grid": list(rows),
        "start_squares": starts,
        "finish_line": {"cells": [list(c) for c in finish] if finish is not None else starts, "direction": direction},
        "checkpoints": [{"cells": [list(c) for c in cp]} for cp in cps],
        "laps": laps,
    }
    return circuit_from_json(data)


def car(player: str, square: tuple[int, int], heading: str = "E", **changes: Any) -> Car:
    letters = {"ann": "A", "bob": "B", "cat": "C", "dan": "D", "eve": "E", "fay": "F"}
    base = Car(
        player=player, letter=letters.get(player, "X"), colour=None, square=Square(*square), heading=Heading(heading)
    )
    return dataclasses.replace(base, **changes)


def race(
    cars: Sequence[Car],
    circuit: Circuit | None = None,
    *,
    round_no: int = 2,
    programs: Mapping[str, str] | None = None,
    **options: Any,
) -> Race:
    """A race in progress at round `round_no` (not the set-up), with the programs for that
    round already queued (as they would be after the previous turn)."""
    queued = []
    for c in cars:
        text = (programs or {}).get(c.player)
        if text is not None:
            c = dataclasses.replace(c, programs=(*c.programs, Program(round_no, tuple(text.split()))))
        queued.append(c)
    return Race(circuit=circuit or arena(), options=Options(**options), cars=tuple(queued), round=round_no)


def play(
    state: Race,
    rolls: Iterable[int],
    orders: Mapping[str, Sequence[Order]] | None = None,
    texts: Mapping[str, str] | None = None,
) -> Resolution[Race]:
    """Resolve the open turn with scripted dice; every die must be used."""
    given: dict[str, Sequence[Order]] = dict(orders or {})
    for player, text in (texts or {}).items():
        parsed = GAME.parse_orders(state, player, text)
        assert parsed.ok, parsed.problems
        given[player] = parsed.orders
    rng = ScriptedRandom(rolls)
    resolution = GAME.resolve(state, given, rng)
    assert rng.values == [], f"unused dice: {rng.values}"
    return resolution


def kinds(resolution: Resolution[Race], kind: str) -> list[Event]:
    return [e for e in resolution.events if e.kind == kind]


def at(resolution: Resolution[Race], player: str) -> Car:
    return resolution.state.car(player)


class SteadyRandom(random.Random):
    """Every control roll is `d100` and every d10 shows `face` (4: "As ordered" when the car
    is in control, so a planned route is driven exactly)."""

    def __init__(self, d100: int = 100, face: int = 4) -> None:
        super().__init__(0)
        self.d100 = d100
        self.face = face

    def randint(self, a: int, b: int) -> int:
        return self.d100 if (a, b) == (1, 100) else self.face
