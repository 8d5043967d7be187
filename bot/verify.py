"""`flagman verify DIR`: re-check a game's public archive, turn by turn, with the rules alone.

A game's archive (`flagman archive`, and the bot's own) holds ``record.json`` (`bot.games.record`
says what is in it) beside the pages people read. This module checks them with nothing of the
bot's database or secrets -- the program any player can run (docs/DESIGN.md, "Dice anyone can
check", states the scheme for those who would write their own):

archive     the record is a plain file in DIR (no link followed out of it), of bounded size
            and depth, of the shape this version writes; the index, every turn's page and the
            dice page are plain files of DIR that name the game the record names; the index lists
            exactly the turns the record counts, and says the game is over exactly when the
            record does; every value the dice page shows is the record's, every turn's report
            ("What happened") is the record's
log         the commitment log is a chain: each entry's head is made of the head before it and
            the entry; its secrets hash to its commitments; each turn's draws are in order (a
            draw rolled back is followed by its turn reopened); the log's resolved entries are
            exactly the record's turns, its open entry the record's open turn
turns       numbered 1 to the count the index shows, none missing, the last open or the game over
commitment  SHA-256 of the revealed secret is the commitment of the turn's entry in the log
seed        the seed is made of the game, the turn, the secret and the digest (its scheme's)
orders      the orders published are in the form the dice digest them, and their digest is the
            digest (once the game is over: the orders and states are private until then)
receipts    each seat's receipt is that of its published orders, one for every seat that ordered
chain       a turn's state is the state after the turn before
events      the turn resolved again, from its state and orders with the seed's dice, gives the
            published events (rolls included), state and report

The first item that does not hold is named, in one line. What the record cannot prove by itself
(that the commitments published are the ones mailed before the orders closed) is said: only a
player's comparison with their own mail proves it. `verify_mail` checks one saved results mail
(`rules.fair.read_mail`), alone or against the archive.
"""

from __future__ import annotations

import json
import os
import random
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from rules import UnknownGameError, fair, find_game
from rules.api import AnyGame, GameOrder, GameState, Viewer

RECORD = "record.json"
CHECK_SCRIPT = "check-dice.py"
FORMAT = 2
MAX_RECORD_BYTES = 64 << 20  # a long finished game's record is a few MB
MAX_PAGE_BYTES = 8 << 20
MAX_DEPTH = 64  # a state nests a handful of levels
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_PAGE = re.compile(r"^turn-(\d{3,})\.html$")
PRIVATE = ("state", "orders", "submitted", "events", "state_after")

# Exit statuses of `flagman verify` (README, "Commands"; the CLI's own: 2 is bad usage or input).
HOLDS, FAILS, NOT_A_RECORD = 0, 1, 2

ONLY_YOUR_MAIL = (
    "What this cannot prove, and only your own mail can: that the commitments published here are the "
    "ones mailed before the orders closed. Compare the commitment (and the log's head) your turn sheet "
    "carried with this archive's: the same value means the bot could not change the secret after your "
    "sheet went out. The bot's operator holds each secret until the results reveal it: nothing here "
    "proves a secret was unknown to them."
)


class RecordError(ValueError):
    """Not a record this version reads: no file, a link, too big, not JSON, another shape."""


def shown_time(stamp: str | None) -> str:
    """A time of the record (``2025-01-31T18:00:05Z``) as the pages show it: ``2025-01-31
    18:00:05 UTC``."""
    return stamp.replace("T", " ").replace("Z", " UTC") if stamp else ""


def page_name(number: int) -> str:
    return f"turn-{number:03d}.html"


@dataclass(frozen=True, slots=True)
class Failure:
    where: str  # "turn 3 (Race turn 1)", "log entry 4", "dice.html", "index.html", "record"
    item: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.item}: {self.detail}"


class Fails(Exception):  # noqa: N818 - named for what happened, as Refused
    def __init__(self, where: str, item: str, detail: str) -> None:
        super().__init__(str(Failure(where, item, detail)))
        self.failure = Failure(where, item, detail)


@dataclass
class Verdict:
    """What `verify` found: the values of every turn (to compare with one's mail), what was
    checked, what could not be, and the first failure (None: everything checked holds)."""

    game: str
    turns: int = 0
    shown: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


# -- reading the archive, safely ------------------------------------------------------------


