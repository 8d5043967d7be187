"""The public block of a turn's letters (`public_report`): the same for every seat, the GM and
the observers, so made once per game and turn, in the letters' `LetterCache`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from bot.letters.cache import LetterCache
from bot.mail_out.render import PublicReport, Renderer
from rules.api import AnyGame, GameState, Resolution, Viewer


class Resolves(Protocol):
    """What a report needs of a turn's outcome (`bot.outlook.Outcome`): its resolution."""

    @property
    def resolution(self) -> Resolution[GameState]: ...


def public_report(
    renderer: Renderer,
    cache: LetterCache,
    rules: AnyGame,
    state: GameState,
    outcome: Resolves | None,
    robot_seats: Mapping[str, str] | Sequence[str] = (),
) -> PublicReport:
    """The public block of the mails about `state` (and the turn `outcome` resolved), from the
    public view: the same for every seat and the GM, so made once per game and turn and kept in
    `cache` for the letters of that turn, as the picture is (bench: deadline). States are
    immutable: the same state object means the same report."""
    resolution = outcome.resolution if outcome is not None else None
    labels = tuple(sorted(robot_seats.items())) if isinstance(robot_seats, Mapping) else tuple(robot_seats)
    key = (id(renderer.env), id(state), id(resolution), labels)
    hit = cache.reports.get(key)
    if hit is not None and hit[0] is state and hit[1] is resolution and hit[2].env is renderer.env:
        return hit[2]
    if len(cache.reports) >= 64:
        cache.reports.clear()
    report = PublicReport(renderer, rules.view(state, resolution, Viewer.PUBLIC), robot_seats)
    cache.reports[key] = (state, resolution, report)
    return report
