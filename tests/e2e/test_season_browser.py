"""A season's table at 360 px, as Chromium lays it out ("a season page with the table
..., legible at 360 px"): the archive's season page and the HTML part of a season race's final
result, neither reaching past the screen nor holding more than it is wide."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest

from bot.games import seasons
from bot.games.archive import write_season_page
from bot.games.turns import PlayerSpec, create_game
from bot.testing import FakeMailer
from tests.e2e.browser import chromium, run_browser
from tests.e2e.test_archive_browser import MEASURE, _fake_app, _write_mail

pytestmark = pytest.mark.e2e

# Long names and all the races a season may have: the widest table there is.
NAMES = ("Wolfgang von Trips-Berghe", "Emerson", "Jo", "Ronnie Peterson", "Clay")


def _measure(folder: Path, name: str) -> None:
    page = folder / f"measure-{name}"
    page.write_text(MEASURE % name, encoding="utf-8")
    dom = run_browser(
        "--allow-file-access-from-files",
        "--dump-dom",
        "--virtual-time-budget=10000",
        "--window-size=500,3000",
        page.as_uri(),
    )
    screen = re.search(r'data-screen="(\d+) (\d+) (\d+)"', dom)
    bad = re.search(r'data-bad="([^"]*)"', dom)
    assert screen is not None and bad is not None, f"{name}: the probe did not run"
    assert int(screen.group(1)) == 360 and int(screen.group(3)) > 10, f"{name}: nothing laid out"
    assert int(screen.group(2)) <= 360, f"{name} is {screen.group(2)} px wide on a 360 px screen"
    problems = urllib.parse.unquote(bad.group(1))
    assert not problems, f"{name} at 360 px:\n{problems}"


CHART_PROBE = """<!DOCTYPE html>
<html><body style="margin:0">
<iframe id="page" src="%s" width="360" height="6000" style="border:0"></iframe>
<script>
window.addEventListener("load", function () {
  var doc = document.getElementById("page").contentDocument;
  var svg = doc.querySelector(".season-chart svg");
  var out = [];
  if (svg) {
    var box = svg.getBoundingClientRect();
    out.push(Math.round(box.left) + " " + Math.round(box.right) + " " + Math.round(box.height));
    var small = 99;
    var texts = svg.getElementsByTagName("text");
    for (var i = 0; i < texts.length; i++) {
      small = Math.min(small, parseFloat(doc.defaultView.getComputedStyle(texts[i]).fontSize) * box.width / 360);
    }
    out.push(texts.length + " " + small.toFixed(1) + " " + svg.getElementsByTagName("polyline").length);
  }
  document.body.setAttribute("data-chart", out.join(";"));
});
</script>
</body></html>
"""


def _chart(folder: Path) -> tuple[list[int], int, float, int]:
    """The season page's chart at 360 px: its box (left, right, height), how many labels, the
    smallest label's size in screen pixels, how many lines."""
    page = folder / "chart-probe.html"
    page.write_text(CHART_PROBE % "index.html", encoding="utf-8")
    dom = run_browser(
        "--allow-file-access-from-files",
        "--dump-dom",
        "--virtual-time-budget=10000",
        "--window-size=500,3000",
        page.as_uri(),
    )
    found = re.search(r'data-chart="([^"]*)"', dom)
    assert found is not None and found.group(1), "the season page has no chart"
    box, labels = found.group(1).split(";")
    count, small, lines = labels.split()
    return [int(v) for v in box.split()], int(count), float(small), int(lines)


def test_a_season_page_and_a_season_final_result_fit_360_px(tmp_path: Path) -> None:
    chromium()  # there, or the test fails
    app = _fake_app(tmp_path)
    try:
        people = [PlayerSpec(f"p{i}", f"p{i}@example.org", name, "UTC") for i, name in enumerate(NAMES)]
        with app.db.transaction() as session:
            create_game(
                app.shell, session, kind="racecraft", name="r1", players=people, gm_address="gm@example.org",
                deadline="24h", seed=4, options={"turns": "3"},
            )  # fmt: skip
            seasons.create_season(
                app.shell,
                session,
                seasons.SeasonSettings(
                    name="long-season",
                    kind="racecraft",
                    gm_address="gm@example.org",
                    races=30,
                    drop=3,
                    no_show_penalty=10,
                    games=("r1",),
                ),  # fmt: skip
            )
        for _ in range(6):
            app.clock.advance(hours=25)
            app.service.tick()
        app.service.send()
        mailer = app.mailer
        assert isinstance(mailer, FakeMailer)
        final = next(m for m in mailer.messages("p0@example.org") if "[r1] Final result" in str(m["Subject"]))
        with app.db.read() as session:
            season = seasons.find_season(session, "long-season")
            assert season is not None
            page = write_season_page(session, season, tmp_path / "site")
    finally:
        app.close()
    html = page.read_text(encoding="utf-8")
    assert re.search(r"after \d+ of 30 races", html) and "Wolfgang von Trips-Berghe" in html
    _measure(tmp_path / "site", "index.html")
    # The chart of points over races: on the screen, a line a driver, its labels 10 px or more.
    (left, right, height), labels, smallest, lines = _chart(tmp_path / "site")
    assert 0 <= left and right <= 360 and height > 100, (left, right, height)
    assert lines == len(NAMES) and labels > len(NAMES) + 10
    assert smallest >= 10, f"the chart's smallest label is {smallest} px at 360 px"
    name = _write_mail(tmp_path, "final", final)
    assert "long-season" in (tmp_path / name).read_text(encoding="utf-8")
    _measure(tmp_path, name)
