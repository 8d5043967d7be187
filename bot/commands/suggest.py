"""Did you mean ...? A line not understood -> the command or order word it most likely meant,
with its syntax ("Did-you-mean for commands, orders and GM verbs, with the syntax
line"). Pure.

The words a line may have meant are the player verbs (`PLAYER_COMMANDS`), the GM verbs for a
GM (`GM_COMMANDS`), and the order words of the game (the words in capitals of its order
grammar, `Game.order_help`: USE, SPEED, PATH, ROUND ...). Only the first word of a line is
compared, and only a near miss counts (`difflib`'s ratio at least 0.75, or 0.6 for a word of
three or four letters: about one letter wrong, left out, doubled or swapped, "USR" for USE,
"STAUTS" for STATUS), so a line that is simply not an order gets no guess; nor does a first word with an apostrophe
("I'll put 40 in" is prose, not a near miss of SKILL). The words of a did-you-mean are the
letters' (templates ``did_you_mean*`` and ``gm_names_the_game_first``): this module chooses the
word, never phrases it.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from bot.commands.grammar import GM_COMMANDS, PLAYER_COMMANDS
from bot.letters.words import say

_CUTOFF, _SHORT_CUTOFF = 0.75, 0.6
_ORDER_WORD = re.compile(r"\b[A-Z][A-Z0-9]{1,}\b")
# A word with an apostrophe ("I'LL", "DON'T", "IT'S") is English written as prose, never a
# near miss of an order word or a command: no guess for it.
_CONTRACTED = re.compile(r"\w['’]\w")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What a line of one mail may have meant: word -> the syntax shown for it."""

    words: dict[str, str]
    # first word -> its suggestion: a vocabulary serves every mail of its kind (`vocabulary`)
    seen: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    def suggest(self, line: str) -> str | None:
        """ "did you mean STATUS (STATUS: ...)?" for a line whose first word is a near miss of a
        known word, else None (a known word itself, or nothing near enough)."""
        first = line.strip().split(maxsplit=1)[0].upper() if line.strip() else ""
        if first not in self.seen:
            if len(self.seen) >= 1024:
                self.seen.clear()
            self.seen[first] = self._closest(first)
        return self.seen[first]

    def _closest(self, first: str) -> str | None:
        if len(first) < 3 or first in self.words or _CONTRACTED.search(first):
            return None
        cutoff = _SHORT_CUTOFF if len(first) <= 4 else _CUTOFF
        close = difflib.get_close_matches(first, self.words, n=1, cutoff=cutoff)
        if not close:
            return None
        word = close[0]
        syntax = self.words[word]
        return say("did_you_mean", word=word, syntax=syntax if syntax != word else "")


def vocabulary(*, order_help: str = "", gm: bool = False, games: Sequence[str] = ()) -> Vocabulary:
    """The words of a mail from a player of a game whose order grammar is `order_help` (and, for
    a GM, the GM verbs; `games` the GM's games, for the syntax shown). Made once for each such
    grammar and kept (bench: ingest: difflib was a tenth of a mail with a line not understood)."""
    return _vocabulary(order_help, gm, tuple(games))


@functools.lru_cache(maxsize=256)
def _vocabulary(order_help: str, gm: bool, games: tuple[str, ...]) -> Vocabulary:
    words: dict[str, str] = {}
    for line in order_help.splitlines():
        text = line.strip()
        for word in _ORDER_WORD.findall(text):
            # Order words, not codes such as F1 or coordinates, nor the two-letter words inside
            # an order (headings SE, NW; actions TL, HR): no line starts with one, and "use" is
            # no near miss of SE.
            if word.isalpha() and len(word) > 2:
                words.setdefault(word, text if text.startswith(word) else word)
    for command in PLAYER_COMMANDS:
        words[command.verb] = say("did_you_mean_command", syntax=command.syntax, summary=command.summary)
    if gm:
        for spec in GM_COMMANDS:
            words[spec.verb] = say("did_you_mean_gm_command", syntax=spec.syntax, example=_example(spec.example, games))
    return Vocabulary(words)


def _example(example: str, games: Sequence[str]) -> str:
    """A GM command's example with the GM's own (first) game in it."""
    verb, _, rest = example.partition(" ")
    _game, _, args = rest.partition(" ")
    return " ".join(w for w in (verb, games[0] if games else _game, args) if w)


def with_suggestion(reason: str, line: str, known: Vocabulary | None) -> str:
    """`reason` for refusing `line`, with a did-you-mean when there is one."""
    hint = known.suggest(line) if known is not None else None
    return say("did_you_mean_reason", reason=reason, hint=hint) if hint else reason


def gm_game_hint(line: str, gm_games: Collection[str]) -> str | None:
    """For a GM line whose verb is right but whose second word is not one of the GM's games
    ("EXTEND 24h"): which game it needs."""
    words = line.split()
    if not words:
        return None
    spec = next((s for s in GM_COMMANDS if s.verb == words[0].upper()), None)
    if spec is None or (len(words) > 1 and words[1].lower() in gm_games):
        return None
    games = sorted(gm_games)
    return say(
        "gm_names_the_game_first",
        verb=spec.verb,
        syntax=spec.syntax,
        example=_example(spec.example, games),
        games=games,
    )


__all__ = ["Vocabulary", "gm_game_hint", "vocabulary", "with_suggestion"]
