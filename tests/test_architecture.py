"""The shell's shape, enforced (architecture.md): no import cycles, and one composition root.

The import graph of `bot/` is read statically: every module is parsed with `ast`, and each
``import bot...`` / ``from bot... import ...`` is an edge, *module-level* (it runs when the
module is imported: at the top, in a class body, under a module-level ``try`` or ``if``) or
*lazy* (inside a function: it runs when the function is called). Imports under
``if TYPE_CHECKING:`` never run and are not edges. A package's implicit import of its
parent package is not counted either: Python runs the parent first, so it closes no cycle.

- Module-level edges form no cycle at all: a cycle there makes the import order matter
  (a partly initialised module, an ImportError depending on who is imported first).
- A lazy import that closes a cycle (the imported module reaches the importer again) is a
  dependency both ways that a function-level import hides. The ones that exist are listed in
  `LAZY_CYCLES`, each with why; a new one fails the test, and so does one that is gone
  (take it off the list).
- The rooms of the shell are layered (`LAYERS`, lowest first): a module of one room imports
  only its own room and the rooms below it, never one above; here imports under
  ``if TYPE_CHECKING:`` count too (a type from a room above is a dependency on it all the same).
- Only `bot/app.py`, the composition root, constructs the adapters (and `bot/testing.py`
  holds the fakes): everything else is handed them, so a test can hand it fakes.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.source_trees import parsed

REPO = Path(__file__).resolve().parents[1]
BOT = REPO / "bot"

ADAPTERS = frozenset({"Database", "ImapInbox", "SmtpMailer", "MaildirInbox", "MaildirMailer"})
ADAPTER_BUILDERS = frozenset({"bot/app.py", "bot/testing.py"})

# Lazy imports that close a cycle, as "importer -> imported": each is a function-level
# import in the first module whose target imports the first module back. None now: GM
# powers and sign-ups, which called each other (REPLACE welcomes, PROCESS enforces the NMR
# limit, RESIGN and the NMR limit drop a seat as DROP does), share `bot.games.seats`.
LAZY_CYCLES: dict[str, str] = {}

# The rooms of the shell, lowest first (architecture.md: "`games/` decides what happens;
# letters decide how it reads and who gets it; no module below letters knows how a mail
# looks"). A room is a package or a module directly under bot/ (`bot.mail_in.auth` is in
# "mail_in"); a module of a room may import its own room and the rooms before it in this list,
# never one after it. Every room is here (`test_every_room_is_layered`): at the bottom the
# leaves (the build, the crash points, the shipped files, the worker processes, the clock,
# text made safe, DKIM keys, the settings, the machine); then the data (mailboxes to facts), the
# pictures and the verifier, mail in and out, the Shell, the letters, what becomes of a mail, the
# game's life, the commands, one mail's intake, the GM, the jobs; at the top the composition
# root, the fakes, the operator's tools, the running service and the CLI.
LAYERS = (
    "buildinfo",
    "faults",
    "resources",
    "processes",
    "clock",
    "safe_text",
    "dkim",
    "settings",
    "host",
    "mailboxes",
    "models",
    "db",
    "dice",
    "ratings",
    "schedules",
    "store",
    "outlook",
    "facts",
    "pictures",
    "verify",
    "mail_in",
    "mail_out",
    "shell",
    "letters",
    "fate",
    "games",
    "commands",
    "intake",
    "gm",
    "service",
    "app",
    "testing",
    "ops",
    "daemon",
    "cli",
)


@dataclass(frozen=True, slots=True)
class Import:
    importer: str
    imported: str
    lazy: bool  # inside a function: runs when it is called, not when the module is imported
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def bot_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(BOT.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _from_base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name of ``from <this> import ...`` (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: dict[str, Path], *, type_checking: bool = False) -> Iterator[Import]:
    """Every import of another `bot` module in this one, module-level or lazy (and, with
    `type_checking`, those under ``if TYPE_CHECKING:`` too, as module-level)."""

    def targets(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
            return
        base = _from_base(module, path, node)
        for alias in node.names:
            # `from bot.games import turns` imports the module bot.games.turns;
            # `from bot.games.turns import Shell` imports bot.games.turns for a name in it.
            yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base

    def walk(node: ast.AST, lazy: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and not type_checking:
                for other in child.orelse:
                    yield from walk(other, lazy)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in targets(child):
                    if target in known and target != module:
                        yield Import(module, target, lazy, child.lineno)
            inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from walk(child, inner)

    yield from walk(parsed(path.read_text(encoding="utf-8"), str(path)), False)


def import_graph() -> dict[str, dict[str, bool]]:
    """importer -> imported -> lazy (an import made at module level anywhere is module-level)."""
    known = bot_modules()
    graph: dict[str, dict[str, bool]] = {name: {} for name in known}
    for name, path in known.items():
        for edge in imports_of(name, path, known):
            graph[name][edge.imported] = graph[name].get(edge.imported, True) and edge.lazy
    return graph


def shortest_path(
    graph: dict[str, dict[str, bool]], start: str, goal: str, *, module_level_only: bool
) -> list[str] | None:
    """The shortest import chain from `start` to `goal` (ties broken by name: stable output)."""
    queue: deque[list[str]] = deque([[start]])
    seen = {start}
    while queue:
        path = queue.popleft()
        if path[-1] == goal:
            return path
        for target, lazy in sorted(graph[path[-1]].items()):
            if target not in seen and not (module_level_only and lazy):
                seen.add(target)
                queue.append([*path, target])
    return None


def cycles(graph: dict[str, dict[str, bool]], *, lazy_edges: bool) -> dict[str, str]:
    """Each edge of the given kind that closes a cycle, with the cycle written out.

    For module-level edges only module-level edges count on the way back; a lazy edge closes
    a cycle if its target leads back to its importer in any way.
    """
    found: dict[str, str] = {}
    for importer, targets in sorted(graph.items()):
        for imported, lazy in sorted(targets.items()):
            if lazy != lazy_edges:
                continue
            back = shortest_path(graph, imported, importer, module_level_only=not lazy_edges)
            if back is not None:
                found[f"{importer} -> {imported}"] = " -> ".join([importer, *back])
    return found


def test_the_graph_sees_module_level_and_lazy_imports() -> None:
    """The walker itself: the composition root's imports are module-level, the CLI's per
    command are lazy (so the checks below are not vacuous)."""
    graph = import_graph()
    assert graph["bot.app"]["bot.db"] is False
    assert graph["bot.app"]["bot.service"] is False
    assert graph["bot.cli"]["bot.cli.demo"] is True
    assert graph["bot.cli.context"]["bot.app"] is True
    assert "bot.app" not in graph["bot.cli.gm"]  # only under TYPE_CHECKING: never run


def test_no_module_level_import_cycle_in_the_shell() -> None:
    """Importing any module of `bot/` first works: no module-level cycle."""
    assert cycles(import_graph(), lazy_edges=False) == {}


def test_no_import_cycle_even_through_type_checking_imports() -> None:
    """A type imported only for the annotations is a dependency all the same: counting the
    imports under TYPE_CHECKING too, no module reaches itself (the archive, the observers, the
    turns and the letters once did, through the Shell kept in games/turns.py)."""
    known = bot_modules()
    graph: dict[str, dict[str, bool]] = {name: {} for name in known}
    for name, path in known.items():
        for edge in imports_of(name, path, known, type_checking=True):
            graph[name][edge.imported] = graph[name].get(edge.imported, True) and edge.lazy
    assert cycles(graph, lazy_edges=False) == {}
    assert cycles(graph, lazy_edges=True) == {}


def test_the_lazy_import_cycles_are_the_known_ones() -> None:
    """A function-level import that closes a cycle is listed in LAZY_CYCLES, with why."""
    found = cycles(import_graph(), lazy_edges=True)
    new = {edge: cycle for edge, cycle in found.items() if edge not in LAZY_CYCLES}
    gone = sorted(edge for edge in LAZY_CYCLES if edge not in found)
    assert not new, (
        "new import cycles through a function-level import (break them, or list them with why):\n"
        + "\n".join(f"  {edge}: {cycle}" for edge, cycle in sorted(new.items()))
    )
    assert not gone, f"no longer a cycle, take them off LAZY_CYCLES: {gone}"


def room(module: str) -> str:
    """The room of a module: the package or module directly under bot/ it is in."""
    return module.split(".")[1] if "." in module else module


def room_edges(known: dict[str, Path]) -> Iterator[tuple[str, Import]]:
    """Each import of a module of another room (TYPE_CHECKING included), with where it is."""
    for name, path in sorted(known.items()):
        for edge in imports_of(name, path, known, type_checking=True):
            if room(edge.imported) != room(name):
                yield path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.name, edge


def upward_imports(edges: Iterator[tuple[str, Import]], layers: tuple[str, ...] = LAYERS) -> list[str]:
    """Each import by a module of a layered room of a room above its own in `layers`."""
    found = []
    for where, edge in edges:
        here, there = room(edge.importer), room(edge.imported)
        if here in layers and there in layers and layers.index(there) > layers.index(here):
            found.append(f"{where}:{edge.line}: {edge.importer} imports {edge.imported} ({there} is above {here})")
    return found


def test_every_room_is_layered() -> None:
    """Every room of bot/ is in `LAYERS`, and every room there exists: a new room is judged from
    its first commit, and a renamed one does not leave the test checking nothing. (The package
    itself, bot/__init__.py, imports nothing.)"""
    rooms = {room(name) for name in bot_modules()} - {"bot"}
    assert sorted(rooms - set(LAYERS)) == [], "rooms not layered"
    assert sorted(set(LAYERS) - rooms) == [], "layered rooms that do not exist"
    assert len(set(LAYERS)) == len(LAYERS)
    assert import_graph()["bot"] == {}


def test_no_room_imports_a_room_above_it() -> None:
    """architecture.md: "`games/` decides what happens; letters decide how it reads and who gets
    it; no module below letters knows how a mail looks": the rooms in `LAYERS` import only
    downwards, TYPE_CHECKING imports included."""
    edges = list(room_edges(bot_modules()))
    assert any(room(e.importer) == "games" and room(e.imported) == "letters" for _, e in edges)  # not vacuous
    assert upward_imports(iter(edges)) == []


@pytest.mark.parametrize("guarded", [False, True])
def test_a_planted_upward_import_is_found(tmp_path: Path, guarded: bool) -> None:
    """The check is not vacuous: a module of mail_in (planted in a copy of the import graph)
    that imports the deadline, at module level or only under TYPE_CHECKING, is reported."""
    planted = tmp_path / "planted.py"
    body = "from bot.games import turns\n"
    if guarded:
        body = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    " + body
    planted.write_text(body, encoding="utf-8")
    known = {**bot_modules(), "bot.mail_in.planted": planted}
    found = upward_imports(room_edges({"bot.mail_in.planted": planted} | {"bot.games.turns": known["bot.games.turns"]}))
    assert [line.split(": ", 1)[1] for line in found if "planted" in line] == [
        "bot.mail_in.planted imports bot.games.turns (games is above mail_in)"
    ]


def test_the_layering_check_on_a_synthetic_graph() -> None:
    """The checker on a graph made up for it: downward and same-room imports pass, an upward
    one is named, a room not in the layers is not judged."""
    edges = [
        ("a.py", Import("bot.low.a", "bot.low.b", False, 1)),
        ("b.py", Import("bot.high.b", "bot.low.a", False, 2)),
        ("c.py", Import("bot.low.c", "bot.high.x", True, 3)),
        ("d.py", Import("bot.other.d", "bot.high.x", False, 4)),
    ]
    assert upward_imports(iter(edges), ("low", "high")) == ["c.py:3: bot.low.c imports bot.high.x (high is above low)"]


def adapter_constructions() -> Iterator[tuple[str, int, str]]:
    for path in sorted(BOT.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"), where)):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name in ADAPTERS:
                    yield where, node.lineno, name


def test_only_the_composition_root_constructs_adapters() -> None:
    """architecture.md: bot/app.py is the one composition root; the rest is handed adapters."""
    found = list(adapter_constructions())
    assert {name for where, _, name in found if where == "bot/app.py"} == ADAPTERS  # the search finds them
    elsewhere = [f"{where}:{line}: {name}(...)" for where, line, name in found if where not in ADAPTER_BUILDERS]
    assert elsewhere == []


def hand_built_bot_contexts() -> Iterator[str]:
    """Each dict literal with a ``"bot"`` key whose value is a dict literal built on the spot."""
    for path in sorted(BOT.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"), where)):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "bot" and isinstance(value, ast.Dict):
                        yield f"{where}:{node.lineno}"


def test_the_letters_context_is_built_in_one_place() -> None:
    """architecture.md: letters are "built in the letters layer from one context builder": a
    template's ``bot`` comes from `bot.letters.context.bot_context` (or `game_context`), never
    from a dict written out by hand (there were eight)."""
    assert list(hand_built_bot_contexts()) == []


# What of `rules/` the shell may import: the package (find_game, game_names, UnknownGameError),
# the contract (rules.api), the fairness log (rules.fair), the script runner (rules.script), a
# season's standings (rules.season: points from finishing orders, no game's internals) and a
# person's reliability record (rules.reliability: counts of turns and seats).
# A game's own package (its view's geometry: rules.racecraft.RacecraftView, ...) is read only by
# that game's picture (bot/pictures/<game>.py): everything else sees a game through rules.api.
RULES_SURFACE = frozenset({"rules", "rules.api", "rules.fair", "rules.script", "rules.season", "rules.reliability"})


def rules_imports(path: Path) -> Iterator[tuple[int, str]]:
    """Each ``rules`` module a file imports (``from rules import fair`` is rules.fair)."""
    for node in ast.walk(parsed(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "rules")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "rules":
            base = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in RULES_SURFACE else base


def reaches_into_a_game(module: str, imported: str) -> bool:
    """A shell module importing a game's internals: anything beyond `RULES_SURFACE`, unless it
    is the picture of that very game."""
    if imported in RULES_SURFACE:
        return False
    game = imported.split(".")[1]
    return module != f"bot.pictures.{game}"


def test_only_a_games_picture_reads_its_internals() -> None:
    """architecture.md: the shell sees a game through rules.api (`Game`, the typed `View`); a
    picture draws the geometry its game's view class adds, so bot/pictures/<game>.py alone
    imports rules.<game>."""
    found = [
        (name, line, imported) for name, path in sorted(bot_modules().items()) for line, imported in rules_imports(path)
    ]
    assert any(name == "bot.pictures.racecraft" and imported == "rules.racecraft" for name, _, imported in found)
    assert [f"{name}:{line}: {imported}" for name, line, imported in found if reaches_into_a_game(name, imported)] == []


def test_the_rules_surface_check_on_made_up_imports() -> None:
    """The checker: the surface passes anywhere, a game's package only from its own picture."""
    assert not reaches_into_a_game("bot.games.turns", "rules.fair")
    assert not reaches_into_a_game("bot.pictures.racecraft", "rules.racecraft")
    assert reaches_into_a_game("bot.pictures.racecraft", "rules.speed_circuit.track")
    assert reaches_into_a_game("bot.letters.sheets", "rules.racecraft.model")


