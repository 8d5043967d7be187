"""Dice anyone can check (issue 31): the bot commits to a secret before a turn, reveals it after.

Gambling sites call this "provably fair": commit to a secret, let the players' input mix in,
reveal afterwards. For each turn:

==========  ===========================================================================
secret      32 random bytes drawn when the turn opens, written as 64 lower-case hex digits
commitment  SHA-256 of those 64 hex digits (as ASCII text), in hex; on every sheet of the
            turn. Any SHA-256 tool checks it: ``printf %s SECRET | sha256sum``
orders      every seat's orders used in the turn (after defaults), in canonical form: for each
            seat in sorted order the seat's name, a new line, its orders as the game writes
            them (one per line), a new line; all of it UTF-8
digest      SHA-256 of that text, in hex
seed        the first 8 bytes of SHA-256 of ``"flagman-dice\\n<game>\\n<turn number>\\n<secret>\\n
            <digest>"`` (UTF-8), read big-endian, shifted right by one bit (63 bits); the turn's
            dice come from Python's ``random.Random(seed)`` (CPython 3.11's Mersenne Twister and
            its ``randrange``/``random``), as the rules draw them
receipt     the first 20 hex digits of SHA-256 of ``"flagman-receipt\\n<game>\\n<seat>\\n<turn
            number>\\n<secret>\\n<orders>"``, where ``<orders>`` is that seat's canonical orders:
            the secret in it keeps a receipt from being matched against every possible order
            (an order often has few) before the results reveal the secret
==========  ===========================================================================

So nobody -- the operator included -- knows a turn's rolls before every order is fixed (the
seed needs the orders), and the secret cannot be chosen after the orders are known (it was
committed to before). The results reveal the secret and list every seat's receipt; `flagman
verify` re-checks a game's published record turn by turn. Pure: the secret is given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

SECRET_BYTES = 32
RECEIPT_DIGITS = 20


def is_secret(text: str) -> bool:
    """`text` is a secret as the bot writes one: 64 lower-case hex digits."""
    return len(text) == 2 * SECRET_BYTES and all(c in "0123456789abcdef" for c in text)


def commitment(secret: str) -> str:
    """The commitment to `secret` (its 64 hex digits): SHA-256 of them, in hex."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def orders_text(orders: Mapping[str, str]) -> str:
    """Every seat's canonical orders (seat -> the game's `format_orders`), in canonical form."""
    return "".join(f"{seat}\n{orders[seat].strip()}\n" for seat in sorted(orders))


def orders_digest(orders: Mapping[str, str]) -> str:
    return hashlib.sha256(orders_text(orders).encode("utf-8")).hexdigest()


def dice_seed(game: str, turn: int, secret: str, digest: str) -> int:
    """The seed of the turn's dice: the secret and the orders' digest together."""
    data = hashlib.sha256(f"flagman-dice\n{game}\n{turn}\n{secret}\n{digest}".encode()).digest()
    return int.from_bytes(data[:8], "big") >> 1  # 63 bits: fits a signed BIGINT column


def receipt(game: str, seat: str, turn: int, secret: str, orders: str) -> str:
    """The receipt of one seat's orders for one turn (`orders` canonical; `secret` the turn's)."""
    data = f"flagman-receipt\n{game}\n{seat}\n{turn}\n{secret}\n{orders.strip()}".encode()
    return hashlib.sha256(data).hexdigest()[:RECEIPT_DIGITS]


__all__ = [
    "RECEIPT_DIGITS",
    "SECRET_BYTES",
    "commitment",
    "dice_seed",
    "is_secret",
    "orders_digest",
    "orders_text",
    "receipt",
]
