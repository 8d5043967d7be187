"""Resolving one Racecraft turn (shared/design/racecraft.md, Turn 1 / Tactical turns / Final sprint).

`run_turn` does the work and returns a `TurnReport`: every runner's leg (what they did, their
score, their EP at each step), every pass in the order it happened, the positions after.
`resolve_turn` turns that report into the game's `Resolution`: the new `Race` and the public
events; tests read the same report to check invariants (e.g. "a runner already overtaken
this turn cannot overtake") without re-implementing the rules.

Order of operations in a tactical turn (racecraft.md): deduct USE/OVERTAKE costs -> cruise +1
-> movement -> end-of-turn adjustment. Racecraft has no dice: the rng is never used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from rules.api import Event, PlayerId, Resolution, Standings, competition_places
from rules.racecraft.model import (
    MAX_EP,
    Cruise,
    Order,
    Overtake,
    Play,
    Race,
    Sprint,
    Stage,
    Use,
    names_text,
    nmr_default,
    ordinal,
    score_text,
)
from rules.racecraft.parse import check_order, format_order


@dataclass(frozen=True, slots=True)
class Pass:
    """The `passers` (all from one position, level with each other) passed the `passed`."""

    passers: tuple[PlayerId, ...]
    passed: tuple[PlayerId, ...]


@dataclass(frozen=True, slots=True)
class Blocked:
    """An OVERTAKE that did nothing: the runner led, or had been overtaken first."""

    player: PlayerId
    overtaken_by: tuple[PlayerId, ...]
    """Who overtook them this turn; empty when they were leading."""


@dataclass(frozen=True, slots=True)
class Leg:
    """One runner's turn: what they did and their EP at each step."""

    name: PlayerId
    play: Play
    score: Fraction
    ep_before: int
    spent: int
    """EP deducted by the order (USE x: x; OVERTAKE: 1; the sprint: all)."""
    cruise_gain: int
    """+1 for a cruiser below 10 EP, else 0."""
    place: int
    """Place after movement (1-based, dense)."""
    adjustment_due: int
    """The end-of-turn adjustment the place earns (before the 0..10 clamp)."""
    adjustment: int
    """The end-of-turn adjustment actually applied (after the 0..10 clamp)."""
    adjustment_reasons: tuple[str, ...]
    ep_after: int


@dataclass(frozen=True, slots=True)
class TurnReport:
    turn: int
    stage: Stage
    legs: tuple[Leg, ...]
    """In race order before the turn (front first, by name within a position)."""
    cruise_average: Fraction | None
    """The cruise score this turn, if anyone cruised."""
    passes: tuple[Pass, ...]
    """In the order they happened: from the back of the field to the front."""
    blocked: tuple[Blocked, ...]
    positions: Standings


def _sorted_position(names: Sequence[PlayerId]) -> tuple[PlayerId, ...]:
    return tuple(sorted(names))


def line_up(used: Mapping[PlayerId, int]) -> Standings:
    """Turn 1: "Players are ordered by EP used, most first; equal EP share a position"."""
    by_ep = sorted({ep for ep in used.values()}, reverse=True)
    return tuple(_sorted_position([p for p, ep in used.items() if ep == level]) for level in by_ep)


def move(
    positions: Standings,
    scores: Mapping[PlayerId, Fraction],
    overtakers: frozenset[PlayerId],
) -> tuple[Standings, tuple[Pass, ...], tuple[Blocked, ...]]:
    """Movement, position by position from last to first (racecraft.md, Tactical turns).

    A runner not yet overtaken this turn passes the position directly ahead if they
    OVERTAKE or their score beats the score of every runner in it. Passers from one position
    form one new position directly in front of the one they passed; everyone in the passed
    position counts as overtaken, so cannot pass in their turn.
    """
    count = len(positions)
    staying: list[list[PlayerId]] = [list(position) for position in positions]
    # in_front[i]: the runners who passed position i, placed directly in front of it
    in_front: list[tuple[PlayerId, ...]] = [() for _ in positions]
    passes: list[Pass] = []
    blocked: list[Blocked] = []
    for index in range(count - 1, -1, -1):
        position = positions[index]
        overtaken_by = in_front[index]
        if overtaken_by or index == 0:
            # Overtaken runners cannot pass; a leader has nobody to pass.
            blocked.extend(Blocked(player, overtaken_by) for player in position if player in overtakers)
            continue
        ahead = positions[index - 1]
        best_ahead = max(scores[player] for player in ahead)
        passers = tuple(player for player in position if player in overtakers or scores[player] > best_ahead)
        if passers:
            in_front[index - 1] = passers
            staying[index] = [player for player in position if player not in passers]
            passes.append(Pass(passers, ahead))
    result: list[tuple[PlayerId, ...]] = []
    for index in range(count):
        if in_front[index]:
            result.append(_sorted_position(in_front[index]))
        if staying[index]:
            result.append(_sorted_position(staying[index]))
    return tuple(result), tuple(passes), tuple(blocked)


