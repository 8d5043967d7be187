"""Every word a person reads is built in `bot/letters/` (briefing, house rules; architecture.md:
"letters decide how it reads"): an answer built with literal text elsewhere fails this test.

The code of `bot/` outside `bot/letters/` is read with `ast`. An *answer* is a call of
`Notice(...)` (bot.fate), `notice(...)` (bot.letters.notice), a command's `refuse(...)`
(bot.commands.handlers: it builds a Notice), a `Refused(detail)` raised without an answer of its
own (its detail is mailed back: a GM command's refusal) and the domain's refusals a GM command's
answer carries (`GameError`, `DeadlineError`, `SeasonRequestError`), a GM command's `announce(...)` or
`News(...)` (what the players are told), and what a command's handler returns (the handlers of
`bot.commands.registry`: a GM command's confirmation, a player command's `Reply`). It is *built
with literal text* when one of its arguments that is words (every positional one, and `title=` /
`text=`), or the value a handler returns, is words written in the code. Words handed on through
a call into another function, to become an answer there, are caught where they are most often
passed: a keyword argument named `text`, `title`, `reason`, `body`, `summary`, `description` or
`note` given words, in a call of any function but `say` (whose facts are checked as below) and
argparse's (the command line's help); and words given, by position or by name, to a parameter
that becomes an answer's words in the function called (`reaching_parameters`: a module's own
function, or another module's public one, through one function or several). Words are:

* a string literal with a letter in it, an f-string with such a part, a sum, choice or `or` of
  them, a method of one ("...".format), or a join of them (", ".join(f"{s} in {g}" ...));
* a name the function assigned such words to (anywhere in it);
* a call of a function of the same module that returns a *sentence* (words with a space in
  them: "the GM of " + name), directly or through another;
* `say(kind, ...)` given a sentence as a fact: the template's facts are values (names, labels,
  numbers, tokens such as "on" or "gm"), never the words themselves.

The words come from `bot.letters.words.say(kind, **facts)` (a template per kind of fact) or from
a rendered template instead: any other call's result is never literal text, whatever its
arguments.

No module is allowed such an answer: there is no list of exceptions, and a module that builds
one fails the test (`test_a_module_that_builds_an_answer_with_words_fails_the_check` plants
one). A domain refusal that needs words carries facts instead: a bad time or schedule is a
`bot.schedules.DeadlineError` with its `Problem`, rendered by `bot.letters.refusals`.

The rulebook's refusals (`rules/`: an order that cannot stand, a figure or an option out of
range, a season's settings, a track, a map, a script) are the rule's own sentence: `rules/` is
pure and renders no template. Such a sentence reaches a person only as a fact a template frames
as the rule's reason (docs/DESIGN.md, "Words live in letters"): where `bot/` catches a rules
error by name (or by a tuple of names that holds one), the error is handed only to
`bot.letters.refusals.refusal` or as a fact to `say(kind, reason=...)`, logged, chained
(``raise ... from error``) or tested with `isinstance`; never given words of the code's own
(`GameError(f"bad option: {error}")`). `rule_text_outside_templates` finds the rest. A rule's
reason read without an exception (a parse's `Problem.reason`) is never put in an f-string, a
sum or a join with words either (`reason_in_words`: a refused set's record detail, listed in
the GM's digest, is `say("orders_refused_detail", ...)`); `flagman verify` (bot/verify.py, a
program any player runs, its one line at the terminal) is the command line's, out of scope.

A mail's record (`InboundMessage.detail`, the GM's digest and `flagman gm audit` list it) is
words a person reads too: the detail of a `Refused(`, `Ignored(`, `Done(` or `InboundMessage(`
(`RECORDS`; its first argument or `detail=`) is `say("mail_record", why=..., ...)`, never words
written in the code (`record_details_with_literal_words`). So are a command's label (the record's "commands:
..." line: `bot.letters.records.command_label(verb, *values, came=...)`, never a `label=` in words,
`labels_with_literal_words`) and why the ignore policy passed a mail by (the parser's typed
`Ignore`, its words the letters' ``ignore_detail``, `ignore_details_with_literal_words`).

Out of scope: the command line's own output to the operator at the terminal (bot/cli/: `print`,
argparse's help and errors, the `flagman play` front end) is no letter, and its words stay in
bot/cli/ and bot/ops/. What the command line prints of a letter's refusal (a GM command's
answer, a bad time or schedule) is the letters' words, the same as by mail. Answers built in
bot/cli/ (a `Notice`, a `refuse`) are read like any module's.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.source_trees import parsed

REPO = Path(__file__).resolve().parents[1]
BOT = REPO / "bot"

# The calls that make an answer, with the positions of their arguments that are words (None:
# every positional one): a GM command's `announce(ctx, title, text, kind=...)` and its
# `News(title, text, kind, ...)`.
ANSWERS: dict[str, tuple[int, ...] | None] = {
    "Notice": None,
    "notice": None,
    "refuse": None,
    "announce": (1, 2),
    "News": (0, 1),
}
WORD_KEYWORDS = frozenset({"title", "text"})
# The same calls' word places exactly (a parameter handed to one becomes an answer's words):
# `Notice(to, title, text)`, `notice(shell, session, to, title, text)`, `ctx.refuse(title, text)`.
WORD_PLACES: dict[str, frozenset[int]] = {
    "Notice": frozenset({1, 2}),
    "notice": frozenset({3, 4}),
    "refuse": frozenset({0, 1}),
    "announce": frozenset({1, 2}),
    "News": frozenset({0, 1}),
}
# Keyword arguments that hand words on to become an answer in the function called (a Notice's
# text, a calendar event's summary, a refusal's reason ...), in a call of any function but `say`.
PASSED_KEYWORDS = frozenset({"text", "title", "reason", "body", "summary", "description", "note"})
# The command line's help (argparse's `description=`, `title=`): the operator's terminal, out of
# scope (see above).
ARGPARSE = frozenset(
    {"ArgumentParser", "_Parser", "add_parser", "add_subparsers", "add_argument", "add_argument_group"}
)
# A refusal (`bot.fate.Refused(detail)`) without an answer of its own: its detail is mailed back
# as it is (a GM command's refusal), so it is words; with an answer, the detail is the record's.
# So are the domain's own refusals a GM command's answer carries (`bot.commands.registry`'s
# `_GM_REFUSALS`: a game that cannot be made or started, a bad time or schedule, a season).
REFUSALS = frozenset({"Refused", "GameError", "DeadlineError", "SeasonRequestError"})
SAY = "say"


def _is_words(text: str, *, sentence: bool) -> bool:
    """Whether a literal is words: a letter in it (a sentence: and a space, so that a token
    such as "on" or "gm" handed to a template as a fact is not words)."""
    return any(c.isalpha() for c in text) and (not sentence or any(c.isspace() for c in text))


@dataclass(frozen=True, slots=True)
class Words:
    """What carries words in one function: the names assigned words (`names`; `sentences`:
    those assigned a sentence) and the module's functions that return a sentence (`helpers`)."""

    names: frozenset[str] = frozenset()
    sentences: frozenset[str] = frozenset()
    helpers: frozenset[str] = frozenset()


