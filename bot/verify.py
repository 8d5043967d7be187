"""`flagman verify DIR`: re-check a game's public record, turn by turn (issue 31).

A game's archive (`flagman archive`, and the bot's own after every turn) holds
``record.json``: for every resolved turn the commitment its sheets carried, the secret its
results revealed, the digest of the orders used, the dice seed and every seat's receipt; and,
once the game has finished (the orders and states are private until then), the turn's state,
the orders used, the order in which they arrived, the events and the state after. This module
checks what the record holds, with the rules and nothing of the bot's database or secrets --
the program any player can run (docs/DESIGN.md, "Dice anyone can check" states the scheme for
those who would write their own):

commitment  SHA-256 of the revealed secret is the commitment mailed before
seed        the seed is `rules.fair.dice_seed(game, turn, secret, digest)`
digest      the digest is that of the orders published (a finished game)
receipts    each seat's receipt is that of its published orders (a finished game)
chain       a turn's state is the state after the turn before (a finished game)
events      the turn resolved again, from its state and orders with the seed's dice, gives the
            published events, rolls included, and state (a finished game)

The first item that does not hold is named, with its turn. What an unfinished game keeps private
is said as skipped.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rules import UnknownGameError, fair, find_game
from rules.api import AnyGame, GameOrder, GameState

RECORD = "record.json"
FORMAT = 1


class RecordError(ValueError):
    """The record cannot be read at all (no file, not JSON, another format)."""


@dataclass(frozen=True, slots=True)
class Failure:
    turn: int
    item: str
    detail: str

    def __str__(self) -> str:
        return f"turn {self.turn}: {self.item}: {self.detail}"


@dataclass
class Verdict:
    """What `verify` found: the turns checked, the items each checked, what was skipped, and the
    first failure (None: everything checked holds)."""

    game: str
    turns: int = 0
    checked: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


def read_record(directory: Path) -> dict[str, Any]:
    path = directory / RECORD
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{path} does not exist: give the folder of a game's archive (flagman archive)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError(f"{path} is not a record this version of flagman reads (format {FORMAT})")
    return data


def _orders(rules: AnyGame, state: GameState, published: Mapping[str, str]) -> dict[str, tuple[GameOrder, ...]]:
    orders: dict[str, tuple[GameOrder, ...]] = {}
    for seat, text in published.items():
        parsed = rules.parse_orders(state, seat, text)
        if parsed.problems:
            raise ValueError(f"{seat}'s orders do not parse: {parsed.problems[0].reason}")
        orders[seat] = parsed.orders
    return orders


Turn = dict[str, Any]  # one turn of the record, as JSON gives it


def _check_turn(rules: AnyGame, game: str, finished: bool, turn: Turn, before: object) -> Failure | str:
    """One resolved turn: its first item that does not hold, or what was checked (a finished
    game's turn also the orders, receipts, dice, events and state)."""
    number = int(turn.get("number", 0))
    secret, commitment = str(turn.get("secret", "")), str(turn.get("commitment", ""))
    if not fair.is_secret(secret):
        return Failure(number, "secret", "not 64 hex digits")
    if fair.commitment(secret) != commitment:
        return Failure(
            number, "commitment", f"SHA-256 of the secret is {fair.commitment(secret)}, the sheets said {commitment}"
        )
    digest = str(turn.get("digest", ""))
    if fair.dice_seed(game, number, secret, digest) != turn.get("seed"):
        return Failure(number, "seed", "not the seed of this secret and these orders")
    if not finished or "orders" not in turn:
        return "commitment, seed"
    published = {str(k): str(v) for k, v in turn["orders"].items()}
    if fair.orders_digest(published) != digest:
        return Failure(number, "orders", "the orders published are not the ones the digest was made of")
    for seat, receipt in sorted(turn.get("receipts", {}).items()):
        if fair.receipt(game, seat, number, secret, published.get(seat, "")) != receipt:
            return Failure(number, f"receipt {seat}", "not the receipt of the orders published for this seat")
    if before is not None and turn.get("state") != before:
        return Failure(number, "chain", "the turn's state is not the state after the turn before")
    try:
        state = rules.load_state(turn["state"])
        orders = _orders(rules, state, published)
    except (KeyError, ValueError) as exc:
        return Failure(number, "orders", str(exc))
    resolution = rules.resolve(state, orders, random.Random(int(turn["seed"])), tuple(turn.get("submitted") or ()))
    events, shown = [e.to_json() for e in resolution.events], list(turn.get("events") or [])
    if events != shown:
        first = next(
            (i for i, (a, b) in enumerate(zip(events, shown, strict=False)) if a != b), min(len(events), len(shown))
        )
        return Failure(number, "events", f"the dice of this seed give another event {first + 1} than the one published")
    if rules.dump_state(resolution.state) != turn.get("state_after"):
        return Failure(number, "state", "the turn resolved again ends in another state than the one published")
    return "commitment, seed, orders, receipts, dice, events and state"


def verify(record: Mapping[str, Any]) -> Verdict:
    """Check every resolved turn of `record` (see the module's docstring), up to the first
    failure."""
    game = str(record.get("game", ""))
    verdict = Verdict(game)
    try:
        rules = find_game(str(record.get("kind", "")))
    except UnknownGameError:
        verdict.failure = Failure(0, "game", f"no such kind of game: {record.get('kind')!r}")
        return verdict
    finished = bool(record.get("finished"))
    for number in record.get("before_commitments", []):
        verdict.skipped.append(f"turn {number}: resolved before dice were committed to (nothing to check)")
    before: object = None
    for turn in record.get("turns", []):
        verdict.turns += 1
        found = _check_turn(rules, game, finished, turn, before)
        if isinstance(found, Failure):
            verdict.failure = found
            return verdict
        verdict.checked.append(f"turn {turn.get('number')}: {found}")
        if "orders" not in turn or not finished:
            verdict.skipped.append(
                f"turn {turn.get('number')}: the orders, receipts and dice (published when the game ends)"
            )
        before = turn.get("state_after")
    return verdict


__all__ = ["FORMAT", "RECORD", "Failure", "RecordError", "Verdict", "read_record", "verify"]
