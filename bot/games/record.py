"""A game's public record of its dice: what `flagman verify` checks (format `bot.verify.FORMAT`).

Written into the game's archive as ``record.json`` beside the pages people read (``dice.html``
says the same for people). It holds:

* ``commitments``: the game's commitment log, every commitment ever made for a turn, in the
  order made (`bot.dice`): the turn's number and label, the commitment, when it was made and
  why (the turn opened, or a ROLLBACK reopened it), the head of the log after it, and once
  revealed the secret, when, and what became of it (resolved, rolled back, withdrawn); ``head``
  the log's last head (the sheets print it, so a player compares);
* ``turns``: every turn resolved with a secret: its number, label and scheme, the commitment
  its sheets carried and its log entry, which draw of the turn it was, the secret its results
  revealed (and when), the digest of the orders used, the seed, every seat's receipt, the GM's
  changes to its orders (``gm_orders``), and the public report's lines (``public_events``, as
  its page shows them), the GM's changes to its state (``state_changes``: when, by which door);
  once the game has finished also the turn's state, the orders used (in
  the form the dice digest them), the order in which they arrived, the events and the state
  after: enough to resolve every turn again with the rules alone;
* ``turn_count``: how many turns were resolved (the index lists each), ``before_commitments``
  those resolved before dice were committed to, ``open`` the turn open now, ``seats``, and
  whether the game has ``finished``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import dice, store
from bot.clock import as_utc
from bot.letters.cache import LetterCache
from bot.letters.reveal import gm_orders
from bot.models import Commitment, Game, GameStatus, GmAudit, OrderSubmission, Turn
from bot.store import orders_on_file
from bot.verify import FORMAT
from rules import fair, find_game
from rules.api import AnyGame, Event, GameOrder, GameState, Resolution, Roll, View, Viewer


def events_of(turn: Turn) -> tuple[Event, ...]:
    """A resolved turn's events as the rules gave them (from their JSON)."""
    out = []
    for data in turn.events or ():
        roll = data.get("roll")
        out.append(
            Event(
                data["kind"],
                data["text"],
                tuple(data.get("players", ())),
                Roll(roll["dice"], tuple(roll["faces"]), roll["total"]) if roll else None,
            )
        )
    return tuple(out)


def public_events(rules: AnyGame, turn: Turn) -> list[str]:
    """The lines of a resolved turn's public report, as its page shows them."""
    assert turn.state_after is not None
    state = rules.load_state(turn.state_after)
    return report_lines(rules.view(state, Resolution(state, events_of(turn)), Viewer.PUBLIC))


def report_lines(view: View) -> list[str]:
    """The lines of a view's report ("What happened"), as its page lists them."""
    lines = view["events"]
    assert isinstance(lines, (list, tuple))
    return [str(line) for line in lines]


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


def _state_changes(session: Session, game: Game) -> list[tuple[int, datetime, str]]:
    """The GM's changes to an open turn's state (SET, DROP: their audit keeps the state they
    replaced), as (turn number, when, through which door): such a turn opens from another state
    than the turn before ended in, and the record says so (what changed stays private)."""
    found = []
    for audit in session.scalars(select(GmAudit).where(GmAudit.game_id == game.id).order_by(GmAudit.id)):
        undo = audit.undo if isinstance(audit.undo, dict) else {}
        if "state" in undo and isinstance(undo.get("turn"), int):
            by = "by mail" if audit.via == "mail" else "on the server's command line"
            found.append((int(undo["turn"]), audit.created_at, by))
    return found


