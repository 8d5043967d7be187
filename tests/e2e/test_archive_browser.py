"""The game archive in a real browser: headless Chromium opens the static site
from the file system, shows a turn page with its text, and every image on it loads.

Chromium is Debian's `chromium` package. Without it the tests FAIL (testing.md: a test that
needs a server the machine lacks fails loudly; it is never silently skipped). One Chromium
serves every page of a test process (tests/e2e/browser.py).

Also every game's HTML mails at 360 px: headless Chromium lays each out in a
360 px frame and a script measures every element, so "nothing clipped" is checked as a
browser sees it, not guessed from the markup.
"""

from __future__ import annotations

import io
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import replace
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from bot.db import Database
from bot.games.turns import PlayerSpec, create_game
from bot.mail_out.render import Renderer
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp
from rules import find_game
from tests.bot.conftest import GM, make_settings
from tests.e2e.browser import chromium, run_browser
from tests.helpers import migrated

pytestmark = pytest.mark.e2e

WIDTH, HEIGHT = 820, 1600

# Injected into a *copy* of a page (the archive itself has no script): after every image
# has loaded or failed, it writes what the browser saw into the DOM for --dump-dom.
PROBE = """
<script>
window.addEventListener("load", function () {
  var out = [];
  var imgs = document.images;
  for (var i = 0; i < imgs.length; i++) {
    out.push(imgs[i].getAttribute("src") + "=" + (imgs[i].complete ? imgs[i].naturalWidth : -1));
  }
  var main = document.querySelector("main");
  document.body.setAttribute("data-images", out.join(" "));
  document.body.setAttribute("data-css", main ? getComputedStyle(main).maxWidth : "none");
});
</script>
"""


def bot_site(
    tmp_path: Path,
    kind: str,
    name: str,
    people: tuple[str, ...],
    *,
    robots: tuple[str, ...] = (),
    options: dict[str, str] | None = None,
    deadlines: int = 3,
) -> Path:
    """A game played by deadlines through the bot, its archive kept after every turn."""
    settings = make_settings(tmp_path)
    settings = replace(settings, bot=replace(settings.bot, archive_dir=str(tmp_path / "site")))
    migrated(settings.database_url)
    app = TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=FakeInbox(),
        mailer=FakeMailer(),
    )
    try:
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind=kind,
                name=name,
                gm_address=GM,
                deadline="24h",
                seed=4,
                players=[PlayerSpec(n, f"{n}@example.org", n.title(), "UTC") for n in people],
                robot_seats=robots,
                options=options or {},
            )
        for _ in range(deadlines):
            app.clock.advance(hours=25)
            app.service.tick()
    finally:
        app.close()
    return tmp_path / "site" / name


def build_site(tmp_path: Path) -> Path:
    """A Racecraft game played by deadlines through the bot, archive kept after every turn."""
    return bot_site(tmp_path, "racecraft", "rc1", ("kelly", "seb", "steve", "roger", "anna"))


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "title"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def _link(item: str) -> tuple[str, str]:
    """One mailto link the LINKS probe saw, "<address> <subject>" each quoted: the two, unquoted."""
    address, subject = (urllib.parse.unquote(part) for part in item.split(" "))
    return address, subject


def text_of(dom: str) -> str:
    parser = Text()
    parser.feed(dom)
    return " ".join(" ".join(parser.parts).split())


