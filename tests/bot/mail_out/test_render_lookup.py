"""How the letters' templates read a name off a context value (`bot.mail_out.render`): a key of
a plain dict is read at once, without the AttributeError Jinja's own lookup raises and catches
for nearly every name a letter shows, and with Jinja's own result in every case."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import jinja2
import jinja2.runtime
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.mail_out.render import Fragments, Renderer, sharing

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


def test_once_renders_a_macro_once_for_the_same_arguments_while_sharing() -> None:
    """``once(macro, args...)``: while `sharing`, the same macro with the same shared value (by
    identity) and equal names (by value) is rendered once and its text given again; another
    value, other names or no sharing render it anew, so no letter shows another's part."""
    env = Renderer().env
    template = env.from_string(
        "{% macro shown(d, names) %}{{ d.text }} {{ names | join(',') }}{% endmacro %}{{ once(shown, d, names) }}"
    )
    calls: list[str] = []

    class Counted(dict[str, str]):
        def __getitem__(self, key: str) -> str:
            calls.append(key)
            return super().__getitem__(key)

    one, other = Counted(text="a"), Counted(text="a")
    fragments: Fragments = {}
    with sharing(fragments):
        first = [template.render(d=one, names=["x", "y"]) for _ in range(3)]
        assert len(calls) == 1
        assert template.render(d=one, names=["x"]) == "a x"
        assert template.render(d=other, names=["x", "y"]) == "a x,y"
    assert first == ["a x,y"] * 3 and len(calls) == 3
    assert template.render(d=one, names=["x", "y"]) == "a x,y" and len(calls) == 4


def test_once_names_a_dict_of_labels_by_its_items() -> None:
    """The seats' labels (a dict of strings built again for each letter) name a fragment by their
    items: equal labels share one rendering, other labels render anew."""
    env = Renderer().env
    template = env.from_string(
        "{% macro shown(d, labels) %}{{ d.text }} {{ labels | dictsort | join(',') }}{% endmacro %}"
        "{{ once(shown, d, labels) }}"
    )
    calls: list[str] = []

    class Counted(dict[str, str]):
        def __getitem__(self, key: str) -> str:
            calls.append(key)
            return super().__getitem__(key)

    shared = Counted(text="a")
    with sharing({}):
        texts = [template.render(d=shared, labels={"anna": "anna (Kim)", "robo": "robo (robot)"}) for _ in range(3)]
        assert len(calls) == 1
        other = template.render(d=shared, labels={"anna": "anna (Lee)"})
        assert len(calls) == 2
    assert len(set(texts)) == 1 and other != texts[0]


@given(
    st.dictionaries(
        st.sampled_from(["cid", "alt", "width", "seq", "head"]),
        st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(-2, 2), st.text(max_size=3)),
    ),
    st.dictionaries(
        st.sampled_from(["cid", "alt", "width", "seq", "head"]),
        st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(-2, 2), st.text(max_size=3)),
    ),
)
def test_once_shares_a_fragment_between_dicts_of_plain_values_only_when_they_read_the_same(
    one: dict[str, object], other: dict[str, object]
) -> None:
    """A dict of strings, numbers and None built again for each letter (a picture's size, a
    turn's commitment) names a fragment by its items and each value's type: two such dicts share
    one rendering exactly when the fragment reads the same from both (1 and True, 0 and 0.0,
    and an order of keys are told apart)."""
    env = Renderer().env
    template = env.from_string(
        "{% macro shown(d) %}{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% endmacro %}{{ once(shown, d) }}"
    )
    with sharing({}):
        first, second = template.render(d=one), template.render(d=other)
    alone = [
        env.from_string("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}").render(d=d) for d in (one, other)
    ]
    assert [first, second] == alone


def test_a_turns_dice_are_rendered_once_for_all_its_letters(tmp_path: Path) -> None:
    """What the results reveal of a turn's dice is the same in every seat's letter and the GM's
    copy: rendered once a turn (text and HTML), while each seat's own orders still come after it
    in its letter alone."""
    from bench.tick import main as tick_main

    counted: Counter[str] = Counter()
    invoke = jinja2.runtime.Macro._invoke

    def counting(self: jinja2.runtime.Macro, arguments: list[Any], autoescape: bool) -> Any:
        counted[f"{self.name}.{'html' if autoescape else 'txt'}"] += 1
        return invoke(self, arguments, autoescape)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jinja2.runtime.Macro, "_invoke", counting)
        assert tick_main(["--games", "2", "--runs", "1", "--set", "schedule.resolve_workers=0"]) == 0
    # 2 games of 8: every letter of each turn (the 8 seats' and the GM's at least) reveals its dice;
    # a seat's HTML takes them with the rest its turn's letters share (`results_shared`, once a turn)
    assert counted["dice_revealed.txt"] >= 18
    assert counted["results_shared.html"] == 2
    assert counted["dice_shown.txt"] == counted["dice_shown.html"] == 2


