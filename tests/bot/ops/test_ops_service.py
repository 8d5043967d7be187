"""The service runner (bot.daemon.jobs.Runner): job guard and hooks, stopping between batches,
the watchdog's health rule, and what SIGHUP reloads."""

from __future__ import annotations

import logging
import socket
import sqlite3
import stat
import sys
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.app import App, build_app
from bot.daemon.jobs import Runner
from bot.faults import CrashPoint
from bot.mail_in.inbox import Folder, RawMail, deliver_to_maildir
from bot.mail_out.drain import DrainReport
from bot.models import Outbox
from bot.settings import load_settings
from bot.testing import FakeClock, FakeInbox, FakeMailer, plain_mail
from tests.helpers import init_site


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = init_site(tmp_path / "site", "flagman@runner.test")
    path.write_text(path.read_text() + "\n[schedule]\npoll_seconds = 60\ntick_seconds = 60\nsend_seconds = 30\n")
    return path


@pytest.fixture
def app(config: Path) -> Iterator[App]:
    application = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=FakeInbox(), mailer=FakeMailer())
    try:
        yield application
    finally:
        application.close()


def test_a_failing_job_is_logged_and_the_hooks_still_run(app: App, caplog: pytest.LogCaptureFixture) -> None:
    """A job that raises does not stop the service; the hooks (the watchdog's record) run after it."""
    runner = Runner(app)
    seen: list[str] = []
    runner.hooks.append(seen.append)

    def boom() -> None:
        raise RuntimeError("database went away")

    with caplog.at_level(logging.ERROR, logger="flagman.service"):
        runner._guard("tick", boom)()
    assert seen == ["tick"] and "tick" in runner.finished
    assert "job tick failed" in caplog.text and "database went away" in caplog.text


def test_after_a_stop_request_no_job_starts(app: App) -> None:
    """Once stopping, a job that comes due does nothing (and reports nothing)."""
    runner = Runner(app)
    ran: list[int] = []
    runner.stop_event.set()
    runner._guard("poll", lambda: ran.append(1))()
    assert ran == [] and "poll" not in runner.finished


class StoppingInbox(FakeInbox):
    """Asks the runner to stop as soon as the first batch has been fetched (SIGTERM mid-poll)."""

    runner: Runner | None = None

    def fetch_new(self, limit: int = 100, *, skip: Collection[str] = ()) -> list[RawMail]:
        batch = super().fetch_new(limit, skip=skip)
        if self.runner is not None and batch:
            self.runner.stop_event.set()
        return batch


def test_poll_stops_after_the_batch_in_progress(config: Path) -> None:
    """SIGTERM during a poll: the batch in hand is finished and committed, the rest waits for the next start."""
    inbox = StoppingInbox()
    for n in range(12):
        inbox.deliver(
            plain_mail(f"p{n}@players.test", "flagman@runner.test", "hello", "HELP", message_id=f"<m{n}@players.test>")
        )
    config.write_text(config.read_text().replace('path = "mail/inbox"\n', 'path = "mail/inbox"\nbatch_size = 5\n'))
    settings = load_settings(config, env={})
    assert settings.inbox.batch_size == 5
    app = build_app(settings, clock=FakeClock(), inbox=inbox, mailer=FakeMailer())
    try:
        runner = Runner(app)
        inbox.runner = runner
        runner.poll()
    finally:
        app.close()
    handled = sum(len(keys) for keys in inbox.folders.values())
    assert handled == 5
    assert len(inbox.pending) == 7


def test_watchdog_health_follows_the_jobs(app: App) -> None:
    """Healthy while poll and tick finish within interval + grace; a hung job makes it unhealthy
    (on the runner's clock, which the test moves)."""
    clock = SteppedClock()
    runner = Runner(app, monotonic=clock)
    runner.started_at = clock.now
    assert runner.healthy(grace=10)
    now = clock.now
    runner.finished = {"poll": now, "tick": now - 60 - 11}  # tick overdue by more than the grace
    assert not runner.healthy(grace=10)
    runner.finished["tick"] = now
    assert runner.healthy(grace=10)
    # The IDLE thread died: unhealthy, whatever the jobs do.
    runner.idle.thread = threading.Thread(target=lambda: None)
    runner.idle.thread.start()
    runner.idle.thread.join()
    assert not runner.healthy(grace=10)


