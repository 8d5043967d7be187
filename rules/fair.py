"""Dice anyone can check: the bot commits to a secret before a turn, reveals it after.

Gambling sites call this "provably fair": commit to a secret, let the players' input mix in,
reveal afterwards. For each turn (scheme 2, every turn opened since the commitment log began;
docs/DESIGN.md, "Dice anyone can check", says it for people):

==========  ===========================================================================
secret      32 random bytes drawn when the turn opens (and again when a ROLLBACK reopens it),
            written as 64 lower-case hex digits
commitment  SHA-256 of those 64 hex digits (as ASCII text), in hex; on every sheet of the
            turn. Any SHA-256 tool checks it: ``printf %s SECRET | sha256sum``
log         every commitment ever made for the game, in the order made, each entry chained to
            the one before: ``head = SHA-256("flagman-log\\n<previous head>\\n<game>\\n<turn
            number>\\n<turn label>\\n<commitment>\\n<made at>\\n<why>")``, the first entry's
            previous head 64 zeros, ``<made at>`` UTC to the second (``2025-01-31T18:00:00Z``),
            ``<why>`` ``opened`` or ``reopened`` (or ``recorded``: an entry written when the log
            began, for a turn opened before it); the head of the entry is on the sheets
orders      every seat's orders used in the turn, each in the game's normal form (the set the
            resolution acts on: defaults filled in, a line that only restates a default left
            out; `rules.api.Game.normal_orders`): for each seat in sorted order the seat's name,
            a new line, its orders as the game writes them (one per line), a new line; UTF-8
digest      SHA-256 of that text, in hex
seed        the first 8 bytes of SHA-256 of ``"flagman-dice-2\\n<game>\\n<turn label>\\n<secret>\\n
            <digest>"`` (UTF-8), read big-endian, shifted right by one bit (63 bits); the turn's
            dice come from Python's ``random.Random(seed)`` (CPython 3.11's Mersenne Twister and
            its ``randrange``/``random``), as the rules draw them
receipt     the first 20 hex digits of SHA-256 of ``"flagman-receipt-2\\n<game>\\n<seat>\\n<turn
            label>\\n<secret>\\n<orders>"``, where ``<orders>`` is that seat's orders as above:
            the secret in it keeps a receipt from being matched against every possible order
            (an order often has few) before the results reveal the secret
==========  ===========================================================================

Scheme 1 (turns opened before the log began) differs in three places: the orders digested are
the sets on file as written (a default restated made other dice), and the seed and receipt
are made with ``flagman-dice`` / ``flagman-receipt`` and the turn's number in place of its label.

The turn is named by its label, as every mail names it ("Race turn 1"), so that a player can
check a receipt and a seed with what their mail says. Pure, standard library only: the secret is
given. `read_mail` and `check_mail` check the dice block of a saved results mail; the archive
publishes this file, with a few lines that read the mail's file, as ``check-dice.py``
(`bot.verify.check_script`), so that a player needs nothing but Python to run them.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

SECRET_BYTES = 32
RECEIPT_DIGITS = 20
SCHEME = 2  # the derivation of every turn opened now
SCHEMES = (1, 2)
GENESIS = "0" * 64  # the head before a game's first log entry
WHYS = ("opened", "reopened", "recorded")
MARK = "[flagman-check]"  # ends the line of a results mail that opens its block of values


def is_secret(text: str) -> bool:
    """`text` is a secret (or a commitment, a digest, a head) as the bot writes one: 64 lower-case
    hex digits."""
    return isinstance(text, str) and len(text) == 2 * SECRET_BYTES and all(c in "0123456789abcdef" for c in text)


def commitment(secret: str) -> str:
    """The commitment to `secret` (its 64 hex digits): SHA-256 of them, in hex."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def orders_text(orders: Mapping[str, str]) -> str:
    """Every seat's orders (seat -> the game's text of them), in canonical form."""
    return "".join(f"{seat}\n{orders[seat].strip()}\n" for seat in sorted(orders))


def orders_digest(orders: Mapping[str, str]) -> str:
    return hashlib.sha256(orders_text(orders).encode("utf-8")).hexdigest()


def dice_seed(game: str, turn: int, secret: str, digest: str) -> int:
    """Scheme 1's seed of a turn's dice: the secret and the orders' digest together."""
    data = hashlib.sha256(f"flagman-dice\n{game}\n{turn}\n{secret}\n{digest}".encode()).digest()
    return int.from_bytes(data[:8], "big") >> 1  # 63 bits: fits a signed BIGINT column


def receipt(game: str, seat: str, turn: int, secret: str, orders: str) -> str:
    """Scheme 1's receipt of one seat's orders for one turn (`orders` canonical)."""
    data = f"flagman-receipt\n{game}\n{seat}\n{turn}\n{secret}\n{orders.strip()}".encode()
    return hashlib.sha256(data).hexdigest()[:RECEIPT_DIGITS]


@dataclass(frozen=True, slots=True)
class TurnKey:
    """What names a turn in its dice: the game, the turn's number and label, the scheme."""

    game: str
    number: int
    label: str
    scheme: int = SCHEME

    def seed(self, secret: str, digest: str) -> int:
        """The seed of the turn's dice, from its secret and the digest of its orders."""
        if self.scheme == 1:
            return dice_seed(self.game, self.number, secret, digest)
        data = hashlib.sha256(f"flagman-dice-2\n{self.game}\n{self.label}\n{secret}\n{digest}".encode()).digest()
        return int.from_bytes(data[:8], "big") >> 1

    def receipt(self, seat: str, secret: str, orders: str) -> str:
        """The receipt of one seat's orders (their text, as digested) for the turn."""
        if self.scheme == 1:
            return receipt(self.game, seat, self.number, secret, orders)
        data = f"flagman-receipt-2\n{self.game}\n{seat}\n{self.label}\n{secret}\n{orders.strip()}".encode()
        return hashlib.sha256(data).hexdigest()[:RECEIPT_DIGITS]


