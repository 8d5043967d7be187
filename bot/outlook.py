"""A turn's outlook: for each seat the turn expects orders from, the orders the deadline will
use and where they come from -- on file (the seat's mail, the GM's ORDER for it, a robot's),
the GM's plot, or the game's default -- and the order in which the final sets arrived.

This is the one place that says, seat by seat, which orders a turn is resolved with: the
deadline (`bot.games.deadline`), PREVIEW, the results letters (who was defaulted, and how) and
the reminders all read it from here; `what_counts` says it for one seat before the deadline,
each missing part with the default that fills it (confirmations, ORDERS, refusals, reminders).
`timing` says when the turn resolves: its deadline as it stands, its closing time, whether it is
paused or resolved, whether it resolves as soon as the orders are in; the deadline's own test
(`bot.games.turns.is_due`) and every letter read it (tests/test_claims_from_outlook.py). It
reads nothing from the database: the caller hands it the turn's submissions
(`bot.store.turn_submissions`). Who has orders on file (`on_file`, `Outlook.status`,
`Outlook.by_status`, `Outlook.defaulted`), whose WAIT holds the turn (`holds_turn`,
`Outlook.held`) and which seats have a GM plot (`plotted`) are read here too: the digest,
STATUS and the GM's sheet list them from an `Outlook`, never from the rows.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot import store
from bot.clock import as_utc
from bot.models import Game, GameStatus, Player, Seat, Turn
from bot.store import ROBOT_SOURCE
from rules.api import AnyGame, GameOrder, GameState, Resolution

log = logging.getLogger("flagman.games")


class Source(enum.StrEnum):
    """Where a seat's orders for the deadline come from (the defaults are filed with the
    submission source of the same name)."""

    ON_FILE = "on file"  # sent by the seat (mail), for it by the GM (ORDER), or its robot's
    PLOT = "plot"  # nothing on file: the GM's plot, legal now
    DEFAULT = "default"  # nothing on file and no plot that stands: the game's default


class Status(enum.Enum):
    """How far a seat's orders of the open turn are in: the one reading early resolution, STATUS,
    the digest and `game show` share (`Outlook.status`, `seat_status`)."""

    NONE = "none"  # nothing of the player's on file (the default would be used)
    INCOMPLETE = "incomplete"  # sent, but the set lacks a part: the turn waits for it or the deadline
    COMPLETE = "complete"


def on_file(rules: AnyGame, state: GameState, seat: Seat, subs: Sequence[store.Filed]) -> tuple[GameOrder, ...] | None:
    """The seat's orders on file, from its submissions, as the deadline counts them (None:
    nothing on file, so the GM's plot or the game's default): what every letter says the seat
    has on file is read here (`store.orders_on_file` folds them)."""
    return store.orders_on_file(rules, state, seat, subs)


def holds_turn(subs: Sequence[store.Filed]) -> bool:
    """Whether the seat's WAIT holds the turn to its deadline (`store.holds`): no early resolution."""
    return store.holds(subs)


def held_by(rules: AnyGame, state: GameState, waits: Mapping[str, Sequence[store.Filed]]) -> tuple[str, ...]:
    """The seats the turn expects (`expected_players`) whose WAIT holds it to its deadline
    (`holds_turn`), in seat-name order; `waits`: each seat's submissions by seat name (its WAIT
    and NOWAIT among them, `store.turn_waits`)."""
    return tuple(name for name in sorted(rules.expected_players(state)) if holds_turn(waits.get(name, ())))


def resolves_early(when: Timing, held: Sequence[str]) -> bool:
    """Whether the turn resolves as soon as every person's set is complete: the game's early
    resolution, the game not paused, the turn open, and no seat's WAIT holding it (`held`)."""
    return when.early and not when.paused and not when.resolved and not held


def _complete(rules: AnyGame, state: GameState, seat: str, orders: Sequence[GameOrder]) -> bool:
    """Whether `orders`, a seat's set on file, is a complete set (its canonical text parsed)."""
    return rules.parse_orders(state, seat, rules.format_orders(orders)).complete


def seat_status(rules: AnyGame, state: GameState, seat: Seat, subs: Sequence[store.Filed]) -> Status:
    """`Outlook.status` of one seat, from its submissions (the confirmations read it for the
    seat that wrote)."""
    filed = on_file(rules, state, seat, subs)
    if filed is None:
        return Status.NONE
    return Status.COMPLETE if _complete(rules, state, seat.name, filed) else Status.INCOMPLETE