def test_reload_applies_bot_and_schedule_keeps_connections(
    app: App, config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGHUP: [bot] and [schedule] take effect at once; [inbox] changes and the turn worker's count and
    priority wait for a restart (and say so)."""
    runner = Runner(app, config_path=config)
    runner.start()
    try:
        text = config.read_text()
        text = text.replace('name = "Flagman"', 'name = "Race Control"').replace(
            "poll_seconds = 60", "poll_seconds = 45"
        )
        text = text.replace('path = "mail/inbox"', 'path = "mail/elsewhere"')
        text = text.replace("[schedule]\n", "[schedule]\nresolve_workers = 0\nresolve_niceness = 5\n")
        assert "resolve_workers = 0" in text
        config.write_text(text)
        old_inbox = app.settings.inbox
        with caplog.at_level(logging.INFO, logger="flagman.service"):
            runner.reload()
        assert app.settings.bot.name == "Race Control"
        assert app.settings.inbox == old_inbox
        assert app.settings.schedule.resolve_workers == 1  # the turn worker is built once: kept
        assert app.settings.schedule.resolve_niceness == 0  # and so is its priority
        assert (
            "changes to [inbox], [schedule] resolve_workers, [schedule] resolve_niceness need a restart" in caplog.text
        )
        assert runner.scheduler.get_job("poll").trigger.interval.total_seconds() == 45
    finally:
        runner.stop()


def test_a_broken_configuration_on_reload_keeps_the_old_one(
    app: App, config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A typo in the file must not take a running service down: logged, old settings kept."""
    runner = Runner(app, config_path=config)
    before = app.settings
    config.write_text(config.read_text() + "\n[bot]\nnmae = 'x'\n")
    with caplog.at_level(logging.ERROR, logger="flagman.service"):
        runner.reload()
    assert app.settings is before
    assert "not reloaded" in caplog.text


def test_each_poll_batch_counts_as_progress_for_the_watchdog(config: Path) -> None:
    """A long inbox is worked through in many batches; each one feeds the health record."""
    inbox = FakeInbox()
    for n in range(3):
        inbox.deliver(
            plain_mail(f"p{n}@players.test", "flagman@runner.test", "hello", "HELP", message_id=f"<b{n}@players.test>")
        )
    config.write_text(config.read_text().replace('path = "mail/inbox"\n', 'path = "mail/inbox"\nbatch_size = 1\n'))
    app = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=inbox, mailer=FakeMailer())
    stamps: list[float] = []

    class Recording(dict[str, float]):
        def __setitem__(self, key: str, value: float) -> None:
            stamps.append(value)
            super().__setitem__(key, value)

    try:
        runner = Runner(app)
        runner.finished = Recording()
        runner.poll()
    finally:
        app.close()
    assert len(stamps) == 3  # one for each of the three batches
    assert not inbox.pending


def test_a_stop_that_meets_a_job_waking_another_still_ends(app: App) -> None:
    """A job wakes another (poll wakes send) at the moment SIGTERM arrives: the stop waits for that
    wake and then for the job, and ends. (APScheduler 3's shutdown holds the job stores' lock while
    it waits for running jobs; a wake reaching the scheduler after that would hang both.)"""
    runner = Runner(app)
    runner.start()
    in_wake = threading.Event()
    stopper: list[threading.Thread] = []
    real_get_job = runner.scheduler.get_job

    def get_job_as_the_stop_begins(job_id: str) -> Any:
        # The job has passed the stop check; now the stop begins, and the job goes on.
        if not stopper:
            stopper.append(threading.Thread(target=runner.stop))
            stopper[0].start()
            assert runner.stop_event.wait(30)
            in_wake.set()
        return real_get_job(job_id)

    runner.scheduler.get_job = get_job_as_the_stop_begins
    job_done = threading.Event()

    def job() -> None:
        runner.wake("send")
        job_done.set()

    # The waking job runs in the scheduler's executor, as poll and tick do.
    runner.scheduler.add_job(job, id="waker")
    assert job_done.wait(60), "the job never finished its wake"
    assert in_wake.is_set()
    stopper[0].join(60)
    assert not stopper[0].is_alive(), "the stop never ended"
    assert not runner.scheduler.running


