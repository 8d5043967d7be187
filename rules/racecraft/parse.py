"""Racecraft orders in mail: the grammar, the parser and the help text (racecraft.md, Orders).

One table, `ORDER_FORMS`, drives both the parser and the HELP text, so the two cannot
disagree. Parsing is two layers (architecture.md): `read_order` is syntax only (context-free,
raises InvalidOrderError); `check_order` is legality against the race (IllegalOrderError).

Decisions (racecraft.md leaves them open):
- ``BID n`` is accepted on every turn, as a plain synonym of ``USE n``: refusing it after
  turn 1 would help nobody.
- An optional trailing ``EP`` is allowed after the number (``USE 3 EP``, ``3 EP``).
- "One order per mail body": blank lines are ignored; a line that is not an order is
  refused; a mail with two or more orders has none accepted (each is refused with "one order
  per turn"), so the previous valid order stays in force rather than guessing which one
  was meant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rules.api import (
    IllegalOrderError,
    InvalidOrderError,
    OneLineOrder,
    OrderError,
    OrderProblem,
    Parsed,
    PlayerId,
    ProblemKind,
)
from rules.racecraft.model import (
    MAX_EP,
    Cruise,
    Order,
    Overtake,
    Race,
    Stage,
    Use,
    names_text,
)


@dataclass(frozen=True, slots=True)
class OrderForm:
    """One form of order: how it is written, when it is allowed and what it does."""

    keyword: str
    """The canonical word (``USE``), as `format_orders` writes it."""
    aliases: tuple[str, ...]
    """Other first words meaning the same (``A``, ``BID``)."""
    takes_ep: bool
    """Whether a number of EP follows; if so a bare number also means this form."""
    option: str
    """The seed's option letter (A, B, C)."""
    stages: frozenset[Stage]
    """The turns on which it is allowed."""
    meaning: str
    """What it does, for the help text."""
    build: Callable[[int], Order]


ORDER_FORMS: tuple[OrderForm, ...] = (
    OrderForm(
        keyword="USE",
        aliases=("A", "BID"),
        takes_ep=True,
        option="A",
        stages=frozenset({Stage.START, Stage.TACTICAL}),
        meaning="spend n EP; your score this turn is n",
        build=Use,
    ),
    OrderForm(
        keyword="CRUISE",
        aliases=("B",),
        takes_ep=False,
        option="B",
        stages=frozenset({Stage.TACTICAL}),
        meaning=(
            "spend nothing; your score is the average score of those who did not cruise; below 10 EP you gain 1 EP"
        ),
        build=lambda _ep: Cruise(),
    ),
    OrderForm(
        keyword="OVERTAKE",
        aliases=("C",),
        takes_ep=False,
        option="C",
        stages=frozenset({Stage.TACTICAL}),
        meaning=("pay 1 EP and pass the position ahead, unless someone behind overtakes you first (your score is 1)"),
        build=lambda _ep: Overtake(),
    ),
)

_FORM_BY_WORD: dict[str, OrderForm] = {word: form for form in ORDER_FORMS for word in (form.keyword, *form.aliases)}
_EP_FORM: OrderForm = next(form for form in ORDER_FORMS if form.takes_ep)


def form_of(order: Order) -> OrderForm:
    if isinstance(order, Use):
        return _EP_FORM
    keyword = "CRUISE" if isinstance(order, Cruise) else "OVERTAKE"
    return _FORM_BY_WORD[keyword]


# -- syntax -----------------------------------------------------------------------------


def _spellings(form: OrderForm) -> str:
    if form.takes_ep:
        words = [f"{alias} n" for alias in form.aliases] + ["just n"]
        return f"{form.keyword} n (or {', '.join(words[:-1])} or {words[-1]})"
    return f"{form.keyword} (or {' or '.join(form.aliases)})"


