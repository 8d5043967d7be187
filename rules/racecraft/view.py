"""What a viewer sees of a race (rules.api, "Views"): a `RacecraftView`.

EP are public in Racecraft (the `flagman play` contract prints them for everyone), so the
public table shows them; a player's private lines only add what concerns them alone: their
EP and place (never the NMR default: the GM's plot may replace it, and the shell says which
one counts, once, from its outlook). Racecraft has no track to draw: its picture is a chart
of places over the turns, drawn from `RacecraftView.runners` (every runner's place and EP).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rules.api import Event, Placing, PlayerId, Resolution, TableRow, View, Viewer, competition_places
from rules.racecraft.model import Race, Stage, names_text, ordinal, score_text
from rules.racecraft.resolve import play_text

TITLE = "Racecraft"
COLUMNS = ("EP", "Last order", "Score")
DID_NOT_FINISH = "did not finish"  # a runner who left the race, classified after every runner


@dataclass(frozen=True, slots=True)
class RunnerPosition:
    """Where one runner stands: their place (1-based; runners level share it) and their EP."""

    player: PlayerId
    place: int
    ep: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RacecraftView(View):
    """The common view plus the turn (``turn`` of ``turns``, ``stage`` in words) and the
    runners in race order, front first (what the positions chart is drawn from)."""

    turn: int
    turns: int
    stage: str
    runners: tuple[RunnerPosition, ...]


def turn_label(race: Race) -> str:
    """``Turn 2 of 5: tactical``; ``Race over`` after the sprint."""
    stage = race.stage
    if stage is Stage.FINISHED:
        return f"Race over after {race.turns} turns"
    return f"Turn {race.turn} of {race.turns}: {stage.value}"


def summary(race: Race) -> str:
    """One line saying where the race stands."""
    if not race.positions:
        return "Nobody is left in the race."
    front = race.positions[0]
    if race.stage is Stage.FINISHED:
        return f"{names_text(front)} {'wins' if len(front) == 1 else 'share the win'}."
    if race.turn == 1:
        return "The runners are level at the start line."
    if len(race.positions) == 1:
        return "The whole field is level."
    lead = f"{names_text(front)} {'leads' if len(front) == 1 else 'share the lead'}"
    return f"{lead}; {names_text(race.positions[-1])} {'is' if len(race.positions[-1]) == 1 else 'are'} last."


def private_lines(race: Race, player: PlayerId) -> list[str]:
    if player not in race.names():
        return ["You are no longer in the race."]
    ep = race.runner(player).ep
    place = ordinal(race.place_of(player))
    stage = race.stage
    if stage is Stage.FINISHED:
        # The result's own place (competition places, as the final result and the season's
        # table write it: 1, 2, 2, 4), never the dense in-race position.
        at = next(i for i, position in enumerate(race.positions) if player in position)
        return [f"You finished {ordinal(competition_places(race.positions)[at])} with {ep} EP left."]
    if stage is Stage.SPRINT:
        return [f"You are {place} with {ep} EP; the final sprint needs no orders: you sprint with all {ep} EP."]
    # What a silent runner gets is the outlook's to say (the GM's plot may replace the game's
    # default): the sheet states it once, from there, never here.
    if stage is Stage.START:
        return [f"You have {ep} EP."]
    return [f"You have {ep} EP and are {place}."]


def view(race: Race, resolution: Resolution[Race] | None, viewer: PlayerId | Viewer) -> RacecraftView:
    public = _public_view(race, resolution)
    return public if isinstance(viewer, Viewer) else player_view(race, public, viewer)


def player_view(race: Race, public: RacecraftView, player: PlayerId) -> RacecraftView:
    """`public` (the public view of `race`) with `player`'s private lines: their view."""
    return replace(public, private=tuple(private_lines(race, player)))


def _public_view(race: Race, resolution: Resolution[Race] | None) -> RacecraftView:
    events: tuple[Event, ...] = resolution.events if resolution is not None else ()
    finished = race.stage is Stage.FINISHED
    # During the race a place is the rule's position, numbered densely (racecraft.md,
    # Positions: "Kelly will be deemed to be in third place"; the adjustment reads it); the
    # result after the sprint is written in competition places (1, 2, 3, 3, 5).
    numbers = competition_places(race.positions) if finished else tuple(range(1, len(race.positions) + 1))
    runners = tuple(
        RunnerPosition(name, number, race.runner(name).ep)
        for number, position in zip(numbers, race.positions, strict=True)
        for name in position
    )
    out = len(runners) + 1 if finished else len(race.positions) + 1
    table = []
    for at in runners:
        runner = race.runner(at.player)
        cells = (
            str(runner.ep),
            "" if runner.last_play is None else play_text(runner.last_play),
            "" if runner.last_score is None else score_text(runner.last_score),
        )
        table.append(TableRow(at.player, at.place, cells))
    return RacecraftView(
        title=TITLE,
        turn_label=turn_label(race),
        finished=finished,
        standings=(
            *(Placing(number, tuple(position)) for number, position in zip(numbers, race.positions, strict=True)),
            *(Placing(out, (name,), DID_NOT_FINISH) for name in reversed(race.retired)),
        ),
        columns=COLUMNS,
        table=tuple(table),
        events=tuple(event.text for event in events),
        private=(),
        summary=summary(race),
        turn=min(race.turn, race.turns),
        turns=race.turns,
        stage=race.stage.value,
        runners=runners,
    )