def log_head(previous: str, game: str, number: int, label: str, committed: str, made_at: str, why: str) -> str:
    """The head of the commitment log after one more entry (see the module's docstring)."""
    text = f"flagman-log\n{previous}\n{game}\n{number}\n{label}\n{committed}\n{made_at}\n{why}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- a results mail, checked by a player --------------------------------------------------------


@dataclass
class MailDice:
    """The dice block of a results mail (`read_mail`): every value as the mail gives it."""

    game: str = ""
    turn: str = ""
    draw: str = ""
    commitment: str = ""
    secret: str = ""
    digest: str = ""
    seed: str = ""
    log: str = ""
    receipts: dict[str, str] = field(default_factory=dict)
    orders: dict[str, str] = field(default_factory=dict)  # seat -> its orders used, as the mail lists them
    all_orders: bool = False  # the mail lists every seat's orders (the game is over: they are public)


def _text_of(raw: bytes) -> str:
    """The text a saved mail shows: its plain-text part decoded, or the bytes as text."""
    if re.match(rb"^[\x21-\x39\x3b-\x7e]+:", raw):  # a header field first: a whole message
        message = email.message_from_bytes(raw, policy=email.policy.default)
        part = message.get_body(("plain",)) if hasattr(message, "get_body") else None
        if part is not None:
            try:
                return str(part.get_content())
            except (LookupError, ValueError):
                pass
    return raw.decode("utf-8", errors="replace")


def read_mail(raw: bytes) -> MailDice | None:
    """The dice block of a saved results mail (the whole message, or its text pasted), or None
    when it has none. A prefix the mail client put before each line of it (``> ``) is taken off."""
    lines = _text_of(raw).splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip().endswith(MARK)), None)
    if start is None:
        return None
    prefix = re.match(r"[> \t]*", lines[start]).group()  # type: ignore[union-attr]  # a quoting client's
    found = MailDice()
    seat = ""
    for line in lines[start + 1 :]:
        if not line.startswith(prefix):
            break
        line = line[len(prefix) :]
        if not line.strip():
            break
        words = line.split()
        head = words[0]
        if head == ">" and seat:
            found.orders[seat] = (found.orders.get(seat, "") + "\n" + " ".join(words[1:])).strip("\n")
            continue
        seat = ""
        if head in ("game", "turn", "draw", "commitment", "secret", "digest", "seed", "log"):
            setattr(found, head, line.split(None, 1)[1].strip() if len(words) > 1 else "")
        elif head == "receipt" and len(words) >= 3:
            found.receipts[words[1]] = words[2]
        elif head == "orders" and len(words) >= 2:
            seat = words[1]
            found.orders.setdefault(seat, "")
        elif head == "every-seat":
            found.all_orders = True
    return found


def check_mail(found: MailDice) -> tuple[list[str], str | None]:
    """What the block of values of one results mail proves by itself: the lines checked, and the
    first item that does not hold (None: all hold). A game without chance gives no commitment,
    digest or seed: its receipts alone are checked. Scheme 2 (a mail's block is only ever that)."""
    done: list[str] = []
    if not is_secret(found.secret):
        return done, "the mail's secret is not 64 hex digits"
    chance = bool(found.commitment or found.digest or found.seed)
    key = TurnKey(found.game, 0, found.turn)
    if chance:
        if not is_secret(found.commitment) or not is_secret(found.digest):
            return done, "the mail's commitment or digest is not 64 hex digits"
        if commitment(found.secret) != found.commitment:
            return done, f"SHA-256 of the secret is {commitment(found.secret)}, the mail says {found.commitment}"
        done.append(f"commitment {found.commitment}: the SHA-256 of the secret revealed")
        if not found.seed.isdigit() or key.seed(found.secret, found.digest) != int(found.seed):
            return done, "the seed is not made of this game, turn, secret and digest"
        done.append(f"seed {found.seed}: made of game {found.game}, turn {found.turn!r}, the secret and the digest")
    if found.all_orders:
        if chance and orders_digest(found.orders) != found.digest:
            return done, "the digest is not that of the orders the mail lists"
        if chance:
            done.append(f"digest {found.digest}: that of every seat's orders listed")
        if set(found.receipts) != set(found.orders):
            return done, "the receipts are not one for each seat's orders listed"
    for seat, text in sorted(found.orders.items()):
        given = found.receipts.get(seat)
        if given is None or key.receipt(seat, found.secret, text) != given:
            return done, f"the receipt of {seat} is not that of the orders listed for {seat}"
        done.append(f"receipt {seat} {given}: that of {seat}'s orders listed")
    return done, None


__all__ = [
    "GENESIS",
    "MARK",
    "RECEIPT_DIGITS",
    "SCHEME",
    "SCHEMES",
    "SECRET_BYTES",
    "WHYS",
    "MailDice",
    "TurnKey",
    "check_mail",
    "commitment",
    "dice_seed",
    "is_secret",
    "log_head",
    "orders_digest",
    "orders_text",
    "read_mail",
    "receipt",
]
