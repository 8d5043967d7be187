"""The contract every registered game keeps, checked the same way for each game in `rules.GAMES`.

architecture.md, "The core: rules/": "Each game implements one protocol (names may be refined;
the shape is the contract)"::

    class Game(Protocol[S, O]):
        name: ClassVar[str]                 # registry key, DB value, templates/<name>/
        min_players: ClassVar[int]; max_players: ClassVar[int]
        def new_game(self, players, options, rng) -> S
        def expected_players(self, state) -> frozenset[PlayerId]     # who must order this turn
        def parse_orders(self, state, player, text) -> Parsed[O]     # typed orders + per-line errors
        def format_orders(self, orders) -> str                       # canonical; parse(format(x)) == x
        def default_orders(self, state, player) -> tuple[O, ...]     # the NMR default
        def plot_orders(self, state, player, plot) -> tuple[O, ...] | None  # a GM plot, if it stands
        def resolve(self, state, orders, rng) -> Resolution[S]       # pure; total on legal input
        def is_complete(self, state, player, orders) -> bool          # a full set for this turn
        def view(self, state, resolution, viewer) -> View             # typed; carries geometry
        def player_view(self, state, public, player) -> View         # the public view + their own part
        def dump_state(self, state) -> dict; def load_state(self, data) -> S   # versioned JSON
        def order_help(self, state, player) -> str                   # the grammar; also HELP

"`resolve` never reads the clock or the global `random`; all chance comes from the `rng`
passed in ... any turn can be replayed exactly." And: every game package has the
same modules, and every game's resolver returns one type (`rules.api.Resolution`).

A new game joins `rules.GAMES` and gets these tests by adding its shortest options (and, if
it keeps orders past the turn they are given in, a probe) to the tables below.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import importlib
import inspect
import json
import random
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import GAMES, find_game, game_names
from rules.api import (
    Event,
    Game,
    Parsed,
    Placing,
    PlayerId,
    Resolution,
    TableRow,
    View,
    Viewer,
    turn_rng,
)

NAMES = tuple(game_names())

SHORTEST: dict[str, tuple[dict[str, str], int]] = {
    # name: (the options of its shortest race, the most turns a race of default orders takes)
    "racecraft": ({"turns": "3"}, 3),  # the start, one tactical turn, the final sprint
    "speed_circuit": ({"laps": "1"}, 40),  # design, qualifying, one lap (measured: 21 to 27 turns)
    "speedphreakz": ({"max_rounds": "2"}, 2),  # the race stops after round 2 if nobody finished
}

LAYOUT = ("game", "model", "parse", "resolve", "view", "storage")
"""The same module names in every game package (and `__init__` only re-exports)."""


def _speedphreakz_probe(game: Game[Any, Any], state: Any, player: PlayerId, index: int) -> tuple[str, str]:
    """The default orders with the program of the last round sent (the one that stays queued
    after this turn) replaced by four movements that spell `index + 1` (distinct per player;
    never F1 F1 F1 F1, which the cheapest programs in a player's own options are made of:
    F1s are the cheapest movement, so a program of theirs never holds an F2 or F3)."""
    digits = [((index + 1) // 3**k) % 3 for k in range(4)]
    program = " ".join(("F1", "F2", "F3")[d] for d in digits)
    lines = game.format_orders(game.default_orders(state, player)).splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("ROUND"))
    lines[last] = f"{lines[last].split(':')[0]}: {program}"
    return "\n".join(lines), program


PROBES: dict[str, Callable[[Game[Any, Any], Any, PlayerId, int], tuple[str, str]]] = {
    # Racecraft and Speed Circuit resolve (and report) every order in the turn it is given;
    # SpeedPhreakz queues a program for the next round in the state.
    "speedphreakz": _speedphreakz_probe,
}


def players(count: int) -> list[PlayerId]:
    return [f"p{i}" for i in range(count)]


def defaults(game: Game[Any, Any], state: Any) -> dict[PlayerId, tuple[Any, ...]]:
    return {p: game.default_orders(state, p) for p in sorted(game.expected_players(state))}


def play(name: str, count: int, seed: int, turns: int) -> Iterator[tuple[Any, Resolution[Any] | None]]:
    """The state before each turn of a race of default orders (with the turn before's
    resolution), from the set-up to `turns` turns later or the end."""
    game = find_game(name)
    state = game.new_game(players(count), SHORTEST[name][0], turn_rng(seed, 0))
    resolution: Resolution[Any] | None = None
    for turn in range(1, turns + 2):
        yield state, resolution
        if game.is_finished(state) or turn > turns:
            return
        resolution = game.resolve(state, defaults(game, state), turn_rng(seed, turn))
        state = resolution.state


@st.composite
def races(draw: st.DrawFn, name: str) -> tuple[int, int, int]:
    """(players, seed, turns) for a race of `name`."""
    game = find_game(name)
    return (
        draw(st.integers(game.min_players, game.max_players)),
        draw(st.integers(0, 2**32)),
        draw(st.integers(0, SHORTEST[name][1])),
    )


def last(name: str, race: tuple[int, int, int]) -> tuple[Any, Resolution[Any] | None]:
    *_, found = play(name, *race)
    return found


class ClockRead(AssertionError):  # noqa: N818 - named for what happened, as Refused
    """The rules read the clock or the global random."""


@contextmanager
def no_clock_no_global_random() -> Iterator[None]:
    """Every clock and the global `random` raise while the block runs (the rng passed in,
    a `random.Random` of its own, still works)."""

    def forbidden(*_args: object, **_kwargs: object) -> typing.NoReturn:
        raise ClockRead("the rules read the clock or the global random")

    class Clockless(datetime.datetime):
        @classmethod
        def now(cls, *_args: object, **_kwargs: object) -> typing.NoReturn:
            forbidden()

        @classmethod
        def utcnow(cls, *_args: object, **_kwargs: object) -> typing.NoReturn:
            forbidden()

        @classmethod
        def today(cls, *_args: object, **_kwargs: object) -> typing.NoReturn:
            forbidden()

    class Dateless(datetime.date):
        @classmethod
        def today(cls, *_args: object, **_kwargs: object) -> typing.NoReturn:
            forbidden()

    clocks = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "localtime", "gmtime")
    chances = (
        "random",
        "randint",
        "randrange",
        "choice",
        "choices",
        "shuffle",
        "sample",
        "uniform",
        "getrandbits",
        "seed",
    )
    with ExitStack() as stack:
        for attr in clocks:
            stack.enter_context(mock.patch(f"time.{attr}", forbidden))
        for attr in chances:
            stack.enter_context(mock.patch(f"random.{attr}", forbidden))
        stack.enter_context(mock.patch("datetime.datetime", Clockless))
        stack.enter_context(mock.patch("datetime.date", Dateless))
        yield


def texts(value: object) -> Iterator[str]:
    """Every piece of text in a view, however deep."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from texts(getattr(value, f.name))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from texts(key)
            yield from texts(item)
    elif isinstance(value, Sequence | frozenset | set):
        for item in value:
            yield from texts(item)


