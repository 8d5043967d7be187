"""Property: over random games (grace, early resolution, the GM's PLOT, PAUSE/RESUME, EXTEND and
DEADLINE, the players' orders) and random clocks, what the GM's digest says of the open turn --
who has orders on file and who is missing, what counts for each seat (its own set, the GM's
plot or the game's default), its deadline or that none runs (paused), whom it still waits for
before it resolves early -- is what the tick then does:

* waiting for seats (early resolution): once those seats, and only they, send a complete set,
  the next tick resolves the turn; claimed waiting for no one in particular (the deadline or
  the GM resolves it), every person's set arriving does not resolve it before its deadline;
* paused: the tick does not resolve the turn, whatever the clock;
* a deadline D: at D and the game's grace (the test's own figure) the tick has resolved the
  turn; before it, with no more mail, only a turn claimed waiting for no one is resolved;
* the turn resolved: each seat's orders used are the ones the digest's claim said would count,
  and why (own, plot, default): a seat listed as missing was defaulted or given the plot.

The claims are read from the digest's outbox row (`Outbox.claimed`, `bot.letters.claims.
of_outlook`), never from its words.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.clock import as_utc
from bot.gm import digest
from bot.models import Outbox
from bot.testing import TestApp
from tests.bot.games.test_claims_property import _used
from tests.bot.games.test_timing_property import MOVES, PEOPLE, _move, _turn, started_copy
from tests.bot.gm_helpers import GM, cycle, player_says
from tests.helpers import moving_clock
from tests.settled import examples


def _digest_claim(app: TestApp) -> dict[str, object]:
    """The claim of the GM's digest, just sent, about game g1's open turn."""
    assert digest.send_due_digests(app.shell, force=True) == 1
    app.service.send()
    with app.db.read() as session:
        row = session.scalars(
            select(Outbox).where(Outbox.recipient == GM, Outbox.kind == "digest").order_by(Outbox.id.desc())
        ).first()
        assert row is not None
        (claim,) = [c for c in row.claimed if c["game"] == "g1"]
        return dict(claim)


def _play(grace_minutes: int, early: bool, moves: list[str], minutes: int, send_waited: bool) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        app = started_copy(Path(tmp), grace_minutes, early)
        try:
            for move in moves:
                _move(app, move)
            claim = _digest_claim(app)
            number = int(str(claim["turn"]))
            listed = claim["counts"]
            assert isinstance(listed, list)
            counts = {str(c["seat"]): c for c in listed}
            assert set(PEOPLE) <= set(counts), "the digest claims what counts for every seat it lists"
            waits = claim["waits_for"]
            assert waits is None or isinstance(waits, list)
            if send_waited:
                # Those it waits for send a complete set (everyone, where it waits for no one).
                for seat in PEOPLE if waits is None else waits:
                    assert isinstance(seat, str) and seat in PEOPLE, ("a robot's orders are filed", waits)
                    player_says(app, seat, "USE 1", game="g1", address=f"{seat}@example.org")
                cycle(app)
                resolved = _turn(app, number).resolved_at is not None
                if waits is None:
                    assert not resolved, ("claimed to wait for no one's orders, resolved by them", claim)
                    return "held"
                assert resolved, ("the seats it waited for sent their sets, not resolved", claim)
                return "released"
            said_at = app.clock.now()
            moving_clock(app).advance(timedelta(minutes=minutes))
            cycle(app)
            resolved = _turn(app, number).resolved_at is not None
            if claim["paused"]:
                assert claim["deadline"] is None
                assert not resolved, "a turn the digest showed paused was resolved by the tick"
                return "paused"
            assert claim["deadline"] is not None, "a racecraft turn with a schedule has a deadline"
            closes = as_utc(datetime.fromisoformat(str(claim["deadline"]))) + timedelta(minutes=grace_minutes)
            if as_utc(said_at) + timedelta(minutes=minutes) >= closes:
                assert resolved, ("the deadline shown passed, the tick did not resolve", claim, minutes)
            elif resolved:
                assert waits == [], ("resolved before the deadline, with seats it waited for silent", claim)
            if not resolved:
                return "open"
            used = _used(app, number)
            for seat, count in counts.items():
                orders = "\n".join(sorted(str(count["orders"]).splitlines()))
                assert used[seat] == (orders, str(count["why"])), (seat, used[seat], count)
            return "resolved"
        finally:
            app.close()


def test_what_the_digest_says_of_an_open_turn_is_what_the_tick_does() -> None:
    seen: list[str] = []

    @settings(max_examples=examples(6, 12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.sampled_from((0, 30, 120)),
        st.booleans(),
        st.lists(st.sampled_from(MOVES), max_size=4),
        st.integers(0, 80 * 60),
        st.booleans(),
    )
    @example(0, True, ["orders0"], 1, True)  # early: waits for p1 alone; its set resolves the turn
    @example(0, False, ["orders0"], 1, True)  # early off: every set in, still open
    @example(30, False, ["plot"], 48 * 60 + 30, False)  # at the deadline and grace: the plot counted
    @example(0, True, ["pause", "extend"], 80 * 60, False)  # paused: never resolved
    @example(0, True, ["pause"], 1, True)  # paused: the sets do not resolve it
    @example(120, True, ["deadline", "bad0", "orders1"], 31 * 60, False)
    def run(grace: int, early: bool, moves: list[str], minutes: int, send_waited: bool) -> None:
        seen.append(_play(grace, early, moves, minutes, send_waited))

    run()
    assert {"paused", "resolved", "open", "held", "released"} <= set(seen), seen
