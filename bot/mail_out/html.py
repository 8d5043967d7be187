"""The HTML template of a mail, if its game has one.

`html_template` finds ``templates/<game>/<name>.html`` (else ``templates/_common/<name>.html``);
no such template: no HTML part, and the mail stays plain text. Jinja autoescapes ``.html``
templates and StrictUndefined applies. The letters render it, with the turn's picture inline
(`bot.letters.pictures.html_body`).
"""

from __future__ import annotations

import jinja2

from bot.mail_out.render import Renderer

_FOUND: dict[tuple[int, str | None, str], tuple[jinja2.Environment, jinja2.Template | None]] = {}


def html_template(renderer: Renderer, game: str | None, name: str) -> jinja2.Template | None:
    """The HTML template for mail `name` of `game`, or None; looked up once per environment
    (a reload, on SIGHUP, makes a new one), not with a stat of every file for every mail."""
    env = renderer.env
    key = (id(env), game, name)
    found = _FOUND.get(key)
    if found is not None and found[0] is env:
        return found[1]
    candidates = ([f"{game}/{name}.html"] if game else []) + [f"_common/{name}.html"]
    try:
        template: jinja2.Template | None = env.select_template(candidates)
    except jinja2.TemplatesNotFound:
        template = None
    if len(_FOUND) > 1024:
        _FOUND.clear()
    _FOUND[key] = (env, template)
    return template
