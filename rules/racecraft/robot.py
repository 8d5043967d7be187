"""The robot driver: a Racecraft runner for a seat no person plays.

It sees what a runner at that seat sees: every runner's place, EP, last order and score (the
public table, racecraft.md) and the turn; never the orders of the turn in hand. Its orders
are the orders a player could send (legal and complete: a property test checks it).

How it runs: it manages its EP over the whole race by looking ahead. For each order it may
give now it plays the rest of the race out `samples` times, the other runners giving the
orders it expects of them and itself giving the same kind of orders afterwards, and it
gives the order whose races end best for it on average: the fewest runners ahead of it at
the finish, a runner level with it (sharing its position) counting half a runner ahead, so
that it goes for finishing ahead rather than level (a place shared is a place not won,
and a dense place, "3rd" behind two level runners, would hide the two). What it expects of
a runner comes from what the results show of it: one whose last order was its NMR default
(half its EP, rounded down, racecraft.md "NMR") is expected to default again most of the
time; one whose last order was the rule of thumb's (USE 3 at the start, then OVERTAKE when
behind with 3 EP or more, else CRUISE) is expected to follow it again; any other may follow
it, or give any legal order alike. At the start it uses at most `START_MOST` EP (never all
of them): a lead bought there is lost to runners that OVERTAKE for 1 EP. Every candidate is played
against the same drawn races (common random numbers), so that the comparison between two
orders is not lost in the noise of the draws. All chance comes from the rng it is given.

The races are played on `_Field`, a small copy of the turn's arithmetic on plain integers
(racecraft.md: costs, cruise +1, movement from the last position forward, the end-of-turn
adjustment, the final sprint): the resolver builds reports and events the robot does not
need, and it plays a few thousand turns a decision. A property test checks that the copy
and `resolve` agree on every turn of random races.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from rules.api import PlayerId, RobotLevel
from rules.racecraft.model import MAX_EP, Cruise, Order, Overtake, Race, Stage, Use, nmr_default

CRUISE = -1
OVERTAKE = -2
"""Orders on the `_Field` are integers: ``n >= 0`` is USE n, then these two."""

START, TACTICAL, SPRINT = "start", "tactical", "sprint"

SIMULATED_TURNS = 120
"""About as many turns as it plays out for each candidate order (`samples`)."""

DEFAULTER = 0.9
"""How likely a runner whose last order was its NMR default is to default again."""
OTHERWISE = 0.15
"""How likely any other runner is to give its NMR default (else any legal order)."""
UNKNOWN = 0.2
"""The same before anyone has given an order (turn 1), and for the robot itself."""
SENSIBLE = 0.7
"""Of a runner that does not give its NMR default, how likely it is to give the rule-of-thumb
order (USE 3 at the start; OVERTAKE when behind with 3 EP or more, else CRUISE), else any
legal order alike: before anyone has given an order, and for the robot itself."""
SENSIBLE_AGAIN = 0.97
"""The same for a runner whose last order was the rule of thumb's (CRUISE or OVERTAKE, or
USE 3 at the start)."""
SENSIBLE_OTHERWISE = 0.3
"""The same for any other runner."""
START_MOST = 3
"""The most EP it uses at the start."""
RULE_START = 3
RULE_OVERTAKE = 3


@dataclass(frozen=True, slots=True)
class Field:
    """The race on integers: `ep` by seat, `positions` front first (seats), the open turn."""

    ep: tuple[int, ...]
    positions: tuple[tuple[int, ...], ...]
    turn: int
    turns: int

    @property
    def stage(self) -> str:
        return stage_of(self.turn, self.turns)

    def place(self, seat: int) -> int:
        for index, position in enumerate(self.positions):
            if seat in position:
                return index + 1
        raise KeyError(seat)

    def step(self, orders: Sequence[int]) -> Field:
        """This turn played with `orders` (by seat; none in the sprint), as `resolve` plays it."""
        ep, positions = _turn(list(self.ep), self.positions, self.stage, orders)
        return Field(tuple(ep), positions, self.turn + 1, self.turns)


def stage_of(turn: int, turns: int) -> str:
    return START if turn == 1 else SPRINT if turn == turns else TACTICAL


def field_of(race: Race) -> Field:
    names = race.names()
    return Field(
        tuple(r.ep for r in race.runners),
        tuple(tuple(names.index(p) for p in pos) for pos in race.positions),
        race.turn,
        race.turns,
    )


def encode(order: Order) -> int:
    return order.ep if isinstance(order, Use) else CRUISE if isinstance(order, Cruise) else OVERTAKE


def decode(code: int) -> Order:
    return Use(code) if code >= 0 else Cruise() if code == CRUISE else Overtake()


def legal_codes(ep: int, stage: str) -> list[int]:
    """Every order a runner with `ep` may give (racecraft.md): USE 0..ep, and on a tactical
    turn CRUISE and, with an EP to pay, OVERTAKE."""
    codes = list(range(ep + 1))
    if stage == TACTICAL:
        codes.append(CRUISE)
        if ep >= 1:
            codes.append(OVERTAKE)
    return codes


def _turn(
    ep: list[int], positions: tuple[tuple[int, ...], ...], stage: str, orders: Sequence[int]
) -> tuple[list[int], tuple[tuple[int, ...], ...]]:
    """One turn on plain values (`ep` is changed in place and returned)."""
    count = len(ep)
    if stage == START:
        for seat in range(count):
            ep[seat] -= orders[seat]
        levels = sorted(set(orders), reverse=True)
        return ep, tuple(tuple(seat for seat in range(count) if orders[seat] == level) for level in levels)
    overtakers: tuple[int, ...] = ()
    if stage == SPRINT:
        score = list(ep)  # "every player's score is all their remaining EP"
    else:
        # Scores times the number of non-cruisers, so the cruise average stays a whole number.
        total = 0
        movers = 0
        for order in orders:
            if order != CRUISE:
                total += order if order >= 0 else 1
                movers += 1
        movers = movers or 1
        score = [0] * count
        for seat in range(count):
            order = orders[seat]
            if order >= 0:
                score[seat] = order * movers
                ep[seat] -= order
            elif order == OVERTAKE:
                score[seat] = movers
                ep[seat] -= 1
                overtakers += (seat,)
            else:
                score[seat] = total
                if ep[seat] < MAX_EP:
                    ep[seat] += 1
    in_front: list[tuple[int, ...]] = [()] * len(positions)
    staying = list(positions)
    for index in range(len(positions) - 1, 0, -1):
        if in_front[index]:
            continue  # overtaken runners cannot pass
        best = max([score[seat] for seat in positions[index - 1]])
        passers = tuple(seat for seat in positions[index] if seat in overtakers or score[seat] > best)
        if passers:
            in_front[index - 1] = passers
            staying[index] = tuple(seat for seat in positions[index] if seat not in passers)
    moved = tuple(group for index in range(len(positions)) for group in (in_front[index], staying[index]) if group)
    if stage == SPRINT:
        return [0] * count, moved
    last = len(moved)
    for index in range(last):
        delta = _adjustment(index + 1, last)
        if delta:
            for seat in moved[index]:
                ep[seat] = max(0, min(MAX_EP, ep[seat] + delta))
    return ep, moved


def _adjustment(place: int, last: int) -> int:
    """racecraft.md, "End-of-turn adjustment": 2nd or 3rd +1; 1st or last -1 (one -1 at most)."""
    return (1 if place in (2, 3) else 0) - (1 if place == 1 or place == last else 0)


def defaulting(race: Race, player: PlayerId) -> float:
    """How likely `player` is to give its NMR default this turn, from its last order: the
    default for the EP it had then (worked back from its EP now, its place and the
    adjustment it got) makes a defaulter."""
    runner = race.runner(player)
    last = runner.last_play
    if last is None or race.turn == 1:
        return UNKNOWN
    if not isinstance(last, Use):
        return OTHERWISE
    if race.turn == 2:
        return DEFAULTER if last == nmr_default(MAX_EP) else OTHERWISE
    delta = _adjustment(race.place_of(player), len(race.positions))
    before = max(0, min(MAX_EP, runner.ep - delta + last.ep))
    return DEFAULTER if last == nmr_default(before) else OTHERWISE


def sensible(race: Race, player: PlayerId) -> float:
    """How likely `player` is to give the rule-of-thumb order when it does not default, from
    its last order (`SENSIBLE`, `SENSIBLE_AGAIN`, `SENSIBLE_OTHERWISE`)."""
    last = race.runner(player).last_play
    if last is None or race.turn == 1:
        return SENSIBLE
    if isinstance(last, (Cruise, Overtake)) or (race.turn == 2 and last == Use(RULE_START)):
        return SENSIBLE_AGAIN
    return SENSIBLE_OTHERWISE


EASY_SLIP = 0.25
"""How often the easy robot gives any legal order at random instead of the rule of thumb."""


def robot_orders(
    race: Race, player: PlayerId, rng: random.Random, level: RobotLevel = RobotLevel.NORMAL
) -> tuple[Order, ...]:
    """The robot's order for `player` in the open turn (none when the turn takes none). The
    easy level does not look ahead: it gives the rule-of-thumb order (USE 3 at the start,
    OVERTAKE when behind with 3 EP or more, else CRUISE), and `EASY_SLIP` of the time any
    legal order at random instead (all alike; at the start at most `START_MOST` EP)."""
    if race.stage not in (Stage.START, Stage.TACTICAL) or player not in race.names():
        return ()
    if level is RobotLevel.EASY:
        stage = START if race.stage is Stage.START else TACTICAL
        ep = race.runner(player).ep
        if rng.random() < EASY_SLIP:
            # at the start as the normal level: never more than START_MOST EP
            return (decode(rng.choice([c for c in legal_codes(ep, stage) if stage != START or c <= START_MOST])),)
        return (decode(_rule_of_thumb(ep, stage, race.place_of(player) == 1)),)
    me = race.names().index(player)
    field = field_of(race)
    weights = [UNKNOWN if seat == me else defaulting(race, name) for seat, name in enumerate(race.names())]
    rules = [SENSIBLE if seat == me else sensible(race, name) for seat, name in enumerate(race.names())]
    left = race.turns - race.turn + 1
    samples = max(6, min(24, SIMULATED_TURNS // left))
    # Each drawn race is a fixed stream of numbers, the same for every candidate order.
    draws = [[rng.random() for _ in range(left * len(race.runners))] for _ in range(samples)]
    best: tuple[int, int] | None = None
    candidates = legal_codes(field.ep[me], field.stage)
    if field.stage == START:
        # Never much of its EP at the start: a lead bought there is lost to runners that
        # OVERTAKE for 1 EP, and the adjustment takes 1 from the leader (racecraft.md).
        candidates = [code for code in candidates if code <= START_MOST]
    for code in candidates:
        total = sum(_play_out(field, me, code, weights, rules, draw) for draw in draws)
        if best is None or total < best[0]:
            best = (total, code)
    assert best is not None
    return (decode(best[1]),)


def _rule_of_thumb(ep: int, stage: str, leading: bool) -> int:
    """The rule-of-thumb order (`SENSIBLE`) of a runner with `ep`."""
    if stage == START:
        return min(RULE_START, ep)
    return OVERTAKE if not leading and ep >= RULE_OVERTAKE else CRUISE


def _play_out(
    field: Field, me: int, first: int, weights: Sequence[float], rules: Sequence[float], draw: Sequence[float]
) -> int:
    """How one drawn race (`draw`: its numbers, one per runner and turn) in which it gives
    `first` now ends for it: twice the runners ahead of it, plus the runners level with it."""
    ep = list(field.ep)
    positions = field.positions
    count = len(ep)
    at = 0
    for turn in range(field.turn, field.turns + 1):
        stage = stage_of(turn, field.turns)
        orders: list[int] = []
        if stage != SPRINT:
            for seat in range(count):
                u = draw[at]
                at += 1
                if seat == me and turn == field.turn:
                    orders.append(first)
                elif u < weights[seat]:
                    orders.append(ep[seat] // 2)  # nmr_default: half the EP, rounded down
                else:
                    v = (u - weights[seat]) / (1 - weights[seat])
                    if v < rules[seat]:
                        orders.append(_rule_of_thumb(ep[seat], stage, seat in positions[0]))
                    else:
                        codes = legal_codes(ep[seat], stage)
                        # the same number, spread over the legal orders: any of them alike
                        at_random = (v - rules[seat]) / (1 - rules[seat])
                        orders.append(codes[min(len(codes) - 1, int(at_random * len(codes)))])
        ep, positions = _turn(ep, positions, stage, orders)
    ahead = 0
    for position in positions:
        if me in position:
            return 2 * ahead + len(position) - 1
        ahead += len(position)
    raise AssertionError("the robot is in the race")


__all__ = ["Field", "field_of", "robot_orders"]