@dataclass(frozen=True, slots=True)
class SeatOutlook:
    """One expected seat: the orders the deadline uses for it, and where they come from."""

    seat: str
    orders: tuple[GameOrder, ...]
    source: Source


@dataclass(frozen=True, slots=True)
class Outlook:
    """Every expected seat's `SeatOutlook`, by seat name, and the order in which the seats
    whose orders were sent sent their final ones (`submitted`)."""

    seats: tuple[SeatOutlook, ...]
    # What `status`, `held` and `submitted` read, when asked (the deadline asks only for
    # `submitted`; early resolution and the letters never do: no sort they do not need).
    rules: AnyGame | None = field(default=None, compare=False, repr=False)
    state: GameState | None = field(default=None, compare=False, repr=False)
    game: Game | None = field(default=None, compare=False, repr=False)
    subs: store.BySeat | None = field(default=None, compare=False, repr=False)

    @property
    def orders(self) -> dict[str, tuple[GameOrder, ...]]:
        return {s.seat: s.orders for s in self.seats}

    @property
    def submitted(self) -> tuple[str, ...]:
        """The order in which the seats whose orders were sent sent their final ones
        (`submission_order`: the resolution's `submitted`)."""
        if self.rules is None or self.state is None or self.game is None:
            return ()
        return submission_order(self.rules, self.game, self.state, self.subs or {})

    @property
    def defaulted(self) -> tuple[str, ...]:
        return tuple(s.seat for s in self.seats if s.source is not Source.ON_FILE)

    def status(self, seat: str) -> Status:
        """How far `seat`'s own orders are in (NONE for a seat the turn does not expect): its set
        on file, as the deadline reads it (`seats`), complete or not (`seat_status`)."""
        found = next((s for s in self.seats if s.seat == seat), None)
        if found is None or found.source is not Source.ON_FILE or self.rules is None or self.state is None:
            return Status.NONE
        return Status.COMPLETE if _complete(self.rules, self.state, seat, found.orders) else Status.INCOMPLETE

    @property
    def held(self) -> tuple[str, ...]:
        """The expected seats whose WAIT holds the turn to its deadline (`held_by`), by seat
        name: a seat's WAIT counts while the turn expects its orders (a seat dropped since holds
        it no more)."""
        if self.rules is None or self.state is None or self.game is None:
            return ()
        subs = self.subs or {}
        by_name = {}
        for s in self.seats:
            row = store.seat_named(self.game, s.seat)
            if row is not None:
                by_name[s.seat] = subs.get(row.id, [])
        return held_by(self.rules, self.state, by_name)

    def holding(self, when: Timing) -> tuple[str, ...]:
        """The seats whose WAIT keeps the turn from resolving early where it otherwise would
        (`held`; none where the game does not resolve early, is paused or the turn resolved):
        what STATUS and the GM's block say holds the turn."""
        return self.held if when.early and not when.paused and not when.resolved else ()

    def resolves_early(self, when: Timing) -> bool:
        """Whether the turn resolves as soon as every person's set is complete: the game's early
        resolution (`Timing.early`), the game not paused, the turn open, and no seat's WAIT
        holding it (`held`). The tick's early resolution (`bot.games.turns.is_due`), STATUS, the
        reminders and the confirmations read it here."""
        return resolves_early(when, self.held)

    @property
    def all_in(self) -> bool:
        """Whether every expected seat's set is complete (`status`): with `resolves_early`, the
        tick's early resolution."""
        return all(self.status(s.seat) is Status.COMPLETE for s in self.seats)

    @property
    def by_status(self) -> dict[Status, tuple[str, ...]]:
        """The expected seats by `status`, in seat-name order: what the GM's digest and STATUS
        list as "Orders on file", "Incomplete" and "No orders yet"."""
        found: dict[Status, list[str]] = {status: [] for status in Status}
        for s in self.seats:
            found[self.status(s.seat)].append(s.seat)
        return {status: tuple(names) for status, names in found.items()}

    def waits_for(self, when: Timing) -> tuple[str, ...] | None:
        """The seats whose complete orders the turn still waits for before it resolves early
        (`bot.games.turns.is_due`: `resolves_early`, a person among the seats it expects, every
        set complete); None where nothing but the deadline (or the GM) resolves it: early
        resolution off, the game paused, a WAIT holding it, a practice race's pace, or only
        robots to order."""
        robots = {s.name for s in self.game.seats if s.robot} if self.game is not None else set()
        if not self.resolves_early(when) or when.practice:
            return None
        if all(s.seat in robots for s in self.seats):
            return None
        return tuple(s.seat for s in self.seats if self.status(s.seat) is not Status.COMPLETE)

    @property
    def filled(self) -> dict[str, str]:
        """A defaulted seat -> how its orders were filled in ("plot" or "default")."""
        return {s.seat: s.source.value for s in self.seats if s.source is not Source.ON_FILE}


