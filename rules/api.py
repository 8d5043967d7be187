"""The contract between the shell (`bot/`) and every game (`rules/<game>/`).

A game is a set of pure functions of (state, orders, rng). The shell owns the clock, the
database and the mail; it stores each turn's state (through `dump_state`), the orders as
canonical text (through `format_orders`) and the seed of the turn's rng, so that any turn
can be replayed exactly: ``resolve(load_state(s), {p: parse_orders(...).orders}, Random(seed))``.

Turns, as the shell sees them
-----------------------------
The shell numbers turns 1, 2, 3, ... and opens one at a time. What a turn *means* is the
game's business, exposed through `turn_label`:

* Racecraft: turn 1 is the start, then tactical turns, then the final sprint (which needs no
  orders: `expected_players` is empty and the shell resolves it at once).
* Speed Circuit: set-up turns (car design, qualifying) come first, then race turns.
* SpeedPhreakz: orders run ahead of the round being resolved. Shell turn *t* collects the
  program for round *t+1* (and at turn 1 the set-up plus rounds 1 and 2) and resolves round
  *t*. Queued programs live in the game state; one mail may carry programs for several
  rounds, and `merge_orders` keeps a later program for a round from wiping out another
  round's. The shell never needs to know.

Views
-----
`Game.view` returns a typed value: a frozen dataclass, one class per game, each a subclass of
`View`. The base holds what every game provides (the shell's common templates use only it):

* ``title`` (str): the game's printed name; ``turn_label`` (str): as `turn_label`;
* ``finished`` (bool);
* ``standings``: `Placing` values (``place``, ``players``), front first;
* ``columns``: the headings of the public table (e.g. ``("EP", ...)``);
* ``table``: `TableRow` values (``player``, ``place``, ``cells``) in race order;
* ``events``: the public report of the turn just resolved (empty before any);
* ``private``: lines only this viewer may see (always empty for PUBLIC/GM);
* ``summary``: one line saying where the race stands (``"Roger leads by one place"``).

Each game's class adds the geometry its picture is drawn from (Speed Circuit: the track as
coordinates and where each car is; SpeedPhreakz: the grid, its terrain and the cars;
Racecraft: every runner's place and EP), so a picture never reads text back into shapes.
Templates read ``view.x``; a `View` is also a read-only mapping of its fields (``view["x"]``,
``view.get("x")``, ``dict(view)``), for shell code written when views were dicts.

Robots
------
Every game has a robot driver (`Game.robot_orders`): the orders a robot gives for a seat in
the open turn, as a player there could send them, from what a player at that seat may see.
They can be worked out as soon as a turn opens, from the state it opened with and the rng
`robot_rng(turn.seed, seat)`: a stream of its own for each seat and turn, derived from the
turn's stored seed, so a robot's orders are the same whenever they are worked out (and in a
replay) and two robots in one turn draw differently. The shell tells it which seats are
driven by robots (public: the standings show "name (robot)"), and files its orders as that
seat's orders, like any player's.

The shell's side
----------------
The shell never looks inside a state or an order: it only hands them back to the game that
made them. It holds them as `GameState` and `GameOrder`, opaque types (a `NewType` of
``object``: nothing can be read off one, and no other value passes for one), and a game as
`AnyGame` (``Game[GameState, GameOrder]``): some game, its own state and order types unknown.
`rules.find_game` is the one place that says so (a `cast`, since each game has types of its
own). The types do not tell one game's states from another's: the shell keeps each state
with the game it came from (its `load_state`, or what its methods returned).

Errors
------
::

    ValueError
     +-- OrderError            an order cannot be accepted (raised by helpers; parse_orders
     |    |                    reports them as OrderProblem values instead of raising)
     |    +-- InvalidOrderError   does not parse (syntax, context-free)
     |    +-- IllegalOrderError   parses, but is not allowed in this state
     +-- OptionError           a game option is unknown or out of range
     +-- FigureError           SET <field> <value> names an unknown field or a bad value
     +-- StateError            stored state JSON cannot be read (unknown version, bad shape)
"""

from __future__ import annotations