def read_file(directory: Path, name: str, limit: int) -> bytes:
    """The bytes of the plain file `name` in `directory`: never through a link, never a device
    or a pipe, never more than `limit` bytes. OSError (FileNotFoundError) or RecordError."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(directory / name, flags)
    except OSError as exc:
        if exc.errno is not None and exc.errno in (getattr(os, "ELOOP", -1), getattr(os, "EMLINK", -1)):
            raise RecordError(f"{name} is a link: an archive's files are its own") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RecordError(f"{name} is not a plain file")
        if info.st_size > limit:
            raise RecordError(f"{name} is {info.st_size} bytes, more than a record holds ({limit})")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise RecordError(f"{name} is more than {limit} bytes")
    return data


def _depth(value: object) -> int:
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        if isinstance(item, dict):
            todo.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, level + 1) for v in item)
    return deepest


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON a record holds")


def parse_record(data: bytes, name: str = RECORD) -> dict[str, Any]:
    """A record from its bytes, checked for shape (`_shape`); RecordError when it is none."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RecordError(f"{name} is not JSON: {str(exc)[:120]}") from None
    if _depth(value) > MAX_DEPTH:
        raise RecordError(f"{name} nests deeper than a record does ({MAX_DEPTH} levels)")
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise RecordError(f"{name} is not a record this version of flagman reads (format {FORMAT})")
    _shape(value)
    return value


def read_record(directory: Path) -> dict[str, Any]:
    """The record of the archive in `directory` (RecordError when there is none to read)."""
    if not directory.is_dir():
        raise RecordError(f"{directory} is not a folder: give the folder of a game's archive (flagman archive)")
    try:
        data = read_file(directory, RECORD, MAX_RECORD_BYTES)
    except FileNotFoundError:
        raise RecordError(
            f"{directory / RECORD} does not exist: give the folder of a game's archive (flagman archive)"
        ) from None
    except OSError as exc:
        raise RecordError(f"{directory / RECORD} cannot be read: {exc.strerror or exc}") from None
    return parse_record(data)


# -- the shape of a record --------------------------------------------------------------------


