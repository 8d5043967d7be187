"""Templates -> mail. Jinja2 with StrictUndefined: a missing variable is an error, never blank.

A template file holds the subject and the body: its first line is ``Subject: ...``, then a
blank line, then the body. Game-specific templates in ``templates/<game>/`` win over the
common ones in ``templates/_common/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import textwrap
from collections import ChainMap
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket
from markupsafe import Markup

from bot.facts import Claims
from bot.mail_out import vocabulary
from bot.resources import templates_path
from rules.api import View
from rules.fair import MARK


class TemplateError(RuntimeError):
    """A template is missing, malformed or uses a variable it was not given."""


@dataclass(frozen=True, slots=True)
class RenderedMail:
    """A letter's subject and text, and the claims it makes (`bot.facts.Claims`): data kept with
    its outbox row, never in the mail."""

    subject: str
    body: str
    claims: tuple[Claims, ...] = ()

    def claiming(self, *claims: Claims) -> RenderedMail:
        """The same letter, making `claims` besides its own."""
        return dataclasses.replace(self, claims=(*self.claims, *claims)) if claims else self


# A line that is a link and nothing else (a one-tap ``mailto:``, a page's address): never broken.
BARE_LINK = re.compile(r"\s*(?:mailto:|https?://)\S+")
# A line quoted from a mail ("    > ..."): laid out as it came, never refilled.
_QUOTE = re.compile(r"\s+>")


def _fits(line: str, width: int) -> bool:
    """Whether `textwrap.fill` would give `line` back as it is, after its initial indent: it is
    no wider than `width` (what the indent leaves of the line), ends in no white space (fill may
    drop it) and holds no tab (fill expands it); a line of `str.splitlines` holds no other
    character fill turns into a blank."""
    return len(line) <= width and "\t" not in line and not line[-1].isspace()


def _wrap(text: object, width: int = 72, indent: str = "") -> str:
    """Each line of `text` filled to `width`, an indented line going on under itself (at its
    own indent); a line that is a bare link is left whole, on its own line (a link broken in
    two cannot be tapped), and so is a quoted line. An `indent` as wide as `width` is refused
    (ValueError): textwrap, given one, may never end on a line with non-ASCII white space."""
    if len(indent) >= width:
        raise ValueError(f"wrap: an indent of {len(indent)} leaves nothing of a width of {width}")
    return _wrapped_text(str(text), width, indent)


@functools.lru_cache(maxsize=4096)
def _wrapped_text(text: str, width: int, indent: str) -> str:
    """`_wrap` of a text, filled once a process (the last 4,096 kept): every letter's sign-off
    is one of a few."""
    return "\n".join(
        (
            indent + line
            if BARE_LINK.fullmatch(line) or _QUOTE.match(line) or _fits(line, width - len(indent))
            else textwrap.fill(
                line, width, initial_indent=indent, subsequent_indent=indent + line[: len(line) - len(line.lstrip())]
            )
        )
        if line.strip()
        else ""
        for line in text.splitlines()
    )


def _labelled(name: str, labels: Mapping[str, str] | Sequence[str] = ()) -> str:
    """`name` as a person reads it: its label in `labels` (seat -> label), or, given the robot
    seats alone, "robo (robot)" for one of them."""
    if isinstance(labels, Mapping):
        return str(labels.get(name, name))
    return f"{name} (robot)" if name in labels else name


_SENTENCE_WORD = re.compile(r"[A-Z][a-z]+\b")


def _mid_subject(title: str) -> str:
    """A title as it reads after "; " in a subject: its first word in lower case where it is
    only capitalised as a sentence's first ("The GM entered ..." -> "the GM entered ..."); a
    word in capitals (GM, PING, NMR) or a name the title starts with in lower case stays."""
    text = str(title)
    return text[0].lower() + text[1:] if _SENTENCE_WORD.match(text) else text


def _people(line: str, labels: Mapping[str, str] | Sequence[str] = ()) -> str:
    """A line of the rules' own text (what happened) with each seat handed to another person
    named by its label, as whole words: "anna passes bob" -> "anna (Kim McDonald) passes bob".
    Robot seats keep their bare name there, as the rules write it."""
    if not isinstance(labels, Mapping):
        return line
    people = {seat: label for seat, label in labels.items() if label != f"{seat} (robot)"}
    if not people:
        return line
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(re.escape(s) for s in sorted(people, key=len, reverse=True)) + r")(?![\w-])"
    )
    return pattern.sub(lambda m: people[m.group(1)], str(line))


def columns(rows: Sequence[Sequence[object]], left: int = 2) -> str:
    """`rows` (the heading first) as a text table, one row a line, within `LINE_WIDTH`: the
    first `left` columns left-aligned, the rest right-aligned. As wide as it always was where
    that fits (a place column of 6, a player column of at least 16, each other column 8 wide
    after one space); else each column as wide as its widest cell, parted by three spaces, or
    two, or one, the widest parting that fits."""
    cells = [[str(cell) for cell in row] for row in rows]
    if not cells:
        return ""
    count = max(len(row) for row in cells)
    cells = [row + [""] * (count - len(row)) for row in cells]
    widest = [max(len(row[i]) for row in cells) for i in range(count)]

    def lines(widths: Sequence[int], gaps: Sequence[str]) -> list[str]:
        return [
            "".join(
                (gaps[i - 1] if i else "") + (cell.ljust(w) if i < left else cell.rjust(w))
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in cells
        ]

    usual = [max(6, widest[0]), max(16, widest[1]) if count > 1 else 0] + [8] * (count - 2)
    table = lines(usual[:count], [" "] * count)
    for gap in ("   ", "  ", " "):
        if max(len(line) for line in table) <= LINE_WIDTH:
            break
        table = lines(widest, [gap] * count)
    return "\n".join(table)


class PublicReport:
    """The public block of a turn's mails: what happened, the summary and the table.

    It is the same in every seat's mail and in the GM's (a view adds only its private part to
    the public one), so it is rendered once per game and turn, not once per mail (bench:
    deadline), and handed to the templates as ``report``: ``{{ report.text }}`` in a text
    template, ``{{ report.html }}`` in an HTML one. Each is the ``report`` macro of
    ``_common/_macros.txt`` / ``_common/_macros.html`` applied to `view` (the public view),
    exactly what ``{{ m.report(view) }}`` writes, rendered on first use.
    """

    def __init__(self, renderer: Renderer, view: View, robots: Mapping[str, str] | Sequence[str] = ()) -> None:
        self.env = renderer.env
        self.view = view
        # The seats' labels (bot.letters.context.seat_labels), or the robot seats alone.
        self.robots: Mapping[str, str] | tuple[str, ...] = (
            dict(robots) if isinstance(robots, Mapping) else tuple(robots)
        )

    def _macro(self, name: str) -> object:
        try:
            return self.env.get_template(name).module.report(self.view, self.robots)  # type: ignore[attr-defined]
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"template {name!r}, macro report: {exc}") from exc

    @cached_property
    def text(self) -> str:
        return str(self._macro("_common/_macros.txt"))

    @cached_property
    def html(self) -> Markup:
        return Markup(self._macro("_common/_macros.html"))


_DICT_ATTRIBUTES = frozenset(dir(dict))

Fragments = dict[tuple[object, ...], tuple[object, tuple[object, ...]]]
"""Fragments of letters rendered once (`once`), by the macro and its arguments, each with the
arguments it was rendered from (an argument named by its id is kept alive with it)."""

_SHARING: ContextVar[Fragments | None] = ContextVar("flagman_shared_fragments", default=None)


@contextlib.contextmanager
def sharing(fragments: Fragments) -> Iterator[None]:
    """Within: ``once(macro, args...)`` in a template renders each macro with the same arguments
    once into `fragments`, and gives that text again to every later letter. One `fragments`
    serves the letters of one piece of work (`bot.letters.cache.LetterCache`), whose values are
    never changed once a letter was rendered from them."""
    token = _SHARING.set(fragments)
    try:
        yield
    finally:
        _SHARING.reset(token)


_SCALARS = frozenset({str, int, float, bool, type(None)})
_STRINGS = frozenset({str})


def _argument_key(value: object) -> object:
    """An argument of `once` as it names the fragment: a string, number, None, list of strings
    or dict of strings to strings, numbers or None by its value and type (the seats' labels, a
    picture's size, a turn's commitment: built again for each letter; a dict's items in their
    order, with each value's type), anything else by its identity (a value the letters share,
    made once)."""
    kind = type(value)
    if kind in _SCALARS:
        return (kind, value)
    if isinstance(value, (list, tuple)) and (kind is list or kind is tuple):
        if _STRINGS.issuperset(map(type, value)):
            return (kind, tuple(value))
    elif isinstance(value, dict) and kind is dict:
        types = tuple(map(type, value.values()))
        if _SCALARS.issuperset(types) and _STRINGS.issuperset(map(type, value)):
            return (dict, tuple(value.items()), types)
    return ("object", id(value))


def _once(macro: jinja2.runtime.Macro, *args: object) -> object:
    """``once(macro, args...)`` in a template: `macro(args...)`, rendered once while `sharing`.
    A macro sees its arguments and its template's constants only, so the same arguments give
    the same text; outside `sharing` it is simply rendered."""
    fragments = _SHARING.get()
    if fragments is None:
        return macro(*args)
    key = (macro._func.__code__, *map(_argument_key, args))
    found = fragments.get(key)
    if found is None:
        found = (macro(*args), args)
        fragments[key] = found
    return found[0]


class _Environment(jinja2.Environment):
    """Jinja's environment, with ``x.name`` on a plain dict (every letter's context is made of
    them) read as the key at once. Jinja asks for the attribute first and takes the key when
    that raises AttributeError, which costs an exception for nearly every name a letter shows.
    The result is Jinja's own in every case: a name that is an attribute of dict (``items``,
    ``get``) is still the attribute, a missing key is still undefined, anything but a plain
    dict goes Jinja's way."""

    def getattr(self, obj: object, attribute: str) -> object:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


