"""The prose reading of a mail is bounded before it starts (2,000
lines of "please put me down for use 3" through a seat's reply address cost 1.8-3.1 s of poll,
and mail past the hourly limit was still read whole). `bot.intake.orders.prose_to_read`: at
most `MAX_PROSE_LINES` lines and `MAX_PROSE_WORDS` words of a mail are read as prose, none of
a mail past its sender's hourly limit; the steps are counted (the game's parser calls), never
timed."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace

import pytest

from bot.intake import orders, prose
from bot.testing import TestApp
from rules import find_game
from rules.api import AnyGame, GameState, OrderProblem, Parsed
from rules.racecraft.game import Racecraft
from rules.racecraft.model import Order, Race
from tests.bot import gm_helpers
from tests.bot.gm_helpers import body_of, last, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
LINES = 2000
PROSE = "\n".join(["please put me down for use 3"] * LINES)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every text the Racecraft parser is asked to read, while the test runs."""
    calls: list[str] = []
    original = Racecraft.parse_orders

    def counted(self: Racecraft, state: Race, player: str, text: str) -> Parsed[Order]:
        calls.append(text)
        return original(self, state, player, text)

    monkeypatch.setattr(Racecraft, "parse_orders", counted)
    yield calls


def test_two_thousand_lines_of_prose_are_read_within_the_bound(rc: TestApp, parses: list[str]) -> None:
    player_says(rc, "anna", PROSE)
    # Each line holds one order word, so each line read costs at most MAX_PHRASE_WORDS parses
    # (a mail of any words: at most MAX_PROSE_WORDS * MAX_PHRASE_WORDS), beside the few parses
    # of the whole text.
    assert len(parses) <= orders.MAX_PROSE_LINES * prose.MAX_PHRASE_WORDS + 4, len(parses)
    answer = body_of(last(rc, gm_helpers.ADDRESS["anna"]))
    assert answer.count("Read as") <= orders.MAX_PROSE_LINES
    assert len(answer.encode()) < 32_000


def test_a_mail_past_the_hourly_limit_is_not_read_as_prose(rc: TestApp, parses: list[str]) -> None:
    limit = 2
    rc.use_settings(replace(rc.settings, limits=replace(rc.settings.limits, mails_per_sender_per_hour=limit)))
    for _ in range(limit):
        player_says(rc, "anna", "STATUS")
    read: list[int] = []
    original = prose.read

    def counted(
        rules: AnyGame,
        state: GameState,
        seat: str,
        text: str,
        problems: Sequence[OrderProblem],
        orders: Collection[str],
    ) -> prose.ProseResult:
        read.append(1)
        return original(rules, state, seat, text, problems, orders)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prose, "read", counted)
        player_says(rc, "anna", "please put me down for use 3")
    assert read == []


def test_the_phrase_before_a_clause_is_parsed_once_for_it(parses: list[str]) -> None:
    """A clause is compared with the phrase of the clause before it (whether its own phrases are
    orders of the same kind, whether it goes on with that phrase): that phrase is read by the
    game's parser once for the clause, not once for each question asked of it."""
    game = find_game("racecraft")  # a Racecraft, as the shell holds it
    state = game.new_game(["a", "b", "c", "d", "e"], {}, random.Random(1))
    line = "use 1, use 2"
    problems = game.parse_orders(state, "a", line).problems
    parses.clear()
    prose.read(game, state, "a", line, problems, {"USE"})
    # USE 1: once as the first clause's phrase is found, once as the second looks back at it
    # (asking both whether USE 2 is an order of its kind and whether the clause goes on with it).
    assert parses.count("USE 1") == 2, parses
