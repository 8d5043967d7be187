"""Shared fixtures and helpers for the GM-side tests: a real SQLite file, fake inbox/mailer/clock."""

from __future__ import annotations

import copy
import itertools
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.db import Database
from bot.dice import SeededEntropy
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.mail_out.render import Renderer
from bot.models import Game, GmAudit, Turn
from bot.settings import AuthSettings, BotSettings, RatingSettings
from bot.store import find_game_row
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp, body_of, plain_mail
from tests.bot.conftest import BOT, GM, RACERS, make_settings
from tests.helpers import fake_inbox, migrated, moving_clock, process_folder

__all__ = [
    "BOT",
    "GM",
    "RACERS",
    "ADDRESS",
    "START",
    "new_app",
    "Played",
    "played_once",
    "copy_of",
    "gm_says",
    "player_says",
    "stranger_says",
    "stranger_joins",
    "stranger_joins",
    "cycle",
    "past_setup",
    "one_lap_race",
    "to_the_finish",
    "mails",
    "last",
    "bodies",
    "audit",
    "turns",
    "game_row",
    "body_of",
    "Path",
]

ADDRESS = {p.seat: p.address for p in RACERS}
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a Monday
_ids = itertools.count(1)


def new_app(
    tmp_path: Path,
    *,
    start: datetime = START,
    bot: BotSettings | None = None,
    ratings: RatingSettings | None = None,
    auth: AuthSettings | None = None,
) -> TestApp:
    """A TestApp on a fresh SQLite file at `start`, with the given settings in place of the tests' own."""
    settings = make_settings(tmp_path)
    settings = replace(
        settings,
        bot=settings.bot if bot is None else bot,
        ratings=settings.ratings if ratings is None else ratings,
        auth=settings.auth if auth is None else auth,
    )
    migrated(settings.database_url)
    return TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(start),
        renderer=Renderer(),
        inbox=FakeInbox(),
        mailer=FakeMailer(),
        entropy=SeededEntropy(0),
    )


@dataclass(frozen=True)
class Played:
    """What `played_once` left: the site directory (the SQLite file and any file the bot wrote),
    the clock's time, and the fake inbox and mailer as they were."""

    directory: Path
    now: datetime
    inbox: FakeInbox
    mailer: FakeMailer


def played_once(directory: Path, play: Callable[[TestApp], None]) -> Played:
    """`play` run once on a `new_app` in `directory` (a module or session fixture), the app
    closed after it: tests that start from what it played each take a `copy_of` it."""
    app = new_app(directory)
    try:
        play(app)
        return Played(directory, app.clock.now(), copy.deepcopy(app.inbox), copy.deepcopy(app.mailer))
    finally:
        app.close()


def copy_of(played: Played, tmp_path: Path) -> TestApp:
    """A TestApp on a copy of what `played_once` left, in `tmp_path`: the same database (the
    tests' settings, at `tmp_path`), clock, inbox and mailer, as if `play` had run there."""
    shutil.copytree(played.directory, tmp_path, dirs_exist_ok=True)
    settings = make_settings(tmp_path)
    return TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(played.now),
        renderer=Renderer(),
        inbox=copy.deepcopy(played.inbox),
        mailer=copy.deepcopy(played.mailer),
        entropy=SeededEntropy(0),
    )


def _start_rc(app: TestApp) -> None:
    """Racecraft `rc1`, five players, 48h turns in Europe/London, started; mail sent."""
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=7,
        )
    app.service.send()


_rc_started: list[Played] = []  # `_start_rc` played once in this process


def _rc_copy(tmp_path: Path) -> TestApp:
    """A copy of `rc1` as `_start_rc` leaves it, started once in this process (as
    `tests.helpers.migrated_sqlite` migrates once) for the many tests that start from it."""
    if not _rc_started:
        _rc_started.append(played_once(process_folder("fm-rc1-"), _start_rc))
    return copy_of(_rc_started[0], tmp_path)


@pytest.fixture
def gapp(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestApp]:
    """A TestApp on a fresh SQLite file; for a test that asks for `rc` as well, a copy of `rc1`
    started (the same app as `rc`)."""
    app = _rc_copy(tmp_path) if "rc" in request.fixturenames else new_app(tmp_path)
    yield app
    app.close()


@pytest.fixture
def rc(gapp: TestApp) -> TestApp:
    """Racecraft `rc1`, five players, 48h turns in Europe/London, started; mail sent (`_start_rc`)."""
    with gapp.db.read() as session:
        assert find_game_row(session, "rc1") is not None, "gapp is the copy of rc1 started"
    return gapp


def _mid() -> str:
    return f"<t{next(_ids)}@client.example>"


def cycle(app: TestApp) -> None:
    """One round of the service's jobs: poll, tick, send."""
    app.service.poll()
    app.service.tick()
    app.service.send()