def literal_words(node: ast.expr, known: Words = Words(), *, sentence: bool = False) -> bool:
    """Whether `node` is words written in the code: a string literal with a letter in it, an
    f-string with such a part, a sum, choice or `or` of them, a method of one ("...".format), a
    join or a comprehension of them, a name assigned words, a call of a function of the module
    that returns words (`known`), or `say(...)` given words (a sentence) as a fact."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and _is_words(node.value, sentence=sentence)
    if isinstance(node, ast.JoinedStr):
        return any(
            isinstance(part, ast.Constant) and isinstance(part.value, str) and _is_words(part.value, sentence=sentence)
            for part in node.values
        )
    if isinstance(node, ast.BinOp):
        return literal_words(node.left, known, sentence=sentence) or literal_words(node.right, known, sentence=sentence)
    if isinstance(node, ast.IfExp):
        return literal_words(node.body, known, sentence=sentence) or literal_words(
            node.orelse, known, sentence=sentence
        )
    if isinstance(node, ast.BoolOp):
        return any(literal_words(value, known, sentence=sentence) for value in node.values)
    if isinstance(node, ast.Name):
        return node.id in (known.sentences if sentence else known.names)
    if isinstance(node, ast.GeneratorExp | ast.ListComp):
        return literal_words(node.elt, known, sentence=sentence)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            if isinstance(node.func.value, ast.Constant) and node.func.attr == "join":  # ", ".join(words)
                return literal_words(node.func.value, known, sentence=sentence) or any(
                    literal_words(arg, known, sentence=sentence) for arg in node.args
                )
            return literal_words(node.func.value, known, sentence=sentence)
        if isinstance(node.func, ast.Name):
            if node.func.id in known.helpers:
                return True
            if node.func.id == SAY:
                return any(literal_words(k.value, known, sentence=True) for k in node.keywords)
    return False


@cache
def _functions(tree: ast.Module) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...]:
    """Every function of the module, at any depth (once for each tree `parsed` shares)."""
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))


def _scopes(tree: ast.Module) -> tuple[ast.Module | ast.FunctionDef | ast.AsyncFunctionDef, ...]:
    """The module and every function in it."""
    return (tree, *_functions(tree))


@cache
def _calls(node: ast.AST) -> tuple[ast.Call, ...]:
    """Every call in `node`, at any depth."""
    return tuple(n for n in ast.walk(node) if isinstance(n, ast.Call))


@cache
def _own(scope: ast.AST) -> tuple[ast.AST, ...]:
    """The nodes of `scope` outside the functions defined in it, in the order of the source."""
    found: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return tuple(sorted(found, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))))


def _assigned(scope: ast.AST, known: Words, *, sentence: bool) -> frozenset[str]:
    """The names `scope` assigns words to (a sentence, with `sentence`), anywhere in it: a name
    once assigned words is words."""
    names: set[str] = set()
    for _ in range(2):  # a name assigned from one that is assigned words further down, in a loop
        for node in _own(scope):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                current = (
                    Words(known.names, frozenset(names), known.helpers)
                    if sentence
                    else Words(frozenset(names), known.sentences, known.helpers)
                )
                if literal_words(node.value, current, sentence=sentence):
                    names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


@cache
def _known(scope: ast.AST, helpers: frozenset[str]) -> Words:
    """What carries words in `scope`, given the module's `helpers` (a scope of a tree `parsed`
    shares: worked out once for each)."""
    sentences = _assigned(scope, Words(helpers=helpers), sentence=True)
    return Words(_assigned(scope, Words(sentences=sentences, helpers=helpers), sentence=False), sentences, helpers)


def _returns_words(function: ast.FunctionDef | ast.AsyncFunctionDef, known: Words, *, sentence: bool) -> bool:
    return any(
        isinstance(node, ast.Return) and node.value is not None and literal_words(node.value, known, sentence=sentence)
        for node in _own(function)
    )


@cache
def _helpers(tree: ast.Module) -> frozenset[str]:
    """The module's own functions that return words (a sentence), directly or from another."""
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    helpers: frozenset[str] = frozenset()
    while True:
        more = frozenset(f.name for f in functions if _returns_words(f, _known(f, helpers), sentence=True))
        if more == helpers:
            return helpers
        helpers = more


def answers_with_literal_words(
    source: str, handlers: Collection[str] = (), reaching: Mapping[str, Reach] | None = None
) -> list[int]:
    """The lines of `source` where an answer is built with literal words: an answer's call
    (`ANSWERS`) given words, a return of one of `handlers` (command handlers, by name) that is
    words, or a call of a function of `reaching` (by name: `reaching_parameters`) given words in
    a parameter that becomes an answer's words there."""
    tree = parsed(source)
    reaching = reaching_parameters((source,)) if reaching is None else reaching
    helpers = _helpers(tree)
    found: set[int] = set()
    for scope in _scopes(tree):
        known = _known(scope, helpers)
        for node in _own(scope):
            name = _name(node.func) if isinstance(node, ast.Call) else None
            if (
                isinstance(node, ast.Call)
                and name in REFUSALS
                and len(node.args) == 1
                and not any(k.arg == "answer" for k in node.keywords)
                and literal_words(node.args[0], known)
            ):
                found.add(node.lineno)
            if isinstance(node, ast.Call) and name in ANSWERS:
                places = ANSWERS[name]
                given = [arg for i, arg in enumerate(node.args) if places is None or i in places]
                words = [*given, *(k.value for k in node.keywords if k.arg in WORD_KEYWORDS)]
                if any(literal_words(arg, known) for arg in words):
                    found.add(node.lineno)
            if isinstance(node, ast.Call) and name != SAY and name not in ARGPARSE:
                passed = [k.value for k in node.keywords if k.arg in PASSED_KEYWORDS]
                if any(literal_words(arg, known) for arg in passed):
                    found.add(node.lineno)
            if isinstance(node, ast.Call) and name is not None and name in reaching and name not in ANSWERS:
                reach = reaching[name]
                # A method called on its object: its first parameter (self) is not among the arguments.
                shift = 1 if isinstance(node.func, ast.Attribute) and reach.method else 0
                given = [arg for i, arg in enumerate(node.args) if i + shift in reach.positions]
                given += [k.value for k in node.keywords if k.arg in reach.names]
                if any(literal_words(arg, known) for arg in given):
                    found.add(node.lineno)
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and scope.name in handlers:
            found.update(
                node.lineno
                for node in _own(scope)
                if isinstance(node, ast.Return) and node.value is not None and literal_words(node.value, known)
            )
    return sorted(found)


def _name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


@dataclass(frozen=True, slots=True)
class Reach:
    """The parameters of a function (by position, and by name) whose value becomes an answer's
    words in it; `method`: its first parameter is ``self`` or ``cls``."""

    positions: frozenset[int]
    names: frozenset[str]
    method: bool = False


