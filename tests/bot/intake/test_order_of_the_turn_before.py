"""An order of the turn before, sent after it resolved, is refused saying that turn is over and
what it used for the seat. speed-circuit.md: "Car design, the starting tyre set and the
qualifying bid are orders of the set-up turns"; mail-interface.md: "Orders bind to the turn
they answer". Played by mail (playtest5 SC5): a grid bid sent in race turn 1 was refused with
"this turn (Race turn 1 ...) takes race plot lines" alone: nothing said qualifying was over, nor
what was used for her (the default BID WEAR 0 SKILL 0)."""

from __future__ import annotations

from datetime import timedelta

from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, body_of, cycle, last, one_lap_game, player_says
from tests.helpers import moving_clock

gapp = gm_helpers.gapp


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_grid_bid_in_the_race_says_qualifying_is_over_and_what_it_used(gapp: TestApp) -> None:
    one_lap_game(gapp, ("kelly", "seb"))
    moving_clock(gapp).advance(timedelta(hours=49))
    cycle(gapp)  # the design turn resolved on the defaults: qualifying is open
    player_says(gapp, "seb", "BID WEAR 1 SKILL 0", game="sc1")
    moving_clock(gapp).advance(timedelta(hours=49))
    cycle(gapp)  # qualifying resolved: race turn 1 is open

    player_says(gapp, "kelly", "BID WEAR 2 SKILL 1", game="sc1")
    told = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert (
        "Turn 2: qualifying is over: it used BID WEAR 0 SKILL 0 for you (the default: nothing came from you); "
        "this turn (Race turn 1 (leader on lap 1 of 1)) takes race plot lines" in told
    ), told
    player_says(gapp, "seb", "SPEED 40\nBID WEAR 2", game="sc1")
    told = _flat(body_of(last(gapp, ADDRESS["seb"])))
    assert "Turn 2: qualifying is over: it used BID WEAR 1 SKILL 0 for you; this turn" in told, told
    assert "> SPEED 40" in told
    # A race order refused now is the race's own matter: no word of qualifying.
    player_says(gapp, "seb", "SPEED 200", game="sc1")
    assert "qualifying is over" not in _flat(body_of(last(gapp, ADDRESS["seb"])))
