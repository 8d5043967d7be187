"""Pits (§2.13, P28, seed 003 "Pitting Procedure") and the tyre rule (P4)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from rules.api import StateError
from rules.speed_circuit import GAME
from rules.speed_circuit.car import Car, Design, PitStage, PitStop, Status, Tyre
from rules.speed_circuit.model import RaceState, TyreRule
from rules.speed_circuit.plot import PitOrder, SpeedOrder, limits
from rules.speed_circuit.track import TrackError, load_track
from tests.rules.speed_circuit.helpers import TRACKS, car, race, scenario_track, texts, turn


def pit_of(racer: Car) -> PitStop:
    """The car's pit stop; the test fails if the car is not in the pits."""
    assert racer.pit is not None, f"{racer.player} is not in the pits"
    return racer.pit


TRACK = scenario_track("pit_test")
DESIGN = Design(prime=1, option=0)  # PRIME 12 wear, OPTION 9 wear over 3 laps


def pit_car(player: str, space: str | None = None, **fields: Any) -> Car:
    fields.setdefault("design", DESIGN)
    fields.setdefault("tyres_used", (Tyre.PRIME,))
    return car(player, space or "A1", TRACK, **fields)


def in_pits(
    player: str, stage: PitStage, row: int, arrival: int, *, speed: int = 40, lap: int = 1, **fields: Any
) -> Car:
    c = pit_car(player, speed=speed, lap=lap, **fields)
    progress = lap * TRACK.rows + row
    return replace(c, space=None, progress=progress, pit=PitStop(stage, progress, arrival, Tyre.OPTION, 1))


def test_a_pit_stop_from_entry_to_re_entry_with_the_crew_roll() -> None:
    """Seed: "Immediately after moving onto any space marked with a small red arrow, a car may
    choose to pit ... moved sideways, to the entrance lane, in the same row"; the turn after:
    reduce speed to the limit, move sideways into the pit lane, change tyres ("Discard any
    wear left ... gain new wear equal to the rating for that tire compound"), optionally roll
    on the Pit Crew table; "The second turn after entering the pits, you return to the track
    but do not otherwise move ... sideways to an empty space on the outside of the track"."""
    state = race(TRACK, [pit_car("ann", "B12", speed=60, wear=2)], laps=3)
    entry = turn(state, {"ann": "SPEED 60\nPIT OPTION"})
    ann = entry.state.car("ann")
    assert ann.space is None and ann.pit is not None and ann.pit.stage is PitStage.ENTRANCE
    assert ann.speed == 60 and "enters the pits from B15" in texts(entry.events)
    assert GAME.expected_players(entry.state) == frozenset({"ann"})
    # the turn after: slow to 40 (free: DEC 40), the pit lane, OPTION tyres, crew roll 2+3: +1 space
    stop = turn(entry.state, {"ann": "SPEED 40\nPUSH YES"}, 2, 3)
    ann = stop.state.car("ann")
    assert ann.pit is not None and ann.pit.stage is PitStage.LANE
    assert ann.tyres is Tyre.OPTION and ann.wear == DESIGN.tyre_wear(Tyre.OPTION, 3)
    assert ann.tyres_used == (Tyre.PRIME, Tyre.OPTION) and ann.ran_both_compounds()
    assert "rolls 5 on the pit crew table" in texts(stop.events)
    # the second turn after entry: back onto the outside of the track in the pit lane's row (16)
    out = turn(stop.state, {"ann": "SPEED 40"})
    ann = out.state.car("ann")
    assert ann.pit is None and ann.space == "C16" and ann.speed == 40 and ann.on_track


def test_pit_entry_only_from_an_arrow_space() -> None:
    """Seed: entry "immediately after moving onto any space marked with a small red arrow"."""
    state = race(TRACK, [pit_car("ann", "B10", speed=60)], laps=3)
    after = turn(state, {"ann": "SPEED 60\nPIT OPTION"})
    assert after.state.car("ann").space == "B13" and after.state.car("ann").pit is None


