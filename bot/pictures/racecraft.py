"""Racecraft: the race as a chart of positions over the turns, with each player's EP.

The chart is drawn for a phone: at most `WIDTH` px wide, the width a 360 px
screen gives a picture, so it is shown unscaled and no label is under 10 px. It runs top to
bottom: one row for the grid and for each turn of the race (the whole race is drawn, turns
not yet run stay empty); across each row the race order, the front on the left. Each runner
is a line through their marker (shape + letter) at every turn, the EP they had after that
turn printed beside it. Runners sharing a place sit in one grey band. Under the chart, the
order now in two columns. Only the public views' runners (place and EP,
`RacecraftView.runners`) and standings are read.
"""

from __future__ import annotations

from functools import lru_cache

from bot.pictures import Picture, Scene, typed_view
from bot.pictures.common import (
    BLACK,
    DARK,
    GREY,
    LIGHT,
    PLAYER_COLOURS,
    WHITE,
    Sheet,
    letters_for,
    text_width,
    wrap,
)
from rules.racecraft import RacecraftView

HISTORY = True  # the chart needs every turn since the start

WIDTH = 326  # bot.pictures.PHONE_WIDTH: shown unscaled on a 360 px phone
MARGIN = 4
LEFT = 34  # the turn labels
ROW = 30
TEXT = 10  # the smallest label (EP, turn labels, legend)
R = 10  # marker radius: a 10 px letter
LINE = 24  # a legend line


def _order(view: RacecraftView) -> list[tuple[str, int]]:
    """(player, place) in race order."""
    return [(runner.player, runner.place) for runner in view.runners]


def _ep(view: RacecraftView) -> dict[str, str]:
    """Each runner's EP, as printed."""
    return {runner.player: str(runner.ep) for runner in view.runners}