def adjustment(place: int, last: int) -> tuple[int, tuple[str, ...]]:
    """The end-of-turn adjustment for a place (racecraft.md, End-of-turn adjustment).

    2nd or 3rd: +1; 1st: -1; last: -1; each that applies, but never more than one -1.
    """
    delta = 0
    reasons: list[str] = []
    if place in (2, 3):
        delta += 1
        reasons.append(ordinal(place))
    if place == 1 or place == last:
        delta -= 1
        if place == 1:
            reasons.append("1st")
        if place == last:
            reasons.append("last")
    return delta, tuple(reasons)


def _clamp(ep: int) -> int:
    return max(0, min(MAX_EP, ep))


def chosen_orders(race: Race, orders: Mapping[PlayerId, Sequence[Order]]) -> dict[PlayerId, Order]:
    """Each runner's order: the last one given (last submission wins), else the NMR default.

    Raises IllegalOrderError for an order the runner may not give (the shell only passes
    orders that came out of `parse_orders` or `default_orders`, so this means a bug).
    """
    chosen: dict[PlayerId, Order] = {}
    for runner in race.runners:
        given = orders.get(runner.name, ())
        order = given[-1] if given else nmr_default(runner.ep)
        check_order(race, runner.name, order)
        chosen[runner.name] = order
    return chosen


def run_turn(race: Race, orders: Mapping[PlayerId, Sequence[Order]]) -> TurnReport:
    """Resolve the open turn of `race`; ValueError if the race is over."""
    stage = race.stage
    if stage is Stage.FINISHED:
        raise ValueError("the race is over: there is no turn to resolve")
    ep_before = {runner.name: runner.ep for runner in race.runners}

    plays: dict[PlayerId, Play]
    if stage is Stage.SPRINT:
        # "every player's score is all their remaining EP": they are used, so deducted.
        plays = {name: Sprint(ep) for name, ep in ep_before.items()}
    else:
        plays = dict(chosen_orders(race, orders))

    # Scores, and the cruise average over everyone who did not cruise (0 if all cruised).
    def own_score(play: Play) -> Fraction:
        if isinstance(play, Use | Sprint):
            return Fraction(play.ep)
        return Fraction(1)  # OVERTAKE scores 1 and counts in the cruise average

    others = [own_score(play) for play in plays.values() if not isinstance(play, Cruise)]
    cruise_average = sum(others, Fraction(0)) / len(others) if others else Fraction(0)
    anyone_cruised = any(isinstance(play, Cruise) for play in plays.values())
    scores = {name: cruise_average if isinstance(play, Cruise) else own_score(play) for name, play in plays.items()}

    # Deduct costs, then the cruise +1.
    spent = {
        name: play.ep if isinstance(play, Use | Sprint) else (1 if isinstance(play, Overtake) else 0)
        for name, play in plays.items()
    }
    gain = {name: 1 if isinstance(play, Cruise) and ep_before[name] < MAX_EP else 0 for name, play in plays.items()}

    # Movement.
    if stage is Stage.START:
        positions = line_up({name: spent[name] for name in plays})
        passes: tuple[Pass, ...] = ()
        blocked: tuple[Blocked, ...] = ()
    else:
        overtakers = frozenset(name for name, play in plays.items() if isinstance(play, Overtake))
        positions, passes, blocked = move(race.positions, scores, overtakers)

    # The end-of-turn adjustment: after tactical turns only.
    place = {name: index + 1 for index, position in enumerate(positions) for name in position}
    legs = []
    for position in race.positions:
        for name in position:
            ep = ep_before[name] - spent[name] + gain[name]
            delta = 0
            reasons: tuple[str, ...] = ()
            if stage is Stage.TACTICAL:
                delta, reasons = adjustment(place[name], len(positions))
            ep_after = _clamp(ep + delta)
            legs.append(
                Leg(
                    name=name,
                    play=plays[name],
                    score=scores[name],
                    ep_before=ep_before[name],
                    spent=spent[name],
                    cruise_gain=gain[name],
                    place=place[name],
                    adjustment_due=delta,
                    adjustment=ep_after - ep,
                    adjustment_reasons=reasons,
                    ep_after=ep_after,
                )
            )
    return TurnReport(
        turn=race.turn,
        stage=stage,
        legs=tuple(legs),
        cruise_average=cruise_average if anyone_cruised else None,
        passes=passes,
        blocked=blocked,
        positions=positions,
    )