def test_a_car_that_spun_may_still_pit_from_an_arrow() -> None:
    """Seed: "If a car spins on the turn it also wishes to move to the pits, it may do so
    assuming it ended its turn on a red arrow space." (A deceleration chart spin: 80+ over.)"""
    state = race(TRACK, [pit_car("ann", "B13", speed=160, wear=9)], laps=3)
    after = turn(state, {"ann": "SPEED 40\nPIT PRIME"}, 1, 1)
    ann = after.state.car("ann")
    assert ann.pit is not None and ann.speed == 0 and ann.spun


def test_slowing_to_the_pit_limit_by_the_usual_means() -> None:
    """Seed "Speed Limit": "all cars must reduce speed to that limit by the usual means":
    from 120 with DEC 40, 40 is 40 over: 2 wear (PAY WEAR) before the tyres are changed."""
    state = race(TRACK, [in_pits("ann", PitStage.ENTRANCE, 15, 1, speed=120, wear=5)], laps=3)
    lim = limits(state.car("ann"), TRACK)
    assert lim.safe == 40 and lim.push is None
    after = turn(state, {"ann": "SPEED 40"})
    assert "uses 2 wear" in texts(after.events)
    assert after.state.car("ann").wear == DESIGN.tyre_wear(Tyre.OPTION, 3)


def test_a_spin_slowing_for_the_pits_stays_in_the_entrance_lane() -> None:
    """Seed: "If a car spins (on or off track) in the effort to reduce speed, the car is replot
    at 0 and not moved to the pit lane. It may move to the pit lane next turn."
    From 160 with DEC 40, 40 is 80 over: 3 wear, a brakes test and a spin."""
    state = race(TRACK, [in_pits("ann", PitStage.ENTRANCE, 15, 1, speed=160, wear=5)], laps=3)
    after = turn(state, {"ann": "SPEED 40"}, 1, 1)
    ann = after.state.car("ann")
    assert ann.pit is not None and ann.pit.stage is PitStage.ENTRANCE and ann.speed == 0
    nxt = turn(after.state, {"ann": "SPEED 20"})
    assert pit_of(nxt.state.car("ann")).stage is PitStage.LANE


def test_pit_cars_move_after_every_track_car() -> None:
    """P28: "Make sure that all cars on the track move before any cars from the pit lane move
    onto the track": bob reaches C16 first, so ann re-enters further inside."""
    cars = [in_pits("ann", PitStage.LANE, 16, 1), pit_car("bob", "C13", speed=60)]
    state = race(TRACK, cars, laps=3)
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 60"})
    assert after.state.car("bob").space == "C16"
    assert after.state.car("ann").space == "B16"


def test_two_cars_re_entering_from_one_pit_space() -> None:
    """Seed "Multiple Cars Reentering From One Space": "the car that got to that space first
    moves further inside on the track until there is room for all cars from that space";
    "If you run out of room in that row on track, the last cars ... are placed beside the
    outside edge of the track ... not considered to be off track"."""
    cars = [in_pits("ann", PitStage.LANE, 16, 5), in_pits("bob", PitStage.LANE, 16, 3)]
    state = race(TRACK, cars, laps=3)
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 40"})
    assert after.state.car("bob").space == "B16"  # bob got there first: further inside
    assert after.state.car("ann").space == "C16"
    crowded = race(TRACK, [*cars, pit_car("cat", "C16", speed=0)], laps=3)
    full = turn(crowded, {"ann": "SPEED 40", "bob": "SPEED 40", "cat": "SPEED 0"})
    assert full.state.car("bob").space == "A16" and full.state.car("ann").space == "B16"


def test_no_room_on_track_waits_beside_the_outside_edge() -> None:
    """Seed: the cars without room "are placed beside the outside edge of the track, adjacent
    to that row. These cars are not considered to be off track but all cars must end up on
    track by the end of the next turn"."""
    cars = [in_pits("ann", PitStage.LANE, 16, 5), in_pits("bob", PitStage.LANE, 16, 3)]
    cars += [pit_car("cat", "A16", speed=0), pit_car("dan", "B16", speed=0)]
    state = race(TRACK, cars, laps=3)
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 40", "cat": "SPEED 0", "dan": "SPEED 0"})
    bob, ann = after.state.car("bob"), after.state.car("ann")
    assert bob.space == "C16" and bob.on_track
    assert ann.off_track == 1 and ann.overflow and ann.space == "C16" and ann.wear == 9
    nxt = turn(after.state, {"ann": "SPEED 40", "bob": "SPEED 40", "cat": "SPEED 0", "dan": "SPEED 0"})
    assert nxt.state.car("ann").on_track  # it rejoins at once


