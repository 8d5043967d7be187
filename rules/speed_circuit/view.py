"""What a viewer may see: standings, the public table, the track with the cars, and a
player's private figures (their ratings, damage and what they may plot next).

The view is a `SpeedCircuitView`: the common view, the track as coordinates (`TrackPlan`,
the same geometry the SVG rendering uses), its racing lines space by space and where every
car is (`CarOnTrack`), which is what the turn picture is drawn from; a player's own view
adds their options this turn (`options`, every legal speed, where it ends and
what it costs) and the same as a text map (`plot_map`), both private to that player.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from rules.api import Honour, PlayerId, Resolution, Standings, TableRow, View, Viewer, placings
from rules.speed_circuit.car import Car, PitStage, Status
from rules.speed_circuit.model import Phase, RaceState, TyreRule
from rules.speed_circuit.move import movement_key
from rules.speed_circuit.options import PlotOptions, options_text, plot_options
from rules.speed_circuit.plot import limits
from rules.speed_circuit.track import RacingLine, TrackPlan, plan_track, render_text

COLUMNS = ("Lap", "Space", "Speed", "Wear", "Skill", "Tyres", "Compounds", "Status")


@dataclass(frozen=True, slots=True)
class CarOnTrack:
    """Where one car is, for the picture: its place, status and `space` (the track space it is
    on, or beside when `off_track` is -1 (beside lane A) or +1 (beside the far edge); None in
    the pits, finished or out). In the pits, `pit` is its stage and `pit_row` the row it is
    beside. `where` is the same in words (the public table's Space column; None: nowhere),
    `note` why a car is out."""

    player: PlayerId
    place: int
    status: Status
    space: str | None
    off_track: int
    pit: PitStage | None
    pit_row: int | None
    where: str | None
    note: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeedCircuitView(View):
    """The common view plus the track (`track`: its geometry; `racing_lines`: each line's
    spaces in order; `track_name`; `track_text`, the rows around the cars as text, with notes
    for cars off the track or in the pits) and every car in race order (`cars`). A player's
    own view adds `options` (where their car can get this turn; None for anyone else, and
    outside the race or in the pits) and `plot_map` (the same as text lines: the track ahead
    of the car with lane letters and row numbers, then every speed)."""

    PRIVATE_FIELDS: ClassVar[tuple[str, ...]] = ("options", "plot_map")
    """The fields beside `private` that only the player's own view fills (empty for others)."""

    track: TrackPlan
    cars: tuple[CarOnTrack, ...]
    track_name: str
    track_text: str
    racing_lines: tuple[RacingLine, ...] = ()
    options: PlotOptions | None = None
    plot_map: tuple[str, ...] = ()


def standings(state: RaceState) -> Standings:
    if state.phase in (Phase.DESIGN, Phase.QUALIFYING):
        return (tuple(sorted(c.player for c in state.cars)),)
    seats = {c.player: i for i, c in enumerate(state.cars)}
    finished = sorted(
        (c for c in state.cars if c.status is Status.FINISHED), key=lambda c: c.finish_key or (0, 0, 0, 0)
    )
    if state.options.tyre_rule is TyreRule.CLASSIFY_LAST:
        # P4: finishers that never ran both compounds are classified after all compliant ones
        finished.sort(key=lambda c: not c.ran_both_compounds())

    def racing_key(c: Car) -> tuple[int, ...]:
        if c.pit is not None:
            return (-c.pit.progress, 1, 0, -c.speed, 0, seats[c.player])
        return movement_key(state.track, c, c.speed, seats[c.player])

    racing = sorted(
        (c for c in state.cars if c.status is Status.RACING and (c.space is not None or c.pit is not None)),
        key=racing_key,
    )
    out = sorted(
        (
            c
            for c in state.cars
            if c.status is Status.OUT or (c.status is Status.RACING and c.space is None and c.pit is None)
        ),
        key=lambda c: (-c.out_turn, -c.progress, seats[c.player]),
    )
    return tuple((c.player,) for c in (*finished, *racing, *out))


def where(car: Car) -> str | None:
    """Where a car is, in words: a space, beside one off track, or in the pits."""
    if car.pit is not None:
        return f"pits ({car.pit.stage.value})"
    if car.space is not None and car.off_track:
        return f"beside {car.space}" + (" (from the pits)" if car.overflow else " (off track)")
    return car.space


def figures(state: RaceState, car: Car) -> dict[str, str | int | None]:
    return {
        # The lap in the summary's words ("leads on lap 1"): a car behind the line at the start
        # (progress lap 0, P27) is on its first lap, never "lap 0".
        "lap": max(1, min(car.lap, state.laps)),
        "space": where(car),
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
        lines.append(
            f"Tyres {car.tyres.value}, wear {car.wear}, skill {car.skill}; engine damage {car.engine_damage}, brake damage {car.brake_damage}"
        )
    if car.corner_run is not None and car.corner_run.tier:
        lines.append(f"Corner {car.corner_run.corner}: paid for +{car.corner_run.tier * 20}")
    if car.line_run is not None:
        lines.append(f"On racing line {car.line_run.line}")
    if car.pit is not None:
        stage = (
            "entrance lane: next turn slow to the pit limit, then new tyres"
            if car.pit.stage.value == "entrance"
            else "pit lane: next turn back onto the track"
        )
        lines.append(f"In the pits ({stage}); fitting {car.pit.tyre.value}")
    elif car.off_track and car.space is not None:
        lines.append(
            f"{'Beside the track after the pits' if car.overflow else 'Off track'} beside {car.space}"
            + ("" if car.overflow else ": 1 wear and 1 skill lost each turn you end off track")
        )
    if not car.ran_both_compounds() and car.design is not None:
        lines.append(
            "You have not yet run both tyre compounds: pit (PIT PRIME|OPTION from a red-arrow space) before the end"
        )
    if state.phase is Phase.RACE and car.status is Status.RACING and (car.space is not None or car.pit is not None):
        lines.append(f"Next turn you may plot {limits(car, state.track).describe()}")
    return lines


def summary(state: RaceState) -> str:
    order = standings(state)
    if state.phase in (Phase.DESIGN, Phase.QUALIFYING):
        laps = "1 lap" if state.laps == 1 else f"{state.laps} laps"
        return f"{len(state.cars)} cars preparing for {laps} of {state.track.name}"
    leader = state.car(order[0][0])
    if state.phase is Phase.FINISHED:
        if leader.status is not Status.FINISHED:
            return f"No car finished at {state.track.name}"
        return f"{leader.player} wins at {state.track.name}"
    return f"{leader.player} leads on lap {max(1, min(leader.lap, state.laps))} of {state.laps}"


def build_view(
    state: RaceState, resolution: Resolution[RaceState] | None, viewer: PlayerId | Viewer
) -> SpeedCircuitView:
    order = standings(state)
    place = {p: i + 1 for i, group in enumerate(order) for p in group}
    table, cars = _table_and_cars(state, order, place)
    track = state.track
    on_track = {c.space: c.player for c in state.cars if c.space is not None and c.off_track == 0}
    notes = _notes(state)
    rows = sorted({track.space(s).row for s in on_track} | set(notes))
    window = _window(rows, track.rows)
    public = SpeedCircuitView(
        title="Speed Circuit",
        turn_label=turn_label(state),
        finished=state.phase is Phase.FINISHED,
        standings=placings(order),
        columns=COLUMNS,
        table=tuple(table),
        events=() if resolution is None else tuple(e.text for e in resolution.events),
        private=(),
        summary=summary(state),
        honours=(Honour("pole", state.pole),) if state.pole is not None else (),
        track=plan_track(track),
        cars=tuple(cars),
        track_name=state.track.name,
        track_text=render_text(track, on_track, rows=window, notes={r: "; ".join(n) for r, n in notes.items()})
        if window
        else "",
        racing_lines=tuple(sorted(track.lines.values(), key=lambda line: line.id)),
        options=None,
        plot_map=(),
    )
    return public if isinstance(viewer, Viewer) else player_view(state, public, viewer)


def player_view(state: RaceState, public: SpeedCircuitView, player: PlayerId) -> SpeedCircuitView:
    """`public` (the public view of `state`) with `player`'s own part: their private lines,
    their plot options and the map of them (`PRIVATE_FIELDS`)."""
    private = tuple(private_lines(state, state.car(player)))  # KeyError for a player not in the race
    options = plot_options(state, player)
    plot_map: tuple[str, ...] = ()
    if options is not None:
        names = {c.space: c.player for c in state.cars if c.on_track and c.space is not None and c.player != player}
        plot_map = options_text(state.track, options, names)
    return replace(public, private=private, options=options, plot_map=plot_map)


def _table_and_cars(
    state: RaceState, order: Standings, place: Mapping[PlayerId, int]
) -> tuple[list[TableRow], list[CarOnTrack]]:
    """The public table's rows and the cars as the picture draws them, in the standings' order."""
    table: list[TableRow] = []
    cars: list[CarOnTrack] = []
    track = state.track
    for group in order:
        for player in group:
            c = state.car(player)
            f: dict[str, str | int | None] = {
                **figures(state, c),
                "compounds": "+".join(t.value for t in c.tyres_used) or "-",
            }
            cells = tuple(str(f[k.lower()]) if f[k.lower()] is not None else "-" for k in COLUMNS)
            table.append(TableRow(player, place[player], cells))
            pit_row = None if c.pit is None else (c.pit.progress - 1) % track.rows + 1
            cars.append(
                CarOnTrack(
                    player,
                    place[player],
                    c.status,
                    c.space if c.pit is None else None,
                    c.off_track,
                    None if c.pit is None else c.pit.stage,
                    pit_row,
                    where(c),
                    c.note,
                )
            )
    return table, cars


def _notes(state: RaceState) -> dict[int, list[str]]:
    """What the text map says beside a row: the racing cars in the pit lane or off the track there."""
    track = state.track
    notes: dict[int, list[str]] = {}
    for c in state.cars:
        if c.status is not Status.RACING:
            continue
        if c.pit is not None:
            row = (c.pit.progress - 1) % track.rows + 1
            notes.setdefault(row, []).append(
                f"[{c.player}] in the pit {'entrance lane' if c.pit.stage.value == 'entrance' else 'lane'}"
            )
        elif c.space is not None and c.off_track:
            side = "beside lane A" if c.off_track < 0 else "beside the far edge"
            notes.setdefault(track.space(c.space).row, []).append(
                f"[{c.player}] off track {side}" if not c.overflow else f"[{c.player}] beside the track from the pits"
            )
    return notes


def _window(rows: Sequence[int], track_rows: int) -> list[int]:
    """The rows the text map shows: from two before to three after each row with a car or a
    note, wrapped round the track, each once, in the order first met."""
    window: list[int] = []
    for r in rows:
        for k in range(r - 2, r + 4):
            wrapped = (k - 1) % track_rows + 1
            if wrapped not in window:
                window.append(wrapped)
    return window