def _flat(names: Mapping[str, object]) -> dict[str, object]:
    """A template's globals as one dict, as ``dict(names)`` gives them (the same keys in the same
    order, the first map of a ChainMap winning), merged at C speed rather than through the
    ChainMap's own lookups a key at a time."""
    if not isinstance(names, ChainMap):
        return dict(names)
    flat: dict[str, object] = {}
    for layer in reversed(names.maps):
        flat.update(layer)
    return flat


class _Template(jinja2.Template):
    """Jinja's template, each render's context made from its globals merged into one dict at
    once, and an ``{% import %}`` of it handed its cached module without going through the
    globals a ChainMap key at a time (Jinja checks that the importing context brings no
    global of its own, a set difference with the ChainMap's keys' view: a Python loop). The
    result is Jinja's own: the same context, and the cached module exactly when Jinja would
    hand it (no global of the importer's missing from this template's)."""

    def new_context(
        self,
        vars: dict[str, object] | None = None,
        shared: bool = False,
        locals: Mapping[str, object] | None = None,
    ) -> jinja2.runtime.Context:
        return jinja2.runtime.new_context(
            self.environment, self.name, self.blocks, vars, shared, _flat(self.globals), locals
        )

    def _get_default_module(self, ctx: jinja2.runtime.Context | None = None) -> jinja2.environment.TemplateModule:
        names = self.globals
        if (
            ctx is not None
            and self._module is not None
            and isinstance(names, ChainMap)
            and not ctx.globals_keys.difference(*names.maps)
        ):
            return self._module
        return super()._get_default_module(ctx)