def test_a_turn_page_of_the_archive_renders_in_chromium_with_every_image(tmp_path: Path) -> None:
    """The archive works from a file system: the turn page shows its report, its
    style sheet applies and every image loads; a screenshot of it is taken (kept in tmp)."""
    chromium()  # there, or the test fails
    site = build_site(tmp_path)
    page = site / "turn-002.html"
    assert page.exists()

    # 1. A screenshot of the page, as a reader would see it.
    shot = tmp_path / "turn-002.png"
    run_browser(f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars", page.as_uri())
    image = Image.open(io.BytesIO(shot.read_bytes()))
    assert image.size == (WIDTH, HEIGHT)
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50, "the screenshot is (nearly) blank"

    # 2. The page's text, after the browser parsed it.
    dom = run_browser("--dump-dom", page.as_uri())
    text = text_of(dom)
    assert "Turn 2 of 5: tactical" in text
    assert "What happened" in text and "Place" in text and "EP" in text
    for name in ("kelly", "seb", "steve", "roger", "anna"):
        assert name in text
    assert "<script" not in page.read_text(encoding="utf-8")

    # 3. Every image loaded, and the style sheet applied: a probing copy of the page, in the
    #    same folder so that its relative links are the page's own.
    probe = site / "probe-turn-002.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    try:
        dom = run_browser("--dump-dom", "--virtual-time-budget=10000", probe.as_uri())
    finally:
        probe.unlink()
    seen = re.search(r'data-images="([^"]*)"', dom)
    assert seen is not None, "the probe did not run"
    loaded = dict(item.rsplit("=", 1) for item in seen.group(1).split())
    expected = re.findall(r'<img src="([^"]+)"', page.read_text(encoding="utf-8"))
    assert expected and set(loaded) == set(expected)
    for src, width in loaded.items():
        assert int(width) > 0, f"{src} did not load (naturalWidth {width})"
        on_disk = Image.open(site / src)
        assert int(width) == on_disk.width, f"{src} did not load (naturalWidth {width})"
    css = re.search(r'data-css="([^"]*)"', dom)
    assert css is not None and css.group(1) == "760px", "style.css was not applied"


PHONE = """<!DOCTYPE html>
<html><body style="margin:0">
<iframe id="mail" src="mail.html" width="360" height="2400" style="border:0"></iframe>
<script>
window.addEventListener("load", function () {
  var doc = document.getElementById("mail").contentDocument;
  var img = doc.images[0];
  document.body.setAttribute("data-width", doc.documentElement.scrollWidth);
  document.body.setAttribute("data-img", img ? img.naturalWidth + "x" + img.getBoundingClientRect().width : "none");
});
</script>
</body></html>
"""


def _fake_app(tmp_path: Path) -> TestApp:
    """The shell on a fresh SQLite database with the fake inbox, mailer and clock."""
    settings = make_settings(tmp_path)
    migrated(settings.database_url)
    return TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=FakeInbox(),
        mailer=FakeMailer(),
    )


@pytest.mark.parametrize("kind", ["speed_circuit", "speedphreakz", "racecraft"])
def test_a_results_mail_fits_a_phone_screen(tmp_path: Path, kind: str) -> None:
    """The HTML part is laid out for phone screens: at 360 px nothing makes the
    mail wider than the screen (wide tables scroll inside), and the picture scales down."""
    chromium()  # there, or the test fails
    app = _fake_app(tmp_path)
    try:
        count = max(find_game(kind).min_players, 4)
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind=kind,
                name="g1",
                gm_address=GM,
                deadline="24h",
                seed=4,
                players=[PlayerSpec(f"p{i}", f"p{i}@example.org", f"Player {i}", "UTC") for i in range(count)],
            )
        for _ in range(3):
            app.clock.advance(hours=25)
            app.service.tick()
        app.service.send()
        mailer = app.mailer
        assert isinstance(mailer, FakeMailer)
        msg: EmailMessage = mailer.messages("p0@example.org")[-1]
    finally:
        app.close()
    html_part = msg.get_body(("html",))
    assert html_part is not None
    source: str = html_part.get_content()
    for part in msg.walk():
        if part.get_content_type() == "image/png":
            cid = str(part["Content-ID"]).strip("<>")
            (tmp_path / "picture.png").write_bytes(part.get_content())
            source = source.replace(f"cid:{cid}", "picture.png")  # what a mail client does with cid:
    (tmp_path / "mail.html").write_text(source, encoding="utf-8")
    (tmp_path / "phone.html").write_text(PHONE, encoding="utf-8")
    dom = run_browser(
        "--allow-file-access-from-files",
        "--dump-dom",
        "--virtual-time-budget=10000",
        "--window-size=500,2400",
        (tmp_path / "phone.html").as_uri(),
    )
    width = re.search(r'data-width="(\d+)"', dom)
    img = re.search(r'data-img="(\d+)x([\d.]+)"', dom)
    assert width is not None and img is not None, "the probe did not run"
    assert int(width.group(1)) <= 360, f"the mail is {width.group(1)} px wide on a 360 px screen"
    assert int(img.group(1)) > 0 and float(img.group(2)) <= 360


