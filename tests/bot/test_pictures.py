"""The turn pictures (issue 11): real PNGs that decode, stay small, change where a car moves,
tell players apart without colour, and are drawn fast enough for a deadline."""

from __future__ import annotations

import io
import random
import re
import time
from collections.abc import Mapping
from copy import deepcopy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops

from bot import pictures
from bot.pictures import Scene, column
from bot.pictures import speed_circuit as sc_picture
from bot.pictures import speedphreakz as spz_picture
from bot.pictures.common import SHAPES, _marker_sprite
from rules import find_game, game_names
from rules.api import Viewer

NAMES = ("kelly", "seb", "steve", "roger", "anna", "mika", "lewis", "nigel", "ayrton")


def candidates(kind: str, game: Any, state: Any, player: str, rng: random.Random) -> list[str]:
    """Order texts worth trying for a lively race (the first that parses cleanly is used)."""
    if kind == "racecraft":
        return [rng.choice(["CRUISE", "OVERTAKE", f"USE {rng.randint(0, 6)}"]), f"USE {rng.randint(0, 3)}"]
    if kind == "speed_circuit":
        return [f"SPEED {speed}\nPUSH YES\nLANE {rng.choice('ABC')}" for speed in (160, 140, 120, 100, 80, 60, 40, 20)]
    if kind == "speedphreakz":
        base = game.format_orders(game.default_orders(state, player))
        return [re.sub(r"ROUND (\d+):\s*$", lambda m: m.group(0) + " " + " ".join(
            rng.choice(["F1", "F2", "F3", "VL", "VR"]) for _ in range(rng.randint(1, 3))), base, flags=re.M)
            for _ in range(5)]
    return []


def play(kind: str, count: int, turns: int, seed: int = 1) -> tuple[list[Mapping[str, Any]], list[dict[str, Any]]]:
    """Public views after each turn of a game played with lively legal orders, and the last events."""
    game = find_game(kind)
    rng = random.Random(seed)
    state = game.new_game(list(NAMES[:count]), {}, random.Random(seed))
    frames = [game.view(state, None, Viewer.PUBLIC)]
    events: list[dict[str, Any]] = []
    for _ in range(turns):
        if game.is_finished(state):
            break
        orders = {}
        for player in game.expected_players(state):
            chosen = game.default_orders(state, player)
            for text in candidates(kind, game, state, player, rng):
                parsed = game.parse_orders(state, player, text)
                if parsed.ok and parsed.orders:
                    chosen = parsed.orders
                    break
            orders[player] = chosen
        resolution = game.resolve(state, orders, random.Random(rng.random()))
        state = resolution.state
        frames.append(game.view(state, None, Viewer.PUBLIC))
        events = [e.to_json() for e in resolution.events]
    return frames, events


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
    """issue 11: pictures are PNG, small (under 150 KB), with alt text naming every player."""
    count, turns = SIZES.get(kind, (find_game(kind).min_players, 4))
    for t in range(0, turns + 1, 2):
        frames, events = play(kind, count, t)
        keep = frames if pictures.needs_history(kind) else frames[-2:]
        picture = pictures.draw(kind, Scene(tuple(keep), tuple(events)))
        assert picture is not None
        image = decode(picture.png)
        assert image.format == "PNG"
        assert image.size == (picture.width, picture.height)
        assert 200 <= picture.width <= 700 and 150 <= picture.height <= 800
        assert len(picture.png) < pictures.MAX_BYTES
        for row in frames[-1]["table"]:
            assert row["player"] in picture.alt


def test_racecraft_chart_changes_where_the_runners_swap_places() -> None:
    """issue 11: the Racecraft chart shows positions; swapping two runners changes the last column only."""
    frames, events = play("racecraft", 6, 3)
    moved = [deepcopy(dict(f)) for f in frames]
    table = moved[-1]["table"]
    table[0], table[-1] = table[-1], table[0]
    table[0]["place"], table[-1]["place"] = 1, len(table)
    a = pictures.draw("racecraft", Scene(tuple(frames), tuple(events)))
    b = pictures.draw("racecraft", Scene(tuple(moved), tuple(events)))
    assert a is not None and b is not None and (a.width, a.height) == (b.width, b.height)
    box = differing_box(a.png, b.png)
    assert box is not None
    # The grid column (left of the first turn) is untouched: only turn 3's column and the legend moved.
    untouched = decode(a.png).convert("L").crop((0, 40, 90, a.height - 40))
    assert ImageChops.difference(untouched, decode(b.png).convert("L").crop((0, 40, 90, a.height - 40))).getbbox() is None


def test_racecraft_chart_prints_the_ep_of_each_runner() -> None:
    """issue 11: 'with each player's EP': the EP of the table changes the picture."""
    frames, events = play("racecraft", 5, 2)
    changed = [deepcopy(dict(f)) for f in frames]
    row = changed[-1]["table"][0]
    row["cells"][changed[-1]["columns"].index("EP")] = "9" if row["cells"][0] != "9" else "3"
    a = pictures.draw("racecraft", Scene(tuple(frames), tuple(events)))
    b = pictures.draw("racecraft", Scene(tuple(changed), tuple(events)))
    assert a is not None and b is not None
    assert differing_box(a.png, b.png) is not None


