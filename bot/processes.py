"""Worker processes beside the service, for pure CPU work that can run on another core: the
parse of the batch read ahead (`bot.mail_in.parse_worker`) and the working out of due turns
(`bot.games.workers`).

A `WorkerPool` is a convenience, never a dependency. Its processes are spawned on first use,
or ahead of it when asked (`start`), each a fresh interpreter (none of the service's threads,
connections or locks is copied into it); each outlives the service that started it by a
second at most however the service ends, and once one fails (it died, it could not be
started, a piece of work failed in it) the pool is given up for good, logged once, and its
user does the work in its own process.

Each worker is one process and one pipe, not a `concurrent.futures.ProcessPoolExecutor`:
waiting for a result waits on the pipe and on the process's end together, so a worker that
dies (a SIGKILL, the OOM killer) is noticed at once, with no window in which a piece of work
handed over as it died waits forever (the executor has such races: a test that killed its
worker hung in it).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Generic, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class WorkerFailed(Exception):  # noqa: N818 - named for what happened, as Refused
    """A worker died, could not be reached, or the work raised in it (the cause is chained)."""


# The cyclic garbage collector's youngest generation is collected once this many more objects
# are allocated than freed (the interpreter's default is 700). Rendering a turn's letters makes
# and drops objects by the hundred thousand, nearly none in a cycle: at 700 the collector ran
# 93 times in a 100-game tick, for 90 ms of its CPU (about 5%); at 10,000 it runs 3 times, for
# 23 ms (bench.tick, timed by `gc.callbacks`). The older generations keep their defaults; the
# memory held at most grows by the young objects not yet examined.
GC_YOUNG = 10_000


def tune_the_collector() -> None:
    """The service's processes (`bot.daemon.jobs.Runner.start`, every worker at its start):
    the collector's youngest generation examined every GC_YOUNG allocations."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, older, oldest)


def _start_worker(owner: int, niceness: int) -> None:
    """In the worker, at its start: the collector tuned as the service's (`tune_the_collector`),
    its priority lowered by `niceness`, and its end as soon as the service that started it is
    gone (a SIGKILL, a crash: no `close`), rather than a wait forever for the next piece of work."""
    tune_the_collector()
    if niceness:
        try:
            os.nice(niceness)
        except OSError:  # a seccomp filter without setpriority (see deploy/flagman.service): run as the service
            pass

    def watch() -> None:
        while os.getppid() == owner:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


class Kept:
    """What one worker process keeps from one piece of work to the next (the turn worker: its
    Shell, with its database connection), handed explicitly to each piece of work submitted
    with `WorkerPool.submit_kept`: one per worker, made when it starts, gone with it. A value
    is kept under its type."""

    def __init__(self) -> None:
        self._values: dict[type, object] = {}

    def get(self, kind: type[T]) -> T | None:
        value = self._values.get(kind)
        return value if isinstance(value, kind) else None

    def put(self, value: object) -> None:
        self._values[type(value)] = value


def _serve(conn: Connection, owner: int, niceness: int) -> None:
    """A worker's life: each piece of work received is done and its result (or the exception
    it raised) sent back, in order, until the pipe closes or None comes. A piece submitted
    with `submit_kept` gets the worker's `Kept` as its first argument."""
    _start_worker(owner, niceness)
    kept = Kept()
    while True:
        try:
            work: tuple[Callable[..., object], tuple[object, ...], bool] | None = conn.recv()
        except (EOFError, OSError):
            return
        if work is None:
            return
        function, args, with_kept = work
        try:
            answer: tuple[bool, object] = (True, function(kept, *args) if with_kept else function(*args))
        except Exception as exc:  # noqa: BLE001 - the caller decides; the worker serves on
            answer = (False, exc)
        try:
            conn.send(answer)
        except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
            conn.send((False, WorkerFailed(f"the result could not be sent back: {exc!r}")))


class Pending(Generic[T_co]):
    """The result to come of one piece of work handed to a worker (`WorkerPool.submit`)."""

    def __init__(self, pool: WorkerPool, worker: _Worker) -> None:
        self._pool = pool
        self._worker = worker
        self._done = False
        self._ok = False
        self._value: object = None

    def _set(self, ok: bool, value: object) -> None:
        self._done, self._ok, self._value = True, ok, value

    def result(self) -> T_co:
        """The work's result, once the worker sends it; WorkerFailed if it died or the work
        raised there."""
        self._pool._wait_for(self)
        if not self._ok:
            raise WorkerFailed(str(self._value)) from (self._value if isinstance(self._value, BaseException) else None)
        return self._value  # type: ignore[return-value]  # what the work's function returned


class _Worker:
    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.waiting: deque[Pending[object]] = deque()  # handed over, result not yet read: in order
        self.worked = False


