"""Orders in one tap: the legal orders of a turn that fit in one line, for
``mailto:`` links to the player's own signed reply address with the order in the subject.

Mail clients mangle a prefilled body, so the order goes in the subject; the bot reads orders
from the subject of a reply whose body holds none (bot.intake.orders_in_subject: reply
prefixes and tags removed, ``;`` between lines). A link only opens a prefilled mail: nothing
happens until the player sends it, and the bot confirms it as any orders.

Which orders: the game's own `Game.one_line_orders` (rules.api), each a legal, complete set for
the seat now (a conformance property of every game: a link never offers what the bot would
refuse). Racecraft: each ``USE n`` the player can pay, ``CRUISE`` and ``OVERTAKE`` where the
turn has them; Speed Circuit: each legal speed by its cheapest path, with what it costs (in
the pits, each legal speed up to the pit limit, with what slowing to it costs);
SpeedPhreakz: none (a program is a round's list of moves).
"""

from __future__ import annotations

from bot.mail_out.lists import mailto_link
from rules.api import AnyGame, GameState

SUBJECT_LINE_SEPARATOR = "; "  # how a set of several lines is written in one subject line


def one_tap_orders(rules: AnyGame, state: GameState, seat: str) -> list[tuple[str, str]]:
    """(label, order line) for each legal one-line order of `seat` (the seat's name, the
    player id the rules know) in `state`: the order line as it goes in the subject (several
    lines of a set joined by ``"; "``), the label saying what it does or costs. Empty when the
    seat has nothing to order, or the game has no one-line orders."""
    if seat not in rules.expected_players(state):
        return []
    return [
        (order.label, SUBJECT_LINE_SEPARATOR.join(order.text.splitlines()))
        for order in rules.one_line_orders(state, seat)
    ]


__all__ = ["SUBJECT_LINE_SEPARATOR", "mailto_link", "one_tap_orders"]
