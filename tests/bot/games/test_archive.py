"""The game archive: a static site per game, written after every turn
when [bot] archive_dir is set and by `flagman archive GAME DIR`; public views only."""

from __future__ import annotations

import filecmp
import html
import io
import re
from dataclasses import replace
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from bot.cli import main
from bot.games.turns import PlayerSpec, create_game
from bot.models import Turn
from bot.testing import FakeMailer, TestApp, body_of
from rules import find_game, game_names
from tests.bot import gm_helpers
from tests.bot.conftest import GM
from tests.helpers import init_site, with_secret_lines

rc = gm_helpers.rc  # the shared fixtures (`gapp`, which `rc` takes, is found through it)
gapp = gm_helpers.gapp


def with_archive(app: TestApp, tmp_path: Path) -> Path:
    root = tmp_path / "site"
    app.use_settings(
        replace(
            app.settings, bot=replace(app.settings.bot, archive_dir=str(root), public_url="https://races.example.org/")
        )
    )
    return root


def play(app: TestApp, kind: str, turns: int) -> list[str]:
    rules = find_game(kind)
    seats = [f"p{i}" for i in range(rules.min_players)]
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind=kind,
            name="g1",
            gm_address=GM,
            deadline="24h",
            seed=11,
            players=[PlayerSpec(s, f"{s}@example.org", s.upper(), "UTC") for s in seats],
        )
    app.service.send()
    for _ in range(turns):
        app.clock.advance(hours=25)
        app.service.tick()
        app.service.send()
    return seats


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.scripts = 0
        self.handlers: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(name)
            if name in ("href", "src") and value:
                self.targets.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(path: Path) -> Links:
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


def resolved_turns(app: TestApp) -> list[Turn]:
    with app.db.read() as session:
        return [t for t in session.scalars(select(Turn).order_by(Turn.number)) if t.state_after is not None]


def mail_picture(msg: EmailMessage) -> bytes | None:
    for part in msg.walk():
        if part.get_content_type() == "image/png":
            data: bytes = part.get_content()
            return data
    return None


@pytest.mark.parametrize("kind", game_names())
def test_the_bot_keeps_the_archive_after_every_turn(app: TestApp, tmp_path: Path, kind: str) -> None:
    """With [bot] archive_dir, every turn adds its page and picture (the very PNG of
    the turn's mails); the index lists every turn; plain HTML, no JavaScript, links that resolve."""
    root = with_archive(app, tmp_path)
    play(app, kind, 3)
    site = root / "g1"
    turns = resolved_turns(app)
    assert len(turns) >= 3
    index = parse(site / "index.html")
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    results = {str(m["Subject"]): m for m in mailer.messages("p0@example.org")}
    for turn in turns:
        page = site / f"turn-{turn.number:03d}.html"
        assert page.name in index.targets
        png = (site / f"turn-{turn.number:03d}.png").read_bytes()
        assert Image.open(io.BytesIO(png)).format == "PNG"
        mail = next(
            m
            for s, m in results.items()
            # a subject over 78 characters drops the label's brackets ("(leader on lap 1 of 2)")
            if re.search(rf"Results of {re.escape(turn.label.split(' (')[0])}\b", s)
            or ("Final result" in s and turn is turns[-1])
        )
        assert mail_picture(mail) == png, f"turn {turn.number}: the archive's picture is not the mail's"
        assert turn.label in " ".join(parse(page).text)
    for path in site.glob("*.html"):
        links = parse(path)
        assert links.scripts == 0 and not links.handlers
        for target in links.targets:
            assert not re.match(r"^[a-z]+:", target), f"{path.name} reaches outside: {target}"
            assert (site / target.split("#")[0]).exists(), f"{path.name}: broken link {target}"
    assert (
        html.unescape(" ".join(parse(site / "rules.html").text)).count(
            find_game(kind).rules_summary().split("\n")[0][:40]
        )
        == 1
    )
    # The results mails link the archive (text and HTML).
    last = list(results.values())[-1]
    assert "https://races.example.org/g1/" in body_of(last)
    assert 'href="https://races.example.org/g1/"' in body_of(last, "html")


