"""Pictures you can plot from: the Speed Circuit chart names every space as the
orders do, with its racing lines, pit lane and arrows, corner speeds, finish and direction;
the SpeedPhreakz map has x,y on its edges, numbered checkpoints, the race's direction and
every terrain in its legend; each player's own options are drawn for them; everything reads
on a 360 px phone and in black and white."""

from __future__ import annotations

import dataclasses
import io
import math
import random

import pytest
from PIL import Image

from bench.budgets import play
from bot import pictures
from bot.pictures import LEGIBLE, PHONE_WIDTH, Scene
from bot.pictures import speed_circuit as sc_picture
from bot.pictures import speedphreakz as sp_picture
from bot.pictures.common import (
    BLACK,
    BLUE,
    CORNER,
    DARK,
    GRAVEL,
    GREEN,
    GREY,
    OIL,
    PIT,
    PLAYER_COLOURS,
    RED,
    Sheet,
)
from rules import find_game
from rules.api import Viewer
from rules.speed_circuit import GAME as SPEED_CIRCUIT
from rules.speed_circuit import Cost, Reach, SpeedCircuitView
from rules.speedphreakz import Band, SpeedPhreakzView, Square
from tests.bot.pictures.test_pictures import SIZES
from tests.rules.speed_circuit.helpers import bundled, car, race


