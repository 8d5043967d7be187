"""The words of every short answer and every sentence a letter builds from a fact.

Code outside `bot/letters/` decides *what* happened (a typed fact: the orders taken, a turn
resolved, an order withdrawn ...); the sentence a person reads is a template here, one file per
kind of fact, ``templates/_common/words/<kind>.txt``, rendered with the fact's values. So the
wording lives in one place, a translator or a GM can read it whole, and the code that decides
cannot phrase a claim its facts do not carry: a template given a value it does not know fails
(StrictUndefined), it never prints blank.
"""

from __future__ import annotations

from functools import cache

import jinja2

from bot.mail_out.vocabulary import Reader
from bot.resources import templates_path


class WordsError(RuntimeError):
    """A words template is missing or uses a value it was not given."""


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_path() / "_common" / "words"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    # A game's own words for how a seat takes part (bot.mail_out.vocabulary), by the game's kind.
    env.globals["game_words"] = Reader(templates_path())
    return env


_PLAIN = frozenset({str, int, bool, type(None)})

# Words already said, by the kind and the facts' `_fact_key`s: a words template sees its facts
# and the games' words alone (both read once a process), so the same plain facts give the same
# words. Bounded: emptied when full.
_SAID: dict[tuple[object, ...], str] = {}
_SAID_MAX = 4096


class _UnnamedError(Exception):
    """A fact that names no words (`_fact_key`): its words are rendered each time."""


def _fact_key(value: object) -> object:
    """A fact as it names the words: a string, an integer, a bool or None, or a list or tuple of
    them, by its value and type (1 and True name two); anything else (a float: 0.0 and -0.0
    are equal and written apart) raises `_UnnamedError`."""
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if isinstance(value, (list, tuple)) and (kind is list or kind is tuple):
        items = tuple(value)
        if _PLAIN.issuperset(map(type, items)):
            return (kind, tuple((type(item), item) for item in items))
    raise _UnnamedError


def _said_key(kind: str, facts: dict[str, object]) -> tuple[object, ...] | None:
    try:
        return (kind, *((name, _fact_key(value)) for name, value in facts.items()))
    except _UnnamedError:
        return None


def say(kind: str, /, **facts: object) -> str:
    """The words for a fact of `kind`, rendered from its template with `facts`; surrounding
    blank lines are dropped, so a template may end as it likes. The words of plain facts
    (strings, integers, bools, None, lists of them) are rendered once and said again from
    there."""
    key = _said_key(kind, facts)
    found = _SAID.get(key) if key is not None else None
    if found is not None:
        return found
    try:
        words = _env().get_template(f"{kind}.txt").render(**facts).strip()
        if key is not None:
            if len(_SAID) >= _SAID_MAX:
                _SAID.clear()
            _SAID[key] = words
        return words
    except jinja2.TemplateNotFound as exc:
        raise WordsError(f"no words template for {kind!r}") from exc
    except jinja2.UndefinedError as exc:
        raise WordsError(f"words template {kind!r}: {exc}") from exc
