"""The bot's own actions in the GM's audit log (bot.games.audit): the NMR limit's warning and
its action, and the orders a ROLLBACK kept that the turn's resolution withdrew, are each a row
done by the bot (actor `BOT`, no Message-ID, `via` what did it), beside the GM's own commands."""

from __future__ import annotations

from bot.games.audit import BOT
from bot.store import find_game_row
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import audit, cycle, gm_says, player_says, turns
from tests.helpers import moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _everyone_but_anna_orders(app: TestApp) -> None:
    for seat in ("kelly", "seb", "steve", "roger"):
        player_says(app, seat, "CRUISE" if len(turns(app)) > 1 else "USE 3")
    moving_clock(app).advance(hours=49)
    cycle(app)


def test_the_nmr_limits_warning_and_drop_are_rows_done_by_the_bot(rc: TestApp) -> None:
    """Seats, the NMR limit: "one turn before the limit the player is warned by mail; at the
    limit the seat is dropped": both in the audit log, as the bot's, keyed by seat and turn."""
    with rc.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.nmr_limit, game.nmr_action = 2, "drop"
    _everyone_but_anna_orders(rc)
    _everyone_but_anna_orders(rc)
    rows = [a for a in audit(rc) if a.command.startswith("NMR rc1 anna")]
    assert [(a.actor, a.via, a.message_id) for a in rows] == [(BOT, "auto", "")] * 2
    assert rows[0].outcome.startswith("warned ") and rows[1].outcome.startswith("done: ")
    assert rows[1].undo is not None  # the drop can be undone: the state it changed is kept


def test_orders_withdrawn_after_a_rollback_are_a_row_done_by_the_bot_at_the_deadline(rc: TestApp) -> None:
    """ROLLBACK keeps the orders sent for the next turn; those the new resolution withdraws are
    recorded as the bot's, done at the deadline (here the GM's PROCESS), with what was withdrawn."""
    player_says(rc, "seb", "USE 2")
    player_says(rc, "kelly", "USE 4")
    gm_says(rc, "PROCESS rc1")
    player_says(rc, "kelly", "USE 6")
    gm_says(rc, "ROLLBACK rc1")
    gm_says(rc, "ORDER rc1 kelly USE 8")
    gm_says(rc, "PROCESS rc1")
    rows = [a for a in audit(rc) if a.command.startswith("WITHDRAWN after ROLLBACK rc1")]
    assert [(a.actor, a.via, a.message_id) for a in rows] == [(BOT, "deadline", "")]
    assert rows[0].undo is not None and [w["seat"] for w in rows[0].undo["withdrawn"]] == ["kelly"]
    gm_rows = [a for a in audit(rc) if a.command.startswith(("ROLLBACK", "PROCESS", "ORDER"))]
    assert gm_rows and all(a.actor != BOT for a in gm_rows)  # the GM's commands stay the GM's
