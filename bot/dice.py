"""Dice anyone can check (issue 31), the shell's side of `rules.fair`.

Each turn gets a fresh secret when it opens (`Entropy.secret`, stored on the turn); its sheets
carry the commitment to it. At resolution the seed of the turn's dice is worked out from that
secret and the digest of every order set used, defaults included (`seed_for`), and stored in
``turn.seed``, so a replay uses it again exactly; the results reveal the secret and list every
seat's receipt. A turn opened before the scheme (its ``secret`` is NULL) keeps the seed it was
opened with.

Where the secret comes from is the shell's to say, as the clock is: `OsEntropy` (the operating
system's randomness) in the service; `SeededEntropy` where the same mail must come out of every
run (the demo, the benchmarks, the tests).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rules import fair

if TYPE_CHECKING:
    from rules.api import AnyGame, GameOrder


class Entropy(Protocol):
    def secret(self, game: str, turn: int, previous: str | None) -> str:
        """A fresh secret (`rules.fair.is_secret`) for turn `turn` of `game`, opening now;
        `previous`: the secret the turn had before (a ROLLBACK reopens it: that one is public)."""
        ...


@dataclass(frozen=True, slots=True)
class OsEntropy:
    """The service's: 32 bytes of the operating system's randomness, unknowable in advance."""

    def secret(self, game: str, turn: int, previous: str | None) -> str:
        return secrets.token_hex(fair.SECRET_BYTES)


@dataclass(frozen=True, slots=True)
class SeededEntropy:
    """The same secrets in every run, from `seed` (never in a real game: anyone knowing the seed
    knows every secret)."""

    seed: int

    def secret(self, game: str, turn: int, previous: str | None) -> str:
        return hashlib.sha256(
            f"flagman-seeded-secret\n{self.seed}\n{game}\n{turn}\n{previous or ''}".encode()
        ).hexdigest()


def canonical(rules: AnyGame, orders: Mapping[str, tuple[GameOrder, ...]]) -> dict[str, str]:
    """Every seat's orders as the game writes them: what the digest and receipts are made of."""
    return {seat: rules.format_orders(orders[seat]) for seat in orders}


def seed_for(
    game: str,
    number: int,
    secret: str | None,
    legacy_seed: int,
    rules: AnyGame,
    orders: Mapping[str, tuple[GameOrder, ...]],
) -> int:
    """The seed of the dice of turn `number` resolved with `orders` (after defaults)."""
    if secret is None:
        return legacy_seed
    return fair.dice_seed(game, number, secret, fair.orders_digest(canonical(rules, orders)))


def receipts(
    game: str, number: int, secret: str, rules: AnyGame, orders: Mapping[str, tuple[GameOrder, ...]]
) -> dict[str, str]:
    """Each seat's receipt of the orders used for it."""
    return {seat: fair.receipt(game, seat, number, secret, text) for seat, text in canonical(rules, orders).items()}


__all__ = ["Entropy", "OsEntropy", "SeededEntropy", "canonical", "receipts", "seed_for"]