# Lays a mail out at 360 px and measures it: every element must stay inside the screen, and
# none may hold content wider than itself (a table wider than its cell, a word wider than
# its line: "scrollWidth <= clientWidth"), which is what a mail app clips or scrolls.
MEASURE = """<!DOCTYPE html>
<html><body style="margin:0">
<iframe id="mail" src="%s" width="360" height="6000" style="border:0"></iframe>
<script>
window.addEventListener("load", function () {
  var doc = document.getElementById("mail").contentDocument;
  var screen = doc.documentElement.clientWidth;
  var bad = [];
  var all = doc.body.getElementsByTagName("*");
  var shown = 0;
  for (var i = 0; i < all.length; i++) {
    var el = all[i];
    var box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    shown++;
    var what = el.tagName + " '" + (el.textContent || el.getAttribute("alt") || "").trim().slice(0, 30) + "'";
    if (box.left < -0.5 || box.right > screen + 0.5) {
      bad.push(what + " reaches " + Math.round(box.left) + ".." + Math.round(box.right) + " of " + screen);
    }
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
      bad.push(what + " holds " + el.scrollWidth + " px in " + el.clientWidth);
    }
  }
  var imgs = [];
  for (var k = 0; k < doc.images.length; k++) {
    imgs.push(doc.images[k].naturalWidth + "x" + Math.round(doc.images[k].getBoundingClientRect().width));
  }
  document.body.setAttribute("data-screen", screen + " " + doc.documentElement.scrollWidth + " " + shown);
  document.body.setAttribute("data-bad", encodeURIComponent(bad.join("\\n")));
  document.body.setAttribute("data-imgs", imgs.join(" "));
});
</script>
</body></html>
"""


def _mails_of(tmp_path: Path, kind: str) -> dict[str, EmailMessage]:
    """A game of `kind` played three turns by deadlines: a player's first turn sheet, their
    last results mail, a turn sheet sent again in the race (as the GM's REPLACE does), and
    the GM's copy of the results."""
    from bot.games import turns
    from bot.models import Game, Seat

    app = _fake_app(tmp_path)
    try:
        count = max(find_game(kind).min_players, 4)
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind=kind,
                name="phone1",
                gm_address=GM,
                deadline="24h",
                seed=4,
                players=[
                    PlayerSpec(name, f"{name}@example.org", name.title(), "UTC")
                    for name in ("tyrrell", "lotus", "brabham", "mclaren", "ferrari")[:count]
                ],
            )
        app.service.send()
        mailer = app.mailer
        assert isinstance(mailer, FakeMailer)
        first = mailer.messages("tyrrell@example.org")[0]
        for _ in range(3):
            app.clock.advance(hours=25)
            app.service.tick()
        app.service.send()
        results = mailer.messages("tyrrell@example.org")[-1]
        gm = mailer.messages(GM)[-1]
        with app.db.transaction() as session:
            game = session.query(Game).filter_by(name="phone1").one()
            seat = session.query(Seat).filter_by(game_id=game.id, name="tyrrell").one()
            turns.queue_seat_mail(app.shell, session, game, seat, "turn_sheet")
        app.service.send()
        again = mailer.messages("tyrrell@example.org")[-1]
    finally:
        app.close()
    return {"turn sheet at the start": first, "results": results, "turn sheet in the race": again, "GM copy": gm}


