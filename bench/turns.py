"""The turn worker's step alone, warm: CPU seconds a turn of `work_out_due`, and what it made.

``python -m bench.turns [--games 100] [--warm 50] [--profile FILE]``

Set-up (not timed): as `bench.tick`'s, `--games` Racecraft games of 8 with an order on file for
every seat, on SQLite in a temporary folder. The due turns are then worked out as the turn
worker works them out (`bot.games.deadline.work_out_due`, a chunk at a time as
`deadline.chunked` cuts them, each on a read-only snapshot; nothing is written), in this
process with its collector tuned as the service's (`share_the_interpreter`) and every template
compiled first (`Renderer.compile_all`, as the worker made ready ahead has them): the first
`--warm` turns not counted (the templates and the SQL compiled, the letters' caches filled
with a deadline's text, as a worker has them after its first chunks), the rest counted. It
prints the CPU seconds of the counted turns (`time.process_time`) and a digest of what they
made: every mail (kind, recipient and bytes, the random parts masked as `bench.tick` masks
them) and every picture (its PNG), equal before and after a change meant to keep them.

`bench.tick` times the whole tick (the reads and writes of the service's process too) on a
renderer made for each run; this harness is for the worker's own CPU a turn, in the state it
is in at a big deadline.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench.deadline import put_orders_on_file
from bench.harness import fresh_database
from bench.tick import SET_UP, masked, spec_for
from bench.world import load_settings, setup_games
from bot.clock import FixedClock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.turns", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--warm", type=int, default=50, help="turns worked out first and not counted")
    parser.add_argument("--profile", type=Path, help="cProfile the counted turns into this file")
    args = parser.parse_args(argv)
    if not 0 <= args.warm < args.games:
        parser.error("--warm must be at least 0 and less than --games")

    from bot.app import build_app
    from bot.daemon.jobs import share_the_interpreter
    from bot.dice import SeededEntropy
    from bot.games import deadline, turns
    from bot.games.deadline import WorkedOut
    from bot.mail_in.inbox import MaildirInbox
    from bot.mail_out.mailer import MaildirMailer

    root = Path(tempfile.mkdtemp(prefix="fm-turns-"))
    try:
        spec = spec_for(root, fresh_database(root, None))
        spec["data"].setdefault("schedule", {})["resolve_workers"] = 0
        setup_games(spec, args.games, prefix="tk", clock=FixedClock(SET_UP))
        put_orders_on_file(spec)
        share_the_interpreter()  # the collector as in the service and its workers
        app = build_app(
            load_settings(spec),
            clock=FixedClock(SET_UP + timedelta(days=2, hours=1)),
            inbox=MaildirInbox(root / "inbox"),
            mailer=MaildirMailer(root / "outbox"),
            entropy=SeededEntropy(2026),
        )
        try:
            shell = app.shell
            shell.renderer.compile_all()  # every template, as the worker made ready ahead has them
            with shell.db.read() as session:
                due = turns.due_ids(session, shell.now(), pace=deadline._pace(shell), early_unread=True)
            if len(due) != args.games:
                print(f"{len(due)} turns due, not {args.games}", file=sys.stderr)
                return 1
            for chunk in deadline.chunked(due[: args.warm]):
                deadline.work_out_due(shell, chunk)
            profiler = cProfile.Profile(time.process_time) if args.profile else None
            worked: list[WorkedOut] = []
            start = time.process_time()
            if profiler is not None:
                profiler.enable()
            for chunk in deadline.chunked(due[args.warm :]):
                worked.extend(deadline.work_out_due(shell, chunk))
            if profiler is not None:
                profiler.disable()
            cpu = time.process_time() - start
            if profiler is not None:
                profiler.dump_stats(str(args.profile))
        finally:
            app.close()
        digest = hashlib.sha256()
        mails = 0
        for turn in worked:
            for row in turn.mails:
                data = row["data"]
                assert isinstance(data, bytes)
                digest.update(f"{row['kind']}\0{row['recipient']}\0".encode())
                digest.update(masked(data))
                mails += 1
            for _, picture in sorted(turn.pictures.items(), key=lambda item: repr(item[0])):
                digest.update(picture.png if picture is not None else b"-")
        print(
            f"{len(worked)} turns worked out (after {args.warm} not counted): CPU {cpu:.3f} s, "
            f"{1000 * cpu / max(len(worked), 1):.2f} ms a turn; {mails} mails and pictures {digest.hexdigest()[:16]}"
        )
        return 0 if len(worked) == args.games - args.warm else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
