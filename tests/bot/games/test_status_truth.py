"""STATUS, the digest and `game show` tell an incomplete set apart (with Cat's
set incomplete, STATUS said "Still to order: nobody" and game show "orders in" while the turn
waited for its deadline). Another player's STATUS shows who has ordered, never what: an
incomplete set is named to its own player (and the GM's digest) only. One reading, `Outlook.status` (`outlook.seat_status` for one seat), serves them and early resolution."""

from __future__ import annotations

from pathlib import Path

from bot import outlook
from bot.games.turns import rules_of
from bot.store import find_game_row, seat_named, turn_submissions
from bot.testing import body_of, words_of
from tests.bot.gm_helpers import last, player_says
from tests.bot.intake.test_refusal_words import _speed_circuit


def test_status_names_an_incomplete_set_to_its_player_only_and_the_turn_waits(tmp_path: Path) -> None:
    app = _speed_circuit(tmp_path)
    try:
        player_says(app, "cat", "TYRES OPTION", game="sc1", address="cat@example.org")  # no DESIGN line
        player_says(app, "ann", "STATUS", game="sc1", address="ann@example.org")
        status = body_of(last(app, "ann@example.org"))
        # mail-interface.md: STATUS tells "who has ordered — not what". Cat's set lacking a part
        # is hers to know (and the GM's): to Ann, Cat is still to order, and the turn waits.
        assert "Incomplete" not in status and "a part is missing" not in status
        assert "Still to order: ann, bob, cat." in status and "Orders in from: nobody yet." in status
        player_says(app, "cat", "STATUS", game="sc1", address="cat@example.org")
        own = words_of(last(app, "cat@example.org"))
        assert "Yours is incomplete: a part is missing. The turn waits for it, or for the deadline." in own
        assert "Still to order: ann, bob." in own
        player_says(app, "bob", "TYRES OPTION", game="sc1", address="bob@example.org")
        player_says(app, "ann", "STATUS", game="sc1", address="ann@example.org")
        assert "Still to order: ann, bob, cat." in body_of(last(app, "ann@example.org"))
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
