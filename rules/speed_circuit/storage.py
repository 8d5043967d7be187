"""The race state as versioned JSON. The track travels as its text, so an old game replays
even if a bundled track is later edited."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.api import StateError
from rules.speed_circuit.car import Car, CornerRun, Design, LineRun, PitStage, PitStop, Status, Tyre
from rules.speed_circuit.model import (
    OffTrackRemoval,
    Options,
    Phase,
    PlotDefault,
    RaceState,
    TyreRule,
)
from rules.speed_circuit.track import TrackError, load_track

VERSION = 2
"""Version 2 (part 2) adds off-track, pit and tyre-history fields to each car and the part-2
options. A version-1 state (written before part 2) loads with those at their defaults: no
car could be off track or in the pits then, and a car had run only the tyres it is on."""
READABLE = (1, 2)


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
        else [
            car.corner_run.corner,
            car.corner_run.tier,
            car.corner_run.wear_paid,
            car.corner_run.rolled,
            car.corner_run.worst_raw,
        ],
        "line_run": None if car.line_run is None else [car.line_run.line, car.line_run.index],
        "barred_line": car.barred_line,
        "progress": car.progress,
        "finish_key": None if car.finish_key is None else list(car.finish_key),
        "out_turn": car.out_turn,
        "note": car.note,
        "off_track": car.off_track,
        "overflow": car.overflow,
        "pit": None
        if car.pit is None
        else [car.pit.stage.value, car.pit.progress, car.pit.arrival, car.pit.tyre.value, car.pit.entered],
        "tyres_used": [t.value for t in car.tyres_used],
        # turns in a row without moving (the stopped-car rule): written only when some, so a
        # state without a stopped car reads as it always did
        **({"standing": car.standing} if car.standing else {}),
    }


def load_car(data: Mapping[str, Any], version: int = VERSION) -> Car:
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
        standing=int(data.get("standing", 0)),
        **(_part_two_fields(data) if version >= 2 else _version_one_fields(data)),
    )


def _part_two_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    pit = data["pit"]
    return {
        "off_track": int(data["off_track"]),
        "overflow": bool(data["overflow"]),
        "pit": None if pit is None else PitStop(PitStage(pit[0]), int(pit[1]), int(pit[2]), Tyre(pit[3]), int(pit[4])),
        "tyres_used": tuple(Tyre(t) for t in data["tyres_used"]),
    }


def _version_one_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"tyres_used": () if data["design"] is None else (Tyre(data["tyres"]),)}


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
            "optional_slip": o.optional_slip,
            "failed_pass_decel": o.failed_pass_decel,
            "offtrack_removal": o.offtrack_removal.value,
            "tyre_rule": o.tyre_rule.value,
            "teams": [list(t) for t in o.teams],
        },
        "phase": state.phase.value,
        "race_turn": state.race_turn,
        "cars": [dump_car(c) for c in state.cars],
        **({"pole": state.pole} if state.pole is not None else {}),
    }


def load_state(data: Mapping[str, Any]) -> RaceState:
    version = data.get("version")
    if version not in READABLE or not isinstance(version, int):
        raise StateError(
            f"unknown Speed Circuit state version {version!r} (this engine reads {', '.join(map(str, READABLE))})"
        )
    try:
        o = data["options"]
        part_two: dict[str, Any] = {}
        if version >= 2:
            part_two = {
                "optional_slip": bool(o["optional_slip"]),
                "failed_pass_decel": bool(o["failed_pass_decel"]),
                "offtrack_removal": OffTrackRemoval(o["offtrack_removal"]),
                "tyre_rule": TyreRule(o["tyre_rule"]),
                "teams": tuple(tuple(str(p) for p in t) for t in o["teams"]),
            }
        options = Options(
            track=str(o["track"]),
            laps=int(o["laps"]),
            staggered_lane_change=bool(o["staggered_lane_change"]),
            option_tyres_top_speed=bool(o["option_tyres_top_speed"]),
            plot_default=PlotDefault(o["plot_default"]),
            **part_two,
        )
        track = load_track(str(data["track_text"]))
        return RaceState(
            track=track,
            options=options,
            cars=tuple(load_car(c, version) for c in data["cars"]),
            phase=Phase(data["phase"]),
            race_turn=int(data["race_turn"]),
            pole=str(data["pole"]) if data.get("pole") is not None else None,
        )
    except (KeyError, TypeError, ValueError, IndexError, TrackError) as error:
        raise StateError(f"Speed Circuit state cannot be read: {error!r}") from error
