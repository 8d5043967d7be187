"""What the regular expressions of `bot.mail_in.parse` are handed, counted instead of timed.

`watching()` wraps every pattern of the module (its compiled patterns, and the ``re.*`` calls
it makes with a pattern written in place) so that each call records the characters it was
given. A pattern's work is bounded by what it sees: the tests hold the reader to seeing each
line on its own (never the rest of the text), a bounded piece of an element, and on a text
twice as long at most twice as much. How long the hostile texts take is
`python -m bench --only budgets` (``hostile-text``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from bot.mail_in import parse


@dataclass
class Seen:
    """One pattern's calls and the characters they were given."""

    calls: int = 0
    chars: int = 0
    longest: int = 0  # the most characters one call was given


@dataclass
class PatternWork:
    """Every pattern's `Seen`, by its name in the module (``re:<pattern>`` for one in place)."""

    by_pattern: dict[str, Seen] = field(default_factory=dict)

    def saw(self, name: str, size: int) -> None:
        seen = self.by_pattern.setdefault(name, Seen())
        seen.calls += 1
        seen.chars += size
        seen.longest = max(seen.longest, size)

    @property
    def calls(self) -> int:
        return sum(seen.calls for seen in self.by_pattern.values())

    @property
    def chars(self) -> int:
        return sum(seen.chars for seen in self.by_pattern.values())

    @property
    def longest(self) -> int:
        return max((seen.longest for seen in self.by_pattern.values()), default=0)


class _Watched:
    """A compiled pattern that tells `work` what each call is given; the pattern's own answer."""

    def __init__(self, pattern: re.Pattern[str] | re.Pattern[bytes], name: str, work: PatternWork) -> None:
        self.pattern = pattern
        self.name = name
        self.work = work

    def _call(self, method: str, seen: str | bytes, *args: object, pos: int = 0, endpos: int = sys.maxsize) -> object:
        """`method` of the pattern on `args`, once `seen` (from `pos` to `endpos`) is counted."""
        self.work.saw(self.name, max(0, min(len(seen), endpos) - pos))
        answer: object = getattr(self.pattern, method)(*args)
        return answer

    def match(self, text: str | bytes, pos: int = 0, endpos: int = sys.maxsize) -> object:
        return self._call("match", text, text, pos, endpos, pos=pos, endpos=endpos)

    def search(self, text: str | bytes, pos: int = 0, endpos: int = sys.maxsize) -> object:
        return self._call("search", text, text, pos, endpos, pos=pos, endpos=endpos)

    def fullmatch(self, text: str | bytes, pos: int = 0, endpos: int = sys.maxsize) -> object:
        return self._call("fullmatch", text, text, pos, endpos, pos=pos, endpos=endpos)

    def finditer(self, text: str | bytes, pos: int = 0, endpos: int = sys.maxsize) -> object:
        return self._call("finditer", text, text, pos, endpos, pos=pos, endpos=endpos)

    def findall(self, text: str | bytes, pos: int = 0, endpos: int = sys.maxsize) -> object:
        return self._call("findall", text, text, pos, endpos, pos=pos, endpos=endpos)

    def sub(self, repl: object, text: str | bytes, count: int = 0) -> object:
        return self._call("sub", text, repl, text, count)

    def split(self, text: str | bytes, maxsplit: int = 0) -> object:
        return self._call("split", text, text, maxsplit)


class _WatchedRe:
    """The `re` module as `parse` sees it: a call with a pattern in place is watched too."""

    def __init__(self, work: PatternWork) -> None:
        self.work = work

    def __getattr__(self, name: str) -> object:
        return getattr(re, name)

    def _watched(self, pattern: str, flags: int) -> _Watched:
        return _Watched(re.compile(pattern, flags), f"re:{pattern}", self.work)

    def match(self, pattern: str, text: str, flags: int = 0) -> object:
        return self._watched(pattern, flags).match(text)

    def search(self, pattern: str, text: str, flags: int = 0) -> object:
        return self._watched(pattern, flags).search(text)

    def fullmatch(self, pattern: str, text: str, flags: int = 0) -> object:
        return self._watched(pattern, flags).fullmatch(text)

    def findall(self, pattern: str, text: str, flags: int = 0) -> object:
        return self._watched(pattern, flags).findall(text)

    def finditer(self, pattern: str, text: str, flags: int = 0) -> object:
        return self._watched(pattern, flags).finditer(text)

    def sub(self, pattern: str, repl: object, text: str, count: int = 0, flags: int = 0) -> object:
        return self._watched(pattern, flags).sub(repl, text, count)

    def split(self, pattern: str, text: str, maxsplit: int = 0, flags: int = 0) -> object:
        return self._watched(pattern, flags).split(text, maxsplit)


@contextmanager
def watching() -> Iterator[PatternWork]:
    """Within the block, every pattern `bot.mail_in.parse` uses counts what it is given."""
    work = PatternWork()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in list(vars(parse).items()):
            if isinstance(value, re.Pattern):
                patch.setattr(parse, name, _Watched(value, name, work))
        patch.setattr(parse, "re", _WatchedRe(work))
        yield work


def work_of(run: Callable[[], object]) -> PatternWork:
    """What the patterns were given while `run` ran."""
    with watching() as work:
        run()
    return work