import enum
import functools
import hashlib
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Generic, NewType, Protocol, TypeAlias, TypeVar, runtime_checkable

PlayerId = str
"""A seat's short name within a game (e.g. ``"roger"``): lower-case letters, digits, ``-`` and ``_``."""

Standings = tuple[tuple[PlayerId, ...], ...]
"""Positions front first; each position lists the players sharing it (sorted by name)."""

JsonScalar = str | int | float | bool | None
Figures = Mapping[str, JsonScalar]
"""A player's figures by name, e.g. ``{"ep": 7}``; JSON-ready."""

GameState = NewType("GameState", object)
"""The shell's view of a game's state: opaque. Only the game's own methods look inside; the
shell loads it (`Game.load_state`), hands it back, and stores what `Game.dump_state` makes of it."""

GameOrder = NewType("GameOrder", object)
"""The shell's view of one of a game's orders: opaque. Only the game's own methods look inside;
the shell gets them from `Game.parse_orders` (and the like), hands them back, and stores them as
`Game.format_orders` writes them."""


class OrderError(ValueError):
    """An order that cannot be accepted; `reason` is fit to mail back as is."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidOrderError(OrderError):
    """The line does not parse as an order of this game."""


class IllegalOrderError(OrderError):
    """The line parses, but the order is not allowed in this state."""


class OptionError(ValueError):
    """A game option is unknown or out of range."""


class FigureError(ValueError):
    """A GM adjustment names an unknown figure or a value out of range."""


class StateError(ValueError):
    """Stored state JSON cannot be loaded."""


class ProblemKind(enum.Enum):
    INVALID = "invalid"  # does not parse
    ILLEGAL = "illegal"  # parses, not allowed now


@dataclass(frozen=True, slots=True)
class OrderProblem:
    """One refused line of a mail: its 1-based number, the line itself and why."""

    line_no: int
    line: str
    reason: str
    kind: ProblemKind

    @classmethod
    def from_error(cls, line_no: int, line: str, error: OrderError) -> OrderProblem:
        kind = ProblemKind.ILLEGAL if isinstance(error, IllegalOrderError) else ProblemKind.INVALID
        return cls(line_no, line, error.reason, kind)


O = TypeVar("O")  # noqa: E741 - O for Orders, beside S for State: the protocol reads Game[S, O]
S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Parsed(Generic[O]):
    """What `parse_orders` understood of one mail.

    `orders` are the accepted orders, `problems` every refused line (all of them, so one
    reply can report every bad line), `complete` whether the accepted orders make a full set
    for this turn (a set that is not complete still counts, and the rest is defaulted);
    always ``Game.is_complete(state, player, orders)``.
    """

    orders: tuple[O, ...]
    problems: tuple[OrderProblem, ...] = ()
    complete: bool = True

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class OneLineOrder:
    """An order set of the open turn that a player can send as one line (a one-tap link, issue
    19): `text` its canonical order text (lines of it joined with "; " in a subject), `label`
    what it does or costs, in the game's words, for the link."""

    label: str
    text: str


