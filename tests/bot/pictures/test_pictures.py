"""The turn pictures: real PNGs that decode, stay small, change where a car moves,
tell players apart without colour, and are drawn fast enough for a deadline."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops

from bench.budgets import NAMES, play
from bot import pictures
from bot.pictures import Scene, column, typed_view
from bot.pictures import speed_circuit as sc_picture
from bot.pictures import speedphreakz as sp_picture
from bot.pictures.common import BLACK, SHAPES, WHITE, Sheet, _marker_sprite, _text_mask
from rules import find_game, game_names
from rules.racecraft import RacecraftView
from rules.speed_circuit import PitStage, SpeedCircuitView
from rules.speedphreakz import Heading, SpeedPhreakzView, Square
from tests.settled import examples


def decode(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def differing_box(a: bytes, b: bytes) -> tuple[int, int, int, int] | None:
    return ImageChops.difference(decode(a).convert("RGB"), decode(b).convert("RGB")).getbbox()


def inside(box: tuple[int, int, int, int] | None, x: float, y: float) -> bool:
    return box is not None and box[0] <= x <= box[2] and box[1] <= y <= box[3]


def diff_pixels(a: bytes, b: bytes, x: float, y: float, r: int = 6) -> int:
    """How many pixels differ within r of (x, y)."""
    diff = ImageChops.difference(decode(a).convert("L"), decode(b).convert("L"))
    region = diff.crop((int(x) - r, int(y) - r, int(x) + r, int(y) + r))
    return region.width * region.height - region.histogram()[0]


SIZES = {"racecraft": (8, 4), "speed_circuit": (9, 6), "speedphreakz": (4, 5)}


@pytest.mark.parametrize("kind", game_names())
def test_every_game_draws_a_small_png_that_decodes_at_its_stated_size(kind: str) -> None:
    """Pictures are PNG, small (under 150 KB), with alt text naming every player."""
    count, turns = SIZES.get(kind, (find_game(kind).min_players, 4))
    for t in range(0, turns + 1, 2):
        frames, events = play(kind, count, t)
        keep = frames if pictures.needs_history(kind) else frames[-2:]
        picture = pictures.draw(kind, Scene(tuple(keep), tuple(events)))
        assert picture is not None
        image = decode(picture.png)
        assert image.format == "PNG"
        assert image.size == (picture.width, picture.height)
        # The SpeedPhreakz map is cut into bands one under the other to fit a phone's
        # width, so a picture may run to 1400 px down (it was at most 800 px, wider)
        assert 200 <= picture.width <= 700 and 150 <= picture.height <= 1400
        assert len(picture.png) < pictures.MAX_BYTES
        for row in frames[-1].table:
            assert row.player in picture.alt


def _with_car(view: Any, player: str, **changes: Any) -> Any:
    """`view` with one car (or runner) changed."""
    name = "runners" if isinstance(view, RacecraftView) else "cars"
    cars = tuple(dataclasses.replace(c, **changes) if c.player == player else c for c in getattr(view, name))
    return dataclasses.replace(view, **{name: cars})


def test_racecraft_chart_changes_where_the_runners_swap_places() -> None:
    """The Racecraft chart shows positions; swapping two runners changes the last column only."""
    frames, events = play("racecraft", 6, 3)
    now = frames[-1]
    assert isinstance(now, RacecraftView)
    first, last = now.runners[0], now.runners[-1]
    runners = (
        dataclasses.replace(last, place=1),
        *now.runners[1:-1],
        dataclasses.replace(first, place=len(now.runners)),
    )
    moved = [*frames[:-1], dataclasses.replace(now, runners=runners)]
    a = pictures.draw("racecraft", Scene(tuple(frames), tuple(events)))
    b = pictures.draw("racecraft", Scene(tuple(moved), tuple(events)))
    assert a is not None and b is not None and (a.width, a.height) == (b.width, b.height)
    box = differing_box(a.png, b.png)
    assert box is not None
    # The rows of the grid and turns 1-2 (above where the lines turn down to turn 3) are
    # untouched: only turn 3's row, the lines into it and the order underneath moved.
    from bot.pictures import racecraft as rc_picture

    top = rc_picture.MARGIN + 16 + 18  # one line of title, then "front ... back"
    box_above = (0, 0, a.width, top + 2 * rc_picture.ROW + rc_picture.ROW // 2 - 3)
    untouched = decode(a.png).convert("L").crop(box_above)
    assert ImageChops.difference(untouched, decode(b.png).convert("L").crop(box_above)).getbbox() is None
    assert box[1] >= box_above[3] - 16  # markers of turn 2 may be crossed by the new lines


def test_racecraft_chart_prints_the_ep_of_each_runner() -> None:
    """'with each player's EP': the EP of the view's runners changes the picture."""
    frames, events = play("racecraft", 5, 2)
    now = frames[-1]
    assert isinstance(now, RacecraftView)
    runner = now.runners[0]
    changed = [*frames[:-1], _with_car(now, runner.player, ep=9 if runner.ep != 9 else 3)]
    a = pictures.draw("racecraft", Scene(tuple(frames), tuple(events)))
    b = pictures.draw("racecraft", Scene(tuple(changed), tuple(events)))
    assert a is not None and b is not None
    assert differing_box(a.png, b.png) is not None


def _race_turn_frames() -> tuple[list[SpeedCircuitView], list[dict[str, Any]]]:
    frames, events = play("speed_circuit", 4, 4)
    assert all(isinstance(f, SpeedCircuitView) for f in frames)
    typed = [f for f in frames if isinstance(f, SpeedCircuitView)]
    assert any(car.space is not None for car in typed[-1].cars)
    return typed, events


def test_speed_circuit_car_moved_changes_pixels_at_both_spaces() -> None:
    """The track shows every car where it ended the turn: moving one car changes the
    picture at its old space and at its new one."""
    frames, events = _race_turn_frames()
    now = frames[-1]
    geo = sc_picture.geometry(now.track)
    player, space = next((c.player, c.space) for c in now.cars if c.space in geo.spaces)
    taken = {c.space for c in now.cars}
    target = next(s for s in ("A40", "B40", "C40", "A30", "B30") if s in geo.spaces and s not in taken)
    moved = _with_car(now, player, space=target)
    before = frames[-2]
    a = pictures.draw("speed_circuit", Scene((before, now), tuple(events)))
    b = pictures.draw("speed_circuit", Scene((before, moved), tuple(events)))
    assert a is not None and b is not None and (a.width, a.height) == (b.width, b.height)
    x0, y0 = geo.box[:2]
    for sid in (space, target):
        assert sid is not None
        cx, cy = geo.spaces[sid].centre
        assert diff_pixels(a.png, b.png, cx - x0, cy - y0) > 10, f"no change drawn at {sid}"


def test_speed_circuit_draws_the_path_and_crash_and_spin_marks() -> None:
    """Its path this turn, crash and spin marks: each adds pixels to the picture."""
    frames, _ = _race_turn_frames()
    before, now = frames[-2], frames[-1]
    plain = pictures.draw("speed_circuit", Scene((now,), ()))
    with_path = pictures.draw("speed_circuit", Scene((before, now), ()))
    assert plain is not None and with_path is not None
    assert differing_box(plain.png, with_path.png) is not None
    player, space = next((c.player, c.space) for c in now.cars if c.space is not None)
    crash = [{"kind": "crash", "text": f"{player} crashes on course in {space}", "players": [player]}]
    spin = [{"kind": "spin", "text": f"{player} spins in {space}", "players": [player]}]
    crashed = pictures.draw("speed_circuit", Scene((now,), tuple(crash)))
    spun = pictures.draw("speed_circuit", Scene((now,), tuple(spin)))
    assert crashed is not None and spun is not None
    geo = sc_picture.geometry(now.track)
    cx, cy = geo.spaces[space].centre
    x, y = cx - geo.box[0], cy - geo.box[1]
    assert diff_pixels(plain.png, crashed.png, x + 10, y - 10, 8) > 10
    assert diff_pixels(plain.png, spun.png, x, y, 18) > 10
    assert "spins" in spun.alt and "crashes" in crashed.alt


def test_speed_circuit_is_drawn_from_the_geometry_not_from_text() -> None:
    """The picture reads the typed view, not text: blanking the public table and
    the text track changes nothing, and the track's space outlines are where it draws."""
    frames, events = _race_turn_frames()
    now = frames[-1]
    blank = dataclasses.replace(
        now, table=tuple(dataclasses.replace(r, cells=("",) * len(r.cells)) for r in now.table), track_text=""
    )
    a = pictures.draw("speed_circuit", Scene((frames[-2], now), tuple(events)))
    b = pictures.draw("speed_circuit", Scene((frames[-2], blank), tuple(events)))
    assert a is not None and b is not None and a.png == b.png
    geo = sc_picture.geometry(now.track)
    assert set(geo.spaces) == {s.id for s in now.track.spaces}
    # The chart of the lap is the picture's width, with the legend under it
    assert a.width == int(geo.box[2]) and a.height > geo.box[3]


