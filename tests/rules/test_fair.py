"""The scheme of dice anyone can check (issue 31; rules/fair.py, docs/DESIGN.md "Dice anyone can
check"): each piece is what its definition says, computable with any SHA-256 tool."""

from __future__ import annotations

import hashlib
import shutil
import subprocess

from hypothesis import given
from hypothesis import strategies as st

from rules import fair

SECRETS = st.binary(min_size=32, max_size=32).map(bytes.hex)
ORDERS = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789\n", max_size=40),
    min_size=1,
    max_size=8,
)


def test_the_commitment_is_what_sha256sum_prints_for_the_secret() -> None:
    """ "Any SHA-256 tool checks it: printf %s SECRET | sha256sum"."""
    secret = "0123456789abcdef" * 4
    tool = shutil.which("sha256sum")
    assert tool is not None, "sha256sum (coreutils) is needed to check the commitment as a player would"
    printed = subprocess.run([tool], input=secret.encode(), capture_output=True, check=True).stdout.decode()
    assert fair.commitment(secret) == printed.split()[0]


@given(secret=SECRETS)
def test_a_secret_is_64_hex_digits_and_its_commitment_another_64(secret: str) -> None:
    assert fair.is_secret(secret) and fair.is_secret(fair.commitment(secret))
    assert fair.commitment(secret) == hashlib.sha256(secret.encode("ascii")).hexdigest()


@given(orders=ORDERS)
def test_the_orders_text_is_each_seat_in_sorted_order_with_its_orders(orders: dict[str, str]) -> None:
    text = fair.orders_text(orders)
    assert text == "".join(f"{seat}\n{orders[seat].strip()}\n" for seat in sorted(orders))
    assert fair.orders_digest(orders) == hashlib.sha256(text.encode()).hexdigest()


@given(secret=SECRETS, other=SECRETS, orders=ORDERS, turn=st.integers(1, 500))
def test_the_seed_changes_with_the_secret_the_orders_the_game_and_the_turn(
    secret: str, other: str, orders: dict[str, str], turn: int
) -> None:
    """No input of the seed is idle: change any one, and the dice change."""
    digest = fair.orders_digest(orders)
    seed = fair.dice_seed("rc1", turn, secret, digest)
    assert 0 <= seed < 2**63
    if other != secret:
        assert fair.dice_seed("rc1", turn, other, digest) != seed
    changed = {**orders, next(iter(orders)): orders[next(iter(orders))] + " X"}
    assert fair.dice_seed("rc1", turn, secret, fair.orders_digest(changed)) != seed
    assert fair.dice_seed("rc2", turn, secret, digest) != seed
    assert fair.dice_seed("rc1", turn + 1, secret, digest) != seed


def test_the_seed_is_sha256_of_its_line_read_as_the_docs_say() -> None:
    secret, digest = "ab" * 32, "cd" * 32
    expected = (
        int.from_bytes(hashlib.sha256(f"flagman-dice\nrc1\n3\n{secret}\n{digest}".encode()).digest()[:8], "big") >> 1
    )
    assert fair.dice_seed("rc1", 3, secret, digest) == expected


@given(orders=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789\n", max_size=40))
def test_a_receipt_is_20_hex_digits_of_game_seat_turn_secret_and_orders(orders: str) -> None:
    """Issue 31: "a digest of the game, seat, turn and the canonical orders ... at least 16 digits";
    the turn's secret in it (docs/DESIGN.md) keeps it from being matched against every order."""
    secret = "ab" * 32
    receipt = fair.receipt("rc1", "kelly", 2, secret, orders)
    assert len(receipt) == fair.RECEIPT_DIGITS >= 16 and all(c in "0123456789abcdef" for c in receipt)
    assert (
        receipt
        == hashlib.sha256(f"flagman-receipt\nrc1\nkelly\n2\n{secret}\n{orders.strip()}".encode()).hexdigest()[:20]
    )
    assert fair.receipt("rc1", "seb", 2, secret, orders) != receipt
    assert fair.receipt("rc1", "kelly", 3, secret, orders) != receipt
    assert fair.receipt("rc1", "kelly", 2, "cd" * 32, orders) != receipt
