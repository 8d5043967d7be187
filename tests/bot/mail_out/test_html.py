"""HTML mail: every turn sheet and results mail is multipart/alternative, plain
text first, then HTML with the turn's picture inline (cid:), for every game and state; a
player's private part shows only in their own mail; the picture is drawn once a turn."""

from __future__ import annotations

import io
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from html.parser import HTMLParser

import pytest
from PIL import Image
from sqlalchemy import select

from bot import pictures
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.parse import html_to_text
from bot.mail_out import compose as mailout
from bot.mail_out import html as mail_html
from bot.mail_out.render import RenderedMail
from bot.models import Seat, Turn
from bot.settings import Settings
from bot.testing import FakeMailer, TestApp, body_of
from rules import find_game, game_names
from tests.bot.conftest import GM
from tests.helpers import with_secret_lines

TURNS = 5
HTML_KINDS = ("turn_sheet", "results", "final")


def kind_of(msg: EmailMessage) -> str:
    return str(msg["Message-ID"]).strip("<>").split("-")[0]


def start(app: TestApp, kind: str, count: int | None = None) -> list[str]:
    rules = find_game(kind)
    seats = [f"p{i}" for i in range(count or rules.min_players)]
    players = [PlayerSpec(s, f"{s}@example.org", f"Player <{s}> & co", "UTC") for s in seats]
    with app.db.transaction() as session:
        create_game(app.shell, session, kind=kind, name="g1", players=players, gm_address=GM, deadline="24h", seed=5)
    app.service.send()
    return seats


def run_turns(app: TestApp, turns: int = TURNS) -> None:
    for _ in range(turns):
        app.clock.advance(hours=25)
        app.service.tick()
        app.service.send()


def mails(app: TestApp) -> list[EmailMessage]:
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    return mailer.messages()