def _answer_words(node: ast.Call, reaching: Mapping[str, Reach]) -> list[ast.expr]:
    """The arguments of `node` that become an answer's words: an answer's word places, a
    refusal's detail without an answer, a keyword that hands words on, or a parameter of a
    function of `reaching` that does."""
    name = _name(node.func)
    found: list[ast.expr] = []
    if name in WORD_PLACES:
        found += [arg for i, arg in enumerate(node.args) if i in WORD_PLACES[name]]
        found += [k.value for k in node.keywords if k.arg in WORD_KEYWORDS]
    if name in REFUSALS and len(node.args) == 1 and not any(k.arg == "answer" for k in node.keywords):
        found.append(node.args[0])
    if name is not None and name in reaching and name not in ANSWERS and name != SAY:
        reach = reaching[name]
        shift = 1 if isinstance(node.func, ast.Attribute) and reach.method else 0
        found += [arg for i, arg in enumerate(node.args) if i + shift in reach.positions]
        found += [k.value for k in node.keywords if k.arg in reach.names]
    return found


def reaching_parameters(sources: Iterable[str], seed: Mapping[str, Reach] | None = None) -> dict[str, Reach]:
    """The functions of `sources` (by name) with a parameter that becomes an answer's words in
    them: handed as it is (a bare name) to an answer's word place (`WORD_PLACES`, a title or
    text keyword, a refusal's detail without an answer), or to such a parameter of another of
    them (or of `seed`'s, the other modules' public functions)."""
    functions = [node for source in sources for node in _functions(parsed(source))]
    reaching: dict[str, Reach] = dict(seed or {})
    while True:
        more: dict[str, Reach] = dict(seed or {})
        for function in functions:
            params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            keyword_only = [a.arg for a in function.args.kwonlyargs]
            handed = {
                arg.id
                for node in _calls(function)
                for arg in _answer_words(node, reaching)
                if isinstance(arg, ast.Name)
            }
            positions = frozenset(i for i, p in enumerate(params) if p in handed)
            names = frozenset(p for p in (*params, *keyword_only) if p in handed)
            if names:
                old = more.get(function.name, Reach(frozenset(), frozenset()))
                method = bool(params) and params[0] in {"self", "cls"}
                more[function.name] = Reach(old.positions | positions, old.names | names, method or old.method)
        if more == reaching:
            return reaching
        reaching = more


def handlers() -> dict[str, frozenset[str]]:
    """The command handlers, by module path: the values of `bot.commands.registry`'s
    PLAYER_HANDLERS and GM_HANDLERS (``module.function``, a module of bot/commands/)."""
    tree = parsed((BOT / "commands" / "registry.py").read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.AnnAssign):
            continue
        if isinstance(node.target, ast.Name) and node.target.id in {"PLAYER_HANDLERS", "GM_HANDLERS"}:
            assert isinstance(node.value, ast.Dict)
            for value in node.value.values:
                assert isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name), ast.dump(value)
                path = f"bot/commands/{value.value.id}.py"
                assert (REPO / path).is_file(), path
                found.setdefault(path, set()).add(value.attr)
    assert len(found) >= 5, found
    return {path: frozenset(names) for path, names in found.items()}


def offenders(root: Path = REPO) -> Counter[str]:
    """The modules of `root`/bot outside bot/letters/ that build answers with literal words,
    with how many."""
    counts: Counter[str] = Counter()
    by_module = handlers()
    sources = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((root / "bot").rglob("*.py"))
    }
    # A private function (`_refuse`) is its module's: another module's of the same name is another.
    public: dict[str, Reach] = {}
    for _ in range(2):  # a public function that hands words to another module's
        public = {
            name: reach
            for source in sources.values()
            for name, reach in reaching_parameters((source,), public).items()
            if not name.startswith("_")
        }
    for relative, source in sources.items():
        if relative.startswith("bot/letters/"):
            continue
        reaching = reaching_parameters((source,), public)
        lines = answers_with_literal_words(source, by_module.get(relative, ()), reaching)
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
    assert answers_with_literal_words('Notice(to, t, ", ".join(f"{s} in {g}" for s, g in seats))') == [1]
    assert answers_with_literal_words('Notice(to, t, ", ".join(s.name for s in seats))') == []
    # A refusal mails its detail back, unless it carries an answer of its own.
    assert answers_with_literal_words('raise Refused(f"{game} is not paused")') == [1]
    assert answers_with_literal_words('raise Refused(say("gm_refused", why="not_paused", game=game))') == []
    assert answers_with_literal_words('raise Refused("which game?", which_game(mail), label="x")') == []


# A GM command's handler as the GM's module had them: its announcement to the players and the
# answer it returns are words written in the code, one through a name, one through a helper.
WORDS_IN_CODE = """
def _due(turn):
    return deadline_text(turn) or "at the GM's call"

def pause(ctx, args):
    announce(ctx, f"{ctx.game.name} is paused", "The GM has paused the game.", kind="pause")
    text = f"{ctx.game.name} is paused"
    return text + "; the players were told."

def start(ctx, args):
    return say("gm_started", game=ctx.game.name, due=_due(ctx.turn))

def ping(ctx, command):
    text = say("commands_ping", whom="the GM of " + name)
    return Reply((Notice(ctx.to, say("commands_ping_title"), text),))
"""

# The same with the words in templates: facts only (names, labels, tokens such as "on").
WORDS_IN_TEMPLATES = """
def _on(value):
    return "on" if value else "off"

def pause(ctx, args):
    announce(ctx, say("gm_paused_title", game=ctx.game.name), say("gm_paused"), kind="pause")
    return say("gm_paused_done", game=ctx.game.name, label=turn.label)

def start(ctx, args):
    text = say("gm_started", game=ctx.game.name, due=deadline_text(ctx.turn), how=_on(True), kind="gm")
    return text

def ping(ctx, command):
    text = say("commands_ping", whom=ctx.who.name, proof=ctx.who.proof)
    return Reply((Notice(ctx.to, say("commands_ping_title"), text),))

def resign(ctx, command):
    ctx.news.append(News(say("resigned_players_title"), say("resigned_players"), "resign"))

def helper_not_a_handler(ctx):
    return f"{ctx.game.name} is paused"
"""


def test_the_detector_finds_words_in_announcements_and_in_the_answers_handlers_return() -> None:
    """An announcement given words, a handler returning words (itself, through a name assigned
    them or through a helper of its module that returns them) and a template given a sentence
    as a fact are found; the same built from templates passes, and a function that is no
    handler may return what it likes (it is no answer)."""
    handlers = {"pause", "start", "ping", "resign"}
    assert answers_with_literal_words(WORDS_IN_CODE, handlers) == [6, 8, 11, 15]
    assert answers_with_literal_words(WORDS_IN_TEMPLATES, handlers) == []
    assert answers_with_literal_words(WORDS_IN_CODE) == [6, 15]  # no handlers named: the calls alone


