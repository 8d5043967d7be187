"""Dice anyone can check, the shell's side of `rules.fair`.

Each turn gets a fresh secret when it opens (`Entropy.secret`, stored on the turn), and the
commitment to it is written at once to the game's commitment log (`commit`: the table
``commitment``, every commitment ever made, chained), which the sheets quote and the bot's
archive publishes before the orders close. At resolution the seed of the turn's dice is worked
out from that secret and the digest of every seat's orders in the game's normal form
(`seed_for`; the set the resolution acts on, so a line restating a default draws no other
dice), stored in ``turn.seed`` so that a replay uses it again exactly; the log entry gets the
secret (`reveal`), and the results reveal it with every seat's receipt. A ROLLBACK reopens the
turn with a new secret and a new entry (``reopened``), and withdraws the entry of the turn it
discards (`withdraw`). A turn opened before the scheme (its ``secret`` is NULL) keeps the seed
it was opened with; a turn opened before the log (``dice_scheme`` 1) keeps scheme 1's digest.

Where the secret comes from is the shell's to say, as the clock is: `OsEntropy` (the operating
system's randomness) in the service; `SeededEntropy` where the same mail must come out of every
run (the demo, the benchmarks, the tests). PREVIEW resolves with a throwaway secret
(`Entropy.throwaway`), never the turn's.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, cast

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.orm import Session

from bot.clock import as_utc
from bot.models import Commitment, CommitmentFate, Game, Turn
from rules import fair

if TYPE_CHECKING:
    from rules.api import AnyGame, GameOrder, GameState


class Entropy(Protocol):
    def secret(self, game: str, turn: int, previous: str | None) -> str:
        """A fresh secret (`rules.fair.is_secret`) for turn `turn` of `game`, opening now;
        `previous`: the secret the turn had before (a ROLLBACK reopens it: that one is public)."""
        ...

    def throwaway(self, game: str, turn: int, count: int) -> str:
        """A secret for PREVIEW's `count`-th resolution of turn `turn` of `game`: never the
        turn's own, and unrelated to it, so that a preview shows no real roll."""
        ...


@dataclass(frozen=True, slots=True)
class OsEntropy:
    """The service's: 32 bytes of the operating system's randomness, unknowable in advance."""

    def secret(self, game: str, turn: int, previous: str | None) -> str:
        return secrets.token_hex(fair.SECRET_BYTES)

    def throwaway(self, game: str, turn: int, count: int) -> str:
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

    def throwaway(self, game: str, turn: int, count: int) -> str:
        return hashlib.sha256(f"flagman-seeded-throwaway\n{self.seed}\n{game}\n{turn}\n{count}".encode()).hexdigest()


def key(game: str, turn: Turn, scheme: int | None = None) -> fair.TurnKey:
    """What names `turn` in its dice (`rules.fair.TurnKey`), with its scheme (`scheme`, else the
    turn's own)."""
    return fair.TurnKey(game, turn.number, turn.label, scheme or turn.dice_scheme or 1)


def used(
    rules: AnyGame, state: GameState, orders: Mapping[str, Sequence[GameOrder]], scheme: int = fair.SCHEME
) -> dict[str, str]:
    """Every seat's orders as the dice digest them: in scheme 2 the game's normal form (the set
    the resolution acts on, `Game.normal_orders`), in scheme 1 the set as written."""
    if scheme == 1:
        return {seat: rules.format_orders(orders[seat]) for seat in orders}
    return {seat: rules.format_orders(rules.normal_orders(state, seat, orders[seat])) for seat in orders}


def seed_for(game: str, turn: Turn, rules: AnyGame, state: GameState, orders: Mapping[str, Sequence[GameOrder]]) -> int:
    """The seed of the dice of `turn` resolved with `orders` (after defaults), in the scheme it
    was resolved with (`scheme_of`)."""
    if turn.secret is None:
        return turn.seed
    turn_key = key(game, turn, scheme_of(game, turn, rules, state, orders))
    return turn_key.seed(turn.secret, fair.orders_digest(used(rules, state, orders, turn_key.scheme)))


