"""Due turns worked out in a worker process, beside the service (``[schedule] resolve_workers``).

Working out a due turn (`bot.games.deadline.work_out_due`: resolve it, render every results mail, draw the
picture) is most of the tick's CPU, and it needs nothing but a snapshot of the database. At a
deadline where many turns fall due together (bench: deadline), the service writes each
worked-out turn and sends its mail while the worker works out the next ones on another core,
instead of the two taking turns for one interpreter.

The worker runs the same `work_out_due`, on a Shell of its own built by the composition root
(`bot.app.work_out_in_worker`: its own database connection, the service's settings and
templates, read again when the service reloads them, and the service's clock reading at the
moment it handed the chunk on), so it changes where a turn is
worked out, never what: the service writes what comes back exactly as it writes what it worked
out itself, only if the turn's inputs are unchanged (`bot.games.deadline`'s write step). Nothing is
written in the worker, so a worker that dies loses nothing: the turns it had are worked out in
the service's process, and so is every later one (`WorkerPool`, logged once).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.dice import Entropy
from bot.faults import CrashPoint
from bot.games.deadline import INLINE, Due, WorkedOut, work_out_due
from bot.processes import Kept, Pending, WorkerFailed, WorkerPool
from bot.settings import Settings
from bot.shell import Shell

log = logging.getLogger("flagman.games")


@dataclass(frozen=True, slots=True)
class Chunk:
    """What the worker is handed: the service's settings, its templates (their folder, and how
    often the service reloaded them: SIGHUP), its clock's reading, and the due turns."""

    settings: Settings
    templates: Path
    reloads: int
    now: datetime
    due: Due
    entropy: Entropy  # the service's source of dice secrets (bot.dice): the next turns open here
    warm: bool = False  # made ready ahead (`ProcessTurnWorker.start`): every template compiled too


# What the worker process runs: (what the worker kept, a chunk) -> its turns worked out.
WorkerEntry = Callable[[Kept, Chunk], list[WorkedOut]]


class ProcessTurnWorker:
    """The chunks of a tick of two chunks or more in the worker process, which keeps `workers`
    + 1 chunks ahead of the one the tick is writing: every chunk when the worker is running
    already (started ahead, or kept from an earlier tick), so that the service's process only
    writes and sends; else the first chunk is worked out here while the worker (spawned on
    first use) starts on the next. A tick of one chunk (the usual deadline: a few games at a
    time) is worked out here: the trip would cost more than it saves."""

    def __init__(self, entry: WorkerEntry, workers: int = 1, *, niceness: int = 0) -> None:
        """`niceness`: how much lower the worker's CPU priority is than the service's
        (``[schedule] resolve_niceness``)."""
        self.entry = entry
        self._pool = WorkerPool("turn worker", "due turns are worked out", workers, log, niceness=niceness)

    def work_out(self, shell: Shell, chunks: Sequence[Due]) -> Generator[list[WorkedOut], None, None]:
        if len(chunks) < 2 or not self._pool.usable:
            yield from INLINE.work_out(shell, chunks)
            return
        ahead: deque[Pending[list[WorkedOut]]] = deque()
        here = 0 if self._pool.running else 1  # the chunks worked out here before the worker's
        sent = here  # chunks handed to the worker so far

        def hand_on() -> None:
            nonlocal sent
            while sent < len(chunks) and len(ahead) <= self._pool.count:
                ahead.append(self._pool.submit_kept(self.entry, self._chunk(shell, chunks[sent])))
                sent += 1

        try:
            hand_on()
        except WorkerFailed:  # could not start or take work (logged once): everything here
            yield from INLINE.work_out(shell, chunks)
            return
        if here:
            yield work_out_due(shell, chunks[0])
        for index in range(here, len(chunks)):
            try:
                worked = ahead.popleft().result()
                hand_on()
            except WorkerFailed:  # the worker died or failed (logged once): the rest here
                yield from INLINE.work_out(shell, chunks[index:])
                return
            for _ in worked:
                shell.faults.reached(CrashPoint.WORKED_OUT)
            yield worked
        # A tick that stops early (an error while writing) leaves chunks in the worker: their
        # results are read and dropped before the next piece of work's (`WorkerPool`).

    def start(self, shell: Shell) -> bool:
        """The worker process spawned now, not at the first tick of two chunks or more, and
        made ready as a deadline leaves it (its imports, its Shell and database connection,
        its templates compiled) by a chunk of no turns: the first real chunk then costs only
        its turns. False when the worker cannot be used (the tick then works out its turns
        here)."""
        return self._pool.start(self.entry, self._chunk(shell, [], warm=True), kept=True)

    def _chunk(self, shell: Shell, due: Due, *, warm: bool = False) -> Chunk:
        return Chunk(shell.settings, shell.renderer.root, shell.renderer.reloads, shell.now(), due, shell.entropy, warm)

    def worker_pids(self) -> tuple[int, ...]:
        """The worker processes in use that have worked out turns."""
        return self._pool.worker_pids()

    def close(self) -> None:
        self._pool.close()