def test_a_signal_wakes_the_services_main_loop_and_its_handler_takes_no_lock() -> None:
    """SIGTERM while the main loop waited could hang the service: the handler called
    `Event.set()`, which needs the lock `Event.wait()` in the same (main) thread may hold at that
    moment. The handlers now only note the signal, and the loop's wait is woken through
    `signal.set_wakeup_fd`: a SIGHUP, then a SIGTERM, each ends the wait it comes in (a wait of
    10 minutes that returns has been woken), with the flag set."""
    import signal
    import threading

    from bot.daemon.signals import Signals

    before = signal.getsignal(signal.SIGTERM)
    signals = Signals()
    signals.install()
    try:
        main = threading.main_thread().ident
        assert main is not None and threading.current_thread() is threading.main_thread()
        for sig, flag in ((signal.SIGHUP, "reloading"), (signal.SIGTERM, "stopping")):
            sender = threading.Thread(target=signal.pthread_kill, args=(main, sig))
            sender.start()
            signals.wait(600.0)
            sender.join()
            assert getattr(signals, flag), flag
        assert signals.stop.is_set() and signals.stop.wait(600.0)
    finally:
        signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is before


def test_mail_queued_while_the_send_job_runs_is_sent_by_that_job(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tick wakes the send job as each turn is committed, while the job may still be
    sending the previous game's mail; APScheduler runs one instance at a time, so such a
    wake would be dropped. `want_send` makes the running job send again once it is done."""
    runner = Runner(app)
    sends: list[int] = []

    def send() -> Any:
        sends.append(len(sends) + 1)
        if len(sends) == 1:
            runner.want_send()  # a turn committed while the first send was under way
        return DrainReport()

    monkeypatch.setattr(app.service, "send", send)
    runner.send()
    assert sends == [1, 2]
    runner.send()  # nothing wanted meanwhile: one send
    assert sends == [1, 2, 3]


def test_the_tick_job_wakes_the_sender_after_each_turn(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runner.tick gives the service's tick `want_send`, so each game's results go out as it is committed."""
    runner = Runner(app)
    given: list[Any] = []

    def tick(*, read_first: bool = False, on_resolved: Any = None) -> list[tuple[str, int]]:
        given.append(on_resolved)
        return []

    monkeypatch.setattr(app.service, "tick", tick)
    runner.tick()
    assert given == [runner.want_send]


def test_the_service_lets_its_threads_take_turns_often(app: App) -> None:
    """bench: deadline. The send job's thread must get the interpreter within a fraction of a
    millisecond of each relay answer while the tick renders: the service shortens the switch
    interval when it starts (5 ms by default)."""
    from bot.daemon import jobs

    before = sys.getswitchinterval()
    runner = Runner(app)
    try:
        sys.setswitchinterval(0.005)
        runner.start()
        assert sys.getswitchinterval() == pytest.approx(jobs.SWITCH_INTERVAL)
        assert jobs.SWITCH_INTERVAL <= 0.0005
    finally:
        runner.stop()
        sys.setswitchinterval(before)


# -- a failure that persists: back-off, STATUS=, the metrics file -------------------------------


class SteppedClock:
    """The back-off's clock, moved by the test (the runner's `monotonic`)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def notify_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    return sock


def statuses(sock: socket.socket) -> list[str]:
    """Every STATUS= sent so far (each datagram is there as soon as it was sent)."""
    found: list[str] = []
    while True:
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            return found
        found += [line.removeprefix("STATUS=") for line in data.decode().split("\n") if line.startswith("STATUS=")]


def metrics_of(path: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The metrics file, read by Prometheus's own text-format parser; every sample is labelled
    with its bot (left out of the keys)."""
    from prometheus_client.parser import text_string_to_metric_families

    found = {}
    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            assert sample.labels.get("bot") == "flagman@runner.test", sample
            found[(sample.name, tuple(sorted((k, v) for k, v in sample.labels.items() if k != "bot")))] = sample.value
    return found


def test_a_full_disk_is_one_line_per_back_off_step_then_one_when_it_works_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The database's disk fills up under the service: the poll fails and says why once, then the
    jobs that met it (poll, and tick, which reads the inbox first: its failure within the same
    step joins without a word) wait: a run within the back-off is skipped without a word, the
    next try after 10 s fails with one more line and waits 20 s;
    STATUS= says "failing since"; the watchdog's record goes on (a failing job is no hang); the
    metrics file says unhealthy and what fails. Room made again: one line, the mail handled,
    STATUS= back to running, the metrics healthy, with the mail counted."""
    from bot.daemon.backoff import BACKOFF_FIRST
    from bot.ops.notify import Notifier
    from tests.helpers import SmallDisk

    with SmallDisk(tmp_path / "disk", 4096) as disk:
        config = init_site(disk.root / "site", "flagman@runner.test")
        inbox = tmp_path / "inbox"  # on a disk with room: mail still arrives
        metrics_file = tmp_path / "metrics" / "flagman.prom"
        config.write_text(
            config.read_text().replace('path = "mail/inbox"', f'path = "{inbox}"')
            + f'\n[metrics]\nfile = "{metrics_file}"\n'
        )
        sock = notify_socket(tmp_path / "notify.sock")
        clock = SteppedClock()
        app = build_app(load_settings(config, env={}))
        runner = Runner(
            app,
            notifier=Notifier(env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock")}),
            monotonic=clock,
            version="test",
        )
        runner.backoff.running_status = "running: test"
        poll, tick = runner._guard("poll", runner.poll), runner._guard("tick", runner.tick)
        try:
            poll()  # the WAL and -shm made while there is room
            with sqlite3.connect(disk.root / "site" / "flagman.sqlite") as conn:
                assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
            conn.close()
            disk.fill()
            for n in range(2):
                deliver_to_maildir(
                    inbox,
                    plain_mail(
                        f"p{n}@players.test", "flagman@runner.test", "hi", "HELP", message_id=f"<full{n}@players.test>"
                    ),
                )
            caplog.clear()
            caplog.set_level(logging.INFO, logger="flagman")

            def said(words: str) -> list[str]:
                return [r.getMessage() for r in caplog.records if words in r.getMessage()]

            poll()
            assert len(said("the disk is full")) == 1 and "trying again in 10 s" in said("the disk is full")[0]
            assert "Traceback" not in caplog.text
            status = statuses(sock)[-1]
            assert status.startswith("failing since") and "the disk is full" in status, status
            found = metrics_of(metrics_file)
            assert found[("flagman_healthy", ())] == 0 and found[("flagman_failing", (("what", "database"),))] == 1
            before = dict(runner.finished)
            for _ in range(5):  # within the back-off: skipped, silently, and no hang for the watchdog
                poll()
                tick()
            assert len(said("the disk is full")) == 1
            assert runner.finished["poll"] >= before["poll"] and runner.healthy(grace=10)
            clock.now += BACKOFF_FIRST
            tick()  # the next try: tick (it reads the inbox first)
            lines = said("the disk is full")
            assert len(lines) == 2 and "trying again in 20 s" in lines[1] and "failure 2 in a row" in lines[1], lines
            poll()
            assert len(said("the disk is full")) == 2
            assert len(list((inbox / "new").iterdir())) == 2, "the mail waits in the inbox"
            disk.free()
            clock.now += 2 * BACKOFF_FIRST
            poll()
            assert len(said("works again")) == 1
            assert len(said("the disk is full")) == 2
            assert not list((inbox / "new").iterdir())
            assert statuses(sock)[-1] == "running: test"
            runner._guard("send", runner.send)()
            found = metrics_of(metrics_file)
            assert found[("flagman_healthy", ())] == 1 and ("flagman_failing", (("what", "database"),)) not in found
            assert found[("flagman_mails_received_total", (("outcome", "applied"),))] == 2
            assert found[("flagman_mails_sent_total", (("outcome", "sent"),))] == 2
            assert found[("flagman_job_failures_total", (("job", "poll"),))] == 1
            # tick met it once before it waited with poll (silently: the same step), and once as the next try
            assert found[("flagman_job_failures_total", (("job", "tick"),))] == 2
            assert found[("flagman_outbox_mails", (("status", "pending"),))] == 0
            assert found[("flagman_up", ())] == 1 and found[("flagman_info", (("version", "test"),))] == 1
            assert ("flagman_last_success_time_seconds", (("job", "send"),)) in found
        finally:
            app.close()
            sock.close()
    assert stat.S_IMODE(metrics_file.stat().st_mode) == 0o644
    assert [p.name for p in metrics_file.parent.iterdir()] == ["flagman.prom"], "no temporary file left"


def test_a_bug_in_one_job_is_a_traceback_once_then_a_line_per_step_and_the_others_run(
    app: App, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected exception in the send job: its traceback once, then one line per back-off
    step; poll and tick run on, unaffected."""
    clock = SteppedClock()
    runner = Runner(app, monotonic=clock)

    def broken() -> DrainReport:
        raise RuntimeError("a bug in send")

    monkeypatch.setattr(app.service, "send", broken)
    caplog.set_level(logging.INFO, logger="flagman")
    for step in range(3):
        for _ in range(4):
            runner._guard("send", runner.send)()
            runner._guard("poll", runner.poll)()
        clock.now += 10 * 2**step
    failures = [r for r in caplog.records if "job send failed" in r.getMessage()]
    assert len(failures) == 3
    assert failures[0].exc_info is not None and all(r.exc_info is None for r in failures[1:])
    assert runner.tally.failures["send"] == 3 and runner.tally.failures["poll"] == 0
    assert "poll" in runner.tally.last_success


def test_metrics_render_as_prometheus_reads_them() -> None:
    """Every figure the file promises, with HELP and TYPE, in the text format Prometheus reads:
    counters end in _total, label values escaped."""
    from datetime import UTC, datetime

    from prometheus_client.parser import text_string_to_metric_families

    from bot.ops import metrics

    tally = metrics.Tally(started=1_700_000_000.0)
    tally.received({"applied": 3, "refused": 1}, duplicates=2)
    tally.sent(5, 1, 0)
    tally.succeeded("poll", 1_700_000_100.0)
    tally.failed("tick")
    text = metrics.render(
        tally,
        metrics.Queues(4, 1, 2, 3, 1, 0),
        metrics.Health(True, False, (('job "x"', 2),)),
        version='1.0+g"abc',
        now=datetime(2026, 6, 1, tzinfo=UTC),
    )
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["flagman_mails_received"].type == "counter"
    values = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    assert values[("flagman_mails_received_total", (("outcome", "applied"),))] == 3
    assert values[("flagman_mails_received_total", (("outcome", "duplicate"),))] == 2
    assert values[("flagman_mails_sent_total", (("outcome", "deferred"),))] == 1
    assert values[("flagman_outbox_mails", (("status", "failed"),))] == 2
    assert values[("flagman_outbox_due_mails", ())] == 1
    assert values[("flagman_quarantined_mails", (("reported", "no"),))] == 1
    assert values[("flagman_turns_due", ())] == 0
    assert values[("flagman_failing", (("what", 'job "x"'),))] == 2
    assert values[("flagman_info", (("version", '1.0+g"abc'),))] == 1
    assert values[("flagman_last_success_time_seconds", (("job", "poll"),))] == 1_700_000_100.0


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def test_the_queues_in_the_metrics_are_the_databases(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """queue_depths on both databases: pending mail (and due now), mail quarantined (and not yet
    reported), turns past their closing time the tick has not resolved."""
    from dataclasses import replace
    from datetime import timedelta

    from bot.games.turns import PlayerSpec, create_game
    from bot.models import Quarantine
    from bot.ops.metrics import queue_depths
    from bot.settings import DatabaseSettings
    from tests.helpers import fresh_database

    postgres = request.getfixturevalue("postgres") if kind == "postgresql" else None
    url = fresh_database(kind, tmp_path, postgres)
    settings = load_settings(init_site(tmp_path / "site", "flagman@runner.test"), env={})
    clock, inbox = FakeClock(), FakeInbox()
    application = build_app(
        replace(settings, database=DatabaseSettings(url=url)), clock=clock, inbox=inbox, mailer=FakeMailer()
    )
    try:
        with application.db.transaction() as session:
            create_game(
                application.shell,
                session,
                kind="racecraft",
                name="rc1",
                gm_address="gm@runner.test",
                players=[PlayerSpec(n, f"{n}@players.test", n) for n in ("a", "b", "c", "d", "e")],
            )
        assert queue_depths(application.db, clock.now()).outbox_pending > 0  # the turn sheets
        application.service.send()
        inbox.deliver(plain_mail("x@elsewhere.test", "flagman@runner.test", "hi", "HELP"))
        application.service.poll()
        with application.db.transaction() as session:
            session.add(
                Quarantine(
                    mailbox_key="k", message_id="<q@x>", raw=b"", error="boom", created_at=clock.now(), reported=False
                )
            )
        now = clock.now()
        queues = queue_depths(application.db, now)
        assert (queues.outbox_pending, queues.outbox_due, queues.outbox_failed) == (1, 1, 0)
        assert (queues.quarantined, queues.quarantine_unreported, queues.turns_due) == (1, 1, 0)
        assert queue_depths(application.db, now + timedelta(hours=49)).turns_due == 1
    finally:
        application.close()


def test_a_job_whose_try_meets_another_failure_does_not_hold_the_others_back(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The back-off's bookkeeping: poll and tick fail on the database and wait; poll's next try
    meets the IMAP server down instead: that try is over, so tick may try the database next,
    and its success ends the database's failure (poll keeps waiting on the inbox's)."""
    from bot.mail_in.imap import ImapUnavailable

    clock = SteppedClock()
    runner = Runner(app, monotonic=clock)
    failure: dict[str, BaseException | None] = {
        "poll": sqlite3.OperationalError("database is locked"),
        "tick": sqlite3.OperationalError("database is locked"),
    }

    def job(name: str) -> Callable[[], None]:
        def run() -> None:
            error = failure[name]
            if error is not None:
                raise error

        return runner._guard(name, run)

    poll, tick = job("poll"), job("tick")
    poll()
    tick()
    assert runner.backoff.failing["database"].jobs == {"poll", "tick"}
    clock.now += 10
    failure["poll"] = ImapUnavailable("IMAP server h:993 unreachable after 5 attempts: ConnectionRefusedError")
    poll()
    assert set(runner.backoff.failing) == {"database", "inbox"} and runner.backoff.failing["database"].trying is None
    failure["tick"] = None
    tick()
    assert set(runner.backoff.failing) == {"inbox"}
    assert runner.tally.failures == {"poll": 2, "tick": 1}


class NewsAfterThePass(FakeInbox):
    """The first time the pass finds the inbox empty, a mail comes and the IDLE thread asks for a
    poll (`want_poll`) while the poll job is still running."""

    runner: Runner | None = None
    late: bytes = b""

    def fetch_new(self, limit: int = 100, *, skip: Collection[str] = ()) -> list[RawMail]:
        batch = super().fetch_new(limit, skip=skip)
        if not batch and self.late and self.runner is not None:
            self.deliver(self.late)
            self.late = b""
            self.runner.want_poll()
        return batch


def test_mail_that_comes_while_the_poll_job_runs_is_read_by_that_job(config: Path) -> None:
    """Confirmation latency: the IDLE thread wakes the poll job when mail comes, but
    APScheduler runs one instance at a time and drops a wake that comes while the job runs (the
    job then waits for its next interval, a minute). `want_poll` makes the running job read the
    inbox again once its pass is over, as `want_send` does for the send job."""
    inbox = NewsAfterThePass()
    inbox.deliver(plain_mail("p1@players.test", "flagman@runner.test", "hello", "HELP", message_id="<n1@players.test>"))
    inbox.late = plain_mail("p2@players.test", "flagman@runner.test", "hello", "HELP", message_id="<n2@players.test>")
    app = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=inbox, mailer=FakeMailer())
    try:
        runner = Runner(app)
        inbox.runner = runner
        runner.poll()  # the scheduler is not running: a wake would change nothing
    finally:
        app.close()
    assert not inbox.late, "the mail never came"
    assert not inbox.pending and len(inbox.folders[Folder.PROCESSED]) == 2
    assert not runner.poll_wanted.is_set()


def test_a_batchs_answers_are_sent_once_it_is_committed_before_it_is_moved(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The send job is woken as each batch is committed (its answers in the outbox),
    after the AFTER_COMMIT crash point and before the batch is moved out of the inbox and the
    next one handled, not once after the whole inbox."""
    events: list[str] = []

    def committed_rows() -> int:
        with app.db.transaction() as session:  # a session of its own: committed rows only
            return int(session.scalar(select(func.count()).select_from(Outbox)) or 0)

    def moved() -> int:
        return sum(len(keys) for keys in inbox.folders.values())

    class Recording(FakeInbox):
        def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
            super().mark_done(keys, folder)
            events.append(f"moved: {committed_rows()} answers committed, {moved()} mails moved")

    class Points:
        def reached(self, point: CrashPoint) -> None:
            if point in (CrashPoint.AFTER_COMMIT, CrashPoint.AFTER_MOVE):
                events.append(point.value)

    inbox = Recording()
    for n in range(2):
        inbox.deliver(
            plain_mail(f"p{n}@players.test", "flagman@runner.test", "hello", "HELP", message_id=f"<c{n}@players.test>")
        )
    config.write_text(config.read_text().replace('path = "mail/inbox"\n', 'path = "mail/inbox"\nbatch_size = 1\n'))
    app = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=inbox, mailer=FakeMailer(), faults=Points())
    try:
        runner = Runner(app)
        monkeypatch.setattr(
            runner,
            "want_send",
            lambda: events.append(f"send wanted: {committed_rows()} answers committed, {moved()} mails moved"),
        )
        runner.poll()
    finally:
        app.close()
    assert events == [
        "after-commit",
        "send wanted: 1 answers committed, 0 mails moved",
        "moved: 1 answers committed, 1 mails moved",
        "after-move",
        "after-commit",
        "send wanted: 2 answers committed, 1 mails moved",
        "moved: 2 answers committed, 2 mails moved",
        "after-move",
    ]


def test_a_mail_is_logged_as_handled_only_once_its_batch_is_committed(
    config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No mail is logged "applied" on an attempt that was rolled back. The disk fills
    just before the batch commits (the BEFORE_COMMIT point): the attempt is rolled back, the
    mails stay in the inbox, and the log says nothing of them; the next poll commits them and
    says each once. (briefing: every mail ends in exactly one of applied, refused or ignored.)"""
    import errno

    class DiskFills:
        full = True

        def reached(self, point: CrashPoint) -> None:
            if point is CrashPoint.BEFORE_COMMIT and self.full:
                raise OSError(errno.ENOSPC, "No space left on device")

    faults = DiskFills()
    inbox = FakeInbox()
    for n in range(3):
        inbox.deliver(
            plain_mail(f"p{n}@players.test", "flagman@runner.test", "hello", "HELP", message_id=f"<r{n}@players.test>")
        )
    app = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=inbox, mailer=FakeMailer(), faults=faults)
    try:
        caplog.set_level(logging.INFO, logger="flagman")
        with pytest.raises(OSError, match="No space left"):
            app.service.poll()
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mail r")]
        assert said == [], said
        assert len(inbox.pending) == 3, "every mail waits for the next poll"
        faults.full = False
        app.service.poll()
    finally:
        app.close()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mail r")]
    assert sorted(line.split()[1] for line in said) == ["r0@players.test", "r1@players.test", "r2@players.test"]
    assert not inbox.pending


def test_two_bots_on_one_host_write_no_series_in_common() -> None:
    """ "Metrics have no instance label: two instances on one host collide in
    node_exporter". Every sample names its bot; the two files, read together as node_exporter's
    textfile collector merges them, hold no series twice."""
    from datetime import UTC, datetime

    from prometheus_client.parser import text_string_to_metric_families

    from bot.ops import metrics

    def series(bot: str, role: str) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
        text = metrics.render(
            metrics.Tally(started=1.0),
            metrics.Queues(0, 0, 0, 0, 0, 0),
            metrics.Health(True, True),
            version="1",
            now=datetime(2026, 6, 1, tzinfo=UTC),
            bot=bot,
            role=role,
            database_bytes=4096,
        )
        found = set()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                assert sample.labels["bot"] == bot, sample
                found.add((sample.name, tuple(sorted(sample.labels.items()))))
        return found

    one, two = series("league@a.test", "active"), series("cup@b.test", "standby")
    assert one and two and not one & two
    assert ("flagman_role", (("bot", "cup@b.test"), ("role", "standby"))) in two
    assert ("flagman_database_bytes", (("bot", "league@a.test"),)) in one


def test_a_wake_of_a_running_job_is_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    """ "APScheduler's "skipped" warning on normal deadlines ... under `journalctl -p
    warning`". A job that still runs is woken (as `Runner.wake` does): APScheduler skips the
    run and says so; with the service's filter that line is not a warning (DEBUG, and only with
    DEBUG on)."""
    from datetime import UTC, datetime

    from apscheduler.events import EVENT_JOB_MAX_INSTANCES
    from apscheduler.schedulers.background import BackgroundScheduler

    from bot.daemon.jobs import JOB_DEFAULTS, quiet_scheduler_skips

    quiet_scheduler_skips()
    seen = threading.Event()  # APScheduler's own event for the run it skipped
    running, release = threading.Event(), threading.Event()

    def job() -> None:
        running.set()
        release.wait(30)

    scheduler = BackgroundScheduler(job_defaults=JOB_DEFAULTS, timezone=UTC)
    scheduler.add_listener(lambda _event: seen.set(), EVENT_JOB_MAX_INSTANCES)
    caplog.set_level(logging.DEBUG, logger="apscheduler")
    logging.getLogger("flagman").setLevel(logging.INFO)
    try:
        scheduler.add_job(job, "interval", hours=1, id="poll", next_run_time=datetime.now(UTC))
        scheduler.start()
        assert running.wait(30)
        for _ in range(150):
            scheduler.get_job("poll").modify(next_run_time=datetime.now(UTC))
            if seen.wait(0.2):
                break
        assert seen.is_set(), "APScheduler never skipped a run"
    finally:
        release.set()
        scheduler.shutdown(wait=True)
        logging.getLogger("flagman").setLevel(logging.NOTSET)
    skipped = [r for r in caplog.records if "skipped" in r.getMessage()]
    assert skipped == [], [(r.levelname, r.getMessage()) for r in skipped]  # dropped: DEBUG is off
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
