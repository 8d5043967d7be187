"""SpeedPhreakz orders by mail (§5): parsing, the canonical form, merging, the HELP text.

Two layers: `parse_line` is context-free syntax (InvalidOrderError), `check` is legality
against the race (IllegalOrderError). Every bad line of a mail is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rules.api import (
    IllegalOrderError,
    InvalidOrderError,
    OrderError,
    OrderProblem,
    Parsed,
    PlayerId,
)
from rules.speedphreakz.data import chart
from rules.speedphreakz.model import (
    Car,
    CarStatus,
    Colour,
    Heading,
    Order,
    Program,
    Race,
    Restart,
    Square,
    Start,
)
from rules.speedphreakz.resolve import COLOURS, restart_squares

_PLACE = re.compile(r"^(START|RESTART)\s+(\d+\s*,\s*\d+)\s+(?:FACING\s+)?([A-Z]+)$")
_FREE_START = re.compile(r"^START\s+FREE\s+(?:FACING\s+)?([A-Z]+)$")
_ROUND = re.compile(r"^ROUND\s+(\d+)\s*:?\s*(.*)$")
_COLOUR = re.compile(r"^COLOU?R\s+([A-Z]+)$")

GRAMMAR = (
    "COLOUR <colour>                 (set-up; optional)",
    "START <x>,<y> FACING <heading>  (set-up: a start square)",
    "START FREE FACING <heading>     (set-up: a start square no one chose, placed after the others)",
    "RESTART <x>,<y> FACING <heading> (after a crash: the crash square or a neighbour)",
    "ROUND <n>: <action> <action> ... (one program per round; ROUND <n>: alone holds position)",
)


def parse_line(line: str) -> Order:
    """One order line, syntax only (context-free)."""
    text = " ".join(line.strip().upper().split())
    match = _COLOUR.match(text)
    if match:
        return Colour(match.group(1).lower())
    match = _FREE_START.match(text)
    if match:
        try:
            return Start.free(Heading.parse(match.group(1)))
        except ValueError as error:
            raise InvalidOrderError(str(error)) from None
    match = _PLACE.match(text)
    if match:
        square = Square.parse(match.group(2))
        try:
            heading = Heading.parse(match.group(3))
        except ValueError as error:
            raise InvalidOrderError(str(error)) from None
        return Start(square, heading) if match.group(1) == "START" else Restart(square, heading)
    match = _ROUND.match(text)
    if match:
        codes = tuple(c for c in re.split(r"[\s,]+", match.group(2)) if c)
        known = chart()
        for code in codes:
            if known.get(code) is None:
                raise InvalidOrderError(f"unknown action code {code!r}; the codes are {' '.join(known.codes)}")
        return Program(int(match.group(1)), codes)
    if text.startswith(("START", "RESTART")):
        raise InvalidOrderError("write START x,y FACING heading (e.g. START 2,4 FACING N, or START FREE FACING N)")
    if text.startswith("ROUND"):
        raise InvalidOrderError("write ROUND n: actions (e.g. ROUND 3: F2 F1 VR F1)")
    raise InvalidOrderError("not an order; orders are: " + "; ".join(g.split("  ")[0].strip() for g in GRAMMAR))


def program_problem(actions: Sequence[str], cap: int) -> str | None:
    """§4.2 order restrictions and the cap of S15, for one program."""
    known = chart()
    if len(actions) > cap:
        return f"{len(actions)} actions is more than this game's cap of {cap} per round"
    if actions and known[actions[0]].is_turn:
        return f"a round's first action must be a movement, not the turn {actions[0]}"
    for before, after in zip(actions, actions[1:], strict=False):
        if known[before].is_turn and known[after].is_turn:
            return f"two turns in a row ({before} {after}) are not allowed: put a movement between them"
    return None


def check(race: Race, player: PlayerId, order: Order) -> None:
    """Legality against the race now; IllegalOrderError with the reason otherwise."""
    if race.finished:
        raise IllegalOrderError("the race is over")
    car = race.car(player)
    if not car.racing:
        raise IllegalOrderError(f"your car is {car.status.value}: no more orders are needed")
    if isinstance(order, Colour):
        if order.colour not in COLOURS:
            raise IllegalOrderError(f"unknown colour {order.colour!r}; choose one of {' '.join(COLOURS)}")
        owner = next((c.player for c in race.cars if c.colour == order.colour and c.player != player), None)
        if owner is not None:
            held = {c.colour for c in race.cars if c.player != player}
            raise IllegalOrderError(colour_taken(order.colour, owner, held))
    elif isinstance(order, Start):
        if not race.set_up:
            raise IllegalOrderError("START is only for the set-up; after a crash use RESTART")
        if not order.is_free and order.square not in race.circuit.start_squares:
            squares = " ".join(str(s) for s in race.circuit.start_squares)
            raise IllegalOrderError(f"{order.square} is not a start square; the start squares are {squares}")
    elif isinstance(order, Restart):
        if car.status is not CarStatus.CRASHED:
            raise IllegalOrderError("RESTART is only for a car that crashed last round")
        legal = restart_squares(race, car)
        if order.square not in legal:
            squares = " ".join(str(s) for s in legal)
            holder = next(
                (c.player for c in race.cars if c.square == order.square and c.status is CarStatus.RACING), None
            )
            if holder is not None and holder != player and order.square in around(car):
                raise IllegalOrderError(
                    f"{order.square} is taken by {holder}'s car; free to restart on: {squares or 'none'}"
                )
            raise IllegalOrderError(f"{order.square} is not a legal square to restart on; choose one of {squares}")
    else:
        allowed = race.allowed_rounds(player)
        if order.round not in allowed:
            wanted = " and ".join(f"ROUND {n}" for n in allowed)
            if order.round < race.round:
                raise IllegalOrderError(f"round {order.round} is already resolved; send {wanted}")
            if order.round < min(allowed):
                raise IllegalOrderError(
                    f"round {order.round}'s program was locked when round {order.round - 1} was resolved; send {wanted}"
                )
            raise IllegalOrderError(f"round {order.round} is too far ahead; send {wanted}")
        problem = program_problem(order.actions, race.options.max_actions)
        if problem is not None:
            raise IllegalOrderError(problem)


def colour_taken(colour: str, owner: PlayerId, held: set[str | None], *, set_up: bool = False) -> str:
    """The reason a colour is refused: who has it and the colours still free; at the set-up,
    what a car without a COLOUR gets (S13, `resolve`: a colour nobody asked for)."""
    free = " ".join(c for c in COLOURS if c not in held and c != colour)
    without = "; without a COLOUR line the car gets a colour nobody asked for" if set_up else ""
    return f"{colour} is taken by {owner}; free: {free or 'none'}{without}"


def around(car: Car) -> tuple[Square, ...]:
    """The crash square and its neighbours (§4.2, S10), before the map and the cars on them
    are looked at."""
    return () if car.square is None else (car.square, *(car.square.step(h) for h in Heading))


def taken(
    race: Race, player: PlayerId, orders: Sequence[Order], others: Mapping[PlayerId, Sequence[Order]]
) -> tuple[tuple[Order, str], ...]:
    """A COLOUR at the set-up that another seat's set on file already asks for (the first to
    ask has it: a later one is refused at intake), with who has it and the colours free."""
    if not race.set_up:
        return ()
    asked = {
        o.colour: other for other, theirs in others.items() if other != player for o in theirs if isinstance(o, Colour)
    }
    held = {c.colour for c in race.cars if c.player != player} | set(asked)
    return tuple(
        (o, colour_taken(o.colour, asked[o.colour], held, set_up=True))
        for o in orders
        if isinstance(o, Colour) and o.colour in asked
    )


def _key(order: Order) -> tuple[int, int]:
    if isinstance(order, Colour):
        return (0, 0)
    if isinstance(order, Start):
        return (1, 0)
    if isinstance(order, Restart):
        return (2, 0)
    return (3, order.round)


def canonical(orders: Sequence[Order]) -> tuple[Order, ...]:
    return tuple(sorted(orders, key=_key))


def parse_orders(race: Race, player: PlayerId, text: str) -> Parsed[Order]:
    accepted: dict[tuple[int, int], tuple[int, Order]] = {}
    problems: list[OrderProblem] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            order = parse_line(line)
            check(race, player, order)
            key = _key(order)
            if key in accepted:
                raise IllegalOrderError(f"this order is already given on line {accepted[key][0]} of this mail")
            accepted[key] = (line_no, order)
        except OrderError as error:
            problems.append(OrderProblem.from_error(line_no, line, error))
        except ValueError as error:  # Square.parse: a malformed x,y
            problems.append(OrderProblem.from_error(line_no, line, InvalidOrderError(str(error))))
    orders = canonical([order for _, order in accepted.values()])
    return Parsed(orders, tuple(problems), is_complete(race, player, orders))


def is_complete(race: Race, player: PlayerId, orders: Sequence[Order]) -> bool:
    """Whether `orders` make a full set for the open turn (set-up: START and two rounds)."""
    return not missing_orders(race, player, orders)


def missing_orders(race: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
    """What a full set lacks (`is_complete`): the start square at the set-up, and the program
    of each round open now that the orders leave out (§5)."""
    if race.finished or not race.car(player).racing:
        return ()
    missing: list[str] = []
    if race.set_up and not any(isinstance(o, Start) for o in orders):
        missing.append("the start: a START line (START x,y FACING h, or START FREE FACING h)")
    rounds = {o.round for o in orders if isinstance(o, Program)}
    for round_no in race.allowed_rounds(player):
        if round_no not in rounds:
            missing.append(
                f"the program for round {round_no}: a ROUND {round_no} line with up to "
                f"{race.options.max_actions} actions"
            )
    return tuple(missing)


def format_order(order: Order) -> str:
    if isinstance(order, Colour):
        return f"COLOUR {order.colour}"
    if isinstance(order, Start):
        return f"START {'FREE' if order.is_free else order.square} FACING {order.heading.value}"
    if isinstance(order, Restart):
        return f"RESTART {order.square} FACING {order.heading.value}"
    return f"ROUND {order.round}: {' '.join(order.actions)}".rstrip()


def format_orders(orders: Sequence[Order]) -> str:
    return "\n".join(format_order(o) for o in canonical(orders))


def merge_orders(earlier: Sequence[Order], later: Sequence[Order]) -> tuple[Order, ...]:
    """A later mail replaces what it names (a round's program, the colour, the start) and
    keeps the rest: a program for round 8 does not wipe out the one for round 7 (§5)."""
    merged = {_key(o): o for o in earlier}
    merged.update({_key(o): o for o in later})
    return canonical(list(merged.values()))


def standing_plot(race: Race, player: PlayerId, plot: str) -> tuple[Order, ...]:
    """What of a GM plot stands in the open turn (§5: "the GM may set a standing default per
    player: a program without a round number ... that applies to every round the player
    leaves empty until the GM clears it").

    A plot on file is order text, most often the canonical orders of the turn it was set in,
    so its programs name rounds that may have been resolved since. Each round open now gets
    the plot's program for that very round if it has one; else its program without a round
    number (``F1 F1 VL``, as §5 writes it); else its program for the latest round before;
    else its earliest: the plot's program carried over, re-labelled. COLOUR and START stand
    only at the set-up; RESTART only for a car that crashed last round, on a square legal
    now. Lines that are no order, or not legal now, are left out: what is returned is legal.
    """
    if race.finished or not race.car(player).racing:
        return ()
    numbered: dict[int, tuple[str, ...]] = {}
    unnumbered: tuple[str, ...] | None = None
    placing: list[Order] = []
    for line in plot.splitlines():
        if not line.strip():
            continue
        try:
            order = parse_line(line)
        except ValueError:  # InvalidOrderError, or Square.parse on a malformed x,y
            unnumbered = _actions_alone(line) or unnumbered
            continue
        if isinstance(order, Program):
            numbered[order.round] = order.actions
        elif race.set_up or not isinstance(order, Colour | Start):
            placing.append(order)
    programs: list[Order] = []
    if numbered or unnumbered is not None:
        for round_no in race.allowed_rounds(player):
            programs.append(Program(round_no, _carried(round_no, numbered, unnumbered)))
    standing: dict[tuple[int, int], Order] = {}
    for order in (*placing, *programs):
        try:
            check(race, player, order)
        except OrderError:
            continue
        standing[_key(order)] = order
    return canonical(list(standing.values()))


def _actions_alone(line: str) -> tuple[str, ...] | None:
    """A line of action codes and nothing else (a program without a round number), or None."""
    codes = tuple(c for c in re.split(r"[\s,]+", line.strip().upper()) if c)
    known = chart()
    return codes if codes and all(known.get(c) is not None for c in codes) else None


def _carried(
    round_no: int, numbered: dict[int, tuple[str, ...]], unnumbered: tuple[str, ...] | None
) -> tuple[str, ...]:
    """The plot's program for `round_no` (see `standing_plot`); `numbered` or `unnumbered` is set."""
    if round_no in numbered:
        return numbered[round_no]
    if unnumbered is not None:
        return unnumbered
    earlier = [r for r in numbered if r < round_no]
    return numbered[max(earlier) if earlier else min(numbered)]


def order_help(race: Race, player: PlayerId) -> str:
    known = chart()
    lines = [
        "SpeedPhreakz orders, one per line:",
        *(f"  {g}" for g in GRAMMAR),
        "",
        "Actions (code, name, control cost, effect):",
    ]
    for action in known.actions:
        kind = "turn" if action.is_turn else "move"
        lines.append(f"  {action.code:<3} {action.name:<12} {action.cost:>3}  {kind}: {action.effect}")
    lines += [
        "",
        "A round's first action must be a movement; never two turns in a row.",
        f"At most {race.options.max_actions} actions per round.",
        f"Headings: {' '.join(h.value for h in Heading)}. Colours: {' '.join(COLOURS)}.",
    ]
    if race.finished:
        lines.append("The race is over.")
        return "\n".join(lines)
    car = race.car(player)
    rounds = " and ".join(f"ROUND {n}" for n in race.allowed_rounds(player))
    if race.set_up:
        squares = " ".join(str(s) for s in race.circuit.start_squares)
        lines.append(f"Now send: COLOUR, START (one of {squares}), {rounds}.")
        lines.append(
            "Example: COLOUR red / START "
            + f"{race.circuit.start_squares[0]} FACING {race.circuit.finish_direction.value}"
        )
    elif car.status is CarStatus.CRASHED:
        squares = " ".join(str(s) for s in restart_squares(race, car))
        lines.append(f"Your car crashed: send RESTART (one of {squares}), {rounds}.")
        lines.append(f"Your first action costs {car.surcharge + car.deficit} more this time.")
    elif car.racing:
        lines.append(f"Now send: {rounds}.")
    return "\n".join(lines)