def test_the_handlers_are_read_from_the_registry() -> None:
    """The handlers the test knows are the registry's, GM and player commands alike."""
    found = handlers()
    assert {"extend", "rollback", "replace_seat", "start"} <= found["bot/commands/gm.py"]
    assert {"status", "resign", "wait"} <= found["bot/commands/player.py"]
    assert "ping" in found["bot/commands/streams.py"]


def test_no_answer_outside_letters_is_built_with_literal_words() -> None:
    """No module of bot/ outside bot/letters/ builds an answer with literal words: the intake's
    answers, the GM commands', the domain's refusals (a bad time or schedule, a game that cannot
    be made, exported or replayed) all take their words from templates."""
    found = offenders()
    assert not found, f"answers built with literal words (move them to templates/_common/words/): {dict(found)}"


# A module as bot.schedules had its refusals, and as it has them now: words, then facts.
SCHEDULE_WITH_WORDS = """
def parse_duration(text):
    if not text.strip():
        raise DeadlineError(f"no duration given; {DURATION_HELP}")
    raise DeadlineError(f"{shown(text)} is not a duration; write e.g. 24h")
"""
SCHEDULE_WITH_FACTS = """
def parse_duration(text):
    if not text.strip():
        raise DeadlineError(Problem(Why.EMPTY, Reading.DURATION))
    raise _refused(Why.NOT_READ, Reading.DURATION, text)
"""


def test_a_module_that_builds_an_answer_with_words_fails_the_check(tmp_path: Path) -> None:
    """A module added back with a refusal in words is found (there is no list that lets it
    through), under any package of bot/ but bot/letters/; with facts it passes."""
    assert answers_with_literal_words(SCHEDULE_WITH_WORDS) == [4, 5]
    assert answers_with_literal_words(SCHEDULE_WITH_FACTS) == []
    for where in ("bot/schedules.py", "bot/ops/backup.py", "bot/intake/new.py", "bot/letters/refusals.py"):
        planted = tmp_path / where
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(SCHEDULE_WITH_WORDS, encoding="utf-8")
    assert offenders(tmp_path) == Counter({"bot/schedules.py": 2, "bot/ops/backup.py": 2, "bot/intake/new.py": 2})


# Words handed on through a keyword (the calendar's event as bot.mail_out.calendar wrote it), and
# the same from templates; argparse's help is the operator's.
PASSED_ON = """
def turn_event(game, turn, method):
    if method == CANCEL:
        summary = f"{game.name}: {turn.label} (resolved early)"
    else:
        summary = say("calendar_summary", game=game.name, label=turn.label)
    return DeadlineEvent(uid=uid, summary=summary, description=description)

def warn(ctx):
    ctx.tell(seat, text="Your orders are late", note=say("late_note"))
    _answer(ctx, reason=say("refused", why="late"), body=text_of(ctx))
    sub.add_parser("archive", description="Write a game's archive.", help="an archive")
"""


def test_the_detector_finds_words_handed_on_through_a_keyword() -> None:
    """A call given words as `text=`, `summary=`, `note=` ... (through a name assigned them, too)
    is found, whatever the function called; the same from `say`, and argparse's help, pass."""
    assert answers_with_literal_words(PASSED_ON) == [7, 10]
    for keyword in sorted(PASSED_KEYWORDS):
        assert answers_with_literal_words(f'post(shell, {keyword}="Hello there")') == [1], keyword
        assert answers_with_literal_words(f'post(shell, {keyword}=say("hello", name=n))') == [], keyword
    assert answers_with_literal_words('InboundMessage(detail="refused; the player was told")') == []


# -- the rulebook's refusals --------------------------------------------------------------------

RULES = REPO / "rules"
# Where a rules error is read for its text without words of the code's own.
HANDED_TO = frozenset({"refusal", "isinstance"})
LOGGED = frozenset({"debug", "info", "warning", "error", "exception", "critical"})


@cache
def rules_errors() -> frozenset[str]:
    """The exceptions `rules/` defines (read from its code): classes deriving, directly or
    through another, from an exception of the standard library's or of rules/."""
    bases: dict[str, list[str]] = {}
    for path in sorted(RULES.rglob("*.py")):
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [name for base in node.bases if (name := _name(base)) is not None]
    found: set[str] = set()
    while True:
        more = {
            name
            for name, of in bases.items()
            if any(b in found or b.endswith(("Error", "Exception")) and b not in bases for b in of)
        }
        if more <= found:
            return frozenset(found)
        found |= more


def _caught(handler: ast.ExceptHandler, constants: dict[str, ast.expr]) -> set[str]:
    """The names of the exceptions an ``except`` clause catches (a module's tuple constant read)."""
    kind = handler.type
    if isinstance(kind, ast.Name) and kind.id in constants:
        kind = constants[kind.id]
    items = kind.elts if isinstance(kind, ast.Tuple) else [kind] if kind is not None else []
    return {name for item in items if (name := _name(item)) is not None}


def _spoken(node: ast.AST, error: str, *, allowed: bool = False) -> Iterator[int]:
    """The lines under `node` where the caught `error` is used other than as a fact handed to
    `say` (a keyword), to `refusal`, to a log call or `isinstance`, or as a cause (``from``)."""
    if isinstance(node, ast.Name) and node.id == error and not allowed:
        yield node.lineno
        return
    if isinstance(node, ast.Call):
        name = _name(node.func)
        yield from _spoken(node.func, error, allowed=allowed)
        handed = allowed or name in HANDED_TO or name in LOGGED
        for arg in node.args:
            yield from _spoken(arg, error, allowed=handed)
        for keyword in node.keywords:
            yield from _spoken(keyword.value, error, allowed=handed or name == SAY)
        return
    if isinstance(node, ast.Raise):
        if node.exc is not None:
            yield from _spoken(node.exc, error, allowed=allowed)
        return  # the cause (`from error`) is no words
    for child in ast.iter_child_nodes(node):
        yield from _spoken(child, error, allowed=allowed)


def rule_text_outside_templates(source: str, errors: Collection[str]) -> list[int]:
    """The lines of `source` where an error of `errors` (the rulebook's), caught by name, is used
    other than as a fact a template frames (`_spoken`)."""
    tree = parsed(source)
    constants = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.name and _caught(node, constants) & set(errors):
            for statement in node.body:
                found.update(_spoken(statement, node.name))
    return sorted(found)


RULE_TEXT = """
_REFUSALS = (Refused, GameError, FigureError)

def set_figure(ctx, args):
    try:
        rules.adjust(state, seat, figure, value)
    except FigureError as error:
        raise GameError(f"SET refused: {error}") from error
    try:
        rules.new_game(seats, options, rng)
    except OptionError as error:
        raise Refused(str(error))

def carry_out(action):
    try:
        return handler(action)
    except _REFUSALS as exc:
        return False, "refused: " + str(exc)

def season(settings):
    try:
        table = parse_table(settings.scoring)
    except SeasonError as error:
        log.warning("season %s: %s", name, error)
        raise SeasonRequestError(say("season_bad_setting", reason=str(error)[:200])) from error
    except OptionError as error:
        return refusal(error) if isinstance(error, OptionError) else ""
    except ValueError as error:
        return f"not a number: {error}"
"""


