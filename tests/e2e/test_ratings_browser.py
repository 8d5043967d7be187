"""The archive's ratings page at 360 px, as Chromium lays it out (docs/championships.md,
"Ratings": "legible at 360 px"): long names and every kind of game, nothing reaching past the
screen nor holding more than it is wide."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.games.archive import RatingsShown, write_ratings_shown
from bot.games.ratings import Rated
from bot.mail_out.render import Renderer
from bot.ratings import Rating
from tests.e2e.browser import chromium
from tests.e2e.test_season_browser import _measure

pytestmark = pytest.mark.e2e

NAMES = ("Wolfgang von Trips-Berghe-Longname-Without-Spaces-At-All", "Emerson", "Jo", "Ronnie Peterson", "Clay")


def test_the_ratings_page_fits_360_px(tmp_path: Path) -> None:
    chromium()  # there, or the test fails
    rows = tuple(
        Rated(
            "racecraft",
            i + 1,
            i,
            f"{NAMES[i % len(NAMES)]} {i}",
            f"p{i}@example.org",
            Rating(40.0 - i, 2.0, 120 + i),
            True,
        )
        for i in range(40)
    )
    shown = RatingsShown(3, (("Racecraft", rows), ("Speed Circuit", rows[:3]), ("SpeedPhreakz", ())))
    page = write_ratings_shown(shown, tmp_path / "site", Renderer())
    html = page.read_text(encoding="utf-8")
    assert NAMES[0] in html and "Nobody listed yet" in html and html.count("<tr>") == 40 + 3 + 2
    _measure(tmp_path / "site", "index.html")