def _need(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise RecordError(f"not a record: {where} {what}")


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fields(value: object, where: str, spec: Mapping[str, str], optional: Sequence[str] = ()) -> dict[str, Any]:
    _need(isinstance(value, dict), where, "is not an object")
    assert isinstance(value, dict)
    for key, kind in spec.items():
        if key not in value:
            _need(key in optional, where, f"has no {key!r}")
            continue
        item = value[key]
        ok = {
            "str": isinstance(item, str),
            "int": _int(item),
            "bool": isinstance(item, bool),
            "hex": isinstance(item, str) and fair.is_secret(item),
            "stamp": isinstance(item, str) and bool(_STAMP.match(item)),
            "stamp?": item is None or (isinstance(item, str) and bool(_STAMP.match(item))),
            "str?": item is None or isinstance(item, str),
            "int?": item is None or _int(item),
            "strs": isinstance(item, list) and all(isinstance(s, str) for s in item),
            "ints": isinstance(item, list) and all(_int(s) for s in item),
            "map": isinstance(item, dict) and all(isinstance(v, str) for v in item.values()),
            "list": isinstance(item, list),
            "obj": isinstance(item, dict),
            "obj?": item is None or isinstance(item, dict),
        }[kind]
        _need(ok, where, f"has {key!r} of the wrong type (not {kind})")
    return value


TOP = {
    "format": "int",
    "game": "str",
    "kind": "str",
    "title": "str",
    "chance": "bool",
    "finished": "bool",
    "seats": "strs",
    "robots": "strs",
    "turn_count": "int",
    "turns": "list",
    "before_commitments": "ints",
    "open": "obj?",
    "commitments": "list",
    "head": "hex",
}
TURN = {
    "number": "int",
    "label": "str",
    "scheme": "int",
    "commitment": "str",
    "log": "int?",
    "draw": "int",
    "earlier": "ints",
    "committed_at": "stamp",
    "secret": "str",
    "revealed_at": "stamp",
    "digest": "str",
    "seed": "int",
    "receipts": "map",
    "gm_orders": "list",
    "state_changes": "list",
    "public_events": "strs",
    "state": "obj",
    "orders": "map",
    "submitted": "strs",
    "events": "list",
    "state_after": "obj",
}
ENTRY = {
    "seq": "int",
    "number": "int",
    "label": "str",
    "commitment": "hex",
    "made_at": "stamp",
    "why": "str",
    "head": "hex",
    "fate": "str",
    "secret": "str?",
    "revealed_at": "stamp?",
}
OPEN = {"number": "int", "label": "str", "commitment": "hex", "log": "int?", "draw": "int", "committed_at": "stamp"}
GM = {"seat": "str", "at": "str", "by": "str"}


def _shape(record: dict[str, Any]) -> None:
    _fields(record, "the record", TOP)
    for index, turn in enumerate(record["turns"]):
        found = _fields(turn, f"turn {index + 1} of the list", TURN, optional=PRIVATE)
        for g in found["gm_orders"]:
            _fields(g, f"a GM change of turn {found['number']}", GM)
        for g in found["state_changes"]:
            _fields(g, f"a GM change of turn {found['number']}'s state", {"at": "stamp", "by": "str"})
        if "events" in found:
            _need(
                all(isinstance(e, dict) for e in found["events"]),
                f"turn {found['number']}",
                "has an event not an object",
            )
    for index, entry in enumerate(record["commitments"]):
        _fields(entry, f"entry {index + 1} of the log", ENTRY)
    if record["open"] is not None:
        _fields(record["open"], "the open turn", OPEN)


# -- reading the pages ------------------------------------------------------------------------

_VOID = {"br", "img", "meta", "link", "hr", "input", "wbr", "source", "area", "base", "col", "embed", "track"}


class _Page(HTMLParser):
    """What verify reads of a page: its title and heading, the turns its index lists, whether it
    shows a final result, its report's lines and every value marked ``data-check``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.h1 = ""
        self.links: list[str] = []
        self.events: list[str] = []
        self.checks: dict[str, str] = {}
        self.doubled: list[str] = []
        self.final = False
        self._reading: list[list[Any]] = []  # [what, key, text parts, open elements] being read
        self._turns = False
        self._events = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        for reading in self._reading:
            reading[3] += 1
        if tag == "ol" and "turns" in classes:
            self._turns = True
        elif tag == "a" and self._turns and found.get("href"):
            self.links.append(str(found["href"]))
        elif tag == "section" and "result" in classes:
            self.final = True
        elif tag == "ul" and "events" in classes:
            self._events = True
        what = {"title": "title", "h1": "h1"}.get(tag) or ("event" if tag == "li" and self._events else None)
        if what is not None:
            self._reading.append([what, "", [], 1])
        key = found.get("data-check")
        if key is not None:
            self._reading.append(["check", key, [], 1])

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if tag == "ol":
            self._turns = False
        elif tag == "ul":
            self._events = False
        for reading in self._reading:
            reading[3] -= 1
        while self._reading and self._reading[-1][3] <= 0:
            what, key, parts, _ = self._reading.pop()
            value = " ".join("".join(parts).split())
            if what == "title":
                self.title = value
            elif what == "h1":
                self.h1 = value
            elif what == "event":
                self.events.append(value)
            elif key in self.checks:
                self.doubled.append(key)
            else:
                self.checks[key] = value

    def handle_data(self, data: str) -> None:
        for reading in self._reading:
            reading[2].append(data)


def _read_page(directory: Path, name: str) -> _Page:
    try:
        data = read_file(directory, name, MAX_PAGE_BYTES)
    except FileNotFoundError:
        raise Fails(name, "page", "missing from the archive") from None
    except RecordError as exc:
        raise Fails(name, "page", str(exc)) from None
    except OSError as exc:
        raise Fails(name, "page", f"cannot be read: {exc.strerror or exc}") from None
    page = _Page()
    try:
        page.feed(data.decode("utf-8"))
        page.close()
    except UnicodeDecodeError as exc:
        raise Fails(name, "page", f"not a page: {exc}") from None
    return page


@dataclass
class Pages:
    """The archive's pages as verify reads them (`read_pages`)."""

    index: _Page
    dice: _Page
    turns: dict[int, _Page]
    files: list[str]  # every turn-NNN.html in the folder


def read_pages(directory: Path, record: Mapping[str, Any]) -> Pages:
    """The index, the dice page and the page of every turn the record counts (Fails when one is
    missing, a link or not a plain file)."""
    try:
        names = sorted(entry.name for entry in os.scandir(directory))
    except OSError as exc:
        raise Fails("the archive", "folder", f"cannot be read: {exc.strerror or exc}") from None
    files = [name for name in names if _PAGE.match(name)]
    turns = {n: _read_page(directory, page_name(n)) for n in range(1, int(record["turn_count"]) + 1)}
    return Pages(_read_page(directory, "index.html"), _read_page(directory, "dice.html"), turns, files)


# -- checking ---------------------------------------------------------------------------------


def _where(turn: Mapping[str, Any]) -> str:
    return f"turn {turn['number']} ({turn['label']})"


def page_values(record: Mapping[str, Any]) -> dict[str, str]:
    """Every value the dice page shows, by its ``data-check`` key, as the record says it."""
    robots = set(record["robots"])
    shown = {"game": record["game"], "head": record["head"]}
    opened = record["open"]
    if opened is not None:
        shown.update(
            {
                "open label": opened["label"],
                "open made": shown_time(opened["committed_at"]),
                "open log": str(opened["log"]),
                "open commitment": opened["commitment"],
            }
        )
    for turn in record["turns"]:
        n = turn["number"]
        shown.update(
            {
                f"turn {n} committed": shown_time(turn["committed_at"]),
                f"turn {n} commitment": turn["commitment"],
                f"turn {n} revealed": shown_time(turn["revealed_at"]),
                f"turn {n} secret": turn["secret"],
            }
        )
        if record["chance"]:
            shown.update({f"turn {n} digest": turn["digest"], f"turn {n} seed": str(turn["seed"])})
        if turn["draw"] > 1:
            shown[f"turn {n} draw"] = str(turn["draw"])
        for seat, receipt in turn["receipts"].items():
            shown[f"turn {n} receipt {seat}"] = receipt
        for index, g in enumerate(turn["gm_orders"], start=1):
            seat = f"{g['seat']} (robot)" if g["seat"] in robots else g["seat"]
            shown[f"turn {n} gm {index}"] = f"{seat}, {g['at']} ({g['by']})"
        for index, c in enumerate(turn["state_changes"], start=1):
            shown[f"turn {n} state {index}"] = f"{shown_time(c['at'])} ({c['by']})"
    for entry in record["commitments"]:
        s = entry["seq"]
        shown.update(
            {
                f"log {s} turn": entry["label"],
                f"log {s} why": entry["why"],
                f"log {s} made": shown_time(entry["made_at"]),
                f"log {s} commitment": entry["commitment"],
                f"log {s} fate": entry["fate"],
                f"log {s} head": entry["head"],
            }
        )
        if entry["revealed_at"] is not None:
            shown[f"log {s} revealed"] = shown_time(entry["revealed_at"])
            shown[f"log {s} secret"] = entry["secret"] or ""
    return {key: " ".join(value.split()) for key, value in shown.items()}


def _check_pages(record: Mapping[str, Any], pages: Pages) -> None:
    name, title = record["game"], record["title"]
    named = f"{title} {name}"
    if pages.index.h1 != named or named not in pages.index.title:
        raise Fails("index.html", "game", f"the index is of {pages.index.h1!r}, the record of {named!r}")
    numbers = list(range(1, record["turn_count"] + 1))
    if pages.index.links != [page_name(n) for n in numbers]:
        raise Fails(
            "index.html",
            "turns",
            f"the index lists {len(pages.index.links)} turn(s), the record counts {record['turn_count']}",
        )
    extra = sorted(set(pages.files) - {page_name(n) for n in numbers})
    if extra:
        raise Fails(extra[0], "page", "a page of a turn the record does not count")
    if pages.index.final != record["finished"]:
        said = "shows a final result" if pages.index.final else "shows no final result"
        raise Fails("index.html", "finished", f"the index {said}, the record says finished={record['finished']}")
    by_number = {t["number"]: t for t in record["turns"]}
    for number, page in pages.turns.items():
        if named not in page.title:
            raise Fails(page_name(number), "game", f"the page is titled {page.title!r}, not of {named}")
        turn = by_number.get(number)
        if turn is not None and page.events != [" ".join(line.split()) for line in turn["public_events"]]:
            first = next(
                (
                    i
                    for i, (a, b) in enumerate(zip(page.events, turn["public_events"], strict=False))
                    if a != " ".join(b.split())
                ),
                min(len(page.events), len(turn["public_events"])),
            )
            raise Fails(page_name(number), "report", f"line {first + 1} of what happened is not the record's")
    if pages.dice.doubled:
        raise Fails("dice.html", pages.dice.doubled[0], "shown twice")
    expected = page_values(record)
    for key in sorted(set(expected) | set(pages.dice.checks)):
        if pages.dice.checks.get(key) != expected.get(key):
            raise Fails(
                "dice.html",
                key,
                f"the page says {pages.dice.checks.get(key)!r}, the record {expected.get(key)!r}",
            )


def _check_log(record: Mapping[str, Any]) -> None:
    """The commitment log: a chain, in order, each draw accounted for, tied to the turns."""
    name = record["game"]
    entries = record["commitments"]
    head, made = fair.GENESIS, ""
    for position, entry in enumerate(entries, start=1):
        where = f"log entry {position}"
        if entry["seq"] != position:
            raise Fails(where, "order", f"numbered {entry['seq']}: an entry is missing or out of place")
        if entry["why"] not in fair.WHYS or entry["fate"] not in ("open", "resolved", "rolled back", "withdrawn"):
            raise Fails(where, "entry", f"made {entry['why']!r}, {entry['fate']!r}: not what a log says")
        head = fair.log_head(
            head, name, entry["number"], entry["label"], entry["commitment"], entry["made_at"], entry["why"]
        )
        if entry["head"] != head:
            raise Fails(where, "chain", "its head is not made of the head before it and the entry")
        if entry["made_at"] < made:
            raise Fails(where, "time", "made before the entry before it")
        made = entry["made_at"]
        revealed = entry["fate"] != "open"
        if revealed != (entry["secret"] is not None) or revealed != (entry["revealed_at"] is not None):
            raise Fails(where, "secret", "revealed exactly when the entry is no longer open, or not")
        if entry["secret"] is not None and fair.commitment(entry["secret"]) != entry["commitment"]:
            raise Fails(where, "commitment", "the SHA-256 of its secret is not its commitment")
    if record["head"] != head:
        raise Fails("the log", "head", "the record's head is not the head of its last entry")
    # Each turn's draws: every one but the last spent (rolled back, then reopened; or withdrawn).
    by_number: dict[int, list[dict[str, Any]]] = {}
    for entry in entries:
        by_number.setdefault(entry["number"], []).append(entry)
    turns = {t["number"]: t for t in record["turns"]}
    opened = record["open"]
    for number, draws in sorted(by_number.items()):
        for before, after in zip(draws, draws[1:], strict=False):
            if before["fate"] not in ("rolled back", "withdrawn"):
                raise Fails(f"log entry {before['seq']}", "draw", f"turn {number} drawn again while it stood")
            if (before["fate"] == "rolled back") != (after["why"] == "reopened"):
                raise Fails(f"log entry {after['seq']}", "draw", "a turn reopened only after a roll-back")
        last = draws[-1]
        if draws[0]["why"] == "reopened":
            raise Fails(f"log entry {draws[0]['seq']}", "draw", "reopened, but never opened")
        if number in turns:
            if last["fate"] != "resolved":
                raise Fails(
                    f"log entry {last['seq']}", "fate", f"turn {number} is resolved, its last draw {last['fate']}"
                )
        elif opened is not None and number == opened["number"]:
            if last["fate"] != "open":
                raise Fails(f"log entry {last['seq']}", "fate", f"turn {number} is open, its last draw {last['fate']}")
        elif last["fate"] != "withdrawn" and number not in record["before_commitments"]:
            raise Fails(
                f"log entry {last['seq']}",
                "turn",
                f"turn {number} was {last['fate']}, and the record holds no such turn",
            )
    if sum(e["fate"] == "open" for e in entries) != (0 if opened is None else 1):
        raise Fails("the log", "open", "its open entries are not the record's open turn")


def _check_turns(record: Mapping[str, Any], rules: AnyGame) -> None:
    """The turns the record holds: numbered 1 to its count, the last open or the game over."""
    count = record["turn_count"]
    numbers = sorted([t["number"] for t in record["turns"]] + list(record["before_commitments"]))
    if numbers != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(numbers)) or sorted(set(numbers) - set(range(1, count + 1)))
        raise Fails(
            "the record",
            "turns",
            f"turns 1 to {count} are counted, turn {missing[0] if missing else '?'} is not one of them",
        )
    if [t["number"] for t in record["turns"]] != sorted(t["number"] for t in record["turns"]):
        raise Fails("the record", "turns", "not in the order played")
    opened = record["open"]
    private = {all(k in t for k in PRIVATE) for t in record["turns"]}
    partial = any(any(k in t for k in PRIVATE) and not all(k in t for k in PRIVATE) for t in record["turns"])
    if partial or len(private) > 1:
        raise Fails("the record", "orders", "it publishes the orders and states of some turns and not others")
    if record["finished"]:
        if count == 0:
            raise Fails("the record", "finished", "the game is said to be over, and no turn was resolved")
        if opened is not None:
            raise Fails("the record", "finished", "the game is said to be over, and a turn is open")
        if record["turns"] and private != {True}:
            raise Fails("the record", "finished", "the game is over, and its orders and states are not published")
        last = record["turns"][-1] if record["turns"] else None
        if last is not None and last["number"] == count:
            try:
                over = rules.is_finished(rules.load_state(last["state_after"]))
            except Exception as exc:  # noqa: BLE001 - a state the rules cannot read does not hold, it is said so
                raise Fails(_where(last), "state", f"the rules cannot read it: {type(exc).__name__}") from None
            if not over:
                raise Fails(_where(last), "finished", "the game is said to be over, and its last state is not")
    elif opened is None:
        if record["commitments"]:
            raise Fails("the record", "open", "the game is not over, and no turn is open")
    elif opened["number"] != count + 1:
        raise Fails("the record", "open", f"turn {opened['number']} is open, after {count} resolved")