def test_the_detector_finds_a_rules_refusal_given_words_of_the_codes_own() -> None:
    """A rules error caught by name (or through a tuple constant) and re-raised or returned with
    words around it, or as another refusal's words, is found; handed to `say` as a fact, to
    `refusal`, to a log call or `isinstance`, or chained, it passes; an error that is not the
    rulebook's (ValueError) is not this check's."""
    errors = {"FigureError", "OptionError", "SeasonError"}
    assert rule_text_outside_templates(RULE_TEXT, errors) == [8, 12, 18]


def test_the_rulebooks_errors_are_read_from_rules() -> None:
    found = rules_errors()
    assert {"FigureError", "OptionError", "OrderError", "IllegalOrderError", "UnknownGameError", "SeasonError"} <= found
    assert "AnyGame" not in found and "RobotLevel" not in found


def test_a_rules_refusal_reaches_a_person_only_as_a_fact_a_template_frames() -> None:
    """No module of bot/ but the letters (which frame it: `bot.letters.refusals`) and the
    command line (the operator's terminal, out of scope) puts words of its own around the
    rulebook's refusal: a GM command's refusal goes through `refusal`, a season's bad setting is
    `say(..., reason=...)`."""
    found = {}
    for path in sorted(BOT.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith(("bot/letters/", "bot/cli/")):
            continue
        lines = rule_text_outside_templates(path.read_text(encoding="utf-8"), rules_errors())
        if lines:
            found[relative] = lines
    assert not found, f"a rules refusal given words outside the letters (hand it to refusal or say): {found}"
    registry = (BOT / "commands" / "registry.py").read_text(encoding="utf-8")
    assert rule_text_outside_templates(registry.replace("refusal(exc)", "str(exc)"), rules_errors())


# -- a rule's reason outside a caught exception -------------------------------------------------

# Where a rule's reason is the command line's own output, at the terminal: `flagman verify` (a
# program any player runs on an archive, bot/verify.py: its one line names what does not hold)
# and bot/cli/, out of scope as above.
TERMINAL = ("bot/cli/", "bot/verify.py")


def _holds_reason(node: ast.AST) -> bool:
    """Whether `node` reads a `.reason` (a rules `Problem`'s: the rule's own sentence) other than
    as a fact handed to `say`."""
    if isinstance(node, ast.Attribute) and node.attr == "reason" and isinstance(node.ctx, ast.Load):
        return True
    if isinstance(node, ast.Call) and _name(node.func) == SAY:
        return False
    return any(_holds_reason(child) for child in ast.iter_child_nodes(node))


def reason_in_words(source: str) -> list[int]:
    """The lines of `source` where a rule's reason (`Problem.reason`, from a parse that refused a
    line: no exception caught) is put among words of the code's own: an f-string with words, a
    sum or ``%`` with words, or a join whose separator is words."""
    found: set[int] = set()
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.JoinedStr) and literal_words(node):
            if any(isinstance(part, ast.FormattedValue) and _holds_reason(part.value) for part in node.values):
                found.add(node.lineno)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
            if (literal_words(node.left) and _holds_reason(node.right)) or (
                literal_words(node.right) and _holds_reason(node.left)
            ):
                found.add(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            separator = node.func.value
            if isinstance(separator, ast.Constant) and literal_words(separator):
                if any(_holds_reason(arg) for arg in node.args):
                    found.add(node.lineno)
    return sorted(found)


REASONS_IN_WORDS = """
def refused(shown, parsed):
    detail = "; ".join(f"line {p.line_no}: {p.reason}" for p in shown) or "no orders"
    raise ValueError(f"{seat}'s orders do not parse: {parsed.problems[0].reason}")
    why = "refused: " + parsed.problems[0].reason
    told = " and then ".join(p.reason for p in shown)
"""
REASONS_AS_FACTS = """
def refused(shown, parsed):
    detail = say("orders_refused_detail", problems=[(p.line_no, p.reason) for p in shown])
    log.info("refused: %s", "; ".join(p.reason for p in shown))
    reason = "; ".join(p.reason for p in parsed.problems)
    if row.reason == Reason.BOUNCE:
        return f"{when} {row.sender}"
"""


def test_the_detector_finds_a_rules_reason_among_words_of_the_codes_own() -> None:
    """A rule's reason in an f-string, a sum or a join with words is found; handed to `say` as a
    fact, joined with a bare separator (the rule's sentences, one after another) or compared, it
    passes."""
    assert reason_in_words(REASONS_IN_WORDS) == [3, 4, 5, 6]
    assert reason_in_words(REASONS_AS_FACTS) == []


def test_a_rules_reason_reaches_a_person_only_as_a_fact_a_template_frames() -> None:
    """No module of bot/ but the letters and the terminal's (`TERMINAL`) puts words of its own
    around a rule's reason: a refusal's record (the GM's digest lists it) says each line's reason
    through `say("orders_refused_detail", ...)`; a module planted with one is found."""
    found = {}
    for path in sorted(BOT.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith(("bot/letters/", *TERMINAL)):
            continue
        lines = reason_in_words(path.read_text(encoding="utf-8"))
        if lines:
            found[relative] = lines
    assert not found, f"a rule's reason given words outside the letters (hand it to say as a fact): {found}"
    assert reason_in_words((BOT / "verify.py").read_text(encoding="utf-8"))  # the terminal's, found but out of scope


# Words handed positionally to a function of the module whose parameter becomes an answer's
# words there (the JOIN refusal's `_refuse(game, address, title, text, detail)`), through a
# public function of another module too.
HANDED_ON = """
def _refuse(game, address, title, text, detail):
    return Refused("JOIN refused: " + detail, Notice(ToAddress(address), title, text), label="JOIN refused")

def _tell(ctx, why):
    return _refuse(None, ctx.address, say("join_title"), why, "name")

def open_game(ctx, name):
    raise _refuse(None, ctx.address, "No such game", say("join_none", game=name), "unknown game")
    raise _tell(ctx, f"there is no game called {name}")
    raise _refuse(None, ctx.address, say("join_title"), say("join_none", game=name), "unknown game")
    raise _tell(ctx, say("join_none", game=name))
"""


def test_the_detector_finds_words_handed_positionally_to_a_parameter_that_becomes_an_answer() -> None:
    """Words given to a parameter that reaches a `Notice` (through one function or two) are
    found; the same from templates, and a parameter that only reaches the record's detail, pass."""
    reach = reaching_parameters((HANDED_ON,))
    assert reach["_refuse"].positions == frozenset({2, 3}) and reach["_tell"].positions == frozenset({1})
    assert answers_with_literal_words(HANDED_ON) == [9, 10]
    # A public function of another module: its parameters are read from that module.
    seed = reaching_parameters(("def tell(shell, session, to, words):\n    notice(shell, session, to, t, words)\n",))
    assert answers_with_literal_words('letters.tell(shell, s, to, "Hello there")', (), seed) == [1]
    assert answers_with_literal_words('letters.tell(shell, s, to, say("hello"))', (), seed) == []


# -- the record's detail ------------------------------------------------------------------------

# The calls that write a mail's record (`bot.models.InboundMessage.detail`: the GM reads it in the
# digest and `flagman gm audit`): a refusal's or an ignored mail's detail (`bot.fate.Refused`,
# `Ignored`), a mail acted on (`Done`), and the row itself. Their detail is its first positional
# argument or `detail=`.
RECORDS = frozenset({"Refused", "Ignored", "Done", "InboundMessage"})


def record_details_with_literal_words(source: str) -> list[int]:
    """The lines of `source` where a record's detail (`RECORDS`) is given words written in the
    code (as `literal_words` reads them, a name assigned words and the module's helpers that
    return a sentence included), rather than `say("mail_record", why=..., ...)` from the letters."""
    tree = parsed(source)
    helpers = _helpers(tree)
    found: set[int] = set()
    for scope in _scopes(tree):
        known = _known(scope, helpers)
        for node in _own(scope):
            if not isinstance(node, ast.Call) or _name(node.func) not in RECORDS:
                continue
            given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "detail")]
            if any(literal_words(arg, known) for arg in given):
                found.add(node.lineno)
    return sorted(found)


