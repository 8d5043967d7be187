"""Refusals say illegal vs unreadable: a line the game understood but does not
allow now is listed as such, apart from the lines not understood, and the subject says which."""

from __future__ import annotations

from pathlib import Path

from bot.games.turns import PlayerSpec, create_game
from bot.testing import TestApp, body_of
from tests.bot.gm_helpers import GM, last, new_app, player_says


def _speed_circuit(tmp_path: Path) -> TestApp:
    app = new_app(tmp_path)
    players = tuple(PlayerSpec(s, f"{s}@example.org", s.title()) for s in ("ann", "bob", "cat"))
    with app.db.transaction() as session:
        create_game(
            app.shell, session, kind="speed_circuit", name="sc1", players=players, gm_address=GM, deadline="48h", seed=3
        )
    app.service.send()
    return app


def test_an_illegal_line_is_told_apart_from_one_not_understood(tmp_path: Path) -> None:
    app = _speed_circuit(tmp_path)
    try:
        player_says(app, "ann", "TYRES OPTION\nBID WEAR 1 SKILL 1\nFLY AWAY", game="sc1", address="ann@example.org")
        answer = last(app, "ann@example.org")
        assert str(answer["Subject"]).endswith("(2 lines ignored)")
        text = body_of(answer)
        allowed, _, rest = text.partition("Understood, but not allowed now, and ignored:")[2].partition(
            "Not understood, and ignored:"
        )
        assert '"BID WEAR 1 SKILL 1"' in allowed and '"FLY AWAY"' not in allowed
        assert '"FLY AWAY"' in rest.split("That set is not complete")[0]
        player_says(app, "bob", "BID WEAR 1 SKILL 1", game="sc1", address="bob@example.org")
        refused = last(app, "bob@example.org")
        assert "line 1, understood, but not allowed now:" in body_of(refused)
        player_says(app, "cat", "TYRES OPTION\nBID WEAR 1 SKILL 1", game="sc1", address="cat@example.org")
        assert str(last(app, "cat@example.org")["Subject"]).endswith("(1 line not allowed now)")
    finally:
        app.close()