def test_speedphreakz_car_moved_changes_pixels_at_both_squares() -> None:
    """The grid map with every car: moving a car changes its old and new square."""
    frames, events = play("speedphreakz", 3, 3)
    now = frames[-1]
    assert isinstance(now, SpeedPhreakzView)
    grid = now.circuit.grid
    bands = sp_picture.map_frames(now)
    player, square = next((c.player, c.square) for c in now.cars if c.square is not None)
    taken = {c.square for c in now.cars}
    target = next(
        Square(tx, ty)
        for ty, row in enumerate(grid)
        for tx, c in enumerate(row)
        if c == "." and Square(tx, ty) not in taken and abs(tx - square.x) + abs(ty - square.y) > 4
    )
    moved = _with_car(now, player, square=target)
    a = pictures.draw("speedphreakz", Scene((now,), ()))
    b = pictures.draw("speedphreakz", Scene((moved,), ()))
    assert a is not None and b is not None
    assert diff_pixels(a.png, b.png, *sp_picture.frame_of(bands, square).centre(square)) > 10
    assert diff_pixels(a.png, b.png, *sp_picture.frame_of(bands, target).centre(target)) > 10


def test_speedphreakz_heading_and_path_are_drawn() -> None:
    """Each car's heading and its path this round change the picture."""
    frames, events = play("speedphreakz", 3, 4)
    now = frames[-1]
    assert isinstance(now, SpeedPhreakzView)
    car = next(c for c in now.cars if c.square is not None)
    turned = _with_car(now, car.player, heading=Heading.S if car.heading is not Heading.S else Heading.N)
    a = pictures.draw("speedphreakz", Scene((now,), ()))
    b = pictures.draw("speedphreakz", Scene((turned,), ()))
    assert a is not None and b is not None and differing_box(a.png, b.png) is not None
    still = dataclasses.replace(now, cars=tuple(dataclasses.replace(c, trail=()) for c in now.cars))
    before = dataclasses.replace(
        still,
        cars=tuple(
            dataclasses.replace(c, square=Square(c.square.x + 3, c.square.y)) if c.square is not None else c
            for c in still.cars
        ),
    )
    plain = pictures.draw("speedphreakz", Scene((still,), ()))
    with_path = pictures.draw("speedphreakz", Scene((before, still), ()))
    assert plain is not None and with_path is not None and differing_box(plain.png, with_path.png) is not None


