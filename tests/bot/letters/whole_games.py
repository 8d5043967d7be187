"""A whole game of each kind played to its final result once in a test process, every mail it
sent kept: the letters' tests (test_every_letter's widths and subjects, test_layout's blank
lines) hold each of those mails to their bar without playing the game again."""

from __future__ import annotations

import tempfile
from email.message import EmailMessage
from functools import cache
from pathlib import Path

from bot.games.turns import PlayerSpec, create_game
from bot.gm import digest
from tests.bot.conftest import GM, RACERS
from tests.bot.gm_helpers import gm_says, mails, new_app, player_says, to_the_finish

GAMES: dict[str, tuple[dict[str, str], tuple[PlayerSpec, ...], tuple[str, ...], str]] = {
    # kind: (options, people, robot seats, a player's orders for the first turn)
    "racecraft": ({}, RACERS, (), "USE 2"),
    "speed_circuit": ({"laps": "1"}, RACERS[:2], ("robo",), "DESIGN TOP 2 SKILL 1"),
    "speedphreakz": ({}, RACERS[:2], ("robo", "rita"), "COLOUR red\nSTART 1,5 FACING N"),
}


@cache
def whole_game(kind: str) -> tuple[EmailMessage, ...]:
    """Every mail of a game of `kind` to its final result, oldest first: players in five zones,
    robots where the game has them, a player's orders, STATUS and HISTORY, the GM's STATUS and
    PREVIEW, the GM's digest, then every turn to the end (the turn sheets, results, the GM's
    copies, the final results)."""
    options, people, robots, orders = GAMES[kind]
    with tempfile.TemporaryDirectory() as tmp:
        app = new_app(Path(tmp))
        try:
            with app.db.transaction() as session:
                create_game(
                    app.shell,
                    session,
                    kind=kind,
                    name="g1",
                    players=people,
                    robot_seats=robots,
                    gm_address=GM,
                    deadline="24h",
                    seed=3,
                    options=options,
                )
            app.service.send()
            player_says(app, people[0].seat, orders, game="g1")
            player_says(app, people[1].seat, "STATUS g1\nHISTORY g1", game="g1")
            gm_says(app, "STATUS g1\nPREVIEW g1", game="g1")
            digest.send_due_digests(app.shell, force=True)
            app.service.send()
            to_the_finish(app, "g1", 80)
            return tuple(mails(app))
        finally:
            app.close()
