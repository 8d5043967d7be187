"""A game's public record of its dice (issue 31): what `flagman verify` checks.

Written into the game's archive as ``record.json`` (format `bot.verify.FORMAT`) beside a page,
``dice.html``, saying what was committed when. For every turn resolved with a secret: its
number and label, the commitment its sheets carried (and when the turn opened), the secret its
results revealed (and when), the digest of the orders used, the seed of its dice and every
seat's receipt. Once the game has finished, also the turn's state, the orders used (Racecraft's,
Speed Circuit's private parts are public then), the order in which they arrived, the events and
the state after: enough to resolve every turn again with the rules alone. Turns opened before
dice were committed to (no secret) are listed by number only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import dice, store
from bot.clock import as_utc
from bot.models import Game, GameStatus, OrderSubmission, Turn
from bot.store import orders_on_file
from bot.verify import FORMAT
from rules import fair, find_game
from rules.api import AnyGame, GameOrder, GameState


def orders_used(rules: AnyGame, state: GameState, game: Game, subs: store.BySeat) -> dict[str, tuple[GameOrder, ...]]:
    """The orders a resolved turn used, seat by seat, as filed: the seat's own (mail, GM's ORDER),
    or what was filed for it at resolution (the default, the GM's plot); the game's default
    for a seat without a row."""
    used: dict[str, tuple[GameOrder, ...]] = {}
    for name in sorted(rules.expected_players(state)):
        seat = store.seat_named(game, name)
        rows: Sequence[OrderSubmission] = subs.get(seat.id, ()) if seat is not None else ()
        own = orders_on_file(rules, state, seat, rows) if seat is not None else None
        if own is None:
            filed = [r for r in rows if r.source in ("default", "plot")]
            own = rules.parse_orders(state, name, filed[-1].text).orders if filed else rules.default_orders(state, name)
        used[name] = own
    return used


def build(session: Session, game: Game) -> dict[str, Any]:
    """The record of `game` as it stands (see the module's docstring)."""
    rules = find_game(game.kind)
    finished = game.status == GameStatus.FINISHED
    rows = list(session.scalars(select(Turn).where(Turn.game_id == game.id).order_by(Turn.number)))
    resolved = [t for t in rows if t.state_after is not None and t.secret is not None]
    by_turn = store.turns_submissions(session, [t.id for t in resolved])
    turns: list[dict[str, Any]] = []
    for turn in resolved:
        assert turn.secret is not None and turn.resolved_at is not None
        state = rules.load_state(turn.state)
        used = dice.canonical(rules, orders_used(rules, state, game, by_turn.get(turn.id, {})))
        entry: dict[str, Any] = {
            "number": turn.number,
            "label": turn.label,
            "commitment": fair.commitment(turn.secret),
            "opened_at": as_utc(turn.opened_at).isoformat(),
            "secret": turn.secret,
            "revealed_at": as_utc(turn.resolved_at).isoformat(),
            "digest": fair.orders_digest(used),
            "seed": turn.seed,
            "receipts": {
                seat: fair.receipt(game.name, seat, turn.number, turn.secret, text)
                for seat, text in sorted(used.items())
            },
        }
        if finished:
            entry.update(
                {
                    "state": turn.state,
                    "orders": used,
                    "submitted": list(turn.submitted or ()),
                    "events": turn.events,
                    "state_after": turn.state_after,
                }
            )
        turns.append(entry)
    open_turn = next((t for t in rows if t.state_after is None and t.secret is not None), None)
    return {
        "format": FORMAT,
        "game": game.name,
        "kind": game.kind,
        "finished": finished,
        "turns": turns,
        "before_commitments": [t.number for t in rows if t.secret is None and t.state_after is not None],
        "open": {
            "number": open_turn.number,
            "label": open_turn.label,
            "commitment": fair.commitment(open_turn.secret),
            "opened_at": as_utc(open_turn.opened_at).isoformat(),
        }
        if open_turn is not None and open_turn.secret is not None
        else None,
    }


__all__ = ["build", "orders_used"]
