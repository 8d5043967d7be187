"""`flagman run` as systemd runs it: READY/WATCHDOG/STOPPING on a notify socket, SIGTERM in the
middle of the work, SIGHUP reload, and standby behind the instance lock.

Each test runs the real service as a subprocess on the embedded default (SQLite + Maildir)
with short job intervals, and a unix datagram socket bound here as its NOTIFY_SOCKET.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import select

from bot.app import build_app
from bot.db import Database
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.inbox import deliver_to_maildir
from bot.mail_out.mailer import MaildirMailer
from bot.models import Game, InboundMessage, Turn
from bot.ops.backup import replay_game
from bot.settings import load_settings
from bot.testing import reply_to
from tests.helpers import as_unprivileged, init_site
from tests.servers import Postgres

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
# Turn 1 orders of the worked example (shared/design/racecraft.md), one per seat.
ORDERS = ("USE 0", "USE 2", "2", "BID 5", "USE 1")


T = TypeVar("T")


class NotifySocket:
    """A NOTIFY_SOCKET: collects every datagram the service sends."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.messages: list[list[str]] = []
        self.changed = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while not self.closed:
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            with self.changed:
                self.messages.append(data.decode().split("\n"))
                self.changed.notify_all()

    def wait_for(self, line: str, timeout: float = 30.0, after: int = 0, *, prefix: bool = False) -> int:
        """Index of the first datagram (from `after` on) holding `line` (a line starting with it: `prefix`)."""

        def found() -> int | None:
            for i, message in enumerate(self.messages[after:], start=after):
                if line in message or (prefix and any(m.startswith(line) for m in message)):
                    return i
            return None

        index = self.wait_until(found, f"no {line}", timeout)
        assert index is not None
        return index

    def wait_until(self, done: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
        """`done()`'s first answer that is not None or False, checked at each datagram; the test
        fails (with `what` and every datagram) if none comes within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                answer = done()
                if answer is not None and answer is not False:
                    return answer
                left = deadline - time.monotonic()
                assert left > 0, f"{what} within {timeout} s; got {self.messages}"
                self.changed.wait(left)

    def close(self) -> None:
        self.closed = True
        self.sock.close()


class Service:
    """`flagman run` in a subprocess, its log lines collected."""

    def __init__(
        self,
        config: Path,
        notify: NotifySocket,
        watchdog_usec: int = 3_000_000,
        *,
        unprivileged: bool = False,
        options: tuple[str, ...] = (),
    ) -> None:
        env = {**os.environ, "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": str(watchdog_usec), "PYTHONUNBUFFERED": "1"}
        env.pop("WATCHDOG_PID", None)
        env.pop("FLAGMAN_SECRET", None)
        # SIGUSR1 dumps every thread's stack (faulthandler), for a stop that does not come.
        boot = (
            "import faulthandler, signal, sys; faulthandler.register(signal.SIGUSR1); "
            "from bot.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        argv = [sys.executable, "-c", boot, "--config", str(config), "run", *options]
        self.proc = subprocess.Popen(
            as_unprivileged(argv) if unprivileged else argv,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def wait_log(self, text: str, timeout: float = 30.0) -> None:
        self.wait_until(lambda: text in self.log, f"no {text!r} in the log", timeout)

    def wait_until(self, done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        """Until `done()`, looked at every 50 ms while the service runs; the test fails (with
        `what` and the log) if the service exits first or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        while not done():
            assert self.proc.poll() is None or done(), f"service exited; log:\n{self.log}"
            assert time.monotonic() < deadline, f"{what} within {timeout} s; log:\n{self.log}"
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send `sig` and wait for the exit: its code. No exit within `timeout` seconds fails the
        test, with where every thread of the service stands."""
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGUSR1)  # faulthandler: where every thread stands
            time.sleep(1)
            raise AssertionError(f"no exit {timeout} s after signal {sig}; log:\n{self.log}") from None
        self.reader.join(5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def notify(tmp_path: Path) -> Iterator[NotifySocket]:
    sock = NotifySocket(tmp_path / "notify.sock")
    try:
        yield sock
    finally:
        sock.close()


def make_site(root: Path, games: int, *, interval: float = 0.3, batch: int = 5) -> tuple[Path, int]:
    """A site with `games` Racecraft games whose turn-1 orders all sit in the inbox; returns (config, mails)."""
    config = init_site(root, "flagman@signals.test")
    config.write_text(
        config.read_text().replace('path = "mail/inbox"\n', f'path = "mail/inbox"\nbatch_size = {batch}\n')
        + f"\n[schedule]\npoll_seconds = {interval}\ntick_seconds = {interval}\nsend_seconds = {interval}\n"
    )
    app = build_app(load_settings(config, env={}))
    players: dict[str, list[PlayerSpec]] = {}
    with app.db.transaction() as session:
        for g in range(games):
            seats = [PlayerSpec(f"p{i}", f"p{i}.g{g}@players.test", f"P{i}") for i in range(len(ORDERS))]
            players[f"g{g}"] = seats
            create_game(
                app.shell,
                session,
                kind="racecraft",
                name=f"g{g}",
                players=seats,
                gm_address="gm@signals.test",
                deadline="48h",
            )
    app.service.send()
    inbox = app.settings.resolve_path(app.settings.inbox.path)
    outbox = app.mailer
    assert isinstance(outbox, MaildirMailer), outbox  # the site's outbox is a Maildir (init_dir)
    mails = 0
    from email import message_from_bytes, policy

    for seats in players.values():
        for spec, orders in zip(seats, ORDERS, strict=True):
            (sheet,) = sorted((outbox.mailbox(spec.address) / "new").iterdir())
            msg = message_from_bytes(sheet.read_bytes(), policy=policy.default)
            deliver_to_maildir(
                inbox,
                reply_to(
                    msg,
                    orders,
                    sender=spec.address,
                    message_id=f"<{spec.seat}.{spec.address}@client.test>",
                ),
            )
            mails += 1
    app.close()
    return config, mails


def check_consistent(config: Path) -> dict[str, int]:
    """Every game's history is whole: no half-resolved turn; each resolved turn replays exactly;
    every mail with a row was moved out of the inbox, and none without one. Returns turn counts."""
    settings = load_settings(config, env={})
    db = Database(settings.database_url)
    inbox = settings.resolve_path(settings.inbox.path)
    try:
        with db.read() as session:
            counts = {}
            for game in session.scalars(select(Game)):
                turns = list(session.scalars(select(Turn).where(Turn.game_id == game.id).order_by(Turn.number)))
                assert [t.number for t in turns] == list(range(1, len(turns) + 1))
                resolved = [t for t in turns if t.resolved_at is not None]
                open_turns = [t for t in turns if t.resolved_at is None]
                assert len(open_turns) <= 1 and turns[: len(resolved)] == resolved
                for t in resolved:
                    assert t.state_after is not None and t.events is not None
                assert all(r.same for r in replay_game(session, game.name)), game.name
                counts[game.name] = len(resolved)
            handled = set(session.scalars(select(InboundMessage.message_id)))
    finally:
        db.dispose()
    from email import message_from_bytes, policy

    def ids(folder: Path) -> set[str]:
        out = set()
        for sub in ("new", "cur"):
            for path in (folder / sub).iterdir():
                msg = message_from_bytes(path.read_bytes(), policy=policy.default)
                out.add(str(msg["Message-ID"]).strip("<>"))
        return out

    pending, done = ids(inbox), ids(inbox / ".Processed")
    assert {h.strip("<>") for h in handled} == done, "a mail was moved without its row, or kept with one"
    assert not pending & done
    return counts


def test_sigterm_in_the_middle_of_the_work_stops_cleanly_and_loses_nothing(
    tmp_path: Path, notify: NotifySocket
) -> None:
    """READY=1, then SIGTERM while mail and turns are being worked through: STOPPING=1, exit 0
    within seconds, a consistent database; a restart finishes the rest exactly once."""
    config, mails = make_site(tmp_path / "site", games=12)
    service = Service(config, notify)
    try:
        notify.wait_for("READY=1")
        processed = load_settings(config, env={}).resolve_path("mail/inbox/.Processed/cur")
        service.wait_until(lambda: any(processed.iterdir()), "no mail processed")
        code = service.stop(signal.SIGTERM)  # no exit within the harness's 30 s fails the test
    finally:
        service.kill()
    assert code == 0, service.log
    notify.wait_for("STOPPING=1", timeout=1)
    assert "flagman stopped" in service.log
    assert "Traceback" not in service.log, service.log
    check_consistent(config)
    inbox_new = load_settings(config, env={}).resolve_path("mail/inbox/new")
    assert any(inbox_new.iterdir()), "the stop came after all the work: the test did not stop it midway"
    # The rest, after a restart (here: the jobs once each): every game's turn 1 resolved once.
    app = build_app(load_settings(config, env={}))
    try:
        app.service.poll()
        app.service.tick()
    finally:
        app.close()
    counts = check_consistent(config)
    assert counts == {f"g{g}": 1 for g in range(12)}
    db = Database(load_settings(config, env={}).database_url)
    try:
        with db.read() as session:
            assert len(list(session.scalars(select(InboundMessage.id)))) == mails
    finally:
        db.dispose()


def roles(path: Path) -> dict[str, float]:
    """flagman_role{role} of a metrics file, and its flagman_up, each sample labelled by its bot."""
    from prometheus_client.parser import text_string_to_metric_families

    found = {}
    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            if sample.name in ("flagman_role", "flagman_up"):
                assert sample.labels["bot"] == "flagman@signals.test", sample
                found[sample.labels.get("role", sample.name)] = sample.value
    return found


def test_watchdog_pings_sighup_reloads_and_a_second_service_waits_on_standby_and_takes_over(
    tmp_path: Path, notify: NotifySocket
) -> None:
    """The first `flagman run`: WATCHDOG=1 every half WatchdogSec while healthy; SIGHUP:
    RELOADING=1, new schedule, READY=1. Then a second `flagman run` on the same database says it
    is on standby; killing the first, the second takes over and runs the jobs. "a standby writes
    no file": on standby it writes one of its own (flagman-standby.prom, role standby, up),
    beside the active one's (role active); the standby's file goes as it takes over."""
    config, _ = make_site(tmp_path / "site", games=1)
    metrics_file = tmp_path / "metrics" / "flagman.prom"
    standby_file = tmp_path / "metrics" / "flagman-standby.prom"
    config.write_text(config.read_text() + f'\n[metrics]\nfile = "{metrics_file}"\n')
    first = Service(config, notify, watchdog_usec=1_000_000)
    second: Service | None = None
    try:
        ready = notify.wait_for("READY=1")
        first.wait_log("flagman running")
        ping = notify.wait_for("WATCHDOG=1", timeout=10, after=ready)
        notify.wait_for("WATCHDOG=1", timeout=10, after=ping + 1)
        config.write_text(config.read_text().replace("poll_seconds = 0.3", "poll_seconds = 0.7"))
        first.proc.send_signal(signal.SIGHUP)
        reloading = notify.wait_for("RELOADING=1", timeout=10)
        notify.wait_for("READY=1", timeout=10, after=reloading)
        first.wait_log("configuration reloaded")
        assert "job poll now runs every 0.7 s" in first.log
        assert first.proc.poll() is None
        second = Service(config, notify)
        second.wait_log("standby")
        assert "flagman running" not in second.log
        # Written as it goes on standby, before wait_for_lock's line "standby: ..."
        assert roles(standby_file) == {"flagman_up": 1, "active": 0, "standby": 1, "waiting": 0}
        assert roles(metrics_file)["active"] == 1
        first.proc.kill()
        first.proc.wait(10)
        second.wait_log("took over")
        second.wait_log("flagman running")
        assert not standby_file.exists()
        assert roles(metrics_file) == {"flagman_up": 1, "active": 1, "standby": 0, "waiting": 0}
        code = second.stop()
        assert code == 0, second.log
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_on_postgresql_a_lost_lock_stops_the_holder_and_the_standby_takes_over(
    tmp_path: Path, notify: NotifySocket, postgres: Postgres
) -> None:
    """PostgreSQL failover: the holder's lock session is killed (as when its host vanishes); the
    standby gets the advisory lock, and the old holder notices within seconds and exits 1."""
    import psycopg

    from bot.db import migrate

    config = init_site(tmp_path / "site", "flagman@signals.test")
    url = postgres.create_database("signals_failover")
    migrate(url)
    config.write_text(
        config.read_text().replace('url = "sqlite:///flagman.sqlite"', f'url = "{url}"')
        + "\n[schedule]\npoll_seconds = 0.5\ntick_seconds = 0.5\nsend_seconds = 0.5\n"
    )
    first = Service(config, notify)
    second: Service | None = None
    try:
        first.wait_log("flagman running")
        second = Service(config, notify)
        second.wait_log("standby")
        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
            # This database's holder alone: the cluster is the worker's, and another test's
            # service may still be letting go of its own lock in its own database.
            killed = conn.execute(
                "select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted"
                " and database = (select oid from pg_database where datname = current_database())"
            ).fetchall()
        assert killed == [(True,)]
        second.wait_log("took over", timeout=20)
        assert first.proc.wait(30) == 1
        assert "lost PostgreSQL advisory lock" in "\n".join(first.lines)
        second.wait_log("flagman running")
        code = second.stop()
        assert code == 0, second.log
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_a_full_disk_under_the_service_is_a_line_per_back_off_step_and_a_status(
    tmp_path: Path, notify: NotifySocket
) -> None:
    """The database's disk fills while `flagman run` works (a tmpfs the test fills to
    its last byte). The poll fails; the jobs wait and try again with back-off: as many lines
    about it in the log as steps (the failures STATUS= counts), not one a job run; STATUS= says
    "failing since"; WATCHDOG=1 goes on (a failure is no hang). Room made again: "works again",
    STATUS= running, the mail handled. The metrics file says so throughout, and flagman_up 0
    once stopped."""
    import re
    import sqlite3

    from prometheus_client.parser import text_string_to_metric_families

    from tests.helpers import SmallDisk

    def metrics() -> dict[str, float]:
        text = metrics_file.read_text() if metrics_file.exists() else ""
        found = {}
        for f in text_string_to_metric_families(text):
            for s in f.samples:
                assert s.labels.get("bot") == "flagman@signals.test", s  # every sample names its bot
                labels = sorted((k, v) for k, v in s.labels.items() if k != "bot")
                found[s.name + (str(labels) if labels else "")] = s.value
        return found

    with SmallDisk(tmp_path / "disk", 4096) as disk:
        config, _ = make_site(disk.root / "site", games=1)
        inbox = tmp_path / "inbox"
        metrics_file = tmp_path / "metrics" / "flagman.prom"
        config.write_text(
            config.read_text().replace('path = "mail/inbox"', f'path = "{inbox}"')
            + f'\n[metrics]\nfile = "{metrics_file}"\n'
        )
        service = Service(config, notify, watchdog_usec=1_000_000)
        try:
            ready = notify.wait_for("READY=1")
            service.wait_log("flagman running")
            # The WAL emptied (a write must grow it), then no byte left.
            while True:
                with sqlite3.connect(disk.root / "site" / "flagman.sqlite", timeout=30) as conn:
                    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                conn.close()
                if not busy:
                    break
            disk.fill()
            deliver_to_maildir(inbox, reply_to_stranger())
            service.wait_log("the disk is full")
            failing = notify.wait_for("STATUS=failing since", after=ready, prefix=True)
            ping = notify.wait_for("WATCHDOG=1", timeout=10, after=failing + 1)
            notify.wait_for("WATCHDOG=1", timeout=10, after=ping + 1)
            # As many lines about it as back-off steps: each step's STATUS= (sent just after its
            # line) counts the failures; the one for the last line counted is waited for.
            lines = [line for line in service.lines if "the disk is full" in line]

            def steps() -> int:
                said = re.findall(
                    r"STATUS=failing since [^,]*, (\d+) time", "\n".join("\n".join(m) for m in notify.messages)
                )
                return max((int(n) for n in said), default=0)

            notify.wait_until(lambda: steps() >= len(lines), f"not {len(lines)} back-off steps for {lines}")
            assert lines
            assert "Traceback" not in service.log
            assert metrics()["flagman_healthy"] == 0
            disk.free()
            service.wait_log("works again", timeout=60)
            notify.wait_for("STATUS=running", after=failing, prefix=True)
            service.wait_log("poll: 1 mails: 1 applied")
            code = service.stop()
        finally:
            service.kill()
    assert code == 0, service.log
    found = metrics()
    assert found["flagman_up"] == 0 and found["flagman_healthy"] == 0
    assert found["flagman_mails_received_total[('outcome', 'applied')]"] == 1


def reply_to_stranger() -> bytes:
    from bot.testing import plain_mail

    return plain_mail(
        "stranger@elsewhere.test", "flagman@signals.test", "hello", "HELP", message_id="<full-disk@elsewhere.test>"
    )