def build(session: Session, game: Game) -> dict[str, Any]:
    """The record of `game` as it stands (see the module's docstring)."""
    rules = find_game(game.kind)
    finished = game.status == GameStatus.FINISHED
    rows = list(session.scalars(select(Turn).where(Turn.game_id == game.id).order_by(Turn.number)))
    resolved = [t for t in rows if t.state_after is not None and t.secret is not None]
    by_turn = store.turns_submissions(session, [t.id for t in resolved])
    log = dice.entries(session, game.id)
    cache = LetterCache(log={game.id: log})
    changed = _state_changes(session, game)
    turns = [
        _resolved_turn(session, cache, rules, game, turn, by_turn.get(turn.id, {}), log, changed, finished=finished)
        for turn in resolved
    ]
    open_turn = next((t for t in rows if t.state_after is None and t.secret is not None), None)
    return {
        "format": FORMAT,
        "game": game.name,
        "kind": game.kind,
        "title": rules.title,
        "chance": rules.chance,
        "finished": finished,
        "seats": sorted(seat.name for seat in game.seats),
        "robots": sorted(seat.name for seat in game.seats if seat.robot),
        "turn_count": len([t for t in rows if t.state_after is not None]),
        "turns": turns,
        "before_commitments": [t.number for t in rows if t.secret is None and t.state_after is not None],
        "open": _open_turn(log, open_turn) if open_turn is not None else None,
        "commitments": [_commitment(c) for c in log],
        "head": dice.end_of(log)[1],
    }


def _resolved_turn(
    session: Session,
    cache: LetterCache,
    rules: AnyGame,
    game: Game,
    turn: Turn,
    subs: store.BySeat,
    log: Sequence[Commitment],
    changed: Sequence[tuple[int, datetime, str]],
    *,
    finished: bool,
) -> dict[str, Any]:
    """One resolved turn's entry under ``turns`` (see the module's docstring); a finished
    game's also holds enough to resolve the turn again with the rules alone."""
    assert turn.secret is not None and turn.resolved_at is not None
    state = rules.load_state(turn.state)
    orders = orders_used(rules, state, game, subs)
    turn_key = dice.key(game.name, turn, dice.scheme_of(game.name, turn, rules, state, orders))
    used = dice.used(rules, state, orders, turn_key.scheme)
    committed = fair.commitment(turn.secret)
    draw = dice.draw_of(log, turn.number, committed)
    entry: dict[str, Any] = {
        "number": turn.number,
        "label": turn.label,
        "scheme": turn_key.scheme,
        "commitment": committed,
        "log": draw.entry.seq if draw.entry is not None else None,
        "draw": draw.count,
        "earlier": [c.seq for c in draw.earlier],
        "committed_at": dice.stamp(draw.entry.made_at if draw.entry is not None else turn.opened_at),
        "secret": turn.secret,
        "revealed_at": dice.stamp(turn.resolved_at),
        "digest": fair.orders_digest(used),
        "seed": turn.seed,
        "receipts": dice.receipts(turn_key, turn.secret, used),
        "gm_orders": [{"seat": g["seat"], "at": g["at"], "by": g["by"]} for g in gm_orders(session, cache, game, turn)],
        "public_events": public_events(rules, turn),
        "state_changes": [
            {"at": dice.stamp(at), "by": by}
            for number, at, by in changed
            if number == turn.number and as_utc(at) >= as_utc(turn.opened_at)
        ],
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
    return entry


def _open_turn(log: Sequence[Commitment], turn: Turn) -> dict[str, Any] | None:
    """The entry under ``open``: the open turn's commitment and its place in the log."""
    if turn.secret is None:
        return None
    committed = fair.commitment(turn.secret)
    draw = dice.draw_of(log, turn.number, committed)
    return {
        "number": turn.number,
        "label": turn.label,
        "commitment": committed,
        "log": draw.entry.seq if draw.entry is not None else None,
        "draw": draw.count,
        "committed_at": dice.stamp(draw.entry.made_at if draw.entry is not None else turn.opened_at),
    }


def _commitment(c: Commitment) -> dict[str, Any]:
    """One entry of the commitment log under ``commitments``."""
    return {
        "seq": c.seq,
        "number": c.number,
        "label": c.label,
        "commitment": c.commitment,
        "made_at": dice.stamp(c.made_at),
        "why": c.why,
        "head": c.head,
        "fate": str(c.fate),
        "secret": c.secret,
        "revealed_at": dice.stamp(c.revealed_at) if c.revealed_at is not None else None,
    }


__all__ = ["build", "events_of", "orders_used", "public_events", "report_lines"]
