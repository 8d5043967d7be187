"""Speed Circuit orders in mail (speed-circuit.md §8): the grammar, the parser and HELP.

Two layers (architecture.md): `parse_line` is syntax only (context-free, InvalidOrderError);
`check_order` is legality against the race (IllegalOrderError). A mail is one set of orders:
the design and tyres on turn 1, the grid bid on turn 2, then a race plot (SPEED required,
every other line optional); every bad line is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rules.api import (
    IllegalOrderError,
    InvalidOrderError,
    OrderError,
    OrderProblem,
    Parsed,
    PlayerId,
)
from rules.speed_circuit.car import DESIGN_FIELDS, Design, PitStage, Status, Tyre
from rules.speed_circuit.model import Phase, RaceState
from rules.speed_circuit.plot import (
    RACE_ORDERS,
    SETUP_DESIGN,
    SETUP_QUALIFYING,
    SKILL_ORDER,
    BidOrder,
    DesignOrder,
    Order,
    PassOrder,
    PathKind,
    PathOrder,
    PayOrder,
    PitOrder,
    PushOrder,
    SkillOrder,
    SkillTable,
    SlipOrder,
    SpeedOrder,
    TyresOrder,
    check_speed,
    limits,
    plot_of,
)
from rules.speed_circuit.track import LANES
from rules.speed_circuit.view import turn_label

# -- syntax --------------------------------------------------------------------------------


def _yes_no(word: str, line: str) -> bool:
    if word in ("YES", "Y", "ON"):
        return True
    if word in ("NO", "N", "OFF"):
        return False
    raise InvalidOrderError(f"{line.split()[0].upper()} takes YES or NO, not {word!r}")


def _lane(word: str) -> int:
    if len(word) != 1 or word not in LANES:
        raise InvalidOrderError(f"{word!r} is not a lane; lanes are A, B and C")
    return LANES.index(word)


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise InvalidOrderError(f"{what} must be a whole number, not {word!r}") from None


def _speed(args: list[str], line: str) -> Order:
    if len(args) == 2 and args[1] == "MPH":
        args = args[:1]
    if len(args) != 1:
        raise InvalidOrderError("SPEED takes one value: a speed in mph (a multiple of 20) or MPS")
    if args[0] == "MPS":
        return SpeedOrder(None)
    mph = _int(args[0].removesuffix("MPH"), "SPEED")
    if mph < 0 or mph % 20:
        raise InvalidOrderError(f"SPEED {mph}: speeds are 0 or more, in steps of 20 mph")
    return SpeedOrder(mph)


def _path(args: list[str], line: str) -> Order:
    if not args:
        raise InvalidOrderError("PATH needs the lane of each space entered, e.g. PATH B B A A")
    lanes = [c for word in args for c in word]
    return PathOrder(PathKind.LANES, tuple(_lane(c) for c in lanes))


def _lane_order(args: list[str], line: str) -> Order:
    if len(args) != 1:
        raise InvalidOrderError("LANE takes one lane: A, B or C")
    return PathOrder(PathKind.LANE, (_lane(args[0]),))


def _line(args: list[str], line: str) -> Order:
    if args:
        raise InvalidOrderError("LINE takes nothing (follow the racing lines)")
    return PathOrder(PathKind.LINE)


def _pay(args: list[str], line: str) -> Order:
    if args not in (["WEAR"], ["ROLL"]):
        raise InvalidOrderError("PAY takes WEAR (use wear where a chart allows it) or ROLL")
    return PayOrder(args[0] == "WEAR")


def _skill(args: list[str], line: str) -> Order:
    names: set[SkillTable] = set()
    for word in args:
        if word in ("NONE", "NO"):
            continue
        if word == "ALL":
            names.update(SkillTable)
            continue
        if word == "TESTS":
            names.update((SkillTable.ACCEL, SkillTable.TOP, SkillTable.START, SkillTable.BRAKES))
            continue
        try:
            names.add(SkillTable(word.removesuffix("S") if word == "BRAKE" else word))
        except ValueError:
            known = " ".join(t.value for t in SkillTable)
            raise InvalidOrderError(f"SKILL: unknown table {word!r}; tables: {known}, ALL, TESTS, NONE") from None
    return SkillOrder(tuple(t for t in SKILL_ORDER if t in names))


def _push(args: list[str], line: str) -> Order:
    if len(args) != 1:
        raise InvalidOrderError("PUSH takes YES or NO")
    return PushOrder(_yes_no(args[0], line))


def _slip(args: list[str], line: str) -> Order:
    if len(args) != 1 or args[0] not in ("0", "1", "2"):
        raise InvalidOrderError("SLIP takes 0, 1 or 2 (spaces of slipstream to take)")
    return SlipOrder(int(args[0]))


def _pass(args: list[str], line: str) -> Order:
    if len(args) != 1:
        raise InvalidOrderError("PASS takes YES or NO")
    return PassOrder(_yes_no(args[0], line))


def _pit(args: list[str], line: str) -> Order:
    if len(args) == 1 and args[0] not in ("PRIME", "OPTION"):
        raise InvalidOrderError(f"{args[0]!r} is no tyre of this game: PIT takes the tyres to fit, PRIME or OPTION")
    if len(args) != 1:
        raise InvalidOrderError("PIT takes the tyres to fit: PRIME or OPTION")
    return PitOrder(Tyre(args[0]))


def _design(args: list[str], line: str) -> Order:
    if len(args) % 2:
        raise InvalidOrderError("DESIGN takes pairs, e.g. DESIGN ACC 1 DEC 0 TOP 1 START 0 PRIME 0 OPTION 0 SKILL 0")
    levels = dict.fromkeys(DESIGN_FIELDS, 0)
    aliases = {"ACCEL": "ACC", "DECEL": "DEC", "SS": "START", "TS": "TOP"}
    for name, value in zip(args[::2], args[1::2], strict=True):
        key = aliases.get(name, name)
        if key not in levels:
            raise InvalidOrderError(f"DESIGN: unknown row {name!r}; rows: {' '.join(DESIGN_FIELDS)}")
        levels[key] = _int(value.replace("+", ""), f"DESIGN {key}")
    return DesignOrder(Design(*(levels[f] for f in DESIGN_FIELDS)))


def _tyres(args: list[str], line: str) -> Order:
    if len(args) == 1 and args[0] not in ("PRIME", "OPTION"):
        # "tyres: hard": the word the game does not have is named, with what it takes.
        raise InvalidOrderError(f"{args[0]!r} is no tyre of this game: TYRES takes the starting set, PRIME or OPTION")
    if len(args) != 1:
        raise InvalidOrderError("TYRES takes the starting set: PRIME or OPTION")
    return TyresOrder(Tyre(args[0]))


def _bid(args: list[str], line: str) -> Order:
    pairs = dict(zip(args[::2], args[1::2], strict=False))
    if len(args) % 2 or set(pairs) - {"WEAR", "SKILL"}:
        raise InvalidOrderError("BID takes WEAR n and/or SKILL n, e.g. BID WEAR 2 SKILL 1")
    wear = _int(pairs.get("WEAR", "0"), "BID WEAR")
    skill = _int(pairs.get("SKILL", "0"), "BID SKILL")
    if wear < 0 or skill < 0:
        raise InvalidOrderError("a bid cannot be negative")
    return BidOrder(wear, skill)


# Each order word and how the rest of its line is read (the words after it, the line as written
# for the messages that quote it).
_LINE_PARSERS: dict[str, Callable[[list[str], str], Order]] = {
    "SPEED": _speed,
    "PATH": _path,
    "LANE": _lane_order,
    "LINE": _line,
    "PAY": _pay,
    "SKILL": _skill,
    "PUSH": _push,
    "SLIP": _slip,
    "PASS": _pass,
    "PIT": _pit,
    "DESIGN": _design,
    **dict.fromkeys(("TYRES", "TIRES", "TYRE", "TIRE"), _tyres),
    "BID": _bid,
}


def parse_line(line: str, phase: Phase | None = None) -> Order:
    """One order line, syntax only (raises InvalidOrderError). A word that is no order is
    answered with the orders of `phase` when it is given (every order when not)."""
    words = line.split("#", 1)[0].upper().replace("=", " ").replace(",", " ").split()
    if not words:
        raise InvalidOrderError("empty line")
    head, args = words[0], words[1:]
    if head == "MPS" and not args:
        return SpeedOrder(None)
    parser = _LINE_PARSERS.get(head)
    if parser is None:
        raise InvalidOrderError(f"{words[0]!r} is not an order; {_ORDERS_OF.get(phase, _EVERY_ORDER)}")
    if phase not in _WORDS_OF or head in _WORDS_OF[phase]:
        return parser(args, line)
    try:
        return parser(args, line)  # a well-formed order of another turn: the check says this turn takes none
    except InvalidOrderError:
        # A word of another turn, not written as that order either: what this turn takes.
        pits = (
            "; tyres are changed in the pits: PIT PRIME|OPTION" if phase is Phase.RACE and head in _TYRE_WORDS else ""
        )
        raise InvalidOrderError(
            f"{head} is not an order of this turn; {_ORDERS_OF.get(phase, _EVERY_ORDER)}{pits}"
        ) from None


_RACE_ORDER_WORDS = "race orders: SPEED, PATH, LANE, LINE, PAY, SKILL, PUSH, SLIP, PASS, PIT"
_EVERY_ORDER = f"{_RACE_ORDER_WORDS}; set-up orders: DESIGN, TYRES, BID"
_ORDERS_OF: dict[Phase | None, str] = {
    Phase.DESIGN: f"this turn takes DESIGN (rows {' '.join(DESIGN_FIELDS)}) and TYRES, e.g. DESIGN TOP 1 ACC 1",
    Phase.QUALIFYING: "this turn takes BID, e.g. BID WEAR 2 SKILL 1",
    Phase.RACE: _RACE_ORDER_WORDS,
}
_TYRE_WORDS = frozenset({"TYRES", "TIRES", "TYRE", "TIRE"})
_WORDS_OF: dict[Phase, frozenset[str]] = {
    Phase.DESIGN: frozenset({"DESIGN", *_TYRE_WORDS}),
    Phase.QUALIFYING: frozenset({"BID"}),
    Phase.RACE: frozenset({"SPEED", "PATH", "LANE", "LINE", "PAY", "SKILL", "PUSH", "SLIP", "PASS", "PIT"}),
}
_DESIGN_ROWS = frozenset({*DESIGN_FIELDS, "ACCEL", "DECEL", "SS", "TS"})


def _design_rows(line: str) -> DesignOrder | None:
    """A line of design rows without the word DESIGN ("TOP 2", "ACC 1 TOP 1"): on the design
    turn it is the DESIGN order it writes; None if it is not one."""
    words = line.split("#", 1)[0].upper().replace("=", " ").replace(",", " ").split()
    if not words or words[0] not in _DESIGN_ROWS:
        return None
    try:
        order = parse_line("DESIGN " + " ".join(words))
    except InvalidOrderError:
        return None
    return order if isinstance(order, DesignOrder) else None


def format_order(order: Order) -> str:
    if isinstance(order, DesignOrder):
        return f"DESIGN {order.design.text()}"
    if isinstance(order, TyresOrder):
        return f"TYRES {order.tyre.value}"
    if isinstance(order, BidOrder):
        return f"BID WEAR {order.wear} SKILL {order.skill}"
    if isinstance(order, SpeedOrder):
        return "SPEED MPS" if order.mph is None else f"SPEED {order.mph}"
    if isinstance(order, PathOrder):
        if order.kind is PathKind.LANES:
            return "PATH " + " ".join(LANES[i] for i in order.lanes)
        if order.kind is PathKind.LANE:
            return f"LANE {LANES[order.lanes[0]]}"
        if order.kind is PathKind.LINE:
            return "LINE"
        raise ValueError("keeping the lane is the default path, not an order line")
    if isinstance(order, PayOrder):
        return "PAY WEAR" if order.wear_first else "PAY ROLL"
    if isinstance(order, SkillOrder):
        return "SKILL " + (" ".join(t.value for t in order.tables) or "NONE")
    if isinstance(order, PushOrder):
        return f"PUSH {'YES' if order.allowed else 'NO'}"
    if isinstance(order, SlipOrder):
        return f"SLIP {order.spaces}"
    if isinstance(order, PassOrder):
        return f"PASS {'YES' if order.allowed else 'NO'}"
    return f"PIT {order.tyre.value}"


# -- a mail ------------------------------------------------------------------------------

_KINDS: tuple[type, ...] = (DesignOrder, TyresOrder, BidOrder, *RACE_ORDERS)
_WANTED: dict[Phase, type] = {Phase.DESIGN: DesignOrder, Phase.QUALIFYING: BidOrder, Phase.RACE: SpeedOrder}
"""The order that makes a set full in each phase (TYRES and every plot line but SPEED are optional)."""


def _kind_index(order: Order) -> int:
    return _KINDS.index(type(order))


def parse_orders(state: RaceState, player: PlayerId, text: str) -> Parsed[Order]:
    """Every line of one mail, checked against the state; the orders in canonical order."""
    accepted: list[tuple[int, str, Order]] = []
    problems: list[OrderProblem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line.split("#", 1)[0].strip():
            continue
        try:
            rows = _design_rows(line) if state.phase is Phase.DESIGN else None
            order = rows or parse_line(line, state.phase)
            check_order(state, player, order, [o for _, _, o in accepted])
        except OrderError as error:
            problems.append(OrderProblem.from_error(number, line, error))
            continue
        accepted.append((number, line, order))
    # a speed above the safe limit needs PUSH YES, which may come on any line
    plot = plot_of([o for _, _, o in accepted])
    kept: list[Order] = []
    for number, line, order in accepted:
        if isinstance(order, SpeedOrder):
            try:
                check_speed(state.car(player), state.track, order.mph, plot.push)
            except IllegalOrderError as error:
                problems.append(OrderProblem.from_error(number, line, error))
                continue
        kept.append(order)
    # a PATH is checked against where the car stands
    for number, line, order in accepted:
        if isinstance(order, PathOrder) and order in kept:
            try:
                check_path(state, player, order)
            except IllegalOrderError as error:
                problems.append(OrderProblem.from_error(number, line, error))
                kept.remove(order)
    return Parsed(canonical(kept), tuple(problems), is_complete(state, player, kept))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def check_path(state: RaceState, player: PlayerId, order: PathOrder) -> None:
    """IllegalOrderError unless the car can drive `order`'s lanes from where it stands (§8:
    "the lane of each space entered"): each space entered in its lane, moving straight on or
    to an adjacent lane as the track allows (§2.16). Lanes past the plotted move are never
    driven, so they are not checked against it. A car in the pits, or off the track, takes no
    PATH check: the pit lane is driven as it is."""
    car = state.car(player)
    if order.kind is not PathKind.LANES or car.space is None or car.pit is not None:
        return
    track = state.track
    staggered = state.options.staggered_lane_change
    said = "PATH " + " ".join(LANES[i] for i in order.lanes)
    here = car.space
    for i, lane in enumerate(order.lanes, start=1):
        moves = track.moves(here, staggered=staggered)
        into = [m for m in moves if track.space(m).lane == lane]
        if not moves:
            return  # the track ends here: the resolver stops the car (a dead end)
        if not into:
            lanes = sorted({LANES[track.space(m).lane] for m in moves})
            where = "from " + here
            raise IllegalOrderError(
                f"{said} cannot be driven: {where} the {_ordinal(i)} space entered is in lane "
                f"{' or '.join(lanes)}, not {LANES[lane]} (a car changes at most one lane a space)"
            )
        here = into[0]


def canonical(orders: Sequence[Order]) -> tuple[Order, ...]:
    """Orders in their canonical order (the order `parse_orders` gives them)."""
    return tuple(sorted(orders, key=_kind_index))


def is_complete(state: RaceState, player: PlayerId, orders: Sequence[Order]) -> bool:
    """A full set: DESIGN on turn 1, BID on turn 2, SPEED in the race; nothing for a car that
    is not racing or once the race is over."""
    return not missing_orders(state, player, orders)


def missing_orders(state: RaceState, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
    """What a full set lacks (`is_complete`): the line the phase requires, with its syntax
    (every other line of a plot is optional, speed-circuit.md §8)."""
    wanted = _WANTED.get(state.phase)
    car = state.car(player)
    if wanted is None or car.status is not Status.RACING or any(isinstance(o, wanted) for o in orders):
        return ()
    if wanted is DesignOrder:
        return ("the car's design: a DESIGN line (DESIGN ACC n DEC n TOP n START n PRIME n OPTION n SKILL n)",)
    if wanted is BidOrder:
        return (f"the grid bid: a BID line (BID WEAR n SKILL n, up to {car.wear} wear and {car.skill} skill)",)
    return (
        f"the speed: a SPEED line (SPEED n in steps of 20, or SPEED MPS; you may plot "
        f"{limits(car, state.track).describe()})",
    )


def merge_orders(earlier: Sequence[Order], later: Sequence[Order]) -> tuple[Order, ...]:
    """The set on file after a later valid mail. §8: "the last valid plot counts", so a later
    set replaces the earlier whole; but a set on file that lacks the line its phase needs
    (DESIGN, BID, SPEED: `missing_orders`) and a later mail that brings that line and names
    nothing the set on file names ("Oops, forgot: SPEED 40") make one set: the mail supplies the
    part the confirmation said was missing, it does not withdraw the rest. A later mail that
    holds no order leaves the set on file as it was."""
    if not later:
        return tuple(earlier)
    required = frozenset(_WANTED.values())
    had = {type(o) for o in earlier}
    brings = {type(o) for o in later}
    if earlier and not had & brings and brings & required and not had & required:
        return canonical([*earlier, *later])
    return tuple(later)


def check_order(state: RaceState, player: PlayerId, order: Order, earlier: Sequence[Order]) -> None:
    """IllegalOrderError unless `player` may give `order` now, after `earlier` in the same mail."""
    car = state.car(player)
    if car.status is not Status.RACING:
        raise IllegalOrderError(f"your car is {car.status.value}: no more orders")
    allowed: tuple[type, ...] = {
        Phase.DESIGN: SETUP_DESIGN,
        Phase.QUALIFYING: SETUP_QUALIFYING,
        Phase.RACE: RACE_ORDERS,
    }.get(state.phase, ())
    if not isinstance(order, allowed):
        names = {
            Phase.DESIGN: "DESIGN and TYRES",
            Phase.QUALIFYING: "BID",
            Phase.RACE: "race plot lines (SPEED, PATH, ...)",
        }
        raise IllegalOrderError(f"this turn ({turn_label(state)}) takes {names.get(state.phase, 'no orders')}")
    if any(type(o) is type(order) for o in earlier):
        what = "PATH/LANE/LINE" if isinstance(order, PathOrder) else format_order(order).split()[0]
        raise IllegalOrderError(f"{what} given twice; the first one counts")
    if isinstance(order, DesignOrder):
        problems = order.design.problems()
        if problems:
            raise IllegalOrderError("; ".join(problems))
    if isinstance(order, BidOrder):
        # P31: wear from the starting set only, skill from the chips held
        if order.wear > car.wear:
            raise IllegalOrderError(f"you bid {order.wear} wear but your starting set has {car.wear}")
        if order.skill > car.skill:
            raise IllegalOrderError(f"you bid {order.skill} skill but hold {car.skill} chips")
    if isinstance(order, PushOrder) and order.allowed and car.pit is not None and car.pit.stage is PitStage.LANE:
        # seed "Tire Change": the pit crew is pushed as the tyres are changed, in the turn
        # after entering; leaving the pit lane there is nothing to push
        raise IllegalOrderError(
            "PUSH YES does nothing as you leave the pits: the pit crew is pushed the turn your tyres are "
            "changed (in the entrance lane), and your speed back onto the track is the pit limit or less"
        )
    if isinstance(order, PathOrder) and order.kind is PathKind.LANES and len(order.lanes) > 20:
        raise InvalidOrderError("PATH lists more spaces than any car can move")


def format_orders(orders: Sequence[Order]) -> str:
    """Canonical text, one order a line."""
    return "\n".join(format_order(o) for o in orders)


def order_help(state: RaceState, player: PlayerId) -> str:
    """The HELP reply for this player now."""
    if state.phase is Phase.DESIGN:
        return (
            "DESIGN ACC n DEC n TOP n START n PRIME n OPTION n SKILL n   columns -2..+2 of the design table, "
            "adding up to at most 2 (ACC and DEC at least -1); rows left out are 0\n"
            f"  ACC/DEC 20/40/60/80, TOP 120..200, START 20/40/60/100/120, tyres {state.laps}..{5 * state.laps} wear, "
            f"skill 0..{4 * state.laps} chips\n"
            "TYRES PRIME|OPTION   the set you start on (and bid from)"
        )
    if state.phase is Phase.QUALIFYING:
        car = state.car(player)
        return f"BID WEAR n SKILL n   your grid bid: up to {car.wear} wear (starting set) and {car.skill} skill; all of it is lost"
    if state.phase is not Phase.RACE:
        return "The race is over: no orders."
    car = state.car(player)
    legal = limits(car, state.track).describe() if car.status is Status.RACING else "nothing (not racing)"
    return (
        f"SPEED n | SPEED MPS    required: mph in steps of 20; you may plot {legal}\n"
        "PATH B B A ...         the lane of each space entered; or LANE A (end lane); or LINE (follow racing lines)\n"
        "PAY WEAR|ROLL          where a chart allows wear or a roll (default WEAR)\n"
        "SKILL ACCEL TOP START BRAKES CHANCE PASS CRASH | ALL | TESTS | NONE   tables to bypass with skill chips\n"
        "PUSH YES|NO            allow plotting 20 over your acceleration / top / start speed with a test\n"
        "SLIP 0|1|2             take 1 or 2 slipstream spaces when you end directly behind a car running 120+\n"
        "PASS YES|NO            force past a blocking car on the passing table (default NO: brake instead)\n"
        "PIT PRIME|OPTION       enter the pits if you end on a red-arrow space, and fit those tyres; in the pits\n"
        "                       plot the pit limit or less, PUSH YES to roll on the pit crew table as the\n"
        "                       tyres are changed (the turn after entering; not as you leave)"
    )