def _parse(rules: AnyGame, state: GameState, published: Mapping[str, str]) -> dict[str, tuple[GameOrder, ...]]:
    orders: dict[str, tuple[GameOrder, ...]] = {}
    for seat, text in published.items():
        parsed = rules.parse_orders(state, seat, text)
        if parsed.problems:
            raise ValueError(f"{seat}'s orders do not parse: {parsed.problems[0].reason}")
        orders[seat] = parsed.orders
    return orders


def _check_turn(rules: AnyGame, record: Mapping[str, Any], turn: Mapping[str, Any], before: object) -> str:
    """One resolved turn: what was checked (Fails on the first item that does not hold)."""
    where = _where(turn)
    key = _check_dice(record, turn, where)
    if "orders" not in turn:
        return "commitment, log entry, seed"
    state, orders = _check_orders(rules, turn, key, where)
    if before is not None and turn["state"] != before and not turn["state_changes"]:
        raise Fails(where, "chain", "the turn's state is not the state after the turn before")
    _check_resolved_again(rules, turn, state, orders, where)
    return "commitment, log entry, seed, orders, receipts, dice, events, state and report"


def _check_dice(record: Mapping[str, Any], turn: Mapping[str, Any], where: str) -> fair.TurnKey:
    """A resolved turn's dice: its secret against its commitment and its entry in the
    commitment log, which draw it was, its seed, its receipts' seats; returns its key."""
    game = record["game"]
    number, secret, scheme = turn["number"], turn["secret"], turn["scheme"]
    if scheme not in fair.SCHEMES:
        raise Fails(where, "scheme", f"scheme {scheme} is not one this version knows")
    if not fair.is_secret(secret):
        raise Fails(where, "secret", "not 64 hex digits")
    if fair.commitment(secret) != turn["commitment"]:
        raise Fails(
            where,
            "commitment",
            f"SHA-256 of the secret is {fair.commitment(secret)}, the turn says {turn['commitment']}",
        )
    entries = record["commitments"]
    seq = turn["log"]
    entry = entries[seq - 1] if seq is not None and 1 <= seq <= len(entries) else None
    if (
        entry is None
        or entry["number"] != number
        or entry["commitment"] != turn["commitment"]
        or entry["secret"] != secret
        or entry["label"] != turn["label"]
        or entry["made_at"] != turn["committed_at"]
        or entry["revealed_at"] != turn["revealed_at"]
    ):
        raise Fails(where, "log", "its commitment and secret are not those of its entry in the commitment log")
    earlier = [e["seq"] for e in entries[: seq - 1] if e["number"] == number]
    draw = 1 + sum(1 for e in entries[: seq - 1] if e["number"] == number and e["fate"] == "rolled back")
    if turn["draw"] != draw or turn["earlier"] != earlier:
        raise Fails(where, "draw", f"said to be draw {turn['draw']}, the log makes it draw {draw}")
    key = fair.TurnKey(game, number, turn["label"], scheme)
    if key.seed(secret, turn["digest"]) != turn["seed"]:
        raise Fails(where, "seed", "not the seed of this game, turn, secret and digest")
    if not set(turn["receipts"]) <= set(record["seats"]):
        raise Fails(where, "receipts", "a receipt of a seat the game does not have")
    return key


