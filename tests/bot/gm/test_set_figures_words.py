"""SET's answer and notice list the seat's figures as they stand (mail-interface.md, "GM
commands": "SET <game> <seat> <figure> <value>"); a figure the seat has none of yet is left out.
Played by mail (playtest5 G3): "SET scg kelly wear 4" in qualifying said "Figures now: lap 1,
space None, speed 0, ..." -- a Python None in a mail."""

from __future__ import annotations

from bot.games.turns import PlayerSpec, create_game
from bot.testing import TestApp, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, gm_says, last

gapp = gm_helpers.gapp


def test_set_in_qualifying_names_no_space_the_car_has_not_got(gapp: TestApp) -> None:
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell, session, kind="speed_circuit", name="sc1", gm_address=GM, deadline="24h", seed=3,
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb")], options={"laps": "1"},
        )  # fmt: skip
    gapp.service.send()
    gm_says(gapp, "PROCESS sc1", game="sc1")  # the design: qualifying is open, no car on the grid
    gm_says(gapp, "SET sc1 kelly wear 4", game="sc1")
    for text in (words_of(last(gapp, GM)), words_of(last(gapp, ADDRESS["kelly"]))):
        assert "wear 4" in text and "lap 1, speed 0, wear 4" in text, text
        assert "None" not in text, text