@dataclass(frozen=True, slots=True)
class Roll:
    """One roll of dice: what was rolled (``"2d6"``, ``"d10"``, ``"d100"``), the faces, the total."""

    dice: str
    faces: tuple[int, ...]
    total: int

    @classmethod
    def of(cls, rng: random.Random, count: int, sides: int, *, low: int = 1) -> Roll:
        """Roll `count` dice numbered low..low+sides-1 with the turn's rng."""
        faces = tuple(rng.randint(low, low + sides - 1) for _ in range(count))
        name = f"{count if count > 1 else ''}d{sides}"
        return cls(name, faces, sum(faces))


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in a resolution, in the order it happened.

    `kind` is a short machine name (``"overtake"``, ``"roll"``, ``"spin"``), `text` the
    sentence the public report prints, `players` who it concerns, `roll` the dice if any.
    Events are public: anything private goes into `Game.view` for its owner only.
    """

    kind: str
    text: str
    players: tuple[PlayerId, ...] = ()
    roll: Roll | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text, "players": list(self.players)}
        if self.roll is not None:
            data["roll"] = {"dice": self.roll.dice, "faces": list(self.roll.faces), "total": self.roll.total}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Event:
        """The event `to_json` wrote (as stored with a resolved turn)."""
        roll = data.get("roll")
        return cls(
            str(data["kind"]),
            str(data["text"]),
            tuple(str(p) for p in data.get("players", ())),
            Roll(str(roll["dice"]), tuple(int(f) for f in roll["faces"]), int(roll["total"])) if roll else None,
        )


@dataclass(frozen=True, slots=True)
class Resolution(Generic[S]):
    """The outcome of one turn: the new state and what happened, in order."""

    state: S
    events: tuple[Event, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Stall:
    """A race that no longer gets nearer its end, as `Game.stall` reports it for the GM:
    `turns` in a row without progress, `reason` (one sentence, in the game's words: what
    progress is and that there was none), and the GM command that ends it, written with
    the game's and a seat's names: ``SET <game> <seat> <figure> <value>`` (any seat when
    the figure is the race's; `seat` when it is that car's), which `ends` says what it does
    to (one sentence)."""

    turns: int
    reason: str
    figure: str
    value: str
    ends: str
    seat: PlayerId | None = None
    """The seat the command must name (the figure is that car's); None: any seat will do."""


class RobotLevel(enum.Enum):
    """How well a robot drives (`Game.robot_orders`): ``normal``, its best, or ``easy``, a
    gentler driver for newcomers that a person learning the game can beat."""

    NORMAL = "normal"
    EASY = "easy"


class Viewer(enum.Enum):
    """Who is looking, for `Game.view` when the viewer is not a player."""

    PUBLIC = "public"
    GM = "gm"


@dataclass(frozen=True, slots=True)
class Placing:
    """One position of the standings: its place (1-based) and who shares it, by name; `note`, the
    game's word for a classification that is not a place won (Racecraft: "did not finish")."""

    place: int
    players: tuple[PlayerId, ...]
    note: str = ""


@dataclass(frozen=True, slots=True)
class Honour:
    """A distinction of one race that the game itself defines beside the finishing order (Speed
    Circuit: the pole, won by the qualifying bid), and the seat that holds it; a season may give
    bonus points for it (`Game.honours` names those a game defines)."""

    kind: str
    player: PlayerId


@dataclass(frozen=True, slots=True)
class TableRow:
    """One line of the public table: the player, their place and a cell per `View.columns`."""

    player: PlayerId
    place: int
    cells: tuple[str, ...]


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


@dataclass(frozen=True, slots=True, kw_only=True)
class View(Mapping[str, object]):
    """What one viewer may see, as `Game.view` returns it (see "Views" above).

    Each game subclasses it with the extras its templates and its picture read. It is also a
    read-only mapping of its fields, so that ``view["title"]`` and ``dict(view)`` still work
    where the shell treated views as dicts; new code reads the attributes.
    """

    title: str
    turn_label: str
    finished: bool
    standings: tuple[Placing, ...]
    columns: tuple[str, ...]
    table: tuple[TableRow, ...]
    events: tuple[str, ...]
    private: tuple[str, ...]
    summary: str
    honours: tuple[Honour, ...] = ()
    """The race's honours so far (`Honour`): empty for a game that defines none."""

    def __getitem__(self, key: str) -> object:
        if key in _field_names(type(self)):
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_field_names(type(self)))

    def __len__(self) -> int:
        return len(_field_names(type(self)))


def competition_places(standings: Standings) -> tuple[int, ...]:
    """Each position's place as a result is written in sport (standard competition ranking):
    those who share a position share its place, and the next place counts everyone ahead, so
    1, 2, 3, 3, 5 -- never the dense 1, 2, 3, 3, 4."""
    places: list[int] = []
    ahead = 0
    for position in standings:
        places.append(ahead + 1)
        ahead += len(position)
    return tuple(places)


def placings(standings: Standings) -> tuple[Placing, ...]:
    """The standings as `View.standings`: one `Placing` per position, in competition places
    (`competition_places`: 1, 2, 3, 3, 5)."""
    return tuple(
        Placing(place, tuple(position))
        for place, position in zip(competition_places(standings), standings, strict=True)
    )