def test_team_stacking() -> None:
    """Seed "If playing with teams": "If two teammates enter the pit entrance lane on the same
    turn ... The car that entered the pits furthest down the pit lane gets to proceed through
    this turn normally but the second car must wait ... Move the second car forward 3 spaces
    in the entrance lane"; "any bonus or penalty incurred on the pit crew table for the first
    car affects both cars"."""
    cars = [in_pits("ann", PitStage.ENTRANCE, 16, 1), in_pits("bob", PitStage.ENTRANCE, 15, 2)]
    state = race(TRACK, cars, laps=3, teams=(("ann", "bob"),))
    after = turn(state, {"ann": "SPEED 40\nPUSH YES", "bob": "SPEED 40"}, 1, 1)
    ann, bob = after.state.car("ann"), after.state.car("bob")
    assert pit_of(ann).stage is PitStage.LANE and pit_of(ann).progress == TRACK.rows + 17
    assert pit_of(bob).stage is PitStage.ENTRANCE and pit_of(bob).progress == TRACK.rows + 15 + 3 + 1
    alone = race(TRACK, cars, laps=3)
    assert pit_of(turn(alone, {"ann": "SPEED 40", "bob": "SPEED 40"}).state.car("bob")).stage is PitStage.LANE
    assert cars[1].pit is not None
    apart = [cars[0], replace(cars[1], pit=replace(cars[1].pit, entered=2))]  # entered on different turns
    both = turn(race(TRACK, apart, laps=3, teams=(("ann", "bob"),)), {"ann": "SPEED 40", "bob": "SPEED 40"}).state
    assert pit_of(both.car("bob")).stage is PitStage.LANE


def test_finishers_that_did_not_run_both_compounds_are_classified_last() -> None:
    """Seed "Pit Requirement": "All cars are required to use both sets of tires"; P4: such a
    finisher is classified after all compliant finishers (default) or disqualified."""
    one = car("ann", "B23", TRACK, speed=120, tyres_used=(Tyre.PRIME,))
    both = car("bob", "B20", TRACK, speed=120, tyres_used=(Tyre.PRIME, Tyre.OPTION))
    state = race(TRACK, [one, both], laps=1)
    after = turn(state, {"ann": "SPEED 120", "bob": "SPEED 120"}).state
    assert after.car("ann").status is Status.FINISHED and after.car("bob").status is Status.FINISHED
    assert GAME.standings(after) == (("bob",), ("ann",))
    strict = race(TRACK, [one, both], laps=1, tyre_rule=TyreRule.DISQUALIFY)
    final = turn(strict, {"ann": "SPEED 120", "bob": "SPEED 120"}).state
    assert final.car("ann").status is Status.OUT and "both tyre compounds" in final.car("ann").note
    assert GAME.standings(final)[0] == ("bob",)


def test_pit_lanes_are_validated() -> None:
    """§9: tracks are validated on load (a pit lane with entry arrows)."""
    text = (TRACKS / "pit_test.track").read_text(encoding="utf-8")
    with pytest.raises(TrackError, match="outside the pit rows"):
        load_track(text.replace("pit C 14 20 40", "pit C 17 20 40"))
    with pytest.raises(TrackError, match="no 'pit' statement"):
        load_track(text.replace("pit C 14 20 40", ""))
    with pytest.raises(TrackError, match="every space across an arrow row"):
        load_track(text.replace("15  .>  .>  .>", "15  .>  .   .>"))


