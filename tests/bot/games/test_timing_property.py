"""Property: over random games (grace, early resolution, the GM's PLOT, PAUSE/RESUME, EXTEND and
DEADLINE, the players' orders) and random clocks, what the seat's last letter says about the
open turn -- its deadline or that none runs (paused), what counts for the seat if nothing else
arrives, and why -- is what the tick then does, run with the fake clock at that moment:

* paused: the tick does not resolve the turn, whatever the clock;
* a deadline D: at D and the game's grace (the test's own figure, not the bot's) the tick has
  resolved the turn; before it, the tick resolves it only where the game resolves early and the
  people's sets are all in (the letter's "waits for" aside, that is the one early path);
* the turn resolved: the seat's orders used are the ones the letter said would count, and why.

The letter is the answer to ORDERS (`bot.letters.claims.for_seat`: the orders that count and the
deadline), its claims read from the outbox row (`Outbox.claimed`), never from its words.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot import store
from bot.clock import as_utc
from bot.games.turns import PlayerSpec, create_game
from bot.models import Game, Outbox, Turn
from bot.testing import TestApp
from tests.bot.games.test_claims_property import _used
from tests.bot.gm_helpers import GM, Played, copy_of, cycle, gm_says, played_once, player_says
from tests.helpers import moving_clock, process_folder
from tests.settled import examples

PEOPLE = ("p0", "p1")
# What may happen before the seat asks ORDERS: the GM's moves and the players' mail.
MOVES = ("pause", "resume", "extend", "deadline", "plot", "plot_clear", "orders0", "orders1", "bad0", "clear0")


def _game(app: TestApp, grace_minutes: int, early: bool) -> None:
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="g1",
            players=[PlayerSpec(s, f"{s}@example.org", s.upper(), "UTC") for s in PEOPLE],
            robot_seats=("r0", "r1", "r2"),  # a race of five: two people and three robots
            gm_address=GM,
            deadline="48h",
            grace=f"{grace_minutes}m" if grace_minutes else "",
            early_resolution=early,
            seed=7,
        )
    app.service.send()


_started: dict[tuple[int, bool], Played] = {}  # (grace, early) -> `_game` played once in this process


def started(tmp_path: Path, grace_minutes: int, early: bool) -> TestApp:
    """A copy, in `tmp_path`, of the game `_game` makes (its first sheets sent), made once in
    this process for each grace and early resolution: each example plays on its own copy."""
    key = (grace_minutes, early)
    if key not in _started:
        made = process_folder("fm-timing-")
        _started[key] = played_once(made, lambda app: _game(app, grace_minutes, early))
    return copy_of(_started[key], tmp_path)


def _move(app: TestApp, move: str) -> None:
    def says(seat: str, text: str) -> None:
        player_says(app, seat, text, game="g1", address=f"{seat}@example.org")

    if move == "pause":
        gm_says(app, "PAUSE g1", game="g1")
    elif move == "resume":
        gm_says(app, "RESUME g1", game="g1")
    elif move == "extend":
        gm_says(app, "EXTEND g1 24h", game="g1")
    elif move == "deadline":
        gm_says(app, "DEADLINE g1 +30h", game="g1")
    elif move == "plot":
        gm_says(app, "PLOT g1 p0 USE 2", game="g1")
    elif move == "plot_clear":
        gm_says(app, "PLOT g1 p0 CLEAR", game="g1")
    elif move == "orders0":
        says("p0", "USE 3")
    elif move == "orders1":
        says("p1", "USE 1")
    elif move == "bad0":
        says("p0", "USE 12")
    elif move == "clear0":
        says("p0", "CLEAR")


def _last_claim(app: TestApp, seat: str) -> dict[str, object]:
    """The claim of the last letter to `seat` (its answer to ORDERS) about the open turn."""
    with app.db.read() as session:
        row = session.scalars(
            select(Outbox).where(Outbox.recipient == f"{seat}@example.org").order_by(Outbox.id.desc())
        ).first()
        assert row is not None and row.claimed, "the answer to ORDERS claims what counts and the deadline"
        return dict(row.claimed[-1])


def _turn(app: TestApp, number: int) -> Turn:
    """Turn `number` of the game."""
    with app.db.read() as session:
        game = store.find_game_row(session, "g1")
        assert game is not None
        return session.scalars(select(Turn).where(Turn.game_id == game.id, Turn.number == number)).one()


def _play(grace_minutes: int, early: bool, moves: list[str], minutes: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        app = started(Path(tmp), grace_minutes, early)
        try:
            for move in moves:
                _move(app, move)
            player_says(app, "p0", "ORDERS", game="g1", address="p0@example.org")
            claim = _last_claim(app, "p0")
            number = int(str(claim["turn"]))
            said_at = app.clock.now()
            with app.db.read() as session:
                status = session.scalar(select(Game.status).where(Game.name == "g1"))
            all_in = early and {m for m in moves if m.startswith("orders")} == {"orders0", "orders1"}
            moving_clock(app).advance(timedelta(minutes=minutes))
            cycle(app)
            turn = _turn(app, number)
            resolved = turn.resolved_at is not None
            listed = claim["counts"]
            assert isinstance(listed, list)
            counts = {str(c["seat"]): c for c in listed}
            if claim["paused"]:
                assert status == "paused"
                assert claim["deadline"] is None
                assert not resolved, "a turn told paused was resolved by the tick"
                return "paused"
            assert claim["deadline"] is not None, "a racecraft turn with a schedule has a deadline"
            closes = as_utc(datetime.fromisoformat(str(claim["deadline"]))) + timedelta(minutes=grace_minutes)
            now = as_utc(said_at) + timedelta(minutes=minutes)
            if now >= closes:
                assert resolved, ("the deadline told passed, the tick did not resolve", claim, minutes)
            elif resolved:
                assert all_in, ("resolved before the deadline told, and not every set in", claim, minutes)
            if resolved and "p0" in counts:
                used = _used(app, number)
                orders = "\n".join(sorted(str(counts["p0"]["orders"]).splitlines()))
                assert used["p0"] == (orders, str(counts["p0"]["why"])), (used["p0"], counts["p0"])
                return "resolved"
            return "open"
        finally:
            app.close()


def test_what_a_letter_says_of_the_deadline_and_the_default_is_what_the_tick_does() -> None:
    seen: list[str] = []

    @settings(max_examples=examples(6, 12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.sampled_from((0, 30, 120)),
        st.booleans(),
        st.lists(st.sampled_from(MOVES), max_size=4),
        st.integers(0, 80 * 60),
    )
    @example(0, True, ["orders0", "orders1"], 1)  # every set in: resolved early
    @example(30, False, ["plot"], 48 * 60 + 29)  # inside the grace: open, the plot to count
    @example(30, False, ["plot"], 48 * 60 + 30)  # at the deadline and grace: the plot counted
    @example(0, False, ["pause", "extend"], 80 * 60)  # paused: never resolved
    @example(120, True, ["deadline", "bad0", "orders1"], 31 * 60)
    def run(grace: int, early: bool, moves: list[str], minutes: int) -> None:
        seen.append(_play(grace, early, moves, minutes))

    run()
    assert {"paused", "resolved", "open"} <= set(seen), seen
