"""Each game's own words where a letter names how a seat takes part in it (Racecraft's runners
run, the cars of Speed Circuit and SpeedPhreakz are driven): ``<templates>/<game>/vocabulary.toml``,
one file per game with the same keys, read once per template environment (`Reader`; SIGHUP's
reload reads them again). Every template (the
letters' and the words' of `bot.letters.words`) asks for them by the game's kind
(``game_words(game.kind).take_part``), so no template decides the word with an ``if``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path


class VocabularyError(RuntimeError):
    """A game's vocabulary file is missing, or lacks a word or has one too many."""


@dataclass(frozen=True, slots=True)
class GameWords:
    """How a seat takes part in a game, in the game's words: the verb (``take_part``: "You run
    as ..."), its third person (``takes_part``: "a robot runs it"), its participle
    (``taken_part``: "now run by a robot") and who does it (``driver``: "a robot runner")."""

    take_part: str
    takes_part: str
    taken_part: str
    driver: str


def game_words(root: Path, kind: str) -> GameWords:
    """The words of the game of `kind` (its registry key), from its vocabulary file under the
    templates folder `root`."""
    path = root / kind / "vocabulary.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VocabularyError(f"no vocabulary for game {kind!r} ({path}): {exc}") from exc
    wanted = {f.name for f in fields(GameWords)}
    if set(raw) != wanted or not all(isinstance(v, str) and v for v in raw.values()):
        raise VocabularyError(f"{path}: needs exactly the words {', '.join(sorted(wanted))}, each a string")
    return GameWords(**{name: str(raw[name]) for name in wanted})


class Reader:
    """`game_words` under one templates folder, each game's read once: a template environment's
    ``game_words`` global."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._read: dict[str, GameWords] = {}

    def __call__(self, kind: object) -> GameWords:
        key = str(kind)
        found = self._read.get(key)
        if found is None:
            found = self._read[key] = game_words(self.root, key)
        return found


__all__ = ["GameWords", "Reader", "VocabularyError", "game_words"]