def test_a_template_is_compiled_once_a_process_and_again_once_its_text_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second Renderer (a reload on SIGHUP, another app) renders a template the first one
    compiled without compiling it again; once its file is edited, a new Renderer compiles it
    again and renders the edit, never the code compiled from the old text."""
    letter = tmp_path / "_common" / "hello.txt"
    letter.parent.mkdir()
    letter.write_text("Subject: Hello\n\nHello {{ name }}.\n")
    compiled: list[str | None] = []
    compile_source = jinja2.Environment.compile

    def counted(env: jinja2.Environment, source: str, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiled.append(name)
        return compile_source(env, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    assert Renderer(tmp_path).render("hello", {"name": "Kelly"}).body == "Hello Kelly.\n"
    assert compiled == ["_common/hello.txt"]
    again = Renderer(tmp_path)
    again.reload()
    assert again.render("hello", {"name": "Seb"}).body == "Hello Seb.\n"
    assert compiled == ["_common/hello.txt"]
    letter.write_text("Subject: Hello\n\nHello {{ name }}, edited.\n")
    again.reload()
    assert again.render("hello", {"name": "Seb"}).body == "Hello Seb, edited.\n"
    assert compiled == ["_common/hello.txt", "_common/hello.txt"]


# Lines as letters fill them: words, runs of blanks, tabs and other white space (a no-break
# space, an ideographic space) anywhere, a line's end among them.
_LINE_PARTS = st.sampled_from(["word", "a", "longerword", "x-y", " ", "  ", "\t", "\xa0", "\u3000", "\n", "é"])


@given(
    text=st.lists(_LINE_PARTS, max_size=40).map("".join),
    width=st.integers(min_value=1, max_value=80),
    indent=st.sampled_from(["", " ", "    ", "\t"]),
)
@example(text="\xa0 \xa0word", width=2, indent="    ")  # textwrap.fill never ends on it
def test_the_wrap_filter_gives_what_textwrap_fill_gives_every_line(text: str, width: int, indent: str) -> None:
    """`wrap` hands a line that fits back as it is without textwrap: for any text, width and
    indent, every line is what textwrap.fill makes of it (a bare link or a quote left whole).
    An indent as wide as the width is refused, never handed to textwrap (which may loop for
    ever on it: "\xa0 \xa0word" at width 2 with an indent of four spaces)."""
    import textwrap

    from bot.mail_out.render import _wrap

    if len(indent) >= width:
        with pytest.raises(ValueError):
            _wrap(text, width, indent)
        return

    def fill(line: str) -> str:
        return textwrap.fill(
            line, width, initial_indent=indent, subsequent_indent=indent + line[: len(line) - len(line.lstrip())]
        )

    try:
        expected = "\n".join(fill(line) if line.strip() else "" for line in text.splitlines())
    except ValueError:  # textwrap refuses an indent as wide as the width: so must the filter
        with pytest.raises(ValueError):
            _wrap(text, width, indent)
        return
    assert _wrap(text, width, indent) == expected


def test_an_imported_macro_module_is_jinjas_own_with_or_without_globals_of_the_importer(tmp_path: Path) -> None:
    """A template imported by a letter gives the module Jinja gives: its cached one when the
    importing letter brings no global of its own, a new one seeing the importer's global when it
    does (a template loaded with globals of its own); and a letter's context holds every global,
    the template's own over the environment's."""
    (tmp_path / "_common").mkdir()
    (tmp_path / "_common" / "_m.txt").write_text("{% macro hi() %}{{ greeting | default('hello') }}{% endmacro %}")
    (tmp_path / "_common" / "hello.txt").write_text(
        'Subject: Hi\n\n{% import "_common/_m.txt" as m %}{{ m.hi() }} {{ columns([["a"]]) }} {{ name }}\n'
    )
    renderer = Renderer(tmp_path)
    assert renderer.render("hello", {"name": "Kelly"}).body == "hello a Kelly\n"
    plain = renderer.env.get_template("_common/hello.txt")
    assert plain.render(name="Seb").endswith("hello a Seb\n")
    own = renderer.env.get_template("_common/hello.txt", globals={"greeting": "howdy", "columns": lambda rows: "c"})
    assert own.render(name="Seb").endswith("howdy c Seb\n")


def test_compile_all_compiles_every_template_and_leaves_a_broken_one_to_its_first_use(tmp_path: Path) -> None:
    """`Renderer.compile_all`: every .txt and .html template under the root compiled at once
    (a turn worker made ready ahead does it); one that does not compile is not counted and
    still raises at its first use, as before."""
    (tmp_path / "_common").mkdir()
    (tmp_path / "_common" / "fine.txt").write_text("Subject: fine\n\n{{ 1 + 1 }}\n")
    (tmp_path / "_common" / "fine.html").write_text("<p>{{ 2 }}</p>\n")
    (tmp_path / "_common" / "broken.txt").write_text("Subject: broken\n\n{% if %}\n")
    (tmp_path / "_common" / "notes.toml").write_text("x = 1\n")
    renderer = Renderer(tmp_path)
    assert renderer.compile_all() == 2
    assert renderer.render("fine", {}).body.strip() == "2"
    with pytest.raises(jinja2.TemplateSyntaxError):
        renderer.render("broken", {})
    assert Renderer().compile_all() > 100  # the project's own templates all compile


def test_every_compiled_template_is_kept_however_many_there_are(tmp_path: Path) -> None:
    """A renderer keeps every template it compiled for its environment's life: none is dropped
    and compiled again at its next use, however many there are (the project's own are more than
    Jinja's default cache of 400)."""
    (tmp_path / "_common").mkdir()
    for n in range(450):
        (tmp_path / "_common" / f"t{n:03}.txt").write_text(f"Subject: {n}\n\n{{{{ {n} }}}}\n")
    renderer = Renderer(tmp_path)
    assert renderer.compile_all() == 450
    assert renderer.env.cache is not None and len(renderer.env.cache) == 450
    first = renderer.env.get_template("_common/t000.txt")
    renderer.compile_all()
    assert renderer.env.get_template("_common/t000.txt") is first
    assert renderer.render("t000", {}).body.strip() == "0"
