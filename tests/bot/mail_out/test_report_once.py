"""The public block of a turn's mails (what happened, the summary, the table) is rendered once
per game and turn and shared by every seat's mail and the GM's (bench: deadline). Rendering it
that way must give the very bytes each mail had when every mail rendered it from its own view
(``{{ m.report(view) }}``): checked here on every kind of mail of every game, text and HTML."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup
from sqlalchemy import select

from bot.db import Database
from bot.dice import SeededEntropy
from bot.games import turns
from bot.games.turns import PlayerSpec, create_game
from bot.letters import sheets
from bot.mail_out.render import PublicReport, Renderer
from bot.models import Game, GameStatus, Outbox, Turn
from bot.settings import DatabaseSettings
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp, reply_to
from rules import find_game, game_names
from tests.bot.conftest import GM, make_settings
from tests.helpers import fresh_database

ZONES = ("Europe/London", "America/Chicago", "Asia/Tokyo", "UTC", "Australia/Sydney", "Europe/Paris")
TURNS = {"racecraft": 40}  # racecraft to its end (final mails); the others: a few turns
FEW_TURNS = 4
# The mail kinds whose templates use `report`; each must be seen for every game.
KINDS = {"turn_sheet", "turn_sheet_gm", "results", "results_gm"}
NORMALISED = re.compile(rb"^(Message-ID|Date|In-Reply-To|References): .*$", re.M)


def _app(tmp_path: Path, public_url: str) -> TestApp:
    settings = make_settings(tmp_path)
    settings = replace(
        settings,
        database=DatabaseSettings(url=fresh_database("sqlite", tmp_path)),
        bot=replace(settings.bot, public_url=public_url),
    )
    return TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=FakeInbox(max_size=settings.limits.max_mail_bytes),
        mailer=FakeMailer(),
        entropy=SeededEntropy(0),
    )


def play(tmp_path: Path, kind: str, public_url: str = "") -> list[tuple[str, bytes]]:
    """A game of `kind` with players in several time zones, some orders mailed in, some NMR;
    every outbox row (kind, bytes with Message-ID and Date normalised), oldest first."""
    app = _app(tmp_path, public_url)
    try:
        rules = find_game(kind)
        players = [
            PlayerSpec(f"p{i}", f"p{i}@example.org", f"Player {i} <&>", ZONES[i % len(ZONES)])
            for i in range(min(rules.max_players, 5))
        ]
        with app.db.transaction() as session:
            create_game(
                app.shell, session, kind=kind, name="g1", players=players, gm_address=GM, deadline="24h", seed=11
            )
        app.service.send()
        mailer, inbox = app.mailer, app.inbox
        assert isinstance(mailer, FakeMailer) and isinstance(inbox, FakeInbox)
        for round_ in range(TURNS.get(kind, FEW_TURNS)):
            with app.db.read() as session:
                if session.scalars(select(Game)).one().status != GameStatus.ACTIVE:
                    break
                turn = session.scalars(select(Turn).where(Turn.resolved_at.is_(None))).one()
                state = rules.load_state(turn.state)
            for i, seat in enumerate(sorted(rules.expected_players(state))):
                text = rules.format_orders(rules.default_orders(state, seat))
                if (i + round_) % 3 and text.strip():  # the others are defaulted (NMR)
                    inbox.deliver(
                        reply_to(mailer.messages(f"{seat}@example.org")[-1], text, sender=f"{seat}@example.org")
                    )
            app.service.poll()
            app.clock.advance(hours=25)
            app.service.tick()
            app.service.send()
        with app.db.read() as session:
            return [
                (row.kind, NORMALISED.sub(rb"\1: -", row.data))
                for row in session.scalars(select(Outbox).order_by(Outbox.id))
            ]
    finally:
        app.close()


def fixed_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seat and GM passwords (in the turn sheets) from a counter: the same in two runs."""
    counter = itertools.count()
    monkeypatch.setattr(turns, "new_secret", lambda: f"secret{next(counter):04d}")


class OwnReport:
    """The public block as each mail rendered it before the split: the ``report`` macro
    imported into the mail's template and applied to the mail's own view."""

    def __init__(self, renderer: Renderer, view: Any) -> None:
        self.text = renderer.env.from_string('{% import "_common/_macros.txt" as m %}{{ m.report(view) }}').render(
            view=view
        )
        self.html = Markup(
            renderer.env.from_string(
                '{% autoescape true %}{% import "_common/_macros.html" as m %}{{ m.report(view) }}{% endautoescape %}'
            ).render(view=view)
        )


def per_mail(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Make every mail render the public block from its own view, as before the split; returns
    the (mail, view) pairs seen."""
    seen: list[tuple[str, Any]] = []
    for name in ("seat_context", "gm_context"):
        original = getattr(sheets, name)

        def own(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> dict[str, Any]:
            ctx: dict[str, Any] = _original(*args, **kwargs)
            assert isinstance(ctx["report"], PublicReport)
            ctx["report"] = OwnReport(args[0].renderer, ctx["view"])
            seen.append((_name, ctx["view"]))
            return ctx

        monkeypatch.setattr(sheets, name, own)
    return seen


@pytest.mark.parametrize("kind", game_names())
def test_the_shared_public_block_gives_the_bytes_of_each_mail_rendering_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    public_url = "https://races.example.org/" if kind == "racecraft" else ""
    fixed_secrets(monkeypatch)
    shared = play(tmp_path / "shared", kind, public_url)

    fixed_secrets(monkeypatch)
    seen = per_mail(monkeypatch)
    own = play(tmp_path / "own", kind, public_url)

    kinds = Counter(k for k, _ in shared)
    assert KINDS <= set(kinds), kinds
    if kind in TURNS:
        assert {"final", "final_gm"} <= set(kinds), kinds
    assert {name for name, _ in seen} == {"seat_context", "gm_context"}
    assert len(shared) == len(own)
    for (kind_a, a), (kind_b, b) in zip(shared, own, strict=True):
        assert kind_a == kind_b
        assert a == b, f"{kind_a} mail differs"
    # Every mail with HTML carries the report in both parts (the split did not drop it).
    results = [data for k, data in shared if k == "results"]
    assert results and all(b"multipart/alternative" in data for data in results)


@pytest.mark.parametrize("kind", game_names())
def test_the_public_block_is_made_once_per_game_and_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    made: list[int] = []
    original = PublicReport.__init__

    def counting(self: PublicReport, renderer: Renderer, view: Any, robots: Any = ()) -> None:
        made.append(1)
        original(self, renderer, view, robots)

    monkeypatch.setattr(PublicReport, "__init__", counting)
    rows = play(tmp_path, kind)
    with_report = [k for k, _ in rows if k.removesuffix("_gm") in ("turn_sheet", "results", "final")]
    turns_mailed = sum(1 for k in with_report if k.endswith("_gm"))  # one GM copy per game and turn
    assert len(with_report) > 2 * turns_mailed
    # A turn whose results wait for the next (one that needs no orders and runs at once, as
    # Racecraft's final sprint) has its block made for the observers' results at its own time
    # and once more for the letter that carries it: twice, and no GM copy of its own.
    held = sum(1 for k, data in rows if k == "final_gm" and b"First, the results of" in data)
    assert held == (1 if kind == "racecraft" else 0)
    assert len(made) == turns_mailed + 2 * held
