"""SpeedPhreakz: who submitted first (S16) and a race that stalls.

The seed's last tie-break: "if a tie persist then whoever has crashed the least then, whoever
submitted first". The shell gives `resolve` the order in which the seats' final sets of the
turn arrived (`submitted`); the rules keep it for the rounds those programs are for, so a
round's finishers are ranked by who sent *that round's* program first.

A race in which nobody can finish would run for ever (§5: "No round limit by default"):
after `STALL_ROUNDS` rounds without any car getting nearer the end, `Game.stall` tells the GM,
with the SET that gives the race a last round.
"""

from __future__ import annotations

import random

from rules.api import StateError
from rules.speedphreakz import GAME
from rules.speedphreakz.model import STALL_ROUNDS, CarStatus, Progress, Race
from rules.speedphreakz.resolve import arrivals_after
from tests.rules.speedphreakz.helpers import ScriptedRandom, arena, car, control, race

FINISH = [
    "#########",
    "#.......#",
    "#SSSSSSS#",
    "#.......#",
    "#.......#",
    "#########",
]


def _two_at_the_line() -> Race:
    """ann and bob one square behind the line, every checkpoint passed, equal in everything;
    their round 2 programs (queued, as after turn 1) hold position."""
    circuit = arena(FINISH, checkpoints=[[(7, 4)]])
    cars = [car("ann", (1, 3), "N", progress=Progress(0, 1)), car("bob", (5, 3), "N", progress=Progress(0, 1))]
    return race(cars, circuit, programs={"ann": "", "bob": ""})


def _turn(state: Race, texts: dict[str, str], submitted: tuple[str, ...], d100: int = 150) -> Race:
    orders = {player: GAME.parse_orders(state, player, text).orders for player, text in texts.items()}
    rng = ScriptedRandom([control(d100)])
    return GAME.resolve(state, orders, rng, submitted).state


def test_level_finishers_rank_by_who_submitted_that_rounds_program_first() -> None:
    """The seed: "... whoever has crashed the least then, whoever submitted first" (S16: "the
    time the seat's final set for that round arrived"). ann and bob cross together in round 3
    with the same control left and no crashes: bob sent his round 3 program first (turn 2), so
    bob wins, though ann sits first and sent her round 4 program first (turn 3)."""
    state = _turn(_two_at_the_line(), {"ann": "ROUND 3: F1", "bob": "ROUND 3: F1"}, ("bob", "ann"))
    assert state.arrival(3, "bob") < state.arrival(3, "ann")
    after = _turn(state, {"ann": "ROUND 4: F1", "bob": "ROUND 4: F1"}, ("ann", "bob"))
    assert after.finished and after.finish_order == ("bob", "ann")
    assert after.car("ann").finish_control == after.car("bob").finish_control and after.car("ann").crashes == 0


def test_without_a_submission_order_seating_order_stands_in() -> None:
    """S16, where the submission order is not known (a GM plot, the NMR default, a replay of a
    turn stored before it was kept): seating order. The same race as above, nothing given."""
    state = _turn(_two_at_the_line(), {"ann": "ROUND 3: F1", "bob": "ROUND 3: F1"}, ())
    after = _turn(state, {"ann": "ROUND 4: F1", "bob": "ROUND 4: F1"}, ())
    assert after.finish_order == ("ann", "bob")


def test_a_player_who_sent_nothing_counts_after_those_who_did() -> None:
    """The NMR default (or a GM plot) was not submitted: it counts after every set that was,
    in seating order. ann sent nothing for round 3 (her default is an empty program, here a
    GM plot of F1 stands for it); bob's mail arrived: bob first."""
    state = _turn(_two_at_the_line(), {"ann": "ROUND 3: F1", "bob": "ROUND 3: F1"}, ("bob",))
    assert [p for p in ("ann", "bob") if state.arrival(3, p) == 0] == ["bob"]
    after = _turn(state, {"ann": "ROUND 4: F1", "bob": "ROUND 4: F1"}, ("ann", "bob"))
    assert after.finish_order == ("bob", "ann")


def test_a_program_sent_again_after_a_crash_counts_from_when_it_was_sent_again() -> None:
    """S9: "your actions for the round are scrapped" and the crashed car sends that round
    again: its program for the round arrives with the turn it is sent again, after the
    programs the others sent a turn before."""
    state = _two_at_the_line()
    earlier = Race(state.circuit, state.options, state.cars, round=5, arrivals=((5, ("bob", "ann")),))
    allowed = {"ann": (6,), "bob": (5, 6)}  # bob crashed in round 4: he sends rounds 5 and 6 now
    assert arrivals_after(earlier, allowed, ("bob", "ann")) == ((5, ("ann", "bob")), (6, ("bob", "ann")))


