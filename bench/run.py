"""The benchmarks, one command: ``.venv/bin/python -m bench [options]`` (see bench/README.md).

Starts its own servers on 127.0.0.1 (Dovecot, an SMTP sink, and PostgreSQL with
``--db postgresql``), runs the benchmarks asked for, prints one line per figure with its
ratio against the reference measured in the same run, and writes bench/results/<time>.json.
``hostile`` (the parser on hostile header sections), ``budgets`` (the costs the tests used to
time: a picture, the deadline and mail parsers), ``robots`` (the robot drivers'
strength), ``practice`` (live practice games: a new one's cost, the tick's per game, on
SQLite in this process) and ``retention`` (a year of games, the database's size) need no mail
servers: ``--only hostile``, ``--only budgets``, ``--only robots``, ``--only practice``, ``--only retention`` start
none (``retention`` with ``--db postgresql`` starts its own PostgreSQL).
The exit status is 0 when every benchmark ran (targets met or not: the figures say so), 1
when one failed to run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import budgets, deadline, hostile, ingest, latency, practice, ratings, retention, robots, scale, soak
from bench.burn import burners
from bench.overrides import overrides
from bench.world import workers_in_process, world

ALL = (
    "ingest",
    "deadline",
    "latency",
    "scale",
    "soak",
    "hostile",
    "budgets",
    "robots",
    "practice",
    "retention",
    "ratings",
)
DEFAULT = ("ingest", "deadline", "latency")
SERVERLESS = ("hostile", "budgets", "robots", "practice", "retention", "ratings")
RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only",
        default=",".join(DEFAULT),
        help=f"comma-separated benchmarks out of {', '.join(ALL)} (default: {', '.join(DEFAULT)}; "
        "scale, soak and retention take long and run only when named; hostile, budgets, robots, practice and retention need no mail servers)",
    )
    parser.add_argument(
        "--size",
        type=int,
        default=None,
        help="ingest mails (default 5000); deadline games = size/10 (default 500); latency "
        f"mails = min(100, size) (default 100); soak: mails (default {soak.TOTAL}); "
        f"practice: live practice games (default {practice.GAMES}); "
        "scale sizes are fixed",
    )
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite", help="the bot's database")
    parser.add_argument(
        "--full",
        action="store_true",
        help=f"scale also at 50,000 mails; robots: the full measurement ({robots.FULL_RACES} races a matchup)",
    )
    parser.add_argument("--scale-sizes", default=None, help="scale sizes, e.g. 200,2000 (overrides --full)")
    parser.add_argument(
        "--races",
        type=int,
        default=None,
        help=f"robots: seeded races per matchup (default {robots.RACES}, the CI case; {robots.FULL_RACES} with --full)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="robots: worker processes (default: one a core; 1 runs the races in this process)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help=f"hostile: parses of each mail, the median counts (default {hostile.RUNS}); "
        f"budgets: runs of each figure, the least CPU counts (default {budgets.RUNS})",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile the bot's side of ingest and deadline into bench/results/*.prof "
        "(slows the bot: ratios are then not comparable)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a bot setting for every benchmark, as in config.toml (e.g. schedule.resolve_workers=0, "
        "inbox.parse_workers=0): to compare a setting's figures on the same servers",
    )
    parser.add_argument(
        "--burn",
        type=int,
        default=0,
        metavar="N",
        help="N CPU burners (a process spinning on a core each) for the whole run, references included "
        f"(the deadline's target is then <= {deadline.TARGET_BURNING} x reference)",
    )
    parser.add_argument(
        "--workers-in-process",
        action="store_true",
        help="run the bot's and the references' timed workers in this process instead of one interpreter "
        "each (the long-running service of latency keeps its own): the same work, figures not comparable "
        "(the tests' tiny run)",
    )
    parser.add_argument("--out", type=Path, default=None, help="the JSON file (default bench/results/<time>.json)")
    args = parser.parse_args(argv)
    try:
        args.overrides = overrides(args.set)
    except ValueError as exc:
        parser.error(str(exc))
    args.only = tuple(name.strip() for name in args.only.split(",") if name.strip())
    unknown = [name for name in args.only if name not in ALL]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(ALL)}")
    if args.burn < 0:
        parser.error("--burn: the number of CPU burners, 0 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or RESULTS / f"{stamp}-{args.db}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    prof = (lambda name: out.with_name(f"{out.stem}-{name}.prof")) if args.profile else (lambda name: None)
    size = args.size
    results: dict[str, Any] = {
        "started": stamp,
        "db": args.db,
        "python": sys.version.split()[0],
        "machine": platform.platform(),
        "cpus": __import__("os").cpu_count(),
        "burners": args.burn,
        "benchmarks": {},
    }
    failed = False
    servers = any(name not in SERVERLESS for name in args.only)
    print(
        f"flagman benchmarks on {args.db}; {'servers on 127.0.0.1' if servers else 'no servers'} "
        f"({', '.join(args.only)})" + (f"; {args.burn} CPU burner(s) for the whole run" if args.burn else ""),
        flush=True,
    )
    with contextlib.ExitStack() as stack:
        w = stack.enter_context(world(args.db)) if servers else None
        burning = stack.enter_context(burners(args.burn))  # after the servers' start, before every benchmark
        if args.workers_in_process:
            stack.enter_context(workers_in_process())
        if args.overrides:
            results["settings"] = args.overrides
            print(f"bot settings: {', '.join(args.set)}", flush=True)
        if w is not None:
            w.overrides = args.overrides
            w.burners = burning
            results["dovecot"] = ".".join(map(str, w.dovecot.version))
        for name in args.only:
            t0 = time.perf_counter()
            try:
                if name == "hostile":
                    result = hostile.run(max(1, args.runs or hostile.RUNS))
                elif name == "budgets":
                    result = budgets.run(max(1, args.runs or budgets.RUNS))
                elif name == "robots":
                    races = args.races if args.races is not None else robots.FULL_RACES if args.full else robots.RACES
                    result = robots.run(max(1, races), jobs=args.jobs)
                elif name == "ratings":
                    result = ratings.run()
                elif name == "retention":
                    result = retention.run(args.db)
                elif name == "practice":
                    result = practice.run(max(1, size or practice.GAMES), profile=prof("practice"))
                elif w is None:
                    raise RuntimeError(f"{name} needs the servers")
                elif name == "ingest":
                    result = ingest.run(w, size or 5000, profile=prof("ingest"))
                elif name == "deadline":
                    result = deadline.run(
                        w, max(1, (size or 5000) // 10), profile=prof("deadline"), burning=args.burn > 0
                    )
                elif name == "latency":
                    result = latency.run(w, min(100, size or 100))
                elif name == "soak":
                    result = soak.run(w, size or soak.TOTAL)
                else:
                    sizes = (
                        tuple(int(s) for s in args.scale_sizes.split(","))
                        if args.scale_sizes
                        else scale.FULL_SIZES
                        if args.full
                        else scale.SIZES
                    )
                    result = scale.run(w, sizes)
            except Exception as exc:  # noqa: BLE001 - report it, go on with the others
                failed = True
                result = {
                    "benchmark": name,
                    "error": "".join(traceback.format_exception(exc)),
                    "line": f"{name:<8} FAILED TO RUN: {exc!r}",
                }
            result["wall_seconds"] = time.perf_counter() - t0
            results["benchmarks"][name] = result
            print(result["line"], flush=True)
            out.write_text(json.dumps(results, indent=2, default=str))
    print(f"results: {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
