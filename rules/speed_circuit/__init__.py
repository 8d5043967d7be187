"""Speed Circuit PBeM (speed-circuit.md): car design, qualifying, and the race.

`GAME` implements `rules.api.Game` for `RaceState` states and `Order` values. The modules:
`model` (the state and options), `parse` (the order grammar and HELP), `resolve` (a turn),
`view` (what a viewer sees), `storage` (versioned JSON), `game` (the `Game` object); the
track, the car, the tables, plots, movement and corners have their own (NOTES.md).
"""

from __future__ import annotations

from rules.speed_circuit.car import PitStage, Status
from rules.speed_circuit.game import GAME, SpeedCircuit
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.plot import Order
from rules.speed_circuit.track import LinePlan, PitPlan, Point, SpacePlan, TrackPlan
from rules.speed_circuit.view import CarOnTrack, SpeedCircuitView

__all__ = [
    "GAME",
    "CarOnTrack",
    "LinePlan",
    "Order",
    "PitPlan",
    "PitStage",
    "Point",
    "RaceState",
    "SpacePlan",
    "SpeedCircuit",
    "SpeedCircuitView",
    "Status",
    "TrackPlan",
]
