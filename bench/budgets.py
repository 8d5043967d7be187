"""budgets: the costs the code is held to that only a clock can tell, each against its target.

The test suite checks what these pieces do (the picture drawn, the parser's outcome on the
same inputs); how long they take is measured here, in CPU seconds of this process
(`time.process_time`: on a shared machine wall time also counts other people's work). No
servers, no database. Each figure is the best of `runs` (3 by default).

- ``picture``: one public picture of a turn of each game (the largest field: Racecraft 8
  cars after 4 turns, its chart with every frame; Speed Circuit 9 cars after 6; SpeedPhreakz 4
  after 5), drawn again after a first drawing warmed the caches (fonts, the track, stamps).
  Target: <= 30 ms a picture (one picture a game and turn at a deadline of 500 games).
- ``deadline-text``: the four deadline parsers (`parse_duration`, `parse_schedule`,
  `parse_grace`, `parse_when`) on seven texts of 100,000 characters built to make a pattern
  backtrack, each refused. Target: < 1 s for the 28 parses (linear time).
- ``long-mail``: `parse_inbound` on a plain mail of 100,000 lines (50,000 of them quoted).
  Target: <= 0.5 s (performance.md: a 100,000-line mail must not stall the poll).
- ``hostile-text``: the reply-text reader on text built to make its patterns backtrack
  (`hostile_texts`: seven line-filter texts of 100,000 lines or 5,000 long ones, 3,000 nested
  border-top divs, a quote of 100,000 lines with the answer below it, a 5 MB attachment and a
  5 MB HTML body), each case timed alone: the slowest. Target: < 1 s a case (linear work takes
  well under that; a pattern that backtracks took minutes).
- ``fixtures``: `parse_inbound` over every mail of tests/data/mail ten times: mails a second.
  Target: > 1,000 (the whole bot must ingest well over 1,000 mails a second).
- ``poll long-mail``: `Service.poll` (SQLite, a Racecraft game of five, parsing in the service's
  process) of one order mail of 100,000 lines from a player to the seat's signed address:
  applied, its answer queued. Target: < 20 s.
- ``poll auto-replies``: the same poll of 500 out-of-office replies (Auto-Submitted) to the
  signed address in one batch: every one ignored, none answered. Target: < 30 s.
"""

from __future__ import annotations

import functools
import random
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rules.api import View, Viewer

RUNS = 3
MAIL = Path(__file__).resolve().parents[1] / "tests" / "data" / "mail"
OWN = ("flagman@example.org",)
PICTURE_SIZES = {"racecraft": (8, 4), "speed_circuit": (9, 6), "speedphreakz": (4, 5)}
PICTURE_MS = 30.0
DEADLINE_TEXT_SECONDS = 1.0
LONG_MAIL_SECONDS = 0.5
HOSTILE_TEXT_SECONDS = 1.0
POLL_LONG_MAIL_SECONDS = 20.0
POLL_AUTO_REPLIES_SECONDS = 30.0
FIXTURE_MAILS_PER_SECOND = 1000.0
NAMES = ("kelly", "seb", "steve", "roger", "anna", "mika", "lewis", "nigel", "ayrton")


