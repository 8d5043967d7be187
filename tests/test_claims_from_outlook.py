"""Every claim a letter makes about what happens next -- the turn's deadline or its absence,
whether the game is paused, whether the turn is resolved, what counts for a seat if nothing
arrives (its orders, the GM's plot or the game's default) -- is read from the outlook the
deadline itself uses (`bot.outlook`: `timing` for the deadline, `what_counts` / `of_turn` /
`nmr_default` for the orders), never recomputed beside it (briefing, house rules: "claims about
what happens next come from the outlook, never recomputed beside it").

The code is read with `ast`. A *recomputation* is a read of one of the turn's or the seat's own
columns that decide those facts (`FACT_COLUMNS`: `Turn.deadline`, `Turn.resolved_at`,
`Seat.gm_plot`, `Game.grace_minutes`, `Game.early_resolution`), a test of `GameStatus.PAUSED`, or a call of the rules'
own default or plot (`default_orders`, `plot_orders`, `filled_orders`) or of the deadline's
closing time (`closing_time`, which is the outlook's `Timing.closes`):

* anywhere in bot/letters/ (the letters render what they are handed and what the outlook says);
* outside it, in the facts handed to a letter: the arguments of `say(...)`, of an answer
  (`Notice`, `notice`, `refuse`, `announce`, `News`), of a template's `render(...)`, of a
  context's `update(...)`, of a letter's `claiming(...)`, and the values of a dict of facts
  later handed to `say(**facts)`.

The outlook (bot/outlook.py) is where they are read; what decides the game's course (the
deadline, the GM's commands that move it, the store) reads the columns as it must, and is not a
letter. No module is let through by name: `test_a_planted_recomputation_is_found` plants one in
bot/letters/ and one in a command's facts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.source_trees import parsed

REPO = Path(__file__).resolve().parents[1]
BOT = REPO / "bot"

# The columns that decide the deadline, the resolution and the default (read by bot/outlook.py).
FACT_COLUMNS = frozenset({"deadline", "resolved_at", "gm_plot", "grace_minutes", "early_resolution"})
# `GameStatus.PAUSED`: whether a deadline runs (the outlook's `Timing.paused`).
FACT_CONSTANTS = frozenset({"PAUSED"})
# The rules' own statement of the default or of a plot, and the deadline's closing time.
FACT_CALLS = frozenset({"default_orders", "plot_orders", "filled_orders", "closing_time"})
# The calls whose arguments are facts a letter is built from.
LETTER_CALLS = frozenset({"say", "Notice", "notice", "refuse", "announce", "News", "render", "update", "claiming"})


def _name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _reads(node: ast.AST) -> Iterator[int]:
    """The lines under `node` that read a deciding column, the PAUSED status or call the rules'
    default, a plot's reading or the closing time."""
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Load):
            if child.attr in FACT_CONSTANTS or (child.attr in FACT_COLUMNS and not _column_of_a_model(child)):
                yield child.lineno
        if isinstance(child, ast.Call) and _name(child.func) in FACT_CALLS:
            yield child.lineno


def _splatted(function: ast.AST) -> set[str]:
    """The names handed to `say` as ``**name`` in `function`."""
    return {
        keyword.value.id
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and _name(node.func) == "say"
        for keyword in node.keywords
        if keyword.arg is None and isinstance(keyword.value, ast.Name)
    }


def _column_of_a_model(node: ast.Attribute) -> bool:
    """A model's column named in a query (`Turn.resolved_at.is_not(None)`: which rows, the turns
    gone by a HISTORY lists), not a row's value."""
    return isinstance(node.value, ast.Name) and node.value.id[:1].isupper()


def handed_to_letters(source: str) -> list[int]:
    """The lines of `source` (a module outside bot/letters/) where a fact handed to a letter
    is recomputed beside the outlook."""
    tree = parsed(source)
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in LETTER_CALLS:
            for arg in (*node.args, *(k.value for k in node.keywords)):
                found.update(_reads(arg))
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        splatted = _splatted(function)
        handed = _handed(function)
        for node in ast.walk(function):
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            targets = {
                t.id
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name)
            }
            if targets & handed or (isinstance(node.value, ast.Dict) and targets & splatted):
                found.update(_reads(node.value))
    return sorted(found)


