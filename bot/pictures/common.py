"""Drawing helpers shared by the games' pictures: palette, fonts, player markers, PNG out.

Pictures go into mail, where clients show PNG but not SVG, and where some readers print in
black and white or cannot tell colours apart: every player is a *shape* with a *letter* in
it (colour only helps), and marks (crash, spin) are shapes too. Images are palette PNGs: a
few flat colours compress to a few kilobytes, which matters when one picture rides along
with thousands of results mails at a deadline.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw, ImageFont

if TYPE_CHECKING:
    from PIL._imaging import ImagingCore

# -- the palette: index -> RGB. Drawing uses the indices (mode "P").
WHITE, BLACK, GREY, LIGHT, DARK, PAPER = 0, 1, 2, 3, 4, 5
RED, BLUE, GREEN, ORANGE, PURPLE, TEAL, BROWN, PINK, OLIVE = 6, 7, 8, 9, 10, 11, 12, 13, 14
CORNER, GRASS, GRAVEL, OIL = 15, 16, 17, 18
PIT, FREE, WEAR, ROLL, DANGER, PALE = 19, 20, 21, 22, 23, 24
_RGB = [
    (255, 255, 255),
    (0, 0, 0),
    (150, 150, 150),
    (222, 222, 222),
    (90, 90, 90),
    (250, 248, 240),
    (214, 39, 40),
    (31, 119, 180),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (23, 190, 207),
    (140, 86, 75),
    (227, 119, 194),
    (188, 189, 34),
    (244, 206, 120),
    (170, 215, 150),
    (205, 190, 160),
    (60, 60, 90),
    (200, 214, 232),
    (190, 235, 190),
    (255, 236, 150),
    (255, 190, 120),
    (240, 120, 120),
    (242, 242, 242),
]
PLAYER_COLOURS = (RED, BLUE, GREEN, ORANGE, PURPLE, TEAL, BROWN, PINK, OLIVE)
SHAPES = ("circle", "square", "diamond", "triangle", "hexagon", "down", "octagon", "pentagon", "cross")

_PALETTE = bytes([channel for rgb in _RGB for channel in rgb] + [0] * (768 - 3 * len(_RGB)))
"""The palette as Pillow keeps it (bytes: a list would be copied into an array at each new sheet)."""


class Sheet:
    """A palette image being drawn, with cached stamps for what repeats (letters, markers).

    FreeType rendering costs ~0.1 ms a string; a chart has dozens, and the same names,
    numbers and markers come back turn after turn and game after game. Each distinct string
    and marker is rendered once per process and then pasted, which keeps a picture at a few
    milliseconds.
    """

    def __init__(self, width: int, height: int, background: int = WHITE, *, image: Image.Image | None = None) -> None:
        if image is None:
            image = Image.new("P", (width, height), background)
            image.putpalette(_PALETTE)
        self.image = image
        self.draw = ImageDraw.Draw(image)
        # The pixel store the stamps are pasted into straight (ImageDraw draws into it too):
        # `Image.paste` would check modes and load both images on every stamp, ~10 us each.
        self._core = image.im
        self._w, self._h = image.size
        self.smallest = 0
        """The smallest label drawn so far, text or a marker's letter, in px (0: none), for
        the legibility check."""
        self.clipped: list[str] = []
        """Text drawn running past an edge of the sheet (cut off): a picture shows none."""

    @property
    def width(self) -> int:
        return self.image.width

    @property
    def height(self) -> int:
        return self.image.height

    def copy(self) -> Sheet:
        sheet = Sheet(0, 0, image=self.image.copy())
        sheet.smallest = self.smallest
        sheet.clipped = list(self.clipped)
        return sheet

    def adopt(self, other: Sheet) -> Sheet:
        """This sheet, keeping the label record of `other` (a sheet it was cropped from)."""
        self.smallest, self.clipped = other.smallest, list(other.clipped)
        return self

    def paste(self, part: Sheet, xy: tuple[float, float]) -> None:
        """`part` drawn onto this sheet at `xy`, its label record kept: what was drawn past
        `part`'s edges is cut off there (a map band), and text it cut is recorded as clipped."""
        x, y = round(xy[0]), round(xy[1])
        self._core.paste(part.image.im, (x, y, x + part.width, y + part.height))
        if part.smallest:
            self.smallest = part.smallest if not self.smallest else min(self.smallest, part.smallest)
        self.clipped += part.clipped

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        size: int,
        fill: int = BLACK,
        anchor: str = "la",
        *,
        halo: int | None = None,
    ) -> None:
        """`text` at `xy` in `size` px; `halo`: a 1 px edge in that colour around the glyphs, so
        the text reads over a line or a fill drawn under it."""
        if not text:
            return
        self.smallest = size if not self.smallest else min(self.smallest, size)
        mask, left, top, w, h = _text_stamp(text, size, anchor)
        x, y = round(xy[0]) + left, round(xy[1]) + top
        if x < 0 or y < 0 or x + w > self._w or y + h > self._h:
            self.clipped.append(text)
        if halo is not None:
            self._core.paste(halo, (x - 1, y - 1, x + w + 1, y + h + 1), _halo_stamp(text, size, anchor))
        self._core.paste(fill, (x, y, x + w, y + h), mask)

    def text_width(self, text: str, size: int) -> int:
        """How wide `text` is drawn at `size` px (see `text_width`)."""
        return _text_width(text, size)

    def wrap(self, text: str, size: int, width: float) -> list[str]:
        """`text` in lines no wider than `width` at `size` (see `wrap`)."""
        return wrap(text, size, width)

    def fit(self, text: str, size: int, width: float) -> str:
        """`text` shortened to `width` at `size` (see `fit`)."""
        return fit(text, size, width)

    def marker(self, index: int, x: float, y: float, r: float, letter: str, *, hollow: bool = False) -> None:
        """A player's marker: their shape in their colour, outlined in black, their letter inside.

        `hollow` (white inside) marks a car that is not where it counts (crashed, waiting).
        """
        sprite, mask, side, size = _marker_stamp(index, letter, r, hollow)
        self.smallest = size if not self.smallest else min(self.smallest, size)
        left, top = round(x) - side // 2, round(y) - side // 2
        self._core.paste(sprite, (left, top, left + side, top + side), mask)

    def band(self, box: tuple[float, float, float, float], radius: float, fill: int, outline: int) -> None:
        """A rounded rectangle (`ImageDraw.rounded_rectangle`, 1 px outline), pasted from a
        stamp drawn once per box and sheet size: the same pixels as drawing it here."""
        stamp = _band_stamp(box, radius, fill, outline, self._w, self._h)
        if stamp is not None:
            sprite, mask, (left, top, right, bottom) = stamp
            self._core.paste(sprite, (left, top, right, bottom), mask)

    def png(self) -> bytes:
        """The image as PNG bytes: a palette image, zlib level 3.

        Level 3 encodes a typical picture in ~2 ms at ~13 KB; level 9 saves a third of the
        bytes but takes ~25 ms, which a deadline with hundreds of games cannot afford.
        """
        out = io.BytesIO()
        self.image.save(out, format="PNG", compress_level=3)
        return out.getvalue()