def test_the_arrival_order_is_stored_with_the_state() -> None:
    """Replay is exact: the arrival order and the stall count travel in the state's JSON; a
    state stored before them loads with none (seating order, no stall yet)."""
    state = _turn(_two_at_the_line(), {"ann": "ROUND 3: F1", "bob": "ROUND 3: F1"}, ("bob", "ann"))
    data = GAME.dump_state(state)
    assert data["arrivals"] == [[3, ["bob", "ann"]]]
    assert GAME.load_state(data) == state
    old = {k: v for k, v in data.items() if k not in ("arrivals", "stalled")}
    assert GAME.load_state(old).arrivals == () and GAME.load_state(old).stalled == 0
    try:
        GAME.load_state({**data, "arrivals": [["x"]]})
    except StateError:
        pass
    else:
        raise AssertionError("a malformed arrival order must be refused")


# -- a stalled race ---------------------------------------------------------------------------


def _idle_race(players: list[str]) -> Race:
    state = GAME.new_game(players, {"map": "ring"}, random.Random(0))
    for turn in range(1, 3):
        state = GAME.resolve(state, {p: GAME.default_orders(state, p) for p in players}, random.Random(turn)).state
    return state


def test_the_gm_is_told_after_ten_rounds_in_which_nobody_got_nearer_the_finish() -> None:
    """§5: "No round limit by default: the race runs until a car finishes"; a field that holds
    its position (S14, the NMR default of every car) never finishes. After STALL_ROUNDS (10)
    rounds in a row in which no car passed a checkpoint or the line, or ended a round nearer
    its next checkpoint than before, `stall` says so (and again after 20, ...), naming the SET
    that makes the round open now the race's last."""
    players = ["ann", "bob"]
    state = GAME.new_game(players, {"map": "ring"}, random.Random(0))
    told: list[int] = []
    for turn in range(1, 2 * STALL_ROUNDS + 2):
        state = GAME.resolve(state, {p: GAME.default_orders(state, p) for p in players}, random.Random(turn)).state
        stall = GAME.stall(state)
        if stall is not None:
            told.append(state.round - 1)
            assert stall.turns == state.stalled and stall.figure == "max_rounds" and stall.value == str(state.round)
            assert "nearer" in stall.reason and f"round {state.round}" in stall.ends
    assert told == [STALL_ROUNDS, 2 * STALL_ROUNDS]


def test_a_car_getting_nearer_its_next_checkpoint_is_progress() -> None:
    """Progress is a car ending a round nearer its next checkpoint than it has ended one since
    it passed the last (or passing one): holding position is none, a move towards it resets
    the count, and driving back and forth over the same ground counts again."""
    state = _idle_race(["ann", "bob"])
    assert state.stalled == 2  # rounds 1 and 2: both cars held their start squares

    def turn(state: Race, ann: str) -> Race:
        orders = {"ann": GAME.parse_orders(state, "ann", ann).orders, "bob": GAME.default_orders(state, "bob")}
        return GAME.resolve(state, orders, random.Random(state.round)).state

    counts = []
    # from 1,5 facing N: VR to 2,4 is a square nearer checkpoint 1 (20 -> 19), RV back to 1,5,
    # VR again to 2,4 no nearer than before
    for program in ("ROUND 4: VR", "ROUND 5: RV", "ROUND 6: VR", "ROUND 7:", "ROUND 8:"):
        state = turn(state, program)
        counts.append(state.stalled)
    # rounds 3 (held), 4 (nearer), 5 (back), 6 (as near as before), 7 (held)
    assert counts == [3, 0, 1, 2, 3]


def test_setting_the_last_round_ends_a_stalled_race_classified() -> None:
    """The command the GM is given: SET <game> <seat> max_rounds <the round open now> (§5: "a
    max_rounds option may end it (classified by distance to the next checkpoint, then the
    tie-break of S16)"): the race ends when that round is resolved. A round already resolved,
    or past the option's range, is refused with the range."""
    state = _idle_race(["ann", "bob"])
    ended = GAME.set_figure(state, "bob", "max_rounds", str(state.round))
    assert ended.options.max_rounds == state.round and ended.cars == state.cars
    after = GAME.resolve(ended, {p: GAME.default_orders(ended, p) for p in ("ann", "bob")}, random.Random(5)).state
    assert after.finished and set(after.finish_order) == {"ann", "bob"}
    assert all(c.status is CarStatus.RACING for c in after.cars)
    for bad in (str(state.round - 1), "501", "x", "99999"):
        try:
            GAME.set_figure(state, "ann", "max_rounds", bad)
        except ValueError as error:
            assert f"from {state.round}" in str(error)
        else:
            raise AssertionError(f"max_rounds {bad} must be refused")
