"""Templates -> mail. Jinja2 with StrictUndefined: a missing variable is an error, never blank.

A template file holds the subject and the body: its first line is ``Subject: ...``, then a
blank line, then the body. Game-specific templates in ``templates/<game>/`` win over the
common ones in ``templates/_common/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import jinja2
from markupsafe import Markup

from bot.facts import Claims
from bot.resources import templates_path
from rules.api import View


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


def _wrap(text: str, width: int = 72, indent: str = "") -> str:
    return "\n".join(
        textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent) if line.strip() else ""
        for line in str(text).splitlines()
    )


def _labelled(name: str, labels: Mapping[str, str] | Sequence[str] = ()) -> str:
    """`name` as a person reads it: its label in `labels` (seat -> label), or, given the robot
    seats alone, "robo (robot)" for one of them."""
    if isinstance(labels, Mapping):
        return str(labels.get(name, name))
    return f"{name} (robot)" if name in labels else name


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
        )
        env.filters["wrap"] = _wrap
        env.globals["once"] = _once
        # A seat's name as standings and results show it: "robo (robot)" for a robot, "anna
        # (Kim McDonald)" for a seat handed to another person (bot.letters.context.seat_labels).
        env.filters["robot"] = _labelled
        env.filters["people"] = _people
        env.filters["indent_lines"] = lambda text, prefix="  ": "\n".join(
            prefix + line if line else line for line in str(text).splitlines()
        )
        return env

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
        subject = " ".join(head.removeprefix("Subject:").split())
        return RenderedMail(subject, tidy(body))


def tidy(body: str) -> str:
    """A letter's text as it is sent: no blanks at the end of a line, except in the "-- " line
    that opens a signature (RFC 3676 4.3), which mail clients and our own quote stripper need
    with its space; no blank line at its start or end; and never two blank lines in a row (a
    part a template leaves out leaves no gap), so one blank line always parts two blocks; the
    signature follows the letter's last line, with no blank line before its "-- "."""
    lines: list[str] = []
    for line in body.strip("\n").splitlines():
        line = line if line == "-- " else line.rstrip()
        if line == "-- " and lines and not lines[-1]:
            lines.pop()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"
