"""Forced passing (§2.10, P20, P21) and off-track movement (P22, P23), with the seed's text."""

from __future__ import annotations

from typing import Unpack

from rules.speed_circuit import GAME
from rules.speed_circuit.car import Car, LineRun, Status
from rules.speed_circuit.model import OffTrackRemoval, RaceState
from rules.speed_circuit.plot import limits
from tests.rules.speed_circuit.helpers import CarFields, car, race, scenario_track, texts, turn

TRACK = scenario_track("corner_test")


def walled(*rows: int, ann_space: str = "B10", ann_speed: int = 80, **ann: Unpack[CarFields]) -> list[Car]:
    """ann behind a wall of parked cars filling every lane of `rows`."""
    names = iter(("bob", "cat", "dan", "eve", "fay", "gus"))
    cars = [car("ann", ann_space, TRACK, speed=ann_speed, **ann)]
    for row in rows:
        for lane in "ABC":
            cars.append(car(next(names), f"{lane}{row}", TRACK, speed=0))
    return cars


def parked(state: RaceState) -> dict[str, str]:
    return {c.player: "SPEED 0" for c in state.cars if c.player != "ann"}


def test_no_forced_pass_without_pass_yes() -> None:
    """§8: PASS YES "may attempt forced passes (default NO: brake instead)"."""
    state = race(TRACK, walled(11))
    after = turn(state, {**parked(state), "ann": "SPEED 80"}, 1, 1)  # the brakes test of the emergency braking
    assert after.state.car("ann").space == "B10"
    assert "emergency brakes to 0" in texts(after.events)
    assert "passing table" not in texts(after.events)


def test_successful_forced_pass_continues_the_move() -> None:
    """Seed "Forced Passing": "If the passer succeeds on the passing table, the passer can
    continue its move." Passing table 2-5: successful pass."""
    state = race(TRACK, walled(11))
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES"}, 2, 3)
    ann = after.state.car("ann")
    assert ann.space == "B14" and ann.speed == 80
    assert "rolls 5 on the passing table" in texts(after.events)
    assert after.state.car("cat").space == "B11"  # the passee stays


def test_a_pass_needs_room_to_end_beyond_on_an_empty_space() -> None:
    """Seed: "A forced pass can only be attempted if the moving car has enough speed to move
    beyond the occupied space and end its move on an empty space." Two full rows ahead and
    two spaces of movement: no pass, emergency braking."""
    state = race(TRACK, walled(11, 12, ann_speed=40))
    after = turn(state, {**parked(state), "ann": "SPEED 40\nPASS YES"})
    assert "passing table" not in texts(after.events)
    assert after.state.car("ann").space == "B10" and after.state.car("ann").speed == 0


def test_failed_pass_stops_before_the_blocker_at_the_speed_it_used() -> None:
    """Seed: "If the passer fails, that driver must stop in the space moved through prior to
    the attempted forced pass and modify their speed accordingly"; P20: speed = 20 x spaces
    moved, no deceleration charge. 6-9: unsuccessful pass."""
    state = race(TRACK, walled(12, ann_space="B9"))
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES"}, 3, 4)
    ann = after.state.car("ann")
    assert ann.space == "B11" and ann.speed == 40 and ann.wear == 9
    assert "unsuccessful pass" in texts(after.events)


def test_failed_pass_charged_on_the_deceleration_chart_as_an_option() -> None:
    """P20 alternative (failed_pass=decel): the failed pass is charged on the deceleration
    chart like emergency braking (P14: every mph braked away): 80 -> 40 is 40 over, 2 wear."""
    state = race(TRACK, walled(12, ann_space="B9"), failed_pass_decel=True)
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES"}, 3, 4)
    ann = after.state.car("ann")
    assert ann.space == "B11" and ann.speed == 40 and ann.wear == 7


def test_contact_costs_passer_and_passee_two_wear() -> None:
    """Passing table 10-12: "Unsuccessful pass with contact: passer and passee both lose 2 wear"."""
    state = race(TRACK, walled(11))
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES"}, 5, 6)
    assert after.state.car("ann").wear == 7 and after.state.car("cat").wear == 7
    assert after.state.car("ann").space == "B10"