def test_version_one_states_still_load() -> None:
    """storage.py: a version-1 state (before part 2) loads, the cars having run only the tyres
    they are on; unknown versions are refused."""
    state = GAME.new_game(["ann", "bob"], {"track": "harbour_loop"}, random.Random(0))
    state = GAME.resolve(state, {p: GAME.default_orders(state, p) for p in ("ann", "bob")}, random.Random(1)).state
    data = GAME.dump_state(state)
    old = {
        **data,
        "version": 1,
        "options": {
            k: v
            for k, v in data["options"].items()
            if k in ("track", "laps", "staggered_lane_change", "option_tyres_top_speed", "plot_default")
        },
    }
    old["cars"] = [
        {k: v for k, v in c.items() if k not in ("off_track", "overflow", "pit", "tyres_used")} for c in data["cars"]
    ]
    assert GAME.load_state(old) == state
    with pytest.raises(StateError):
        GAME.load_state({**data, "version": 3})


def test_safe_plot_makes_the_compulsory_stop_on_the_last_lap() -> None:
    """§8 / P4: the safe plot plans the compulsory pit stop in the last lap
    it can still be made: it holds back to end on a pit-entry arrow slowly enough to reach
    the pit limit by free braking, pits, changes to the compound not yet run, and rejoins."""

    state = race(TRACK, [pit_car("ann", "B10", speed=100)], laps=1)
    first = GAME.default_orders(state, "ann")
    assert isinstance(first[0], SpeedOrder) and first[0].mph == 80
    assert not any(isinstance(o, PitOrder) for o in first)
    seen_pit = False
    for _ in range(4):
        orders = GAME.default_orders(state, "ann")
        assert GAME.parse_orders(state, "ann", GAME.format_orders(orders)).ok
        seen_pit = seen_pit or any(isinstance(o, PitOrder) for o in orders)
        state = GAME.resolve(state, {"ann": orders}, random.Random(0)).state
    ann = state.car("ann")
    assert seen_pit and ann.ran_both_compounds() and ann.tyres is Tyre.OPTION and ann.on_track


def test_safe_plot_does_not_pit_a_compliant_car_or_before_the_last_lap() -> None:
    """§8 safe plot: no stop when both compounds were run, nor before the last lap."""

    done = race(TRACK, [pit_car("ann", "B12", speed=60, tyres_used=(Tyre.PRIME, Tyre.OPTION))], laps=1)
    assert not any(isinstance(o, PitOrder) for o in GAME.default_orders(done, "ann"))
    early = race(TRACK, [pit_car("ann", "B12", speed=60)], laps=2)
    assert not any(isinstance(o, PitOrder) for o in GAME.default_orders(early, "ann"))
    last = race(TRACK, [pit_car("ann", "B12", speed=60)], laps=1)
    assert any(isinstance(o, PitOrder) and o.tyre is Tyre.OPTION for o in GAME.default_orders(last, "ann"))


def test_pit_crew_penalty_costs_a_space() -> None:
    """Pit Crew Test Table: "10-12: -1 Space" (no skill bypass: P5), applied to the pit-lane
    position (P28); the car re-enters a row further back."""
    state = race(TRACK, [in_pits("ann", PitStage.ENTRANCE, 16, 1, skill=6)], laps=3)
    after = turn(state, {"ann": "SPEED 40\nPUSH YES\nSKILL ALL"}, 6, 6)
    assert pit_of(after.state.car("ann")).progress == TRACK.rows + 15
    assert after.state.car("ann").skill == 6
    out = turn(after.state, {"ann": "SPEED 40"})
    assert out.state.car("ann").space == "C15"


def test_a_car_from_the_pits_that_does_not_get_on_track_is_off_track() -> None:
    """Seed: "all cars must end up on track by the end of the next turn": a car left beside
    the track that cannot rejoin in that turn is off track (and pays for it, P22)."""
    from tests.rules.speed_circuit.helpers import car as plain

    blockers = [pit_car(n, f"C{r}", speed=0) for n, r in (("bob", 17), ("cat", 18))]
    waiting = replace(plain("ann", "C16", TRACK, speed=40, design=DESIGN), off_track=1, overflow=True)
    state = race(TRACK, [waiting, *blockers], laps=3)
    after = turn(state, {"ann": "SPEED 40", "bob": "SPEED 0", "cat": "SPEED 0"})
    ann = after.state.car("ann")
    assert ann.off_track == 1 and not ann.overflow and (ann.wear, ann.skill) == (8, 5)