def pixels(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.mode == "P"
    return image


def inks(image: Image.Image, box: tuple[float, float, float, float]) -> set[int]:
    """The palette indices used inside `box`."""
    x0, y0, x1, y1 = (round(v) for v in box)
    region = image.crop((x0, y0, x1, y1))
    found: set[int] = set()
    for _count, index in region.getcolors(maxcolors=256) or []:
        assert isinstance(index, int), index  # a palette image: its colours are indices
        found.add(index)
    return found


def sc_frames() -> tuple[SpeedCircuitView, SpeedCircuitView, tuple[dict[str, object], ...]]:
    frames, events = play("speed_circuit", 5, 6)
    before, now = frames[-2], frames[-1]
    assert isinstance(before, SpeedCircuitView) and isinstance(now, SpeedCircuitView)
    return before, now, tuple(events)


# -- Speed Circuit: the chart ------------------------------------------------------------------


def sc_view(name: str) -> SpeedCircuitView:
    """The public view of a race on the bundled track `name`, two cars on the grid."""
    track = bundled(name)
    state = race(track, [car("ann", track.grid[0], track, lap=0), car("bob", track.grid[1], track, lap=0)], laps=3)
    view = SPEED_CIRCUIT.view(state, None, Viewer.PUBLIC)
    assert isinstance(view, SpeedCircuitView)
    return view


@pytest.mark.parametrize("name", ["harbour_loop", "quarry_ring"])
def test_the_chart_runs_every_row_once_in_order_and_cuts_no_space_or_corner(name: str) -> None:
    """The lap in columns read down (the direction of travel): rows 1..L each once, in order;
    a column is cut only where every lane has a front edge and no corner goes on, so no
    space and no corner is split between two columns."""
    plan = sc_view(name).track
    geo = sc_picture.geometry(plan)
    rows = [row for strip in geo.strips for row in strip.rows]
    assert rows == list(range(1, plan.rows + 1)) and len(geo.strips) == 3
    for s in plan.spaces:
        strip = geo.strip_of(s.row)
        assert strip is not None and all(r in strip.rows for r in range(s.back_row + 1, s.row + 1)), s.id
    corners = {(s.corner, id(geo.strip_of(s.row))) for s in plan.spaces if s.corner}
    assert len({c for c, _ in corners}) == len(corners), "a corner is split between columns"


def test_every_row_is_numbered_and_every_lane_lettered() -> None:
    """ "lane letters and row numbers on every row (as the orders name spaces:
    B16)": each row's number is drawn beside it, the lane letters over each column and in
    every plain space a car does not stand on."""
    _, now, _ = sc_frames()
    picture = pictures.draw("speed_circuit", Scene((dataclasses.replace(now, cars=()),), ()))
    assert picture is not None
    image = pixels(picture.png)
    geo = sc_picture.geometry(now.track)
    lay = geo.layout
    for strip in geo.strips:
        for row in strip.rows:
            top = geo.row_top(row)
            assert inks(image, (strip.x, top + 2, strip.x + lay.label_w, top + lay.row_h - 2)) & {BLACK, DARK}, row
        for lane in range(3):
            x = geo.lane_x(strip, lane)
            assert BLACK in inks(
                image, (x + 6, geo.row_top(strip.first) - 16, x + lay.lane_w - 6, geo.row_top(strip.first) - 4)
            )
    for space in geo.spaces.values():
        plan = now.track.space(space.id)
        if plan.speed is None and not plan.pit_arrow:
            cx, cy = space.centre
            assert GREY in inks(image, (cx - 4, cy - 5, cx + 4, cy + 5)), space.id


def test_lines_pit_lane_arrows_corner_speeds_finish_and_direction_are_drawn() -> None:
    """ "racing lines (the track data has them), pit lane and pit entry arrows,
    corner speeds, the direction of travel": red +20 and green +40 lines through their spaces,
    the hatched pit lane beside its rows, a red arrow in each pit-entry space, each posted
    speed in its corner space, the chequered finish, an arrow down each column."""
    _, now, _ = sc_frames()
    empty = dataclasses.replace(now, cars=())
    picture = pictures.draw("speed_circuit", Scene((empty,), ()))
    assert picture is not None
    image = pixels(picture.png)
    geo = sc_picture.geometry(now.track)
    lay = geo.layout
    assert {line.bonus for line in now.racing_lines} == {20, 40}
    for line in now.racing_lines:
        colour = GREEN if line.bonus == 40 else RED
        for a, b in zip(line.spaces, line.spaces[1:], strict=False):
            if geo.strip_of(geo.spaces[a].row) is not geo.strip_of(geo.spaces[b].row):
                continue
            (ax, ay), (bx, by) = geo.spaces[a].centre, geo.spaces[b].centre
            mx, my = (ax + bx) / 2, (ay + by) / 2
            assert colour in inks(image, (mx - 4, my - 4, mx + 4, my + 4)), (line.id, a, b)
    pit = now.track.pit
    assert pit is not None
    for row in range(pit.first, pit.last + 1):
        strip = geo.strip_of(row)
        assert strip is not None
        x = geo.lane_x(strip, 3 if pit.side > 0 else -1)
        assert PIT in inks(image, (x, geo.row_top(row), x + lay.side_w, geo.row_top(row) + lay.row_h)), row
    for s in now.track.spaces:
        x0, y0, x1, y1 = geo.spaces[s.id].box
        if s.pit_arrow:
            assert RED in inks(image, (x1 - 9, y0 + 2, x1, y1 - 2)), s.id
        if s.speed is not None:
            assert CORNER in inks(image, (x0, y0, x1, y1)) and BLACK in inks(image, (x0 + 2, y0 + 2, x1 - 2, y1 - 2)), (
                s.id
            )
    last = geo.strip_of(now.track.rows)
    assert last is not None
    y = geo.row_top(now.track.rows) + lay.row_h
    assert BLACK in inks(image, (geo.lane_x(last, 0), y - 2, geo.lane_x(last, 3), y + 2))
    for strip in geo.strips:
        top = geo.row_top(strip.first)
        assert DARK in inks(image, (strip.x, top - 12, strip.x + lay.label_w, top - 1))


def test_the_green_line_is_dashed_so_it_reads_in_black_and_white() -> None:
    """ "distinguishable in shapes or patterns as well as colours": +40 lines are
    dashed, +20 lines solid; the key says which is which."""
    _, now, _ = sc_frames()
    picture = pictures.draw("speed_circuit", Scene((dataclasses.replace(now, cars=()),), ()))
    assert picture is not None
    image = pixels(picture.png)
    geo = sc_picture.geometry(now.track)
    green = next(line for line in now.racing_lines if line.bonus == 40)
    a, b = green.spaces[1], green.spaces[2]
    (ax, ay), (bx, by) = geo.spaces[a].centre, geo.spaces[b].centre
    along = [image.getpixel((round(ax + (bx - ax) * k / 20), round(ay + (by - ay) * k / 20))) for k in range(4, 17)]
    assert GREEN in along and any(p != GREEN for p in along), "the +40 line is not dashed"


# -- legible on a phone, for every game ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["racecraft", "speed_circuit", "speedphreakz"])
def test_every_picture_reads_on_a_360_px_phone(kind: str) -> None:
    """ "Legible on a phone (the mail layout is tested at 360 px)"; the bar is
    9 px and counts the cars' and runners' letters as labels: every picture, the
    track, the map and the options, is drawn at most `PHONE_WIDTH` wide (a phone shows it
    unscaled), no label in it is under `LEGIBLE` px and no text is cut off."""
    count, turns = SIZES[kind]
    for t in (0, 2, turns):
        frames, events = play(kind, count, t)
        keep = frames if pictures.needs_history(kind) else frames[-2:]
        picture = pictures.draw(kind, Scene(tuple(keep), tuple(events)))
        assert picture is not None and picture.min_label_px > 0
        assert picture.width <= PHONE_WIDTH and picture.smallest_on_phone() >= LEGIBLE, (
            kind,
            t,
            picture.width,
            picture.min_label_px,
        )
        assert picture.clipped == (), picture.clipped
    if kind == "racecraft":
        return  # Racecraft has no board, so no options picture
    game = find_game(kind)
    state = game.new_game([f"p{i}" for i in range(count)], {}, random.Random(3))
    drawn = 0
    for _ in range(turns):
        if game.is_finished(state):
            break
        state = game.resolve(
            state, {p: game.default_orders(state, p) for p in game.expected_players(state)}, random.Random(drawn)
        ).state
        for player in game.players(state):
            own = pictures.draw_options(kind, game.view(state, None, player))
            if own is not None:
                drawn += 1
                assert own.width <= PHONE_WIDTH and own.smallest_on_phone() >= LEGIBLE, (
                    kind,
                    own.width,
                    own.min_label_px,
                )
                assert own.clipped == (), (kind, own.clipped)  # "captions ... never clipped"
                assert len(own.png) < pictures.MAX_BYTES
    assert drawn


# -- SpeedPhreakz: the map ------------------------------------------------------------------------


def sp_view(map_name: str) -> SpeedPhreakzView:
    game = find_game("speedphreakz")
    state = game.new_game(["ann", "bob"], {"map": map_name}, random.Random(1))
    view = game.view(state, None, Viewer.PUBLIC)
    assert isinstance(view, SpeedPhreakzView)
    return view


@pytest.mark.parametrize("map_name", ["ring", "chicane"])
def test_the_map_has_x_y_on_its_edges_and_numbered_checkpoints_with_the_way_round(map_name: str) -> None:
    """ "x,y coordinates on the edges (as START x,y names them), checkpoints
    numbered, ... the direction of the race": a digit over and under every column and a
    number beside every row, each checkpoint cell outlined, and at the line and each
    checkpoint a numbered mark with an arrow the way the race goes. The map is cut
    into bands one under the other, each with its own rulers, so each band does all this for
    its columns."""
    view = sp_view(map_name)
    picture = pictures.draw("speedphreakz", Scene((view,), ()))
    assert picture is not None
    image = pixels(picture.png)
    frames = sp_picture.map_frames(view)
    for frame in frames:
        half = frame.cell / 2
        for x in range(frame.x0, frame.x1 + 1):
            cx = frame.left + (x - frame.x0) * frame.cell + half
            assert inks(image, (cx - 4, frame.top - 16, cx + 4, frame.top - 2)) & {BLACK}, x
            bottom = frame.top + frame.height
            assert inks(image, (cx - 4, bottom + 2, cx + 4, bottom + 15)) & {BLACK}, x
        for y in range(view.circuit.height):
            cy = frame.top + y * frame.cell + half
            assert BLACK in inks(image, (frame.left - 16, cy - 5, frame.left - 1, cy + 5)), y
            right = frame.left + frame.width
            assert BLACK in inks(image, (right + 1, cy - 5, right + 16, cy + 5)), y
    for cells in view.circuit.checkpoints:
        for square in cells:
            frame = sp_picture.frame_of(frames, square)
            left, top = frame.corner(square)
            assert BLUE in inks(image, (left, top, left + frame.cell, top + frame.cell)), square
    assert [m.number for m in view.course] == list(range(len(view.circuit.checkpoints) + 1))
    for mark in view.course:
        frame = sp_picture.frame_of(frames, mark.square)
        cx, cy = frame.centre(mark.square)
        dx, dy = mark.heading.vector
        tip = (cx + dx * frame.cell * 1.2, cy + dy * frame.cell * 1.2)
        assert frame.left < tip[0] < frame.left + frame.width, "a cut went through a checkpoint's arrow"
        assert BLUE in inks(image, (tip[0] - 3, tip[1] - 3, tip[0] + 3, tip[1] + 3)), mark


@pytest.mark.parametrize("map_name", ["ring", "chicane"])
def test_the_map_is_cut_into_bands_a_phone_shows_whole(map_name: str) -> None:
    """The map drawn at most `PHONE_WIDTH` wide with squares a car's 9 px letter fits:
    its columns cut into bands of about 16, one under the other, every column in exactly one
    band and in order, the bands as wide as the picture allows and no cut through a
    checkpoint, the line or a course arrow (both bundled maps have room for that)."""
    view = sp_view(map_name)
    frames = sp_picture.map_frames(view)
    columns = [x for frame in frames for x in range(frame.x0, frame.x1 + 1)]
    assert columns == list(range(view.circuit.width))
    assert len(frames) == math.ceil(view.circuit.width / sp_picture.BAND_COLUMNS) >= 2
    picture = pictures.draw("speedphreakz", Scene((view,), ()))
    assert picture is not None and picture.width <= PHONE_WIDTH
    spans = sp_picture._spans(view.circuit, view.course, 0, view.circuit.height - 1)
    for frame in frames:
        assert frame.x1 - frame.x0 + 1 <= sp_picture.WIDEST_BAND and frame.cell >= 17
        assert 0 <= frame.left - 14 and frame.left + frame.width + 14 <= picture.width  # the y rulers fit
        assert not any(lo < frame.x0 < hi for lo, hi in spans if frame.x0), (frame.x0, spans)
        assert frame.y0 == 0 and frame.y1 == view.circuit.height - 1
    tops = [frame.top for frame in frames]
    assert tops == sorted(tops) and all(
        b - a >= frames[0].height + 2 * sp_picture.RULER for a, b in zip(tops, tops[1:], strict=False)
    )


def test_a_cut_moves_off_an_arrow_where_it_can_and_only_as_far_as_it_must() -> None:
    """ "cuts avoid checkpoint arrows where they can": 32 columns are cut in the middle;
    an arrow over the middle moves the cut to the nearest column clear of it, unless that
    leaves a band wider than `WIDEST_BAND` (then the arrow is cut); only what is drawn in the
    rows shown counts (an options window above a checkpoint is cut as if it were not there)."""
    assert sp_picture._cuts(0, 31, []) == [16]
    assert sp_picture._cuts(0, 31, [(15.2, 16.8)]) == [15]
    assert sp_picture._cuts(0, 31, [(14.9, 17.2)]) == [16]
    assert sp_picture._cuts(0, 47, [(15.5, 16.5)]) == [15, 32]
    chicane = sp_view("chicane")
    third = next(mark for mark in chicane.course if mark.number == 3)
    covers = [(lo, hi) for lo, hi in sp_picture._spans(chicane.circuit, chicane.course, 0, 14) if lo < 8 < hi]
    assert covers and third.square.y > 8
    assert not [(lo, hi) for lo, hi in sp_picture._spans(chicane.circuit, chicane.course, 0, 8) if lo < 8 < hi]


def test_a_path_over_a_band_edge_is_cut_there_and_goes_on_in_the_next_band() -> None:
    """A car's path from a square in one band to a square in the next is drawn up to
    the edge of the first band and from the edge of the second; nothing of it is drawn between
    the bands (over the rulers)."""
    view = sp_view("chicane")
    frames = sp_picture.map_frames(view)
    first, second = frames[0], frames[1]
    y = 2
    start, end = Square(first.x1 - 2, y), Square(second.x0 + 2, y)
    car = dataclasses.replace(view.cars[0], square=end, trail=tuple(Square(x, y) for x in range(start.x, end.x + 1)))
    before = dataclasses.replace(view, cars=(dataclasses.replace(car, square=start, trail=()),))
    now = dataclasses.replace(view, cars=(car,))
    plain = dataclasses.replace(view, cars=(dataclasses.replace(car, trail=()),))
    drawn = pictures.draw("speedphreakz", Scene((before, now), ()))
    bare = pictures.draw("speedphreakz", Scene((plain,), ()))
    assert drawn is not None and bare is not None
    colour = PLAYER_COLOURS[0]
    a, b = pixels(drawn.png), pixels(bare.png)
    cy1 = first.centre(start)[1]
    edge1 = first.left + first.width
    assert colour in inks(a, (edge1 - 8, cy1 - 2, edge1 - 1, cy1 + 2)) - inks(
        b, (edge1 - 8, cy1 - 2, edge1 - 1, cy1 + 2)
    )
    cy2 = second.centre(end)[1]
    assert colour in inks(a, (second.left + 1, cy2 - 2, second.left + 8, cy2 + 2))
    assert colour not in inks(a, (edge1 + 2, cy1 - 2, a.width, cy1 + 2))  # not over the y ruler
    assert colour not in inks(a, (0, cy2 - 2, second.left - 2, cy2 + 2))


def test_every_terrain_is_in_the_legend_grass_too() -> None:
    """ "every terrain in the legend (grass too)": the legend swatches every terrain
    of the key with its rule, even one this map does not use (the ring has no gravel or oil,
    and its legend still shows them)."""
    view = sp_view("ring")
    names = {t.name for t in sp_picture._terrains(view.circuit)}
    assert {"tarmac", "grass", "gravel", "oil", "barrier", "start/finish line"} <= names
    assert not any(":" in row or "o" in row for row in view.circuit.grid)
    picture = pictures.draw("speedphreakz", Scene((view,), ()))
    assert picture is not None
    used = {index for _, index in pixels(picture.png).getcolors(maxcolors=256) or []}
    assert {GRAVEL, OIL} <= used
    assert "grass: +10 control" == sp_picture._terrain_text(next(t for t in view.circuit.terrain_key if t.char == ","))


# -- each player's own options ---------------------------------------------------------------------


def test_the_speed_circuit_options_picture_marks_every_space_a_speed_ends_in() -> None:
    """ "shows where the car can get this turn: ... the spaces reachable at each
    legal speed, marked by what they cost": every space with an option carries a badge in
    that cost's fill; the public view has no options to draw."""
    track = bundled("harbour_loop")
    state = race(track, [car("ann", "B8", track, speed=100), car("bob", "B2", track, speed=40)], laps=3)
    game = SPEED_CIRCUIT
    mine = game.view(state, None, "ann")
    assert isinstance(mine, SpeedCircuitView) and mine.options is not None
    picture = pictures.draw_options("speed_circuit", mine)
    assert picture is not None and pictures.draw_options("speed_circuit", game.view(state, None, Viewer.PUBLIC)) is None
    image = pixels(picture.png)
    probe = Sheet(1, 1)
    head = sum(len(probe.wrap(text, 12, sc_picture.OPTIONS_WIDTH - 24)) for text in _sc_head(mine))
    geo = sc_picture._chart(mine.track, sc_picture.OPTIONS, [list(mine.options.rows)], 10 + head * 15 + 24)
    for space_id, space in geo.spaces.items():
        found = mine.options.at(space_id)
        if found and space_id != mine.options.space:
            assert sc_picture._BADGE[found[0].cost] in inks(image, space.box), space_id
    assert "Your options from B8 at 100 mph" in picture.alt and "A13 free" in picture.alt


def _sc_head(view: SpeedCircuitView) -> list[str]:
    """The header lines `draw_options` writes (so the test finds the chart under them)."""
    options = view.options
    assert options is not None
    head = [f"Your options: from {options.space} at {options.speed} mph; you may plot {options.limits}."]
    if options.corner is not None:
        head.append(options.corner.describe() + ".")
    fastest = sc_picture._fastest_free(options)
    if fastest is not None:
        head.append(f"Dashed: the fastest free move, {fastest.speed} mph to {fastest.space}, lanes {fastest.lanes}.")
    blocked = [c.speed for c in options.choices if not c.reaches]
    if blocked:
        head.append("No way through at " + ", ".join(map(str, blocked)) + " mph (you would emergency brake).")
    return head


def test_the_cost_badges_differ_without_colour() -> None:
    """ "distinguishable in shapes or patterns as well as colours": each cost's
    badge, turned to black and white, still differs from every other (its letter and edge)."""
    shapes = []
    for cost in Cost:
        sheet = Sheet(60, 20)
        sc_picture._badge(sheet, 2, 10, Reach(60, "A1", (), cost, 0, (), ()))
        shapes.append(sheet.image.convert("L").point(lambda v: 255 if v < 128 else 0).tobytes())
    assert len(set(shapes)) == len(Cost)


def test_the_speedphreakz_options_picture_marks_every_square_by_its_band() -> None:
    """ "the squares reachable by the round's programs and their control cost":
    every square shown reachable carries its band's mark; the three bands differ in black
    and white too (their digits and edges)."""
    game = find_game("speedphreakz")
    state = game.new_game(["ann", "bob"], {"map": "ring"}, random.Random(1))
    setup = {
        p: game.parse_orders(state, p, "START FREE FACING N\nROUND 1: F1\nROUND 2: F1").orders for p in ("ann", "bob")
    }
    state = game.resolve(state, setup, random.Random(2)).state
    mine = game.view(state, None, "ann")
    assert isinstance(mine, SpeedPhreakzView) and mine.options is not None
    picture = pictures.draw_options("speedphreakz", mine)
    assert picture is not None
    image = pixels(picture.png)
    options = mine.options
    frames = sp_picture.options_frames(mine)
    assert picture.width <= PHONE_WIDTH
    cars = {c.square for c in mine.cars}
    for option in options.squares:
        if option.square != options.start and option.square not in cars:
            cx, cy = sp_picture.frame_of(frames, option.square).centre(option.square)
            assert sp_picture._BANDS[option.band] in inks(image, (cx - 3, cy - 3, cx + 3, cy + 3)), option
    shapes = []
    for band in Band:
        sheet = Sheet(30, 30)
        sp_picture._band_badge(sheet, 15, 15, 18, band)
        shapes.append(sheet.image.convert("L").point(lambda v: 255 if v < 128 else 0).tobytes())
    assert len(set(shapes)) == len(Band)
    assert GREY not in {sp_picture._BANDS[b] for b in Band}