def _check_orders(
    rules: AnyGame, turn: Mapping[str, Any], key: fair.TurnKey, where: str
) -> tuple[GameState, dict[str, tuple[GameOrder, ...]]]:
    """A finished game's turn: the orders published (one set for every seat that ordered, in
    the form the dice digest them, the digest's) and every seat's receipt of them; returns
    the turn's state and its orders."""
    scheme, secret = turn["scheme"], turn["secret"]
    published = dict(turn["orders"])
    try:
        state = rules.load_state(turn["state"])
        orders = _parse(rules, state, published)
        expected = set(rules.expected_players(state))
        used = {
            seat: rules.format_orders(o if scheme == 1 else rules.normal_orders(state, seat, o))
            for seat, o in orders.items()
        }
    except Exception as exc:  # noqa: BLE001 - orders or a state the rules cannot read do not hold, it is said so
        raise Fails(where, "orders", f"the rules cannot read them: {type(exc).__name__}: {str(exc)[:100]}") from None
    if set(published) != expected:
        raise Fails(where, "orders", "the orders published are not one set for every seat that ordered")
    if any(used[seat] != published[seat].strip() for seat in published):
        raise Fails(where, "orders", "the orders published are not in the form the dice digest them")
    if fair.orders_digest(published) != turn["digest"]:
        raise Fails(where, "orders", "the orders published are not the ones the digest was made of")
    if set(turn["receipts"]) != expected:
        raise Fails(where, "receipts", "not one receipt for every seat that ordered")
    for seat, receipt in sorted(turn["receipts"].items()):
        if key.receipt(seat, secret, published[seat]) != receipt:
            raise Fails(where, f"receipt {seat}", "not the receipt of the orders published for this seat")
    return state, orders