def _write_mail(folder: Path, name: str, msg: EmailMessage) -> str:
    """The mail's HTML as a file, its cid: pictures as files beside it (as a mail client
    shows them); returns the file name."""
    html_part = msg.get_body(("html",))
    assert html_part is not None, f"{name}: no HTML part"
    source: str = html_part.get_content()
    for index, part in enumerate(msg.walk()):
        if part.get_content_type() == "image/png":
            cid = str(part["Content-ID"]).strip("<>")
            (folder / f"{name}-{index}.png").write_bytes(part.get_content())
            source = source.replace(f"cid:{cid}", f"{name}-{index}.png")
    (folder / f"{name}.html").write_text(source, encoding="utf-8")
    return f"{name}.html"


@pytest.mark.parametrize("kind", ["speed_circuit", "speedphreakz", "racecraft"])
def test_every_mail_of_a_game_fits_360_px_with_nothing_clipped(tmp_path: Path, kind: str) -> None:
    """ "HTML results fit a 360 px screen: wide tables become stacked cards or
    scroll within a frame, nothing clipped" (the Speed Circuit table was cut at "Tyr..." at
    390 px, the SpeedPhreakz "Status" column at 800 px): laid out by Chromium at 360 px, no
    element of a results mail, a turn sheet (at the start and in the race) or the GM's copy
    reaches past the screen or holds more than it is wide, and every picture is shown whole,
    scaled to the screen."""
    chromium()  # there, or the test fails
    mails = _mails_of(tmp_path, kind)
    for label, msg in mails.items():
        name = _write_mail(tmp_path, label.replace(" ", "-"), msg)
        page = tmp_path / f"measure-{name}"
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
        imgs = re.search(r'data-imgs="([^"]*)"', dom)
        assert screen is not None and bad is not None and imgs is not None, f"{label}: the probe did not run"
        assert int(screen.group(1)) == 360 and int(screen.group(3)) > 20, f"{label}: nothing laid out"
        assert int(screen.group(2)) <= 360, f"{label}: the mail is {screen.group(2)} px wide on a 360 px screen"
        problems = urllib.parse.unquote(bad.group(1))
        assert not problems, f"{kind} {label} at 360 px:\n{problems}"
        pictures = [tuple(map(float, item.split("x"))) for item in imgs.group(1).split()]
        assert pictures, f"{label}: no picture"
        for natural, shown in pictures:
            assert natural > 0 and shown <= 340, (
                f"{label}: a picture {natural:.0f} px wide is shown {shown:.0f} px wide"
            )


# A page's mailto: links as the browser itself parses them ("Checked in Chromium").
LINKS = """
<script>
window.addEventListener("load", function () {
  var out = [];
  var links = document.querySelectorAll('a[href^="mailto:"]');
  for (var i = 0; i < links.length; i++) {
    var url = new URL(links[i].href);
    var subject = new URLSearchParams(url.search).get("subject");
    out.push(encodeURIComponent(decodeURIComponent(url.pathname)) + " " + encodeURIComponent(subject === null ? "" : subject));
  }
  document.body.setAttribute("data-links", out.join("|"));
});
</script>
"""


