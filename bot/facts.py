"""Typed facts: what `games/` decided, as values the letters render (`bot.letters`) and the
claims a letter makes are checked against. A fact says what happened or what will happen, never
how it reads: every word is a template's (`bot.letters.words`).

* The orders a ROLLBACK kept (`bot.games.carried`): `Kept`, and when the reopened turn resolves
  again, each `Refiled` for the new turn or `Withdrawn`, together a `Recheck`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from bot.clock import as_utc


@dataclass(frozen=True, slots=True)
class Kept:
    """A seat's set on file for a discarded turn, kept: its text (canonical), who entered it
    (`source`: "mail", the seat's own; "gm", the GM's ORDER), when it arrived, and the mail it
    came in (None for the GM's ORDER)."""

    seat: str
    text: str
    source: str
    received_at: datetime
    inbound_id: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "seat": self.seat,
            "text": self.text,
            "source": self.source,
            "received_at": as_utc(self.received_at).isoformat(),
            "inbound_id": self.inbound_id,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Kept:
        inbound = row.get("inbound_id")
        return cls(
            str(row["seat"]),
            str(row["text"]),
            str(row["source"]),
            datetime.fromisoformat(str(row["received_at"])),
            inbound if isinstance(inbound, int) else None,
        )


@dataclass(frozen=True, slots=True)
class Refiled:
    """Kept orders that stand against the corrected state: filed for the new turn."""

    kept: Kept
    label: str  # the new turn's


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """Kept orders that cannot stand: withdrawn, for `reason` (the game's words)."""

    kept: Kept
    label: str  # the turn they were sent for
    reason: str  # the game's reasons; "" when the seat has no orders to give in it (`needed`)
    needed: bool = True  # False: the corrected turn expects no orders of the seat (out, or not its turn)


@dataclass(frozen=True, slots=True)
class Recheck:
    """What became of a reopened turn's kept orders when it resolved again."""

    refiled: tuple[Refiled, ...] = ()
    withdrawn: tuple[Withdrawn, ...] = ()

    def of(self, seat: str) -> Refiled | Withdrawn | None:
        facts: list[Refiled | Withdrawn] = [*self.refiled, *self.withdrawn]
        return next((fact for fact in facts if fact.kept.seat == seat), None)

    def __bool__(self) -> bool:
        return bool(self.refiled or self.withdrawn)


__all__ = ["Kept", "Recheck", "Refiled", "Withdrawn"]
