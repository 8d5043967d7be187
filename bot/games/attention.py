"""What a GM should look at: the "needs your attention" items of the digest and of a GM's STATUS.

A typed source that every part of the shell adds to where it finds something no rule settles:
the intake when a player's words are for the GM (a note, a question, a farewell), the
deadline or a ROLLBACK when orders on file are lost or withdrawn. `add` writes one item (a
row of `gm_attention`, in the caller's transaction, so an item is kept exactly when what it
reports is); `items` reads a game's items since a moment, together with what the mail records
already say needs the GM (orders refused as too late, or as answering a turn already
resolved), newest last. The words the GM reads are the letters' (templates/_common/digest.txt).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.clock import as_utc
from bot.models import AttentionKind, Game, GmAttention, InboundMessage, InboundStatus, Reason, Seat
from bot.safe_text import echo

MAX_TEXT = 2000  # characters of one item as kept (a player's note is quoted, not stored whole)
MAX_LINES = 12  # lines of one item as kept

# The refusals the mail records hold that a GM should see: orders lost.
_LOST = {Reason.LATE: AttentionKind.LOST, Reason.RESOLVED_TURN: AttentionKind.REFUSED_RESEND}


@dataclass(frozen=True, slots=True)
class Attention:
    """One item: in which game, about which seat (if one), what kind, when, and what to show
    (one or a few printable lines)."""

    game: str
    kind: AttentionKind
    at: datetime
    text: str
    seat: str | None = None


def kept_text(text: str) -> str:
    """`text` as an item keeps it: each line one printable line (`echo`), at most MAX_LINES of
    them and MAX_TEXT characters in all; the text of a mail is never trusted to be short."""
    lines = [echo(line, 200) for line in text.splitlines() if line.strip()][:MAX_LINES]
    return "\n".join(lines)[:MAX_TEXT]


def add(
    session: Session, game: Game, kind: AttentionKind, text: str, *, at: datetime, seat: Seat | str | None = None
) -> None:
    """One item for `game`'s GM, written with the caller's transaction."""
    name = seat.name if isinstance(seat, Seat) else seat
    session.add(GmAttention(game_id=game.id, seat=name, kind=kind.value, text=kept_text(text), created_at=at))


def items(session: Session, games: Collection[Game], since: datetime) -> list[Attention]:
    """Every item of `games` since `since` (exclusive), oldest first: the items added, and the
    orders the mail records show refused as too late or as answering a resolved turn."""
    if not games:
        return []
    names = {g.id: g.name for g in games}
    out: list[Attention] = [
        Attention(names[row.game_id], AttentionKind(row.kind), as_utc(row.created_at), row.text, row.seat)
        for row in session.scalars(
            select(GmAttention)
            .where(GmAttention.game_id.in_(names), GmAttention.created_at > since)
            .order_by(GmAttention.id)
        )
    ]
    seats = {
        seat_id: name
        for seat_id, name in session.execute(select(Seat.id, Seat.name).where(Seat.game_id.in_(names))).all()
    }
    for row in session.scalars(
        select(InboundMessage)
        .where(
            InboundMessage.game_id.in_(names),
            InboundMessage.received_at > since,
            InboundMessage.status == InboundStatus.REFUSED,
            InboundMessage.reason.in_(list(_LOST)),
        )
        .order_by(InboundMessage.id)
    ):
        assert row.game_id is not None
        out.append(
            Attention(
                names[row.game_id],
                _LOST[Reason(row.reason)],
                as_utc(row.received_at),
                echo(row.detail, 300),
                seats.get(row.seat_id) if row.seat_id is not None else None,
            )
        )
    return sorted(out, key=lambda item: item.at)


__all__ = ["MAX_LINES", "MAX_TEXT", "Attention", "add", "items", "kept_text"]