def scheme_of(
    game: str, turn: Turn, rules: AnyGame, state: GameState, orders: Mapping[str, Sequence[GameOrder]]
) -> int:
    """The scheme a resolved `turn` was resolved with: the one whose seed is its stored seed (the
    turn's ``dice_scheme`` first). The column says how an open turn will be resolved; a resolved
    turn's seed says how it was, whatever a copy of the database through an older schema (which
    has no such column) left in the column."""
    first = turn.dice_scheme or 1
    if turn.secret is None or turn.resolved_at is None:
        return first
    for scheme in (first, *(s for s in fair.SCHEMES if s != first)):
        turn_key = fair.TurnKey(game, turn.number, turn.label, scheme)
        if turn_key.seed(turn.secret, fair.orders_digest(used(rules, state, orders, scheme))) == turn.seed:
            return scheme
    return first


def receipts(turn_key: fair.TurnKey, secret: str, texts: Mapping[str, str]) -> dict[str, str]:
    """Each seat's receipt of its orders (`texts`: as `used` gives them)."""
    return {seat: turn_key.receipt(seat, secret, text) for seat, text in texts.items()}


def receipt_of(
    game: str, turn: Turn, rules: AnyGame, state: GameState, seat: str, orders: Sequence[GameOrder]
) -> tuple[str | None, str]:
    """The receipt of a seat's set on file (None: the turn has no secret) and the text it is the
    receipt of (the set as the dice digest it), for the confirmation and the GM's ORDER notice."""
    if turn.secret is None:
        return None, ""
    turn_key = key(game, turn)
    text = used(rules, state, {seat: orders}, turn_key.scheme)[seat]
    return turn_key.receipt(seat, turn.secret, text), text


# -- the commitment log -----------------------------------------------------------------------


def stamp(moment: datetime) -> str:
    """A time as the log writes it: UTC, to the second (``2025-01-31T18:00:00Z``)."""
    return as_utc(moment).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Entry:
    """A log entry as worked out (`next_entry`), to insert as a `Commitment` row."""

    game_id: int
    seq: int
    number: int
    label: str
    commitment: str
    made_at: datetime
    why: str
    head: str

    def row(self) -> dict[str, object]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "number": self.number,
            "label": self.label,
            "commitment": self.commitment,
            "made_at": self.made_at,
            "why": self.why,
            "head": self.head,
            "secret": None,
            "revealed_at": None,
            "fate": CommitmentFate.OPEN,
            "published_at": None,
        }


LOG = cast(Table, Commitment.__table__)  # the deadline writes it with plain statements (bench: tick)


_APPEND = insert(LOG)


def write_entry(session: Session, entry: Entry) -> None:
    """Append `entry` (worked out by `next_entry`) to its game's log."""
    session.execute(_APPEND, [entry.row()])


def last_entry(session: Session, game_id: int) -> tuple[int, str]:
    """The game's log as it ends: (its number of entries, its head)."""
    row = session.execute(
        select(Commitment.seq, Commitment.head)
        .where(Commitment.game_id == game_id)
        .order_by(Commitment.seq.desc())
        .limit(1)
    ).first()
    return (int(row[0]), str(row[1])) if row is not None else (0, fair.GENESIS)


def end_of(log: Sequence[Commitment]) -> tuple[int, str]:
    """The end of a log read whole (`entries`): (its number of entries, its head)."""
    return (log[-1].seq, log[-1].head) if log else (0, fair.GENESIS)


def next_entry(
    game: Game, after: tuple[int, str], number: int, label: str, secret: str, made_at: datetime, why: str
) -> Entry:
    """The entry committing to `secret` for turn `number`, after the log's end `after`."""
    seq, previous = after
    committed = fair.commitment(secret)
    head = fair.log_head(previous, game.name, number, label, committed, stamp(made_at), why)
    return Entry(game.id, seq + 1, number, label, committed, made_at, why, head)