def test_each_earlier_pass_adds_two_and_a_skill_chip() -> None:
    """Seed: "If a successful pass results in another legal pass attempt, the passer receives
    a +2 penalty to the passing table for the subsequent pass"; P5: 2 chips, +1 per earlier
    pass. Two passes bypassed with skill cost 2 + 3 chips."""
    state = race(TRACK, walled(11, 12, skill=6))
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES\nSKILL PASS"})
    ann = after.state.car("ann")
    assert ann.space == "B14" and ann.skill == 1
    rolled = race(TRACK, walled(11, 12))
    again = turn(rolled, {**parked(rolled), "ann": "SPEED 80\nPASS YES"}, 1, 2, 1, 2)
    assert "rolls 3+2 = 5 on the passing table" in texts(again.events)
    assert again.state.car("ann").space == "B14"


def test_failed_chained_pass_sends_the_car_off_track_at_half_speed() -> None:
    """Seed: "If a passing car's failure on the passing table places the car in a row that is
    blocked, the passing car is moved off track"; P21: on the nearest side, random if
    equidistant; P22: "replots at half their current speed (round down)", spaces =
    floor(S/40), the rest of that movement off track."""
    state = race(TRACK, walled(11, 12))
    # pass 1 succeeds (3), pass 2 fails (4+2); B is the middle lane: a d2 picks the side (2: far)
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES"}, 1, 2, 2, 2, 2)
    ann = after.state.car("ann")
    assert ann.off_track == 1 and ann.space == "C12" and ann.speed == 40
    assert after.state.car("cat").space == "B11"
    # the end of the turn off track: 1 wear and 1 skill lost (P22)
    assert (ann.wear, ann.skill) == (8, 5)
    assert "off track" in texts(after.events)


def test_off_track_nearest_side_without_a_roll() -> None:
    """P21: the nearest side; lane A is nearest the lane A side (no roll needed)."""
    state = race(TRACK, walled(11, 12, ann_space="A10"))
    after = turn(state, {**parked(state), "ann": "SPEED 80\nPASS YES\nLANE A"}, 1, 2, 2, 2)
    ann = after.state.car("ann")
    assert ann.off_track == -1 and ann.space == "A12"


def test_off_track_cars_lose_every_tie() -> None:
    """Seed: "Off track cars always lose order of movement tie breakers" (P6)."""
    state = race(TRACK, [car("ann", "C12", TRACK, speed=60, off_track=1), car("bob", "A12", TRACK, speed=40)])
    after = turn(state, {"ann": "SPEED 60", "bob": "SPEED 40"})
    assert next(e.players for e in after.events if e.kind == "order") == ("bob", "ann")


def test_off_track_car_rejoins_the_track() -> None:
    """Seed: "Off track cars move as if there are spaces just off the side of the track."
    [DES] it rejoins at the first free space it can enter without a cornering payment."""
    state = race(TRACK, [car("ann", "C12", TRACK, speed=40, off_track=1)])
    after = turn(state, {"ann": "SPEED 60"})
    ann = after.state.car("ann")
    assert ann.off_track == 0 and ann.space == "C15"
    assert (ann.wear, ann.skill) == (9, 6)  # back on track at the end of the turn: no loss


def test_off_track_speed_limits() -> None:
    """Seed: "Off track cars may not exceed acceleration, top speed, or the corner speed of
    the spaces immediately next to them on the track" (and P22: no wear or tables to do so)."""
    beside_corner = car("ann", "C3", TRACK, speed=80, off_track=1)
    lim = limits(beside_corner, TRACK)
    assert lim.safe == 60 and lim.push is None  # the 60 mph corner is 3 spaces on
    straight = car("ann", "C12", TRACK, speed=80, off_track=1)
    assert limits(straight, TRACK).safe == 120 and limits(straight, TRACK).push is None