def _check_resolved_again(
    rules: AnyGame, turn: Mapping[str, Any], state: GameState, orders: dict[str, tuple[GameOrder, ...]], where: str
) -> None:
    """A finished game's turn resolved again from its state, orders and seed: the same
    events, state after and public report as published."""
    try:
        resolution = rules.resolve(state, orders, random.Random(turn["seed"]), tuple(turn["submitted"]))
        events = [e.to_json() for e in resolution.events]
        after = rules.dump_state(resolution.state)
        lines = rules.view(resolution.state, resolution, Viewer.PUBLIC)["events"]
        report = [str(line) for line in lines] if isinstance(lines, (list, tuple)) else None
    except Exception as exc:  # noqa: BLE001 - a turn the rules cannot resolve again does not hold
        raise Fails(where, "events", f"the rules cannot resolve it again: {type(exc).__name__}") from None
    if events != turn["events"]:
        shown = list(turn["events"])
        first = next(
            (i for i, (a, b) in enumerate(zip(events, shown, strict=False)) if a != b), min(len(events), len(shown))
        )
        raise Fails(where, "events", f"the dice of this seed give another event {first + 1} than the one published")
    if after != turn["state_after"]:
        raise Fails(where, "state", "the turn resolved again ends in another state than the one published")
    if report != turn["public_events"]:
        raise Fails(where, "report", "the turn resolved again reads otherwise than its published report")


