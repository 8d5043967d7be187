"""Speed Circuit PBeM behind the `rules.api.Game` protocol."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from rules.api import (
    FigureError,
    Figures,
    Game,
    InvalidOrderError,
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
from rules.speed_circuit import parse, robot, storage, view
from rules.speed_circuit.car import DEFAULT_DESIGN, Car, PitStage, Status, Tyre
from rules.speed_circuit.model import OPTION_HELP, Phase, PlotDefault, RaceState, parse_options
from rules.speed_circuit.options import Cost, pit_speeds, plot_cost, plot_options
from rules.speed_circuit.plot import (
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
    SlipOrder,
    SpeedOrder,
    TyresOrder,
    closest_achievable,
    limits,
)
from rules.speed_circuit.resolve import STOPPED_REPORT, STOPPED_TURNS, resolve_turn, safe_plot
from rules.speed_circuit.track import bundled_track_text, bundled_tracks, load_track
from rules.speed_circuit.view import SpeedCircuitView

# The lines that only restate what the resolution does without them (`Plot`'s defaults, §8 and
# the Redscape defaults [SRC 18]; P3's PRIME tyres): left out of the normal form.
RESTATED: frozenset[Order] = frozenset(
    {
        PayOrder(True),
        SkillOrder(()),
        PushOrder(False),
        SlipOrder(0),
        PassOrder(False),
        TyresOrder(Tyre.PRIME),
    }
)


class SpeedCircuit:
    name: ClassVar[str] = "speed_circuit"
    title: ClassVar[str] = "Speed Circuit"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 9
    early_resolution: ClassVar[bool] = True
    honours: ClassVar[tuple[str, ...]] = ("pole",)  # the qualifying bid's winner (seed 003, P31)
    later_replaces: ClassVar[bool] = False  # a set that only adds the line a set on file lacks is an addition
    chance: ClassVar[bool] = True

    # -- set-up -----------------------------------------------------------------------
    def new_game(self, players: Sequence[PlayerId], options: Mapping[str, str], rng: random.Random) -> RaceState:
        opts = parse_options(options)
        if not self.min_players <= len(players) <= self.max_players:
            raise ValueError(f"Speed Circuit takes {self.min_players}..{self.max_players} players, not {len(players)}")
        if len(set(players)) != len(players):
            raise ValueError("a player is listed twice")
        for team in opts.teams:
            strangers = [p for p in team if p not in players]
            if strangers:
                raise OptionError(f"teams: {strangers[0]!r} is not a player in this game")
        track = load_track(bundled_track_text(opts.track))
        if len(track.grid) < len(players):
            raise ValueError(f"{track.name} has {len(track.grid)} grid spaces for {len(players)} players")
        return RaceState(track=track, options=opts, cars=tuple(Car(p) for p in players))

    def option_help(self) -> str:
        return OPTION_HELP.format(tracks=", ".join(bundled_tracks()))

    def rules_summary(self) -> str:
        return (
            "Speed Circuit (Avalon Hill, 1977) with the PBeM rules of the WBC family. Turn 1: design your "
            "car on the design table (2 points over ACC, DEC, TOP, START, PRIME and OPTION tyres and "
            "SKILL chips) and choose the starting tyres. Turn 2: bid wear and skill for the grid.\n\n"
            "Then every turn each driver secretly plots a speed in steps of 20 mph; cars move 1 space "
            "per 20 mph, front car first, straight or diagonally forward. Accelerate up to your "
            "acceleration, brake up to your deceleration; brake harder on the deceleration chart, push "
            "20 over a limit with a 2d6 test. Corners post speeds: going over costs wear or a roll on "
            "the chance table, paid once per corner; racing lines give +20 (green +40).\n\n"
            "Ask for a slipstream (SLIP 1|2) behind a car running 120 or more; allow forced passes "
            "(PASS YES) through a blocking car on the passing table; a failed pass in a blocked row "
            "puts you off track (1 wear and 1 skill a turn). Cars behind an on-course crash roll to "
            "avoid it. Every car must run both tyre compounds: pit from a red-arrow space with "
            "PIT PRIME|OPTION; PUSH YES in the pits rolls on the pit crew table."
        )

    # -- the turn ---------------------------------------------------------------------
    def orders_label(self, state: RaceState, player: PlayerId) -> str:
        return self.turn_label(state)

    def turn_label(self, state: RaceState) -> str:
        return view.turn_label(state)

    def expected_players(self, state: RaceState) -> frozenset[PlayerId]:
        if state.phase is Phase.FINISHED:
            return frozenset()
        return frozenset(c.player for c in state.cars if c.status is Status.RACING)

    def parse_orders(self, state: RaceState, player: PlayerId, text: str) -> Parsed[Order]:
        return parse.parse_orders(state, player, text)

    def format_orders(self, orders: Sequence[Order]) -> str:
        return parse.format_orders(orders)

    def merge_orders(self, earlier: Sequence[Order], later: Sequence[Order]) -> tuple[Order, ...]:
        return parse.merge_orders(earlier, later)

    def plot_orders(self, state: RaceState, player: PlayerId, plot: str) -> tuple[Order, ...] | None:
        """The GM plot on file (P29) as it stands in the open turn. In the race a plot whose
        speed is no longer achievable becomes the closest achievable speed (§8: "at the
        deadline an impossible plot on file becomes the closest achievable speed", WBC Plot
        Errors: "assuming maximum use of wear and tests", so PUSH YES is added where a push
        reaches closer, unless the plot says PUSH NO); every other line of it is kept as
        written, and a line that is not legal now is left out. None when no line stands."""
        parsed = self.parse_orders(state, player, plot)
        if parsed.ok or state.phase is not Phase.RACE or state.car(player).status is not Status.RACING:
            return parsed.orders if parsed.orders and parsed.ok else None
        kept = list(parsed.orders)
        asked = _first_speed(plot)
        if asked is not None and not any(isinstance(o, SpeedOrder) for o in kept):
            car = state.car(player)
            said_no_push = PushOrder(False) in kept
            mph = closest_achievable(car, state.track, asked.mph, push=not said_no_push)
            if asked.mph is None and mph == car.speed:
                kept.append(asked)  # MPS itself is achievable
            else:
                kept.append(SpeedOrder(mph))
            if mph > limits(car, state.track).safe and PushOrder(True) not in kept:
                kept.append(PushOrder(True))
        return parse.canonical(kept) or None

    def default_orders(self, state: RaceState, player: PlayerId) -> tuple[Order, ...]:
        if state.phase is Phase.DESIGN:
            return (DesignOrder(DEFAULT_DESIGN), TyresOrder(Tyre.PRIME))
        if state.phase is Phase.QUALIFYING:
            return (BidOrder(0, 0),)
        car = state.car(player)
        if state.phase is not Phase.RACE or car.status is not Status.RACING:
            return ()
        if state.options.plot_default is PlotDefault.GM_THEN_MPS:
            return (SpeedOrder(None),)
        plot = safe_plot(state, car)
        if car.pit is not None:
            return (SpeedOrder(plot.speed), PayOrder(True))
        path = PathOrder(PathKind.LINE) if plot.lanes is None else PathOrder(PathKind.LANES, plot.lanes)
        orders: list[Order] = [SpeedOrder(plot.speed), path, PayOrder(True)]
        if plot.pit is not None:
            orders.append(PitOrder(plot.pit))
        return tuple(orders)

    def resolve(
        self,
        state: RaceState,
        orders: Mapping[PlayerId, Sequence[Order]],
        rng: random.Random,
        submitted: Sequence[PlayerId] = (),
    ) -> Resolution[RaceState]:
        # Plots are revealed simultaneously (§2.5): who submitted first never counts.
        return resolve_turn(state, orders, rng)

    def is_complete(self, state: RaceState, player: PlayerId, orders: Sequence[Order]) -> bool:
        return parse.is_complete(state, player, orders)

    def missing_orders(self, state: RaceState, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
        return parse.missing_orders(state, player, orders)

    def filled_orders(self, state: RaceState, player: PlayerId, orders: Sequence[Order]) -> tuple[Order, ...]:
        """The line the phase requires, when left out, as the resolution fills it: the base
        design and PRIME tyres (P1, P3), a bid of nothing (P31), and in the race the speed of
        the safe plot (§8: "every line is optional but SPEED"; the other lines left out are
        at their defaults already: keep lane, PAY WEAR, SLIP 0, PASS NO, PUSH NO)."""
        if self.is_complete(state, player, orders):
            return tuple(orders)
        kept = list(orders)
        if state.phase is Phase.DESIGN:
            if not any(isinstance(o, DesignOrder) for o in kept):
                kept.append(DesignOrder(DEFAULT_DESIGN))
            if not any(isinstance(o, TyresOrder) for o in kept):
                kept.append(TyresOrder(Tyre.PRIME))
        elif state.phase is Phase.QUALIFYING:
            kept.append(BidOrder(0, 0))
        else:
            kept.append(SpeedOrder(safe_plot(state, state.car(player)).speed))
        return parse.canonical(kept)

    def normal_orders(self, state: RaceState, player: PlayerId, orders: Sequence[Order]) -> tuple[Order, ...]:
        """The filled set less the lines that restate the plot's defaults (§8, `plot.Plot`):
        ``PAY WEAR``, ``SKILL NONE``, ``PUSH NO``, ``SLIP 0``, ``PASS NO``, and at the design
        ``TYRES PRIME`` (P3: the tyres a car without a TYRES line starts on)."""
        return tuple(o for o in self.filled_orders(state, player, orders) if o not in RESTATED)

    def consequences(self, state: RaceState, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
        cost = plot_cost(state, player, orders)
        return (cost.describe(),) if cost is not None else ()

    def taken(
        self, state: RaceState, player: PlayerId, orders: Sequence[Order], others: Mapping[PlayerId, Sequence[Order]]
    ) -> tuple[tuple[Order, str], ...]:
        return ()  # no choice only one seat may have

    def one_line_orders(self, state: RaceState, player: PlayerId) -> tuple[OneLineOrder, ...]:
        # Each legal speed by the cheapest path to where it ends soonest, with what it costs
        # (the seat's own options); PUSH YES where the speed needs a push (§2.5).
        # In the pits every legal speed, with what slowing to it costs (P28).
        # Entering the pits: each speed whose move can end on a pit-entry arrow, with PIT and the
        # compound the car has not run yet (P4). In the entrance lane, each speed also with PUSH
        # YES, pushing the pit crew as the tyres are changed (seed "Tire Change").
        options = plot_options(state, player)
        if options is None:
            car = state.car(player)
            crew = car.pit is not None and car.pit.stage is PitStage.ENTRANCE
            found = []
            for pit in pit_speeds(state, player):
                found.append(OneLineOrder(f"{pit.speed} mph: {pit.cost.describe()} ({pit.does})", f"SPEED {pit.speed}"))
                if crew and pit.cost.cost is not Cost.SPIN:
                    found.append(
                        OneLineOrder(
                            f"{pit.speed} mph pushing the pit crew: {pit.cost.describe()} ({pit.does}), "
                            "a roll on the pit crew table (a space gained or lost in the pit lane)",
                            f"SPEED {pit.speed}\nPUSH YES",
                        )
                    )
            return tuple(found)
        found = []
        tyre = self._pit_tyre(state, player)
        for choice in options.choices:
            reach = choice.cheapest
            if reach is None:
                continue
            lines = [
                f"SPEED {choice.speed}",
                *([f"PATH {reach.lanes}"] if reach.path else []),
                *(["PUSH YES"] if choice.push else []),
            ]
            found.append(OneLineOrder(f"{choice.speed} mph: {reach.describe()}", "\n".join(lines)))
            arrows = [r for r in choice.reaches if state.track.space(r.space).pit_arrow]
            into = min(arrows, key=lambda r: (r.cost.rank, r.wear, len(r.rolls)), default=None)
            if tyre is not None and into is not None and into.cost not in (Cost.SPIN, Cost.CRASH):
                pit_lines = [
                    f"SPEED {choice.speed}",
                    *([f"PATH {into.lanes}"] if into.path else []),
                    *(["PUSH YES"] if choice.push else []),
                    f"PIT {tyre.value}",
                ]
                found.append(
                    OneLineOrder(
                        f"{choice.speed} mph into the pits at {into.space} for {tyre.value} tyres: {into.describe()}",
                        "\n".join(pit_lines),
                    )
                )
        return tuple(found)

    @staticmethod
    def _pit_tyre(state: RaceState, player: PlayerId) -> Tyre | None:
        """The compound a stop would fit: the one the car has not run yet (P4), else the other
        one; None where the track has no pits or the car is not on it."""
        car = state.car(player)
        if state.track.pit is None or not car.on_track:
            return None
        return next((t for t in Tyre if t not in car.tyres_used), next(t for t in Tyre if t is not car.tyres))

    def order_help(self, state: RaceState, player: PlayerId) -> str:
        return parse.order_help(state, player)

    def robot_orders(
        self,
        state: RaceState,
        player: PlayerId,
        rng: random.Random,
        level: RobotLevel = RobotLevel.NORMAL,
        robots: frozenset[PlayerId] | None = None,
    ) -> tuple[Order, ...]:
        # which seats are robots does not change how this game's robot drives
        return robot.robot_orders(state, player, rng, level)

    # -- reading the state ------------------------------------------------------------
    def is_finished(self, state: RaceState) -> bool:
        return state.phase is Phase.FINISHED

    def stall(self, state: RaceState) -> Stall | None:
        """A car standing still (NOTES.md, "Stopped cars"): the GM is told when a car has
        ended `STOPPED_REPORT` race turns in a row without moving (a silent car at 0 mph under
        `plot_default=mps` holds 0 mph for ever), and each turn after while it stands, with
        the SET that gives it a speed to hold; at `STOPPED_TURNS` it retires by itself."""
        if state.phase is not Phase.RACE:
            return None
        standing = [c for c in state.cars if c.status is Status.RACING and c.standing >= STOPPED_REPORT]
        if not standing:
            return None
        car = max(standing, key=lambda c: (c.standing, -state.cars.index(c)))
        left = STOPPED_TURNS - car.standing
        return Stall(
            turns=car.standing,
            reason=(
                f"{car.player} has not moved for {car.standing} turns in a row (at {car.speed} mph). A car that "
                f"does not move for {STOPPED_TURNS} turns in a row retires: {car.player} will, if it stands "
                f"still {left} more turn{'s' if left != 1 else ''}."
            ),
            figure="speed",
            value=str(STOP_RESCUE_SPEED),
            ends=(
                f"gives {car.player} a speed of {STOP_RESCUE_SPEED} mph, which a plot of MPS then holds, so the "
                "car moves again"
            ),
            seat=car.player,
        )

    def players(self, state: RaceState) -> tuple[PlayerId, ...]:
        return tuple(c.player for c in state.cars if c.note != "dropped")

    def standings(self, state: RaceState) -> Standings:
        return view.standings(state)

    def figures(self, state: RaceState, player: PlayerId) -> Figures:
        return view.figures(state, state.car(player))

    def view(
        self, state: RaceState, resolution: Resolution[RaceState] | None, viewer: PlayerId | Viewer
    ) -> SpeedCircuitView:
        return view.build_view(state, resolution, viewer)

    def player_view(self, state: RaceState, public: View, player: PlayerId) -> SpeedCircuitView:
        if not isinstance(public, SpeedCircuitView):
            raise TypeError(f"not a Speed Circuit view: {type(public).__name__}")
        return view.player_view(state, public, player)

    # -- GM overrides -----------------------------------------------------------------
    def set_figure(self, state: RaceState, player: PlayerId, name: str, value: str) -> RaceState:
        key = name.strip().lower()
        try:
            car = state.car(player)
        except KeyError:
            raise FigureError(f"no player {_shown(player)}") from None
        if key not in FIGURE_RANGES and key != "tyres":
            raise FigureError(f"unknown figure {_shown(name)}; figures: {', '.join(FIGURES)}")
        if key == "tyres":
            if value.strip().upper() not in ("PRIME", "OPTION"):
                raise FigureError(f"tyres is PRIME or OPTION, not {_shown(value)}")
            return state.with_car(replace(car, tyres=Tyre(value.strip().upper())))
        high, step = FIGURE_RANGES[key]
        legal = f"{key} must be a whole number from 0 to {high}" + (f", in steps of {step}" if step > 1 else "")
        text = value.strip()
        # What a GM typed: ASCII digits only, and few of them, before int() sees them.
        if not (text.isascii() and text.isdigit() and len(text) <= len(str(high))):
            raise FigureError(f"{legal}, not {_shown(value)}")
        number = int(text)
        if number > high or number % step:
            raise FigureError(f"{legal}, not {number}")
        changes: dict[str, Any] = {key: number}
        return state.with_car(replace(car, **changes))

    def drop_player(self, state: RaceState, player: PlayerId) -> RaceState:
        car = state.car(player)
        dropped = replace(
            car,
            status=Status.OUT,
            space=None,
            speed=0,
            note="dropped",
            out_turn=state.race_turn,
            pit=None,
            off_track=0,
            overflow=False,
        )
        new = state.with_car(dropped)
        if new.phase is Phase.RACE and not new.racing():
            new = replace(new, phase=Phase.FINISHED)
        return new

    # -- storage ----------------------------------------------------------------------
    def dump_state(self, state: RaceState) -> dict[str, Any]:
        return storage.dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> RaceState:
        return storage.load_state(data)


STOP_RESCUE_SPEED = 20
"""The speed the stall report's SET gives a stopped car (the lowest that moves it)."""

