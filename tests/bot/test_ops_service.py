"""The service runner (bot.scheduler.Runner): job guard and hooks, stopping between batches,
the watchdog's health rule, and what SIGHUP reloads."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, build_app
from bot.cli import init_dir
from bot.mail_out.outbox import DrainReport
from bot.scheduler import Runner
from bot.settings import load_settings
from bot.testing import FakeClock, FakeInbox, FakeMailer, plain_mail


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = init_dir(tmp_path / "site", "flagman@runner.test")
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

    def fetch_new(self, limit: int = 100, *, skip=()):  # noqa: ANN001, ANN201
        batch = super().fetch_new(limit, skip=skip)
        if self.runner is not None and batch:
            self.runner.stop_event.set()
        return batch


def test_poll_stops_after_the_batch_in_progress(config: Path) -> None:
    """SIGTERM during a poll: the batch in hand is finished and committed, the rest waits for the next start."""
    inbox = StoppingInbox()
    for n in range(12):
        inbox.deliver(plain_mail(f"p{n}@players.test", "flagman@runner.test", "hello", "HELP",
                                 message_id=f"<m{n}@players.test>"))
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
    """Healthy while poll and tick finish within interval + grace; a hung job makes it unhealthy."""
    runner = Runner(app)
    runner.started_at = time.monotonic()
    assert runner.healthy(grace=10)
    now = time.monotonic()
    runner.finished = {"poll": now, "tick": now - 60 - 11}  # tick overdue by more than the grace
    assert not runner.healthy(grace=10)
    runner.finished["tick"] = now
    assert runner.healthy(grace=10)
    # The IDLE thread died: unhealthy, whatever the jobs do.
    runner.idle_thread = threading.Thread(target=lambda: None)
    runner.idle_thread.start()
    runner.idle_thread.join()
    assert not runner.healthy(grace=10)


def test_reload_applies_bot_and_schedule_keeps_connections(app: App, config: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """SIGHUP: [bot] and [schedule] take effect at once; [inbox] changes wait for a restart (and say so)."""
    runner = Runner(app, config_path=config)
    runner.start()
    try:
        text = config.read_text()
        text = text.replace('name = "Flagman"', 'name = "Race Control"').replace("poll_seconds = 60", "poll_seconds = 45")
        text = text.replace('path = "mail/inbox"', 'path = "mail/elsewhere"')
        text = text.replace("[schedule]\n", "[schedule]\nresolve_workers = 0\n")
        assert "resolve_workers = 0" in text
        config.write_text(text)
        old_inbox = app.settings.inbox
        with caplog.at_level(logging.INFO, logger="flagman.service"):
            runner.reload()
        assert app.settings.bot.name == "Race Control"
        assert app.settings.inbox == old_inbox
        assert app.settings.schedule.resolve_workers == 1  # the turn worker is built once: kept
        assert "changes to [inbox], [schedule] resolve_workers need a restart" in caplog.text
        assert runner.scheduler.get_job("poll").trigger.interval.total_seconds() == 45
    finally:
        runner.stop()


def test_a_broken_configuration_on_reload_keeps_the_old_one(app: App, config: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
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
        inbox.deliver(plain_mail(f"p{n}@players.test", "flagman@runner.test", "hello", "HELP",
                                 message_id=f"<b{n}@players.test>"))
    config.write_text(config.read_text().replace('path = "mail/inbox"\n', 'path = "mail/inbox"\nbatch_size = 1\n'))
    app = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=inbox, mailer=FakeMailer())
    stamps: list[float] = []

    class Recording(dict):  # type: ignore[type-arg]
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

    def get_job_as_the_stop_begins(job_id: str):  # noqa: ANN202
        # The job has passed the stop check; now the stop begins, and the job goes on.
        if not stopper:
            stopper.append(threading.Thread(target=runner.stop))
            stopper[0].start()
            assert runner.stop_event.wait(30)
            in_wake.set()
        return real_get_job(job_id)

    runner.scheduler.get_job = get_job_as_the_stop_begins  # type: ignore[method-assign]
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

    from bot.scheduler import _Signals

    before = signal.getsignal(signal.SIGTERM)
    signals = _Signals()
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
    from bot import scheduler

    before = sys.getswitchinterval()
    runner = Runner(app)
    try:
        sys.setswitchinterval(0.005)
        runner.start()
        assert sys.getswitchinterval() == pytest.approx(scheduler.SWITCH_INTERVAL)
        assert scheduler.SWITCH_INTERVAL <= 0.0005
    finally:
        runner.stop()
        sys.setswitchinterval(before)