def verify(record: Mapping[str, Any], pages: Pages | None = None) -> Verdict:
    """Check `record` (and with `pages`, the archive's pages against it): see the module's
    docstring. Stops at the first failure."""
    verdict = Verdict(str(record.get("game", "")))
    try:
        _verify(record, pages, verdict)
    except Fails as failed:
        verdict.failure = failed.failure
    except RecursionError:
        verdict.failure = Failure("the record", "shape", "it nests deeper than the rules read")
    return verdict


def _verify(record: Mapping[str, Any], pages: Pages | None, verdict: Verdict) -> None:
    try:
        rules = find_game(record["kind"])
    except UnknownGameError:
        raise Fails("the record", "game", f"no such kind of game: {record['kind']!r}") from None
    if rules.title != record["title"] or rules.chance != record["chance"]:
        raise Fails("the record", "game", f"{record['kind']} is {rules.title}, not {record['title']!r}")
    if pages is not None:
        _check_pages(record, pages)
        verdict.checked.append("the pages: the index, every turn's report and the dice page say what the record says")
    _check_turns(record, rules)
    _check_log(record)
    verdict.checked.append(f"the commitment log: {len(record['commitments'])} entries chained, head {record['head']}")
    for number in record["before_commitments"]:
        verdict.skipped.append(f"turn {number}: resolved before dice were committed to (nothing to check)")
    before: object = None
    previous = 0
    for turn in record["turns"]:
        verdict.turns += 1
        chained = before if turn["number"] == previous + 1 else None
        found = _check_turn(rules, record, turn, chained)
        verdict.checked.append(f"{_where(turn)}: {found}")
        verdict.shown.extend(_values(record, turn))
        if "orders" not in turn:
            verdict.skipped.append(f"{_where(turn)}: the orders, receipts and dice (published when the game ends)")
        elif turn["state_changes"] and chained is not None and turn["state"] != chained:
            verdict.skipped.append(
                f"{_where(turn)}: its state follows from the turn before but for the GM's change to it "
                f"({', '.join(c['at'] for c in turn['state_changes'])}), which the record does not show"
            )
        before, previous = turn.get("state_after"), turn["number"]
    opened = record["open"]
    if opened is not None:
        verdict.shown.append(
            f"open  {opened['label']}: commitment {opened['commitment']} (log entry {opened['log']}, made "
            f"{shown_time(opened['committed_at'])})"
        )


def _values(record: Mapping[str, Any], turn: Mapping[str, Any]) -> Iterator[str]:
    """A turn's values, to compare with one's mail."""
    draw = f", draw {turn['draw']}" if turn["draw"] > 1 else ""
    yield f"turn {turn['number']} ({turn['label']}{draw}): commitment {turn['commitment']} (log entry {turn['log']})"
    yield f"      secret {turn['secret']}" + (f", seed {turn['seed']}" if record["chance"] else "")
    for seat, receipt in sorted(turn["receipts"].items()):
        yield f"      receipt {seat} {receipt}"
    for g in turn["gm_orders"]:
        yield f"      the GM entered orders for {g['seat']}, {g['at']} ({g['by']})"


def verify_archive(directory: Path) -> Verdict:
    """`flagman verify DIR`: the record and the pages of the archive in `directory`
    (RecordError when it holds no record to read)."""
    record = read_record(directory)
    verdict = Verdict(record["game"])
    try:
        pages = read_pages(directory, record)
    except Fails as failed:
        verdict.failure = failed.failure
        return verdict
    return verify(record, pages)