@pytest.mark.parametrize("kind", ["racecraft", "speed_circuit"])
def test_every_one_tap_link_opens_a_mail_to_the_seat_with_a_legal_order(tmp_path: Path, kind: str) -> None:
    """ "the HTML turn sheet lists the player's legal orders for this turn
    that fit in one line ... as mailto: links to the player's own signed reply address with the
    order in the subject ... Checked in Chromium (every link well-formed, decodes to a legal
    order)". Chromium parses each link of a turn sheet (Racecraft at the start; Speed Circuit
    in the race) and of the GM's copy (none there); each goes to the mail's own Reply-To and
    its subject, read as the bot reads a one-tap reply, is a complete, legal set for the seat."""
    from bot import store
    from bot.games import turns
    from bot.intake import orders_in_subject

    chromium()  # there, or the test fails
    app = _fake_app(tmp_path)
    try:
        rules = find_game(kind)
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind=kind,
                name="tap1",
                gm_address=GM,
                deadline="24h",
                seed=4,
                players=[
                    PlayerSpec(n, f"{n}@example.org", n.title(), "UTC")
                    for n in ("tyrrell", "lotus", "brabham", "mclaren", "ferrari")[: max(2, rules.min_players)]
                ],
            )
        app.service.send()
        for _ in range(2 if kind == "speed_circuit" else 0):  # the design and qualifying turns
            app.clock.advance(hours=25)
            app.service.tick()
            app.service.send()
        mailer = app.mailer
        assert isinstance(mailer, FakeMailer)
        sheet, gm = mailer.messages("tyrrell@example.org")[-1], mailer.messages(GM)[-1]
        with app.db.read() as session:
            game = store.find_game_row(session, "tap1")
            assert game is not None
            _rules, state, _turn = turns.current_state(session, game)
        seen: dict[str, list[tuple[str, str]]] = {}
        for label, msg in (("sheet", sheet), ("gm", gm)):
            name = _write_mail(tmp_path, label, msg)
            page = tmp_path / name
            page.write_text(page.read_text(encoding="utf-8").replace("</body>", LINKS + "</body>"), encoding="utf-8")
            dom = run_browser("--dump-dom", "--virtual-time-budget=5000", page.as_uri())
            found = re.search(r'data-links="([^"]*)"', dom)
            assert found is not None, f"{label}: the probe did not run"
            seen[label] = [_link(item) for item in found.group(1).split("|") if item]
        assert seen["gm"] == [], "the GM's copy offers no player's orders"
        links = seen["sheet"]
        assert len(links) >= (5 if kind == "racecraft" else 2), links
        reply_to = sheet["Reply-To"].addresses[0].addr_spec
        assert reply_to.startswith("flagman+tap1.tyrrell.")
        for address, subject in links:
            assert address == reply_to, (address, reply_to)
            parsed = rules.parse_orders(state, "tyrrell", orders_in_subject(subject))
            assert parsed.ok and parsed.orders and rules.is_complete(state, "tyrrell", parsed.orders), (subject, parsed)
        assert len({subject for _, subject in links}) == len(links)
    finally:
        app.close()