class _Compiled(jinja2.BytecodeCache):
    """The compiled code of every template an environment of `Renderer._make_env` read in this
    process, by the template's name and file, kept with a checksum of its text: an environment
    made again (a reload on SIGHUP, a turn worker's, another app's) compiles only a template
    whose text changed, and one that changed is compiled again, never served stale. Every
    environment `_make_env` makes has the same options, so their compiled code is the same."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)  # a checksum that differs leaves the bucket empty

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _Compiled()


class Renderer:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else templates_path()
        self.env = self._make_env()
        self.reloads = 0  # how often `reload` ran: a turn worker's own Renderer follows (bot.games.workers)
        self._found: dict[tuple[str | None, str], tuple[jinja2.Environment, jinja2.Template]] = {}

    def _make_env(self) -> jinja2.Environment:
        env = _Environment(
            loader=jinja2.FileSystemLoader(str(self.root)),
            undefined=jinja2.StrictUndefined,
            autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            # Templates are read once per environment: `{% import %}` and `{% extends %}` in a
            # template do not stat its file again on every render (bench: deadline). SIGHUP's
            # `reload` makes a new environment, which reads every template again.
            auto_reload=False,
            # Every template kept for the environment's life, in a plain dict: the bot has more
            # templates (414) than Jinja's default LRU holds (400), which then drops some of them
            # and scans its queue of keys at every lookup (8 us a `{% import %}` or mail, against
            # 0.3 us; a seat's letter makes about 3). A reload makes a new environment.
            cache_size=-1,
            bytecode_cache=_COMPILED,
        )
        env.template_class = _Template
        env.filters["wrap"] = _wrap
        env.globals["once"] = _once
        # A game's own words for how a seat takes part ("run" in Racecraft, "drive" in the others).
        env.globals["game_words"] = vocabulary.Reader(self.root)
        # A seat's name as standings and results show it: "robo (robot)" for a robot, "anna
        # (Kim McDonald)" for a seat handed to another person (bot.letters.context.seat_labels).
        env.filters["robot"] = _labelled
        env.filters["people"] = _people
        env.filters["mid_subject"] = _mid_subject
        env.filters["indent_lines"] = lambda text, prefix="  ": "\n".join(
            prefix + line if line else line for line in str(text).splitlines()
        )
        env.filters["indented_paragraphs"] = indented_paragraphs
        env.globals["columns"] = columns
        return env

    def compile_all(self) -> int:
        """Every template under the root (its ``.txt`` and ``.html`` files) compiled now and kept
        by the environment, rather than at the first mail that uses it; returns how many were.
        A turn worker made ready ahead does this (`ProcessTurnWorker.start`), as a deadline
        leaves it, so that its first chunk of a big deadline costs only its turns. A template that does not compile is left as it is: the
        first mail that uses it says why, as it would have."""
        compiled = 0
        for path in sorted(self.root.rglob("*")):
            if path.suffix in (".txt", ".html") and path.is_file():
                try:
                    self.env.get_template(path.relative_to(self.root).as_posix())
                except jinja2.TemplateError:
                    continue
                compiled += 1
        return compiled

    def reload(self) -> None:
        """Drop cached templates (SIGHUP)."""
        self.env = self._make_env()
        self.reloads += 1

    def _template(self, game: str | None, name: str) -> jinja2.Template:
        """The template for mail `name` of `game`, looked up once per environment (as
        `bot.mail_out.html.html_template` does): not with a stat of every candidate file and a
        TemplateNotFound for the missing game-specific one for every mail (bench: deadline).
        A reload (SIGHUP) makes a new environment, so edited templates are read again then."""
        env = self.env
        found = self._found.get((game, name))
        if found is not None and found[0] is env:
            return found[1]
        candidates = ([f"{game}/{name}.txt"] if game else []) + [f"_common/{name}.txt"]
        try:
            template = env.select_template(candidates)
        except jinja2.TemplatesNotFound as exc:
            raise TemplateError(f"no template {name!r} (looked for {', '.join(candidates)})") from exc
        if len(self._found) > 1024:
            self._found.clear()
        self._found[(game, name)] = (env, template)
        return template

    def render(self, name: str, context: Mapping[str, object], *, game: str | None = None) -> RenderedMail:
        try:
            text = self._template(game, name).render(**context)
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"template {name!r}: {exc}") from exc
        head, sep, body = text.partition("\n\n")
        if not sep or not head.startswith("Subject:"):
            raise TemplateError(f"template {name!r} must start with 'Subject: ...' and a blank line")
        subject = fit_subject(" ".join(head.removeprefix("Subject:").split()))
        return RenderedMail(subject, tidy(body))


# The widest line of running text a letter sends (a bare link alone may be wider: it is never broken).
LINE_WIDTH = 78


# An item of a list as the letters write one: up to three spaces, "-" or "*", a space.
_ITEM = re.compile(r"( {0,3}[-*] )\S")


# A date as the letters write one ("Fri 9 Jan 2026 12:00 GMT"): its year, which a subject drops first.
_YEAR = re.compile(r"\b(\d{1,2} [A-Z][a-z]{2}) \d{4}(?= \d{1,2}:\d{2}\b)")
# A part in brackets after a word, which a subject drops next ("Race turn 3 (leader on lap 2 of 3)").
_ASIDE = re.compile(r" \([^()]*\)")


def fit_subject(subject: str) -> str:
    """`subject` within `LINE_WIDTH` characters, its start kept (the game's tag, the news, the
    turn): as it is where it fits; else without the year of its dates, then without its parts
    in brackets (last first), then without its last clauses (after ", " or "; ": a deadline
    the letter's text gives), then cut at a word with "..."."""
    if len(subject) <= LINE_WIDTH:
        return subject
    subject = _YEAR.sub(r"\1", subject)
    while len(subject) > LINE_WIDTH and (asides := list(_ASIDE.finditer(subject))):
        subject = subject[: asides[-1].start()] + subject[asides[-1].end() :]
    tag = subject.find("] ") + 2
    while len(subject) > LINE_WIDTH and (cut := max(subject.rfind(", "), subject.rfind("; "))) > tag:
        subject = subject[:cut]
    if len(subject) > LINE_WIDTH:
        subject = subject[: LINE_WIDTH - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return subject


def is_running_text(line: str) -> bool:
    """Whether `line` of a letter is running text, which `tidy` fills to `LINE_WIDTH`: a line
    that is not indented, or an item of a list ("  - ..."); never a quote, an order block, a
    map or the syntax (indented further: laid out, `_laid_out`), a table's row (columns are
    parted by three spaces or more) or a bare link."""
    item = _ITEM.match(line)
    text = line[item.end(1) :] if item else line
    return (
        bool(text) and not text[0].isspace() and text[0] != ">" and "   " not in text and not BARE_LINK.fullmatch(line)
    )


def _goes_on(line: str) -> bool:
    """Whether the sentence of `line` goes on on the next line: it ends in a word, a comma, a
    semicolon, a bracket or a quote; never a line ending in ".", ":", "!", "?" nor a heading's
    "==" or "---"."""
    return line[-1].isalnum() or line[-1] in ",;)'\""


# Each block of lines (`_filled_block`) filled once a process, by its text: a turn's letters
# share most of their blocks (the report, the dice, the sign-off), so a seat's letter fills only
# its own. Emptied when it holds `_FILLED_MOST` blocks.
_FILLED: dict[str, list[str]] = {}
_FILLED_MOST = 4096


def _filled(lines: list[str]) -> list[str]:
    """`lines` through `_filled_block`, a block at a time: a blank line ends every run and every
    group of rows (`_filled_block` starts afresh after it), so the blocks between blank lines are
    filled alike wherever they stand, and each block's text is filled once (`_FILLED`)."""
    out: list[str] = []
    if not lines:
        return out
    first = True
    for block in "\n".join(lines).split("\n\n"):
        if not first:
            out.append("")
        first = False
        found = _FILLED.get(block)
        if found is None:
            if len(_FILLED) >= _FILLED_MOST:
                _FILLED.clear()
            found = _FILLED[block] = _filled_block(block.split("\n"))
        out.extend(found)
    return out


def _filled_block(lines: list[str]) -> list[str]:
    """`lines` with every sentence run of running text that has a line wider than `LINE_WIDTH`
    filled to it, its words whole (a link in it ends on a line of its own if it must): a run is
    a plain line of running text with the lines that go on with its sentence (`_goes_on`),
    filled as one (a template's own line breaks in it would leave it
    ragged), or one item of a list, which goes on under its first word. A line that ends its
    sentence is never joined to the next ("Open: ...", "Press: ..." stay lines of their own).
    Laid-out lines are laid out to fit (`_laid_out`). Any other line is as it was."""
    out: list[str] = []
    run: list[str] = []
    rows: list[str] = []

    def end_run() -> None:
        if any(len(line) > LINE_WIDTH for line in run):
            out.extend(_wrapped(" ".join(run), "", ""))
        else:
            out.extend(run)
        run.clear()

    def end_rows() -> None:
        out.extend(_laid_out(rows) if any(len(line) > LINE_WIDTH for line in rows) else rows)
        rows.clear()

    for line in lines:
        item = _ITEM.match(line)
        if is_running_text(line) and not item:
            end_rows()
            if run and not _goes_on(run[-1]):
                end_run()
            run.append(line)
            continue
        end_run()
        if item and len(line) > LINE_WIDTH and is_running_text(line):
            end_rows()
            lead = item.group(1)
            out.extend(_wrapped(line[len(lead) :], lead, " " * len(lead)))
        elif line:
            rows.append(line)
        else:
            end_rows()
            out.append(line)
    end_run()
    end_rows()
    return out


# A gap of two spaces or more between words: a laid-out line's next cell starts after it.
_CELL = re.compile(r"(?<=\S) {2,}(?=\S)")
# What a laid-out line's lines all begin with: its indent, and a quote's "> " marks.
_LEAD = re.compile(r"[ \t]*(?:>[ \t]?)*")
_NARROWEST_CELL = 24  # the narrowest a last cell wraps in; a narrower one goes under its line


def _lead(line: str) -> int:
    return _LEAD.match(line).end()  # type: ignore[union-attr]  # the pattern matches anywhere


def _last_cell(line: str) -> int | None:
    """Where `line`'s last cell starts (after its last gap of two spaces or more), or None."""
    cells = [m.end() for m in _CELL.finditer(line, _lead(line))]
    return cells[-1] if cells else None


def _wrapped(text: str, first: str, hang: str) -> list[str]:
    return textwrap.wrap(
        text,
        LINE_WIDTH,
        initial_indent=first,
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def indented_paragraphs(text: object, prefix: str = "  ") -> str:
    """`text` set in by `prefix` as a block of running text: each of its lines of running text
    (`is_running_text`) wider than `LINE_WIDTH` once set in filled to it, every line of it at
    the block's indent (a paragraph, never a hanging indent); its laid-out lines (a quote, an
    order block, a table's row) set in as they are, for `tidy` to lay out. A GM command's
    answer ("seat seb is now run by a robot ...; the other players were told.")."""
    out: list[str] = []
    for line in str(text).splitlines():
        if not line:
            out.append(line)
        elif is_running_text(line) and not _ITEM.match(line) and len(prefix + line) > LINE_WIDTH:
            out.extend(_wrapped(line, prefix, prefix))
        else:
            out.append(prefix + line)
    return "\n".join(out)


def _laid_out(rows: Sequence[str]) -> list[str]:
    """Laid-out lines (`is_running_text` is false: the rules' syntax, a table's rows, a quote),
    as they are while they keep to `LINE_WIDTH`, and wider ones broken at spaces, never inside
    a word, so every piece is whole and can be copied. A row's last cell (a syntax line's
    explanation, a table's long cell) wraps under itself, with the lines under it that go on
    with it (indented to its column) filled as one; a cell that would be narrower than
    `_NARROWEST_CELL` goes on the lines under its row, at the column of the cells above it (or
    four columns in). A line without cells goes on under its first word four columns in (a
    hanging indent); a quote's lines each keep its "> ". A word that alone passes `LINE_WIDTH`
    (a link, a hash) stands whole on its line."""
    out: list[str] = []
    column: int | None = None  # where the last cells of the rows above start
    i = 0
    while i < len(rows):
        line = rows[i]
        lead = _lead(line)
        cell = _last_cell(line) if ">" not in line[:lead] else None
        group = [line]
        if cell is not None:
            while i + 1 < len(rows) and _lead(rows[i + 1]) == cell and _last_cell(rows[i + 1]) is None:
                i += 1
                group.append(rows[i])
        i += 1
        if all(len(g) <= LINE_WIDTH or BARE_LINK.fullmatch(g) for g in group):
            out.extend(group)
            column = cell if cell is not None else column
            continue
        if cell is None:
            quoted = ">" in line[:lead]
            out.extend(_wrapped(line[lead:], line[:lead], line[:lead] if quoted else " " * (lead + 4)))
            continue
        text = " ".join([line[cell:]] + [g.strip() for g in group[1:]])
        if cell <= LINE_WIDTH - _NARROWEST_CELL:
            out.extend(_wrapped(text, line[:cell], " " * cell))
            column = cell
            continue
        under = column if column is not None and lead < column <= LINE_WIDTH - _NARROWEST_CELL else lead + 4
        out.extend(_wrapped(line[lead:cell].rstrip(), line[:lead], " " * (lead + 4)))
        out.extend(_wrapped(text, " " * under, " " * under))
    return out


def tidy(body: str) -> str:
    """A letter's text as it is sent: no blanks at the end of a line, except in the "-- " line
    that opens a signature (RFC 3676 4.3), which mail clients and our own quote stripper need
    with its space; no line wider than `LINE_WIDTH` but a bare link or a word too long for
    one (running text filled, `is_running_text`, `_filled`; a laid-out line broken at spaces,
    `_laid_out`; the signature is left as it is); no blank line at its start or end; and never
    two blank lines in a row (a part a template leaves out leaves no gap), so one blank line
    always parts two blocks; the signature follows the letter's last line, with no blank line
    before its "-- "."""
    lines: list[str] = []
    for line in body.strip("\n").splitlines():
        line = line if line == "-- " else line.rstrip()
        if line == "-- " and lines and not lines[-1]:
            lines.pop()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    signature = lines.index("-- ") if "-- " in lines else len(lines)
    lines = _kept_values(lines[:signature]) + lines[signature:]
    return "\n".join(lines) + "\n"


def _kept_values(lines: list[str]) -> list[str]:
    """`lines` through `_filled`, except a block of values (the lines after one that ends in
    `rules.fair.MARK`, up to the first blank line), which is kept byte for byte: `flagman verify`
    and check-dice.py read each seat's orders from it line by line, so a long order broken in
    two would no longer be the order its receipt was made of."""
    out: list[str] = []
    start = 0
    for i, line in enumerate(lines):
        if line.endswith(MARK) and i >= start:
            end = next((j for j in range(i + 1, len(lines)) if not lines[j]), len(lines))
            out.extend(_filled(lines[start : i + 1]))
            out.extend(lines[i + 1 : end])
            start = end
    out.extend(_filled(lines[start:]))
    return out
