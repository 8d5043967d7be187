"""A person's reliability record, apart from their skill. Pure: no clock, no database.

The shell feeds it what the record of every game holds for one person (docs/reliability.md):
each turn they held a seat for (`HeldTurn`: whether their own orders were in by the deadline,
whether the game's NMR default was used), each seat they left under way by resigning or by the
NMR limit (`abandoned`), each seat they took over from the substitutes bench (`substituted`).
`record_of` counts them; `admits` is the entry gate a GM sets (``--min-reliability``):

* **on-time ratio**: the turns with the person's own orders in by the deadline, over the turns
  they held a seat for; a person who has held no seat yet has no ratio;
* **NMRs**: the turns the game's NMR default (or the GM's plot) was used for them;
* **abandoned**: the games they left under way, by ``RESIGN`` or put out by the NMR limit;
* **substitute**: the seats they took over from the bench.

A person with no ratio passes every gate: a newcomer is let in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class HeldTurn:
    """One resolved turn of a seat the person held: `on_time`, their own orders were in by the
    deadline; `nmr`, the NMR default (or the GM's plot) was used instead (neither: the GM's
    ``ORDER`` stood in for them)."""

    on_time: bool
    nmr: bool


@dataclass(frozen=True, slots=True)
class Reliability:
    """A person's record: how many turns they held a seat for, how many of those had their own
    orders on time, how many were NMRs, how many games they abandoned, how many seats they took
    over as a substitute, and in how many games they held a seat."""

    turns: int = 0
    on_time: int = 0
    nmrs: int = 0
    abandoned: int = 0
    substitute: int = 0
    games: int = 0

    @property
    def ratio(self) -> Fraction | None:
        """On-time turns over turns held; None before the person has held a seat for a turn."""
        return Fraction(self.on_time, self.turns) if self.turns else None

    def shown_ratio(self) -> str:
        """The ratio as the mails write it: ``0.83`` (two places, rounded down, so a figure
        shown as passing a gate always does), or ``none yet``."""
        ratio = self.ratio
        if ratio is None:
            return "none yet"
        hundredths = (ratio.numerator * 100) // ratio.denominator
        return f"{hundredths // 100}.{hundredths % 100:02d}"


def record_of(turns: Iterable[HeldTurn], *, abandoned: int = 0, substituted: int = 0, games: int = 0) -> Reliability:
    """The record of a person from what the games hold of them (see the module's docstring)."""
    if abandoned < 0 or substituted < 0 or games < 0:
        raise ValueError("counts of games cannot be negative")
    held = on_time = nmrs = 0
    for turn in turns:
        held += 1
        on_time += turn.on_time
        nmrs += turn.nmr and not turn.on_time
    return Reliability(held, on_time, nmrs, abandoned, substituted, games)


def parse_minimum(text: str) -> Fraction:
    """A gate's minimum on-time ratio as written (``0.8``, ``80%``): from 0 to 1."""
    text = text.strip()
    try:
        value = Fraction(text[:-1]) / 100 if text.endswith("%") else Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"the minimum reliability is a ratio from 0 to 1 (such as 0.8), not {text[:20]!r}") from None
    if not 0 <= value <= 1:
        raise ValueError("the minimum reliability is a ratio from 0 to 1 (such as 0.8)")
    return value


def admits(record: Reliability, minimum: Fraction | None) -> bool:
    """Whether a gate of `minimum` (None: no gate) lets the person in: their ratio is at least
    the minimum, or they have no ratio yet."""
    ratio = record.ratio
    return minimum is None or ratio is None or ratio >= minimum


__all__ = ["HeldTurn", "Reliability", "admits", "parse_minimum", "record_of"]
