"""Speed Circuit PBeM (speed-circuit.md): car design, qualifying, and the race.

`GAME` implements `rules.api.Game` for `RaceState` states and `Order` values. The modules:
`model` (the state and options), `parse` (the order grammar and HELP), `resolve` (a turn),
`view` (what a viewer sees), `options` (where a car can get this turn, and at what cost),
`storage` (versioned JSON), `game` (the `Game` object); the
track, the car, the tables, plots, movement and corners have their own (NOTES.md).
"""

from __future__ import annotations

from rules.speed_circuit.car import PitStage, Status
from rules.speed_circuit.game import GAME, SpeedCircuit
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.options import (
    CornerAhead,
    Cost,
    PlotOptions,
    Reach,
    SpeedChoice,
    plot_options,
)
from rules.speed_circuit.plot import Order
from rules.speed_circuit.track import LinePlan, PitPlan, Point, RacingLine, SpacePlan, TrackPlan
from rules.speed_circuit.view import CarOnTrack, SpeedCircuitView

__all__ = [
    "GAME",
    "CarOnTrack",
    "CornerAhead",
    "Cost",
    "LinePlan",
    "Order",
    "PitPlan",
    "PitStage",
    "PlotOptions",
    "Point",
    "RaceState",
    "RacingLine",
    "Reach",
    "SpacePlan",
    "SpeedChoice",
    "SpeedCircuit",
    "SpeedCircuitView",
    "Status",
    "TrackPlan",
    "plot_options",
]
