"""How the letters' templates read a name off a context value (`bot.mail_out.render`): a key of
a plain dict is read at once, without the AttributeError Jinja's own lookup raises and catches
for nearly every name a letter shows, and with Jinja's own result in every case."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import jinja2
from hypothesis import given
from hypothesis import strategies as st

from bot.mail_out.render import Renderer

NAMES = st.sampled_from(["name", "seat", "items", "get", "keys", "__class__", "__len__", "copy", "missing", "x"])


def _looked_up(env: jinja2.Environment, obj: object, name: str) -> tuple[str, object]:
    value = env.getattr(obj, name)
    if isinstance(value, jinja2.Undefined):
        return ("undefined", None)
    return ("value", value)


@given(keys=st.dictionaries(NAMES, st.integers()), name=NAMES)
def test_a_dict_lookup_gives_what_jinja_gives(keys: dict[str, int], name: str) -> None:
    """For any plain dict and name (a key, a dict method's name, a dunder, a missing one), and a
    dict subclass: the same value as Jinja's own lookup, or undefined where Jinja's is."""
    ours = Renderer().env
    theirs = jinja2.Environment(undefined=jinja2.StrictUndefined)

    class Sub(dict[str, int]):
        pass

    for obj in (keys, Sub(keys)):
        assert _looked_up(ours, obj, name) == _looked_up(theirs, obj, name)


def test_a_letter_reads_its_dict_context_without_raising_attribute_errors() -> None:
    """A template showing 40 names of dicts raises (and catches) no AttributeError on the way:
    each one costs an exception where Jinja asks for the attribute first."""
    env = Renderer().env
    template = env.from_string("{% for s in seats %}{{ s.name }} {{ s.place }}; {% endfor %}{{ game.title }}")
    context = {"seats": [{"name": f"p{i}", "place": i} for i in range(20)], "game": {"title": "Racecraft"}}
    raised: list[type[BaseException]] = []

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "exception":
            raised.append(arg[0])
        return trace

    sys.settrace(trace)
    try:
        text = template.render(**context)
    finally:
        sys.settrace(None)
    assert text.startswith("p0 0; p1 1;") and text.endswith("p19 19; Racecraft")
    assert AttributeError not in raised
