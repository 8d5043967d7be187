"""Helpers for the Speed Circuit tests: forced dice, the purpose-built tracks, and races
set up directly in the position a scenario needs."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict

from rules.api import Event, Resolution
from rules.speed_circuit import GAME
from rules.speed_circuit.car import Car, Tyre
from rules.speed_circuit.model import Options, Phase, RaceState
from rules.speed_circuit.plot import Order
from rules.speed_circuit.track import Track, bundled_track_text, load_track

TRACKS = Path(__file__).parent / "tracks"


class ScriptedDice(random.Random):
    """A `random.Random` whose `randint` returns the queued faces, in order.

    Running out of faces fails the test: a scenario states every roll it expects.
    """

    def __init__(self, *faces: int) -> None:
        super().__init__(0)
        self.faces = list(faces)

    def randint(self, a: int, b: int) -> int:
        if not self.faces:
            raise AssertionError("an unexpected roll: no scripted dice left")
        face = self.faces.pop(0)
        assert a <= face <= b, f"scripted face {face} outside {a}..{b}"
        return face


def scenario_track(name: str) -> Track:
    return load_track((TRACKS / f"{name}.track").read_text(encoding="utf-8"))


def bundled(name: str) -> Track:
    return load_track(bundled_track_text(name))


class CarFields(TypedDict, total=False):
    """Fields of a `car` a scenario sets beside its place and speed (those of `Car`)."""

    wear: int
    skill: int
    tyres: Tyre


def car(player: str, space: str, track: Track, *, lap: int = 1, speed: int = 0, **fields: Any) -> Car:
    """A racing car in `space` on `lap` with the base design (ACC 40 DEC 40 TOP 160 START 60)."""
    row = track.space(space).row
    defaults: dict[str, Any] = {"wear": 9, "skill": 6, "tyres": Tyre.PRIME}
    defaults.update(fields)
    return Car(player, space=space, lap=lap, progress=lap * track.rows + row, speed=speed, **defaults)


def race(track: Track, cars: Sequence[Car], *, laps: int = 1, **options: Any) -> RaceState:
    return RaceState(
        track=track, options=Options(track="test", laps=laps, **options), cars=tuple(cars), phase=Phase.RACE
    )


def orders(state: RaceState, plots: Mapping[str, str]) -> dict[str, tuple[Order, ...]]:
    """Parse each player's plot text (failing the test on any refused line)."""
    out: dict[str, tuple[Order, ...]] = {}
    for player, text in plots.items():
        parsed = GAME.parse_orders(state, player, text)
        assert parsed.ok, parsed.problems
        out[player] = parsed.orders
    return out


def turn(state: RaceState, plots: Mapping[str, str], *faces: int) -> Resolution[RaceState]:
    """Resolve one race turn with the given plots and forced dice; every face must be used."""
    dice = ScriptedDice(*faces)
    given = orders(state, plots)
    for c in state.racing():
        given.setdefault(c.player, GAME.default_orders(state, c.player))
    resolution = GAME.resolve(state, given, dice)
    assert not dice.faces, f"dice left unused: {dice.faces}"
    return resolution


def kinds(events: Iterable[Event]) -> list[str]:
    return [e.kind for e in events]


def texts(events: Iterable[Event]) -> str:
    return "\n".join(e.text for e in events)


def at(state: RaceState, player: str) -> Car:
    return state.car(player)


def with_car(state: RaceState, player: str, **fields: Any) -> RaceState:
    return state.with_car(replace(state.car(player), **fields))