def test_part_two_options() -> None:
    """§6 flags as game options: optional slip rules (P17), failed-pass charge (P20),
    off-track removal (P23), tyre rule (P4) and teams (pit stacking); bad values refused."""
    from rules.api import OptionError
    from rules.speed_circuit.model import OffTrackRemoval, parse_options

    o = parse_options(
        {
            "optional_slip": "yes",
            "failed_pass": "decel",
            "offtrack_removal": "neither",
            "tyre_rule": "disqualify",
            "teams": "ann+bob, cat+dan",
        }
    )
    assert o.optional_slip and o.failed_pass_decel and o.offtrack_removal is OffTrackRemoval.BOTH_MISSING
    assert o.tyre_rule is TyreRule.DISQUALIFY and o.teams == (("ann", "bob"), ("cat", "dan"))
    assert o.team_of("cat") == ("cat", "dan") and o.team_of("eve") == ("eve",)
    for bad in (
        {"optional_slip": "maybe"},
        {"failed_pass": "x"},
        {"tyre_rule": "x"},
        {"teams": "ann+ann"},
        {"teams": "ann+bob,bob+cat"},
    ):
        with pytest.raises(OptionError):
            parse_options(bad)
    with pytest.raises(OptionError, match="not a player"):
        GAME.new_game(["ann", "bob"], {"teams": "ann+zed"}, random.Random(0))


def test_re_entry_past_the_line_on_the_last_lap_finishes() -> None:
    """Seed: a crew result may move a car "forwards ... off of the pit lane ... pretend that
    the entrance and pit lanes can extend as needed"; P27: a car back on track at or beyond
    the line on its last lap has finished."""
    state = race(
        TRACK, [in_pits("ann", PitStage.LANE, TRACK.rows + 1, 1, tyres_used=(Tyre.PRIME, Tyre.OPTION))], laps=1
    )
    after = turn(state, {"ann": "SPEED 40"})
    assert after.state.car("ann").status is Status.FINISHED
    assert "crosses the finish line" in texts(after.events)


def _offered(state: RaceState, player: str) -> dict[str, str]:
    """The seat's one-tap orders, order text -> label."""
    return {order.text: order.label for order in GAME.one_line_orders(state, player)}


def test_one_tap_orders_in_the_entrance_lane_are_every_legal_speed_with_its_cost() -> None:
    """Seed "Speed Limit": "The turn after entering the pits, all cars must reduce speed to that
    limit by the usual means" -- so SPEED 0, 20 and 40 are legal there (the pit limit is 40),
    and each is offered in one tap with what slowing to it costs: from 120 with DEC 40, 40 is
    40 over (2 wear), 20 is 60 over (2 wear and a brakes test), 0 is 80 over ("Use 3 wear
    and test brakes and spin": the car stays in the entrance lane)."""
    state = race(TRACK, [in_pits("ann", PitStage.ENTRANCE, 15, 1, speed=120, wear=5)], laps=3)
    offered = _offered(state, "ann")
    assert [text for text in offered if "PUSH" not in text] == ["SPEED 0", "SPEED 20", "SPEED 40"]
    assert offered["SPEED 40"] == "40 mph: 2 wear (into the pit lane, new tyres)"
    assert offered["SPEED 20"] == "20 mph: 2 wear + brakes test (into the pit lane, new tyres)"
    assert offered["SPEED 0"] == "0 mph: spins (stays in the entrance lane)"
    for text in offered:
        parsed = GAME.parse_orders(state, "ann", text)
        assert parsed.ok and parsed.complete
    assert "uses 2 wear" in texts(turn(state, {"ann": "SPEED 40"}).events)  # as the label says


