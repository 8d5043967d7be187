"""A SpeedPhreakz race as versioned JSON, and back (rules.api: dump_state / load_state).

The circuit travels as its map (the format of §4.7, `data.circuit_to_json`), so an old game
replays even if a bundled map is later edited. `arrivals`, `stalled` and each car's `nearest`
are optional: a state stored without them loads with none of them (no arrival order known:
seating order; no stall counted yet).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.api import StateError
from rules.speedphreakz.data import circuit_from_json, circuit_to_json
from rules.speedphreakz.model import (
    Car,
    CarStatus,
    Heading,
    NoOrders,
    Options,
    Program,
    Progress,
    Race,
    Square,
)

VERSION = 1


def dump_state(state: Race) -> dict[str, Any]:
    return {
        "version": VERSION,
        "circuit": circuit_to_json(state.circuit),
        "options": {
            "map": state.options.map,
            "max_actions": state.options.max_actions,
            "nmr": state.options.nmr.value,
            "max_rounds": state.options.max_rounds,
        },
        "round": state.round,
        "finished": state.finished,
        "finish_order": list(state.finish_order),
        "last_control": state.last_control,
        "cars": [_dump_car(c) for c in state.cars],
        "arrivals": [[number, list(players)] for number, players in state.arrivals],
        "stalled": state.stalled,
    }


def load_state(data: Mapping[str, Any]) -> Race:
    if not isinstance(data, Mapping) or data.get("version") != VERSION:
        raise StateError(
            f"SpeedPhreakz state version {data.get('version') if isinstance(data, Mapping) else None!r} is not {VERSION}"
        )
    try:
        opts = data["options"]
        return Race(
            circuit=circuit_from_json(data["circuit"]),
            options=Options(
                map=str(opts["map"]),
                max_actions=int(opts["max_actions"]),
                nmr=NoOrders(opts["nmr"]),
                max_rounds=None if opts["max_rounds"] is None else int(opts["max_rounds"]),
            ),
            cars=tuple(_load_car(c) for c in data["cars"]),
            round=int(data["round"]),
            finished=bool(data["finished"]),
            finish_order=tuple(str(p) for p in data["finish_order"]),
            last_control=None if data["last_control"] is None else int(data["last_control"]),
            # (a state stored without them: no arrivals known, no stall counted)
            arrivals=tuple(
                (int(number), tuple(str(p) for p in players)) for number, players in data.get("arrivals", ())
            ),
            stalled=int(data.get("stalled", 0)),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as error:  # MapError is a ValueError
        raise StateError(f"SpeedPhreakz state cannot be read: {error!r}") from None


def _dump_car(car: Car) -> dict[str, Any]:
    return {
        "player": car.player,
        "letter": car.letter,
        "colour": car.colour,
        "square": None if car.square is None else [car.square.x, car.square.y],
        "heading": car.heading.value,
        "status": car.status.value,
        "recklessness": car.recklessness,
        "crashes": car.crashes,
        "deficit": car.deficit,
        "surcharge": car.surcharge,
        "oil": car.oil,
        "lap": car.progress.lap,
        "checkpoint": car.progress.checkpoint,
        "programs": [{"round": p.round, "actions": list(p.actions)} for p in car.programs],
        "last_program": list(car.last_program),
        "finish_round": car.finish_round,
        "finish_control": car.finish_control,
        "trail": [[s.x, s.y] for s in car.trail],
        "nearest": car.nearest,
    }


def _load_car(data: Mapping[str, Any]) -> Car:
    square = data["square"]
    return Car(
        player=str(data["player"]),
        letter=str(data["letter"]),
        colour=None if data["colour"] is None else str(data["colour"]),
        square=None if square is None else Square(int(square[0]), int(square[1])),
        heading=Heading(data["heading"]),
        status=CarStatus(data["status"]),
        recklessness=int(data["recklessness"]),
        crashes=int(data["crashes"]),
        deficit=int(data["deficit"]),
        surcharge=int(data["surcharge"]),
        oil=bool(data["oil"]),
        progress=Progress(int(data["lap"]), int(data["checkpoint"])),
        programs=tuple(Program(int(p["round"]), tuple(str(a) for a in p["actions"])) for p in data["programs"]),
        last_program=tuple(str(a) for a in data["last_program"]),
        finish_round=None if data["finish_round"] is None else int(data["finish_round"]),
        finish_control=None if data["finish_control"] is None else int(data["finish_control"]),
        trail=tuple(Square(int(s[0]), int(s[1])) for s in data.get("trail", ())),
        nearest=None if data.get("nearest") is None else int(data["nearest"]),
    )