def draw(scene: Scene) -> Picture:
    frames = [typed_view(frame, RacecraftView) for frame in scene.frames]
    now = frames[-1]
    seating = sorted({p for p, _ in _order(frames[0])} | {p for p, _ in _order(now)})
    index = {p: i for i, p in enumerate(seating)}
    letters = letters_for(seating)
    turns = max(now.turns, len(frames) - 1, 1)
    slots = max(len(seating), 1)
    title = wrap(f"{now.title or 'Racecraft'}: {moment(len(frames) - 1)}", 12, WIDTH - 2 * MARGIN)
    key = wrap("Number by a marker: EP after that turn. Grey band: sharing a place.", TEXT, WIDTH - 2 * MARGIN)
    top = MARGIN + 16 * len(title) + 18  # title, then "front ... back"
    chart_bottom = top + (turns + 1) * ROW
    order_now = _order(now)
    legend_rows = (len(order_now) + 1) // 2
    legend_top = chart_bottom + 8
    key_top = legend_top + 16 + legend_rows * LINE + 4
    height = key_top + 14 * len(key) + MARGIN
    sheet = _ground(tuple(title), turns, len(frames), slots, height).copy()
    draw_ = sheet.draw
    step = (WIDTH - LEFT - MARGIN) / slots

    # Where each slot's column and each turn's row run (len(frames) <= turns + 1).
    columns = max([slots] + [len(view.runners) for view in frames])
    x_of = [LEFT + slot * step + min(step / 2, R + 2) for slot in range(columns)]
    y_of = [top + t * ROW + ROW / 2 for t in range(turns + 1)]

    # Where each runner stands at each frame: slot (column in the row) and EP.
    points: dict[str, list[tuple[int, int, str]]] = {p: [] for p in seating}
    for t, view in enumerate(frames):
        ep = _ep(view)
        by_place: dict[int, list[int]] = {}
        for slot, (player, place) in enumerate(_order(view)):
            points.setdefault(player, []).append((t, slot, ep.get(player, "")))
            by_place.setdefault(place, []).append(slot)
        for group in by_place.values():
            if len(group) > 1:  # a shared place: one band behind the runners who share it
                left, right = x_of[min(group)] - R - 3, x_of[max(group)] + step - R - 5
                sheet.band((left, y_of[t] - ROW / 2 + 2, right, y_of[t] + ROW / 2 - 2), 8, LIGHT, GREY)

    for player, track in points.items():
        colour = PLAYER_COLOURS[index.get(player, 0) % len(PLAYER_COLOURS)]
        path = [(x_of[slot], y_of[t]) for t, slot, _ in track]
        if len(path) > 1:
            draw_.line(path, fill=colour, width=3, joint="curve")
    for player, track in points.items():
        for t, slot, ep_then in track:
            sheet.marker(index.get(player, 0), x_of[slot], y_of[t], R, letters.get(player, "?"))
            if ep_then:
                sheet.text((x_of[slot] + R + 2, y_of[t] + 2), ep_then, TEXT, BLACK, "lt", halo=WHITE)

    # The order now, in two columns: each runner's marker, place and name, and EP.
    ep_now = _ep(now)
    sheet.text((MARGIN, legend_top), "Place now", TEXT, DARK)
    half = (WIDTH - 2 * MARGIN) // 2
    for k, (player, place) in enumerate(order_now):
        x = MARGIN + (k // legend_rows) * half
        y = legend_top + 16 + (k % legend_rows) * LINE + LINE / 2
        sheet.marker(index.get(player, 0), x + R, y, R, letters.get(player, "?"))
        ep_text = f"{ep_now[player]} EP" if ep_now.get(player, "") else ""
        room = half - 2 * R - 6 - (text_width(ep_text, TEXT) + 6 if ep_text else 0) - 4
        sheet.text((x + 2 * R + 4, y), sheet.fit(f"{place}. {player}", TEXT, room), TEXT, BLACK, "lm")
        if ep_text:
            sheet.text((x + half - 4, y), ep_text, TEXT, BLACK, "rm")
    for k, line in enumerate(key):
        sheet.text((MARGIN, key_top + 14 * k), line, TEXT, DARK)
    return Picture(sheet.png(), alt_text(now, len(frames) - 1), WIDTH, height, sheet.smallest, tuple(sheet.clipped))


@lru_cache(maxsize=32)
def _ground(title: tuple[str, ...], turns: int, done: int, slots: int, height: int) -> Sheet:
    """What a chart of `turns` turns and `slots` runners, `done` frames drawn (rows after
    those grey), shows before its first runner: the title's lines, "front" and "back", a
    column per slot and a label per row, on a sheet `height` px high. Shared: copy it
    (`Sheet.copy`) before drawing on it. A deadline's charts differ in these only by their
    field and turn, so a few dozen grounds (about 130 KB each) serve all of them."""
    sheet = Sheet(WIDTH, height)
    top = MARGIN + 16 * len(title) + 18
    chart_bottom = top + (turns + 1) * ROW
    step = (WIDTH - LEFT - MARGIN) / slots
    for k, line in enumerate(title):
        sheet.text((MARGIN, MARGIN + 16 * k), line, 12, BLACK)
    sheet.text((LEFT, top - 4), "front", TEXT, DARK, "ld")
    sheet.text((WIDTH - MARGIN, top - 4), "back", TEXT, DARK, "rd")
    for slot in range(slots):
        x = LEFT + slot * step + min(step / 2, R + 2)
        sheet.draw.line((x, top, x, chart_bottom), fill=LIGHT, width=1)
    for t in range(turns + 1):
        label = "Grid" if t == 0 else f"T{t}"
        sheet.text((MARGIN, top + t * ROW + ROW / 2), label, TEXT, DARK if t < done else GREY, "lm")
    return sheet


def moment(done: int) -> str:
    """When the chart stands: the picture of a results mail is *after* the turn reported."""
    return "on the grid, before the start" if done == 0 else f"positions after turn {done}"


def alt_text(view: RacecraftView, done: int) -> str:
    ep = _ep(view)
    places = "; ".join(
        f"{p.place}. " + ", ".join(f"{name} ({ep[name]} EP)" if ep.get(name) else name for name in p.players)
        for p in view.standings
    )
    return f"Race chart of positions over the turns, {moment(done)}: {places}."
