"""Reference drivers for measuring the robot (bench `robots`): a simple SpeedPhreakz
driver written from the rules (speedphreakz.md), deterministic, reading only what a player
at its seat sees.

* `greedy`: every round the program that gets furthest round the circuit (the most
  checkpoints, then the fewest squares to the next, then facing the way) within the control
  that is never lost (cost 101 or less, §4.2), and where that crosses the line sooner, up
  to 150 (over the line, the cheapest crossing in either band); it pays no heed to the
  other cars. It starts on its seat's place round the start squares, facing the race
  direction; restarts as the robot's.
"""

from __future__ import annotations

import random

from rules.api import PlayerId
from rules.speedphreakz.model import Order, Race
from rules.speedphreakz.robot import GREEDY, orders_in_style


def greedy(race: Race, player: PlayerId) -> tuple[Order, ...]:
    """The greedy driver's orders for `player` in the open turn (see the module docstring)."""
    return orders_in_style(race, player, random.Random(0), GREEDY)


__all__ = ["greedy"]
