"""SpeedPhreakz behind the `rules.api.Game` protocol."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rules.api import (
    FigureError,
    Figures,
    Game,
    OneLineOrder,
    OptionError,
    Parsed,
    PlayerId,
    Resolution,
    RobotLevel,
    Stall,
    Standings,
    View,
    Viewer,
)
from rules.speedphreakz import parse, robot, storage, view
from rules.speedphreakz.data import bundled_map, map_names
from rules.speedphreakz.model import (
    STALL_ROUNDS,
    Car,
    CarStatus,
    Heading,
    NoOrders,
    Options,
    Order,
    Program,
    Race,
    Square,
    Start,
)
from rules.speedphreakz.options import program_costs
from rules.speedphreakz.resolve import (
    default_restart,
    default_start,
    previous_program,
    resolve_round,
)
from rules.speedphreakz.view import SpeedPhreakzView

_PLAYER = re.compile(r"^[a-z0-9_-]+$")
LETTERS = "ABCDEFGH"
MAX_RECKLESSNESS = 20  # the most a GM may SET (see set_figure)


def _shown(text: str) -> str:
    """What the GM wrote, quoted on one line and cut to 40 characters, for a FigureError."""
    cut = text.strip()
    return repr(cut[:40]) + ("..." if len(cut) > 40 else "")


def parse_options(options: Mapping[str, str]) -> Options:
    known = {"map", "max_actions", "nmr", "max_rounds"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise OptionError(f"unknown option {unknown[0]!r}; options are {', '.join(sorted(known))}")
    result = Options()
    if "map" in options:
        name = options["map"].strip().lower()
        if name not in map_names():
            raise OptionError(f"unknown map {name!r}; bundled maps: {', '.join(map_names())}")
        result = dataclasses.replace(result, map=name)
    if "max_actions" in options:
        result = dataclasses.replace(result, max_actions=_whole(options, "max_actions", 1, 30))
    if "max_rounds" in options:
        result = dataclasses.replace(result, max_rounds=_whole(options, "max_rounds", 2, 500))
    if "nmr" in options:
        try:
            result = dataclasses.replace(result, nmr=NoOrders(options["nmr"].strip().lower()))
        except ValueError:
            raise OptionError("nmr must be 'empty' (hold position) or 'repeat' (the previous program)") from None
    return result


def _whole(options: Mapping[str, str], key: str, low: int, high: int) -> int:
    text = options[key].strip()
    if not text.isdigit() or not low <= int(text) <= high:
        raise OptionError(f"{key} must be a whole number from {low} to {high}, not {text!r}")
    return int(text)


class SpeedPhreakz:
    name: ClassVar[str] = "speedphreakz"
    title: ClassVar[str] = "SpeedPhreakz"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = len(LETTERS)
    early_resolution: ClassVar[bool] = True
    honours: ClassVar[tuple[str, ...]] = ()  # the text defines no pole, lap leader or fastest lap
    later_replaces: ClassVar[bool] = False
    chance: ClassVar[bool] = True

    # -- set-up -----------------------------------------------------------------------
    def new_game(self, players: Sequence[PlayerId], options: Mapping[str, str], rng: random.Random) -> Race:
        if not self.min_players <= len(players) <= self.max_players:
            raise ValueError(f"SpeedPhreakz needs {self.min_players} to {self.max_players} players, not {len(players)}")
        if len(set(players)) != len(players) or not all(_PLAYER.match(p) for p in players):
            raise ValueError("player names must be distinct: lower-case letters, digits, - and _")
        opts = parse_options(options)
        circuit = bundled_map(opts.map)
        cars = tuple(Car(player=p, letter=LETTERS[i], heading=circuit.finish_direction) for i, p in enumerate(players))
        return Race(circuit=circuit, options=opts, cars=cars)

    def option_help(self) -> str:
        return "\n".join(
            [
                f"map: the circuit, one of {', '.join(map_names())} (default ring)",
                "max_actions: actions allowed per round, 1-30 (default 12)",
                "nmr: a silent player's program, 'empty' (hold position) or 'repeat' (default empty)",
                "max_rounds: the race ends after this round if nobody has finished, 2-500 "
                "(default: no limit, the race runs until a car finishes)",
            ]
        )

    def rules_summary(self) -> str:
        return (
            "SpeedPhreakz is a push-your-luck race on a grid. Each round you program a list of "
            "actions (F1 F2 F3 RV VL VR TL TR HL HR), always one round ahead. After the orders are "
            "in, the bot rolls the round's control (d100+100, the same for everyone). Actions cost "
            "control; once your running total goes over it, that action and every later one is "
            "rolled on a d10 loss-of-control table, and the overspend is added to your next first "
            "action.\n\n"
            "Recklessness (+1 when your first action already loses control, +1 per 100 over) pushes "
            "those d10s away from the middle; off the table is a crash. Crash into a wall, end a "
            "round on another car's square, or stand next to a car when it crashes, and you crash: "
            "you restart next to the wreck with +50 (and +50 per recklessness) on your next first "
            "action.\n\n"
            "Pass the checkpoints in order and cross the line first. Several at once: more control "
            "left at the crossing, then fewer crashes, then whoever sent that round's program first."
        )

    # -- the turn -----------------------------------------------------------------------
    def orders_label(self, state: Race, player: PlayerId) -> str:
        """Orders run one round ahead (§5): in round 2 a player's orders are the program for
        round 3; the set-up's are its own label."""
        rounds = state.allowed_rounds(player)
        if state.set_up or not rounds:
            return self.turn_label(state)
        return ("Round " if len(rounds) == 1 else "Rounds ") + " and ".join(str(n) for n in rounds)

    def turn_label(self, state: Race) -> str:
        return view.turn_label(state)

    def expected_players(self, state: Race) -> frozenset[PlayerId]:
        if state.finished:
            return frozenset()
        return frozenset(c.player for c in state.cars if c.racing)

    def parse_orders(self, state: Race, player: PlayerId, text: str) -> Parsed[Order]:
        return parse.parse_orders(state, player, text)

    def format_orders(self, orders: Sequence[Order]) -> str:
        return parse.format_orders(orders)

    def merge_orders(self, earlier: Sequence[Order], later: Sequence[Order]) -> tuple[Order, ...]:
        return parse.merge_orders(earlier, later)

    def plot_orders(self, state: Race, player: PlayerId, plot: str) -> tuple[Order, ...] | None:
        """§5: a GM plot is a standing default. What of it stands in the round in hand
        (`parse.standing_plot`: its program carried over to the rounds open now, set-up
        lines only at the set-up), completed by the NMR default for whatever it does not
        name (a START FREE, an S10 restart); None when nothing of it stands."""
        standing = parse.standing_plot(state, player, plot)
        if not standing:
            return None
        return parse.merge_orders(self.default_orders(state, player), standing)

    def default_orders(self, state: Race, player: PlayerId) -> tuple[Order, ...]:
        """S14: empty programs (or the previous program, option nmr=repeat); at the set-up
        START FREE, a start square no one chose (§5); a crashed car restarts by S10."""
        if state.finished:
            return ()
        car = state.car(player)
        if not car.racing:
            return ()
        orders: list[Order] = []
        if state.set_up:
            orders.append(default_start(state))
        elif car.status is CarStatus.CRASHED:
            taken = {c.square for c in state.cars if c.status is CarStatus.RACING and c.square is not None}
            orders.append(default_restart(state, car, taken))
        for round_no in state.allowed_rounds(player):
            actions: tuple[str, ...] = ()
            if state.options.nmr is NoOrders.REPEAT:
                actions = previous_program(car, round_no)
                if parse.program_problem(actions, state.options.max_actions) is not None:
                    actions = ()
            orders.append(Program(round_no, actions))
        return parse.canonical(orders)

    def resolve(
        self,
        state: Race,
        orders: Mapping[PlayerId, Sequence[Order]],
        rng: random.Random,
        submitted: Sequence[PlayerId] = (),
    ) -> Resolution[Race]:
        """S16: `submitted` (the order the seats' final sets arrived) is kept in the state for
        each round whose programs arrived this turn; the last tie-break of a round's finish
        is who sent their program for that round first."""
        if state.finished:
            return Resolution(state, ())
        return resolve_round(state, orders, rng, submitted)

    def filled_orders(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[Order, ...]:
        """What the set leaves out, as this turn's resolution fills it (§5, S14): at the set-up
        START FREE facing the race direction (the square is placed once every START is in),
        and the program of the round resolved now, when the set should name it (the set-up,
        a crashed car), the empty program (or, with option nmr=repeat, the previous one).

        The program of the next round is not filled: this turn's resolution locks what was
        sent for it (§5 Pipeline), and a round without a program runs as the empty one when it
        is resolved (`missing_orders` still names it: it cannot be sent after this turn). A crashed car's missing
        RESTART is left to S10, whose square depends on where the others restart."""
        if self.is_complete(state, player, orders):
            return tuple(orders)
        kept = list(orders)
        named = {o.round for o in kept if isinstance(o, Program)}
        for default in self.default_orders(state, player):
            if isinstance(default, Start) and not any(isinstance(o, Start) for o in kept):
                kept.append(default)
            elif isinstance(default, Program) and default.round == state.round and default.round not in named:
                kept.append(default)
        return parse.canonical(kept)

    def normal_orders(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[Order, ...]:
        """The filled set (`filled_orders`): a START FREE facing the race's way, or an empty
        program of the round in hand (with nmr=empty), written out is what the fill puts there;
        no other line restates a default (a COLOUR, a square, a program of a later round all
        change the race)."""
        return self.filled_orders(state, player, orders)

    def is_complete(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> bool:
        return parse.is_complete(state, player, orders)

    def missing_orders(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
        return parse.missing_orders(state, player, orders)

    def consequences(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
        programs = tuple((o.round, o.actions) for o in orders if isinstance(o, Program))
        return program_costs(state, player, programs)

    def taken(
        self, state: Race, player: PlayerId, orders: Sequence[Order], others: Mapping[PlayerId, Sequence[Order]]
    ) -> tuple[tuple[Order, str], ...]:
        return parse.taken(state, player, orders, others)

    def one_line_orders(self, state: Race, player: PlayerId) -> tuple[OneLineOrder, ...]:
        return ()  # a program is a round's list of moves: no one-line order

    def order_help(self, state: Race, player: PlayerId) -> str:
        return parse.order_help(state, player)

    def robot_orders(
        self,
        state: Race,
        player: PlayerId,
        rng: random.Random,
        level: RobotLevel = RobotLevel.NORMAL,
        robots: frozenset[PlayerId] | None = None,
    ) -> tuple[Order, ...]:
        return robot.robot_orders(state, player, rng, level, robots)

    # -- reading the state ------------------------------------------------------------
    def is_finished(self, state: Race) -> bool:
        return state.finished

    def stall(self, state: Race) -> Stall | None:
        """`STALL_ROUNDS` rounds in a row in which no car got nearer the end (passed a
        checkpoint or the line, or ended a round nearer its next one than it had ended any
        since it passed the last), and every as many rounds after while it lasts: the race
        may never end on its own (§5: no round limit by default), so the GM is told, with the
        SET that gives it a last round (the round open now: it ends when that is resolved)."""
        if state.finished or not state.stalled or state.stalled % STALL_ROUNDS:
            return None
        return Stall(
            turns=state.stalled,
            reason=(
                f"No car has got nearer the finish for {state.stalled} rounds: none has passed a checkpoint "
                "or the line, or ended a round nearer its next checkpoint than before."
            ),
            figure="max_rounds",
            value=str(state.round),
            ends=(
                f"makes round {state.round}, the round open now, the race's last: when it is resolved the race "
                "ends, classified by laps and checkpoints done, then distance to the next checkpoint"
            ),
        )

    def players(self, state: Race) -> tuple[PlayerId, ...]:
        return tuple(c.player for c in state.cars if c.status is not CarStatus.OUT)

    def standings(self, state: Race) -> Standings:
        return view.standings(state)

    def figures(self, state: Race, player: PlayerId) -> Figures:
        return view.figures(state, player)

    def view(self, state: Race, resolution: Resolution[Race] | None, viewer: PlayerId | Viewer) -> SpeedPhreakzView:
        return view.build_view(state, resolution, viewer)

    def player_view(self, state: Race, public: View, player: PlayerId) -> SpeedPhreakzView:
        if not isinstance(public, SpeedPhreakzView):
            raise TypeError(f"not a SpeedPhreakz view: {type(public).__name__}")
        return view.player_view(state, public, player)

    # -- GM overrides -------------------------------------------------------------------
    def set_figure(self, state: Race, player: PlayerId, name: str, value: str) -> Race:
        # What a GM typed: every number is ASCII digits, and few of them, before
        # int() sees it; a refusal names the legal range and quotes at most 40 characters.
        try:
            car = state.car(player)
        except KeyError:
            raise FigureError(f"no player {_shown(player)} in this game") from None
        field = name.strip().lower()
        text = value.strip()
        headings = " ".join(h.value for h in Heading)
        if field == "recklessness":
            # speedphreakz.md §4.2: +1 when the first action loses control, +1 per 100 points
            # of deficit, reset to 0; §4.3: from 5 on, every loss of control crashes. The
            # design sets no upper bound; the GM may set 0..MAX_RECKLESSNESS.
            if not (text.isascii() and text.isdigit() and len(text) <= 2) or int(text) > MAX_RECKLESSNESS:
                raise FigureError(
                    f"recklessness must be a whole number from 0 to {MAX_RECKLESSNESS}, not {_shown(value)}"
                )
            car = dataclasses.replace(car, recklessness=int(text))
        elif field == "square":
            # speedphreakz.md §4.7: a square is x,y on the map's grid, x right and y down from
            # 0; walls and void are solid (§4.6).
            circuit = state.circuit
            legal = (
                f"square must be x,y on the map (x 0 to {circuit.width - 1}, y 0 to {circuit.height - 1}) and not solid"
            )
            parts = text.replace(" ", "").split(",")
            if len(text) > 20 or len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
                raise FigureError(f"{legal}, not {_shown(value)}")
            try:
                square = Square.parse(text)
            except ValueError:
                raise FigureError(f"{legal}, not {_shown(value)}") from None
            if not circuit.on_map(square) or circuit.solid(square):
                raise FigureError(f"{legal}; {square} is off the map or solid")
            car = dataclasses.replace(car, square=square)
        elif field == "heading":
            # speedphreakz.md §4.4: the 8 compass headings.
            if text.upper() not in headings.split():
                raise FigureError(f"heading must be one of {headings}, not {_shown(value)}")
            car = dataclasses.replace(car, heading=Heading.parse(text))
        elif field == "max_rounds":
            # §5: "a max_rounds option may end it"; the GM sets it for a race that will not end
            # (`stall`): the race's last round, from the round open now to the option's 500.
            low, high = state.round, 500
            if not (text.isascii() and text.isdigit() and len(text) <= 3) or not low <= int(text) <= high:
                raise FigureError(
                    f"max_rounds is the race's last round, a whole number from {low} (the round open "
                    f"now) to {high}, not {_shown(value)}"
                )
            return dataclasses.replace(state, options=dataclasses.replace(state.options, max_rounds=int(text)))
        else:
            raise FigureError(
                f"unknown figure {_shown(name)}; SpeedPhreakz figures: recklessness (0 to "
                f"{MAX_RECKLESSNESS}), square (x,y), heading ({headings}); and for the race, given "
                f"with any seat: max_rounds (its last round, {state.round} to 500)"
            )
        return dataclasses.replace(state, cars=tuple(car if c.player == player else c for c in state.cars))

    def drop_player(self, state: Race, player: PlayerId) -> Race:
        cars = tuple(
            dataclasses.replace(c, status=CarStatus.OUT, programs=()) if c.player == player else c for c in state.cars
        )
        racing = any(c.racing for c in cars)
        return dataclasses.replace(state, cars=cars, finished=state.finished or not racing)

    # -- storage ------------------------------------------------------------------------
    def dump_state(self, state: Race) -> dict[str, Any]:
        return storage.dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> Race:
        return storage.load_state(data)


GAME: Game[Race, Order] = SpeedPhreakz()
