"""The shell's side of the rules on who submitted first, and a race that stalls.

* The order in which the seats' final orders of a turn arrived is worked out from the
  submissions (their last mail or GM ORDER, by the time it was received), given to the rules
  (`Game.resolve(..., submitted=)`) and stored with the turn (`turn.submitted`, migration
  0010), so that a replay hands the rules the very same order.
* A SpeedPhreakz race in which no car gets nearer the finish for ten rounds is reported to
  the GM, through `bot.letters` like all mail, with the command that ends it; that command,
  sent by the GM, ends the race.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import pytest

from bot.games.turns import create_game
from bot.ops.backup import replay_game
from bot.testing import TestApp
from rules import find_game
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    ADDRESS,
    GM,
    RACERS,
    START,
    bodies,
    cycle,
    gm_says,
    mails,
    player_says,
    turns,
)

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def test_the_order_the_seats_orders_arrived_is_stored_with_the_turn(rc: TestApp) -> None:
    """Each seat counts from its last order set on file (a later mail replaces the earlier);
    the GM's ORDER counts as the seat's; a seat that sent nothing (anna: the NMR default) is
    not listed (the rules put it after the others, in seating order)."""
    for seat, text in (("steve", "USE 1"), ("kelly", "USE 2"), ("roger", "USE 3")):
        player_says(rc, seat, text)
        rc.clock.advance(minutes=5)
    gm_says(rc, "ORDER rc1 seb USE 4")
    rc.clock.advance(minutes=5)
    player_says(rc, "kelly", "USE 0")
    rc.clock.set(START + timedelta(hours=49))
    cycle(rc)
    first = turns(rc)[0]
    assert first.resolved_at is not None
    assert first.submitted == ["steve", "roger", "seb", "kelly"]
    assert turns(rc)[1].submitted is None  # the open turn: worked out when it is resolved


def test_a_replay_hands_the_rules_the_stored_order(rc: TestApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """`flagman replay` resolves each turn with the submission order stored with it."""
    player_says(rc, "roger", "USE 3")
    rc.clock.advance(minutes=5)
    player_says(rc, "seb", "USE 1")
    rc.clock.set(START + timedelta(hours=49))
    cycle(rc)
    racecraft = find_game("racecraft")
    given: list[tuple[str, ...]] = []
    real = racecraft.resolve

    def spy(state: Any, orders: Mapping[str, Sequence[Any]], rng: Any, submitted: Sequence[str] = ()) -> Any:
        given.append(tuple(submitted))
        return real(state, orders, rng, submitted=submitted)

    monkeypatch.setattr(racecraft, "resolve", spy)
    with rc.db.read() as session:
        replayed = replay_game(session, "rc1")
    assert [r.same for r in replayed] == [True] and given == [("roger", "seb")]


def test_a_stalled_speedphreakz_race_is_reported_to_the_gm_with_the_command_that_ends_it(gapp: TestApp) -> None:
    """speedphreakz.md §5: "No round limit by default: the race runs until a car finishes"; a
    field that never moves (every car's NMR default holds its position, S14) would run for
    ever. After ten rounds in which no car got nearer the finish the GM is told, with the SET
    that makes the open round the last; sent, it ends the race when that round is resolved."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speedphreakz",
            name="sp1",
            players=RACERS[:3],
            gm_address=GM,
            deadline="48h",
            timezone="UTC",
            seed=3,
        )
    gapp.service.send()
    for turn in range(1, 12):
        gapp.clock.set(START + timedelta(hours=49 * turn))
        cycle(gapp)
        told = [m for m in mails(gapp, GM) if "stalled" in str(m["Subject"])]
        assert len(told) == (1 if turn >= 10 else 0), (turn, bodies(gapp, GM)[-2000:])
    notice = gm_helpers.body_of(told[0])
    assert "No car has got nearer the finish for 10 rounds" in notice
    assert "SET sp1 kelly max_rounds 11" in notice and "PROCESS sp1" in notice
    # testing.md: no line of the bot's own mail reads as an order or command when quoted
    assert not any(line.strip().startswith(("SET", "PROCESS")) for line in notice.splitlines())
    assert len(turns(gapp, "sp1")) == 12 and all(ADDRESS["kelly"] not in str(m["To"]) for m in told)
    gm_says(gapp, "SET sp1 kelly max_rounds 12", game="sp1")
    gapp.clock.set(START + timedelta(hours=49 * 12))
    cycle(gapp)
    with gapp.db.read() as session:
        from bot.store import find_game_row

        game = find_game_row(session, "sp1")
        assert game is not None and game.status == "finished"
    final = [m for m in mails(gapp, GM) if "sp1" in str(m["Subject"])][-1]
    assert "The race ends after round 12, the last round allowed" in gm_helpers.body_of(final)


def test_a_stopped_speed_circuit_car_is_reported_to_the_gm_and_retires(gapp: TestApp) -> None:
    """Speed Circuit with `plot_default=mps` (NOTES.md, "Stopped cars"): a silent car at 0 mph
    holds 0 mph. From its second race turn standing still the GM is told, naming that car and
    the SET that gets it moving (its own seat: the figure is the car's); after five turns
    standing it retires, so the race ends even when nobody ever orders."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speed_circuit",
            name="sc9",
            players=RACERS[:2],
            gm_address=GM,
            options={"laps": "1", "plot_default": "mps"},
            deadline="48h",
            timezone="UTC",
            seed=3,
        )
    gapp.service.send()
    told_at = []
    for turn in range(1, 9):
        gapp.clock.set(START + timedelta(hours=49 * turn))
        cycle(gapp)
        told_at.append(len([m for m in mails(gapp, GM) if "stalled" in str(m["Subject"])]))
    # turns 1-2 are the set-up; race turns 3.. stand still; told from the 2nd standing on
    assert told_at == [0, 0, 0, 1, 2, 3, 3, 3], told_at
    notice = gm_helpers.body_of([m for m in mails(gapp, GM) if "stalled" in str(m["Subject"])][0])
    assert "has not moved for 2 turns in a row" in notice and "SET sc9 kelly speed 20" in notice
    assert "any seat" not in notice
    assert not any(line.strip().startswith(("SET", "PROCESS")) for line in notice.splitlines())
    with gapp.db.read() as session:
        from bot.store import find_game_row

        game = find_game_row(session, "sc9")
        assert game is not None and game.status == "finished"
