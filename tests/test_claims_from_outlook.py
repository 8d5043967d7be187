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
closing time (`closing_time`, which is the outlook's `Timing.closes`), or a reading of who has
orders on file or holds the turn from the turn's rows (`orders_on_file`, `holds`: the outlook's
`on_file`, `Outlook.status`, `Outlook.defaulted`, `Outlook.held` say it):

* anywhere in bot/letters/ (the letters render what they are handed and what the outlook says);
* outside it, in the facts handed to a letter: the arguments of `say(...)`, of an answer
  (`Notice`, `notice`, `refuse`, `announce`, `News`), of a template's `render(...)`, of a
  context's `update(...)`, of a letter's `claiming(...)`, and the values of a dict of facts
  later handed to `say(**facts)`;
* in the whole body of a function whose dict of facts is handed to a letter (`fact_builders`:
  the digest's and a GM's STATUS's block of a game, `game_summary`, built in bot/games/ and
  handed to the digest in bot/gm/), read as a letter is.

The outlook (bot/outlook.py) is where they are read; what decides the game's course (the
deadline, the GM's commands that move it, the store) reads the columns as it must, and is not a
letter. No module is let through by name: `test_a_planted_recomputation_is_found` plants one in
bot/letters/ and one in a command's facts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
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
# Who has orders on file, and whose WAIT holds the turn, read from the turn's submissions: the
# outlook's `Outlook.status`, `Outlook.defaulted`, `Outlook.held`, `outlook.on_file` say it.
WHO_CALLS = frozenset({"orders_on_file", "holds"})
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
        if isinstance(child, ast.Call) and _name(child.func) in FACT_CALLS | WHO_CALLS:
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