def test_one_tap_orders_in_the_pit_lane_take_the_car_back_onto_the_track() -> None:
    """Seed "Exiting the Pits": "The second turn after entering the pits, you return to the
    track"; up to the pit limit, as "Acceleration: You may only accelerate this turn if you have
    not yet reached the pit speed limit": SPEED 0, 20 and 40 from 40 are offered, each free."""
    state = race(TRACK, [in_pits("ann", PitStage.LANE, 16, 1, speed=40)], laps=3)
    offered = _offered(state, "ann")
    assert offered == {f"SPEED {n}": f"{n} mph: free (back onto the track)" for n in (0, 20, 40)}
    for text in offered:
        after = turn(state, {"ann": text})
        assert after.state.car("ann").on_track and "uses" not in texts(after.events)


def test_pushing_the_pit_crew_is_offered_in_one_tap_in_the_entrance_lane() -> None:
    """Seed "Tire Change": after the new tyres, "optionally roll on the Pit Crew table" (PUSH
    YES, the turn after entering). Each speed that gets the car into the pit lane is also
    offered with PUSH YES, labelled as pushing the pit crew, and that set rolls on the table;
    a speed that spins the car (it stays in the entrance lane, no tyres) is not."""
    state = race(TRACK, [in_pits("ann", PitStage.ENTRANCE, 15, 1, speed=120, wear=5)], laps=3)
    offered = _offered(state, "ann")
    pushed = {text: label for text, label in offered.items() if "PUSH YES" in text}
    assert list(pushed) == ["SPEED 20\nPUSH YES", "SPEED 40\nPUSH YES"]
    assert all("pushing the pit crew" in label and "pit crew table" in label for label in pushed.values())
    after = turn(state, {"ann": "SPEED 40\nPUSH YES"}, 1, 1)
    assert "pushing the pit crew" in texts(after.events)


def test_entering_the_pits_is_offered_in_one_tap_from_where_a_move_ends_on_an_arrow() -> None:
    """Seed: "Immediately after moving onto any space marked with a small red arrow, a car may
    choose to pit"; P4: each compound must be used. From B10 at 60 mph the arrows ahead are in
    reach at 100 and 120 mph: a set with PIT and the compound not run yet (OPTION) is offered
    for each, and sent, the free one takes the car into the entrance lane for those tyres."""
    state = race(TRACK, [pit_car("ann", "B10", speed=60)], laps=3)
    offered = _offered(state, "ann")
    into = {text: label for text, label in offered.items() if "PIT OPTION" in text}
    assert into and all("into the pits" in label and "OPTION tyres" in label for label in into.values())
    assert not any("PIT PRIME" in text for text in offered)
    assert [t.split("\n")[0] for t in into] == ["SPEED 100", "SPEED 120"]
    text = next(t for t in into if "PUSH" not in t)
    parsed = GAME.parse_orders(state, "ann", text)
    assert parsed.ok and parsed.complete
    ann = turn(state, {"ann": text}).state.car("ann")
    assert ann.pit is not None and ann.pit.stage is PitStage.ENTRANCE and ann.pit.tyre is Tyre.OPTION


def test_push_yes_leaving_the_pits_is_refused_with_the_reason() -> None:
    """Seed "Exiting the Pits": "The second turn after entering the pits, you return to the
    track but do not otherwise move" -- the pit crew roll belongs to the tyre change, the turn
    before; PUSH YES as the car leaves the pit lane would do nothing, so it is refused, saying
    when the crew is pushed, and the speed stands."""
    state = race(TRACK, [in_pits("ann", PitStage.LANE, 16, 1, speed=40)], laps=3)
    parsed = GAME.parse_orders(state, "ann", "SPEED 40\nPUSH YES")
    assert [p.line for p in parsed.problems] == ["PUSH YES"]
    assert "does nothing as you leave the pits" in parsed.problems[0].reason
    assert "entrance lane" in parsed.problems[0].reason
    assert parsed.complete and GAME.format_orders(parsed.orders) == "SPEED 40"
    entering = race(TRACK, [in_pits("ann", PitStage.ENTRANCE, 15, 1, speed=40)], laps=3)
    assert GAME.parse_orders(entering, "ann", "SPEED 40\nPUSH YES").ok
