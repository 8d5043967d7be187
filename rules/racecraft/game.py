"""Racecraft behind the `rules.api.Game` protocol: `GAME`, for `Race` states and `Order` values."""

from __future__ import annotations

import random
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
from rules.racecraft import parse, resolve, robot, storage, view
from rules.racecraft.model import (
    DEFAULT_TURNS,
    MAX_EP,
    MAX_PLAYERS,
    MAX_TURNS,
    MIN_PLAYERS,
    MIN_TURNS,
    PLAYER_ID,
    Order,
    Race,
    Runner,
    Stage,
    nmr_default,
)
from rules.racecraft.view import RacecraftView

OPTIONS: dict[str, str] = {
    "turns": f"number of turns, {MIN_TURNS} to {MAX_TURNS} (default {DEFAULT_TURNS}): "
    "turn 1 the start, the last the final sprint",
}


def _turns_option(options: Mapping[str, str]) -> int:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise OptionError(f"unknown option {unknown[0]!r}; Racecraft has: {', '.join(sorted(OPTIONS))}")
    raw = options.get("turns")
    if raw is None:
        return DEFAULT_TURNS
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or not MIN_TURNS <= int(text) <= MAX_TURNS:
        raise OptionError(f"turns must be a whole number from {MIN_TURNS} to {MAX_TURNS}, not {raw!r}")
    return int(text)


