"""Tracks as data (speed-circuit.md §2.2, §2.16, §9): the bundled tracks, the validator, the
geometry of moves and the renderings."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from rules.speed_circuit.track import (
    TrackError,
    bundled_tracks,
    load_track,
    render_svg,
    render_text,
)
from tests.rules.speed_circuit.helpers import bundled, scenario_track

BUNDLED = ("harbour_loop", "quarry_ring")


def test_two_original_tracks_are_bundled() -> None:
    """§9: the engine ships at least two original tracks of its own."""
    assert set(BUNDLED) <= set(bundled_tracks())


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_track_is_of_realistic_size(name: str) -> None:
    """§2.2 / SRC 17: about 75 spaces a lap, 2 or 3 wide, several corners of different speeds."""
    track = bundled(name)
    assert 60 <= track.rows <= 90
    widths = {track.width(r) for r in range(1, track.rows + 1)}
    assert widths == {2, 3}
    corners = track.corners()
    assert len(corners) >= 4
    speeds = {s.speed for s in track.spaces.values() if s.speed is not None}
    assert len(speeds) >= 3
    assert len(track.grid) >= 9


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_track_has_a_changing_radius_corner_and_staggered_spaces(name: str) -> None:
    """Seed 003 "Changing Radius Corners" and "Definition of a Row": one corner with different
    limits in different rows; long outside spaces whose front edges are staggered."""
    track = bundled(name)
    radius = [c for c in track.corners() if len({s.speed for s in track.corner_spaces(c)}) > 1]
    assert radius
    assert any(s.row - s.back_row > 1 for s in track.spaces.values())


@pytest.mark.parametrize("name", BUNDLED)
def test_every_space_of_a_bundled_track_is_reachable_and_has_a_way_on(name: str) -> None:
    """§9: validated on load: every space reachable from the grid, every space has a move on."""
    track = bundled(name)
    for space_id in track.spaces:
        assert track.moves(space_id)


def test_straight_and_diagonal_moves_follow_the_row_edges() -> None:
    """§2.16: straight when t.back_row == s.row in the same lane; diagonal to an adjacent lane
    when the rows align; the finish line wraps row L to row 1."""
    track = scenario_track("corner_test")
    assert track.moves("B3") == ("B4", "A4", "C4")
    assert track.moves("A3") == ("A4", "B4")
    assert track.moves("C24") == ("C1", "B1")


def test_diagonal_across_staggered_rows_needs_the_optional_rule() -> None:
    """P32 / seed 003 "Optional Lane Change Rules": across staggered rows a diagonal is allowed
    only with the option, and only if the target's back edge is not ahead of the front edge
    being left."""
    track = scenario_track("radius_test")
    # C22 is a long space (back edge 20): from B21 the rows do not line up
    assert "C22" not in track.moves("B21")
    assert "C22" in track.moves("B21", staggered=True)
    assert "C22" in track.moves("B20")
    # never a move whose target starts ahead of the space being left
    for sid in track.spaces:
        here = track.space(sid)
        for target in track.moves(sid, staggered=True):
            t = track.space(target)
            assert t.back_row <= here.row % track.rows


def test_last_space_of_a_corner_is_known_per_lane() -> None:
    """Seed 003: "A car may accelerate from the last marked space of a corner"."""
    track = scenario_track("corner_test")
    assert track.is_last_of_corner("A8") and track.is_last_of_corner("C8")
    assert not track.is_last_of_corner("A7")
    assert not track.is_last_of_corner("A9")


BAD = {
    "continuation without a space above": ("1 | . .", "continues a space but the lane has none above"),
    "posted speed without a corner": ("1 . 60 .", "a posted speed needs the row's corner=ID"),
    "speed not a multiple of 20": ("1 . 70 . corner=T1", "is not '.', '|', 'x' or a posted speed"),
    "unknown note": ("1 . . . colour=red", "unknown note"),
}


def _track_text(first_row: str, extra: str = "") -> str:
    rows = [first_row] + [f"{r} . . ." for r in range(2, 11)]
    return "name Bad\nlaps 1\n" + "\n".join(rows) + "\ngrid A10 B10 C10\n" + extra


@pytest.mark.parametrize("case", sorted(BAD))
def test_validator_names_each_fault(case: str) -> None:
    """§9: tracks are validated on load, with messages a GM can act on."""
    row, message = BAD[case]
    with pytest.raises(TrackError) as error:
        load_track(_track_text(row))
    assert any(message in p for p in error.value.problems), error.value.problems


def test_validator_refuses_a_racing_line_that_is_not_a_chain_of_moves() -> None:
    """§9: "corners and lines well formed": each step of a line is a legal forward move."""
    text = _track_text("1 . . .").replace("2 . . .", "2 60 60 60 corner=T1")
    with pytest.raises(TrackError) as error:
        load_track(text + "line L T1 +20 A1 C2\n")
    assert any("A1 -> C2 is not a legal move" in p for p in error.value.problems)


def test_validator_refuses_unreachable_spaces_and_dead_ends() -> None:
    """§9: every space reachable; a lane that ends with nowhere to go is a fault."""
    text = "name Bad\nlaps 1\n" + "\n".join(f"{r} . x x" for r in range(1, 11)) + "\n11 x x .\ngrid A10 A9\n"
    with pytest.raises(TrackError) as error:
        load_track(text)
    joined = "\n".join(error.value.problems)
    assert "could not move on" in joined


def test_validator_reports_every_problem_at_once() -> None:
    """One error lists all the faults, so a GM fixes the file in one go."""
    text = "name Bad\nlaps 99\n1 . . .\n3 . . .\nwat\n"
    with pytest.raises(TrackError) as error:
        load_track(text)
    assert len(error.value.problems) >= 4


def test_text_rendering_shows_cars_speeds_and_the_finish_line() -> None:
    """A results mail shows the track with the cars on it (§9), as text."""
    track = scenario_track("corner_test")
    text = render_text(track, {"B6": "roger", "A24": "kelly"})
    lines = text.splitlines()
    assert "[roger]" in next(line for line in lines if line.split()[0] == "6")
    assert "60" in next(line for line in lines if line.split()[0] == "7")
    assert "finish line" in lines[-1] and "[kelly]" in lines[-1]


@pytest.mark.parametrize("name", BUNDLED)
def test_svg_rendering_is_well_formed_and_shows_every_space_and_car(name: str) -> None:
    """A results mail shows the track with the cars on it as a picture (§9): one polygon per
    space, one marker per car."""
    track = bundled(name)
    svg = render_svg(track, {track.grid[0]: "roger", track.grid[1]: "kelly"})
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polygon")) == len(track.spaces)
    assert len(root.findall(f"{ns}circle")) == 2