def text_width(text: str, size: int) -> int:
    """How wide `text` is drawn at `size` px: the ink of the one-bit drawing, as pasted
    (measuring the smoothed outline instead comes out ~5% narrower, and text fitted by it
    was cut at the edge)."""
    return _text_width(text, size)


def wrap(text: str, size: int, width: float) -> list[str]:
    """`text` in lines of whole words no wider than `width` at `size` (a word wider than
    that is broken across lines)."""
    lines: list[str] = []
    for whole in text.split():
        for word in _pieces(whole, size, width):
            if lines and _text_width(lines[-1] + " " + word, size) <= width:
                lines[-1] += " " + word
            else:
                lines.append(word)
    return lines


def _pieces(word: str, size: int, width: float) -> list[str]:
    """`word` broken into pieces no wider than `width` (a 30-character name may not be)."""
    pieces = [word]
    while _text_width(pieces[-1], size) > width and len(pieces[-1]) > 1:
        rest = pieces.pop()
        cut = max(1, next((k for k in range(len(rest) - 1, 0, -1) if _text_width(rest[:k], size) <= width), 1))
        pieces += [rest[:cut], rest[cut:]]
    return pieces


def fit(text: str, size: int, width: float) -> str:
    """`text`, shortened with a final "." until it is no wider than `width` at `size`."""
    while len(text) > 1 and _text_width(text, size) > width:
        text = text[:-2] + "."
    return text