def test_markers_differ_in_shape_not_only_colour() -> None:
    """Readable in black and white: every player's marker has its own shape."""
    masks = [_marker_sprite(i, "A", 10, False)[1].tobytes() for i in range(len(SHAPES))]
    assert len(set(masks)) == len(SHAPES)


def test_the_largest_picture_of_each_game_is_the_same_drawn_with_its_caches_warm() -> None:
    """The picture of each game's largest field, drawn again once the caches (fonts, the track,
    stamps) are warm, is the same PNG. What it costs (30 ms a picture at most: one picture a
    game and turn at a deadline of 500 games) is `python -m bench --only budgets`."""
    for kind, (count, turns) in SIZES.items():
        frames, events = play(kind, count, turns)
        keep = frames if pictures.needs_history(kind) else frames[-2:]
        scene = Scene(tuple(keep), tuple(events))
        first = pictures.draw(kind, scene)
        again = pictures.draw(kind, scene)
        assert first is not None and again is not None, kind
        assert first.png.startswith(b"\x89PNG") and again.png == first.png, kind


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(sorted(SIZES)), extra=st.integers(0, 4), turns=st.integers(0, 8), seed=st.integers(0, 10_000)
)
def test_the_picture_of_any_race_decodes_stays_small_and_names_everyone(
    kind: str, extra: int, turns: int, seed: int
) -> None:
    """Whatever the race, the picture is a PNG under 150 KB at its stated size, and
    its alt text names every player of the public table."""
    game = find_game(kind)
    count = min(game.max_players, game.min_players + extra, len(NAMES))
    frames, events = play(kind, count, turns, seed)
    keep = frames if pictures.needs_history(kind) else frames[-2:]
    picture = pictures.draw(kind, Scene(tuple(keep), tuple(events)))
    assert picture is not None
    assert decode(picture.png).size == (picture.width, picture.height)
    assert len(picture.png) < pictures.MAX_BYTES
    assert all(row.player in picture.alt for row in frames[-1].table)


