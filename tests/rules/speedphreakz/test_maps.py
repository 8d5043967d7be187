"""SpeedPhreakz maps (§4.7, S3): the bundled maps, the validator and its messages, the route
check that proves a map can be raced."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from rules.speedphreakz import GAME
from rules.speedphreakz.data import (
    MapError,
    Route,
    bundled_map,
    chart,
    circuit_from_json,
    circuit_to_json,
    map_names,
    route_problem,
    shortest_route,
)
from rules.speedphreakz.model import Circuit
from tests.rules.speedphreakz.helpers import SteadyRandom

GOOD: dict[str, Any] = {
    "name": "Test Loop",
    "grid": [
        "#########",
        "#.......#",
        "#.#####.#",
        "#S#####.#",
        "#.......#",
        "#########",
    ],
    "start_squares": [[1, 3]],
    "finish_line": {"cells": [[1, 3]], "direction": "N"},
    "checkpoints": [{"cells": [[7, 2]]}, {"cells": [[4, 4]]}],
    "laps": 1,
}


def changed(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    data.update(changes)
    return data


def problems(data: dict[str, Any], *, check_route: bool = False) -> tuple[str, ...]:
    with pytest.raises(MapError) as caught:
        circuit_from_json(data, check_route=check_route)
    return caught.value.problems


def test_two_original_maps_are_bundled() -> None:
    """ "two original maps (one simple ring, one with oil, gravel, grass and a chicane)"."""
    assert set(map_names()) >= {"ring", "chicane"}
    chicane = "".join(bundled_map("chicane").grid)
    assert all(char in chicane for char in "o:,#")


@pytest.mark.parametrize("name", map_names())
def test_every_bundled_map_is_valid_and_can_be_completed(name: str) -> None:
    """S3 / §4.7: each bundled map validates, and a breadth-first search over the chart's
    actions (never two turns in a row) reaches every checkpoint in order and crosses the
    line in its direction, for every lap, from every start square."""
    circuit = bundled_map(name)
    assert route_problem(circuit, chart()) is None
    assert circuit_from_json(circuit_to_json(circuit), check_route=True) == circuit


def test_a_map_round_trips_through_json() -> None:
    circuit = circuit_from_json(GOOD)
    assert circuit_from_json(circuit_to_json(circuit)) == circuit


def test_the_small_loop_can_be_completed() -> None:
    assert route_problem(circuit_from_json(GOOD), chart()) is None


def test_rows_must_have_the_same_width() -> None:
    grid = [*GOOD["grid"][:2], "#.#####.", *GOOD["grid"][3:]]
    assert "row 2 is 8 squares wide; row 0 is 9: all rows must be the same width" in problems(changed(grid=grid))


def test_a_map_must_fit_in_a_mail() -> None:
    grid = ["#" * 100, "#S" + "." * 97 + "#", "#" * 100]
    data = changed(
        grid=grid,
        start_squares=[[1, 1]],
        finish_line={"cells": [[1, 1]], "direction": "E"},
        checkpoints=[{"cells": [[50, 1]]}],
    )
    assert problems(data) == ("the map is 100 x 3 squares; at most 99 x 99 fit in a results mail",)


def test_unknown_terrain_characters_are_named() -> None:
    grid = [*GOOD["grid"][:1], "#..X....#", *GOOD["grid"][2:]]
    assert any(p.startswith("square 3,1: unknown terrain character 'X'") for p in problems(changed(grid=grid)))


def test_start_squares_must_be_on_the_start_line() -> None:
    found = problems(changed(start_squares=[[1, 1], [0, 0], [40, 2]]))
    assert "start square 1,1 is not on the start line (an 'S' square)" in found
    assert "start square 0,0 is solid" in found
    assert "start square 40,2 is off the map" in found


def test_finish_cells_must_not_be_solid_and_must_cover_every_s() -> None:
    found = problems(changed(finish_line={"cells": [[2, 3]], "direction": "N"}))
    assert "finish line cell 2,3 is solid" in found
    assert "'S' square 1,3 is not listed in the finish line cells" in found


def test_the_finish_direction_must_be_a_heading() -> None:
    found = problems(changed(finish_line={"cells": [[1, 3]], "direction": "UP"}))
    assert any("finish line direction: unknown heading 'UP'" in p for p in found)


def test_checkpoints_must_be_open_and_apart() -> None:
    found = problems(changed(checkpoints=[{"cells": [[1, 3]]}, {"cells": [[2, 2]]}, {"cells": []}]))
    assert "checkpoint 1 cell 1,3 is also on the finish line" in found
    assert "checkpoint 2 cell 2,2 is solid" in found
    assert "checkpoint 3 cells must be a non-empty list of [x, y] pairs" in found


def test_laps_and_name_are_checked() -> None:
    found = problems(changed(laps=0, name=""))
    assert '"laps" must be a whole number from 1 to 20, not 0' in found
    assert 'the map needs a "name"' in found


def test_every_problem_is_reported_at_once() -> None:
    grid = [*GOOD["grid"][:1], "#..X....#", *GOOD["grid"][2:]]
    assert len(problems(changed(grid=grid, laps=0, start_squares=[[1, 1]]))) == 3


def test_an_unreachable_checkpoint_is_reported() -> None:
    """ "checkpoints reachable": a checkpoint walled off cannot be raced to."""
    grid = [
        "#########",
        "#....#..#",
        "#.####..#",
        "#S#######",
        "#.......#",
        "#########",
    ]
    data = changed(grid=grid, checkpoints=[{"cells": [[7, 1]]}])
    found = problems(data, check_route=True)
    assert found == ("from start square 1,3 no car can reach checkpoint 1 on lap 1",)


def test_a_line_that_cannot_be_crossed_in_its_direction_is_reported() -> None:
    """§4.7: the line counts only when entered with a positive component in its direction;
    here the only way onto it is from the north."""
    grid = [
        "#########",
        "#.......#",
        "#.#####.#",
        "#S#####.#",
        "###.....#",
        "#########",
    ]
    data = changed(grid=grid, checkpoints=[{"cells": [[7, 2]]}], finish_line={"cells": [[1, 3]], "direction": "N"})
    assert problems(data, check_route=True) == (
        "from start square 1,3 no car can cross the finish line going N on lap 1",
    )


def programs_for(circuit: Circuit, route: Route, budget: int) -> list[tuple[str, ...]]:
    """Cut a route into programs of at most `budget` control each (terrain surcharges
    included), never opening a round with a turn (§4.2)."""
    costs = []
    square, heading = route.start, route.heading
    for code in route.actions:
        action = chart()[code]
        cost = action.cost
        for _ in range(action.squares):
            square = square.step(heading.turned(action.step))
            cost += circuit.terrain(square).surcharge
        heading = heading.turned(action.turn)
        costs.append(cost)
    rounds: list[list[tuple[str, int]]] = [[]]
    for code, cost in zip(route.actions, costs, strict=True):
        current = rounds[-1]
        if current and sum(c for _, c in current) + cost > budget:
            carried = [current.pop()] if chart()[code].is_turn else []
            rounds.append(carried)
        rounds[-1].append((code, cost))
    return [tuple(code for code, _ in r) for r in rounds]


@pytest.mark.parametrize("name", map_names())
def test_every_bundled_map_can_be_won_through_the_engine(name: str) -> None:
    """§4.7 "both completable", through the game itself: ann drives the shortest route
    round by round (control 200, every d10 "As ordered") and wins; bob holds on the grid."""
    circuit = bundled_map(name)
    route = shortest_route(circuit, chart(), circuit.start_squares[0])
    assert route is not None
    plan = programs_for(circuit, route, budget=200)
    state = GAME.new_game(["ann", "bob"], {"map": name}, random.Random(0))
    sent = {
        "ann": f"START {route.start} FACING {route.heading.value}\n"
        + "\n".join(f"ROUND {n}: {' '.join(p)}" for n, p in enumerate(plan[:2], start=1)),
        "bob": f"START {circuit.start_squares[-1]} FACING N\nROUND 1:\nROUND 2:",
    }
    crashes = 0
    for turn in range(1, len(plan) + 2):
        if GAME.is_finished(state):
            break
        orders = {}
        for player in ("ann", "bob"):
            parsed = GAME.parse_orders(state, player, sent[player])
            assert parsed.ok, parsed.problems
            orders[player] = parsed.orders
        resolution = GAME.resolve(state, orders, SteadyRandom())
        crashes += sum(1 for e in resolution.events if e.kind == "crash")
        state = resolution.state
        later = plan[turn + 1] if turn + 1 < len(plan) else ()
        sent = {"ann": f"ROUND {turn + 2}: {' '.join(later)}", "bob": f"ROUND {turn + 2}:"}
    assert crashes == 0
    assert state.finished and state.finish_order == ("ann",)
    assert state.round - 1 == len(plan)