def readme_layout() -> str:
    """The Layout block of README.md (between "## Layout" and the end of its code block)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1]
    return block.split("```", 2)[1]


def test_the_readme_layout_names_every_room() -> None:
    """README, "Layout": every package of bot/ as ``name/`` and every top module as ``name.py``,
    at the start of a line of the block (so a new room is described where a newcomer looks)."""
    layout = readme_layout()
    named = {line.split()[0] for line in layout.splitlines() if line.startswith("  ") and line.split()}
    named |= {word for line in layout.splitlines() for word in line.split() if word.endswith(".py")}
    rooms = {room(name) for name in bot_modules()} - {"bot"}
    expected = {f"{r}/" if (BOT / r).is_dir() else f"{r}.py" for r in rooms}
    assert sorted(expected - named) == []


def layout_entries(layout: str) -> dict[str, str]:
    """Each room the Layout block describes (``name/`` or ``name.py`` at the start of a line, two
    spaces in), with its description (the lines indented under it joined)."""
    entries: dict[str, str] = {}
    current = None
    for line in layout.splitlines():
        if line.startswith("  ") and not line.startswith("   ") and line.split():
            current = line.split()[0]
            entries[current] = line.strip()[len(current) :].strip()
        elif current is not None and line.startswith("    "):
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def test_the_readme_layout_names_every_module_of_a_package() -> None:
    """README, "Layout": a package's description names each of its modules (``__init__`` aside),
    so the Layout is a map of the whole shell, not of its rooms only."""
    entries = layout_entries(readme_layout())
    modules = bot_modules()
    unnamed = [
        name
        for name in sorted(modules)
        if name.count(".") == 2
        and name.split(".")[2] != "__main__"
        and not re.search(rf"\b{re.escape(name.split('.')[2])}\b", entries.get(f"{name.split('.')[1]}/", ""))
    ]
    assert "turns" in entries["games/"] and any(name.startswith("bot.games.") for name in modules)  # not vacuous
    assert unnamed == []


def test_the_layout_entries_are_read_room_by_room() -> None:
    """The reader of the Layout block: a room's description runs on over its indented lines."""
    block = "rules/  games\n  a/    one (x),\n        two\n  b.py  three\ntests/  four\n"
    assert layout_entries(block) == {"a/": "one (x), two", "b.py": "three"}


