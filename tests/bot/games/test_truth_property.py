"""Property ("what the outlook says will be used is exactly what the tick uses, and no
mail states a default ... or a 'still to order' that the outlook does not"): over random
histories of player and GM mail -- whole sets, sets with parts missing, unreadable mail, CLEAR,
the GM's PLOT and PLOT CLEAR -- what ORDERS tells each seat will count at the deadline is what
the deadline then uses for it, named as the seat's own set, the GM's plot or the default as it
was, and STATUS's "Still to order" names exactly the seats the deadline defaults and, to
another player, the seats whose set still lacks a part."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot import store
from bot.games import record
from bot.games.turns import PlayerSpec, create_game, current_state
from bot.models import OrderSubmission, Turn
from bot.testing import TestApp, body_of
from rules import find_game
from tests.bot.gm_helpers import GM, Played, copy_of, cycle, gm_says, last, past_setup, played_once, player_says
from tests.helpers import moving_clock
from tests.settled import examples

SEATS = ("p0", "p1", "p2")

# Lines a player or the GM may send, per game, at the turn the example plays: whole sets,
# parts of sets, and lines that are no order.
LINES = {
    "speed_circuit": ["SPEED 40", "SPEED 60", "SPEED MPS", "PAY ROLL", "PASS YES", "SLIP 2", "LANE B", "HELLO"],
    "speedphreakz": ["START FREE FACING E", "ROUND 1: F1 F1", "ROUND 2: F1 L1", "ROUND 1: F2", "COLOUR red", "HELLO"],
}
PLOTS = {"speed_circuit": ["SPEED 40", "SPEED 20"], "speedphreakz": ["ROUND 1: F1", "ROUND 2: F1 F1"]}

step = st.one_of(
    st.tuples(st.just("order"), st.sampled_from(SEATS), st.lists(st.integers(0, 7), min_size=1, max_size=3)),
    st.tuples(st.just("plot"), st.sampled_from(SEATS), st.integers(0, 1)),
    st.tuples(st.just("plot clear"), st.sampled_from(SEATS), st.just(0)),
    st.tuples(st.just("clear"), st.sampled_from(SEATS), st.just(0)),
)


def _game(app: TestApp, kind: str) -> None:
    players = tuple(PlayerSpec(s, f"{s}@example.org", s.upper()) for s in SEATS)
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind=kind,
            name="g1",
            players=players,
            gm_address=GM,
            deadline="48h",
            seed=5,
        )
    app.service.send()
    if kind == "speed_circuit":  # to the race: the design and qualifying turns by default
        past_setup(app)


def _quoted(body: str) -> list[str]:
    return [line[6:] for line in body.replace("\r\n", "\n").splitlines() if line.startswith("    > ")]


Started = Callable[[str], Played]
"""A kind's game created, its first turn sheets sent and (Speed Circuit) its set-up turns
defaulted (`_game`), once a module: each example is played on a `copy_of` it."""


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Started:
    made: dict[str, Played] = {}

    def start(kind: str) -> Played:
        if kind not in made:
            made[kind] = played_once(tmp_path_factory.mktemp(f"started-{kind}"), lambda app: _game(app, kind))
        return made[kind]

    return start


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["speed_circuit", "speedphreakz"])
def test_what_orders_says_will_count_is_what_the_deadline_uses(kind: str, started: Started) -> None:
    @settings(max_examples=examples(3, 12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(step, max_size=6))
    def run(steps: list[tuple[str, str, object]]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            app = copy_of(started(kind), Path(tmp))
            try:
                _play(app, kind, steps)
            finally:
                app.close()

    run()


def _play(app: TestApp, kind: str, steps: list[tuple[str, str, object]]) -> None:
    """`steps` played on the game `_game` started, then ORDERS and STATUS held to the deadline."""
    lines = LINES[kind]
    for what, seat, arg in steps:
        if what == "order":
            assert isinstance(arg, list)
            player_says(
                app, seat, "\n".join(lines[i % len(lines)] for i in arg), game="g1", address=f"{seat}@example.org"
            )
        elif what == "plot":
            assert isinstance(arg, int)
            gm_says(app, f"PLOT g1 {seat} {PLOTS[kind][arg]}", game="g1")
        elif what == "plot clear":
            gm_says(app, f"PLOT g1 {seat} CLEAR", game="g1")
        else:
            player_says(app, seat, "CLEAR", game="g1", address=f"{seat}@example.org")
    with app.db.read() as session:
        game = store.find_game_row(session, "g1", with_seats=True)
        assert game is not None
        _, _, open_turn = current_state(session, game)
    if open_turn is None or open_turn.state_after is not None:
        return  # every order came in and the turn resolved early: nothing left to foretell
    number = open_turn.number
    said: dict[str, tuple[list[str], str]] = {}
    for seat in SEATS:
        player_says(app, seat, "ORDERS", game="g1", address=f"{seat}@example.org")
        body = body_of(last(app, f"{seat}@example.org")).replace("\r\n", "\n")
        if "Nothing is on file" in body:
            source = "plot" if "you get the GM's plot" in body else "default"
        else:
            source = "sent"
        said[seat] = (_quoted(body), source)
    player_says(app, "p0", "STATUS", game="g1", address="p0@example.org")
    status = body_of(last(app, "p0@example.org")).replace("\r\n", "\n")
    still = re.search(r"Still to order: (.*)\.", status)
    assert still is not None, status
    to_order = set() if still.group(1) == "nobody" else set(still.group(1).split(", "))

    moving_clock(app).advance(timedelta(hours=49))
    cycle(app)
    with app.db.read() as session:
        game = store.find_game_row(session, "g1", with_seats=True)
        assert game is not None
        turn = session.scalars(select(Turn).where(Turn.game_id == game.id, Turn.number == number)).one()
        assert turn.state_after is not None, "the deadline resolved the turn"
        rules = find_game(game.kind)
        state = rules.load_state(turn.state)
        subs = store.turns_submissions(session, [turn.id]).get(turn.id, {})
        used = record.orders_used(rules, state, game, subs)
        defaulted: set[str] = set()
        lacking: set[str] = set()  # another seat's set that lacks a part: "still to order" to p0
        for seat in SEATS:
            row = store.seat_named(game, seat)
            assert row is not None
            rows: list[OrderSubmission] = list(subs.get(row.id, ()))
            own = store.orders_on_file(rules, state, row, rows)
            if own is None:
                defaulted.add(seat)
                filed = [r.source for r in rows if r.source in ("default", "plot")]
                source = filed[-1] if filed else "default"
                expected = rules.format_orders(used[seat]).splitlines()
            else:
                source = "sent"
                expected = rules.format_orders(rules.filled_orders(state, seat, own)).splitlines()
                if seat != "p0" and not rules.is_complete(state, seat, own):
                    lacking.add(seat)
            lines_said, source_said = said[seat]
            assert (sorted(lines_said), source_said) == (sorted(expected), source), (seat, steps_text(rows))
    # mail-interface.md: STATUS tells "who has ordered — not what": to p0, a seat whose set
    # lacks a part is still to order (the turn waits for it), without saying what it lacks.
    assert to_order == (defaulted | lacking) & set(SEATS)


def steps_text(rows: list[OrderSubmission]) -> list[tuple[str, str]]:
    return [(r.source, r.text) for r in rows]
