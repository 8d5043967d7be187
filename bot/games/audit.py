"""What the bot does on its own, in the GM's audit log.

A GM's command is audited as the GM's (`bot.commands.registry`); what the bot does unasked (the
NMR limit's warning and its action, the bench's offer and its taking of a seat, the orders a
ROLLBACK kept that a resolution withdrew) is audited here, as done by the bot: the actor is
`BOT`, there is no Message-ID, and `via` says what did it (``"auto"``: a rule of the game's
set-up; ``"deadline"``: the resolution of a turn).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from bot.models import Game, GmAudit

BOT = "flagman"  # the audit log's actor of what the bot does on its own


def done_by_the_bot(
    session: Session,
    game: Game,
    command: str,
    outcome: str,
    at: datetime,
    *,
    via: str = "auto",
    undo: dict[str, object] | None = None,
) -> GmAudit:
    """The audit row of something the bot did in `game` (`command`: what, as the log names it;
    `outcome`: what became of it), added to `session`."""
    row = GmAudit(
        game_id=game.id, actor=BOT, via=via, message_id="", command=command, outcome=outcome, created_at=at, undo=undo
    )
    session.add(row)
    return row


__all__ = ["BOT", "done_by_the_bot"]
