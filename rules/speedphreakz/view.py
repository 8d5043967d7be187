"""What SpeedPhreakz shows: the race order, each car's figures, the text map, the views."""

from __future__ import annotations

from typing import Any

from rules.api import Figures, PlayerId, Resolution, Standings, Viewer
from rules.speedphreakz.data import distances
from rules.speedphreakz.model import Car, CarStatus, Race

UNREACHABLE = 10_000


def progress_key(race: Race, car: Car) -> tuple[int, int, int]:
    """Laps done, checkpoints passed, and the (negated) distance to the next target."""
    far = UNREACHABLE
    if car.square is not None:
        far = distances(race.circuit, car.progress.checkpoint).get(car.square, UNREACHABLE)
    return (car.progress.lap, car.progress.checkpoint, -far)


def standings(race: Race) -> Standings:
    """Finished cars first, in finishing order; then the rest by progress (ties share)."""
    order: list[tuple[PlayerId, ...]] = [(p,) for p in race.finish_order]
    rest = [c for c in race.cars if c.racing]
    groups: dict[tuple[int, int, int], list[PlayerId]] = {}
    for car in rest:
        groups.setdefault(progress_key(race, car), []).append(car.player)
    for key in sorted(groups, reverse=True):
        order.append(tuple(sorted(groups[key])))
    return tuple(order)


def figures(race: Race, player: PlayerId) -> Figures:
    car = race.car(player)
    return {
        "square": str(car.square) if car.square is not None else "",
        "heading": car.heading.value,
        "recklessness": car.recklessness,
        "crashes": car.crashes,
        "lap": min(car.progress.lap + 1, race.circuit.laps),
        "checkpoint": car.progress.checkpoint,
        "status": car.status.value,
    }


def map_lines(race: Race) -> list[str]:
    """The map with a column ruler and row numbers; cars as their letters (lower case for
    a car that crashed last round and waits to be re-placed)."""
    grid = [list(row) for row in race.circuit.grid]
    placed: set[tuple[int, int]] = set()
    for car in race.cars:
        if car.square is None or car.status in (CarStatus.FINISHED, CarStatus.OUT):
            continue
        letter = car.letter.lower() if car.status is CarStatus.CRASHED else car.letter
        where = (car.square.x, car.square.y)
        grid[car.square.y][car.square.x] = "*" if where in placed else letter
        placed.add(where)
    width = race.circuit.width
    tens = "".join(str(x // 10) if x % 10 == 0 else " " for x in range(width))
    units = "".join(str(x % 10) for x in range(width))
    lines = [f"    {tens}".rstrip(), f"    {units}"]
    lines += [f"{y:>3} {''.join(row)}" for y, row in enumerate(grid)]
    return lines


def legend(race: Race) -> list[str]:
    lines = [f"{car.letter} = {car.player} ({car.colour or 'no colour yet'})" for car in race.cars]
    lines.append("* = two or more cars; lower case = crashed, waiting to be re-placed")
    return lines


def turn_label(race: Race) -> str:
    if race.finished:
        return f"Race over after round {race.round - 1}"
    if race.set_up:
        return "Set-up and round 1 (send COLOUR, START, ROUND 1 and ROUND 2)"
    return f"Round {race.round} (send ROUND {race.round + 1})"


COLUMNS = ["Square", "Heading", "Lap", "Checkpoint", "Recklessness", "Crashes", "Status"]


def summary(race: Race, places: Standings) -> str:
    if race.finish_order:
        return f"{race.finish_order[0]} wins the race"
    if not places:
        return "No cars are racing"
    if race.set_up:
        return "The cars are on the grid"
    front = places[0]
    if len(front) > 1:
        return f"{' and '.join(front)} share the lead"
    return f"{front[0]} leads"


def build_view(race: Race, resolution: Resolution[Race] | None, viewer: PlayerId | Viewer) -> dict[str, Any]:
    """The common keys of rules/api.py "Views", plus SpeedPhreakz extras: ``map_lines`` (the
    text map with a ruler and car letters), ``map_legend``, ``map_name``, ``round``,
    ``control`` (the last control roll) and ``paths`` (each car's squares last round, in
    order, as ``"x,y"``)."""
    places = standings(race)
    rows: list[dict[str, Any]] = []
    place_of: dict[PlayerId, int] = {}
    place = 1
    for position in places:
        for p in position:
            place_of[p] = place
        place += len(position)
    for position in places:
        for p in position:
            f = figures(race, p)
            cells = [str(f["square"]), str(f["heading"]), f"{f['lap']}/{race.circuit.laps}", f"{f['checkpoint']}/{len(race.circuit.checkpoints)}",
                     str(f["recklessness"]), str(f["crashes"]), str(f["status"])]
            rows.append({"player": p, "place": place_of[p], "cells": cells})
    private: list[str] = []
    if isinstance(viewer, str) and any(c.player == viewer for c in race.cars):
        car = race.car(viewer)
        for program in car.programs:
            private.append(f"Your program for round {program.round}: {' '.join(program.actions) or '(hold position)'}")
        if car.deficit:
            private.append(f"Deficit carried to your next first action: {car.deficit}")
        if car.surcharge:
            private.append(f"Crash surcharge on your next first action: {car.surcharge}")
        if car.oil:
            private.append("Oil: your next action will be rolled on the loss-of-control table")
        if car.status is CarStatus.CRASHED and not race.finished:
            private.append(f"You crashed: send RESTART x,y FACING h, ROUND {race.round} and ROUND {race.round + 1}")
    return {
        "title": "SpeedPhreakz",
        "turn_label": turn_label(race),
        "finished": race.finished,
        "standings": [{"place": place_of[position[0]], "players": list(position)} for position in places],
        "columns": list(COLUMNS),
        "table": rows,
        "events": [e.text for e in resolution.events] if resolution is not None else [],
        "private": private,
        "summary": summary(race, places),
        "map_lines": map_lines(race),
        "map_legend": legend(race),
        "paths": {c.player: [str(s) for s in c.trail] for c in race.cars if c.trail},
        "map_name": race.circuit.name,
        "round": race.round,
        "control": race.last_control,
    }
