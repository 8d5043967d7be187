"""SpeedPhreakz pictures follow the squares a car drove through (each car's ``trail`` in the view)."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

from PIL import Image

from bench.budgets import play
from bot import pictures
from bot.pictures import Scene
from rules.speedphreakz import SpeedPhreakzView, Square


def pixels(png: bytes) -> Any:
    return Image.open(io.BytesIO(png)).convert("RGB")


def test_the_path_bends_where_the_car_turned() -> None:
    """SpeedPhreakz: the grid map with every car, its heading and its path this round."""
    frames, _ = play("speedphreakz", 3, 3)
    now = frames[-1]
    assert isinstance(now, SpeedPhreakzView)
    car = next(c for c in now.cars if c.square is not None)
    assert car.square is not None
    x, y = car.square.x, car.square.y
    start = Square(x - 2, y - 2)
    before = dataclasses.replace(
        now, cars=tuple(dataclasses.replace(c, square=start) if c is car else c for c in now.cars)
    )

    def with_trail(trail: tuple[Square, ...]) -> SpeedPhreakzView:
        return dataclasses.replace(
            now, cars=tuple(dataclasses.replace(c, trail=trail if c is car else ()) for c in now.cars)
        )

    straight = with_trail(())
    bent = with_trail((start, Square(x - 2, y), Square(x - 1, y), Square(x, y)))
    a = pictures.draw("speedphreakz", Scene((before, straight), ()))
    b = pictures.draw("speedphreakz", Scene((before, bent), ()))
    assert a is not None and b is not None
    img_a, img_b = pixels(a.png), pixels(b.png)
    assert img_a.size == img_b.size
    diff = [
        (px, py)
        for px in range(img_a.size[0])
        for py in range(img_a.size[1])
        if img_a.getpixel((px, py)) != img_b.getpixel((px, py))
    ]
    assert diff, "a path through other squares must be drawn differently from the straight line"