def test_the_cli_writes_the_same_site(app: TestApp, tmp_path: Path) -> None:
    """`flagman archive GAME DIR` writes the whole site; it equals what the bot
    wrote turn by turn."""
    root = with_archive(app, tmp_path)
    play(app, "racecraft", 7)
    config = tmp_path / "cli.toml"
    config.write_text(
        f'[bot]\naddress = "{app.settings.bot.address}"\n[database]\nurl = "{app.settings.database_url}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "by-hand"
    assert main(["--config", str(config), "archive", "g1", str(out)]) == 0
    by_bot = sorted(p.name for p in (root / "g1").iterdir())
    assert by_bot == sorted(p.name for p in out.iterdir())
    for name in by_bot:
        assert filecmp.cmp(root / "g1" / name, out / name, shallow=False), name
    index = " ".join(parse(out / "index.html").text)
    assert "Final result" in index
    assert main(["--config", str(config), "archive", "nosuchgame", str(tmp_path / "x")]) == 2


def test_no_archive_dir_no_archive(app: TestApp, tmp_path: Path) -> None:
    """The bot writes the archive only when [bot] archive_dir is configured."""
    play(app, "racecraft", 2)
    assert not app.settings.bot.archive_dir
    assert not list(tmp_path.rglob("turn-001.html"))


@pytest.mark.parametrize("kind", game_names())
def test_the_archive_shows_nothing_private(
    app: TestApp, tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive shows only what the public report shows: no player's private
    part on any page."""
    with_secret_lines(monkeypatch, kind)
    root = with_archive(app, tmp_path)
    seats = play(app, kind, 2)
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    assert any("SECRET-LINE-OF-p0" in str(m) for m in mailer.messages("p0@example.org"))  # the probe works
    pages = list((root / "g1").glob("*.html"))
    assert len(pages) >= 4
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for seat in seats:
            assert f"SECRET-LINE-OF-{seat}" not in text, page.name


def test_a_gms_process_by_mail_is_published_once_its_batch_is_committed(rc: TestApp, tmp_path: Path) -> None:
    """ "every turn adds its page" and architecture.md ("archive (an explicit
    step)"): a turn the GM's PROCESS resolves is published by the service after the batch of
    mail that carried it commits (`Service.handle_batch`), not by a hook on the session."""
    root = with_archive(rc, tmp_path)
    gm_helpers.gm_says(rc, "PROCESS rc1")
    assert len(gm_helpers.turns(rc)) == 2
    site = root / "rc1"
    assert (site / "turn-001.html").exists() and (site / "turn-001.png").exists()
    assert "turn-001.html" in parse(site / "index.html").targets


def test_flagman_gm_process_publishes_the_turn(tmp_path: Path) -> None:
    """The same from the CLI: `flagman gm process` publishes the turn once its transaction is
    committed."""
    config = init_site(tmp_path / "site", "flagman@example.org")
    root = tmp_path / "public"
    config.write_text(config.read_text().replace("[bot]\n", f'[bot]\narchive_dir = "{root}"\n', 1))
    args = ["--config", str(config), "game", "new", "racecraft", "--name", "rc1", "--gm", GM, "--deadline", "48h"]
    for name in ("kelly", "seb", "steve", "roger", "anna"):
        args += ["--player", f"{name}={name}@example.org"]
    assert main(args) == 0
    assert not (root / "rc1" / "turn-001.html").exists()
    assert main(["--config", str(config), "gm", "process", "rc1", "--as", "operator"]) == 0
    assert (root / "rc1" / "turn-001.html").exists()


def test_a_game_started_publishes_its_first_commitment_before_any_order(tmp_path: Path) -> None:
    """The commitments page is published as a turn opens, before its orders close: `flagman game
    new` writes the archive's record and dice page with turn 1's commitment, the one its sheets
    carry, and the log entry marked published; nothing is written again while nothing changes."""
    import json

    from bot.db import Database
    from bot.models import Commitment
    from bot.settings import load_settings

    config = init_site(tmp_path / "site", "flagman@example.org")
    root = tmp_path / "public"
    config.write_text(config.read_text().replace("[bot]\n", f'[bot]\narchive_dir = "{root}"\n', 1))
    args = ["--config", str(config), "game", "new", "speed_circuit", "--name", "sc1", "--gm", GM, "--deadline", "48h"]
    for name in ("kelly", "seb"):
        args += ["--player", f"{name}={name}@example.org"]
    assert main(args) == 0
    record = json.loads((root / "sc1" / "record.json").read_text())
    assert record["turns"] == [] and record["open"]["number"] == 1 and record["open"]["log"] == 1
    assert record["open"]["commitment"] in (root / "sc1" / "dice.html").read_text()
    database = Database(load_settings(config, env={}).database_url)
    try:
        with database.read() as session:
            assert [c.published_at is not None for c in session.scalars(select(Commitment))] == [True]
    finally:
        database.dispose()
    stamp = (root / "sc1" / "dice.html").stat().st_mtime_ns
    assert main(["--config", str(config), "send"]) == 0
    assert (root / "sc1" / "dice.html").stat().st_mtime_ns == stamp


def test_no_session_hook_publishes_anything() -> None:
    """architecture.md: the archive is "an explicit step": no module of the bot acts when a
    session commits or rolls back (an SQLAlchemy session hook runs where no reader of the
    deadline sees it); the engine's connection set-up (bot/db.py) is not such a step."""
    bot = Path(__file__).resolve().parents[3] / "bot"
    hooked = [
        p.name for p in bot.rglob("*.py") if re.search(r"after_commit|after_rollback", p.read_text(encoding="utf-8"))
    ]
    assert hooked == []
