"""STATUS, the digest and `game show` tell an incomplete set apart (issue 29, case 2: with Cat's
set incomplete, STATUS said "Still to order: nobody" and game show "orders in" while the turn
waited for its deadline). One reading, `Outlook.status` (`outlook.seat_status` for one seat), serves them and early resolution."""

from __future__ import annotations

from pathlib import Path

from bot import outlook
from bot.games.turns import rules_of
from bot.store import find_game_row, seat_named, turn_submissions
from bot.testing import body_of
from tests.bot.gm_helpers import last, player_says
from tests.bot.intake.test_refusal_words import _speed_circuit


def test_status_names_an_incomplete_set_and_the_turn_waits(tmp_path: Path) -> None:
    app = _speed_circuit(tmp_path)
    try:
        player_says(app, "cat", "TYRES OPTION", game="sc1", address="cat@example.org")  # no DESIGN line
        player_says(app, "ann", "STATUS", game="sc1", address="ann@example.org")
        status = body_of(last(app, "ann@example.org"))
        assert "Incomplete: cat (a part is missing" in status
        assert "Still to order: ann, bob." in status and "Orders in from: nobody yet." in status
        with app.db.read() as session:
            game = find_game_row(session, "sc1")
            assert game is not None
            rules = rules_of(game)
            turn = game.turns[-1]
            state = rules.load_state(turn.state)
            assert seat_named(game, "cat") is not None
            seen = outlook.of_turn(game, rules, state, turn_submissions(session, turn))
            assert seen.status("cat") is outlook.Status.INCOMPLETE
    finally:
        app.close()
