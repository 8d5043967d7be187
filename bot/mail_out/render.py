"""Templates -> mail. Jinja2 with StrictUndefined: a missing variable is an error, never blank.

A template file holds the subject and the body: its first line is ``Subject: ...``, then a
blank line, then the body. Game-specific templates in ``templates/<game>/`` win over the
common ones in ``templates/_common/``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from bot.resources import templates_path


class TemplateError(RuntimeError):
    """A template is missing, malformed or uses a variable it was not given."""


@dataclass(frozen=True, slots=True)
class RenderedMail:
    subject: str
    body: str


def _wrap(text: str, width: int = 72, indent: str = "") -> str:
    return "\n".join(
        textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent) if line.strip() else ""
        for line in str(text).splitlines()
    )


class Renderer:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else templates_path()
        self.env = self._make_env()

    def _make_env(self) -> jinja2.Environment:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.root)),
            undefined=jinja2.StrictUndefined,
            autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["wrap"] = _wrap
        env.filters["indent_lines"] = lambda text, prefix="  ": "\n".join(prefix + line if line else line for line in str(text).splitlines())
        return env

    def reload(self) -> None:
        """Drop cached templates (SIGHUP)."""
        self.env = self._make_env()

    def _template(self, game: str | None, name: str) -> jinja2.Template:
        candidates = ([f"{game}/{name}.txt"] if game else []) + [f"_common/{name}.txt"]
        try:
            return self.env.select_template(candidates)
        except jinja2.TemplatesNotFound as exc:
            raise TemplateError(f"no template {name!r} (looked for {', '.join(candidates)})") from exc

    def render(self, name: str, context: Mapping[str, Any], *, game: str | None = None) -> RenderedMail:
        try:
            text = self._template(game, name).render(**context)
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"template {name!r}: {exc}") from exc
        head, sep, body = text.partition("\n\n")
        if not sep or not head.startswith("Subject:"):
            raise TemplateError(f"template {name!r} must start with 'Subject: ...' and a blank line")
        subject = " ".join(head.removeprefix("Subject:").split())
        # Trailing blanks go, except in the "-- " line that opens a signature (RFC 3676 4.3),
        # which mail clients and our own quote stripper need with its space.
        body = "\n".join(line if line == "-- " else line.rstrip() for line in body.strip("\n").splitlines()) + "\n"
        return RenderedMail(subject, body)
