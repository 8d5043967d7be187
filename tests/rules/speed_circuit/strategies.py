"""Random *legal* Speed Circuit games for the Hypothesis properties.

Each turn every driver writes an order text chosen with a `random.Random` drawn by
Hypothesis; legality comes from the game itself (`limits`, the car's wear and chips), so
the text is legal by construction without re-implementing a rule here.
"""

from __future__ import annotations

import random

from rules.speed_circuit.car import DESIGN_FIELDS, PitStage, Status
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.plot import SkillTable, limits
from rules.speed_circuit.resolve import safe_speed
from rules.speed_circuit.track import LANES

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy")


def design_text(rnd: random.Random) -> str:
    while True:
        levels = {f: rnd.randint(-1 if f in ("ACC", "DEC") else -2, 2) for f in DESIGN_FIELDS}
        if sum(levels.values()) <= 2:
            break
    tyres = rnd.choice(("PRIME", "OPTION"))
    return "DESIGN " + " ".join(f"{k} {v}" for k, v in levels.items()) + f"\nTYRES {tyres}"


def drivable_lanes(state: RaceState, player: str, rnd: random.Random, count: int) -> list[str]:
    """`count` lanes a PATH may give from where the car stands (§8, §2.16: each space entered
    straight on or an adjacent lane over; intake refuses any other), each a random move; random
    lanes in the pits, where a PATH is not checked."""
    car = state.car(player)
    if car.space is None or car.pit is not None:
        return [rnd.choice(LANES) for _ in range(count)]
    lanes: list[str] = []
    here = car.space
    for _ in range(count):
        moves = state.track.moves(here, staggered=state.options.staggered_lane_change)
        if not moves:
            break
        here = rnd.choice(moves)
        lanes.append(LANES[state.track.space(here).lane])
    return lanes or [LANES[state.track.space(car.space).lane]]


def order_text(state: RaceState, player: str, rnd: random.Random) -> str:
    car = state.car(player)
    if state.phase is Phase.DESIGN:
        return design_text(rnd)
    if state.phase is Phase.QUALIFYING:
        return f"BID WEAR {rnd.randint(0, car.wear)} SKILL {rnd.randint(0, car.skill)}"
    assert car.status is Status.RACING
    lim = limits(car, state.track)
    # favour speeds near the car's limits, so races move on and the tables get used
    low = max(0, min(lim.free_low - 20, lim.safe))
    speeds = list(range(low, lim.highest + 1, 20)) or [0]
    pick = rnd.random()
    if pick < 0.4:
        speed = safe_speed(state, car)  # a careful driver: no wear, no roll on the planned path
    elif pick < 0.9:
        speed = rnd.choice(speeds)
    else:
        speed = rnd.randrange(0, lim.highest + 1, 20)
    lines = [f"SPEED {speed}" if rnd.random() < 0.9 or speed != car.speed else "SPEED MPS"]
    # PUSH YES in the pits pushes the crew as the tyres are changed (entrance lane); leaving is refused
    if speed > lim.safe or (car.pit is not None and car.pit.stage is PitStage.ENTRANCE and rnd.random() < 0.5):
        lines.append("PUSH YES")
    path = rnd.random()
    if path < 0.3:
        lines.append("LINE")
    elif path < 0.5:
        lines.append(f"LANE {rnd.choice(LANES)}")
    elif path < 0.7:
        lines.append("PATH " + " ".join(drivable_lanes(state, player, rnd, rnd.randint(1, 8))))
    if rnd.random() < 0.4:
        lines.append(rnd.choice(("PAY WEAR", "PAY ROLL")))
    if rnd.random() < 0.3:
        lines.append("SKILL " + " ".join(t.value for t in SkillTable if rnd.random() < 0.4))
    if rnd.random() < 0.3:
        lines.append(f"SLIP {rnd.randint(0, 2)}")
    if rnd.random() < 0.3:
        lines.append("PASS YES")
    if rnd.random() < 0.2 or (car.pit is None and not car.ran_both_compounds() and rnd.random() < 0.6):
        lines.append("PIT " + rnd.choice(("PRIME", "OPTION")))
    rnd.shuffle(lines)
    return "\n".join(lines)
