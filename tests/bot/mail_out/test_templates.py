"""Every template renders for every state of every game, with StrictUndefined, and no line of
the bot's mail parses as a valid order (testing.md: Outlook quotes without '>')."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game
from bot.models import Turn
from bot.testing import FakeInbox, FakeMailer, TestApp, body_of, reply_to
from rules import find_game, game_names
from tests.bot.conftest import GM

TURNS = 6


def play_by_deadlines(app: TestApp, kind: str) -> list[EmailMessage]:
    rules = find_game(kind)
    players = [
        PlayerSpec(f"p{i}", f"p{i}@example.org", f"Player {i}", "America/Chicago" if i % 2 else "Asia/Tokyo")
        for i in range(rules.min_players)
    ]
    with app.db.transaction() as session:
        create_game(app.shell, session, kind=kind, name="g1", players=players, gm_address=GM, deadline="24h", seed=3)
    app.service.send()
    mailer = app.mailer
    inbox = app.inbox
    assert isinstance(mailer, FakeMailer) and isinstance(inbox, FakeInbox)
    for _ in range(TURNS):
        # One player asks for everything a player can ask; the rest stay silent (NMR defaults).
        for command in ("HELP", "STATUS", "ORDERS", "no such order 42"):
            inbox.deliver(reply_to(mailer.messages("p0@example.org")[-1], command, sender="p0@example.org"))
        app.service.poll()
        app.clock.advance(hours=25)
        app.service.tick()
        app.service.send()
    return mailer.messages()


@pytest.mark.parametrize("kind", game_names())
def test_every_mail_of_a_game_renders_and_holds_no_order_line(app: TestApp, kind: str) -> None:
    """Every template renders for every state of a game; no line in any mail parses as a valid order."""
    msgs = play_by_deadlines(app, kind)
    kinds_seen = {str(m["Subject"]).split("]")[-1].split()[0] for m in msgs}
    assert len(msgs) > 20 and len(kinds_seen) >= 3
    rules = find_game(kind)
    with app.db.read() as session:
        states = [rules.load_state(t.state) for t in session.scalars(select(Turn).order_by(Turn.number))]
    assert len(states) >= 2
    for msg in msgs:
        body = body_of(msg)
        assert "Undefined" not in body
        for line in body.splitlines():
            for state in states:
                if "p0" in rules.expected_players(state):
                    assert not rules.parse_orders(state, "p0", line).orders, f"{kind}: {line!r} parses as an order"