DETAILS_IN_WORDS = """
def refuse(inbound, limit, note):
    raise Ignored(f"rate limit: over {limit} mails in an hour", reason=Reason.RATE_LIMIT)
    raise Refused("empty mail", Notice(to, say("t"), say("x")), reason=Reason.EMPTY)
    detail = "unknown sender: already told today"
    raise Ignored(detail, reason=Reason.UNKNOWN_SENDER)
    return Done("orders taken for " + seat.name, Reason.ORDERS)
    session.add(InboundMessage(status=status, detail=f"oversize: {note}"))
"""
DETAILS_AS_FACTS = """
def refuse(inbound, limit, note):
    raise Ignored(say("mail_record", why="rate_limit", limit=limit), reason=Reason.RATE_LIMIT)
    raise Refused(say("mail_record", why="empty"), Notice(to, say("t"), say("x")), reason=Reason.EMPTY)
    detail = say("mail_record", why="stranger_told_today")
    raise Ignored(detail, reason=Reason.UNKNOWN_SENDER)
    return Done(say("mail_record", why="orders", seat=seat.name), Reason.ORDERS)
    session.add(InboundMessage(status=status, detail=say("mail_record", why="oversize", note=note)))
    raise Refused(exc.detail, answer, reason=exc.reason)
"""


def test_the_detector_finds_a_record_detail_in_words() -> None:
    """A refusal's, an ignored mail's or an applied mail's detail, and the row's `detail=`, given
    words (a literal, an f-string, a sum, a name assigned words) is found; from `say` or handed
    on from another record, it passes."""
    assert record_details_with_literal_words(DETAILS_IN_WORDS) == [3, 4, 6, 7, 8]
    assert record_details_with_literal_words(DETAILS_AS_FACTS) == []


def test_no_record_detail_outside_letters_is_written_in_words() -> None:
    """Every detail a mail's record carries (the digest's and `flagman gm audit`'s line) is built
    in the letters (`templates/_common/words/mail_record.txt`) from the record's facts; the intake's
    own module with a late mail's detail put back in words is found."""
    found = {}
    for path in sorted(BOT.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("bot/letters/"):
            continue
        lines = record_details_with_literal_words(path.read_text(encoding="utf-8"))
        if lines:
            found[relative] = lines
    assert not found, f"a record's detail in words outside the letters (say('mail_record', why=...)): {found}"
    orders = (BOT / "intake" / "orders.py").read_text(encoding="utf-8")
    assert 'say("mail_record", why="late")' in orders
    assert record_details_with_literal_words(orders.replace('say("mail_record", why="late")', '"after the deadline"'))


# -- a command's label and why a mail was ignored -------------------------------------------------

# A command's label is the record's too: the "commands: ..." line of the GM's digest and
# `flagman gm audit` lists each command of a mail by it. It is given as `label=` (a `Reply`, a
# `Refused`, a command's `refuse`, or a helper's), as a `Reply`'s second argument, or appended to
# the mail's list of commands handled (`handled`, in bot/intake/proven.py); its words are
# `bot.letters.records.command_label(verb, *values, came=...)`'s, never written in the code.
LABEL_KEYWORD = "label"
LABEL_LISTS = frozenset({"handled"})


def _labels_given(scope: ast.AST) -> frozenset[str]:
    """The names `scope` gives as a command's label: a `label=` (not `say`'s or argparse's), a
    `Reply`'s second argument, or what is appended to a list of `LABEL_LISTS`."""
    given: set[str] = set()
    for node in _own(scope):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        args = [k.value for k in node.keywords if k.arg == LABEL_KEYWORD] if name not in {SAY, *ARGPARSE} else []
        if name == "Reply":
            args += node.args[1:2]
        if (
            name == "append"
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in LABEL_LISTS
        ):
            args += node.args
        given.update(arg.id for arg in args if isinstance(arg, ast.Name))
    return frozenset(given)


def label_returners(sources: Iterable[str]) -> frozenset[str]:
    """The functions (by name) whose result's first item becomes a command's label where they
    are called: `label, answer = practice.confirm(...)`, the name `label` then given as one."""
    found: set[str] = set()
    for source in sources:
        for scope in _scopes(parsed(source)):
            labels = _labels_given(scope)
            for node in _own(scope):
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Call)
                    and any(
                        isinstance(t, ast.Tuple)
                        and t.elts
                        and isinstance(t.elts[0], ast.Name)
                        and t.elts[0].id in labels
                        for t in node.targets
                    )
                ):
                    called = _name(node.value.func)
                    if called is not None:
                        found.add(called)
    return frozenset(found)


def labels_with_literal_words(source: str, returners: Collection[str] = ()) -> list[int]:
    """The lines of `source` where a command's label is given words written in the code: a
    `label=` in a call of any function but `say` (whose `label` is a turn's label, a fact) and
    argparse's, a `Reply`'s second argument, what is appended to a list of `LABEL_LISTS`, or the
    first item of a tuple returned by a function of `returners` (`label_returners`: its caller
    gives that item as a label; `source`'s own callers are read too)."""
    tree = parsed(source)
    helpers = _helpers(tree)
    returners = {*returners, *label_returners((source,))}
    found: set[int] = set()
    for scope in _scopes(tree):
        known = _known(scope, helpers)
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and scope.name in returners:
            found.update(
                node.lineno
                for node in _own(scope)
                if isinstance(node, ast.Return)
                and isinstance(node.value, ast.Tuple)
                and node.value.elts
                and _label_words(node.value.elts[0], known)
            )
        for node in _own(scope):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            given = [k.value for k in node.keywords if k.arg == LABEL_KEYWORD] if name not in {SAY, *ARGPARSE} else []
            if name == "Reply":
                given += node.args[1:2]
            if (
                name == "append"
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in LABEL_LISTS
            ):
                given += node.args
            if any(_label_words(arg, known) for arg in given):
                found.add(node.lineno)
    return sorted(found)


