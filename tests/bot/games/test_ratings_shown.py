"""Where a rating is shown (docs/championships.md, "Ratings": `flagman rating show [--kind K]
[PERSON]`; the archive's ratings page, "only for people who opted in, shown after `[ratings]
shown_after` rated races", escaped and legible at 360 px; `RATING` by mail answers "the
person's own ratings (to their own address only)")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import delete

from bot.cli import main
from bot.games.ratings import current, ratings_of
from bot.models import Player, RatingKind, StoredRating
from bot.settings import BotSettings, RatingSettings
from bot.testing import TestApp, body_of, words_of
from tests.bot.games.test_ratings_results import race
from tests.bot.gm_helpers import ADDRESS, BOT, mails, new_app, player_says
from tests.helpers import init_site

EVIL = '<b>Roger</b> & "Co"'  # a name from mail: markup and quotes
PAGE = "https://flagman.example.org/_ratings/"


def rated_app(tmp_path: Path) -> TestApp:
    """Racecraft rc1 and rc2 rated and finished, roger (renamed `EVIL` between them) opted in
    before rc1; ratings shown after 2; the archive kept in tmp_path/site."""
    bot = BotSettings(
        address=BOT,
        timezone="Europe/London",
        archive_dir=str(tmp_path / "site"),
        public_url="https://flagman.example.org",
    )
    app = new_app(tmp_path, ratings=RatingSettings(shown_after=2), bot=bot)
    race(app, "rc1", 5, roger_says="RATING ON")
    assert PAGE in body_of(next(m for m in mails(app, ADDRESS["roger"]) if "Rating on" in str(m["Subject"])))
    page = (tmp_path / "site" / "_ratings" / "index.html").read_text(encoding="utf-8")
    assert "Racecraft" in page and "Nobody listed yet" in page, "roger has 1 rated race of the 2 before it shows"
    with app.db.transaction() as session:
        session.query(Player).filter_by(address=ADDRESS["roger"]).one().name = EVIL
    race(app, "rc2", 6)
    return app


def test_the_ratings_page_lists_only_those_who_asked_once_shown_and_rating_off_takes_it_off(tmp_path: Path) -> None:
    app = rated_app(tmp_path)
    try:
        page = tmp_path / "site" / "_ratings" / "index.html"
        html = page.read_text(encoding="utf-8")
        with app.db.read() as session:
            roger = session.query(Player).filter_by(address=ADDRESS["roger"]).one()
            mine = ratings_of(session, "racecraft")[str(roger.id)]
        assert "&lt;b&gt;Roger&lt;/b&gt; &amp; &#34;Co&#34;" in html and "<b>Roger" not in html
        assert (
            f'<td>1</td><th scope="row">&lt;b&gt;Roger&lt;/b&gt; &amp; &#34;Co&#34;</th><td>{mine.shown}</td><td>2</td>'
            in html
        )
        for other in ("Kelly", "Seb", "Steve", "Anna"):
            assert other not in html, f"{other} never sent RATING ON"
        assert (tmp_path / "site" / "_ratings" / "style.css").exists()
        # docs/championships.md: "Only in the final result, never before".
        results = [m for m in mails(app, ADDRESS["roger"]) if str(m["Subject"]).startswith("[rc2]")]
        finals = [m for m in results if "Final result" in str(m["Subject"])]
        assert len(finals) == 1 and "Your rating in Racecraft" in words_of(finals[0])
        assert len(results) > 2 and all("Your rating" not in body_of(m) for m in results if m not in finals)
        with app.db.transaction() as session:  # as after an upgrade: nothing stored yet
            session.execute(delete(RatingKind))
            session.execute(delete(StoredRating))
        player_says(app, "roger", "RATING OFF", game="rc2")
        with app.db.read() as session:
            assert current(session, "racecraft"), "the publish after the batch stored them anew"
            assert session.get(StoredRating, ("racecraft", roger.id)) is not None
        html = page.read_text(encoding="utf-8")
        assert "Roger" not in html and "Nobody listed yet" in html, "RATING OFF takes the rating off the page at once"
    finally:
        app.close()


def test_rating_alone_answers_the_persons_own_ratings_to_their_own_address(tmp_path: Path) -> None:
    app = rated_app(tmp_path)
    try:
        with app.db.read() as session:
            roger = session.query(Player).filter_by(address=ADDRESS["roger"]).one()
            mine = ratings_of(session, "racecraft")[str(roger.id)]
        before = {a: len(mails(app, a)) for a in ADDRESS.values()}
        player_says(app, "roger", "rating", game="rc2")
        answer = mails(app, ADDRESS["roger"])[-1]
        assert str(answer["Subject"]).endswith("Your ratings")
        text = words_of(answer)
        assert f"Racecraft: {mine.shown} after 2 rated races." in text and "Your rating is on" in text
        assert PAGE in text
        assert all(len(mails(app, a)) == before[a] for a in ADDRESS.values() if a != ADDRESS["roger"])
        # Through roger's reply address from another From: answered to roger's own address.
        player_says(app, "roger", "RATING", game="rc2", address="mallory@example.net")
        assert not mails(app, "mallory@example.net")
        assert str(mails(app, ADDRESS["roger"])[-1]["Subject"]).endswith("Your ratings")
        # Kelly never opted in: her own ratings, said to be seen by her alone.
        player_says(app, "kelly", "RATING", game="rc2")
        kelly = words_of(mails(app, ADDRESS["kelly"])[-1])
        assert "Racecraft: " in kelly and "Your rating is off: only this answer shows it" in kelly
    finally:
        app.close()


def flagman_on(app: TestApp, tmp_path: Path, *args: str) -> int:
    """`flagman ARGS` on the database of `app`, ratings shown after 2 rated races."""
    config = tmp_path / "cli" / "flagman.toml"
    if not config.exists():
        config = init_site(tmp_path / "cli", BOT)
        url = f'url = "{app.settings.database_url}"'
        text = config.read_text(encoding="utf-8").replace('url = "sqlite:///flagman.sqlite"', url)
        config.write_text(text + "\n[ratings]\nshown_after = 2\n")
    return main(["--config", str(config), *args])


def test_rating_show_by_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = rated_app(tmp_path)
    try:
        with app.db.read() as session:
            ratings = ratings_of(session, "racecraft")
            names = {str(p.id): p.name for p in session.query(Player)}
        capsys.readouterr()
        assert flagman_on(app, tmp_path, "rating", "show") == 0
        out = capsys.readouterr().out
        assert "Ratings in Racecraft: 5 people rated" in out
        lines = [line for line in out.splitlines() if line[:1].isdigit()]
        best = sorted(ratings, key=lambda p: (-ratings[p].shown, -ratings[p].ordinal))
        assert [line.split()[1] for line in lines][:1] == [names[best[0]].split()[0][:20]]
        assert sum(line.endswith("yes") for line in lines) == 1, "roger alone is shown"
        assert flagman_on(app, tmp_path, "rating", "show", "--kind", "speed-circuit") == 0
        assert "Ratings in Speed Circuit: 0 people rated" in capsys.readouterr().out
        assert flagman_on(app, tmp_path, "rating", "show", ADDRESS["kelly"].upper(), "--json") == 0
        kelly = json.loads(capsys.readouterr().out)
        assert [(r["kind"], r["races"], r["shown"]) for r in kelly] == [("racecraft", 2, False)]
        assert flagman_on(app, tmp_path, "rating", "show", "Seb") == 0
        assert "Seb <seb@example.org>: RATING OFF." in capsys.readouterr().out
        assert flagman_on(app, tmp_path, "rating", "show", "nobody@example.org") == 2
        assert "nobody is known as nobody@example.org" in capsys.readouterr().err
        assert flagman_on(app, tmp_path, "rating", "show", "--kind", "chess") == 2
        assert "no kind of game is called chess" in capsys.readouterr().err
        assert flagman_on(app, tmp_path, "rating", "rebuild") == 0
        assert "racecraft: 2 rated races, 5 people rated; stored." in capsys.readouterr().out
        with app.db.read() as session:
            assert ratings_of(session, "racecraft") == ratings
        assert flagman_on(app, tmp_path, "rating", "archive", str(tmp_path / "out")) == 0
        assert "&lt;b&gt;Roger" in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    finally:
        app.close()
