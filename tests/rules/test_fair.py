"""The scheme of dice anyone can check (rules/fair.py, docs/DESIGN.md "Dice anyone can
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
    """ "a digest of the game, seat, turn and the canonical orders ... at least 16 digits";
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


def test_scheme_2_names_the_turn_by_its_label_and_reads_as_the_docs_say() -> None:
    """Scheme 2 (docs/DESIGN.md): the seed and the receipt are SHA-256 of their lines with the
    turn's label, as every mail names the turn, so a player checks them with what the mail says."""
    secret, digest = "ab" * 32, "cd" * 32
    key = fair.TurnKey("sc1", 3, "Race turn 1", 2)
    line = f"flagman-dice-2\nsc1\nRace turn 1\n{secret}\n{digest}".encode()
    assert key.seed(secret, digest) == int.from_bytes(hashlib.sha256(line).digest()[:8], "big") >> 1
    receipt = hashlib.sha256(f"flagman-receipt-2\nsc1\nkelly\nRace turn 1\n{secret}\nSPEED 20".encode()).hexdigest()
    assert key.receipt("kelly", secret, "SPEED 20\n") == receipt[:20]
    assert fair.TurnKey("sc1", 3, "Race turn 1", 1).seed(secret, digest) == fair.dice_seed("sc1", 3, secret, digest)
    assert fair.TurnKey("sc1", 9, "Race turn 1", 2).seed(secret, digest) == key.seed(secret, digest)
    assert fair.TurnKey("sc1", 3, "Race turn 2", 2).seed(secret, digest) != key.seed(secret, digest)


@given(
    entries=st.lists(
        st.tuples(st.integers(1, 40), st.text(max_size=12), SECRETS, st.sampled_from(fair.WHYS)), min_size=1, max_size=6
    ),
    which=st.integers(0, 5),
)
def test_each_log_head_is_made_of_the_head_before_and_its_entry(
    entries: list[tuple[int, str, str, str]], which: int
) -> None:
    """The commitment log is a chain: a head is SHA-256 of the head before it and its entry (the
    first's before it 64 zeros); changing any earlier entry changes every later head."""
    heads, head = [], fair.GENESIS
    for number, label, secret, why in entries:
        text = f"flagman-log\n{head}\nsc1\n{number}\n{label}\n{fair.commitment(secret)}\n2026-01-01T00:00:00Z\n{why}"
        head = fair.log_head(head, "sc1", number, label, fair.commitment(secret), "2026-01-01T00:00:00Z", why)
        assert head == hashlib.sha256(text.encode()).hexdigest()
        heads.append(head)
    index = which % len(entries)
    changed, head = list(entries), fair.GENESIS
    number, label, secret, why = changed[index]
    changed[index] = (number + 1, label, secret, why)
    for position, (number, label, secret, why) in enumerate(changed):
        head = fair.log_head(head, "sc1", number, label, fair.commitment(secret), "2026-01-01T00:00:00Z", why)
        assert (head == heads[position]) == (position < index)