def next_race(race: Race, report: TurnReport) -> Race:
    legs = {leg.name: leg for leg in report.legs}
    runners = tuple(
        replace(
            runner,
            ep=legs[runner.name].ep_after,
            last_play=legs[runner.name].play,
            last_score=legs[runner.name].score,
        )
        for runner in race.runners
    )
    return replace(race, runners=runners, positions=report.positions, turn=race.turn + 1)


# -- the public report ------------------------------------------------------------------


def play_text(play: Play) -> str:
    """What a runner did, as the results show it (the sprint is not an order: lower case)."""
    if isinstance(play, Sprint):
        return f"sprint {play.ep}"
    return format_order(play)


def _leg_event(leg: Leg, report: TurnReport) -> Event:
    ep_after_order = leg.ep_before - leg.spent + leg.cruise_gain
    ep_change = f"EP {leg.ep_before} -> {ep_after_order}"
    play = leg.play
    if isinstance(play, Sprint):
        text = f"{leg.name} sprints with all {play.ep} EP ({ep_change})."
    elif isinstance(play, Use) and report.stage is Stage.START:
        text = f"{leg.name} uses {play.ep} EP ({ep_change})."
    elif isinstance(play, Use):
        text = f"{leg.name}: USE {play.ep}, score {play.ep} ({ep_change})."
    elif isinstance(play, Cruise):
        gained = ", +1 for cruising" if leg.cruise_gain else ", already at 10"
        others = [score_text(other.score) for other in report.legs if not isinstance(other.play, Cruise)]
        if others:
            average = f"the average of {names_text(others)}, the scores of those who did not cruise"
        else:
            average = "everyone cruised"
        text = f"{leg.name}: CRUISE, score {score_text(leg.score)}: {average} ({ep_change}{gained})."
    else:
        text = f"{leg.name}: OVERTAKE, score 1 ({ep_change}, 1 EP paid)."
    return Event("order", text, (leg.name,))


def _scored(names: Sequence[PlayerId], legs: Mapping[PlayerId, Leg], *, passing: bool) -> str:
    parts = []
    for name in names:
        leg = legs[name]
        overtook = passing and isinstance(leg.play, Overtake)
        shown = "OVERTAKE" if overtook else score_text(leg.score)
        parts.append(f"{name} ({shown})")
    return names_text(parts)


def _positions_text(positions: Standings, runners: Mapping[PlayerId, int] | None, *, final: bool = False) -> str:
    """The positions in words, front first: the rule's dense positions during the race, the
    result's competition places after the sprint (1st, 2nd, 3rd, 3rd, 5th)."""
    numbers = competition_places(positions) if final else tuple(range(1, len(positions) + 1))
    parts = []
    for number, position in zip(numbers, positions, strict=True):
        if runners is None:
            who = names_text(list(position))
        else:
            who = names_text([f"{name} ({runners[name]} EP)" for name in position])
        parts.append(f"{ordinal(number)} {who}")
    return "; ".join(parts)


GAINS_ONE = "a runner gains at most one place a turn"
"""racecraft.md, Final sprint: "at most one position gained" (the seed: "A player can only gain
1 position each turn")."""
OVERTAKEN_FIRST = "a runner already overtaken this turn cannot overtake"
"""racecraft.md, Tactical turns: "a runner already overtaken this turn cannot overtake"."""
BEAT_EVERYONE = "to pass a shared position a runner must beat everyone in it"
"""racecraft.md, Tactical turns: "to pass a shared position you must beat all who share it"."""


def _why(report: TurnReport) -> list[Event]:
    """After the sprint, one line with the rule that explains a surprising order (a runner who
    finishes behind someone who sprinted with less), or none: where the winners were outsprinted,
    theirs ("anna wins: a runner gains at most one place a turn (kelly, sprinting with 5, ...)"),
    about the runner behind who sprinted with most; else the first such runner from the front."""
    legs = {leg.name: leg for leg in report.legs}
    passed_by: dict[PlayerId, tuple[PlayerId, ...]] = {}
    overtaken: dict[PlayerId, tuple[PlayerId, ...]] = {}
    for one in report.passes:
        for name in one.passers:
            passed_by[name] = one.passed
        for name in one.passed:
            overtaken[name] = one.passers
    positions = report.positions
    order = [name for position in positions for name in position]
    front = set(positions[0]) if positions else set()
    first: list[Event] = []
    rest: list[Event] = []
    at_of = {name: at for at, position in enumerate(positions) for name in position}
    for name in order:
        at = at_of[name]
        # Only a runner in a position ahead needs explaining: one sharing this runner's
        # position finished level with them, whatever each sprinted with.
        lower = [ahead for ahead in order if at_of[ahead] < at and legs[ahead].score < legs[name].score]
        if not lower:
            continue
        runner = f"{name}, sprinting with {score_text(legs[name].score)},"
        if name in overtaken:
            rule, how = OVERTAKEN_FIRST, f"{runner} was overtaken by {names_text(list(overtaken[name]))} first"
        elif name in passed_by:
            rule, how = GAINS_ONE, f"{runner} passed {names_text(list(passed_by[name]))} and no further"
        elif at > 0 and any(ahead in positions[at - 1] for ahead in lower):
            rule, how = BEAT_EVERYONE, f"{runner} did not beat everyone in the position ahead"
        else:
            rule, how = GAINS_ONE, f"{runner} started more than one position back"
        winners = [ahead for ahead in lower if ahead in front]
        if winners:
            verb = "wins" if len(front) == 1 else "shares the win" if len(winners) == 1 else "share the win"
            first.append(Event("why", f"{names_text(winners)} {verb}: {rule} ({how}).", (*winners, name)))
        else:
            verb = "stays" if len(lower) == 1 else "stay"
            rest.append(Event("why", f"{names_text(lower)} {verb} ahead of {name}: {rule} ({how}).", (*lower, name)))
    # One line: the winners' (of the runner behind who sprinted with most), else the first.
    return [max(first, key=lambda e: legs[e.players[-1]].score)] if first else rest[:1]