# -- one results mail -------------------------------------------------------------------------


@dataclass
class MailVerdict:
    game: str
    turn: str
    checked: list[str] = field(default_factory=list)
    failure: str | None = None


def verify_mail(data: bytes, directory: Path | None = None) -> MailVerdict:
    """A saved results mail's block of values (`rules.fair.read_mail`), checked alone, and with
    `directory`: against the archive's record (which must verify), the same values in it.
    RecordError: the mail holds no block."""
    found = fair.read_mail(data)
    if found is None:
        raise RecordError(f"no block of values ({fair.MARK}) in the mail: save the results mail itself")
    verdict = MailVerdict(found.game, found.turn)
    verdict.checked, verdict.failure = fair.check_mail(found)
    if verdict.failure is not None or directory is None:
        return verdict
    archive = verify_archive(directory)
    if archive.failure is not None:
        verdict.failure = f"the archive does not hold: {archive.failure}"
        return verdict
    record = read_record(directory)
    if record["game"] != found.game:
        verdict.failure = f"the mail is of game {found.game}, the archive of {record['game']}"
        return verdict
    turn = next((t for t in record["turns"] if t["secret"] == found.secret), None)
    if turn is None or turn["label"] != found.turn:
        verdict.failure = f"the archive holds no turn {found.turn!r} resolved with this mail's secret"
        return verdict
    mismatched = [
        what
        for what, mine, theirs in (
            ("commitment", found.commitment, turn["commitment"] if record["chance"] else ""),
            ("digest", found.digest, turn["digest"] if record["chance"] else ""),
            ("seed", found.seed, str(turn["seed"]) if record["chance"] else ""),
            ("draw", found.draw, str(turn["draw"]) if record["chance"] else ""),
        )
        if mine != theirs
    ] + [f"receipt {seat}" for seat, r in sorted(found.receipts.items()) if turn["receipts"].get(seat) != r]
    if set(found.receipts) != set(turn["receipts"]):
        mismatched.append("the receipts listed")
    if mismatched:
        verdict.failure = f"the archive's {turn['label']} differs from the mail: {mismatched[0]}"
        return verdict
    verdict.checked.append(f"the archive's {turn['label']} has this mail's values, and the archive verifies")
    return verdict


# -- the script a player runs on a saved mail -------------------------------------------------

SCRIPT_MAIN = '''

# -- check-dice.py: the lines above are rules/fair.py of flagman, as the bot uses it ------------
import sys as _sys


def _main(argv):
    """python3 check-dice.py MAIL: check the block of values of a saved results mail.
    Exit 0 it holds, 1 it does not, 2 no block in it (or no such file)."""
    if len(argv) != 1:
        print("usage: python3 check-dice.py MAIL (a results mail saved as a file)", file=_sys.stderr)
        return 2
    try:
        with open(argv[0], "rb") as handle:
            raw = handle.read(4 << 20)
    except OSError as exc:
        print(f"check-dice: {argv[0]}: {exc.strerror or exc}", file=_sys.stderr)
        return 2
    found = read_mail(raw)
    if found is None:
        print(f"check-dice: {argv[0]}: no block of values {MARK} in it: save the results mail itself", file=_sys.stderr)
        return 2
    done, failure = check_mail(found)
    if failure is not None:
        print(f"check-dice: {found.game} {found.turn}: does NOT hold: {failure}", file=_sys.stderr)
        return 1
    for line in done:
        print(f"ok    {line}")
    print(
        "Compare the commitment with the one your turn sheet of " + found.turn + " carried, and log entry "
        + (found.log or "-") + " with the archive's dice page: the same values prove the secret was fixed "
        "before the orders."
    )
    return 0


if __name__ == "__main__":
    _sys.exit(_main(_sys.argv[1:]))
'''


def check_script() -> str:
    """``check-dice.py`` as the archive publishes it: `rules.fair` (standard library only) and
    the few lines that read a saved mail's file and print what holds."""
    return Path(fair.__file__).read_text(encoding="utf-8") + SCRIPT_MAIN


__all__ = [
    "CHECK_SCRIPT",
    "FAILS",
    "FORMAT",
    "HOLDS",
    "NOT_A_RECORD",
    "ONLY_YOUR_MAIL",
    "RECORD",
    "Failure",
    "MailVerdict",
    "Pages",
    "RecordError",
    "Verdict",
    "check_script",
    "page_values",
    "parse_record",
    "read_pages",
    "read_record",
    "shown_time",
    "verify",
    "verify_archive",
    "verify_mail",
]
