"""Practice races at scale, in this process, with no servers (200 live practice games
took the tick from 0.26 s to 1.55 s, 6.5 ms each; a new one cost 250-300 ms of CPU and a 31 kB
first sheet).

``python -m bench --only practice [--size 1000]``, or on its own:
``python -m bench.practice [--games 1000] [--runs 3] [--profile FILE]``

Set-up: `--games` practice games (PRACTICE by mail, a third of each game the bot knows, one
person each at an address of its own) started on a fresh SQLite database by
`bot.games.practice.start`, as PRACTICE does; the first `SAMPLE` of them timed one by one (CPU
of the start, the first sheet queued with it, and that sheet's bytes). Their first sheets are
marked sent. Then `Service.tick()` is timed `--runs` times on a copy of that database, with the
games live and idle (no orders: nothing is due), and once more on an empty database of the
same settings: the tick's CPU per live practice game is the difference over `--games`, which
must stay flat (`TARGET_MS_PER_GAME`). One line per figure, and the JSON of them on the last.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.tick import spec_for
from bench.world import load_settings
from bot.clock import FixedClock

SAMPLE = 30  # new games timed one by one
GAMES = 1000  # live practice games (`python -m bench --only practice --size N`: N of them)
RUNS = 3  # ticks timed, each on a fresh copy of the database; the median counts
TARGET_MS_PER_GAME = 0.5  # the tick's CPU per live, idle practice game
SET_UP = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def _app(spec: dict[str, Any], root: Path, clock: FixedClock, *, running_max: int) -> Any:
    from bot.app import build_app
    from bot.dice import SeededEntropy
    from bot.mail_in.inbox import MaildirInbox
    from bot.mail_out.mailer import MaildirMailer

    spec["data"]["practice"] = {"running_max": running_max}
    return build_app(
        load_settings(spec),
        clock=clock,
        inbox=MaildirInbox(root / "inbox"),
        mailer=MaildirMailer(root / "outbox"),
        entropy=SeededEntropy(2026),
    )


def start_games(spec: dict[str, Any], root: Path, games: int) -> dict[str, float]:
    """`games` practice games started; the first `SAMPLE` timed. Returns their figures."""
    from sqlalchemy import func, select, update

    from bot.games import practice
    from bot.models import Outbox, OutboxBody, OutboxStatus
    from rules import game_names

    kinds = game_names()
    app = _app(spec, root, FixedClock(SET_UP), running_max=games)
    cpu: list[float] = []
    sheet_bytes: list[int] = []
    try:
        for number in range(games):
            address = f"racer{number}@p{number}.bench.test"  # a domain each: the caps are not what is measured
            c0 = time.process_time()
            with app.db.transaction() as session:
                rules = practice.check(session, app.shell, address, kinds[number % len(kinds)])
                practice.start(app.shell, session, address, rules)
            if number < SAMPLE:
                cpu.append(time.process_time() - c0)
                with app.db.read() as session:
                    data = session.scalar(
                        select(OutboxBody.data)
                        .join(Outbox, Outbox.id == OutboxBody.id)
                        .where(Outbox.recipient == address)
                    )
                    sheet_bytes.append(len(data or b""))
        with app.db.transaction() as session:
            session.execute(update(Outbox).values(status=OutboxStatus.SENT))
            live = session.scalar(select(func.count()).select_from(Outbox))
    finally:
        app.close()
    return {
        "new_game_cpu_ms": 1000 * statistics.median(cpu),
        "first_sheet_kb": statistics.median(sheet_bytes) / 1024,
        "sheets": float(live or 0),
    }


def time_ticks(
    spec: dict[str, Any], root: Path, database: Path, runs: int, profile: Path | None, running_max: int
) -> tuple[list[float], list[float]]:
    """CPU seconds of the service's first `Service.tick()` after its start, and of the tick after
    it (the steady tick, a minute later), `runs` times, each on a fresh copy of `database`."""
    work = root / "work.sqlite"
    first: list[float] = []
    steady: list[float] = []
    for run in range(runs):
        shutil.copy(database, work)
        moment = SET_UP + timedelta(hours=1)
        clock = FixedClock(moment)
        app = _app(spec, root, clock, running_max=running_max)
        for number, into in enumerate((first, steady)):
            clock.moment = moment + timedelta(minutes=number)
            profiler = cProfile.Profile() if profile is not None and run == runs - 1 and number else None
            c0 = time.process_time()
            if profiler is not None:
                profiler.enable()
            resolved = app.service.tick()
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(str(profile))
            into.append(time.process_time() - c0)
            if resolved:
                raise SystemExit(f"the tick resolved {len(resolved)} turns; nothing should be due")
        app.close()
    return first, steady


def run(games: int = GAMES, runs: int = RUNS, profile: Path | None = None) -> dict[str, Any]:
    """The figures of `games` live practice games (see the module docstring), with the line
    `python -m bench --only practice` prints; `met` when the tick's CPU per game is on target."""
    from bot.db import migrate

    root = Path(tempfile.mkdtemp(prefix="fm-practice-"))
    try:
        url = f"sqlite:///{root / 'work.sqlite'}"
        spec = spec_for(root, url)
        spec["data"]["schedule"] = {"resolve_workers": 0}
        migrate(url)
        shutil.copy(root / "work.sqlite", root / "empty.sqlite")
        started = start_games(spec, root, games)
        shutil.copy(root / "work.sqlite", root / "live.sqlite")
        empty_first, empty = time_ticks(spec, root, root / "empty.sqlite", runs, None, games)
        live_first, live = time_ticks(spec, root, root / "live.sqlite", runs, profile, games)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    per_game_ms = 1000 * (statistics.median(live) - statistics.median(empty)) / max(1, games)
    first_ms = 1000 * (statistics.median(live_first) - statistics.median(empty_first)) / max(1, games)
    met = per_game_ms <= TARGET_MS_PER_GAME
    line = (
        f"practice {games} live games: new game {started['new_game_cpu_ms']:.0f} ms CPU, first sheet "
        f"{started['first_sheet_kb']:.1f} kB; tick CPU {statistics.median(live):.3f} s "
        f"(runs {', '.join(f'{c:.3f}' for c in live)}) against {statistics.median(empty):.3f} s empty: "
        f"{per_game_ms:.2f} ms a game (target <= {TARGET_MS_PER_GAME} ms) "
        + ("OK" if met else "MISSED")
        + f"; the first tick after a start {statistics.median(live_first):.3f} s, {first_ms:.2f} ms a game"
    )
    return {
        "benchmark": "practice",
        "games": games,
        **started,
        "tick_empty_cpu_s": statistics.median(empty),
        "tick_live_cpu_s": statistics.median(live),
        "tick_cpu_ms_per_game": per_game_ms,
        "first_tick_live_cpu_s": statistics.median(live_first),
        "first_tick_cpu_ms_per_game": first_ms,
        "target_ms_per_game": TARGET_MS_PER_GAME,
        "met": met,
        "line": line,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.practice", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=GAMES)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--profile", type=Path, help="cProfile the last tick with the games into this file")
    args = parser.parse_args(argv)
    figures = run(max(1, args.games), max(1, args.runs), args.profile)
    print(figures.pop("line"))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