# The figures a GM may SET and their legal ranges (high, step), from speed-circuit.md:
# * wear: "Prime tyres and Option tyres 3/6/9/12/15 wear each (= laps x 1..5)", P3 "Wear per
#   set = laps x level (1..5)", and laps are 1..10 (the `laps` option): at most 50;
# * skill: "Driver Skill 0/3/6/9/12 chips (= laps x 0..4)": at most 10 x 4 = 40;
# * acc, dec: "Accel n.a./20/40/60/80, Decel n.a./20/40/60/80" (damage takes 20 off);
# * top: "Top 120/140/160/180/200"; start: "Start 20/40/60/100/120";
# * speed: "a change in multiples of 20 mph ... never above Top Speed", exceeded "by +20
#   only" with a test: at most 200 + 20 = 220.
# Ratings and speeds are multiples of 20; 0 is allowed for all (a damaged or stopped car).
FIGURE_RANGES: dict[str, tuple[int, int]] = {
    "wear": (50, 1),
    "skill": (40, 1),
    "speed": (220, 20),
    "acc": (80, 20),
    "dec": (80, 20),
    "top": (200, 20),
    "start": (120, 20),
}
FIGURES = ("wear", "skill", "speed", "acc", "dec", "top", "start", "tyres")


def _first_speed(plot: str) -> SpeedOrder | None:
    """The speed a plot asks for: its first SPEED line that reads (the first one counts)."""
    for line in plot.splitlines():
        if not line.split("#", 1)[0].strip():
            continue
        try:
            order = parse.parse_line(line.strip())
        except InvalidOrderError:
            continue
        if isinstance(order, SpeedOrder):
            return order
    return None


def _shown(text: str) -> str:
    """What the GM wrote, quoted on one line and cut to 40 characters, for a FigureError."""
    cut = text.strip()
    return repr(cut[:40]) + ("..." if len(cut) > 40 else "")


GAME: Game[RaceState, Order] = SpeedCircuit()
