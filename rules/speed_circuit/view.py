"""What a viewer may see: standings, the public table, the track with the cars, and a
player's private figures (their ratings, damage and what they may plot next)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.api import PlayerId, Resolution, Standings, Viewer
from rules.speed_circuit.car import Car, Status
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.move import movement_key
from rules.speed_circuit.plot import limits
from rules.speed_circuit.track import render_svg, render_text

COLUMNS = ["Lap", "Space", "Speed", "Wear", "Skill", "Tyres", "Status"]


def standings(state: RaceState) -> Standings:
    if state.phase in (Phase.DESIGN, Phase.QUALIFYING):
        return (tuple(sorted(c.player for c in state.cars)),)
    seats = {c.player: i for i, c in enumerate(state.cars)}
    finished = sorted((c for c in state.cars if c.status is Status.FINISHED), key=lambda c: c.finish_key or (0, 0, 0, 0))
    racing = sorted(
        (c for c in state.cars if c.status is Status.RACING and c.space is not None),
        key=lambda c: movement_key(state.track, c, c.speed, seats[c.player]),
    )
    out = sorted((c for c in state.cars if c.status is Status.OUT or (c.status is Status.RACING and c.space is None)), key=lambda c: (-c.out_turn, -c.progress, seats[c.player]))
    return tuple((c.player,) for c in (*finished, *racing, *out))


def figures(state: RaceState, car: Car) -> dict[str, str | int | None]:
    return {
        "lap": min(car.lap, state.laps),
        "space": car.space,
        "speed": car.speed,
        "wear": car.wear,
        "skill": car.skill,
        "tyres": car.tyres.value,
        "status": car.status.value if car.status is not Status.OUT else f"out ({car.note})",
    }


def turn_label(state: RaceState) -> str:
    if state.phase is Phase.DESIGN:
        return "Turn 1: car design"
    if state.phase is Phase.QUALIFYING:
        return "Turn 2: qualifying"
    if state.phase is Phase.FINISHED:
        return f"Race over after {state.race_turn} race turns"
    lead = max((c.lap for c in state.racing()), default=0)
    return f"Race turn {state.race_turn + 1} (leader on lap {max(1, min(lead, state.laps))} of {state.laps})"


def private_lines(state: RaceState, car: Car) -> list[str]:
    lines = []
    if car.design is not None:
        lines.append(f"Your car: ACC {car.acc} DEC {car.dec} TOP {car.top} START {car.start} ({car.design.text()})")
        lines.append(f"Tyres {car.tyres.value}, wear {car.wear}, skill {car.skill}; engine damage {car.engine_damage}, brake damage {car.brake_damage}")
    if car.corner_run is not None and car.corner_run.tier:
        lines.append(f"Corner {car.corner_run.corner}: paid for +{car.corner_run.tier * 20}")
    if car.line_run is not None:
        lines.append(f"On racing line {car.line_run.line}")
    if state.phase is Phase.RACE and car.status is Status.RACING and car.space is not None:
        lines.append(f"Next turn you may plot {limits(car, state.track).describe()}")
    return lines


def summary(state: RaceState) -> str:
    order = standings(state)
    if state.phase in (Phase.DESIGN, Phase.QUALIFYING):
        return f"{len(state.cars)} cars preparing for {state.laps} laps of {state.track.name}"
    leader = state.car(order[0][0])
    if state.phase is Phase.FINISHED:
        if leader.status is not Status.FINISHED:
            return f"No car finished at {state.track.name}"
        return f"{leader.player} wins at {state.track.name}"
    return f"{leader.player} leads on lap {max(1, min(leader.lap, state.laps))} of {state.laps}"


def build_view(state: RaceState, resolution: Resolution[RaceState] | None, viewer: PlayerId | Viewer) -> Mapping[str, Any]:
    order = standings(state)
    place = {p: i + 1 for i, group in enumerate(order) for p in group}
    table = []
    for group in order:
        for player in group:
            f = figures(state, state.car(player))
            cells = [str(f[k.lower()]) if f[k.lower()] is not None else "-" for k in COLUMNS]
            table.append({"player": player, "place": place[player], "cells": cells})
    on_track = {c.space: c.player for c in state.cars if c.space is not None}
    rows = sorted({state.track.space(s).row for s in on_track})
    window: list[int] = []
    for r in rows:
        for k in range(r - 2, r + 4):
            wrapped = (k - 1) % state.track.rows + 1
            if wrapped not in window:
                window.append(wrapped)
    private: list[str] = []
    if not isinstance(viewer, Viewer):
        private = private_lines(state, state.car(viewer))
    return {
        "title": "Speed Circuit",
        "turn_label": turn_label(state),
        "finished": state.phase is Phase.FINISHED,
        "standings": [{"place": i + 1, "players": list(group)} for i, group in enumerate(order)],
        "columns": list(COLUMNS),
        "table": table,
        "events": [] if resolution is None else [e.text for e in resolution.events],
        "private": private,
        "summary": summary(state),
        "track_name": state.track.name,
        "track_text": render_text(state.track, on_track, rows=window) if window else "",
        "track_svg": render_svg(state.track, on_track),
    }
