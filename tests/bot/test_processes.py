"""The worker processes beside the service (bot.processes.WorkerPool: the parse worker and the
turn worker stand on it).

What must hold: results come back to the piece of work they belong to, whatever order they are
asked for in; a worker that dies is noticed at once, whether it had work in hand or not, and
never leaves a caller waiting; work that fails in a worker gives the pool up, logged once; the
workers run at the priority asked for; closing the pool ends them, even with results nobody
read; a pool started ahead of its first use has every worker ready, each having done the piece
that readies it."""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from bot.daemon.jobs import share_the_interpreter
from bot.processes import GC_YOUNG, Kept, WorkerFailed, WorkerPool, _start_worker

log = logging.getLogger("flagman.test-processes")


def square(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def wait_forever() -> None:
    while True:
        time.sleep(3600)


def refuse(why: str) -> None:
    raise ValueError(why)


def big(size: int) -> bytes:
    return b"x" * size


def priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


@dataclass(frozen=True)
class Ready:
    what: str


def get_ready(kept: Kept, what: str) -> None:
    kept.put(Ready(what))


def readiness(kept: Kept) -> tuple[int, str | None]:
    ready = kept.get(Ready)
    return os.getpid(), None if ready is None else ready.what


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    made = WorkerPool("test worker", "the work is done", 2, log)
    yield made
    made.close()


def test_results_come_back_to_their_work_in_any_order_across_workers(pool: WorkerPool) -> None:
    pending = [pool.submit(square, n) for n in range(12)]
    got = [p.result() for p in reversed(pending)]
    assert [n for _, n in reversed(got)] == [n * n for n in range(12)]
    pids = {pid for pid, _ in got}
    assert len(pids) == 2 and os.getpid() not in pids, "shared by both workers, none of them this process"
    assert pool.worker_pids() == tuple(sorted(pids))


def test_a_worker_killed_with_work_in_hand_fails_that_work_at_once(caplog: pytest.LogCaptureFixture) -> None:
    """No wait for a result that cannot come (a ProcessPoolExecutor could hang here); the pool
    is given up, logged once; its user does the work itself from then on."""
    one = WorkerPool("test worker", "the work is done", 1, log)
    try:
        pid, _ = one.submit(square, 1).result()
        stuck = one.submit(wait_forever)
        with caplog.at_level(logging.WARNING, logger=log.name):
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(WorkerFailed, match="ended"):
                stuck.result()
            with pytest.raises(WorkerFailed):
                one.submit(square, 2)
        assert not one.usable and one.worker_pids() == ()
        assert len([r for r in caplog.records if "test worker failed" in r.getMessage()]) == 1, caplog.text
    finally:
        one.close()


def test_a_worker_killed_while_idle_fails_the_next_work_handed_to_it() -> None:
    one = WorkerPool("test worker", "the work is done", 1, log)
    try:
        pid, _ = one.submit(square, 3).result()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(WorkerFailed):
            one.submit(square, 4).result()
        assert not one.usable
    finally:
        one.close()


def test_work_that_raises_in_the_worker_gives_the_pool_up(pool: WorkerPool, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=log.name):
        with pytest.raises(WorkerFailed) as failed:
            pool.submit(refuse, "no such turn").result()
    assert isinstance(failed.value.__cause__, ValueError) and str(failed.value.__cause__) == "no such turn"
    assert not pool.usable
    assert len([r for r in caplog.records if "test worker failed" in r.getMessage()]) == 1


def test_workers_run_at_the_priority_asked_for() -> None:
    low = WorkerPool("test worker", "the work is done", 1, log, niceness=5)
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        assert low.submit(priority).result() == min(19, own + 5)
    finally:
        low.close()


def test_closing_ends_the_workers_even_with_results_nobody_read() -> None:
    """A result larger than a pipe's buffer, never asked for: the worker is blocked sending it
    when the pool closes; closing reads and drops it, and the worker ends."""
    pool = WorkerPool("test worker", "the work is done", 1, log)
    pid, _ = pool.submit(square, 4).result()
    pool.submit(big, 8 * 1024 * 1024)
    pool.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not pool.usable
    with pytest.raises(WorkerFailed):
        pool.submit(square, 5)


def test_a_worker_that_may_not_lower_its_priority_runs_at_the_services(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a seccomp filter without setpriority (EPERM), the worker still starts: it serves at
    the service's priority instead of failing the pool."""

    def refused(increment: int) -> int:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "nice", refused)
    _start_worker(os.getppid(), 10)  # the owner this process's parent: its watch never ends it


def test_a_pool_started_ahead_has_every_worker_ready_before_the_first_work(pool: WorkerPool) -> None:
    """`start`: both workers spawned at once, each having run the piece that readies it (what
    it keeps, here a marker) before any work is handed over."""
    assert pool.worker_pids() == ()
    assert pool.start(get_ready, "templates read", kept=True)
    started = pool.worker_pids()
    assert len(started) == 2
    first, second = pool.submit_kept(readiness), pool.submit_kept(readiness)  # one to each worker
    assert sorted([first.result(), second.result()]) == sorted((pid, "templates read") for pid in started)


def test_a_pool_that_cannot_get_ready_is_given_up_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """The piece that readies a worker fails: `start` says False, the pool is given up (logged
    once) and its user does the work itself, as after any failure; a closed pool is not started."""
    failing = WorkerPool("test worker", "the work is done", 1, log)
    with caplog.at_level(logging.WARNING, logger=log.name):
        assert not failing.start(refuse, "no templates")
    assert not failing.usable and failing.worker_pids() == ()
    assert len([r for r in caplog.records if "test worker failed" in r.getMessage()]) == 1
    closed = WorkerPool("test worker", "the work is done", 1, log)
    closed.close()
    assert not closed.start(square, 2) and closed.worker_pids() == ()


def collector_threshold() -> tuple[int, int, int]:
    return gc.get_threshold()


def test_workers_and_the_service_examine_young_objects_every_gc_young_allocations(pool: WorkerPool) -> None:
    """`tune_the_collector`: every worker at its start, and the service's process at its start
    (`share_the_interpreter`, Runner.start), collect the youngest generation every GC_YOUNG
    allocations; the older generations keep the interpreter's defaults."""
    assert pool.submit(collector_threshold).result() == (GC_YOUNG, 10, 10)
    before = gc.get_threshold()
    try:
        share_the_interpreter()
        assert gc.get_threshold() == (GC_YOUNG, *before[1:])
    finally:
        gc.set_threshold(*before)