def events(report: TurnReport) -> tuple[Event, ...]:
    """The public report of one turn, in the order things happened."""
    legs = {leg.name: leg for leg in report.legs}
    out = [_leg_event(leg, report) for leg in report.legs]
    for passed in report.passes:
        verb = "passes" if len(passed.passers) == 1 else "pass"
        passers = _scored(passed.passers, legs, passing=True)
        text = f"{passers} {verb} {_scored(passed.passed, legs, passing=False)}."
        out.append(Event("overtake", text, passed.passers + passed.passed))
    for block in report.blocked:
        if block.overtaken_by:
            why = f"was overtaken by {names_text(block.overtaken_by)} first, so cannot overtake"
        else:
            why = "leads, so has nobody to overtake"
        out.append(Event("blocked", f"{block.player} {why} (the 1 EP is spent).", (block.player,)))
    for leg in report.legs:
        if not leg.adjustment_reasons:
            continue
        before = leg.ep_after - leg.adjustment
        places = " and ".join(leg.adjustment_reasons)
        if leg.adjustment_due == 0:
            change = f"no change ({leg.ep_after} EP)"
        elif leg.adjustment == leg.adjustment_due:
            change = f"{leg.adjustment:+d} EP ({before} -> {leg.ep_after})"
        else:
            change = f"{leg.adjustment_due:+d} EP due, but EP stay within 0 to {MAX_EP} ({leg.ep_after} EP)"
        out.append(Event("adjustment", f"{leg.name} is {places}: {change}.", (leg.name,)))
    ep_after = {leg.name: leg.ep_after for leg in report.legs}
    heading = {
        Stage.START: "After the start",
        Stage.TACTICAL: f"After turn {report.turn}",
        Stage.SPRINT: "Final result",
    }[report.stage]
    everyone = tuple(name for position in report.positions for name in position)
    # After the sprint everyone is at 0 EP: the result is the order alone.
    final = report.stage is Stage.SPRINT
    shown_ep = None if final else ep_after
    out.append(Event("positions", f"{heading}: {_positions_text(report.positions, shown_ep, final=final)}.", everyone))
    if final:
        out.extend(_why(report))
    return tuple(out)


def resolve_turn(race: Race, orders: Mapping[PlayerId, Sequence[Order]]) -> Resolution[Race]:
    """The open turn resolved: the next race and its public report."""
    report = run_turn(race, orders)
    return Resolution(next_race(race, report), events(report))


def drop_runner(race: Race, player: PlayerId) -> Race:
    """A runner leaves the race (GM DROP or resignation).

    Rule chosen (racecraft.md is silent): the runner is removed from the race; a position
    left empty disappears and the places close up. They no longer count in the cruise average,
    the NMR list or the adjustment's "last". They stay in the classification, after every
    runner, as not finishing (`Race.retired`; "the driver stays in the
    classification").
    """
    if player not in race.names():
        raise ValueError(f"{player} is not running in this race")
    runners = tuple(runner for runner in race.runners if runner.name != player)
    positions = tuple(
        kept for kept in (tuple(name for name in position if name != player) for position in race.positions) if kept
    )
    return replace(race, runners=runners, positions=positions, retired=(*race.retired, player))


def set_ep(race: Race, player: PlayerId, ep: int) -> Race:
    runners = tuple(replace(runner, ep=ep) if runner.name == player else runner for runner in race.runners)
    return replace(race, runners=runners)


__all__ = [
    "Blocked",
    "Leg",
    "Pass",
    "TurnReport",
    "adjustment",
    "drop_runner",
    "events",
    "line_up",
    "move",
    "next_race",
    "resolve_turn",
    "run_turn",
    "set_ep",
]
