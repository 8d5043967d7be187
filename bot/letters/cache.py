"""What the letters of one piece of work draw or render once and use many times, passed down as
a value (never kept in a database session): the pictures drawn, the public reports rendered,
the seats' labels.

One `LetterCache` serves the letters of one turn at the deadline (its pictures go back with the
turn to the service, to be archived: `bot.games.archive.NewTurn`), or of one transaction
elsewhere (a game's start, a sheet sent on its own); a new one for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from bot import dice
from bot.letters.context import seat_labels
from bot.mail_out.render import Fragments, PublicReport
from bot.models import Commitment, Game
from bot.outlook import Outcome
from bot.pictures import Picture
from rules.api import GameState, Resolution

PictureKey = tuple[int, int | None, int | None]
"""A picture drawn for a mail: (game id, the resolved turn's number, the open turn's number)."""
DrawnPictures = dict[PictureKey, Picture | None]
"""Each picture drawn (None: the game draws none), by `PictureKey`."""

ReportKey = tuple[int, int, int, tuple[str, ...] | tuple[tuple[str, str], ...]]
"""A public report: (the environment's id, the state's id, the resolution's id, the seats'
labels, or the robot seats alone)."""


@dataclass
class LetterCache:
    """The pictures drawn (`bot.letters.pictures.picture_for`) and the public reports rendered
    (`bot.letters.reports.public_report`) for the letters of one piece of work."""

    pictures: DrawnPictures = field(default_factory=dict)
    reports: dict[ReportKey, tuple[GameState, Resolution[GameState] | None, PublicReport]] = field(default_factory=dict)
    # Each game's commitment log as the letters quote it (bot.dice), read once: with the entry
    # of a turn opened by the work in hand, not yet written, where there is one.
    log: dict[int, list[Commitment]] = field(default_factory=dict)
    gm_orders: dict[int, list[dict[str, object]]] = field(default_factory=dict)  # by turn id (bot.letters.reveal)
    # What the results reveal to every seat alike of a resolved turn's dice and receipts
    # (bot.letters.reveal.revealed), by (game id, turn number, secret, the outcome's id, final),
    # with the outcome it was worked out from (an id is only good while its object lives); and
    # the same with its times in one zone, by that key and the zone (the letters to that zone).
    revealed: dict[tuple[int, int, str, int, bool], tuple[Outcome, dict[str, Any]]] = field(default_factory=dict)
    revealed_in: dict[tuple[tuple[int, int, str, int, bool], str], dict[str, Any]] = field(default_factory=dict)
    # The parts of the letters' text the same in each of them, rendered once (templates' `once`).
    fragments: Fragments = field(default_factory=dict)
    # Each game's seats' labels (`bot.letters.context.seat_labels`, the templates' ``robots``),
    # by game id: worked out once for the letters of the work, whose seats do not change under it.
    labels: dict[int, Mapping[str, str]] = field(default_factory=dict)
    # Turns' states (their ``state`` column) decoded, by turn id: the turn worked out's, decoded
    # once for its resolution and its letters' picture (states are immutable values).
    states: dict[int, GameState] = field(default_factory=dict)

    def labels_of(self, game: Game) -> Mapping[str, str]:
        """`game`'s seats' labels (`bot.letters.context.seat_labels`), worked out on first use."""
        found = self.labels.get(game.id)
        if found is None:
            found = self.labels[game.id] = seat_labels(game.seats)
        return found

    def log_of(self, session: Session, game_id: int) -> list[Commitment]:
        if game_id not in self.log:
            self.log[game_id] = dice.entries(session, game_id)
        return self.log[game_id]
