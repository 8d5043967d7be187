"""What the letters say of a turn's dice and receipts (docs/DESIGN.md, "Dice anyone can check"):
the open turn's commitment on its sheets (`committed`), and what the results reveal of a resolved
turn (`revealed`): the secret, the orders' digest, the seed, the entry of the game's commitment
log, which draw of the turn this is (a ROLLBACK draws again), the receipt of every seat's orders,
the orders of the seat the letter goes to (and, once the game is over, everybody's), and the
GM's changes to the turn's orders. The block a player's own check reads (`rules.fair.read_mail`)
is rendered from it by the templates (``dice_revealed``).

A game without chance (Racecraft) has no dice to speak of: its letters carry the receipts and
the key that checks them, never a commitment or a seed (`rules.api.Game.chance`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import dice
from bot.clock import as_utc
from bot.letters.cache import LetterCache
from bot.models import Commitment, Game, GmAudit, OrderSubmission, Seat, Turn
from bot.outlook import Outcome
from bot.schedules import format_local
from rules import fair
from rules.api import AnyGame


def ordinal(count: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th ... 21st."""
    suffix = "th" if 10 <= count % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(count % 10, "th")
    return f"{count}{suffix}"


def utc_text(moment: datetime) -> str:
    """A moment of the dice's record as letters and pages write it: UTC, to the minute."""
    return as_utc(moment).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _earlier(entries: Sequence[Commitment], zone: str) -> list[dict[str, object]]:
    """The earlier draws of a turn, as a letter to someone in `zone` says them (its times in it)."""
    return [
        {
            "seq": c.seq,
            "why": c.why,
            "made_at": format_local(as_utc(c.made_at), zone),
            "fate": str(c.fate),
            "commitment": c.commitment,
            "revealed_at": format_local(as_utc(c.revealed_at), zone) if c.revealed_at is not None else None,
        }
        for c in entries
    ]


def committed(
    session: Session, cache: LetterCache, game: Game, rules: AnyGame, turn: Turn | None, zone: str
) -> dict[str, Any] | None:
    """The open turn's commitment, for its sheets to someone in `zone` (the time it was made is
    in that zone, as every time a letter shows): None where there is none to show (no secret, or
    a game without chance)."""
    if turn is None or turn.secret is None or not rules.chance:
        return None
    commitment = fair.commitment(turn.secret)
    draw = dice.draw_of(cache.log_of(session, game.id), turn.number, commitment)
    entry = draw.entry
    return {
        "commitment": commitment,
        "label": turn.label,
        "seq": entry.seq if entry is not None else None,
        "head": entry.head if entry is not None else None,
        "made_at": format_local(as_utc(entry.made_at), zone) if entry is not None else None,
        "draw": draw.count,
        "draw_word": ordinal(draw.count),
    }


def gm_orders(session: Session, cache: LetterCache, game: Game, turn: Turn) -> list[dict[str, object]]:
    """The GM's changes to the turn's orders (ORDER, a seat's orders entered or replaced), oldest
    first: which seat, when, and through which door (mail or the server's command line)."""
    if turn.id not in cache.gm_orders:
        cache.gm_orders[turn.id] = _gm_orders(session, game, turn)
    return cache.gm_orders[turn.id]


def gm_orders_in(session: Session, cache: LetterCache, game: Game, turn: Turn, zone: str) -> list[dict[str, object]]:
    """`gm_orders` as a letter to someone in `zone` says them: each time in that zone, as every
    letter writes a time (`bot.schedules.format_local`)."""
    return [
        {**g, "at": format_local(when, zone) if isinstance(when := g["when"], datetime) else g["at"]}
        for g in gm_orders(session, cache, game, turn)
    ]


def read_gm_orders(
    session: Session, cache: LetterCache, game: Game, turn: Turn, subs: Mapping[int, Sequence[OrderSubmission]]
) -> None:
    """`gm_orders` of `turn` from its submissions at hand (`subs`, by seat): no query but where
    the GM did enter orders (the door each came through is in the audit log)."""
    every = [(sub.id, sub.seat_id, sub.received_at, sub.source) for seat_subs in subs.values() for sub in seat_subs]
    cache.gm_orders[turn.id] = _described(session, game, _gm_rows(every))


def _gm_orders(session: Session, game: Game, turn: Turn) -> list[dict[str, object]]:
    every = session.execute(
        select(OrderSubmission.id, OrderSubmission.seat_id, OrderSubmission.received_at, OrderSubmission.source).where(
            OrderSubmission.turn_id == turn.id
        )
    ).all()
    return _described(session, game, _gm_rows([(i, seat, at, source) for i, seat, at, source in every]))