# -- function length --------------------------------------------------------------------------

MAX_FUNCTION_LINES = 80  # from `def` to the last line, docstring and comments included
# The functions longer than that, as "path::name" with why they are still long: none. A new long
# function fails the test (split it into named parts, or list it here with why).
LONG_FUNCTIONS: dict[str, str] = {}


def function_lengths(root: Path, base: Path = REPO) -> Iterator[tuple[str, int]]:
    """Every function (and method) under `root`, as ("path::name", lines), the path from `base`."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                yield f"{path.relative_to(base).as_posix()}::{node.name}", node.end_lineno - node.lineno + 1


def test_no_function_is_longer_than_80_lines_but_the_listed_ones() -> None:
    """DESIGN.md, "Short functions": past 80 lines a function does several things.
    The long ones left are `LONG_FUNCTIONS`, each with why; the list only shrinks."""
    long = {
        name: lines
        for root in (BOT, REPO / "rules")
        for name, lines in function_lengths(root)
        if lines > MAX_FUNCTION_LINES
    }
    assert sorted(set(long) - set(LONG_FUNCTIONS)) == [], "split these (or say why not in LONG_FUNCTIONS)"
    assert sorted(set(LONG_FUNCTIONS) - set(long)) == [], "no longer long: take them off LONG_FUNCTIONS"


def test_the_length_check_sees_a_long_function(tmp_path: Path) -> None:
    """The checker: a function's lines run from its `def` to its last line."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n", encoding="utf-8")
    assert dict(function_lengths(tmp_path, tmp_path)) == {"m.py::short": 2, "m.py::long": MAX_FUNCTION_LINES + 1}