@runtime_checkable
class Game(Protocol[S, O]):
    """One game's rules. Every method is pure: no clock, no I/O, no global random."""

    name: ClassVar[str]
    """Registry key, database value and template folder (``templates/<name>/``)."""
    title: ClassVar[str]
    """The game's name as printed (``"Racecraft"``)."""
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    early_resolution: ClassVar[bool]
    """Whether the shell may resolve a turn before its deadline once every order is in."""
    honours: ClassVar[tuple[str, ...]]
    """The honours of a race the game's own text defines (`Honour.kind`: ``pole``,
    ``lap-leader``, ``fastest-lap``), which its views report; () for none."""
    later_replaces: ClassVar[bool]
    """Whether a later valid set replaces the earlier whole: ``merge_orders(earlier, later)``
    is ``later`` whenever ``later`` holds an order (and ``earlier`` when it holds none). The
    shell then reads only the latest set on file, not every one (bench: ingest)."""
    chance: ClassVar[bool]
    """Whether `resolve` draws from its rng at all. A game without chance (Racecraft) resolves
    the same whatever the rng: the shell's mails then say nothing of dice (docs/DESIGN.md,
    "Dice anyone can check"); receipts are kept as in every game."""

    # -- set-up -----------------------------------------------------------------------
    def new_game(self, players: Sequence[PlayerId], options: Mapping[str, str], rng: random.Random) -> S:
        """The state before turn 1. Raises OptionError for bad options, ValueError for a bad field."""
        ...

    def option_help(self) -> str:
        """Every option with its range and default, one per line."""
        ...

    def rules_summary(self) -> str:
        """A few paragraphs for the welcome mail and the archive."""
        ...

    # -- the turn ---------------------------------------------------------------------
    def turn_label(self, state: S) -> str:
        """What the open turn is, in the game's words (``"Turn 3 of 5: tactical"``)."""
        ...

    def orders_label(self, state: S, player: PlayerId) -> str:
        """What `player`'s orders in the open turn are for, in the game's words (a turn label,
        or the rounds a program is for where orders run ahead of the turn: ``"Round 3"``)."""
        ...

    def expected_players(self, state: S) -> frozenset[PlayerId]:
        """Who must order for the open turn; empty means it resolves without orders."""
        ...

    def parse_orders(self, state: S, player: PlayerId, text: str) -> Parsed[O]:
        """Every order in `text` (one mail's orders), checked against the state."""
        ...

    def format_orders(self, orders: Sequence[O]) -> str:
        """Canonical text; ``parse_orders(state, p, format_orders(x)).orders == tuple(x)``."""
        ...

    def merge_orders(self, earlier: Sequence[O], later: Sequence[O]) -> tuple[O, ...]:
        """The set on file after a later valid mail; most games: the later set replaces."""
        ...

    def default_orders(self, state: S, player: PlayerId) -> tuple[O, ...]:
        """The NMR default when neither orders nor a GM plot are on file."""
        ...

    def plot_orders(self, state: S, player: PlayerId, plot: str) -> tuple[O, ...] | None:
        """The orders a GM plot on file (`plot`, canonical order text set by the GM) stands for
        in the open turn, or None when it cannot stand (the shell then uses `default_orders`).

        Most games: the plot as parsed, when every line of it is legal now. A game may adapt a
        plot that no longer fits to the closest legal orders, or carry a standing plot over to
        the turn in hand; what it returns is legal (as `parse_orders` would take it).
        """
        ...

    def resolve(
        self, state: S, orders: Mapping[PlayerId, Sequence[O]], rng: random.Random, submitted: Sequence[PlayerId] = ()
    ) -> Resolution[S]:
        """Resolve the open turn. `orders` holds every expected player (the shell fills NMRs).

        `submitted`: the players whose orders on file were sent (by them, or for them by the
        GM's ORDER), in the order their final sets arrived, first first; a player left out
        (an NMR default, a GM plot) counts after them, in seating order. Empty: seating order
        throughout. The shell stores it with the turn, so a replay is exact. A game whose
        rules ask who submitted first (SpeedPhreakz, S16) reads it; the others ignore it.

        Total on orders that came out of `parse_orders` or `default_orders` for this state.
        """
        ...

    def is_complete(self, state: S, player: PlayerId, orders: Sequence[O]) -> bool:
        """Whether `orders` are a full set for `player` in the open turn (nothing left to default).

        A player with nothing to order this turn has a full set with no orders. For a mail,
        ``parse_orders(state, player, text).complete == is_complete(state, player, parsed.orders)``.
        """
        ...

    def missing_orders(self, state: S, player: PlayerId, orders: Sequence[O]) -> tuple[str, ...]:
        """What `orders` lack to be a full set, each thing in the game's words with its syntax
        (``"the speed: a SPEED line (...)"``), for the confirmation to say; empty exactly when
        `is_complete`. No entry starts with an order word (the bot's mail holds no order line).
        """
        ...

    def filled_orders(self, state: S, player: PlayerId, orders: Sequence[O]) -> tuple[O, ...]:
        """The set `resolve` acts on for `player` when `orders` are on file: every part the set
        lacks (`missing_orders`) in the default the resolution gives it, the rest as sent.

        ``resolve(state, orders, rng)`` and ``resolve(state, filled, rng)`` give the same
        resolution (a property in the tests), so the shell can say before the deadline exactly
        what will be used. A default that only the resolution can settle (a free start square,
        placed once every START is in) is filled with the order that asks for it; a part that
        a later turn's resolution fills (a program for a later round) is left out, and
        `missing_orders` of the filled set still names it: it is still wanted by this turn's
        deadline when this turn's resolution locks it (SpeedPhreakz's next round)."""
        ...

    def normal_orders(self, state: S, player: PlayerId, orders: Sequence[O]) -> tuple[O, ...]:
        """The set `resolve` acts on for `player`, in one form: `filled_orders`, less every line
        that only restates what the resolution does without it (Speed Circuit's ``PAY WEAR``,
        ``PUSH NO``, ``SLIP 0``...). What the turn's dice digest and receipts are made of
        (`rules.fair`), so that a line changing nothing in play changes no roll.

        Two sets with the same normal form resolve alike, and the normal form resolves as the
        set itself does (properties in the tests); the normal form of a normal form is itself."""
        ...

    def consequences(self, state: S, player: PlayerId, orders: Sequence[O]) -> tuple[str, ...]:
        """What `orders` will cost `player` at the deadline, where the game can say so before
        the dice ("this plot costs 2 wear and a top speed test"; "program cost 125; ... you may
        lose control from action 4"), one sentence each, for the confirmation
        (mail-interface.md, "The confirmation"); empty where there is nothing to say. No
        entry starts with an order word (the bot's mail holds no order line).
        """
        ...

    def taken(
        self, state: S, player: PlayerId, orders: Sequence[O], others: Mapping[PlayerId, Sequence[O]]
    ) -> tuple[tuple[O, str], ...]:
        """The orders of `orders` that ask for something only one seat may have and that
        another seat's set on file for the open turn (`others`) already claims, each with the
        reason naming who holds it and what is free (SpeedPhreakz: a colour); empty in a game
        with no such choice. The shell refuses them at intake: the first to ask has it."""
        ...

    def one_line_orders(self, state: S, player: PlayerId) -> tuple[OneLineOrder, ...]:
        """The legal, complete order sets of `player` in the open turn that fit in one line (a
        few short orders), each with a label; empty where the game has none (a program of
        moves) or the player has nothing to order. Each `text` is a full set as
        `parse_orders` takes it (a conformance property)."""
        ...

    def order_help(self, state: S, player: PlayerId) -> str:
        """The order grammar for this player now (also the HELP reply); generated, not copied."""
        ...

    def robot_orders(
        self,
        state: S,
        player: PlayerId,
        rng: random.Random,
        level: RobotLevel = RobotLevel.NORMAL,
        robots: frozenset[PlayerId] | None = None,
    ) -> tuple[O, ...]:
        """A robot driver's orders for `player` in the open turn (see "Robots" above): legal
        and complete (``parse_orders(state, player, format_orders(x))`` takes them whole and
        calls them complete), empty when the seat has nothing to order. Computed from what a
        player at that seat may see: its own private part of the state and the public rest,
        never another player's orders or private figures; deterministic from `rng`, `level`
        (`RobotLevel`: the easy level drives worse on purpose) and `robots`: the seats driven
        by robots (public: the standings show them), which a game's robot may use to tell the
        cars that drive by its own rule from the others; None: not told, every seat may be
        one. A game's robot may ignore it."""
        ...

    # -- reading the state ------------------------------------------------------------
    def is_finished(self, state: S) -> bool: ...

    def stall(self, state: S) -> Stall | None:
        """A `Stall` when the GM is to be told that the race has stopped getting nearer its
        end (a game that may never end on its own counts the turns without progress and says
        so at the counts it documents); None otherwise, and always for a game whose race ends
        by itself."""
        ...

    def players(self, state: S) -> tuple[PlayerId, ...]:
        """Every player still in the game, in seating order."""
        ...

    def standings(self, state: S) -> Standings:
        """The race order now, front first; at the end, the result."""
        ...

    def figures(self, state: S, player: PlayerId) -> Figures:
        """A player's public figures (Racecraft: ``{"ep": 7}``)."""
        ...

    def view(self, state: S, resolution: Resolution[S] | None, viewer: PlayerId | Viewer) -> View:
        """What `viewer` may see of the state (and of the turn just resolved), for templates
        and pictures: the game's own `View` subclass, carrying the geometry of its picture.

        A player's view adds their private part; `Viewer.PUBLIC` and `Viewer.GM` show nothing
        private (the GM's view equals the public view), and no view shows a player's orders
        that are not yet resolved to anyone else.
        """
        ...

    def player_view(self, state: S, public: View, player: PlayerId) -> View:
        """`view(state, resolution, player)`, given `public`, the view of `state` and
        `resolution` for `Viewer.PUBLIC`: that view with the player's own part put in
        (``private`` and the fields its class names in ``PRIVATE_FIELDS``), every other field
        the public one's. The letters of a turn work the public view out once and each seat's
        own part alone. Raises TypeError when `public` is not this game's view.
        """
        ...

    # -- GM overrides -----------------------------------------------------------------
    def set_figure(self, state: S, player: PlayerId, name: str, value: str) -> S:
        """GM ``SET``: adjust one figure; raises FigureError with the allowed names or range."""
        ...

    def drop_player(self, state: S, player: PlayerId) -> S:
        """GM ``DROP`` / resignation: the player leaves the race, as the game's rules say."""
        ...

    # -- storage ----------------------------------------------------------------------
    def dump_state(self, state: S) -> dict[str, Any]:
        """JSON-ready, with a ``"version"`` key."""
        ...

    def load_state(self, data: Mapping[str, Any]) -> S:
        """The inverse of `dump_state`; raises StateError on an unknown version or shape."""
        ...


AnyGame: TypeAlias = Game[GameState, GameOrder]
"""Some game, as the shell holds it (`rules.find_game`): its states and orders opaque."""


def standings_json(standings: Standings) -> list[list[PlayerId]]:
    return [list(position) for position in standings]


def turn_seed(game_seed: int, turn: int) -> int:
    """The seed of one turn's rng, derived from the game's seed (turn 0 = `new_game`).

    The shell stores the derived seed with each turn, so replay needs only the stored value;
    `flagman play` derives them from the script's ``seed`` the same way.
    """
    digest = hashlib.sha256(f"flagman:{game_seed}:{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # 63 bits: fits a signed BIGINT column


def turn_rng(game_seed: int, turn: int) -> random.Random:
    return random.Random(turn_seed(game_seed, turn))


def robot_seed(turn_seed: int, player: PlayerId) -> int:
    """The seed of a robot's rng for seat `player` in the turn whose rng is `turn_seed` (see
    "Robots" above): its own stream, never the turn's (the dice stay the dice)."""
    digest = hashlib.sha256(f"flagman-robot:{turn_seed}:{player}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def robot_rng(turn_seed: int, player: PlayerId) -> random.Random:
    return random.Random(robot_seed(turn_seed, player))