def read_order(line: str) -> Order:
    """One line as an order, case-insensitive; InvalidOrderError if it is not one."""
    words = line.upper().split()
    if not words:
        raise InvalidOrderError("an empty line is not an order")
    if words[0].isdigit():
        form, arguments = _EP_FORM, words
    elif words[0] in _FORM_BY_WORD:
        form, arguments = _FORM_BY_WORD[words[0]], words[1:]
    else:
        raise InvalidOrderError("not a Racecraft order")
    if not form.takes_ep:
        if arguments:
            raise InvalidOrderError(f"{form.keyword} takes nothing after it")
        return form.build(0)
    if arguments and arguments[-1] in ("EP", "EPS") and len(arguments) == 2:
        arguments = arguments[:1]
    if not arguments:
        raise InvalidOrderError(f"{form.keyword} needs a number of EP, e.g. {form.keyword} 3")
    if len(arguments) > 1:
        raise InvalidOrderError(f"{form.keyword} takes one number of EP, e.g. {form.keyword} 3")
    number = arguments[0]
    if not (number.isascii() and number.isdigit()):
        raise InvalidOrderError(f"{number!r} is not a whole number of EP")
    if len(number.lstrip("0")) > 3:
        # Nobody has more than 10 EP; a long number is a typo (and int() has a length limit).
        raise InvalidOrderError(f"{number} EP is more than anyone has (at most {MAX_EP})")
    return form.build(int(number))


def format_order(order: Order) -> str:
    """The canonical text of one order: ``USE 3``, ``CRUISE``, ``OVERTAKE``."""
    form = form_of(order)
    if isinstance(order, Use):
        return f"{form.keyword} {order.ep}"
    return form.keyword


# -- legality ---------------------------------------------------------------------------


def allowed_now(race: Race, player: PlayerId) -> str:
    """What this player may send now, generated from `ORDER_FORMS`."""
    stage = race.stage
    if stage is Stage.FINISHED:
        return "nothing: the race is over"
    if stage is Stage.SPRINT:
        return "nothing: the final sprint needs no orders"
    ep = race.runner(player).ep if player in race.names() else MAX_EP
    parts = []
    for form in ORDER_FORMS:
        if stage not in form.stages:
            continue
        text = _spellings(form)
        if form.takes_ep:
            text = f"{form.keyword} 0 (you have no EP left)" if ep == 0 else f"{text} with n from 0 to {ep}"
        if isinstance(form.build(0), Overtake) and ep < 1:
            continue
        parts.append(text)
    return "; ".join(parts)


def check_order(race: Race, player: PlayerId, order: Order) -> None:
    """IllegalOrderError unless `player` may give `order` in the open turn of `race`."""
    stage = race.stage
    if stage is Stage.FINISHED:
        raise IllegalOrderError("the race is over: no more orders")
    if stage is Stage.SPRINT:
        raise IllegalOrderError("the final sprint needs no orders: every runner sprints with all their EP")
    if player not in race.names():
        raise IllegalOrderError(f"{player} is not running in this race")
    ep = race.runner(player).ep
    form = form_of(order)
    if stage not in form.stages:
        raise IllegalOrderError(
            f"turn 1 is the start: only a number of EP is allowed (USE 0 to USE {ep}), not {form.keyword}"
        )
    if isinstance(order, Use) and order.ep > ep:
        raise IllegalOrderError(f"you have only {ep} EP, so USE {ep} at most")
    if isinstance(order, Overtake) and ep < 1:
        raise IllegalOrderError("OVERTAKE costs 1 EP and you have 0 EP; send USE 0 or CRUISE instead")


# -- a mail -----------------------------------------------------------------------------


MANY_LINES = 5  # line numbers named in the "one order per turn" reason; the rest are counted


