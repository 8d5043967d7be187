"""Typed facts: what `games/` decided, as values the letters render (`bot.letters`) and the
claims a letter makes are checked against. A fact says what happened or what will happen, never
how it reads: every word is a template's (`bot.letters.words`).

* The orders a ROLLBACK kept (`bot.games.carried`): `Kept`, and when the reopened turn resolves
  again, each `Refiled` for the new turn or `Withdrawn`, together a `Recheck`.
* What a letter claims about what happens next (`Claims`): which orders count for which seat
  and why, the deadline or its absence, whether the turn is resolved or waits. A letter carries
  its claims as data beside its text (`bot.mail_out.render.RenderedMail.claims`, kept with its
  outbox row), never in the mail: a test compares them with what the tick then did.
"""

from __future__ import annotations

import enum
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


class Why(enum.StrEnum):
    """Why a set of orders counts for a seat (`bot.outlook.Source`, in the claims' words)."""

    OWN = "own"  # on file: the seat's mail, the GM's ORDER for it, its robot's
    PLOT = "plot"  # nothing on file: the GM's plot
    DEFAULT = "default"  # nothing on file and no plot that stands: the game's default


@dataclass(frozen=True, slots=True)
class Counts:
    """A claim: at the deadline, if nothing else arrives, `orders` (canonical text, each part the
    set lacks filled as the resolution fills it) count for `seat`, for the reason `why`."""

    seat: str
    orders: str
    why: Why


@dataclass(frozen=True, slots=True)
class Claims:
    """What one letter claims about turn `turn` (its number) of `game`, as it stands when the
    letter is queued: the orders that count (`counts`), the deadline (`deadline`, None: none
    runs -- `paused`, or a turn at the GM's call), and, for the answer that completes a turn,
    that it is resolved (`resolved`). `early`: whether the turn resolves before its deadline as
    soon as the seats in `waits_for` send complete sets (False: only its deadline or the GM's
    PROCESS resolves it -- early resolution off, a seat's WAIT holding it, only robots to
    order); None: the letter says neither. `waits_for`: the seats the turn still waits for
    (None: not claimed)."""

    game: str
    turn: int
    counts: tuple[Counts, ...] = ()
    deadline: datetime | None = None
    paused: bool = False
    resolved: bool = False
    waits_for: tuple[str, ...] | None = None
    early: bool | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "game": self.game,
            "turn": self.turn,
            "counts": [{"seat": c.seat, "orders": c.orders, "why": c.why.value} for c in self.counts],
            "deadline": as_utc(self.deadline).isoformat() if self.deadline is not None else None,
            "paused": self.paused,
            "resolved": self.resolved,
            "waits_for": list(self.waits_for) if self.waits_for is not None else None,
            "early": self.early,
        }


@dataclass(frozen=True, slots=True)
class SeasonRow:
    """One line of a season's table (`bot.games.seasons.table_of`): the place, the driver's name,
    the points (counted less penalties), a cell per race planned ("-" not run, "(n)" dropped,
    "n-p" scored n and lost p), whether the place is shared (level on points and countback),
    whether countback placed it (level on points with a neighbour), and the points after each
    race run."""

    place: int
    name: str
    points: int
    races: tuple[str, ...]
    shared: bool
    countback: bool
    after: tuple[int, ...] = ()  # the points in the table after each race run (the chart)


@dataclass(frozen=True, slots=True)
class SeasonTable:
    """A season's table as worked out from its races' results now: `races_run` of
    `races_planned` counted; `games` the races' games by round."""

    season: str
    title: str  # the kind of game's printed name
    scoring: str
    drop: int
    races_run: int
    races_planned: int
    rows: tuple[SeasonRow, ...]
    games: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DrawnDriver:
    """A driver in the next season's tiers: their name, `move` ("up", "down", "stays" or "new":
    a newcomer to the series) and the tier they come from (0: a newcomer)."""

    name: str
    move: str
    came_from: int


@dataclass(frozen=True, slots=True)
class DrawnTier:
    """One tier of a series' next season as drawn (`bot.games.season_tiers`): its number, the
    season it becomes (its name), its drivers in its first grid's order, and the robots' seats
    behind them (the tier's least field filled; none unless the GM set one)."""

    tier: int
    season: str
    drivers: tuple[DrawnDriver, ...]
    robots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SeriesDraw:
    """A series' next season drawn from the final tables of its last one: `edition` the next
    season's number in the series, `leavers` the drivers not going on, `confirm_game` a race the
    GM may name in ``SEASON <game> NEXT CONFIRM``, `made` whether it is made (confirmed),
    `stale` whether a result it was drawn from was corrected since it was first shown (confirming
    it is refused until the GM draws again)."""

    series: str
    title: str
    edition: int
    tiers: tuple[DrawnTier, ...]
    leavers: tuple[str, ...]
    confirm_game: str
    made: bool
    stale: bool = False
    # Whether its tiers have different GMs (each confirms the tiers they run; it is made once all
    # have), and the tiers whose GM has confirmed it so far.
    several_gms: bool = False
    confirmed: tuple[int, ...] = ()
    # The races of the last season reopened by a ROLLBACK, without their result again (game,
    # tier): the draw cannot be drawn again until each has it.
    reopened: tuple[tuple[str, int], ...] = ()


__all__ = [
    "Claims",
    "Counts",
    "DrawnDriver",
    "DrawnTier",
    "Kept",
    "Recheck",
    "Refiled",
    "SeasonRow",
    "SeasonTable",
    "SeriesDraw",
    "Why",
    "Withdrawn",
]