class Page(HTMLParser):
    """Collects what a mail client cares about: images, links, scripts, styles, text."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.banned: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "link", "style", "iframe", "object"):
            self.banned.append(tag)
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse_html(msg: EmailMessage) -> tuple[str, Page]:
    part = msg.get_body(("html",))
    assert part is not None, f"{msg['Subject']}: no HTML part"
    source = part.get_content()
    page = Page()
    page.feed(source)
    page.close()
    return source, page


def inline_images(msg: EmailMessage) -> dict[str, bytes]:
    out = {}
    for part in msg.walk():
        if part.get_content_maintype() == "image":
            out[str(part["Content-ID"]).strip("<>")] = part.get_content()
    return out


@pytest.mark.parametrize("kind", game_names())
def test_every_turn_sheet_and_results_mail_has_text_then_html_with_its_picture(app: TestApp, kind: str) -> None:
    """multipart/alternative, plain part first, HTML rendered (StrictUndefined) for
    every state of every game, inline cid: pictures present in the message, no scripts or
    external CSS, nothing fetched from the web, alt text on every image."""
    start(app, kind)
    run_turns(app)
    rules = find_game(kind)
    with app.db.read() as session:
        states = [
            rules.load_state(t.state)
            for t in session.scalars(select(Turn).order_by(Turn.number))
            if "p0" in rules.expected_players(rules.load_state(t.state))
        ]
    assert states
    checked = 0
    for msg in mails(app):
        if kind_of(msg) not in HTML_KINDS and kind_of(msg).removesuffix("_gm") not in HTML_KINDS:
            continue
        assert msg.get_content_type() == "multipart/alternative"
        parts = list(msg.iter_parts())
        assert parts[0].get_content_type() == "text/plain"
        assert parts[1].get_content_type() == "multipart/related"
        source, page = parse_html(msg)
        assert "Undefined" not in source and not page.banned
        assert "<!DOCTYPE html>" in source and 'name="viewport"' in source
        images = inline_images(msg)
        assert page.images, f"{msg['Subject']}: no picture"
        for img in page.images:
            src = img.get("src") or ""
            assert src.startswith("cid:"), f"an image fetched from elsewhere: {src}"
            assert src.removeprefix("cid:") in images, f"{src} is not in the message"
            assert img.get("alt")
        for cid, data in images.items():
            assert f"cid:{cid}" in source
            picture = Image.open(io.BytesIO(data))
            assert picture.format == "PNG" and len(data) < pictures.MAX_BYTES
        # Everything the text part says about the race, the HTML says too.
        text = body_of(msg)
        shown = " ".join(" ".join(page.text).split())
        for line in re.findall(r"^  - (.+)$", text, flags=re.M)[:3]:
            assert " ".join(line.split())[:40] in shown
        # Nothing in the HTML reads as an order once a client turns it to text (testing.md).
        for line in html_to_text(source).splitlines():
            for state in states:
                assert not rules.parse_orders(state, "p0", line).orders, f"{kind}: {line!r} parses as an order"
        checked += 1
    assert checked >= TURNS


def test_html_escapes_what_players_chose(app: TestApp) -> None:
    """Autoescaped: a display name with < and & is shown as text, not markup."""
    start(app, "racecraft")
    msg = mails(app)[0]
    source, _ = parse_html(msg)
    assert "Player &lt;p0&gt; &amp; co" in source
    assert "<p0>" not in source


@pytest.mark.parametrize("kind", game_names())
def test_private_lines_only_in_their_owners_html(app: TestApp, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A player's private part appears only in that player's own mail; the
    GM's copy and every picture come from the public view."""
    with_secret_lines(monkeypatch, kind)
    seats = start(app, kind)
    run_turns(app, 2)
    with app.db.read() as session:
        passwords = {s.name: s.secret for s in session.scalars(select(Seat))}
    seen = 0
    for msg in mails(app):
        if msg.get_body(("html",)) is None:
            continue
        source, _ = parse_html(msg)
        to = msg["To"].addresses[0].addr_spec
        owner = to.split("@")[0]
        for seat in seats:
            assert (f"SECRET-LINE-OF-{seat}" in source) == (seat == owner and to != GM), (msg["Subject"], to, seat)
            if seat != owner:
                assert passwords[seat] not in source, (msg["Subject"], to, seat)
        seen += 1
    assert seen >= 2 * (len(seats) + 1)


