"""Orders in one tap (issue 19, item 3): the legal orders of a turn that fit in one line, for
``mailto:`` links to the player's own signed reply address with the order in the subject.

Mail clients mangle a prefilled body, so the order goes in the subject; the bot reads orders
from the subject of a reply whose body holds none (bot.intake.orders_in_subject: reply
prefixes and tags removed, ``;`` between lines). A link only opens a prefilled mail: nothing
happens until the player sends it, and the bot confirms it as any orders.

`one_tap_orders` asks the game itself: each candidate line is kept only if the game's own
parser takes it as a legal, complete set of orders for the seat now (so a link never offers
what the bot would refuse). The candidates are the game's one-line orders:

* Racecraft: each ``USE n`` the player can pay, ``CRUISE`` and ``OVERTAKE`` where the turn has
  them (racecraft.md: CRUISE and OVERTAKE on tactical turns only; OVERTAKE not at 0 EP);
* Speed Circuit: each legal speed with its cheapest path and what it costs (``free``, ``1
  wear``, ``2 wear + chance table``...), from the seat's own options in its view (issue 16;
  speed-circuit.md §8: ``SPEED s`` with ``PATH`` and ``PUSH YES`` where a push is needed);
* SpeedPhreakz: none (a program is several lines of a round's moves).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.mail_out.lists import mailto_link
from rules.api import Game as Rules

SUBJECT_LINE_SEPARATOR = "; "  # how a set of several lines is written in one subject line
MAX_EP = 10  # racecraft.md: EP are whole numbers, 0..10


def _racecraft(rules: Rules[Any, Any], state: Any, seat: str) -> list[tuple[str, str]]:
    candidates = [(f"USE {n}: spend {n} EP", f"USE {n}") for n in range(MAX_EP + 1)]
    candidates += [("CRUISE: spend nothing, score the average", "CRUISE"),
                   ("OVERTAKE: 1 EP, pass the position ahead", "OVERTAKE")]
    return candidates


def _speed_circuit(rules: Rules[Any, Any], state: Any, seat: str) -> list[tuple[str, str]]:
    options = getattr(rules.view(state, None, seat), "options", None)
    if options is None:
        return []
    candidates = []
    for choice in options.choices:
        reach = choice.cheapest
        if reach is None:
            continue
        lines = [f"SPEED {choice.speed}"]
        if reach.path:
            lines.append("PATH " + reach.lanes)
        if choice.push:
            lines.append("PUSH YES")
        candidates.append((f"SPEED {choice.speed}: {reach.describe()}", "\n".join(lines)))
    return candidates


_CANDIDATES: dict[str, Callable[[Rules[Any, Any], Any, str], list[tuple[str, str]]]] = {
    "racecraft": _racecraft,
    "speed_circuit": _speed_circuit,
}


def one_tap_orders(rules: Rules[Any, Any], state: Any, seat: str) -> list[tuple[str, str]]:
    """(label, order line) for each legal one-line order of `seat` (the seat's name, the
    player id the rules know) in `state`: the order line as it goes in the subject (several
    lines of a set joined by ``"; "``), the label saying what it costs. Empty when the seat
    has nothing to order, or the game has no one-line orders."""
    if seat not in rules.expected_players(state):
        return []
    make = _CANDIDATES.get(rules.name)
    if make is None:
        return []
    found: list[tuple[str, str]] = []
    for label, text in make(rules, state, seat):
        parsed = rules.parse_orders(state, seat, text)
        if parsed.problems or not parsed.orders or not rules.is_complete(state, seat, parsed.orders):
            continue
        found.append((label, SUBJECT_LINE_SEPARATOR.join(rules.format_orders(parsed.orders).splitlines())))
    return found


__all__ = ["SUBJECT_LINE_SEPARATOR", "mailto_link", "one_tap_orders"]
