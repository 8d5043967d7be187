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


def say(kind: str, /, **facts: object) -> str:
    """The words for a fact of `kind`, rendered from its template with `facts`; surrounding
    blank lines are dropped, so a template may end as it likes."""
    try:
        return _env().get_template(f"{kind}.txt").render(**facts).strip()
    except jinja2.TemplateNotFound as exc:
        raise WordsError(f"no words template for {kind!r}") from exc
    except jinja2.UndefinedError as exc:
        raise WordsError(f"words template {kind!r}: {exc}") from exc
