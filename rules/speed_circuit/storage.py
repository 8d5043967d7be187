"""The race state as versioned JSON. The track travels as its text, so an old game replays
even if a bundled track is later edited."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.api import StateError
from rules.speed_circuit.car import Car, CornerRun, Design, LineRun, Status, Tyre
from rules.speed_circuit.model import Options, Phase, PlotDefault, RaceState
from rules.speed_circuit.track import TrackError, load_track

VERSION = 1


def dump_car(car: Car) -> dict[str, Any]:
    return {
        "player": car.player,
        "design": None if car.design is None else list(car.design.levels().values()),
        "tyres": car.tyres.value,
        "acc": car.acc,
        "dec": car.dec,
        "top": car.top,
        "start": car.start,
        "wear": car.wear,
        "skill": car.skill,
        "space": car.space,
        "lap": car.lap,
        "speed": car.speed,
        "status": car.status.value,
        "engine_damage": car.engine_damage,
        "brake_damage": car.brake_damage,
        "spun": car.spun,
        "corner_run": None
        if car.corner_run is None
        else [car.corner_run.corner, car.corner_run.tier, car.corner_run.wear_paid, car.corner_run.rolled, car.corner_run.worst_raw],
        "line_run": None if car.line_run is None else [car.line_run.line, car.line_run.index],
        "barred_line": car.barred_line,
        "progress": car.progress,
        "finish_key": None if car.finish_key is None else list(car.finish_key),
        "out_turn": car.out_turn,
        "note": car.note,
    }


def load_car(data: Mapping[str, Any]) -> Car:
    run = data["corner_run"]
    line = data["line_run"]
    key = data["finish_key"]
    return Car(
        player=str(data["player"]),
        design=None if data["design"] is None else Design(*(int(v) for v in data["design"])),
        tyres=Tyre(data["tyres"]),
        acc=int(data["acc"]),
        dec=int(data["dec"]),
        top=int(data["top"]),
        start=int(data["start"]),
        wear=int(data["wear"]),
        skill=int(data["skill"]),
        space=None if data["space"] is None else str(data["space"]),
        lap=int(data["lap"]),
        speed=int(data["speed"]),
        status=Status(data["status"]),
        engine_damage=int(data["engine_damage"]),
        brake_damage=int(data["brake_damage"]),
        spun=bool(data["spun"]),
        corner_run=None if run is None else CornerRun(str(run[0]), int(run[1]), int(run[2]), bool(run[3]), int(run[4])),
        line_run=None if line is None else LineRun(str(line[0]), int(line[1])),
        barred_line=None if data["barred_line"] is None else str(data["barred_line"]),
        progress=int(data["progress"]),
        finish_key=None if key is None else (int(key[0]), int(key[1]), int(key[2]), int(key[3])),
        out_turn=int(data["out_turn"]),
        note=str(data["note"]),
    )


def dump_state(state: RaceState) -> dict[str, Any]:
    o = state.options
    return {
        "version": VERSION,
        "track_text": state.track.source,
        "options": {
            "track": o.track,
            "laps": o.laps,
            "staggered_lane_change": o.staggered_lane_change,
            "option_tyres_top_speed": o.option_tyres_top_speed,
            "plot_default": o.plot_default.value,
        },
        "phase": state.phase.value,
        "race_turn": state.race_turn,
        "cars": [dump_car(c) for c in state.cars],
    }


def load_state(data: Mapping[str, Any]) -> RaceState:
    if data.get("version") != VERSION:
        raise StateError(f"unknown Speed Circuit state version {data.get('version')!r} (this engine reads {VERSION})")
    try:
        o = data["options"]
        options = Options(
            track=str(o["track"]),
            laps=int(o["laps"]),
            staggered_lane_change=bool(o["staggered_lane_change"]),
            option_tyres_top_speed=bool(o["option_tyres_top_speed"]),
            plot_default=PlotDefault(o["plot_default"]),
        )
        track = load_track(str(data["track_text"]))
        return RaceState(
            track=track,
            options=options,
            cars=tuple(load_car(c) for c in data["cars"]),
            phase=Phase(data["phase"]),
            race_turn=int(data["race_turn"]),
        )
    except (KeyError, TypeError, ValueError, IndexError, TrackError) as error:
        raise StateError(f"Speed Circuit state cannot be read: {error!r}") from error