def _returns_a_dict(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `function` is declared to return a dict (a letter's facts: `-> dict[str, Any]`)."""
    returns = function.returns
    target = returns.value if isinstance(returns, ast.Subscript) else returns
    return isinstance(target, ast.Name) and target.id in ("dict", "Mapping")


def fact_builders(sources: Iterable[str]) -> set[str]:
    """The names of the functions whose result is handed to a letter: called in a letter's
    facts (an argument of a `LETTER_CALLS` call, at any depth: `ctx.update({"games":
    [game_summary(...)]})`) or bound to a name handed to one (`ctx = gm_context(...)`)."""
    names: set[str] = set()
    for source in sources:
        for function in ast.walk(parsed(source)):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            handed = _handed(function)
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and _name(node.func) in LETTER_CALLS:
                    values: list[ast.expr] = [*node.args, *(k.value for k in node.keywords)]
                elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in handed for t in node.targets
                ):
                    values = [node.value]
                else:
                    continue
                names.update(
                    name
                    for value in values
                    for call in ast.walk(value)
                    if isinstance(call, ast.Call) and (name := _name(call.func)) is not None
                )
    return names - LETTER_CALLS


def in_fact_builders(source: str, builders: set[str]) -> list[int]:
    """The lines of `source` where a function whose dict of facts is handed to a letter (one of
    `builders`, declared to return a dict: the digest's and a GM's STATUS's block of a game,
    `bot.games.summary.game_summary`) reads a fact beside the outlook: its whole body is a
    letter's facts, read as a letter is."""
    return sorted(
        {
            line
            for function in ast.walk(parsed(source))
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            and function.name in builders
            and _returns_a_dict(function)
            for line in _reads(function)
        }
    )


def in_letters(source: str) -> list[int]:
    """The lines of `source` (a module of bot/letters/) that recompute a fact beside the outlook."""
    return sorted(set(_reads(parsed(source))))


def offenders(root: Path = REPO) -> dict[str, list[int]]:
    sources = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((root / "bot").rglob("*.py"))
    }
    builders = fact_builders(sources.values())
    found: dict[str, list[int]] = {}
    for relative, source in sources.items():
        if relative == "bot/outlook.py":
            continue
        if relative.startswith("bot/letters/"):
            lines = in_letters(source)
        else:
            lines = sorted(set(handed_to_letters(source)) | set(in_fact_builders(source, builders)))
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
# The GM's block of a game (the digest, a GM's STATUS): a dict of facts built in one module and
# handed to a letter in another; and the GM sheet's list of who is missing.
SUMMARY_BESIDE = """
def block(shell, session, game, zone) -> dict[str, Any]:
    out = {"name": game.name, "grace": game.grace_minutes}
    for name in sorted(rules.expected_players(state)):
        seat = store.seat_named(game, name)
        if store.holds(subs.get(seat.id, ())):
            out["held"].append(name)
        if store.orders_on_file(rules, state, seat, subs.get(seat.id, ())) is None:
            out["missing"].append(name)
    out["plots"] = [s.name for s in game.seats if s.gm_plot]
    return out


def deadline_passed(game, turn) -> bool:
    return turn.deadline < now
"""
SUMMARY_FROM_OUTLOOK = """
def block(shell, session, game, zone) -> dict[str, Any]:
    out = {"name": game.name}
    out.update(who_is_in(outlook.of_turn(game, rules, state, subs), shown))
    out["plots"] = list(outlook.plotted(game))
    return out


def deadline_passed(game, turn) -> bool:
    return turn.deadline < now
"""
DIGEST = """
def send_digest(shell, session, games):
    ctx.update({"games": [block(shell, session, g, zone) for g in games], "late": deadline_passed(g, t)})
"""
GM_SHEET_BESIDE = """
def gm_context(shell, session, game, rules, state, turn, subs):
    missing = []
    for name in sorted(rules.expected_players(state)):
        if orders_on_file(rules, state, store.seat_named(game, name), subs) is None:
            missing.append(name)
    return {"missing": missing}
"""
GM_SHEET_FROM_OUTLOOK = """
def gm_context(shell, session, game, rules, state, turn, subs):
    missing = list(outlook.of_turn(game, rules, state, subs).defaulted)
    return {"missing": missing}
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


def test_a_dict_of_facts_built_for_a_letter_elsewhere_is_read_as_a_letter() -> None:
    """The digest's block of a game is built in one function (`game_summary`) and handed to
    the digest in another: the builder's whole body is read as a letter's (the deadline's
    columns, the GM's plot, who has orders on file, whose WAIT holds the turn), a function
    handed to a letter that returns no dict (a decision, `turns.is_due`) is not; the GM sheet's
    "Still missing" list, read from the turn's rows, is found. Read from the outlook, they pass."""
    builders = fact_builders([DIGEST])
    assert {"block", "deadline_passed"} <= builders
    assert in_fact_builders(SUMMARY_BESIDE, builders) == [3, 6, 8, 10]
    assert in_fact_builders(SUMMARY_FROM_OUTLOOK, builders) == []
    assert in_fact_builders(SUMMARY_BESIDE, fact_builders([])) == [], "a dict handed to no letter is no letter's"
    assert in_letters(GM_SHEET_BESIDE) == [5]
    assert in_letters(GM_SHEET_FROM_OUTLOOK) == []


def test_a_planted_recomputation_is_found(tmp_path: Path) -> None:
    """There is no list of modules let through: one planted in bot/letters/ and one in a
    command are found; the outlook itself is where the facts are read."""
    for where, text in (
        ("bot/letters/reminder.py", LETTER_BESIDE),
        ("bot/commands/player.py", COMMAND_BESIDE),
        ("bot/outlook.py", LETTER_BESIDE),
        ("bot/games/summary.py", SUMMARY_BESIDE),
        ("bot/gm/digest.py", DIGEST),
        ("bot/letters/sheets.py", GM_SHEET_BESIDE),
    ):
        planted = tmp_path / where
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(text, encoding="utf-8")
    assert offenders(tmp_path) == {
        "bot/letters/reminder.py": [3, 4, 5],
        "bot/commands/player.py": [4, 5, 6],
        "bot/games/summary.py": [3, 6, 8, 10],
        "bot/letters/sheets.py": [5],
    }


def test_every_letter_reads_the_deadline_the_default_and_the_resolution_from_the_outlook() -> None:
    """No letter, and no fact handed to one, reads the deadline, the pause, the resolution or
    the default beside the outlook."""
    found = offenders()
    assert not found, f"facts read beside the outlook (read bot.outlook.timing / what_counts): {found}"