@lru_cache(maxsize=8)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font (no system fonts needed, so every machine draws the same)."""
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=4096)
def _text_width(text: str, size: int) -> int:
    """Measured once per string and size (wrapping a paragraph measures every prefix), on
    the mask that is pasted, so a text fitted by its width is drawn no wider."""
    return _text_mask(text, size, "la")[0].width if text.strip() else 0


@lru_cache(maxsize=4096)
def _text_mask(text: str, size: int, anchor: str) -> tuple[Image.Image, tuple[int, int]]:
    """A one-bit mask of `text` and its offset from the anchor point (palette images take
    no anti-aliasing, so ImageDraw would draw one-bit text anyway)."""
    face = font(size)
    box = face.getbbox(text, anchor=anchor)
    # Whole pixels with a wide margin: one-bit glyphs come out ~5% wider than the smoothed
    # outline `getbbox` measures, and a mask cut to that box cut the end of long lines off.
    spare = 8 + math.ceil(0.15 * (box[2] - box[0]))
    left, top = math.floor(box[0]) - 2 - spare, math.floor(box[1]) - 4
    right, bottom = math.ceil(box[2]) + spare, math.ceil(box[3]) + 4
    mask = Image.new("1", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=face, fill=1, anchor=anchor)
    ink = mask.getbbox()
    if ink is None:
        return mask.crop((0, 0, 1, 1)), (left, top)
    return mask.crop(ink), (left + ink[0], top + ink[1])


@lru_cache(maxsize=4096)
def _halo_mask(text: str, size: int, anchor: str) -> Image.Image:
    """Where a 1 px edge around `text` falls: its one-bit mask (`_text_mask`) moved one pixel
    each of the eight ways, in one mask 2 px wider and taller, to be pasted 1 px up and left of
    the text (the same pixels as eight pastes of the mask, for one)."""
    mask = _text_mask(text, size, anchor)[0]
    edge = Image.new("1", (mask.width + 2, mask.height + 2), 0)
    for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, 1), (-1, 1), (1, -1)):
        edge.paste(1, (1 + dx, 1 + dy), mask)
    return edge


@lru_cache(maxsize=4096)
def _text_stamp(text: str, size: int, anchor: str) -> tuple[ImagingCore, int, int, int, int]:
    """`_text_mask` as `Sheet.text` pastes it: the mask's pixel store, its offset from the
    anchor point and its size (the same pixels as pasting the mask image)."""
    mask, (left, top) = _text_mask(text, size, anchor)
    return mask.im, left, top, mask.width, mask.height


@lru_cache(maxsize=1024)
def _halo_stamp(text: str, size: int, anchor: str) -> ImagingCore:
    """`_halo_mask`'s pixel store, as `Sheet.text` pastes it."""
    return _halo_mask(text, size, anchor).im


_KEY = 255  # a palette index never drawn with: the transparent ground of a sprite


@lru_cache(maxsize=128)
def _band_stamp(
    box: tuple[float, float, float, float], radius: float, fill: int, outline: int, width: int, height: int
) -> tuple[ImagingCore, ImagingCore, tuple[int, int, int, int]] | None:
    """`Sheet.band` drawn on a sheet of `width` x `height` whose ground is `_KEY` (a rounded
    rectangle sets every pixel it covers, whatever was under it), cut to what it covered: the
    stamp's and its mask's pixel stores and where they go; None when nothing is on the sheet."""
    if _KEY in (fill, outline):
        raise ValueError(f"palette index {_KEY} is a stamp's transparent ground")
    canvas = Sheet(width, height, _KEY)
    canvas.draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline)
    mask = _ground_mask(canvas.image)
    covered = mask.getbbox()
    if covered is None:
        return None
    return canvas.image.crop(covered).im, mask.crop(covered).im, covered


def _ground_mask(image: Image.Image) -> Image.Image:
    """A one-bit mask of `image`: set where it is not `_KEY`."""
    return image.point([0 if v == _KEY else 255 for v in range(256)], "L").point(lambda v: 255 if v else 0, "1")