@dataclass(frozen=True, slots=True)
class Timing:
    """When a turn resolves, as the deadline (`bot.games.turns.is_due`) reads it and every letter
    says it: its deadline as it stands (`due`; None: the turn has none, it waits for the GM's
    call or, in a practice race, for its person's orders), when the deadline resolves it
    (`closes`: `due` and the game's grace), whether it is paused (no deadline runs: the GM's
    RESUME sets one), resolved, of a practice race, and whether the game resolves a turn as
    soon as every person's orders are in (`early`: the game's early resolution; whether this
    turn does, a seat's WAIT aside, is `Outlook.resolves_early`)."""

    due: datetime | None = None
    closes: datetime | None = None
    paused: bool = False
    resolved: bool = False
    practice: bool = False
    early: bool = False

    @property
    def running(self) -> datetime | None:
        """The deadline that runs: `due`, unless the game is paused or the turn resolved."""
        return None if self.paused or self.resolved else self.due

    @property
    def waits_for_the_set(self) -> bool:
        """Whether a seat's set that lacks a part waits for it, never filled by the game's
        default: a practice race's turn, which has no deadline (`bot.games.turns.is_due` resolves
        it on a complete set only; left alone, the race is closed, `bot.games.practice`)."""
        return self.practice and self.due is None


def timing(game: Game, turn: Turn | None) -> Timing:
    """`turn`'s `Timing` in `game` (no turn: none, as the game stands)."""
    paused = game.status == GameStatus.PAUSED
    if turn is None:
        return Timing(paused=paused, practice=bool(game.practice), early=bool(game.early_resolution))
    due = as_utc(turn.deadline) if turn.deadline is not None else None
    return Timing(
        due,
        due + timedelta(minutes=game.grace_minutes or 0) if due is not None else None,
        paused,
        turn.resolved_at is not None,
        bool(game.practice),
        bool(game.early_resolution),
    )


def nmr_default(rules: AnyGame, state: GameState, seat: Seat) -> tuple[tuple[GameOrder, ...], Source]:
    """What the seat gets if nothing arrives: the GM plot when it is legal now, else the game's default."""
    if seat.gm_plot:
        plotted = rules.plot_orders(state, seat.name, seat.gm_plot)
        if plotted is not None:
            return plotted, Source.PLOT
        # Expected, not a fault: a plot stands "while it is legal", and one the GM set for the
        # turns that allow it (CRUISE at the start) waits for them; the GM was told.
        log.debug(
            "GM plot for %s cannot stand this turn (%s); using the game's default",
            seat.name,
            "; ".join(p.reason for p in rules.parse_orders(state, seat.name, seat.gm_plot).problems),
        )
    return rules.default_orders(state, seat.name), Source.DEFAULT


def plotted(game: Game) -> tuple[str, ...]:
    """The game's seats in play with a GM plot set (PLOT): each stands for its seat's default
    while it is legal (`nmr_default`)."""
    return tuple(s.name for s in store.active_seats(game) if s.gm_plot)


def on_vacation(player: Player, moment: datetime) -> bool:
    """Whether `moment` falls on a day of the player's VACATION (days in their zone, both included)."""
    if player.vacation_from is None or player.vacation_to is None:
        return False
    day = as_utc(moment).astimezone(ZoneInfo(player.timezone)).date()
    return player.vacation_from <= day <= player.vacation_to


def submission_order(rules: AnyGame, game: Game, state: GameState, subs: store.BySeat) -> tuple[str, ...]:
    """The expected seats whose orders on file were sent (by mail, or the GM's ORDER), in the
    order their final sets arrived: each seat's last such submission, by the time it was
    received, then by id (`Game.resolve`'s `submitted`; stored with the turn).

    A robot's set (filed as the turn opens) counts as submitted at the deadline: after every
    set a person (or the GM, for a seat) sent, robots among themselves in the order they were
    filed, so a robot never wins a "submitted first" tie (SpeedPhreakz, S16) by being quick."""
    arrived: dict[str, tuple[bool, datetime, int]] = {}
    for name in rules.expected_players(state):
        seat = store.seat_named(game, name)
        sent = store.sent(subs.get(seat.id, ())) if seat is not None else []
        if sent:
            last = max(sent, key=lambda s: (as_utc(s.received_at), s.id))
            arrived[name] = (last.source == ROBOT_SOURCE, as_utc(last.received_at), last.id)
    return tuple(sorted(arrived, key=lambda name: arrived[name]))