def test_an_unknown_game_has_no_picture() -> None:
    """A game without a picture module gets none (the mail goes without)."""
    assert pictures.draw("no_such_game", Scene(({"table": []},), ())) is None


def test_speed_circuit_car_beside_the_track_is_drawn_at_that_space() -> None:
    """Every car where it ended the turn, also one off the track (drawn
    beside the space it is beside, outside the lanes, the space left clear); a car in the pits
    is not on the track."""
    frames, events = _race_turn_frames()
    now = frames[-1]
    player, space = next(
        (c.player, c.space) for c in now.cars if c.space is not None and now.track.space(c.space).speed is None
    )
    beside = _with_car(now, player, off_track=-1, where=f"beside {space} (off track)")
    gone = _with_car(now, player, space=None, pit=PitStage.ENTRANCE, where="pits (entrance)")
    plain = pictures.draw("speed_circuit", Scene((now,), ()))
    shown = pictures.draw("speed_circuit", Scene((beside,), ()))
    missing = pictures.draw("speed_circuit", Scene((gone,), ()))
    assert plain is not None and shown is not None and missing is not None
    geo = sc_picture.geometry(now.track)
    assert space is not None
    x, y = geo.spaces[space].centre
    assert diff_pixels(plain.png, shown.png, x, y) > 10
    assert diff_pixels(plain.png, shown.png, *geo.beside(space, -1)) > 10
    assert diff_pixels(plain.png, missing.png, x, y) > 10
    assert f"{player} in beside {space} (off track)" in shown.alt and f"{player} in pits (entrance)" in missing.alt


@pytest.mark.parametrize("kind", game_names())
def test_a_view_copied_into_a_dict_draws_the_same_picture(kind: str) -> None:
    """Transitional: shell code that copies a view into a dict (to add to it) still
    gets the same picture: the frame is built back into the game's typed view."""
    frames, events = play(kind, SIZES[kind][0], 3)
    keep = frames if pictures.needs_history(kind) else frames[-2:]
    a = pictures.draw(kind, Scene(tuple(keep), tuple(events)))
    b = pictures.draw(kind, Scene(tuple(dict(f) for f in keep), tuple(events)))
    assert a is not None and b is not None and a == b
    assert typed_view(dict(frames[-1]), type(frames[-1])) == frames[-1]
    assert pictures.draw("racecraft", Scene(({"table": [], "standings": []},))) is not None


def test_the_public_table_column_helper_reads_the_typed_table() -> None:
    """bot.pictures.column: one column of the public table, by heading."""
    frames, _ = play("racecraft", 5, 1)
    now = frames[-1]
    assert isinstance(now, RacecraftView)
    assert column(now, "EP") == {r.player: str(r.ep) for r in now.runners}
    assert column(now, "No such") == {}


@settings(max_examples=examples(40, 150), deadline=None)
@given(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x24F), min_size=1, max_size=12),
    st.sampled_from([9, 11, 14, 20]),
    st.sampled_from(["la", "mm", "rs"]),
    st.integers(-6, 40),
    st.integers(-6, 30),
)
def test_text_with_a_halo_is_the_text_over_its_mask_pasted_each_of_the_eight_ways(
    text: str, size: int, anchor: str, x: int, y: int
) -> None:
    """`Sheet.text` with a halo (one paste of the edge mask `_halo_mask`) gives the pixels of the
    mask pasted in the halo's colour one pixel each of the eight ways, then the text over it,
    also where the text runs past the sheet's edges."""
    sheet = Sheet(48, 36, WHITE)
    sheet.text((x, y), text, size, BLACK, anchor, halo=2)
    by_hand = Sheet(48, 36, WHITE)
    mask, (left, top) = _text_mask(text, size, anchor)
    at = (x + left, y + top)
    for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, 1), (-1, 1), (1, -1)):
        by_hand.image.paste(2, (at[0] + dx, at[1] + dy), mask)
    by_hand.image.paste(BLACK, at, mask)
    assert sheet.image.tobytes() == by_hand.image.tobytes()