def best_cpu(work: Callable[[], object], runs: int) -> float:
    """The least CPU seconds of `runs` calls of `work`."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def candidates(kind: str, game: Any, state: Any, player: str, rng: random.Random) -> list[str]:
    """Order texts worth trying for a lively race (the first that parses cleanly is used)."""
    if kind == "racecraft":
        return [rng.choice(["CRUISE", "OVERTAKE", f"USE {rng.randint(0, 6)}"]), f"USE {rng.randint(0, 3)}"]
    if kind == "speed_circuit":
        return [f"SPEED {speed}\nPUSH YES\nLANE {rng.choice('ABC')}" for speed in (160, 140, 120, 100, 80, 60, 40, 20)]
    if kind == "speedphreakz":
        base = game.format_orders(game.default_orders(state, player))
        moves = ("F1", "F2", "F3", "VL", "VR")
        return [
            re.sub(
                r"ROUND (\d+):\s*$",
                lambda m: m.group(0) + " " + " ".join(rng.choice(moves) for _ in range(rng.randint(1, 3))),
                base,
                flags=re.M,
            )
            for _ in range(5)
        ]
    return []


def play(kind: str, count: int, turns: int, seed: int = 1) -> tuple[list[View], list[dict[str, Any]]]:
    """Public views after each turn of a game of `count` played with lively legal orders (the
    pictures' tests and their budget draw the same races), and the last turn's events."""
    from rules import find_game

    game = find_game(kind)
    rng = random.Random(seed)
    state = game.new_game(list(NAMES[:count]), {}, random.Random(seed))
    frames = [game.view(state, None, Viewer.PUBLIC)]
    events: list[dict[str, Any]] = []
    for _ in range(turns):
        if game.is_finished(state):
            break
        orders = {}
        for player in sorted(game.expected_players(state)):  # a frozenset: drawn in a fixed order
            chosen = game.default_orders(state, player)
            for text in candidates(kind, game, state, player, rng):
                parsed = game.parse_orders(state, player, text)
                if parsed.ok and parsed.orders:
                    chosen = parsed.orders
                    break
            orders[player] = chosen
        resolution = game.resolve(state, orders, random.Random(rng.random()))
        state = resolution.state
        frames.append(game.view(state, None, Viewer.PUBLIC))
        events = [e.to_json() for e in resolution.events]
    return frames, events


def scene(kind: str, count: int, turns: int, seed: int = 1) -> Any:
    """The picture's scene after `turns` turns of `play`."""
    from bot import pictures

    frames, events = play(kind, count, turns, seed)
    keep = frames if pictures.needs_history(kind) else frames[-2:]
    return pictures.Scene(tuple(keep), tuple(events))


def picture_ms(kind: str, runs: int) -> float:
    """CPU milliseconds of one picture of `kind` (PICTURE_SIZES), best of `runs` after a warm-up."""
    from bot import pictures

    count, turns = PICTURE_SIZES[kind]
    drawn = scene(kind, count, turns)
    pictures.draw(kind, drawn)  # warm the caches: not timed
    return best_cpu(lambda: pictures.draw(kind, drawn), runs) * 1000


DEADLINE_TEXTS = (
    "1" * 100_000,
    "1d" * 50_000,
    "a," * 50_000 + " 18:00",
    "daily " + "1" * 100_000,
    "+" + "9" * 100_000,
    " " * 99_999 + "1h",
    "1 " * 50_000,
)


def deadline_text_seconds(runs: int) -> float:
    """CPU seconds of the four deadline parsers on each of DEADLINE_TEXTS (every one refused)."""
    from bot.schedules import DeadlineError, parse_duration, parse_grace, parse_schedule, parse_when

    now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    parsers: tuple[Callable[[str], object], ...] = (
        parse_duration,
        parse_schedule,
        parse_grace,
        lambda text: parse_when(text, now, "UTC"),
    )

    def all_refused() -> None:
        for text in DEADLINE_TEXTS:
            for parse in parsers:
                try:
                    parse(text)
                except DeadlineError:
                    continue
                raise AssertionError(f"a hostile deadline text of {len(text)} characters was accepted")

    return best_cpu(all_refused, runs)


def long_mail() -> bytes:
    """A plain order mail of 100,000 lines, every other one quoted."""
    headers = "From: Roger <roger@example.net>\nTo: flagman@example.org\nSubject: orders\nMessage-ID: <m1@example.net>"
    return (headers + "\n\n" + "USE 2\n> USE 3\n" * 50_000).replace("\n", "\r\n").encode("utf-8")


def long_mail_seconds(runs: int) -> float:
    from bot.mail_in.parse import parse_inbound

    raw = long_mail()
    return best_cpu(lambda: parse_inbound(raw, own_addresses=OWN), runs)


_PLAIN_HEADERS = (
    "From: Roger <roger@example.net>\nTo: flagman@example.org\nSubject: orders\nMessage-ID: <m1@example.net>"
)


def line_filter_texts(scale: int = 5000) -> dict[str, str]:
    """Lines built to make the attribution, header and signature patterns of the reply-text
    line filter (`strip_quotes`) backtrack; `scale` (5,000: the budget's) sets their number."""
    return {
        "verbs": ("On " + "wrote x" * 140 + ":\n") * scale,
        "far-verb": ("Am " + "x" * 500 + " schrieb " + "y" * 480 + ":\n") * scale,
        "colons": "abc:\n" * (20 * scale),
        "start-words": "On x\n" * (20 * scale),
        "near-signatures": "Sent fro\n" * (20 * scale),
        "from-lines": "From: x\nnope\n" * (10 * scale),
        "lone-headers": ("To: x\n" + "nope\n" * 4) * (4 * scale),
    }


def nested_border_divs(depth: int = 3000) -> str:
    """`depth` nested border-top divs (Outlook's quoted-header container) around an order."""
    return "<div style='border-top:1px'>x" * depth + "USE 2" + "</div>" * depth


def quote_then_answer(lines: int = 100_000) -> bytes:
    """A plain mail: an attribution, a quote of `lines` lines, and the answer below it."""
    body = "On Mon, GM wrote:\n" + "> USE 3\n" * lines + "\nUSE 2\n"
    return (_PLAIN_HEADERS + "\n\n" + body).replace("\n", "\r\n").encode("utf-8")


def big_attachment(megabytes: int = 5) -> bytes:
    """An order with a base64 attachment of about `megabytes` MB."""
    return (
        b"From: roger@example.net\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/plain\n\nUSE 2\n"
        b"--B\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n"
        + b"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\n" * (15_000 * megabytes)
        + b"--B--\n"
    )


def big_html(megabytes: int = 5) -> bytes:
    """An order in an HTML body of about `megabytes` MB."""
    return b"From: roger@example.net\nContent-Type: text/html\n\n" + b"<div>USE 2 <b>x</b></div>" * (40_000 * megabytes)


def hostile_texts() -> dict[str, Callable[[], object]]:
    """Each hostile case of the reply-text reader, as the work to time."""
    from bot.mail_in.parse import html_to_text, parse_inbound, strip_quotes

    cases: dict[str, Callable[[], object]] = {
        f"line filter {name}": functools.partial(strip_quotes, text) for name, text in line_filter_texts().items()
    }
    divs, quote, attachment, markup = nested_border_divs(), quote_then_answer(), big_attachment(), big_html()
    cases["nested divs"] = lambda: html_to_text(divs)
    cases["quote then answer"] = lambda: parse_inbound(quote, own_addresses=OWN)
    cases["5 MB attachment"] = lambda: parse_inbound(attachment, own_addresses=OWN)
    cases["5 MB html"] = lambda: parse_inbound(markup, own_addresses=OWN)
    return cases


def hostile_text_seconds(runs: int) -> tuple[str, float]:
    """The slowest hostile case (`hostile_texts`) and its CPU seconds."""
    return max(((name, best_cpu(work, runs)) for name, work in hostile_texts().items()), key=lambda case: case[1])


def fixture_mails_per_second(runs: int) -> tuple[int, float]:
    """How many mails (the fixtures, ten times over) and how many a second the parser reads."""
    from bot.mail_in.parse import parse_inbound

    raws = [p.read_bytes() for p in sorted(MAIL.glob("*.eml"))] * 10
    if not raws:
        raise RuntimeError(f"no mail fixtures in {MAIL}")

    def parse_all() -> None:
        for raw in raws:
            parse_inbound(raw, own_addresses=OWN)

    return len(raws), len(raws) / best_cpu(parse_all, runs)


def _polled_mails() -> dict[str, list[bytes]]:
    """The mails of each poll figure, to the seat's signed address of game rc1."""
    from bench.world import SECRET
    from bot.mail_in.auth import signed_address
    from bot.testing import plain_mail

    seb = signed_address(BOT, SECRET, "rc1", "seb")
    body = "USE 2\n" + "".join(f"> {n}\n" for n in range(50_000)) + "x\n" * 50_000
    away = [
        plain_mail(
            "seb@players.bench.test",
            seb,
            "Automatic reply: [rc1] Turn 1",
            "I am away",
            message_id=f"<ooo-{n}@client.example>",
            headers={"Auto-Submitted": "auto-replied"},
        )
        for n in range(500)
    ]
    return {
        "poll long-mail": [
            plain_mail("seb@players.bench.test", seb, "orders", body, message_id="<lines@client.example>")
        ],
        "poll auto-replies": away,
    }


BOT = "flagman@bench.test"


def poll_seconds(runs: int) -> dict[str, tuple[float, dict[str, int]]]:
    """CPU seconds of each poll figure (best of `runs`, each on a fresh copy of the database) and
    the outcomes of its mails."""
    import shutil
    import tempfile

    from bench.tick import spec_for
    from bench.world import load_settings
    from bot.app import build_app
    from bot.clock import FixedClock
    from bot.db import migrate
    from bot.games.turns import PlayerSpec, create_game
    from bot.testing import FakeInbox, FakeMailer

    root = Path(tempfile.mkdtemp(prefix="fm-budgets-"))
    try:
        url = f"sqlite:///{root / 'work.sqlite'}"
        migrate(url)
        spec = spec_for(root, url)
        spec["data"]["inbox"]["parse_workers"] = 0
        clock = FixedClock(datetime(2026, 12, 1, 9, 30, tzinfo=UTC))
        players = [
            PlayerSpec(n, f"{n}@players.bench.test", n.title()) for n in ("kelly", "seb", "steve", "roger", "anna")
        ]
        with build_app(load_settings(spec), clock=clock, inbox=FakeInbox(), mailer=FakeMailer()) as app:
            with app.db.transaction() as session:
                create_game(
                    app.shell, session, kind="racecraft", name="rc1", players=players, gm_address="gm@bench.test"
                )
        shutil.copy(root / "work.sqlite", root / "pristine.sqlite")
        figures: dict[str, tuple[float, dict[str, int]]] = {}
        for name, mails in _polled_mails().items():
            best, outcomes = float("inf"), {}
            for _ in range(runs):
                shutil.copy(root / "pristine.sqlite", root / "work.sqlite")
                inbox = FakeInbox(max_size=32 * 1024 * 1024)
                for mail in mails:
                    inbox.deliver(mail)
                with build_app(load_settings(spec), clock=clock, inbox=inbox, mailer=FakeMailer()) as app:
                    start = time.process_time()
                    report = app.service.poll()
                    best = min(best, time.process_time() - start)
                    outcomes = dict(report.outcomes)
            figures[name] = (best, outcomes)
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(runs: int = RUNS) -> dict[str, Any]:
    """Every budget, best of `runs`; one line a figure."""
    figures: list[dict[str, Any]] = []

    def figure(name: str, value: float, unit: str, target: str, met: bool) -> None:
        figures.append({"figure": name, "value": value, "unit": unit, "target": target, "met": met})

    for kind in sorted(PICTURE_SIZES):
        ms = picture_ms(kind, runs)
        figure(f"picture {kind}", ms, "ms CPU a picture", f"<= {PICTURE_MS:g} ms", ms <= PICTURE_MS)
    seconds = deadline_text_seconds(runs)
    target = f"< {DEADLINE_TEXT_SECONDS:g} s"
    figure("deadline-text", seconds, "s CPU, 28 hostile parses", target, seconds < DEADLINE_TEXT_SECONDS)
    seconds = long_mail_seconds(runs)
    figure("long-mail", seconds, "s CPU, 100,000 lines", f"<= {LONG_MAIL_SECONDS:g} s", seconds <= LONG_MAIL_SECONDS)
    case, seconds = hostile_text_seconds(runs)
    target = f"< {HOSTILE_TEXT_SECONDS:g} s"
    figure("hostile-text", seconds, f"s CPU, the slowest case ({case})", target, seconds < HOSTILE_TEXT_SECONDS)
    mails, rate = fixture_mails_per_second(runs)
    target = f"> {FIXTURE_MAILS_PER_SECOND:,.0f}"
    figure("fixtures", rate, f"mails/s CPU ({mails} mails)", target, rate > FIXTURE_MAILS_PER_SECOND)
    polls = poll_seconds(runs)
    for name, bound, expected in (
        ("poll long-mail", POLL_LONG_MAIL_SECONDS, {"applied": 1}),
        ("poll auto-replies", POLL_AUTO_REPLIES_SECONDS, {"ignored": 500}),
    ):
        seconds, outcomes = polls[name]
        if outcomes != expected:
            raise RuntimeError(f"{name}: the poll's outcomes were {outcomes}, not {expected}")
        figure(name, seconds, "s CPU, the poll", f"< {bound:g} s", seconds < bound)
    lines = [
        f"budgets  {f['figure']:<22} {f['value']:10.4g} {f['unit']} (target {f['target']}) "
        f"{'OK' if f['met'] else 'MISSED'}"
        for f in figures
    ]
    return {
        "benchmark": "budgets",
        "runs": runs,
        "figures": figures,
        "met": all(f["met"] for f in figures),
        "line": "\n".join(lines),
    }


if __name__ == "__main__":  # python -m bench.budgets [RUNS]
    import sys

    print(run(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS)["line"])
