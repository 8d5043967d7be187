"""Reference drivers for measuring the robot (bench `robots`): simple Racecraft runners
written from the rules (racecraft.md), deterministic, reading only the public race.

* `heuristic`: a fixed rule of thumb: USE 3 at the start, OVERTAKE when behind with 3 EP or
  more, else CRUISE.
* `greedy`: the order that leaves it furthest forward after this turn, every other runner
  expected to give its NMR default (half its EP, rounded down); of orders that do as well,
  the one that keeps the most EP.
"""

from __future__ import annotations

from rules.api import PlayerId
from rules.racecraft.model import Cruise, Order, Overtake, Race, Stage, Use
from rules.racecraft.robot import decode, field_of, legal_codes

HEURISTIC_START = 3
"""EP it uses at the start."""
HEURISTIC_OVERTAKE = 3
"""The EP it needs to OVERTAKE when behind."""


def heuristic(race: Race, player: PlayerId) -> tuple[Order, ...]:
    """USE 3 at the start (all it has if less), OVERTAKE when behind the leaders with at
    least 3 EP, else CRUISE; none in the final sprint."""
    if race.stage not in (Stage.START, Stage.TACTICAL) or player not in race.names():
        return ()
    runner = race.runner(player)
    if race.stage is Stage.START:
        return (Use(min(HEURISTIC_START, runner.ep)),)
    if race.place_of(player) > 1 and runner.ep >= HEURISTIC_OVERTAKE:
        return (Overtake(),)
    return (Cruise(),)


def greedy(race: Race, player: PlayerId) -> tuple[Order, ...]:
    """The order giving the best place after this turn against the others' NMR defaults (see
    the module docstring); none in the final sprint."""
    if race.stage not in (Stage.START, Stage.TACTICAL) or player not in race.names():
        return ()
    field = field_of(race)
    me = race.names().index(player)
    others = [ep // 2 for ep in field.ep]
    best: tuple[int, int, int] | None = None
    for code in legal_codes(field.ep[me], field.stage):
        orders = list(others)
        orders[me] = code
        after = field.step(orders)
        key = (after.place(me), -after.ep[me], code)
        if best is None or key < best:
            best = key
    assert best is not None
    return (decode(best[2]),)


__all__ = ["greedy", "heuristic"]