@pytest.mark.parametrize("kind", game_names())
def test_a_turn_picture_is_drawn_once_and_the_same_bytes_go_to_everyone(
    app: TestApp, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Performance: one picture per game per turn, reused for every mail of the turn."""
    calls: list[str] = []
    draw = pictures.draw

    def counting(game_kind: str, scene: pictures.Scene) -> pictures.Picture | None:
        calls.append(game_kind)
        return draw(game_kind, scene)

    monkeypatch.setattr(pictures, "draw", counting)
    seats = start(app, kind)
    assert len(calls) == 1
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    mailer.clear()
    calls.clear()
    run_turns(app, 1)
    assert len(calls) == 1
    by_turn = [inline_images(m) for m in mails(app) if m.get_body(("html",)) is not None]
    assert len(by_turn) == len(seats) + 1
    # Besides it, a seat's mail may carry that seat's own options picture (cid
    # "options..."), drawn per seat; the public picture is the same bytes for everyone.
    public = [{cid: data for cid, data in images.items() if not cid.startswith("options")} for images in by_turn]
    assert len({tuple(sorted(i.values())) for i in public}) == 1


def test_racecraft_final_mail_shows_the_result_and_the_archive_link(app: TestApp) -> None:
    """With [bot] public_url, the HTML links the archive, as the text does."""
    app.use_settings(replace(app.settings, bot=replace(app.settings.bot, public_url="https://races.example.org/a/")))
    start(app, "racecraft")
    run_turns(app, 8)
    finals = [m for m in mails(app) if kind_of(m) == "final"]
    assert finals
    source, page = parse_html(finals[0])
    assert 'href="https://races.example.org/a/g1/"' in source
    assert "Final result" in " ".join(page.text)


def _encoded_text_part(data: bytes) -> bytes:
    msg = message_from_bytes(data, policy=policy.default)
    part = msg.get_body(("plain",))
    assert part is not None
    payload = part.get_payload(decode=False)
    assert isinstance(payload, str)
    return payload.encode()


def test_compose_keeps_the_text_part_and_adds_html_only_when_given() -> None:
    """Without HTML the mail is the single text part it was; with HTML the plain
    part comes first and its encoded body is the same bytes."""
    settings = Settings()
    now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    rendered = RenderedMail("Results", "Hello =\u00e9t\u00e9=\n" + "x" * 100 + "\n")
    _, _, plain = mailout.compose(
        settings, now, kind="results", to=mailout.Recipient("a@example.org"), rendered=rendered
    )
    msg = message_from_bytes(plain, policy=policy.default)
    assert msg.get_content_type() == "text/plain" and not msg.is_multipart()
    png = pictures.draw("racecraft", pictures.Scene(({"table": [], "standings": []},)))
    assert png is not None
    markup = '<p>\u00c9t\u00e9 =3D "x"  \n<img src="cid:p@example.org" alt="x">' + "<b>long</b> " * 40 + "</p>\n"
    body = mailout.HtmlBody(markup, (mailout.InlineImage("p@example.org", png.png, "p.png"),))
    _, _, both = mailout.compose(
        settings, now, kind="results", to=mailout.Recipient("a@example.org"), rendered=rendered, html=body
    )
    assert _encoded_text_part(both) == _encoded_text_part(plain)
    msg = message_from_bytes(both, policy=policy.default)
    assert [p.get_content_type() for p in msg.walk()] == [
        "multipart/alternative",
        "text/plain",
        "multipart/related",
        "text/html",
        "image/png",
    ]
    image = next(p for p in msg.walk() if p.get_content_type() == "image/png")
    assert image["Content-ID"] == "<p@example.org>" and image.get_content() == png.png
    # (The wire has CRLF line ends, which the stdlib parser keeps in decoded text.)
    assert body_of(msg, "html").replace("\r\n", "\n") == markup
    assert body_of(msg).replace("\r\n", "\n") == rendered.body
    assert all(len(line) <= 78 for line in both.split(b"\r\n"))
    assert b"\r\n" in both and b"\n" not in both.replace(b"\r\n", b"")


def test_no_html_template_means_no_html_part(app: TestApp) -> None:
    """Mails without an .html template (confirmations, status...) stay plain text."""
    assert mail_html.html_template(app.renderer, "racecraft", "status") is None
    assert mail_html.html_template(app.renderer, "racecraft", "results") is not None


def iter_html(app: TestApp) -> Iterator[str]:
    for msg in mails(app):
        part = msg.get_body(("html",))
        if part is not None:
            yield part.get_content()


def test_the_first_turn_sheet_tells_its_seat_password_in_html_too(app: TestApp) -> None:
    """What the text turn sheet says (the seat password), the HTML says."""
    start(app, "racecraft")
    with app.db.read() as session:
        secret = next(s.secret for s in session.scalars(select(Seat)) if s.name == "p0")
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    sheet = mailer.messages("p0@example.org")[0]
    assert secret in body_of(sheet)
    assert secret in parse_html(sheet)[0]


@pytest.mark.parametrize("kind", ["speed_circuit", "speedphreakz"])
def test_each_seat_gets_its_own_options_picture_and_nobody_else_does(app: TestApp, kind: str) -> None:
    """ "each player's turn sheet shows, for that player only, where the car can
    get this turn": from the race on, every seat's results mail carries one options picture
    of its own (its cid names the seat), different from every other seat's; the GM's copy
    carries none."""
    seats = start(app, kind, 3)
    run_turns(app, 3)
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    last = {seat: mailer.messages(f"{seat}@example.org")[-1] for seat in seats}
    own: dict[str, bytes] = {}
    for seat, msg in last.items():
        images = {cid: data for cid, data in inline_images(msg).items() if cid.startswith("options")}
        assert len(images) == 1, (seat, sorted(images))
        ((cid, data),) = images.items()
        assert f".{seat}." in cid
        source, page = parse_html(msg)
        assert f"cid:{cid}" in source and "Where you can get this turn" in " ".join(page.text)
        assert Image.open(io.BytesIO(data)).format == "PNG"
        own[seat] = data
    assert len(set(own.values())) == len(seats)
    gm = mailer.messages(GM)[-1]
    assert not [cid for cid in inline_images(gm) if cid.startswith("options")]


@pytest.mark.parametrize("kind", ["speed_circuit", "speedphreakz"])
def test_the_text_part_holds_the_map_to_plot_from(app: TestApp, kind: str) -> None:
    """ "the same information as text in the plain-text part: an excerpt of the
    track ahead of the car as a text map with coordinates (lane letters, row numbers / x,y)"."""
    seats = start(app, kind, 2)
    run_turns(app, 3)
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    text = body_of(mailer.messages(f"{seats[0]}@example.org")[-1])
    text = text.replace("\r\n", "\n")
    if kind == "speed_circuit":
        assert "Where you can get this turn" in text
        assert re.search(r"^\s+row\s+lane A\s+lane B\s+lane C$", text, flags=re.M)
        assert re.search(r"^\s+\d+\s+.*@\d+", text, flags=re.M), "no space marked with a speed that ends there"
        assert re.search(r"^\s+\d+ mph: ", text, flags=re.M)
    else:
        assert "Where you can get in round" in text
        assert re.search(r"^\s+0123456789", text, flags=re.M), "no x ruler"
        assert re.search(r"^\s+\d+ [#.,:oS A-Z]+\s+[#@123-]+$", text, flags=re.M), "no map row with its y"
        assert "Furthest along at 1" in text


@pytest.mark.parametrize("kind", game_names())
def test_each_seats_letter_of_a_turn_holds_its_own_part_links_and_address_alone(
    app: TestApp, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The letters of one turn share what they show alike (the public view, the fragments
    rendered once, the encoded blocks): each seat's letter still holds its own private part,
    its own one-tap links and its own reply address, and no other seat's, in its text and its
    HTML."""
    with_secret_lines(monkeypatch, kind)
    seats = start(app, kind)
    run_turns(app, 2)
    replies: dict[str, set[str]] = {seat: set() for seat in seats}
    seen = tapped = 0
    for msg in mails(app):
        to = msg["To"].addresses[0].addr_spec
        owner = to.split("@")[0]
        if owner not in replies or kind_of(msg) not in ("results", "turn_sheet"):
            continue
        reply_to = msg["Reply-To"].addresses[0].addr_spec
        assert f"+g1.{owner}." in reply_to, (msg["Subject"], reply_to)
        replies[owner].add(reply_to)
        text = body_of(msg)
        source, _ = parse_html(msg)
        links = {urllib.parse.unquote(href.split("?")[0]) for href in re.findall(r'href="mailto:([^"]+)"', source)}
        assert links <= {reply_to}, (msg["Subject"], links)  # every one-tap link goes to this seat's own address
        tapped += len(links)
        for seat in seats:
            mine = seat == owner
            assert (f"SECRET-LINE-OF-{seat}" in text) == mine, (msg["Subject"], to, seat)
            assert (f"SECRET-LINE-OF-{seat}" in source) == mine, (msg["Subject"], to, seat)
            assert mine or f"+g1.{seat}." not in source + text, (msg["Subject"], to, seat)
        seen += 1
    assert seen >= 2 * len(seats)
    assert tapped or kind == "speedphreakz"  # the one game without one-line orders
    assert all(len(addresses) == 1 for addresses in replies.values())  # one reply address for each seat
    assert len(set().union(*replies.values())) == len(seats)