def parse_mail(race: Race, player: PlayerId, text: str) -> Parsed[Order]:
    """Every line of one mail: at most one order accepted, every bad line reported."""
    accepted: list[tuple[int, str, Order]] = []
    problems: list[OrderProblem] = []
    order_lines: list[tuple[int, str, Order | None]] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            order = read_order(line)
        except InvalidOrderError as error:
            reason = f"{error.reason}; allowed: {allowed_now(race, player)}"
            problems.append(OrderProblem(line_no, line, reason, ProblemKind.INVALID))
            continue
        try:
            check_order(race, player, order)
        except IllegalOrderError as error:
            problems.append(OrderProblem.from_error(line_no, line, error))
            order_lines.append((line_no, line, None))
            continue
        order_lines.append((line_no, line, order))
        accepted.append((line_no, line, order))

    if len(order_lines) > 1:
        # A few line numbers, then a count: each bad line's reason repeats this text, so it
        # must not grow with the mail (2,000 lines gave a 24 MB refusal).
        shown = [str(line_no) for line_no, _line, _order in order_lines[:MANY_LINES]]
        if len(order_lines) > MANY_LINES:
            shown = shown[: MANY_LINES - 1] + [f"{len(order_lines) - MANY_LINES + 1} more"]
        numbers = names_text(shown)
        too_many: OrderError = IllegalOrderError(
            f"one order per turn: this mail has {len(order_lines)} (lines {numbers}); send just one"
        )
        problems = [p for p in problems if p.kind is ProblemKind.INVALID] + [
            OrderProblem.from_error(line_no, line, too_many) for line_no, line, _order in order_lines
        ]
        problems.sort(key=lambda problem: problem.line_no)
        return Parsed((), tuple(problems), complete=is_complete(race, player, ()))

    if not order_lines and not problems and race.stage in (Stage.START, Stage.TACTICAL):
        reason = f"no order found; send one of: {allowed_now(race, player)}"
        first = text.splitlines()[0].strip() if text.splitlines() else ""
        problems.append(OrderProblem(1, first, reason, ProblemKind.INVALID))
    orders = tuple(order for _line_no, _line, order in accepted)
    return Parsed(orders, tuple(problems), complete=is_complete(race, player, orders))


def is_complete(race: Race, player: PlayerId, orders: Sequence[Order]) -> bool:
    """A full set is one order from a runner on the start and the tactical turns; on the
    final sprint, after the race and for a runner who left it, no orders at all."""
    return not missing_orders(race, player, orders)


def missing_orders(race: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
    """What a full set lacks (`is_complete`): the one order of the turn, with what it may be."""
    if orders or race.stage not in (Stage.START, Stage.TACTICAL) or player not in race.names():
        return ()
    return (f"the order for turn {race.turn}: one of {allowed_now(race, player)}",)


def format_orders(orders: Sequence[Order]) -> str:
    """Canonical text, one order a line (a valid set has exactly one)."""
    return "\n".join(format_order(order) for order in orders)


def order_help(race: Race, player: PlayerId) -> str:
    """The HELP reply for this player now, generated from `ORDER_FORMS`."""
    stage = race.stage
    if stage is Stage.FINISHED:
        return "The race is over: no more orders."
    if player not in race.names():
        return f"{player} is not running in this race."
    ep = race.runner(player).ep
    if stage is Stage.SPRINT:
        return f"Turn {race.turn} is the final sprint: no orders are needed. You will sprint with all your {ep} EP."
    lines = [f"You have {ep} EP. Send one order (upper or lower case):"]
    for form in ORDER_FORMS:
        if stage not in form.stages:
            continue
        if isinstance(form.build(0), Overtake) and ep < 1:
            lines.append(f"  ({form.keyword} is not possible now: it costs 1 EP and you have 0)")
            continue
        meaning = form.meaning
        if form.takes_ep:
            meaning += f"; n from 0 to {ep}" if ep else "; you have no EP left: USE 0"
        lines.append(f"  {_spellings(form)}: {meaning}.")
    if stage is Stage.START:
        lines.append("Turn 1 is the start: the runners line up by the EP they use, most first.")
    return "\n".join(lines)


def one_line_orders(race: Race, player: PlayerId) -> tuple[OneLineOrder, ...]:
    """Every legal order of the turn (one order is a full set): each USE n the runner can pay,
    CRUISE and OVERTAKE where the turn has them (OVERTAKE not at 0 EP), from `ORDER_FORMS`."""
    if race.stage not in (Stage.START, Stage.TACTICAL) or player not in race.names():
        return ()
    ep = race.runner(player).ep
    found: list[OneLineOrder] = []
    for form in ORDER_FORMS:
        if race.stage not in form.stages:
            continue
        if form.takes_ep:
            found.extend(
                OneLineOrder(f"{form.keyword} {n}: spend {n} EP, score {n}", f"{form.keyword} {n}")
                for n in range(ep + 1)
            )
        elif not (isinstance(form.build(0), Overtake) and ep < 1):
            found.append(OneLineOrder(f"{form.keyword}: {form.meaning}", form.keyword))
    return tuple(found)
