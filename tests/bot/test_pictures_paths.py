"""SpeedPhreakz pictures follow the squares a car drove through (the view's ``paths`` extra)."""

from __future__ import annotations

import io
from copy import deepcopy
from typing import Any

from PIL import Image

from bot import pictures
from bot.pictures import Scene
from tests.bot.test_pictures import play


def pixels(png: bytes) -> Any:
    return Image.open(io.BytesIO(png)).convert("RGB")


def test_the_path_bends_where_the_car_turned() -> None:
    """issue 11: SpeedPhreakz: the grid map with every car, its heading and its path this round."""
    frames, _ = play("speedphreakz", 3, 3)
    now = deepcopy(dict(frames[-1]))
    square_col = now["columns"].index("Square")
    row = next(r for r in now["table"] if r["cells"][square_col])
    x, y = (int(v) for v in row["cells"][square_col].split(","))
    before = deepcopy(now)
    start_row = next(r for r in before["table"] if r["player"] == row["player"])
    start_row["cells"][square_col] = f"{x - 2},{y - 2}"
    straight = dict(now, paths={})
    bent = dict(now, paths={row["player"]: [f"{x - 2},{y - 2}", f"{x - 2},{y}", f"{x - 1},{y}", f"{x},{y}"]})
    a = pictures.draw("speedphreakz", Scene((before, straight), ()))
    b = pictures.draw("speedphreakz", Scene((before, bent), ()))
    assert a is not None and b is not None
    img_a, img_b = pixels(a.png), pixels(b.png)
    assert img_a.size == img_b.size
    diff = [(px, py) for px in range(img_a.size[0]) for py in range(img_a.size[1])
            if img_a.getpixel((px, py)) != img_b.getpixel((px, py))]
    assert diff, "a path through other squares must be drawn differently from the straight line"
