"""Speed Circuit PBeM (speed-circuit.md): car design, qualifying, and the race (part 1)."""

from __future__ import annotations

from rules.speed_circuit.game import GAME, SpeedCircuit

__all__ = ["GAME", "SpeedCircuit"]