def _handed(function: ast.AST) -> set[str]:
    """The names `function` hands to a letter (read in an argument of a `LETTER_CALLS` call)."""
    return {
        name.id
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and _name(node.func) in LETTER_CALLS
        for arg in (*node.args, *(k.value for k in node.keywords))
        for name in ast.walk(arg)
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)
    }


def in_letters(source: str) -> list[int]:
    """The lines of `source` (a module of bot/letters/) that recompute a fact beside the outlook."""
    return sorted(set(_reads(parsed(source))))


def offenders(root: Path = REPO) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted((root / "bot").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == "bot/outlook.py":
            continue
        source = path.read_text(encoding="utf-8")
        lines = in_letters(source) if relative.startswith("bot/letters/") else handed_to_letters(source)
        if lines:
            found[relative] = lines
    return found


# A letter and a command's answer as they read the facts beside the outlook, and as they read
# them from it.
LETTER_BESIDE = """
def reminder(shell, game, turn, seat, zone):
    deadline = format_local(as_utc(turn.deadline), zone) if turn.deadline else None
    default = rules.format_orders(rules.default_orders(state, seat.name))
    return render("reminder", {"deadline": deadline, "paused": game.status == GameStatus.PAUSED})
"""
LETTER_FROM_OUTLOOK = """
def reminder(shell, game, turn, seat, zone):
    when = timing(game, turn)
    deadline = deadline_text(when, zone)
    default = what_counts(rules, state, seat, None).text
    return render("reminder", {"deadline": deadline, "paused": when.paused})
"""
COMMAND_BESIDE = """
def clear(ctx, command):
    default, source = nmr_default(rules, state, seat)
    text = say("cleared", paused=seat.game.status == GameStatus.PAUSED, plot=seat.gm_plot is not None)
    facts = {"turn": turn.label, "deadline": format_local(turn.deadline, zone)}
    ctx.notice(to, say("wait_title"), say("wait", **facts), resolved=turn.resolved_at is not None)
    closing = closing_time(game, turn)
    turn.deadline = new
    undo = {"deadline": turn.deadline.isoformat()}
"""
COMMAND_FROM_OUTLOOK = """
def clear(ctx, command):
    counting = what_counts(rules, state, seat, None)
    when = timing(seat.game, turn)
    text = say("cleared", paused=when.paused, plot=counting.source is Source.PLOT)
    facts = {"turn": turn.label, "deadline": due_by(shell, when, zone)}
    ctx.notice(to, say("wait_title"), say("wait", **facts), resolved=when.resolved)
    turn.deadline = new
    undo = {"deadline": turn.deadline.isoformat()}
"""


def test_the_detector_finds_facts_recomputed_beside_the_outlook() -> None:
    """In a letter any read of the deciding columns, the PAUSED status, the rules' default is
    found; in a command, the ones handed to a letter (a `say` fact, an answer's argument, a
    dict of facts splatted into `say`), not the code that moves the deadline or keeps an undo
    record. Read from the outlook, both pass."""
    assert in_letters(LETTER_BESIDE) == [3, 4, 5]
    assert in_letters(LETTER_FROM_OUTLOOK) == []
    assert handed_to_letters(COMMAND_BESIDE) == [4, 5, 6]
    assert handed_to_letters(COMMAND_FROM_OUTLOOK) == []


def test_a_planted_recomputation_is_found(tmp_path: Path) -> None:
    """There is no list of modules let through: one planted in bot/letters/ and one in a
    command are found; the outlook itself is where the facts are read."""
    for where, text in (
        ("bot/letters/reminder.py", LETTER_BESIDE),
        ("bot/commands/player.py", COMMAND_BESIDE),
        ("bot/outlook.py", LETTER_BESIDE),
    ):
        planted = tmp_path / where
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(text, encoding="utf-8")
    assert offenders(tmp_path) == {"bot/letters/reminder.py": [3, 4, 5], "bot/commands/player.py": [4, 5, 6]}


def test_every_letter_reads_the_deadline_the_default_and_the_resolution_from_the_outlook() -> None:
    """No letter, and no fact handed to one, reads the deadline, the pause, the resolution or
    the default beside the outlook."""
    found = offenders()
    assert not found, f"facts read beside the outlook (read bot.outlook.timing / what_counts): {found}"