def commit(session: Session, game: Game, turn: Turn, made_at: datetime, why: str) -> Entry:
    """Append the commitment to `turn`'s secret to the game's log, in the caller's transaction."""
    assert turn.secret is not None
    entry = next_entry(game, last_entry(session, game.id), turn.number, turn.label, turn.secret, made_at, why)
    session.add(Commitment(**entry.row()))
    session.flush()
    return entry


REVEAL = (
    update(LOG)
    .where(
        LOG.c.game_id == bindparam("of_game"),
        LOG.c.number == bindparam("of_turn"),
        LOG.c.commitment == bindparam("committed"),
        LOG.c.fate == CommitmentFate.OPEN.value,
    )
    .values(secret=bindparam("revealed"), revealed_at=bindparam("at"), fate=bindparam("to"), published_at=None)
)  # one statement, built once: the deadline reveals a secret a turn (bench: tick)


def reveal(session: Session, game_id: int, number: int, secret: str, at: datetime, fate: str) -> None:
    """The open entry of turn `number` (the commitment to `secret`) revealed, with its fate:
    resolved (the results reveal it) or withdrawn (a ROLLBACK discarded the turn)."""
    session.execute(REVEAL, reveal_params(game_id, number, secret, at, fate))


def reveal_params(game_id: int, number: int, secret: str, at: datetime, fate: str) -> dict[str, object]:
    """The parameters of `REVEAL` (`reveal`), for a statement that runs it among others."""
    return {
        "of_game": game_id,
        "of_turn": number,
        "committed": fair.commitment(secret),
        "revealed": secret,
        "at": at,
        "to": str(fate),
    }


def roll_back(session: Session, game_id: int, number: int, secret: str) -> None:
    """The resolved entry of turn `number` (the commitment to `secret`) marked rolled back."""
    session.execute(
        update(Commitment)
        .where(
            Commitment.game_id == game_id,
            Commitment.number == number,
            Commitment.commitment == fair.commitment(secret),
        )
        .values(fate=CommitmentFate.ROLLED_BACK, published_at=None)
    )


LOGS = "flagman.commitments"  # Session.info: game id -> its log, read ahead (`bot.store.read_ahead_logs`)


def entries(session: Session, game_id: int) -> list[Commitment]:
    """The game's log, in the order made (read ahead with the snapshot's other games where it was)."""
    known: dict[int, list[Commitment]] | None = session.info.get(LOGS)
    if known is not None and game_id in known:
        return list(known[game_id])
    return list(session.scalars(select(Commitment).where(Commitment.game_id == game_id).order_by(Commitment.seq)))


@dataclass(frozen=True, slots=True)
class Draw:
    """Which draw of its turn a commitment is (1: the first; each draw rolled back by the GM
    counts, a commitment withdrawn unused does not), and the entries before it for the same turn
    (what became of each): what the results and the record say of a re-roll."""

    count: int
    earlier: tuple[Commitment, ...]
    entry: Commitment | None


def draw_of(log: Sequence[Commitment], number: int, committed: str) -> Draw:
    """The draw of turn `number` whose commitment is `committed`, in `log` (`entries`)."""
    same = [c for c in log if c.number == number]
    # The last entry with it: a turn withdrawn and opened again draws anew, but a seeded entropy
    # (the tests') may draw the same secret twice.
    index = next((i for i in reversed(range(len(same))) if same[i].commitment == committed), len(same))
    earlier = tuple(same[:index])
    rolled = sum(1 for c in earlier if c.fate == CommitmentFate.ROLLED_BACK)
    return Draw(rolled + 1, earlier, same[index] if index < len(same) else None)


__all__ = [
    "Draw",
    "Entropy",
    "Entry",
    "OsEntropy",
    "SeededEntropy",
    "commit",
    "draw_of",
    "end_of",
    "entries",
    "key",
    "last_entry",
    "write_entry",
    "next_entry",
    "receipt_of",
    "receipts",
    "reveal",
    "roll_back",
    "scheme_of",
    "seed_for",
    "stamp",
    "used",
]