def of_turn(game: Game, rules: AnyGame, state: GameState, subs: store.BySeat) -> Outlook:
    """Each expected seat's orders for the deadline and where they come from, by seat name;
    `subs`: the turn's submissions (`store.turn_submissions`)."""
    seats: list[SeatOutlook] = []
    for name in sorted(rules.expected_players(state)):
        seat = store.seat_named(game, name)
        filed = on_file(rules, state, seat, subs.get(seat.id, [])) if seat else None
        if filed is not None:
            seats.append(SeatOutlook(name, filed, Source.ON_FILE))
        elif seat is not None:
            seats.append(SeatOutlook(name, *nmr_default(rules, state, seat)))
        else:
            seats.append(SeatOutlook(name, rules.default_orders(state, name), Source.DEFAULT))
    return Outlook(tuple(seats), rules, state, game, subs)


# -- what counts for one seat, said before the deadline -------------------------


@dataclass(frozen=True, slots=True)
class Counts:
    """The orders that count for a seat if nothing else arrives, as the mails say it: the
    orders and their text (canonical lines), where they come from, the lines the game's default
    adds to the seat's own set (`filled`: `Game.filled_orders`, the very fill its resolution
    makes), and the parts still missing that a later turn's resolution fills (`later`, in the
    game's words: SpeedPhreakz's next round, which cannot be sent once this turn is resolved).

    The deadline resolves with the set on file as it is (`of_turn`); a property of the rules
    (tests/rules/test_missing_orders.py) proves the filled set gives the same resolution, so
    what a mail says will be used is what is used."""

    orders: tuple[GameOrder, ...]
    text: str
    source: Source
    filled: tuple[str, ...] = ()
    later: tuple[str, ...] = ()
    game_default: str = ""
    """Where the GM's plot counts (`Source.PLOT`): the game's own default it stands in for, as
    text, when that differs (a mail names it beside the plot, once: "USE 2, the GM's plot (the
    game's own default would be USE 3)"); else empty."""


def what_counts(rules: AnyGame, state: GameState, seat: Seat, on_file: Sequence[GameOrder] | None) -> Counts:
    """What counts for `seat` at the deadline if nothing else arrives, `on_file` being its set
    on file (`store.orders_on_file`; None: nothing on file)."""
    if on_file is None:
        orders, source = nmr_default(rules, state, seat)
        text = rules.format_orders(orders)
        game_default = rules.format_orders(rules.default_orders(state, seat.name)) if source is Source.PLOT else ""
        return Counts(orders, text, source, game_default="" if game_default == text else game_default)
    filled = rules.filled_orders(state, seat.name, on_file)
    own = set(rules.format_orders(on_file).splitlines())
    text = rules.format_orders(filled)
    added = tuple(line for line in text.splitlines() if line not in own)
    return Counts(filled, text, Source.ON_FILE, added, rules.missing_orders(state, seat.name, filled))


@dataclass(frozen=True, slots=True)
class Outcome:
    """A resolution as the shell stores it, with who was defaulted and the order in which
    the others' final orders arrived (`bot.outlook.submission_order`)."""

    resolution: Resolution[GameState]
    orders: dict[str, tuple[GameOrder, ...]]
    defaulted: tuple[str, ...]
    submitted: tuple[str, ...] = ()
    seed: int = 0  # the seed the dice used (bot.dice.seed_for)
    filled: Mapping[str, str] = field(default_factory=dict)  # a defaulted seat -> "plot" (the GM's) or "default"
    used: Mapping[str, str] = field(default_factory=dict)  # each seat's orders as the dice digest them (bot.dice.used)
    secret: str | None = None  # the secret the dice came from (PREVIEW: a throwaway, never the turn's)

    @property
    def given_the_default(self) -> tuple[str, ...]:
        """The defaulted seats whose orders the game's default filled in."""
        return tuple(seat for seat in self.defaulted if self.filled.get(seat) != "plot")

    @property
    def given_the_plot(self) -> tuple[str, ...]:
        """The defaulted seats whose orders the GM's plot filled in (not "defaulted" in a letter)."""
        return tuple(seat for seat in self.defaulted if self.filled.get(seat) == "plot")