def _race_turn_frames() -> tuple[list[Mapping[str, Any]], list[dict[str, Any]]]:
    frames, events = play("speed_circuit", 4, 4)
    assert any(s not in ("", "-") for s in column(frames[-1], "Space").values())
    return frames, events


def test_speed_circuit_car_moved_changes_pixels_at_both_spaces() -> None:
    """issue 11: the track shows every car where it ended the turn: moving one car changes the
    picture at its old space and at its new one."""
    frames, events = _race_turn_frames()
    now = frames[-1]
    geo = sc_picture.geometry(sc_picture._track_part(now["track_svg"]))
    assert geo is not None
    player, space = next((p, s) for p, s in column(now, "Space").items() if s in geo.spaces)
    taken = set(column(now, "Space").values())
    target = next(s for s in ("A40", "B40", "C40", "A30", "B30") if s in geo.spaces and s not in taken)
    moved = deepcopy(dict(now))
    index = moved["columns"].index("Space")
    for row in moved["table"]:
        if row["player"] == player:
            row["cells"][index] = target
    before = frames[-2]
    a = pictures.draw("speed_circuit", Scene((before, now), tuple(events)))
    b = pictures.draw("speed_circuit", Scene((before, moved), tuple(events)))
    assert a is not None and b is not None and (a.width, a.height) == (b.width, b.height)
    x0, y0 = geo.box[:2]
    for sid in (space, target):
        cx, cy = geo.spaces[sid].centre
        assert diff_pixels(a.png, b.png, cx - x0, cy - y0) > 10, f"no change drawn at {sid}"


def test_speed_circuit_draws_the_path_and_crash_and_spin_marks() -> None:
    """issue 11: its path this turn, crash and spin marks: each adds pixels to the picture."""
    frames, _ = _race_turn_frames()
    before, now = frames[-2], frames[-1]
    plain = pictures.draw("speed_circuit", Scene((now,), ()))
    with_path = pictures.draw("speed_circuit", Scene((before, now), ()))
    assert plain is not None and with_path is not None
    assert differing_box(plain.png, with_path.png) is not None
    space = next(s for s in column(now, "Space").values() if s not in ("", "-"))
    player = next(p for p, s in column(now, "Space").items() if s == space)
    crash = [{"kind": "crash", "text": f"{player} crashes on course in {space}", "players": [player]}]
    spin = [{"kind": "spin", "text": f"{player} spins in {space}", "players": [player]}]
    crashed = pictures.draw("speed_circuit", Scene((now,), tuple(crash)))
    spun = pictures.draw("speed_circuit", Scene((now,), tuple(spin)))
    assert crashed is not None and spun is not None
    geo = sc_picture.geometry(sc_picture._track_part(now["track_svg"]))
    assert geo is not None
    cx, cy = geo.spaces[space].centre
    x, y = cx - geo.box[0], cy - geo.box[1]
    assert diff_pixels(plain.png, crashed.png, x + 10, y - 10, 8) > 10
    assert diff_pixels(plain.png, spun.png, x, y, 18) > 10
    assert "spins" in spun.alt and "crashes" in crashed.alt


def test_speed_circuit_without_svg_draws_the_text_track() -> None:
    """issue 11: rendering what the view has: no SVG, the text rendering of the track."""
    frames, events = _race_turn_frames()
    view = dict(frames[-1])
    view.pop("track_svg")
    picture = pictures.draw("speed_circuit", Scene((view,), tuple(events)))
    assert picture is not None and decode(picture.png).size == (picture.width, picture.height)