def _label_words(node: ast.expr, known: Words) -> bool:
    """Words written in the code, a part of an f-string that is words included
    (f"{verb} {'done' if ok else 'refused'}")."""
    return literal_words(node, known) or (
        isinstance(node, ast.JoinedStr)
        and any(isinstance(part, ast.FormattedValue) and literal_words(part.value, known) for part in node.values)
    )


LABELS_IN_WORDS = """
def calendar(ctx, command):
    raise ctx.refuse(say("t"), say("x"), label="CALENDAR refused")
    return Reply((notice,), label=f"CALENDAR {'ON' if command.on else 'OFF'}")
    return Reply((notice,), "PING")
    label = "UNOBSERVE " + " ".join(stopped)
    return Reply((), label=label)
    return _sit(ctx, kind, label=f"SUBSTITUTE ON {kind}")
    handled.append(f"{result.verb} {'done' if result.ok else 'refused'}")

def confirm(shell, session, request):
    try:
        rules = check(session, shell, request.address)
    except Refused as refused:
        return "PRACTICE refused", refused.answer
    return f"PRACTICE {game.name}", None

def code(ctx, command):
    label, answer = practice.confirm(ctx.shell, ctx.session, request)
    return Reply((answer,), label=label)
"""
LABELS_AS_FACTS = """
def calendar(ctx, command):
    raise ctx.refuse(say("t"), say("x"), label=command_label("CALENDAR", came=Came.REFUSED))
    return Reply((notice,), label=command_label("CALENDAR", on=command.on))
    return Reply((notice,), command_label("PING"))
    label, answer = practice.confirm(shell, session, request)
    return Reply((answer,), label=label)
    return _sit(ctx, kind, label=command_label("SUBSTITUTE", kind, on=True))
    handled.append(command_label(result.verb, came=Came.DONE if result.ok else Came.REFUSED))
    handled.append(type(command).__name__.upper())
    say("gm_extend", label=turn.label, duration=duration)

def confirm(shell, session, request):
    try:
        rules = check(session, shell, request.address)
    except Refused as refused:
        return command_label("PRACTICE", came=Came.REFUSED), refused.answer
    return command_label("PRACTICE", game.name), None

def code(ctx, command):
    label, answer = practice.confirm(ctx.shell, ctx.session, request)
    words, count = split("some words here", 2)
    return Reply((answer,), label=label)
"""


def test_the_detector_finds_a_command_label_in_words() -> None:
    """A label given as `label=`, a `Reply`'s second argument or appended to the mail's
    commands handled, in words (a literal, an f-string, a sum, a name assigned words) is found;
    from `command_label`, handed on from another call, or a turn's label given to `say`, it
    passes; so is a label returned in words as a tuple's first item by a function whose caller
    gives that item as a label (`return "PRACTICE refused", answer`), from this module or another."""
    assert labels_with_literal_words(LABELS_IN_WORDS) == [3, 4, 5, 7, 8, 9, 15, 16]
    assert labels_with_literal_words(LABELS_AS_FACTS) == []
    callee, caller = LABELS_IN_WORDS.split("def code", 1)
    assert label_returners(["def code" + caller]) == {"confirm"}
    assert labels_with_literal_words(callee, label_returners(["def code" + caller])) == [3, 4, 5, 7, 8, 9, 15, 16]
    assert labels_with_literal_words(callee) == [3, 4, 5, 7, 8, 9]


