"""Racecraft, John Walker's postal middle-distance race (shared/design/racecraft.md).

`GAME` implements `rules.api.Game` for `Race` states and `Order` values. The rules live in
the modules: `model` (values), `parse` (the order grammar and HELP), `resolve` (a turn),
`view` (what a viewer sees), `storage` (versioned JSON), `game` (the `Game` object).
"""

from __future__ import annotations

from rules.racecraft.game import GAME, Racecraft
from rules.racecraft.model import Cruise, Order, Overtake, Race, Runner, Stage, Use
from rules.racecraft.view import RacecraftView, RunnerPosition

__all__ = [
    "GAME",
    "Cruise",
    "Order",
    "Overtake",
    "Race",
    "Racecraft",
    "RacecraftView",
    "Runner",
    "RunnerPosition",
    "Stage",
    "Use",
]