class WorkerPool:
    """`workers` spawned processes, the pool's `name` ("parse worker"), for the service; `done`
    says what is done in the service's process when they are not there ("mail is parsed"),
    for the log lines; `niceness`: how much lower than the service's their priority is.

    As with any spawned process, the program's main module is imported again in the worker: it
    must start the program only under ``if __name__ == "__main__":`` (the `flagman` command
    does)."""

    def __init__(self, name: str, done: str, workers: int, log: logging.Logger, *, niceness: int = 0) -> None:
        self.name = name
        self.done = done
        self.count = workers
        self.log = log
        self.niceness = niceness
        self._lock = threading.RLock()
        self._workers: list[_Worker] | None = None
        self._failed = False
        self._closed = False

    @property
    def usable(self) -> bool:
        """False once the pool has failed or been closed: the work is then done by its user."""
        with self._lock:
            return not (self._failed or self._closed)

    @property
    def running(self) -> bool:
        """Whether the workers are spawned (started ahead, or by an earlier piece of work) and
        usable: work handed to them now pays no process start."""
        with self._lock:
            return self._workers is not None and self.usable

    def submit(self, function: Callable[..., T], *args: object) -> Pending[T]:
        """Hand `function(*args)` to the worker with the least work waiting (started on first
        use). WorkerFailed if the pool is not usable or the work cannot be handed over (the pool
        is then given up)."""
        return self._submit(function, args, with_kept=False)

    def submit_kept(self, function: Callable[..., T], *args: object) -> Pending[T]:
        """`submit`, the work run as ``function(kept, *args)``: `kept` is what the worker that
        runs it kept from the work it did before (`Kept`)."""
        return self._submit(function, args, with_kept=True)

    def _submit(self, function: Callable[..., T], args: tuple[object, ...], *, with_kept: bool) -> Pending[T]:
        with self._lock:
            if not self.usable:
                raise WorkerFailed(f"no {self.name}")
            try:
                workers = self._started()
                worker = min(workers, key=lambda w: len(w.waiting))
                worker.conn.send((function, args, with_kept))
            except Exception as exc:
                self.give_up(exc)
                raise WorkerFailed(f"the {self.name} cannot take work: {exc!r}") from exc
            pending: Pending[T] = Pending(self, worker)
            worker.waiting.append(pending)
            return pending

    def start(self, function: Callable[..., object], *args: object, kept: bool = False) -> bool:
        """Every worker spawned now rather than on first use, each made ready by one piece of
        work, ``function(*args)`` (``function(kept, *args)`` with `kept`, as `submit_kept`),
        waited for: what a worker's start costs (a fresh interpreter, its imports, what the
        piece builds and keeps) is then paid before the first real piece of work, not by it.
        True when every worker is ready; False when the pool is not usable or has failed
        meanwhile (logged once, as any failure)."""
        pending: list[Pending[object]] = []
        with self._lock:
            if not self.usable:
                return False
            try:
                for worker in self._started():
                    worker.conn.send((function, args, kept))
                    pending.append(Pending(self, worker))
                    worker.waiting.append(pending[-1])
            except Exception as exc:  # noqa: BLE001 - as `submit`: the pool is given up, the caller goes on
                self.give_up(exc)
                return False
        try:
            for one in pending:
                one.result()
        except WorkerFailed:
            return False
        return True

    def _started(self) -> list[_Worker]:
        if self._workers is None:
            context = multiprocessing.get_context("spawn")
            started: list[_Worker] = []
            try:
                for _ in range(self.count):
                    ours, theirs = context.Pipe()
                    process = context.Process(
                        target=_serve,
                        args=(theirs, os.getpid(), self.niceness),
                        name=f"flagman-{self.name.replace(' ', '-')}",
                        daemon=True,
                    )
                    process.start()
                    theirs.close()
                    started.append(_Worker(process, ours))
            except BaseException:
                self._stop(started)
                raise
            self._workers = started
        return self._workers

    def _wait_for(self, pending: Pending[object]) -> None:
        """Read the worker's results in order until `pending`'s is in; a worker that ends
        meanwhile fails every piece of work it still had (and the pool is given up)."""
        with self._lock:
            worker = pending._worker
            while not pending._done:
                if not worker.waiting:  # given up or closed meanwhile: it had this one
                    pending._set(False, WorkerFailed(f"the {self.name} was stopped"))
                    break
                wait([worker.conn, worker.process.sentinel])
                try:
                    if not worker.conn.poll():  # only the process's end is ready: it ended with no answer
                        raise EOFError("the worker process ended")
                    ok, value = worker.conn.recv()
                except (EOFError, OSError) as exc:
                    died = WorkerFailed(f"the {self.name} ended (exit code {worker.process.exitcode})")
                    for waiting in worker.waiting:
                        waiting._set(False, died)
                    worker.waiting.clear()
                    self.give_up(exc if isinstance(exc, OSError) else died)
                    break
                worker.waiting.popleft()._set(ok, value)
                if ok:
                    worker.worked = True
            if not pending._ok and self.usable:
                self.give_up(pending._value if isinstance(pending._value, BaseException) else WorkerFailed("failed"))

    def give_up(self, exc: BaseException) -> None:
        """A worker failed: the pool is stopped and not used again (logged the first time)."""
        with self._lock:
            workers, self._workers = self._workers, None
            first = not self._failed
            self._failed = True
        if first:
            self.log.warning(
                "the %s failed (%s: %s); %s in the service's process from now on",
                self.name,
                type(exc).__name__,
                exc,
                self.done,
            )
        self._stop(workers or [])

    def worker_pids(self) -> tuple[int, ...]:
        """The worker processes in use that have done a piece of work (none before the first,
        after a failure, after `close`)."""
        with self._lock:
            return tuple(sorted(w.process.pid for w in self._workers or () if w.worked and w.process.pid))

    def close(self) -> None:
        """Stop the workers (each finishes the piece of work in hand first)."""
        with self._lock:
            workers, self._workers = self._workers, None
            self._closed = True
        self._stop(workers or [])

    @staticmethod
    def _stop(workers: list[_Worker]) -> None:
        """Ask each worker to end, and wait until it has: it first finishes the piece of work in
        hand, whose result (nobody wants it now) is read and dropped, so that it is never stuck
        sending it."""
        for worker in workers:
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                pass
        for worker in workers:
            while worker.process.is_alive():
                ready = wait([worker.conn, worker.process.sentinel])
                if worker.conn in ready:
                    try:
                        worker.conn.recv()
                    except (EOFError, OSError):
                        worker.process.join()
            worker.process.join()
            worker.conn.close()
            worker.waiting.clear()