def gm_says(
    app: TestApp, text: str, *, game: str = "rc1", sender: str = GM, signed: bool = True, message_id: str | None = None
) -> str:
    """The GM mails `text` (through the game's signed GM address); the bot answers. Returns the Message-ID."""
    mid = message_id or _mid()
    to = signed_address(BOT, "test-site-secret", game, "gm") if signed else BOT
    fake_inbox(app).deliver(plain_mail(sender, to, f"[{game}] commands", text, message_id=mid))
    cycle(app)
    return mid


def player_says(app: TestApp, seat: str, text: str, *, game: str = "rc1", address: str | None = None) -> None:
    to = signed_address(BOT, "test-site-secret", game, seat)
    fake_inbox(app).deliver(
        plain_mail(
            address or ADDRESS[seat],
            to,
            f"[{game}] orders",
            text,
            message_id=_mid(),
        )
    )
    cycle(app)


def past_setup(app: TestApp) -> None:
    """Speed Circuit: the design and qualifying turns left to the defaults, to race turn 1."""
    from datetime import timedelta

    for _ in ("design", "qualifying"):
        moving_clock(app).advance(timedelta(hours=49))
        cycle(app)


def one_lap_game(
    app: TestApp,
    people: tuple[str, ...] = ("kelly",),
    robots: tuple[str, ...] = (),
    *,
    seed: int = 3,
    early_resolution: bool | None = None,
) -> None:
    """Speed Circuit `sc1`, one lap, 24h turns, `people` (RACERS' addresses, in UTC) and `robot`
    seats: created, its design turn's sheets sent."""
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="speed_circuit",
            name="sc1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in people],
            robot_seats=robots,
            gm_address=GM,
            deadline="24h",
            seed=seed,
            options={"laps": "1"},
            early_resolution=early_resolution,
        )
    app.service.send()


def one_lap_race(
    app: TestApp,
    people: tuple[str, ...] = ("kelly",),
    robots: tuple[str, ...] = (),
    *,
    seed: int = 3,
    early_resolution: bool | None = None,
) -> None:
    """`one_lap_game`, taken to race turn 1 by the deadlines of its design and qualifying turns."""
    one_lap_game(app, people, robots, seed=seed, early_resolution=early_resolution)
    past_setup(app)


def to_the_finish(app: TestApp, game: str, turns: int = 60) -> None:
    """Deadline after deadline (25 hours apart) until `game` is over, at most `turns` of them."""
    from datetime import timedelta

    for _ in range(turns):
        if str(game_row(app, game).status) == "finished":
            return
        moving_clock(app).advance(timedelta(hours=25))
        cycle(app)


def stranger_says(app: TestApp, sender: str, text: str) -> None:
    fake_inbox(app).deliver(plain_mail(sender, BOT, "hello", text, message_id=_mid()))
    cycle(app)


def stranger_joins(app: TestApp, sender: str, text: str, *, answer: str = "Yes please") -> None:
    """A stranger's JOIN, and the reply to the code mail it brings (JOIN is double opt-in)."""
    from bot.testing import reply_to

    stranger_says(app, sender, text)
    code_mail = last(app, sender.lower())
    assert "[confirm join." in str(code_mail["Subject"]), str(code_mail["Subject"])
    fake_inbox(app).deliver(reply_to(code_mail, answer, sender=sender))
    cycle(app)


def mails(app: TestApp, to: str | None = None) -> list[EmailMessage]:
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    return mailer.messages(to)


def last(app: TestApp, to: str) -> EmailMessage:
    found = mails(app, to)
    assert found, f"no mail to {to}"
    return found[-1]


def bodies(app: TestApp, to: str) -> str:
    return "\n=====\n".join(f"Subject: {m['Subject']}\n{body_of(m)}" for m in mails(app, to))


def audit(app: TestApp, game: str = "rc1") -> list[GmAudit]:
    with app.db.read() as session:
        row = find_game_row(session, game)
        assert row is not None
        return list(session.scalars(select(GmAudit).where(GmAudit.game_id == row.id).order_by(GmAudit.id)))


def turns(app: TestApp, game: str = "rc1") -> list[Turn]:
    with app.db.read() as session:
        row = find_game_row(session, game)
        assert row is not None
        return list(session.scalars(select(Turn).where(Turn.game_id == row.id).order_by(Turn.number)))


def game_row(app: TestApp, game: str = "rc1") -> Game:
    with app.db.read() as session:
        row = find_game_row(session, game)
        assert row is not None
        _ = [s.player.address for s in row.seats]  # load while the session is open
        return row


def players(specs: tuple[PlayerSpec, ...] = RACERS) -> tuple[PlayerSpec, ...]:
    return specs
