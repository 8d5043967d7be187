"""What counts at the deadline, said before it ("What is missing gets the
default" did not say what that default is, and "these orders count: > LINE" left out the speed
that will be used): `bot.outlook.what_counts`, and the confirmation and ORDERS that say it."""

from __future__ import annotations

import random
import re

from bot.games.turns import current_state
from bot.models import Seat
from bot.outlook import Source, what_counts
from bot.store import find_game_row, orders_on_file, submissions
from bot.testing import TestApp, body_of
from rules import find_game
from rules.api import AnyGame, GameState
from rules.speed_circuit.car import DEFAULT_DESIGN, Design
from rules.speed_circuit.model import RaceState
from rules.speed_circuit.resolve import safe_plot
from tests.bot import gm_helpers
from tests.bot.commands.test_self_service import _game
from tests.bot.gm_helpers import last, past_setup, player_says

gapp = gm_helpers.gapp


def _race_turn_1() -> tuple[AnyGame, GameState]:
    game = find_game("speed_circuit")
    state = game.new_game(["p0", "p1", "p2"], {}, random.Random(3))
    for _ in ("design", "qualifying"):
        orders = {p: game.default_orders(state, p) for p in game.expected_players(state)}
        state = game.resolve(state, orders, random.Random(4)).state
    return game, state


def test_a_plot_without_speed_counts_with_the_speed_of_the_safe_plot() -> None:
    """speed-circuit.md §8: "every line is optional but SPEED"; a driver without a plot gets "the
    bot's own safe plot: the highest speed within the car's limits whose planned path needs no
    wear, test or roll". A set on file without SPEED is resolved with that speed, named."""
    game, state = _race_turn_1()
    sent = game.parse_orders(state, "p0", "PAY ROLL\nPASS YES").orders
    assert len(sent) == 2
    counts = what_counts(game, state, Seat(name="p0"), sent)
    race = state
    assert isinstance(race, RaceState)
    speed = safe_plot(race, race.car("p0")).speed
    assert counts.source is Source.ON_FILE and counts.filled == (f"SPEED {speed}",)
    assert counts.text == "\n".join([f"SPEED {speed}", "PAY ROLL", "PASS YES"])
    assert counts.later == ()
    # What it says will be used is what the resolution does with the set as sent.
    others = {p: game.default_orders(state, p) for p in ("p1", "p2")}
    seed = 11
    as_sent = game.resolve(state, {"p0": sent, **others}, random.Random(seed))
    as_said = game.resolve(state, {"p0": counts.orders, **others}, random.Random(seed))
    assert game.dump_state(as_said.state) == game.dump_state(as_sent.state)


def test_nothing_on_file_counts_with_the_gms_plot_or_the_default_named_as_such() -> None:
    """speed-circuit.md §8, NMR: "the GM plot for that driver if the GM set one ...; otherwise the
    bot's own safe plot"; the player sees it named as the GM's plot."""
    game, state = _race_turn_1()
    default = what_counts(game, state, Seat(name="p0"), None)
    assert (default.source, default.game_default) == (Source.DEFAULT, "")
    assert default.orders == game.default_orders(state, "p0")
    plotted = what_counts(game, state, Seat(name="p0", gm_plot="SPEED 40"), None)
    assert (plotted.source, plotted.text) == (Source.PLOT, "SPEED 40")
    # The game's own default it replaces, named beside it once.
    assert plotted.game_default == game.format_orders(game.default_orders(state, "p0"))


def test_a_speedphreakz_set_up_without_a_start_counts_with_start_free_and_round_2_left_open() -> None:
    """speedphreakz.md §5: "A player silent at the set-up is placed on a start square no one
    chose", and a round's program left out is the empty one (S14) when that round is resolved:
    the start is filled now, the program for round 2 when round 2 is resolved."""
    game = find_game("speedphreakz")
    state = game.new_game(["p0", "p1"], {}, random.Random(1))
    sent = game.parse_orders(state, "p0", "ROUND 1: F1 F1").orders
    counts = what_counts(game, state, Seat(name="p0"), sent)
    assert len(counts.filled) == 1 and re.fullmatch(r"START FREE FACING [NESW]+", counts.filled[0])
    assert counts.later == ("the program for round 2: a ROUND 2 line with up to 12 actions",)