SLOW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- the game object ----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_game_is_the_protocol_with_its_annotated_types(name: str) -> None:
    """`GAME: Game[State, Order]` in the game's `game` module: registered under its name, an
    instance of the protocol; new_game makes a State, default orders are Orders, and
    `view` returns the game's own `View` subclass."""
    module = importlib.import_module(f"{GAMES[name]}.game")
    game = find_game(name)
    assert module.GAME is game is importlib.import_module(GAMES[name]).GAME
    assert isinstance(game, Game) and game.name == name
    hint = typing.get_type_hints(module)["GAME"]
    assert typing.get_origin(hint) is Game
    state_type, order_type = typing.get_args(hint)
    state = game.new_game(players(game.min_players), {}, turn_rng(0, 0))
    assert isinstance(state, state_type)
    for player in game.expected_players(state):
        assert all(isinstance(order, order_type) for order in game.default_orders(state, player))
    view = game.view(state, None, Viewer.PUBLIC)
    assert isinstance(view, View) and type(view) is not View
    assert typing.get_type_hints(type(game).view)["return"] is type(view)
    assert typing.get_type_hints(type(game).player_view)["return"] is type(view)
    other = next(find_game(n) for n in NAMES if n != name)
    with pytest.raises(TypeError):
        game.player_view(
            state,
            other.view(other.new_game(players(other.min_players), {}, turn_rng(0, 0)), None, Viewer.PUBLIC),
            players(1)[0],
        )


