"""What counts for one seat at the deadline, said before it (issue 29: "name the default that
will fill each missing part"): the orders the turn will be resolved with for the seat if nothing
else arrives, and where each part comes from -- the seat's own set, the game's default for a
part the set lacks (`Game.filled_orders`, the very fill the resolution makes), the GM's plot or
the game's NMR default when nothing is on file.

The deadline resolves with the set on file as it is; `filled_orders` is proved (a property in
tests/rules/test_missing_orders.py) to give the same resolution, so what this module says will
be used is what is used. It reads nothing from the database: the caller hands it the set on file.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import Seat
from bot.outlook import nmr_default
from rules.api import AnyGame, GameOrder, GameState


class Source(enum.StrEnum):
    """Where a seat's orders at the deadline come from."""

    SENT = "sent"  # the seat's own set (or the GM's ORDER for it), its missing parts filled
    PLOT = "plot"  # nothing on file: the GM's plot
    DEFAULT = "default"  # nothing on file and no plot that stands: the game's default


@dataclass(frozen=True, slots=True)
class Counts:
    """The orders that count for a seat if nothing else arrives (`text`, canonical order
    lines), where they come from, the lines the game's default adds to the seat's own set
    (`filled`), and the parts still open that a later turn fills (`later`, in the game's words)."""

    orders: tuple[GameOrder, ...]
    text: str
    source: Source
    filled: tuple[str, ...] = ()
    later: tuple[str, ...] = ()

    @property
    def by(self) -> str:
        """The source in a player's words: "the GM's plot", "the default"."""
        return "the GM's plot" if self.source is Source.PLOT else "the default"


def what_counts(rules: AnyGame, state: GameState, seat: Seat, on_file: Sequence[GameOrder] | None) -> Counts:
    """What counts for `seat` at the deadline if nothing else arrives, `on_file` being its set
    on file (`store.orders_on_file`; None: nothing on file)."""
    if on_file is None:
        orders, source = nmr_default(rules, state, seat)
        return Counts(orders, rules.format_orders(orders), Source(source))
    filled = rules.filled_orders(state, seat.name, on_file)
    own = set(rules.format_orders(on_file).splitlines())
    text = rules.format_orders(filled)
    added = tuple(line for line in text.splitlines() if line not in own)
    return Counts(filled, text, Source.SENT, added, rules.missing_orders(state, seat.name, filled))
