"""The drawing's caches against the drawing without them: every stamp `Sheet` pastes from a
cache (a label's mask, its halo, a marker) gives the pixels and the PNG bytes of the same
thing made afresh and pasted through `Image.paste`, wherever it lands, also past an edge."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from bench.budgets import play
from bot import pictures
from bot.pictures import Scene
from bot.pictures import racecraft as rc_picture
from bot.pictures.common import (
    BLACK,
    SHAPES,
    WHITE,
    Sheet,
    _marker_sprite,
    _text_mask,
    letters_for,
)
from tests.settled import examples

TEXTS = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x24F), min_size=0, max_size=12)


def _fresh_text_mask(text: str, size: int, anchor: str) -> tuple[Image.Image, tuple[int, int]]:
    mask, at = _text_mask.__wrapped__(text, size, anchor)
    return mask, at


def _fresh_halo_mask(text: str, size: int, anchor: str) -> Image.Image:
    """`_halo_mask` made afresh, from a mask made afresh (no cache in the way)."""
    mask = _fresh_text_mask(text, size, anchor)[0]
    edge = Image.new("1", (mask.width + 2, mask.height + 2), 0)
    for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, 1), (-1, 1), (1, -1)):
        edge.paste(1, (1 + dx, 1 + dy), mask)
    return edge


@settings(max_examples=examples(40, 150), deadline=None)
@given(
    TEXTS,
    st.sampled_from([8, 9, 10, 11, 12, 14, 20]),
    st.sampled_from(["la", "lm", "lt", "ld", "mm", "rm", "rd", "ra", "rs"]),
    st.integers(-20, 70),
    st.integers(-20, 50),
    st.sampled_from([BLACK, 2, 6]),
    st.sampled_from([None, WHITE, 15]),
)
def test_text_from_its_cached_stamps_is_the_text_pasted_afresh(
    text: str, size: int, anchor: str, x: int, y: int, fill: int, halo: int | None
) -> None:
    """`Sheet.text` (its mask and halo pasted from the caches into the image's pixel store)
    draws the pixels, the label record and the PNG of masks made afresh and pasted through
    `Image.paste`; twice, so the second draws from a warm cache."""
    for _ in range(2):
        sheet = Sheet(64, 40, WHITE)
        sheet.text((x, y), text, size, fill, anchor, halo=halo)
        by_hand = Sheet(64, 40, WHITE)
        if text:
            mask, (left, top) = _fresh_text_mask(text, size, anchor)
            at = (x + left, y + top)
            if halo is not None:
                by_hand.image.paste(halo, (at[0] - 1, at[1] - 1), _fresh_halo_mask(text, size, anchor))
            by_hand.image.paste(fill, at, mask)
            inside = 0 <= at[0] and 0 <= at[1] and at[0] + mask.width <= 64 and at[1] + mask.height <= 40
            assert sheet.clipped == ([] if inside else [text])
            assert sheet.smallest == size
        assert sheet.image.tobytes() == by_hand.image.tobytes()
        assert sheet.png() == by_hand.png()


@settings(max_examples=examples(40, 150), deadline=None)
@given(
    st.integers(0, 20),
    st.sampled_from(["A", "b", "Z", "7", "?", "É"]),
    st.sampled_from([6, 8, 10, 10.0, 10.7, 12, 14]),
    st.booleans(),
    st.floats(-15, 60, allow_nan=False),
    st.floats(-15, 60, allow_nan=False),
)
def test_a_marker_from_its_cached_stamp_is_the_sprite_pasted_afresh(
    index: int, letter: str, r: float, hollow: bool, x: float, y: float
) -> None:
    """`Sheet.marker` (the sprite and its mask pasted from the cache into the image's pixel
    store) draws the pixels and the PNG of the sprite made afresh and pasted through
    `Image.paste`, over what was drawn under it; twice, the second from a warm cache."""
    for _ in range(2):
        sheet = Sheet(48, 48, WHITE)
        sheet.draw.rectangle((5, 5, 30, 30), fill=3)
        sheet.marker(index, x, y, r, letter, hollow=hollow)
        by_hand = Sheet(48, 48, WHITE)
        by_hand.draw.rectangle((5, 5, 30, 30), fill=3)
        sprite, mask = _marker_sprite.__wrapped__(index % len(SHAPES), letter.upper(), int(r), hollow)
        half = sprite.width // 2
        by_hand.image.paste(sprite, (round(x) - half, round(y) - half), mask)
        assert sheet.image.tobytes() == by_hand.image.tobytes()
        assert sheet.png() == by_hand.png()


@settings(max_examples=examples(30, 100), deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.floats(-40, 60, allow_nan=False), st.floats(-40, 60, allow_nan=False))
def test_a_part_pasted_into_the_pixel_store_is_the_part_pasted_through_pillow(
    w: int, h: int, x: float, y: float
) -> None:
    """`Sheet.paste` (into the image's pixel store) gives the pixels of `Image.paste`, also for a
    part that runs past the sheet's edges."""
    part = Sheet(w, h, 3)
    part.draw.line((0, 0, w, h), fill=BLACK, width=2)
    sheet = Sheet(40, 30, WHITE)
    sheet.paste(part, (x, y))
    by_hand = Sheet(40, 30, WHITE)
    by_hand.image.paste(part.image, (round(x), round(y)))
    assert sheet.image.tobytes() == by_hand.image.tobytes()


def _letters_by_the_list(names: list[str]) -> dict[str, str]:
    """`letters_for` as first written: every name's choices listed in full, then the first free."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        choices = [c.upper() for c in name if c.isalnum()] + [chr(ord("A") + k) for k in range(26)]
        letter = next((c for c in choices if c not in taken), "?")
        taken.add(letter)
        out[name] = letter
    return out


@settings(max_examples=examples(60, 300), deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x24F), max_size=6), max_size=30))
def test_letters_for_picks_the_letters_of_the_full_list_of_choices(names: list[str]) -> None:
    """`letters_for` (a name's own letters tried first, the alphabet only when none is free)
    gives each player the letter the full list of choices gives, also past 26 players ("?")."""
    assert letters_for(names) == _letters_by_the_list(names)


COORD = st.floats(-20, 90, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=examples(40, 150), deadline=None)
@given(
    st.tuples(COORD, COORD, st.floats(0, 80, allow_nan=False), st.floats(0, 40, allow_nan=False)),
    st.sampled_from([0, 3, 8, 8.5]),
    st.sampled_from([(3, 2), (6, 1), (0, 4)]),
    st.integers(1, 90),
    st.integers(1, 60),
)
def test_a_band_from_its_cached_stamp_is_the_rounded_rectangle_drawn_there(
    box: tuple[float, float, float, float],
    radius: float,
    colours: tuple[int, int],
    width: int,
    height: int,
) -> None:
    """`Sheet.band` (a stamp drawn once per box and sheet size, pasted) gives the pixels and the
    PNG of `ImageDraw.rounded_rectangle` drawn on the sheet itself, over what was under it,
    also where the band runs past the sheet's edges; twice, the second from a warm cache."""
    left, top, w, h = box
    xy = (left, top, left + w, top + h)
    fill, outline = colours
    for _ in range(2):
        sheet = Sheet(width, height, WHITE)
        sheet.draw.line((0, 0, width, height), fill=BLACK, width=3)
        by_hand = Sheet(width, height, WHITE)
        by_hand.draw.line((0, 0, width, height), fill=BLACK, width=3)
        try:
            by_hand.draw.rounded_rectangle(xy, radius=radius, fill=fill, outline=outline)
        except ValueError:  # Pillow refuses some boxes thinner than the corners: so does the band
            with pytest.raises(ValueError):
                sheet.band(xy, radius, fill, outline)
            return
        sheet.band(xy, radius, fill, outline)
        assert sheet.image.tobytes() == by_hand.image.tobytes()
        assert sheet.png() == by_hand.png()


@settings(max_examples=examples(15, 60), deadline=None)
@given(st.integers(5, 8), st.integers(0, 7), st.integers(0, 10_000))
def test_a_racecraft_chart_on_its_cached_ground_is_the_chart_drawn_whole(count: int, turns: int, seed: int) -> None:
    """A Racecraft chart drawn on a copy of its cached ground (title, columns, row labels) is
    the PNG, size and label record of the chart with the ground drawn afresh for it; and the
    shared ground is left as it was (another race of the same size drawn on it in between)."""
    frames, events = play("racecraft", count, turns, seed)
    scene = Scene(tuple(frames), tuple(events))
    other, _ = play("racecraft", count, turns, seed + 1)
    cached = pictures.draw("racecraft", scene)
    pictures.draw("racecraft", Scene(tuple(other), ()))
    again = pictures.draw("racecraft", scene)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rc_picture, "_ground", rc_picture._ground.__wrapped__)
        afresh = pictures.draw("racecraft", scene)
    assert cached is not None and afresh is not None
    assert cached == afresh == again