def test_no_command_label_outside_letters_is_written_in_words() -> None:
    """Every command's label (the digest's and `flagman gm audit`'s "commands: ..." line) is
    `command_label`'s, from the template ``command_label``; a player command's module with a
    label put back in words, the intake's GM commands listed in words, and a practice race's
    refused code with its label returned in words, are found."""
    found = {}
    returners = label_returners(path.read_text(encoding="utf-8") for path in sorted(BOT.rglob("*.py")))
    assert {"confirm", "confirm_join"} <= returners, returners
    for path in sorted(BOT.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("bot/letters/"):
            continue
        lines = labels_with_literal_words(path.read_text(encoding="utf-8"), returners)
        if lines:
            found[relative] = lines
    assert not found, f"a command's label in words outside the letters (command_label(verb, ...)): {found}"
    player = (BOT / "commands" / "player.py").read_text(encoding="utf-8")
    assert 'label=command_label("RESIGN", came=Came.DONE)' in player
    assert labels_with_literal_words(
        player.replace('label=command_label("RESIGN", came=Came.DONE)', 'label="RESIGN done"')
    )
    proven = (BOT / "intake" / "proven.py").read_text(encoding="utf-8")
    listed = "handled.append(command_label(result.verb, came=Came.DONE if result.ok else Came.REFUSED))"
    assert listed in proven
    assert labels_with_literal_words(proven.replace(listed, "handled.append(f\"{result.verb} {'done'}\")"))
    practice = (BOT / "games" / "practice.py").read_text(encoding="utf-8")
    refused = 'return command_label("PRACTICE", came=Came.REFUSED), refused.answer'
    assert refused in practice
    assert labels_with_literal_words(practice.replace(refused, 'return "PRACTICE refused", refused.answer'), returners)


# Why the ignore policy passed a mail by (`bot.mail_in.parse.Ignore`) is the record's too (the
# digest's "ignored" and "bounce" lines): the parser gives what decided it and the header text it
# quotes, typed; the words are the template ``ignore_detail``'s (`bot.letters.records`).
IGNORE_REASONS = "IgnoreReason"
IGNORES = frozenset({"Ignore"})


def _with_words(node: ast.expr, known: Words) -> bool:
    """Words written in the code, or handed as they are to a call (`echo(f"... {x}")`)."""
    return literal_words(node, known) or (
        isinstance(node, ast.Call) and any(literal_words(arg, known) for arg in node.args)
    )


def ignore_details_with_literal_words(source: str) -> list[int]:
    """The lines of `source` where why a mail is ignored is given words of the code's own: a
    tuple that pairs an `IgnoreReason` with words (the parser's verdict and its detail), an
    `Ignore` given a sentence as a fact (its facts are a header's name and the text quoted), or
    an `Inbound`'s `ignore_why=` given words."""
    tree = parsed(source)
    helpers = _helpers(tree)
    found: set[int] = set()
    for scope in _scopes(tree):
        known = _known(scope, helpers)
        for node in _own(scope):
            if isinstance(node, ast.Tuple) and any(
                isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == IGNORE_REASONS
                for e in node.elts
            ):
                if any(_with_words(e, known) for e in node.elts):
                    found.add(node.lineno)
            if isinstance(node, ast.Call) and _name(node.func) in IGNORES:
                facts = [*node.args[1:], *(k.value for k in node.keywords)]
                if any(literal_words(fact, known, sentence=True) for fact in facts):
                    found.add(node.lineno)
            if isinstance(node, ast.Call):
                given = [k.value for k in node.keywords if k.arg in {"ignore_why", "ignore_detail"}]
                if any(_with_words(arg, known) for arg in given):
                    found.add(node.lineno)
    return sorted(found)


IGNORES_IN_WORDS = """
def _ignore_reason(headers, sender):
    if sender in own:
        return IgnoreReason.OWN_MAIL, f"From is our own address {sender}"
    if content_type == "multipart/report":
        return IgnoreReason.BOUNCE, "Content-Type: multipart/report"
    several = (IgnoreReason.AMBIGUOUS_SENDER, echo(f"a From with several mailboxes ({shown})"))
    return IgnoreReason.AUTO_REPLY, Ignore(IgnoreWhy.HEADER, header="Precedence", value="an auto reply")
    return Inbound(ignore=IgnoreReason.UNPARSEABLE, ignore_why="parser failed")
"""
IGNORES_AS_FACTS = """
def _ignore_reason(headers, sender):
    if sender in own:
        return IgnoreReason.OWN_MAIL, Ignore(IgnoreWhy.OWN_FROM, value=sender)
    if content_type == "multipart/report":
        return IgnoreReason.BOUNCE, Ignore(IgnoreWhy.HEADER, header="Content-Type", value=content_type)
    several = (IgnoreReason.AMBIGUOUS_SENDER, Ignore(IgnoreWhy.SEVERAL_MAILBOXES, addresses=shown))
    return IgnoreReason.AUTO_REPLY, Ignore(IgnoreWhy.HEADER, header="Precedence", value=_shown(value))
    return Inbound(ignore=IgnoreReason.UNPARSEABLE, ignore_why=why)
    return None, None
"""


def test_the_detector_finds_an_ignore_detail_in_words() -> None:
    """The parser's verdict paired with words (a literal, an f-string, words handed to `echo`),
    an `Ignore` given a sentence and an `Inbound` given words as its `ignore_why` are found; an
    `Ignore` of facts (a header's name, the text quoted) passes."""
    assert ignore_details_with_literal_words(IGNORES_IN_WORDS) == [4, 6, 7, 8, 9]
    assert ignore_details_with_literal_words(IGNORES_AS_FACTS) == []


def test_no_ignore_detail_outside_letters_is_written_in_words() -> None:
    """Why a mail is ignored is typed where the parser decides it (`Ignore`), and its words are
    the template ``ignore_detail``'s; the parser with one reason put back in words is found."""
    found = {}
    for path in sorted(BOT.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("bot/letters/"):
            continue
        lines = ignore_details_with_literal_words(path.read_text(encoding="utf-8"))
        if lines:
            found[relative] = lines
    assert not found, f"why a mail is ignored, in words outside the letters (Ignore(IgnoreWhy...)): {found}"
    parse = (BOT / "mail_in" / "parse.py").read_text(encoding="utf-8")
    typed = "IgnoreReason.NO_SENDER, Ignore(IgnoreWhy.NO_FROM)"
    assert typed in parse
    assert ignore_details_with_literal_words(parse.replace(typed, 'IgnoreReason.NO_SENDER, "no usable From address"'))


# Modules whose text is handed back for an answer to carry, rather than put in one themselves:
# the did-you-mean of a line not understood (`bot.commands.suggest`: its result is a refusal's
# reason, `with_suggestion`, or the GM's hint). No call there is an answer, so the checks above do
# not see it; it writes no sentence at all, anywhere (returned, assigned or handed on): its words
# are the templates ``did_you_mean*`` and ``gm_names_the_game_first``.
SENTENCE_FREE = ("bot/commands/suggest.py",)


def sentences_in_words(source: str) -> list[int]:
    """The lines of `source` where a sentence is written in the code: a string literal with a
    letter and a space in it, or an f-string with such a part, anywhere but a docstring (a
    string standing alone as a statement)."""
    tree = parsed(source)
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    found: set[int] = set()
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.JoinedStr) and (literal_words(node, sentence=True) or _joins_text(node)):
            found.add(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_words(node.value, sentence=True):
            found.add(node.lineno)
    return sorted(found)


def _joins_text(node: ast.JoinedStr) -> bool:
    """An f-string that joins values into running text with punctuation ("{reason}; {hint}"):
    a part of it, not all space, that holds a space."""
    return any(
        isinstance(part, ast.Constant)
        and isinstance(part.value, str)
        and part.value.strip()
        and any(c.isspace() for c in part.value)
        for part in node.values
    )


SENTENCES_IN_WORDS = '''
def suggest(word, syntax):
    """A docstring is no sentence of a letter."""
    return f"did you mean {word}? ({syntax})"
    return "did you mean " + word
    hint = f"{reason}; {hint}" if hint else reason
    words[verb] = f"{syntax}, e.g. {example}"
    return (
        f"{spec.verb} names the game first: "
        f"(your games: {games})"
    )
'''
SENTENCES_AS_FACTS = '''
def suggest(word, syntax):
    """A docstring is no sentence of a letter."""
    return say("did_you_mean", word=word, syntax=syntax if syntax != word else "")
    first = line.strip().split(maxsplit=1)[0].upper()
    return " ".join(w for w in (verb, game, args) if w)
    key = f"{verb}-{n}"
    words[verb] = f"{syntax} {summary}"
    return say("gm_names_the_game_first", verb=spec.verb, games=sorted(games))
'''


def test_the_detector_finds_a_sentence_written_in_the_code() -> None:
    """A sentence as an f-string (returned, assigned, a choice, parts of one, values joined with
    punctuation), a literal or a sum is found; a docstring, words from `say`, a join of words
    with a space, and an f-string of values and spaces or a separator alone pass."""
    assert sentences_in_words(SENTENCES_IN_WORDS) == [4, 5, 6, 7, 9]
    assert sentences_in_words(SENTENCES_AS_FACTS) == []


def test_the_did_you_mean_is_the_letters_words() -> None:
    """The did-you-mean writes no sentence of its own; the module with its words put back as an
    f-string is found."""
    found = {}
    for relative in SENTENCE_FREE:
        lines = sentences_in_words((REPO / relative).read_text(encoding="utf-8"))
        if lines:
            found[relative] = lines
    assert not found, f"sentences written outside the letters (say(kind, ...)): {found}"
    suggest = (BOT / "commands" / "suggest.py").read_text(encoding="utf-8")
    said = 'say("did_you_mean", word=word, syntax=syntax if syntax != word else "")'
    assert said in suggest
    assert sentences_in_words(suggest.replace(said, 'f"did you mean {word}?"'))
    reason = 'say("did_you_mean_reason", reason=reason, hint=hint)'
    assert reason in suggest
    assert sentences_in_words(suggest.replace(reason, 'f"{reason}; {hint}"'))
