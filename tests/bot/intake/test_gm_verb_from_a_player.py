"""A player's line that starts with a GM command's verb is the GM's command, not an order, and
the answer says so. mail-interface.md (the GM's commands): "`PREVIEW <game>` (resolve on a copy,
results to the GM only)". Played by mail (playtest5 SC4): a player's "PREVIEW" was answered
"'PREVIEW' is not an order; race orders: ..." -- nothing said it is the GM's, nor that the
confirmation of her orders already says what her plot costs."""

from __future__ import annotations

from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, body_of, last, one_lap_race, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_players_preview_is_told_it_is_the_gms_and_that_the_confirmation_says_the_cost(gapp: TestApp) -> None:
    one_lap_race(gapp, ("kelly", "seb"))
    for line in ("PREVIEW", "preview sc1"):
        player_says(gapp, "kelly", line, game="sc1")
        told = _flat(body_of(last(gapp, ADDRESS["kelly"])))
        assert (
            "PREVIEW is the GM's command (resolve a copy; the results come to you only), not an order; "
            "the confirmation of your orders says what they will cost" in told
        ), told
    player_says(gapp, "kelly", "SPEED 40", game="sc1")
    assert "What they will cost:" in body_of(last(gapp, ADDRESS["kelly"]))  # as the answer said


def test_another_gm_verb_from_a_player_says_how_to_ask_the_gm(rc: TestApp) -> None:
    player_says(rc, "kelly", "PAUSE rc1")
    told = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert (
        "PAUSE is the GM's command (stop deadlines until RESUME), not an order; to ask the GM for it, "
        "send PRESS rc1 GM with your message under it" in told
    ), told