def test_the_confirmation_names_what_fills_each_missing_part(gapp: TestApp) -> None:
    """Through a mail: a design-turn set with TYRES only is confirmed with the
    base design that fills it (P1: the default design), and the orders that count say both."""
    _game(gapp, "speed_circuit", 2)
    player_says(gapp, "p0", "TYRES OPTION", game="g1", address="p0@example.org")
    body = body_of(last(gapp, "p0@example.org")).replace("\r\n", "\n")
    assert DEFAULT_DESIGN == Design(prime=1, option=1)
    design = "DESIGN ACC 0 DEC 0 TOP 0 START 0 PRIME 1 OPTION 1 SKILL 0"
    assert "At the deadline the game's default fills what is missing with:\n    > " + design in body
    counted = body.split("these orders count:")[1]
    assert design in counted and "TYRES OPTION" in counted
    assert "What is missing gets the game's default at the deadline." not in body


def test_orders_names_the_speed_that_fills_a_plot_without_one(gapp: TestApp) -> None:
    """ORDERS (mail-interface.md) shows the set on file and, for an incomplete one, the line the
    default adds (speed-circuit.md §8: the safe plot's speed for a plot without SPEED)."""
    _game(gapp, "speed_circuit", 2)
    past_setup(gapp)
    player_says(gapp, "p0", "PAY ROLL", game="g1", address="p0@example.org")
    confirmation = body_of(last(gapp, "p0@example.org")).replace("\r\n", "\n")
    player_says(gapp, "p0", "ORDERS", game="g1", address="p0@example.org")
    shown = body_of(last(gapp, "p0@example.org")).replace("\r\n", "\n")
    with gapp.db.read() as session:
        game_row = find_game_row(session, "g1", with_seats=True)
        assert game_row is not None
        rules, state, turn = current_state(session, game_row)
        assert turn is not None
        seat = next(s for s in game_row.seats if s.name == "p0")
        on_file = orders_on_file(rules, state, seat, submissions(session, turn, seat))
        speed = what_counts(rules, state, seat, on_file).filled
    assert speed and speed[0].startswith("SPEED ")
    assert "fills what is missing with:\n\n    > " + speed[0] in shown
    assert "fills what is missing with:\n    > " + speed[0] in confirmation


def test_a_refusal_names_the_gms_plot_and_the_fill_of_what_stands(gapp: TestApp) -> None:
    """In the answer to a mail with no order in it: what stands is
    named as it will be used -- the GM's plot as the GM's plot, and an incomplete set with the
    line the default fills in (speed-circuit.md §8: no SPEED line, the safe plot's speed)."""
    from tests.bot.gm_helpers import gm_says

    _game(gapp, "speed_circuit", 2)
    past_setup(gapp)
    gm_says(gapp, "PLOT g1 p1 SPEED 40", game="g1")
    player_says(gapp, "p1", "FLY AWAY", game="g1", address="p1@example.org")
    refused = body_of(last(gapp, "p1@example.org")).replace("\r\n", "\n")
    assert re.search(
        r"you get the GM's plot \(the game's own default would be SPEED \d+; [^)]*\):\n    > SPEED 40", refused
    )
    player_says(gapp, "p0", "PAY ROLL", game="g1", address="p0@example.org")
    player_says(gapp, "p0", "FLY AWAY", game="g1", address="p0@example.org")
    refused = body_of(last(gapp, "p0@example.org")).replace("\r\n", "\n")
    assert "Your earlier orders stay in force:\n    > PAY ROLL" in refused
    assert "the game's default fills\nwhat is missing with:\n    > SPEED " in refused