@lru_cache(maxsize=512)
def _marker_sprite(index: int, letter: str, r: int, hollow: bool) -> tuple[Image.Image, Image.Image]:
    shape = SHAPES[index]
    # Triangles have less room inside: drawn larger, so every shape holds the same letter.
    narrow = shape in ("triangle", "down")
    outer = r * 1.3 if narrow else r
    size = 2 * math.ceil(outer) + 6
    sheet = Sheet(size, size, _KEY)
    c = size / 2
    fill = WHITE if hollow else PLAYER_COLOURS[index % len(PLAYER_COLOURS)]
    points = shape_points(shape, c, c, outer)
    if points:
        sheet.draw.polygon(points, fill=fill, outline=BLACK, width=2)
    else:
        sheet.draw.ellipse((c - r, c - r, c + r, c + r), fill=fill, outline=BLACK, width=2)
    text_size = letter_size(r)
    ty = c + (outer * (0.2 if shape == "triangle" else -0.2) if narrow else 0)
    # A white letter with a black edge reads on every fill and in greyscale.
    sheet.draw.text(
        (c, ty),
        letter,
        font=font(text_size),
        fill=BLACK if hollow else WHITE,
        anchor="mm",
        stroke_width=0 if hollow else 2,
        stroke_fill=BLACK,
    )
    return sheet.image, _ground_mask(sheet.image)


@lru_cache(maxsize=512)
def _marker_stamp(index: int, letter: str, r: float, hollow: bool) -> tuple[ImagingCore, ImagingCore, int, int]:
    """`Sheet.marker`'s arguments to what it pastes: `_marker_sprite`'s sprite and mask (their
    pixel stores), the sprite's side (it is square) and the letter's size."""
    sprite, mask = _marker_sprite(index % len(SHAPES), letter[:1].upper(), int(r), hollow)
    return sprite.im, mask.im, sprite.width, letter_size(int(r))


def letter_size(r: int) -> int:
    """The size of the letter in a marker of radius `r` (every shape holds the same)."""
    return max(8, int(r * 1.05))


def shape_points(shape: str, x: float, y: float, r: float) -> list[tuple[float, float]]:
    """The outline of a marker shape centred on (x, y) with radius r (circle: none)."""

    def ring(n: int, start: float) -> list[tuple[float, float]]:
        return [
            (x + r * math.cos(start + 2 * math.pi * k / n), y + r * math.sin(start + 2 * math.pi * k / n))
            for k in range(n)
        ]

    if shape == "square":
        s = r * 0.85
        return [(x - s, y - s), (x + s, y - s), (x + s, y + s), (x - s, y + s)]
    if shape == "diamond":
        return ring(4, -math.pi / 2)
    if shape == "triangle":
        return ring(3, -math.pi / 2)
    if shape == "down":
        return ring(3, math.pi / 2)
    if shape == "hexagon":
        return ring(6, 0)
    if shape == "octagon":
        return ring(8, math.pi / 8)
    if shape == "pentagon":
        return ring(5, -math.pi / 2)
    if shape == "cross":
        a, b = r, r * 0.4
        return [
            (x - b, y - a),
            (x + b, y - a),
            (x + b, y - b),
            (x + a, y - b),
            (x + a, y + b),
            (x + b, y + b),
            (x + b, y + a),
            (x - b, y + a),
            (x - b, y + b),
            (x - a, y + b),
            (x - a, y - b),
            (x - b, y - b),
        ]
    return []


def crash_mark(draw: ImageDraw.ImageDraw, x: float, y: float, r: float) -> None:
    """A bold X in a white-edged black burst: a crash."""
    for width, fill in ((7, WHITE), (4, BLACK)):
        draw.line((x - r, y - r, x + r, y + r), fill=fill, width=width)
        draw.line((x - r, y + r, x + r, y - r), fill=fill, width=width)


def spin_mark(draw: ImageDraw.ImageDraw, x: float, y: float, r: float) -> None:
    """An open ring with an arrow head: a spin."""
    box = (x - r, y - r, x + r, y + r)
    draw.arc(box, 30, 330, fill=WHITE, width=6)
    draw.arc(box, 30, 330, fill=BLACK, width=3)
    tip = (x + r * math.cos(math.radians(330)), y + r * math.sin(math.radians(330)))
    draw.polygon([(tip[0] - 5, tip[1] - 6), (tip[0] + 6, tip[1] - 2), (tip[0] - 1, tip[1] + 6)], fill=BLACK)


def dotted_path(
    draw: ImageDraw.ImageDraw,
    points: Sequence[tuple[float, float]],
    fill: int,
    *,
    width: int = 3,
    dash: float = 6.0,
    gap: float = 4.0,
) -> None:
    """A dashed polyline (Pillow has none): a car's path, readable over any fill."""
    carry = 0.0
    on = True
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        length = math.hypot(x1 - x0, y1 - y0)
        if length == 0:
            continue
        pos = 0.0
        while pos < length:
            step = min((dash if on else gap) - carry, length - pos)
            if on:
                a, b = pos / length, (pos + step) / length
                draw.line(
                    (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a, x0 + (x1 - x0) * b, y0 + (y1 - y0) * b),
                    fill=fill,
                    width=width,
                )
            pos += step
            carry += step
            if carry >= (dash if on else gap) - 1e-9:
                carry = 0.0
                on = not on


