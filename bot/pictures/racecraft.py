"""Racecraft: the race as a chart of positions over the turns, with each player's EP.

Columns are the grid and each turn of the race (the whole race is drawn, turns not yet run
stay empty); rows are the race order, front at the top. Each runner is a line through their
marker (shape + letter) at every turn, the EP they had after that turn printed beside it.
Runners sharing a place sit in one grey band. Only the public views' runners (place and EP,
`RacecraftView.runners`) and standings are read.
"""

from __future__ import annotations

from bot.pictures import Picture, Scene, typed_view
from bot.pictures.common import (
    BLACK,
    DARK,
    GREY,
    LIGHT,
    PLAYER_COLOURS,
    Sheet,
    letters_for,
    shorten,
)
from rules.racecraft import RacecraftView

HISTORY = True  # the chart needs every turn since the start

WIDTH = 640
TOP = 44
LEFT = 44
LEGEND = 160
SLOT = 38
BOTTOM = 34


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
    height = TOP + slots * SLOT + BOTTOM
    sheet = Sheet(WIDTH, height)
    draw_ = sheet.draw
    chart_w = WIDTH - LEFT - LEGEND - 40
    step = chart_w / turns

    def x_of(t: int) -> float:
        return LEFT + 14 + t * step

    def y_of(slot: int) -> float:
        return TOP + slot * SLOT + SLOT / 2

    sheet.text((LEFT, 6), f"{now.title or 'Racecraft'}: {moment(len(frames) - 1)}", 14, BLACK)
    sheet.text((6, y_of(0)), "front", 11, DARK, "lm")
    sheet.text((6, y_of(slots - 1)), "back", 11, DARK, "lm")
    for slot in range(slots):
        draw_.line((LEFT, y_of(slot), x_of(turns) + 10, y_of(slot)), fill=LIGHT, width=1)
    for t in range(turns + 1):
        label = "Grid" if t == 0 else f"T{t}"
        sheet.text((x_of(t), TOP - 10), label, 11, DARK if t < len(frames) else GREY, "mm")

    # Where each runner stands at each frame: slot (row in the table) and EP.
    points: dict[str, list[tuple[int, int, str]]] = {p: [] for p in seating}
    for t, view in enumerate(frames):
        ep = _ep(view)
        order = _order(view)
        by_place: dict[int, list[int]] = {}
        for slot, (player, place) in enumerate(order):
            points.setdefault(player, []).append((t, slot, ep.get(player, "")))
            by_place.setdefault(place, []).append(slot)
        for group in by_place.values():
            if len(group) > 1:  # a shared place: one band behind the runners who share it
                top, bottom = y_of(min(group)) - SLOT / 2 + 3, y_of(max(group)) + SLOT / 2 - 3
                draw_.rounded_rectangle((x_of(t) - 15, top, x_of(t) + 15, bottom), radius=8, fill=LIGHT, outline=GREY)

    for player, track in points.items():
        colour = PLAYER_COLOURS[index.get(player, 0) % len(PLAYER_COLOURS)]
        line = [(x_of(t), y_of(slot)) for t, slot, _ in track]
        if len(line) > 1:
            draw_.line(line, fill=colour, width=3, joint="curve")
    for player, track in points.items():
        for t, slot, ep_then in track:
            sheet.marker(index.get(player, 0), x_of(t), y_of(slot), 11, letters.get(player, "?"))
            if ep_then:
                sheet.text((x_of(t) + 12, y_of(slot) + 5), ep_then, 11, BLACK, "lt")

    # The legend: race order now, each runner's marker, name and EP.
    lx = WIDTH - LEGEND
    ep_now = _ep(now)
    sheet.text((lx, TOP - 16), "Place now", 11, DARK)
    for slot, (player, place) in enumerate(_order(now)):
        y = y_of(slot)
        sheet.marker(index.get(player, 0), lx + 10, y, 9, letters.get(player, "?"))
        sheet.text((lx + 24, y), f"{place}. {shorten(player, 12)}", 12, BLACK, "lm")
        if ep_now.get(player, ""):
            sheet.text((WIDTH - 8, y), f"{ep_now[player]} EP", 12, BLACK, "rm")
    sheet.text((LEFT, height - 22), "Number by a marker: EP after that turn. Grey band: sharing a place.", 11, DARK)
    return Picture(sheet.png(), alt_text(now, len(frames) - 1), WIDTH, height, sheet.smallest)


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