@pytest.mark.parametrize("name", NAMES)
def test_every_game_package_has_the_same_modules(name: str) -> None:
    """game.py, model.py, parse.py, resolve.py, view.py and storage.py in every game;
    `__init__.py` only re-exports (a docstring, imports and `__all__`)."""
    package = importlib.import_module(GAMES[name])
    folder = Path(package.__file__ or "").parent
    assert {m for m in LAYOUT if (folder / f"{m}.py").is_file()} == set(LAYOUT)
    tree = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        exports = isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__all__"]
        assert docstring or exports or isinstance(node, ast.ImportFrom), ast.dump(node)[:80]
    assert "GAME" in package.__all__ and all(hasattr(package, n) for n in package.__all__)


@pytest.mark.parametrize("name", NAMES)
def test_every_resolver_returns_a_resolution(name: str) -> None:
    """One resolver return type: each `resolve_*` of the game's `resolve` module
    returns `rules.api.Resolution` (as `Game.resolve` does)."""
    module = importlib.import_module(f"{GAMES[name]}.resolve")
    resolvers = [
        f
        for n, f in inspect.getmembers(module, inspect.isfunction)
        if n.startswith("resolve_") and f.__module__ == module.__name__
    ]
    assert resolvers
    for resolver in resolvers:
        assert typing.get_origin(typing.get_type_hints(resolver)["return"]) is Resolution, resolver.__name__


@pytest.mark.parametrize("name", NAMES)
def test_new_game_takes_from_min_to_max_players(name: str) -> None:
    """min_players and max_players: a race for each; one fewer or one more is a ValueError."""
    game = find_game(name)
    for count in (game.min_players, game.max_players):
        state = game.new_game(players(count), {}, turn_rng(1, 0))
        assert game.players(state) == tuple(players(count))
        assert game.expected_players(state) == frozenset(players(count))
        assert not game.is_finished(state)
    for count in (game.min_players - 1, game.max_players + 1):
        with pytest.raises(ValueError):
            game.new_game(players(count), {}, turn_rng(1, 0))


