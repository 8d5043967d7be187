"""The benchmarks' world: real servers on 127.0.0.1, databases, bot settings, games.

The servers are the test harness's (`tests.servers`): a private Dovecot (IMAP + LMTP), an
SMTP sink (aiosmtpd, no onward delivery) and, with ``--db postgresql``, a private
PostgreSQL cluster. The bot itself runs in a worker process (`bench.worker`), so that it
competes with nobody for the GIL (the SMTP sink runs in a thread of the main process) and
its peak memory is its own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import smtplib
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.mails import Seat
from tests.servers import Dovecot, Postgres, SmtpSink

SECRET = "bench-site-secret"
BOT_PASSWORD = "bot-password"
REPO = Path(__file__).resolve().parent.parent
_serial = itertools.count(1)


@dataclass
class World:
    dovecot: Dovecot
    sink: SmtpSink
    root: Path
    db_kind: str = "sqlite"
    postgres: Postgres | None = None
    # Called by the sink for every mail it accepts (the latency benchmark times arrivals).
    on_arrival: list[Any] = field(default_factory=list)
    # The bot's settings changed for every benchmark (`--set schedule.resolve_workers=0`): a
    # before/after of a setting in the same run, on the same servers.
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The CPU burners' process ids (`--burn N`), for `beside`.
    burners: list[int] = field(default_factory=list)

    def beside(self) -> dict[str, list[list[int]]]:
        """The threads that run beside a worker, each as [pid, tid]: the SMTP sink's (a thread
        of this process) and the CPU burners'. The worker reads what they used while it timed
        its work (`bench.worker`, `bench.usage`)."""
        thread = getattr(self.sink._controller, "_thread", None)  # aiosmtpd's Controller runs in it
        sink = [[os.getpid(), thread.native_id]] if thread is not None and thread.native_id else []
        threads = {"sink": sink, "burners": [[pid, pid] for pid in self.burners]}
        postmaster = self.postgres.proc.pid if self.postgres is not None and self.postgres.proc is not None else None
        if postmaster is not None:
            # The PostgreSQL server: every process of the cluster, the backends it starts meanwhile too
            # (tid -1: the children of `postmaster`, read each time, `bench.worker`).
            threads["database"] = [[postmaster, -1]]
        return threads

    def database_url(self, name: str) -> str:
        """A fresh, migrated database."""
        from bot.db import migrate

        if self.db_kind == "sqlite":
            url = f"sqlite:///{self.root / f'{name}-{next(_serial)}.sqlite'}"
        else:
            assert self.postgres is not None
            url = self.postgres.create_database(f"bench_{name}_{next(_serial)}")
        migrate(url)
        return url

    def kept(self, url: str) -> str:
        """A copy of the database `url` as it is now (nobody connected to it), for `put_back`:
        another SQLite file (SQLite's online backup, its write-ahead log included), or another
        PostgreSQL database made with `url`'s as its template."""
        if self.db_kind == "sqlite":
            copy = url + ".kept"
            _sqlite_copy(url, copy)
            return copy
        assert self.postgres is not None
        name = _database_name(url)
        return self.postgres.create_database(name + "_kept", template=name)

    def put_back(self, url: str, kept: str) -> None:
        """The database `url` made again as `kept` holds it (nobody connected to either)."""
        if self.db_kind == "sqlite":
            _sqlite_copy(kept, url)
        else:
            assert self.postgres is not None
            self.postgres.create_database(_database_name(url), template=_database_name(kept))

    def mailbox(self, name: str) -> str:
        """A fresh Dovecot user (its own INBOX/Processed/Failed) for the bot or the reference."""
        return self.dovecot.add_user(f"{name}-{next(_serial)}@bench.test", BOT_PASSWORD)

    def settings_spec(
        self, *, address: str, url: str, smtp: bool = False, extra: dict[str, dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """What a worker needs to build the bot's Settings (see `load_settings`)."""
        data: dict[str, Any] = {
            "bot": {"address": address, "timezone": "Europe/London"},
            "database": {"url": url},
            "inbox": {
                "kind": "imap",
                "host": self.dovecot.host,
                "port": self.dovecot.imap_port,
                "security": "none",
                "username": address,
                "timeout": 30.0,
            },
            "outbox": (
                {"kind": "smtp", "host": self.sink.host, "port": self.sink.port, "security": "none", "timeout": 30.0}
                if smtp
                else {"kind": "maildir", "path": str(self.root / "outbox")}
            ),
        }
        for section, values in [*(extra or {}).items(), *self.overrides.items()]:
            data.setdefault(section, {}).update(values)
        return {
            "data": data,
            "env": {"FLAGMAN_SECRET": SECRET, "FLAGMAN_IMAP_PASSWORD": BOT_PASSWORD},
            "base_dir": str(self.root),
        }


def load_settings(spec: dict[str, Any]) -> Any:
    from bot.settings import parse_settings

    return parse_settings(spec["data"], env=spec["env"], base_dir=Path(spec["base_dir"]), source="bench")


@contextlib.contextmanager
def world(db_kind: str = "sqlite") -> Iterator[World]:
    """Start Dovecot, the SMTP sink (and PostgreSQL); stop them all at the end."""
    if db_kind not in ("sqlite", "postgresql"):
        raise ValueError(f"--db must be sqlite or postgresql, not {db_kind!r}")
    root = Path(tempfile.mkdtemp(prefix="fm-bench-", dir="/tmp"))
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, root, True)
        dovecot = Dovecot()
        stack.callback(dovecot.cleanup)
        dovecot.start()
        sink = SmtpSink()
        stack.callback(sink.stop)
        sink.start()
        postgres = None
        if db_kind == "postgresql":
            postgres = Postgres()
            stack.callback(postgres.cleanup)
            postgres.start()
        w = World(dovecot, sink, root, db_kind, postgres)
        original = sink._record

        def record(mail: Any) -> None:  # timestamps arrivals for the latency benchmark
            for hook in list(w.on_arrival):
                hook(mail)
            original(mail)

        sink._record = record  # type: ignore[method-assign]
        yield w


# -- games --------------------------------------------------------------------------------


def setup_games(
    spec: dict[str, Any],
    games: int,
    *,
    prefix: str = "rc",
    players: int = 8,
    clock: Any = None,
    early_resolution: bool = True,
) -> list[Seat]:
    """`games` Racecraft games of `players` each, started; their turn sheets marked sent.

    Not timed. Returns every seat with its signed reply address. `clock`: the games' clock
    (the system's when None). `early_resolution` False: every turn waits for its deadline, so
    a seat's many mails are all taken as orders (ingest, latency); with it, the orders that
    complete a turn resolve it as they are read, and later mail answering that sheet is refused.
    """
    from sqlalchemy import update

    from bot.app import build_app
    from bot.dice import SeededEntropy
    from bot.games.turns import PlayerSpec, create_game
    from bot.mail_in.inbox import MaildirInbox
    from bot.mail_out.mailer import MaildirMailer
    from bot.models import Outbox, OutboxStatus

    settings = load_settings(spec)
    root = Path(spec["base_dir"])
    app = build_app(
        settings,
        clock=clock,
        inbox=MaildirInbox(root / "unused-inbox"),
        mailer=MaildirMailer(root / "unused-outbox"),
        entropy=SeededEntropy(2026),
    )
    seats: list[Seat] = []
    try:
        shell = app.shell
        for start in range(0, games, 50):
            with app.db.transaction() as session:
                for g in range(start, min(games, start + 50)):
                    name = f"{prefix}{g + 1}"
                    specs = [
                        PlayerSpec(f"s{p + 1}", f"{name}-p{p + 1}@players.test", f"Racer {g + 1}.{p + 1}")
                        for p in range(players)
                    ]
                    create_game(
                        shell,
                        session,
                        kind="racecraft",
                        name=name,
                        players=specs,
                        gm_address=f"gm-{name}@players.test",
                        deadline="48h",
                        seed=g + 1,
                        early_resolution=early_resolution,
                    )
                    seats += [Seat(name, s.seat, s.address, s.name, shell.reply_address(name, s.seat)) for s in specs]
        with app.db.transaction() as session:
            session.execute(update(Outbox).values(status=OutboxStatus.SENT))
    finally:
        app.close()
    return seats


# -- delivery -------------------------------------------------------------------------------


def deliver_all(
    dovecot: Dovecot, mails: Iterable[tuple[str, bytes]], mailboxes: Sequence[str], connections: int = 3
) -> int:
    """Deliver every mail into every mailbox over LMTP, on a few connections in parallel."""
    lock = threading.Lock()
    source = iter(mails)
    count = 0
    errors: list[BaseException] = []

    def work() -> None:
        nonlocal count
        try:
            with dovecot.lmtp_connection() as conn:
                while True:
                    with lock:
                        item = next(source, None)
                    if item is None:
                        return
                    _, data = item
                    for box in mailboxes:
                        conn.sendmail("player@players.test", [box], data)
                    with lock:
                        count += 1
        except (smtplib.SMTPException, OSError) as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"LMTP delivery failed: {errors[0]!r}")
    return count


def inbox_count(dovecot: Dovecot, user: str, folder: str = "INBOX") -> int:
    client = dovecot.imap_client(user, folder=None)
    try:
        return int(client.folder_status(folder, [b"MESSAGES"])[b"MESSAGES"])
    finally:
        client.logout()


def move_back(dovecot: Dovecot, user: str, source: str = "Processed") -> int:
    """Move every mail of `source` back into the INBOX (to run the reference again)."""
    client = dovecot.imap_client(user, folder=source)
    try:
        uids = sorted(client.search(["ALL"]))
        for start in range(0, len(uids), 1000):  # a UID set of 50,000 is too long a command
            client.move(uids[start : start + 1000], "INBOX")
        return len(uids)
    finally:
        client.logout()


# -- workers --------------------------------------------------------------------------------


# Where `run_worker` runs a worker: in an interpreter of its own (what the figures are measured
# in), or, once `workers_in_process()` is entered (`python -m bench --workers-in-process`: the
# benchmarks at a tiny size in tests/e2e/test_bench_smoke.py), in this process: the same work and
# the same answer, no interpreter started and no imports paid for each run, the figures then
# this process's own (not comparable).
_IN_PROCESS: list[bool] = []


@contextlib.contextmanager
def workers_in_process() -> Iterator[None]:
    """`run_worker` runs each worker in this process until the block ends."""
    _IN_PROCESS.append(True)
    try:
        yield
    finally:
        _IN_PROCESS.pop()


def _worker_here(mode: str, args: dict[str, Any], profile: Path | None) -> dict[str, Any]:
    from bench import worker

    worker.BESIDE.clear()
    worker.BESIDE.update(args.get("beside", {}))
    answer: dict[str, Any] = json.loads(json.dumps(worker.MODES[mode](args, str(profile) if profile else None)))
    return answer


def run_worker(
    mode: str, args: dict[str, Any], *, profile: Path | None = None, timeout: float = 7200
) -> dict[str, Any]:
    """Run `python -m bench.worker MODE` with `args` (JSON on stdin); its JSON answer (run in
    this process inside `workers_in_process()`)."""
    if _IN_PROCESS:
        return _worker_here(mode, args, profile)
    command = [sys.executable, "-m", "bench.worker", mode]
    if profile is not None:
        command += ["--profile", str(profile)]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        command, input=json.dumps(args), capture_output=True, text=True, cwd=REPO, env=env, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker {mode} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"worker {mode} gave no answer:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def run_beside(world: World, mode: str, args: dict[str, Any], *, profile: Path | None = None) -> dict[str, Any]:
    """`run_worker`, its answer also saying what the SMTP sink and the CPU burners used while
    it timed its work (`beside`: CPU, run-queue waits, context switches; `bench.usage`)."""
    return run_worker(mode, {**args, "beside": world.beside()}, profile=profile)


@contextlib.contextmanager
def started_worker(mode: str, args: dict[str, Any]) -> Iterator[subprocess.Popen[str]]:
    """A long-running worker (the latency benchmark's service); stopped by closing its stdin."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.worker", mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(args) + "\n")
    proc.stdin.flush()
    try:
        ready = proc.stdout.readline()
        if not ready.startswith("{"):
            proc.kill()
            raise RuntimeError(f"worker {mode} did not start: {ready}{proc.stderr.read() if proc.stderr else ''}")
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of a side's timed runs (by `seconds`), which counts, with every run's seconds
    in their order under ``runs_seconds``."""
    median = sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]
    median["runs_seconds"] = [run["seconds"] for run in runs]
    return median


def _database_name(url: str) -> str:
    """The PostgreSQL database a URL of `Postgres.create_database` names."""
    return url.rsplit("/", 1)[1]


def _sqlite_copy(source_url: str, target_url: str) -> None:
    """The SQLite database of `source_url` copied whole over that of `target_url`."""
    import sqlite3

    prefix = "sqlite:///"
    assert source_url.startswith(prefix) and target_url.startswith(prefix)
    source, target = sqlite3.connect(source_url[len(prefix) :]), sqlite3.connect(target_url[len(prefix) :])
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