def test_stuck_in_the_kitty_litter() -> None:
    """Seed: "At the end of every turn in which a car is off track, that driver loses 1 wear
    and 1 skill chip. If the driver can not pay either penalty the car is removed from the
    race (stuck in the kitty-litter)." P23: out of wear *or* out of skill removes it."""
    blockers = [car(n, f"C{r}", TRACK, speed=0) for n, r in (("bob", 13), ("cat", 14))]
    state = race(TRACK, [car("ann", "C12", TRACK, speed=40, off_track=1, skill=0, wear=5), *blockers])
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 0", "cat": "SPEED 0"})
    ann = after.state.car("ann")
    assert ann.status is Status.OUT and ann.note == "stuck in the kitty-litter"
    assert "kitty-litter" in texts(after.events)


def test_kitty_litter_only_when_neither_can_be_paid_as_an_option() -> None:
    """P23 alternative (offtrack_removal=neither): removed only when it can pay neither."""
    blockers = [car(n, f"C{r}", TRACK, speed=0) for n, r in (("bob", 13), ("cat", 14))]
    cars = [car("ann", "C12", TRACK, speed=40, off_track=1, skill=0, wear=5), *blockers]
    state = race(TRACK, cars, offtrack_removal=OffTrackRemoval.BOTH_MISSING)
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 0", "cat": "SPEED 0"})
    ann = after.state.car("ann")
    assert ann.status is Status.RACING and ann.off_track == 1 and ann.wear == 4 and ann.skill == 0


def test_no_racing_line_while_passing() -> None:
    """Seed: "Cars that attempt a forced pass may not use a racing line" (P11): on the T1
    line (+20) 80 in the 60 corner is free; forcing a pass into it costs the +20 (1 wear)."""
    cars = [car("ann", "A5", TRACK, speed=80, line_run=LineRun("T1", 0))]
    cars += [car(n, f"{lane}6", TRACK, speed=0) for n, lane in (("bob", "A"), ("cat", "B"), ("dan", "C"))]
    state = race(TRACK, cars)
    after = turn(state, {"ann": "SPEED 80\nPASS YES\nLINE", "bob": "SPEED 0", "cat": "SPEED 0", "dan": "SPEED 0"}, 1, 1)
    ann = after.state.car("ann")
    assert ann.space == "A9" and ann.wear == 8
    on_line = race(TRACK, [car("ann", "A5", TRACK, speed=80, line_run=LineRun("T1", 0))])
    assert turn(on_line, {"ann": "SPEED 80\nLINE"}).state.car("ann").wear == 9


def test_a_finisher_off_track_is_last_of_that_turn() -> None:
    """Seed "Race Finish": "Any car that finishes the race off track or in a spin, finishes
    last of the cars that also finished the race this turn" (P27)."""
    # ann, off track, ends 1 row past the line (the edge spaces ahead are taken, so she
    # cannot rejoin); bob ends on the line, 0 rows past: more rows past would put ann first
    cars = [car("ann", "C23", TRACK, lap=2, speed=40, off_track=1), car("bob", "B23", TRACK, lap=2, speed=20)]
    cars += [car("cat", "C24", TRACK, lap=1, speed=0), car("dan", "C1", TRACK, lap=2, speed=0)]
    state = race(TRACK, cars, laps=2)
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 20", "cat": "SPEED 0", "dan": "SPEED 0"}).state
    assert after.car("ann").status is Status.FINISHED and after.car("bob").status is Status.FINISHED
    ann_key, bob_key = after.car("ann").finish_key, after.car("bob").finish_key
    assert ann_key is not None and bob_key is not None
    assert ann_key[2] == -1 and bob_key[2] == 0
    assert [g[0] for g in GAME.standings(after)][:2] == ["bob", "ann"]


def test_off_track_after_half_the_movement_already_used_stops() -> None:
    """P22: "The total movement this turn becomes that many spaces; if already reached, it
    stops": at 60, half is 20 (1 space), and the car had already moved 1 when its second
    pass failed."""
    state = race(TRACK, walled(11, 12, ann_speed=60))
    after = turn(state, {**parked(state), "ann": "SPEED 60\nPASS YES"}, 1, 2, 2, 2, 1)
    ann = after.state.car("ann")
    assert ann.off_track == -1 and ann.space == "A11" and ann.speed == 20