# -- orders -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_default_orders_are_legal_complete_and_read_back(name: str, data: st.DataObject) -> None:
    """format_orders: "canonical; parse(format(x)) == x" for the NMR default of every expected
    player; the default is legal (no refused line) and a full set (`is_complete`)."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    for player in game.expected_players(state):
        orders = game.default_orders(state, player)
        parsed = game.parse_orders(state, player, game.format_orders(orders))
        assert parsed.ok, parsed.problems
        assert parsed.orders == orders
        assert parsed.complete and game.is_complete(state, player, orders)


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_a_gm_plot_stands_for_legal_orders_or_not_at_all(name: str, data: st.DataObject) -> None:
    """`plot_orders` (the GM's plot on file, mail-interface.md PLOT): what it returns is legal now
    (parse_orders takes it back without a refused line); a plot that is the default itself
    stands; text that is no order at all never stands."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    for player in sorted(game.expected_players(state)):
        default = game.format_orders(game.default_orders(state, player))
        for plot in (
            default,
            "\n".join(data.draw(st.lists(st.sampled_from(default.splitlines() or [""]), max_size=3))),
        ):
            orders = game.plot_orders(state, player, plot)
            if orders is not None:
                parsed = game.parse_orders(state, player, game.format_orders(orders))
                assert parsed.ok and parsed.orders == orders, (plot, parsed.problems)
        if default:
            assert game.plot_orders(state, player, default) is not None, default
        assert game.plot_orders(state, player, "NOT AN ORDER AT ALL") is None


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_a_mail_is_complete_exactly_when_its_orders_are(name: str, data: st.DataObject) -> None:
    """Parsed.complete is `is_complete` of the orders accepted, whatever the mail: any lines of
    the default, repeated or left out, and lines that are not orders."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    for player in sorted(game.expected_players(state)):
        lines = game.format_orders(game.default_orders(state, player)).splitlines()
        mail = data.draw(st.lists(st.sampled_from([*lines, "", "HELP", "no orders from me", "ROUND"]), max_size=6))
        parsed: Parsed[Any] = game.parse_orders(state, player, "\n".join(mail))
        assert parsed.complete == game.is_complete(state, player, parsed.orders)
        assert game.parse_orders(state, player, game.format_orders(parsed.orders)).orders == parsed.orders


# -- resolution ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_resolve_is_deterministic_and_reads_no_clock(name: str, data: st.DataObject) -> None:
    """ "resolve never reads the clock or the global random; all chance comes from the rng
    passed in": the same state, orders and seed give the same resolution, from the state or
    from its stored JSON; the state resolved is left as it was."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    if game.is_finished(state):
        return
    seed = data.draw(st.integers(0, 2**63 - 1))
    orders = defaults(game, state)
    stored = json.dumps(game.dump_state(state), sort_keys=True)
    with no_clock_no_global_random():
        first = game.resolve(state, orders, random.Random(seed))
        again = game.resolve(game.load_state(json.loads(stored)), orders, random.Random(seed))
        game.view(first.state, first, Viewer.PUBLIC)
    assert isinstance(first, Resolution) and all(isinstance(e, Event) for e in first.events)
    assert first == again
    assert json.dumps(game.dump_state(state), sort_keys=True) == stored


def test_the_clock_guard_catches_a_clock_read() -> None:
    """The guard itself: inside it the clock and the global random raise; an rng does not."""
    with no_clock_no_global_random():
        for read in (
            lambda: __import__("time").time(),
            lambda: datetime.datetime.now(datetime.UTC),
            lambda: random.randint(1, 6),
        ):
            with pytest.raises(ClockRead):
                read()
        assert 1 <= random.Random(1).randint(1, 6) <= 6


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_dump_and_load_round_trip(name: str, data: st.DataObject) -> None:
    """dump_state is versioned JSON; ``load_state(dump_state(s)) == s`` at every turn."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    dumped = game.dump_state(state)
    assert "version" in dumped
    assert game.load_state(json.loads(json.dumps(dumped))) == state


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", ["min", "max"])
def test_a_race_of_default_orders_finishes(name: str, which: str) -> None:
    """A whole race in which nobody sends orders ends, on the game's shortest options, within
    its bound of turns (every NMR default moves the race on)."""
    game = find_game(name)
    count = game.min_players if which == "min" else game.max_players
    bound = SHORTEST[name][1]
    for seed in range(3):
        turns = list(play(name, count, seed, bound + 1))
        state, _ = turns[-1]
        assert game.is_finished(state), f"not finished after {len(turns) - 1} turns"
        assert len(turns) - 1 <= bound
        assert sorted(p for place in game.standings(state) for p in place) == sorted(game.players(state))


# -- views --------------------------------------------------------------------------------


def _check_common_fields(view: View) -> None:
    assert isinstance(view.title, str) and view.title and isinstance(view.turn_label, str)
    assert isinstance(view.finished, bool) and isinstance(view.summary, str)
    assert isinstance(view.standings, tuple) and all(isinstance(p, Placing) for p in view.standings)
    assert all(isinstance(p.players, tuple) and isinstance(p.place, int) for p in view.standings)
    assert isinstance(view.columns, tuple) and all(isinstance(c, str) for c in view.columns)
    assert isinstance(view.table, tuple) and all(isinstance(r, TableRow) for r in view.table)
    assert all(len(r.cells) == len(view.columns) and all(isinstance(c, str) for c in r.cells) for r in view.table)
    assert {r.player for r in view.table} == {p for place in view.standings for p in place.players}
    for lines in (view.events, view.private):
        assert isinstance(lines, tuple) and all(isinstance(line, str) for line in lines)


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_views_are_typed_and_a_players_view_adds_only_their_own_part(name: str, data: st.DataObject) -> None:
    """view: the game's typed view for a player, for the GM and for the public, the same class
    for all; PUBLIC and GM see nothing private, and the same (the GM's copy is given the public
    view); a player's view is the public view plus their private part."""
    game = find_game(name)
    state, resolution = last(name, data.draw(races(name)))
    public = game.view(state, resolution, Viewer.PUBLIC)
    _check_common_fields(public)
    gm = game.view(state, resolution, Viewer.GM)
    assert type(gm) is type(public) and public.private == () and gm.private == ()
    assert gm == public
    # A game's view may hold more of a player's own part than `private` (their
    # options this turn), named in its PRIVATE_FIELDS; those are empty in the public view.
    extra = getattr(type(public), "PRIVATE_FIELDS", ())
    for player in game.players(state):
        mine = game.view(state, resolution, player)
        assert type(mine) is type(public)
        _check_common_fields(mine)
        own = {"private": (), **{name: getattr(public, name) for name in extra}}
        assert dataclasses.replace(mine, **own) == public
        # The same view from the public one and the player's own part alone (the letters' way).
        assert game.player_view(state, public, player) == mine


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", ["min", "max"])
def test_no_view_shows_a_players_pending_orders_to_anyone_else(name: str, which: str) -> None:
    """A player's orders that are not yet resolved (SpeedPhreakz: the program queued for the
    next round) are in that player's view only: no other player's, the GM's or the public's.
    Orders resolved in the turn they are given are reported to everyone by then."""
    game = find_game(name)
    probe = PROBES.get(name)
    count = game.min_players if which == "min" else game.max_players
    state = game.new_game(players(count), SHORTEST[name][0], turn_rng(3, 0))
    pending = 0
    for turn in range(1, 4):
        if game.is_finished(state):
            break
        orders, tokens = {}, {}
        for index, player in enumerate(sorted(game.expected_players(state))):
            orders[player] = game.default_orders(state, player)
            if probe is not None:
                text, tokens[player] = probe(game, state, player, index)
                parsed = game.parse_orders(state, player, text)
                assert parsed.ok, parsed.problems
                orders[player] = parsed.orders
        resolution = game.resolve(state, orders, turn_rng(3, turn))
        state = resolution.state
        viewers: tuple[PlayerId | Viewer, ...] = (Viewer.PUBLIC, Viewer.GM, *game.players(state))
        seen = {viewer: " | ".join(texts(game.view(state, resolution, viewer))) for viewer in viewers}
        for owner, token in tokens.items():
            if token in seen[Viewer.PUBLIC] or token not in seen.get(owner, ""):
                continue  # resolved and reported, or dropped (a crashed car's queue): not pending
            pending += 1
            assert not [viewer for viewer, text in seen.items() if viewer != owner and token in text]
    assert probe is None or pending, "the probe found no pending orders: it does not probe anything"


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_what_orders_cost_is_said_in_lines_that_are_no_orders(name: str, data: st.DataObject) -> None:
    """`Game.consequences` (the confirmation states what the orders cost):
    total over any state and any parsed set, each sentence one line, and none an order line
    itself (the bot's mail holds no order line)."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    for player in sorted(game.expected_players(state)):
        lines = game.format_orders(game.default_orders(state, player)).splitlines()
        mail = data.draw(st.lists(st.sampled_from([*lines, ""]), max_size=6))
        orders = game.parse_orders(state, player, "\n".join(mail)).orders
        for what in game.consequences(state, player, orders):
            assert what and "\n" not in what
            assert not game.parse_orders(state, player, what).orders, what


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_a_game_whose_later_set_replaces_merges_as_it_says(name: str, data: st.DataObject) -> None:
    """`Game.later_replaces`: the shell then reads only the latest set on file (bench: ingest),
    which is right only if `merge_orders(earlier, later)` is `later` whenever `later` holds an
    order, and `earlier` when it holds none. A game that merges (SpeedPhreakz §5: programs of
    other rounds stand) says False."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    for player in sorted(game.expected_players(state)):
        lines = game.format_orders(game.default_orders(state, player)).splitlines()
        earlier = game.parse_orders(
            state, player, "\n".join(data.draw(st.lists(st.sampled_from(lines or [""]))))
        ).orders
        later = game.parse_orders(state, player, "\n".join(data.draw(st.lists(st.sampled_from(lines or [""]))))).orders
        if game.later_replaces:
            assert game.merge_orders(earlier, later) == (tuple(later) if later else tuple(earlier))


@pytest.mark.parametrize("name", NAMES)
@SLOW
@given(data=st.data())
def test_every_one_line_order_is_a_legal_complete_set(name: str, data: st.DataObject) -> None:
    """`Game.one_line_orders` (one-tap links "decode to a legal order"): at any turn,
    each is a full, legal set for the player as `parse_orders` takes it, its label one line
    and no order line itself (the bot's mail holds no order line); none for a player with
    nothing to order."""
    game = find_game(name)
    state, _ = last(name, data.draw(races(name)))
    expected = game.expected_players(state)
    for player in sorted(game.players(state)):
        offered = game.one_line_orders(state, player)
        if player not in expected:
            assert offered == ()
        for order in offered:
            parsed = game.parse_orders(state, player, order.text)
            assert parsed.ok and parsed.orders and game.is_complete(state, player, parsed.orders), order
            assert order.label and "\n" not in order.label
            assert not game.parse_orders(state, player, order.label).orders, order.label
        assert len({o.text for o in offered}) == len(offered)
