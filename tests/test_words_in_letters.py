"""Every word a person reads is built in `bot/letters/` (briefing, house rules; architecture.md:
"letters decide how it reads"): an answer built with literal text elsewhere fails this test.

The code of `bot/` outside `bot/letters/` is read with `ast`. An *answer* is a call of
`Notice(...)` (bot.fate), `notice(...)` (bot.letters.notice) or a command's `refuse(...)`
(bot.commands.handlers: it builds a Notice); it is *built with literal text* when one of its
arguments that is words (every positional one, and `title=` / `text=`) is a string literal with
a letter in it, an f-string with such a part, or a sum or choice of them. The words come from
`bot.letters.words.say(kind, **facts)` (a template per kind of fact) or from a rendered
template instead: a call's result is never literal text, whatever its arguments.

`ALLOWED` lists modules still allowed such answers, by module, with how many; it is empty:
every answer of `bot/` takes its words from a template. A module may not gain one, and one
listed that loses some must be listed with fewer, so the list only shrinks.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOT = REPO / "bot"

ANSWERS = frozenset({"Notice", "notice", "refuse"})
WORD_KEYWORDS = frozenset({"title", "text"})

# Answers with literal text still allowed, by module: none.
ALLOWED: dict[str, int] = {}


def literal_words(node: ast.expr) -> bool:
    """Whether `node` is words written in the code: a string literal with a letter in it, an
    f-string with such a part, a sum or a choice of them, or a method of one ("...".format)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and any(c.isalpha() for c in node.value)
    if isinstance(node, ast.JoinedStr):
        return any(literal_words(part) for part in node.values if isinstance(part, ast.Constant))
    if isinstance(node, ast.BinOp):
        return literal_words(node.left) or literal_words(node.right)
    if isinstance(node, ast.IfExp):
        return literal_words(node.body) or literal_words(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return literal_words(node.func.value)
    return False


def answers_with_literal_words(source: str) -> list[int]:
    """The lines of `source` where an answer is built with literal words."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in ANSWERS:
            continue
        words = [*node.args, *(k.value for k in node.keywords if k.arg in WORD_KEYWORDS)]
        if any(literal_words(arg) for arg in words):
            found.append(node.lineno)
    return found


def offenders() -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in sorted(BOT.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("bot/letters/"):
            continue
        lines = answers_with_literal_words(path.read_text(encoding="utf-8"))
        if lines:
            counts[relative] = len(lines)
    return counts


def test_the_detector_finds_literal_words_and_passes_words_from_templates() -> None:
    assert answers_with_literal_words('Notice(to, "Too late", f"The deadline for {t} passed")') == [1]
    assert answers_with_literal_words('ctx.refuse("No seat", "You have no seat in " + name)') == [1]
    assert answers_with_literal_words('letters.notice(shell, s, to, title="Hi", text=x)') == [1]
    assert answers_with_literal_words('Notice(to, x if ok else "Refused", y)') == [1]
    assert answers_with_literal_words('Notice(to, say("intake_late_title", turn=t), say("intake_late"))') == []
    assert answers_with_literal_words('Notice(to, title, "\\n\\n".join(parts), kind="late")') == []


def test_no_answer_outside_letters_is_built_with_literal_words() -> None:
    """A module not on the list builds no answer with literal words; one on it, no more than
    listed (and exactly as many: a module that moved words is listed with fewer)."""
    found = offenders()
    new = {path: count for path, count in found.items() if count > ALLOWED.get(path, 0)}
    assert not new, f"answers built with literal words (move them to templates/_common/words/): {new}"
    shrunk = {path: (ALLOWED[path], found.get(path, 0)) for path in ALLOWED if found.get(path, 0) < ALLOWED[path]}
    assert not shrunk, f"fewer answers with literal words than ALLOWED lists (listed, found): {shrunk}; update it"


def test_the_intake_builds_every_answer_from_templates() -> None:
    """The intake's answers (orders confirmed or refused, notes, strangers, oversize mail) are
    all words from templates: no module of bot/intake/ is on the list."""
    assert not [path for path in offenders() if path.startswith("bot/intake/")]
    assert not [path for path in ALLOWED if path.startswith("bot/intake/")]
