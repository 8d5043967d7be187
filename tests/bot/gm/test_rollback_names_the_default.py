"""ROLLBACK, to a seat with nothing on file for the reopened turn (mail-interface.md, "GM
commands", ROLLBACK: the players are told the turn is open again): the letter names what the
seat gets if nothing arrives, from the outlook (`bot.outlook.what_counts`), in every game.
Played by mail (playtest5 G2): a Speed Circuit race turn's reopening said "If nothing arrives,
you get the default:" and named no default."""

from __future__ import annotations

from bot.games.turns import current_state
from bot.outlook import what_counts
from bot.store import find_game_row, seat_named
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm.test_gm import speedphreakz_game
from tests.bot.gm_helpers import ADDRESS, body_of, gm_says, last, one_lap_race

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _flat(text: str) -> str:
    return " ".join(text.split())


def _default_of(app: TestApp, game: str, seat: str) -> list[str]:
    """The lines the outlook says `seat` gets in `game`'s open turn with nothing on file."""
    with app.db.read() as session:
        row = find_game_row(session, game)
        assert row is not None
        rules, state, turn = current_state(session, row)
        found = seat_named(row, seat)
        assert turn is not None and found is not None
        lines = what_counts(rules, state, found, None).text.splitlines()
    assert lines, "the game's default has orders"
    return lines


def _names_the_default(app: TestApp, game: str, seat: str, address: str) -> None:
    letter = _flat(body_of(last(app, address)))
    assert "reopened" in letter or "rolled back" in letter, letter
    default = " ".join(f"> {line}" for line in _default_of(app, game, seat))
    assert (
        f"You had no orders on file for it; you may send some now. If nothing arrives, you get the default: {default}"
        in letter
    ), letter


def test_racecraft(rc: TestApp) -> None:
    """Racecraft: "If no order arrives: USE 5" (the game's default, racecraft.md)."""
    gm_says(rc, "PROCESS rc1")
    gm_says(rc, "ROLLBACK rc1")
    _names_the_default(rc, "rc1", "seb", ADDRESS["seb"])


def test_speed_circuit_race_turn(gapp: TestApp) -> None:
    """Speed Circuit, a race turn (speed-circuit.md §8: the safe plot, "every line is optional
    but SPEED"): SPEED 60 / LINE / PAY WEAR in the corrected results of playtest5."""
    one_lap_race(gapp, ("kelly", "seb"))
    gm_says(gapp, "PROCESS sc1", game="sc1")
    gm_says(gapp, "ROLLBACK sc1", game="sc1")
    _names_the_default(gapp, "sc1", "kelly", ADDRESS["kelly"])
    assert "> SPEED" in _flat(body_of(last(gapp, ADDRESS["seb"])))


def test_speedphreakz(gapp: TestApp) -> None:
    """SpeedPhreakz: the set-up's default (START FREE, speedphreakz.md)."""
    speedphreakz_game(gapp)
    gm_says(gapp, "PROCESS sp1", game="sp1")
    gm_says(gapp, "ROLLBACK sp1", game="sp1")
    _names_the_default(gapp, "sp1", "p0", "p0@example.org")