def test_speedphreakz_car_moved_changes_pixels_at_both_squares() -> None:
    """issue 11: the grid map with every car: moving a car changes its old and new square."""
    frames, events = play("speedphreakz", 3, 3)
    now = frames[-1]
    grid = spz_picture.grid_of(now)
    cell = max(10, min(26, spz_picture.MAX_WIDTH // max(len(r) for r in grid)))
    player, square = next((p, s) for p, s in column(now, "Square").items() if s)
    x, y = (int(v) for v in square.split(","))
    taken = set(column(now, "Square").values())
    target = next(f"{tx},{ty}" for ty, row in enumerate(grid) for tx, c in enumerate(row)
                  if c == "." and f"{tx},{ty}" not in taken and abs(tx - x) + abs(ty - y) > 4)
    moved = deepcopy(dict(now))
    index = moved["columns"].index("Square")
    for row in moved["table"]:
        if row["player"] == player:
            row["cells"][index] = target
    a = pictures.draw("speedphreakz", Scene((now,), ()))
    b = pictures.draw("speedphreakz", Scene((moved,), ()))
    assert a is not None and b is not None
    tx, ty = (int(v) for v in target.split(","))
    assert diff_pixels(a.png, b.png, x * cell + cell / 2, y * cell + cell / 2) > 10
    assert diff_pixels(a.png, b.png, tx * cell + cell / 2, ty * cell + cell / 2) > 10


def test_speedphreakz_heading_and_path_are_drawn() -> None:
    """issue 11: each car's heading and its path this round change the picture."""
    frames, events = play("speedphreakz", 3, 4)
    now = frames[-1]
    turned = deepcopy(dict(now))
    index = turned["columns"].index("Heading")
    row = next(r for r in turned["table"] if r["cells"][turned["columns"].index("Square")])
    row["cells"][index] = "S" if row["cells"][index] != "S" else "N"
    a = pictures.draw("speedphreakz", Scene((now,), ()))
    b = pictures.draw("speedphreakz", Scene((turned,), ()))
    assert a is not None and b is not None and differing_box(a.png, b.png) is not None
    before = deepcopy(dict(now))
    square_col = before["columns"].index("Square")
    for r in before["table"]:
        if r["cells"][square_col]:
            x, y = (int(v) for v in r["cells"][square_col].split(","))
            r["cells"][square_col] = f"{x + 3},{y}"
    with_path = pictures.draw("speedphreakz", Scene((before, now), ()))
    assert with_path is not None and differing_box(a.png, with_path.png) is not None


def test_markers_differ_in_shape_not_only_colour() -> None:
    """issue 11: readable in black and white: every player's marker has its own shape."""
    masks = [_marker_sprite(i, "A", 10, False)[1].tobytes() for i in range(len(SHAPES))]
    assert len(set(masks)) == len(SHAPES)


def test_a_picture_is_drawn_in_a_few_milliseconds() -> None:
    """issue 11 (performance): one picture per game per turn at a deadline of 500 games."""
    for kind, (count, turns) in SIZES.items():
        frames, events = play(kind, count, turns)
        keep = frames if pictures.needs_history(kind) else frames[-2:]
        scene = Scene(tuple(keep), tuple(events))
        pictures.draw(kind, scene)  # warm the caches (fonts, the track, stamps)
        start = time.perf_counter()
        for _ in range(5):
            pictures.draw(kind, scene)
        per_picture = (time.perf_counter() - start) / 5
        assert per_picture < 0.030, f"{kind}: {per_picture * 1000:.1f} ms a picture"


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(SIZES)), extra=st.integers(0, 4), turns=st.integers(0, 8),
       seed=st.integers(0, 10_000))
def test_the_picture_of_any_race_decodes_stays_small_and_names_everyone(kind: str, extra: int, turns: int,
                                                                       seed: int) -> None:
    """issue 11: whatever the race, the picture is a PNG under 150 KB at its stated size, and
    its alt text names every player of the public table."""
    game = find_game(kind)
    count = min(game.max_players, game.min_players + extra, len(NAMES))
    frames, events = play(kind, count, turns, seed)
    keep = frames if pictures.needs_history(kind) else frames[-2:]
    picture = pictures.draw(kind, Scene(tuple(keep), tuple(events)))
    assert picture is not None
    assert decode(picture.png).size == (picture.width, picture.height)
    assert len(picture.png) < pictures.MAX_BYTES
    assert all(row["player"] in picture.alt for row in frames[-1]["table"])


def test_an_unknown_game_has_no_picture() -> None:
    """issue 11: a game without a picture module gets none (the mail goes without)."""
    assert pictures.draw("no_such_game", Scene(({"table": []},), ())) is None


def test_speed_circuit_car_beside_the_track_is_drawn_at_that_space() -> None:
    """issue 11: every car where it ended the turn, also one the table shows as 'beside B12 (off track)'."""
    frames, events = _race_turn_frames()
    now = frames[-1]
    index = now["columns"].index("Space")
    player, space = next((p, s) for p, s in column(now, "Space").items() if s not in ("", "-"))
    beside = deepcopy(dict(now))
    gone = deepcopy(dict(now))
    for row in beside["table"]:
        if row["player"] == player:
            row["cells"][index] = f"beside {space} (off track)"
    for row in gone["table"]:
        if row["player"] == player:
            row["cells"][index] = "pits (entering)"
    plain = pictures.draw("speed_circuit", Scene((now,), ()))
    shown = pictures.draw("speed_circuit", Scene((beside,), ()))
    missing = pictures.draw("speed_circuit", Scene((gone,), ()))
    assert plain is not None and shown is not None and missing is not None
    geo = sc_picture.geometry(sc_picture._track_part(now["track_svg"]))
    assert geo is not None
    cx, cy = geo.spaces[space].centre
    x, y = cx - geo.box[0], cy - geo.box[1]
    assert diff_pixels(plain.png, shown.png, x, y) == 0
    assert diff_pixels(plain.png, missing.png, x, y) > 10