class Racecraft:
    """The game: every method pure, no chance at all (the rng is accepted and unused)."""

    name: ClassVar[str] = "racecraft"
    title: ClassVar[str] = view.TITLE
    min_players: ClassVar[int] = MIN_PLAYERS
    max_players: ClassVar[int] = MAX_PLAYERS
    early_resolution: ClassVar[bool] = True
    honours: ClassVar[tuple[str, ...]] = ()  # the text defines no pole, lap leader or fastest lap
    later_replaces: ClassVar[bool] = True
    chance: ClassVar[bool] = False  # no dice at all (racecraft.md)

    # -- set-up -----------------------------------------------------------------------
    def new_game(self, players: Sequence[PlayerId], options: Mapping[str, str], rng: random.Random) -> Race:
        turns = _turns_option(options)
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
            raise ValueError(f"Racecraft is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {len(players)}")
        for player in players:
            if not isinstance(player, str) or not PLAYER_ID.fullmatch(player):
                raise ValueError(f"bad player name {player!r}: use lower-case letters, digits, - and _")
        if len(set(players)) != len(players):
            raise ValueError("a player is listed twice")
        runners = tuple(Runner(name, MAX_EP) for name in players)
        # Before the start everyone is level.
        return Race(runners=runners, positions=(tuple(sorted(players)),), turns=turns, turn=1)

    def option_help(self) -> str:
        return "\n".join(f"{name}: {text}" for name, text in OPTIONS.items())

    def rules_summary(self) -> str:
        return (
            "Racecraft is a middle-distance track race for 5 to 8 runners. Everyone starts with "
            "10 energy points (EP), and the race lasts a few turns (usually 5).\n\n"
            "Turn 1 is the start: send the number of EP you use; the runners line up by EP used, "
            "most first, and equal EP share a position.\n\n"
            "On the tactical turns send one of: USE n (spend n EP; you pass the position ahead if "
            "n beats everyone in it), CRUISE (spend nothing; your score is the average of those "
            "who did not cruise; +1 EP below 10) or OVERTAKE (1 EP: you pass the position ahead, "
            "unless someone behind overtakes you first). Moves are worked from the last position "
            "forward, and nobody gains more than one position a turn. After each tactical turn the "
            "2nd and 3rd places gain 1 EP and the 1st and last places lose 1.\n\n"
            "The last turn is the final sprint: no orders; everyone uses all their remaining EP. "
            "The game's own default for a runner who sends nothing (where the GM has set no plot): "
            "half their EP, rounded down."
        )

    # -- the turn ---------------------------------------------------------------------
    def orders_label(self, state: Race, player: PlayerId) -> str:
        return self.turn_label(state)

    def turn_label(self, state: Race) -> str:
        return view.turn_label(state)

    def expected_players(self, state: Race) -> frozenset[PlayerId]:
        if state.stage in (Stage.START, Stage.TACTICAL):
            return frozenset(state.names())
        return frozenset()

    def parse_orders(self, state: Race, player: PlayerId, text: str) -> Parsed[Order]:
        return parse.parse_mail(state, player, text)

    def format_orders(self, orders: Sequence[Order]) -> str:
        return parse.format_orders(orders)

    def merge_orders(self, earlier: Sequence[Order], later: Sequence[Order]) -> tuple[Order, ...]:
        # One order per turn: a later valid mail replaces the earlier (racecraft.md, Orders).
        return tuple(later) if later else tuple(earlier)

    def plot_orders(self, state: Race, player: PlayerId, plot: str) -> tuple[Order, ...] | None:
        parsed = self.parse_orders(state, player, plot)
        return parsed.orders if parsed.orders and parsed.ok else None

    def default_orders(self, state: Race, player: PlayerId) -> tuple[Order, ...]:
        if state.stage not in (Stage.START, Stage.TACTICAL) or player not in state.names():
            return ()
        return (nmr_default(state.runner(player).ep),)

    def resolve(
        self,
        state: Race,
        orders: Mapping[PlayerId, Sequence[Order]],
        rng: random.Random,
        submitted: Sequence[PlayerId] = (),
    ) -> Resolution[Race]:
        # Orders are simultaneous and ties share a position: who submitted first never counts.
        return resolve.resolve_turn(state, orders)

    def is_complete(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> bool:
        return parse.is_complete(state, player, orders)

    def missing_orders(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
        return parse.missing_orders(state, player, orders)

    def filled_orders(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[Order, ...]:
        # One order a turn: a set is empty or full; an empty one gets the NMR default.
        return tuple(orders) if self.is_complete(state, player, orders) else self.default_orders(state, player)

    def normal_orders(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[Order, ...]:
        # One order a turn, none of it a default restated: the filled set is the normal form.
        return self.filled_orders(state, player, orders)

    def consequences(self, state: Race, player: PlayerId, orders: Sequence[Order]) -> tuple[str, ...]:
        # What USE n spends is in the orders themselves (EP); the dice of the sprint are not foreseen.
        return ()

    def taken(
        self, state: Race, player: PlayerId, orders: Sequence[Order], others: Mapping[PlayerId, Sequence[Order]]
    ) -> tuple[tuple[Order, str], ...]:
        return ()  # no choice only one seat may have

    def one_line_orders(self, state: Race, player: PlayerId) -> tuple[OneLineOrder, ...]:
        return parse.one_line_orders(state, player)

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
        # EP are public in Racecraft: the robot reads the race as the public table shows it.
        # which seats are robots does not change how this game's robot drives
        return robot.robot_orders(state, player, rng, level)

    # -- reading the state ------------------------------------------------------------
    def is_finished(self, state: Race) -> bool:
        return state.stage is Stage.FINISHED

    def stall(self, state: Race) -> Stall | None:
        return None  # the race ends after its last turn, whatever is ordered

    def players(self, state: Race) -> tuple[PlayerId, ...]:
        return state.names()

    def standings(self, state: Race) -> Standings:
        return state.positions

    def figures(self, state: Race, player: PlayerId) -> Figures:
        return {"ep": state.runner(player).ep}

    def view(self, state: Race, resolution: Resolution[Race] | None, viewer: PlayerId | Viewer) -> RacecraftView:
        return view.view(state, resolution, viewer)

    def player_view(self, state: Race, public: View, player: PlayerId) -> RacecraftView:
        if not isinstance(public, RacecraftView):
            raise TypeError(f"not a Racecraft view: {type(public).__name__}")
        return view.player_view(state, public, player)

    # -- GM overrides -----------------------------------------------------------------
    def set_figure(self, state: Race, player: PlayerId, name: str, value: str) -> Race:
        # racecraft.md, "Set-up": "EP are whole numbers, 0..10" (MAX_EP); "EP never go above
        # 10 or below 0". The value is what a GM typed: the digits are checked,
        # ASCII only and few of them, before int() ever sees them.
        if player not in state.names():
            raise FigureError(f"{_shown(player)} is not running in this race")
        if name.strip().lower() != "ep":
            raise FigureError(f"unknown figure {_shown(name)}; Racecraft has: ep (0 to {MAX_EP})")
        text = value.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= len(str(MAX_EP))) or int(text) > MAX_EP:
            raise FigureError(f"ep must be a whole number from 0 to {MAX_EP}, not {_shown(value)}")
        return resolve.set_ep(state, player, int(text))

    def drop_player(self, state: Race, player: PlayerId) -> Race:
        # The rule chosen is in resolve.drop_runner: removed from the race and the standings.
        return resolve.drop_runner(state, player)

    # -- storage ----------------------------------------------------------------------
    def dump_state(self, state: Race) -> dict[str, Any]:
        return storage.dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> Race:
        return storage.load_state(data)


def _shown(text: str) -> str:
    """What the GM wrote, quoted on one line and cut to 40 characters, for a FigureError."""
    cut = text.strip()
    return repr(cut[:40]) + ("..." if len(cut) > 40 else "")


GAME: Game[Race, Order] = Racecraft()
