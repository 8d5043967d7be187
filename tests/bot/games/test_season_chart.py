"""A season's chart of points over races (bot.pictures.season_chart; "a season page
with the table and a chart of points over races, legible at 360 px"): one line per driver from
0 through the points after each race, the races planned along the bottom, and every line's end
label readable (apart from the others, on the canvas)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.pictures.season_chart import HEIGHT, LABEL_GAP, LEFT, WIDTH, chart


def test_a_line_per_driver_from_zero_through_each_race() -> None:
    drawn = chart([("1", "Ann", 43, (25, 43)), ("2", "Bob", 25, (18, 25))], planned=3)
    assert drawn is not None
    assert [t.label for t in drawn.x_ticks] == ["1", "2", "3"]
    ann, bob = drawn.lines
    points = [tuple(float(v) for v in dot.split(",")) for dot in ann.path.split()]
    assert len(points) == 3 and points[0] == (LEFT, drawn.zero), "from 0 before the first race"
    assert points[2][1] < points[1][1] < points[0][1], "more points higher up"
    assert ann.colour != bob.colour and (ann.place, bob.place) == ("1", "2")
    assert "50" in [t.label for t in drawn.y_ticks] and "0" in [t.label for t in drawn.y_ticks]
    assert chart([("1", "Ann", 0, ())], planned=3) is None, "no chart before a race counts"


def test_penalties_below_zero_and_thirty_races_keep_to_the_canvas() -> None:
    drawn = chart([("1", "Ann", 5, tuple([5] * 30)), ("2", "Bob", -10, tuple([-10] * 30))], planned=30)
    assert drawn is not None
    assert len(drawn.x_ticks) <= 11 and drawn.x_ticks[-1].label == "30"
    assert drawn.zero < drawn.bottom and "-10" in [t.label for t in drawn.y_ticks]
    assert all(0 <= t.at <= WIDTH for t in drawn.x_ticks)


@given(st.lists(st.lists(st.integers(-50, 300), min_size=3, max_size=3), min_size=1, max_size=12))
def test_end_labels_are_apart_and_on_the_canvas(runs: list[list[int]]) -> None:
    rows = [(str(i + 1), f"d{i}", r[-1], tuple(r)) for i, r in enumerate(runs)]
    drawn = chart(rows, planned=5)
    assert drawn is not None
    ys = sorted(line.label_y for line in drawn.lines)
    assert all(b - a >= LABEL_GAP - 0.11 for a, b in zip(ys, ys[1:], strict=False))
    assert ys[-1] <= HEIGHT - 4
