"""Reference drivers for measuring the robot (bench `robots`): a simple Speed Circuit
driver written from the rules (speed-circuit.md), deterministic, reading only what a
driver at its seat sees.

* `greedy`: a car built for speed (TOP +2, ACC +1, DEC +1, paid with the start speed, the
  prime tyres and the skill row) on OPTION tyres, bidding half its wear for the grid; in the
  race, every turn, the fastest speed on offer (`options.plot_options`, the cheapest path to
  it) whose cost is free or wear it has; where none is, the NMR default's safe plot (§8).
  The compulsory stop and the pits are the safe plot's (it plans the stop on the last lap).
"""

from __future__ import annotations

from rules.api import PlayerId
from rules.speed_circuit.car import Design, Status, Tyre
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.options import Cost, plot_options
from rules.speed_circuit.plot import (
    BidOrder,
    DesignOrder,
    Order,
    PathKind,
    PathOrder,
    PayOrder,
    PitOrder,
    PushOrder,
    SpeedOrder,
    TyresOrder,
)
from rules.speed_circuit.resolve import safe_plot

GREEDY_DESIGN = Design(acc=1, dec=1, top=2, start=0, prime=-1, option=0, skill=-1)


def greedy(state: RaceState, player: PlayerId) -> tuple[Order, ...]:
    """The greedy driver's orders for `player` in the open turn (see the module docstring)."""
    car = state.car(player)
    if car.status is not Status.RACING:
        return ()
    if state.phase is Phase.DESIGN:
        return (DesignOrder(GREEDY_DESIGN), TyresOrder(Tyre.OPTION))
    if state.phase is Phase.QUALIFYING:
        return (BidOrder(car.wear // 2, 0),)
    if state.phase is not Phase.RACE:
        return ()
    plot = safe_plot(state, car)
    options = plot_options(state, player)
    if options is not None and plot.pit is None:
        for choice in sorted(options.choices, key=lambda c: -c.speed):
            reach = choice.cheapest
            if reach is None or reach.cost not in (Cost.FREE, Cost.WEAR) or reach.wear > car.wear:
                continue
            if choice.speed <= plot.speed:
                break  # the safe plot is as fast
            lines: list[Order] = [
                SpeedOrder(choice.speed),
                PathOrder(PathKind.LANES, tuple(state.track.space(s).lane for s in reach.path)),
                PayOrder(True),
            ]
            if choice.push:
                lines.append(PushOrder(True))
            return tuple(lines)
    if car.pit is not None or car.space is None or car.off_track:
        return (SpeedOrder(plot.speed), PayOrder(True))
    path = PathOrder(PathKind.LINE) if plot.lanes is None else PathOrder(PathKind.LANES, plot.lanes)
    return (SpeedOrder(plot.speed), path, PayOrder(True), *((PitOrder(plot.pit),) if plot.pit else ()))


__all__ = ["GREEDY_DESIGN", "greedy"]