@pytest.mark.parametrize("kind", ["racecraft", "speed_circuit", "speedphreakz"])
def test_every_picture_of_a_mail_has_labels_of_9_px_on_a_360_px_screen(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Pictures readable on a phone: ... labels of at least 9 px at 360 px wide;
    captions of the options pictures never clipped; checked in Chromium as the other mail
    checks are". The game's real `draw` and `draw_options` are wrapped to keep each picture
    they return (its smallest label and clipped text, by its PNG bytes); Chromium lays each
    mail out at 360 px and measures how wide every picture is shown; the smallest label,
    scaled as shown, is at least 9 px, and nothing is clipped."""
    import importlib

    from bot import pictures

    chromium()  # there, or the test fails
    module = importlib.import_module(f"bot.pictures.{kind}")
    drawn: dict[bytes, pictures.Picture] = {}
    options: set[bytes] = set()

    def keeping(real: Callable[..., pictures.Picture], into_options: bool) -> Callable[..., pictures.Picture]:
        def wrapper(*args: object, **kwargs: object) -> pictures.Picture:
            picture = real(*args, **kwargs)
            drawn[picture.png] = picture
            if into_options:
                options.add(picture.png)
            return picture

        return wrapper

    monkeypatch.setattr(module, "draw", keeping(module.draw, False))
    if hasattr(module, "draw_options"):
        monkeypatch.setattr(module, "draw_options", keeping(module.draw_options, True))
    mails = _mails_of(tmp_path, kind)
    carried_options = False
    for label, msg in mails.items():
        name = _write_mail(tmp_path, label.replace(" ", "-"), msg)
        page = tmp_path / f"measure-{name}"
        page.write_text(
            MEASURE.replace('naturalWidth + "x"', 'src.split(\'/\').pop() + "x" + doc.images[k].naturalWidth + "x"')
            % name,
            encoding="utf-8",
        )
        dom = run_browser(
            "--allow-file-access-from-files",
            "--dump-dom",
            "--virtual-time-budget=10000",
            "--window-size=500,3000",
            page.as_uri(),
        )
        imgs = re.search(r'data-imgs="([^"]*)"', dom)
        assert imgs is not None and imgs.group(1), f"{label}: the probe did not run or found no picture"
        for item in imgs.group(1).split():
            file, natural, shown = item.rsplit("x", 2)
            png = (tmp_path / urllib.parse.unquote(file)).read_bytes()
            picture = drawn.get(png)
            assert picture is not None, f"{label}: {file} is no picture the game drew"
            assert int(natural) == picture.width
            carried_options = carried_options or png in options
            as_shown = picture.min_label_px * float(shown) / picture.width
            assert picture.min_label_px > 0 and as_shown >= pictures.LEGIBLE, (
                f"{kind} {label}: the smallest label is {as_shown:.1f} px on a 360 px screen"
            )
            assert picture.clipped == (), f"{kind} {label}: clipped {picture.clipped}"
    assert carried_options or not hasattr(module, "draw_options"), "no mail carried an options picture"


@pytest.fixture(scope="module")
def speed_circuit_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Speed Circuit race (eight figures a car) played by deadlines through the bot, its
    archive kept after every turn: played once, each page measured in a file of its own."""
    return bot_site(
        tmp_path_factory.mktemp("speed-circuit-site"),
        "speed_circuit",
        "sc1",
        ("tyrrell", "lotus"),
        robots=("brabham", "mclaren"),
        options={"laps": "1"},
        deadlines=4,
    )


@pytest.mark.parametrize(
    ("page", "width"),
    [("dice.html", 1280), ("dice.html", 360), ("index.html", 360), ("turn-004.html", 360)],
)
def test_the_archive_dice_and_standings_fit_the_screen(speed_circuit_site: Path, page: str, width: int) -> None:
    """The archive's dice page at 1280 px and at 360 px, and the standings of a wide table (Speed
    Circuit's eight figures) at 360 px: laid out by Chromium, no element reaches past the screen
    or holds more than it is wide (the dice page's hashes overflowed their card; the standings
    were cut off with no cue): on a narrow screen the standings are one card a car, each figure
    with its heading. The dice page's times are in UTC, to the second, and labelled so."""
    chromium()  # there, or the test fails
    site = speed_circuit_site
    source = (site / page).read_text(encoding="utf-8")
    if page == "dice.html":
        assert not re.search(r"\d\d:\d\d:\d\d\.\d", source), "a time with fractions of a second"
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", source) and "Times are in UTC" in source
    probe = site / f"measure-{width}-{page}"
    frame = MEASURE.replace('width="360"', f'width="{width}"').replace('height="6000"', 'height="30000"')
    probe.write_text(frame % page, encoding="utf-8")
    dom = run_browser(
        "--allow-file-access-from-files",
        "--dump-dom",
        "--virtual-time-budget=10000",
        f"--window-size={width + 140},3000",
        probe.as_uri(),
    )
    screen = re.search(r'data-screen="(\d+) (\d+) (\d+)"', dom)
    bad = re.search(r'data-bad="([^"]*)"', dom)
    assert screen is not None and bad is not None, "the probe did not run"
    assert int(screen.group(1)) == width and int(screen.group(3)) > 20, "nothing laid out"
    assert int(screen.group(2)) <= width, f"{page} is {screen.group(2)} px wide on a {width} px screen"
    problems = urllib.parse.unquote(bad.group(1))
    assert not problems, f"{page} at {width} px:\n{problems}"