def arrow_head(
    draw: ImageDraw.ImageDraw, tip: tuple[float, float], angle: float, size: float, fill: int = BLACK
) -> None:
    """A filled triangle pointing along `angle` (radians, screen coordinates) with its tip at `tip`."""
    x, y = tip
    back = (x - size * math.cos(angle), y - size * math.sin(angle))
    side = size * 0.55
    left = (back[0] + side * math.cos(angle + math.pi / 2), back[1] + side * math.sin(angle + math.pi / 2))
    right = (back[0] + side * math.cos(angle - math.pi / 2), back[1] + side * math.sin(angle - math.pi / 2))
    draw.polygon([tip, left, right], fill=fill, outline=WHITE)


def letters_for(names: Iterable[str]) -> dict[str, str]:
    """A distinct letter per player: their initial where it is free, else the next free one."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        letter = next((u for c in name if c.isalnum() and (u := c.upper()) not in taken), None)
        if letter is None:
            letter = next((c for c in _ALPHABET if c not in taken), "?")
        taken.add(letter)
        out[name] = letter
    return out


_ALPHABET = tuple(chr(ord("A") + k) for k in range(26))


def hatch(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], fill: int, step: int = 5) -> None:
    """Diagonal lines ('/') across `box`: a pattern, so an area reads without its colour."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    c = float(step)
    while c < w + h:
        top = (x0 + c, y0) if c <= w else (x1, y0 + c - w)
        left = (x0, y0 + c) if c <= h else (x0 + c - h, y1)
        draw.line((top, left), fill=fill, width=1)
        c += step


def shorten(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "."


Icon = Callable[["Sheet", float, float], None]
"""Draws a key entry's sample with its left edge at x, centred on y."""


@dataclass(frozen=True, slots=True)
class KeyEntry:
    """One entry of a picture's key: a sample `icon_w` px wide, and what it means."""

    icon_w: int
    icon: Icon
    text: str


def lay_key(
    entries: Sequence[KeyEntry], size: int, width: float, gap: int = 12
) -> list[tuple[float, int, KeyEntry, list[str]]]:
    """Where each entry of a key goes, left to right and onto a new line when the next does
    not fit (never cut at the edge): (x, line, entry, its text's lines), x from the key's left
    edge and lines counted from 0; an entry wider than the whole key has its text wrapped."""
    probe = Sheet(1, 1)
    placed: list[tuple[float, int, KeyEntry, list[str]]] = []
    x, line, below = 0.0, 0, 1
    for entry in entries:
        lead = entry.icon_w + (4 if entry.icon_w else 0)
        w = lead + probe.text_width(entry.text, size)
        if x > 0 and x + w > width:
            x, line, below = 0.0, line + below, 1
        lines = [entry.text] if w <= width else probe.wrap(entry.text, size, width - lead)
        placed.append((x, line, entry, lines))
        below = max(below, len(lines))
        if len(lines) > 1:
            x, line, below = 0.0, line + len(lines), 1
        else:
            x += w + gap
    return placed


def key_lines(entries: Sequence[KeyEntry], size: int, width: float, gap: int = 12) -> int:
    """How many lines the key takes (see `lay_key`)."""
    return max((line + len(lines) for _, line, _, lines in lay_key(entries, size, width, gap)), default=0)


def draw_key(
    sheet: Sheet, entries: Sequence[KeyEntry], xy: tuple[float, float], size: int, width: float, line_h: int
) -> float:
    """The key drawn from `xy` (the middle of its first line); returns the middle of the line under it."""
    x0, y0 = xy
    placed = lay_key(entries, size, width)
    for x, line, entry, lines in placed:
        y = y0 + line * line_h
        if entry.icon_w:
            entry.icon(sheet, x0 + x, y)
        lead = entry.icon_w + (4 if entry.icon_w else 0)
        for k, text in enumerate(lines):
            sheet.text((x0 + x + lead, y + k * line_h), text, size, BLACK, "lm")
    return y0 + key_lines(entries, size, width) * line_h