def _gm_rows(every: Sequence[tuple[int, int, datetime, str]]) -> list[tuple[int, datetime, bool]]:
    """The GM's submissions among a turn's (id, seat id, received, source), oldest first: the
    seat, when, and whether the seat's player sent orders of their own after it."""
    rows = sorted(row for row in every if row[3] == "gm")
    return [
        (seat_id, at, any(o_seat == seat_id and o_id > sub_id and src == "mail" for o_id, o_seat, _, src in every))
        for sub_id, seat_id, at, _ in rows
    ]


def _described(session: Session, game: Game, rows: Sequence[tuple[int, datetime, bool]]) -> list[dict[str, object]]:
    if not rows:
        return []
    names = {seat.id: seat for seat in game.seats}
    doors = {
        as_utc(at): via
        for at, via in session.execute(
            select(GmAudit.created_at, GmAudit.via).where(GmAudit.game_id == game.id, GmAudit.command.like("ORDER %"))
        ).all()
    }
    found: list[dict[str, object]] = []
    for seat_id, at, then_own in rows:
        seat: Seat | None = names.get(seat_id)
        via = doors.get(as_utc(at), "mail")
        found.append(
            {
                "seat": seat.name if seat is not None else str(seat_id),
                "robot": bool(seat is not None and seat.robot),
                "at": utc_text(at),  # as the game's record and archive write it
                "when": as_utc(at),
                "by": "by mail" if via == "mail" else "on the server's command line",
                "then_own": then_own,
            }
        )
    return found


def revealed(
    session: Session,
    cache: LetterCache,
    game: Game,
    rules: AnyGame,
    resolved: Turn,
    outcome: Outcome | None,
    seat: str | None,
    zone: str,
    *,
    final: bool,
) -> dict[str, Any] | None:
    """What the results reveal of `resolved`'s dice and receipts, for the letter to `seat` (None:
    the GM's copy) in `zone` (its times are in it); `final`: the game ended with it (every seat's
    orders are public then). None for a turn resolved before the dice were committed to."""
    if outcome is None or resolved.secret is None:
        return None
    # What every seat's letter shows alike (the receipts, the digest, the log's entry) is worked
    # out once for the turn and outcome in hand, its times once for each zone its readers are
    # in; each letter adds its own seat's orders.
    key = (game.id, resolved.number, resolved.secret, id(outcome), final)
    shared = cache.revealed.get(key)
    if shared is None or shared[0] is not outcome:
        shared = (outcome, _revealed_to_all(session, cache, game, rules, resolved, outcome, final=final))
        cache.revealed[key] = shared
        cache.revealed_in.clear()
    zoned = cache.revealed_in.get((key, zone))
    if zoned is None:
        every = shared[1]
        zoned = cache.revealed_in[(key, zone)] = {**every, "earlier": _earlier(every["earlier"], zone)}
    texts = outcome.used
    return {
        **zoned,
        "shared": zoned,  # one value for all the turn's letters in a zone: the templates render it once
        "yours": {"seat": seat, "text": texts[seat]} if seat is not None and seat in texts else None,
    }


def _revealed_to_all(
    session: Session,
    cache: LetterCache,
    game: Game,
    rules: AnyGame,
    resolved: Turn,
    outcome: Outcome,
    *,
    final: bool,
) -> dict[str, Any]:
    """What every seat's letter shows alike of `resolved`'s dice and receipts; ``earlier`` holds
    the earlier draws' log entries, which `revealed` writes in each reader's zone."""
    secret = resolved.secret
    assert secret is not None  # revealed() returns before a turn without one
    turn_key = dice.key(game.name, resolved)
    commitment = fair.commitment(secret)
    draw = dice.draw_of(cache.log_of(session, game.id), resolved.number, commitment)
    entry = draw.entry
    texts = dict(outcome.used)
    receipts = dice.receipts(turn_key, secret, texts)
    return {
        "chance": rules.chance,
        "game": game.name,
        "label": resolved.label,
        "scheme": turn_key.scheme,
        "secret": secret,
        "commitment": commitment,
        "digest": fair.orders_digest(texts),
        "seed": outcome.seed,
        "seq": entry.seq if entry is not None else None,
        "head": entry.head if entry is not None else None,
        "draw": draw.count,
        "draw_word": ordinal(draw.count),
        "earlier": draw.earlier,
        "receipts": [
            {
                "seat": name,
                "receipt": receipts[name],
                "defaulted": name in outcome.defaulted,
                "filled": outcome.filled.get(name, ""),  # "plot" (the GM's) or "default"
            }
            for name in sorted(receipts)
        ],
        "every_seat": [{"seat": name, "text": texts[name]} for name in sorted(texts)] if final else [],
    }


__all__ = ["committed", "gm_orders", "gm_orders_in", "ordinal", "read_gm_orders", "revealed", "utc_text"]
