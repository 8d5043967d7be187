"""A batch of raw mail parsed into `Inbound` values, in a worker process where one is wanted.

Parsing a mail (MIME, charsets, HTML, quotes and signatures: `parse_inbound`) is pure CPU
and about a third of the bot's work for an order mail (bench: ingest). While the service
handles one batch (the database, the confirmations), the next is fetched and parsed
(`Service.poll`, `ReadAhead`); in a worker process that parse runs on another core, beside
the batch in hand, instead of taking turns with it for the interpreter.

`parse_batch` is the one way a batch is parsed, here or in the worker: the same function on
the same bytes, so the worker changes where a mail is parsed, never what comes out. The
worker is a convenience, never a dependency: a batch too small to be worth the trip is
parsed here, and if the worker cannot be started or dies, the batch is parsed here and the
worker is not used again (logged once).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from bot.mail_in.inbox import RawMail
from bot.mail_in.parse import Inbound, parse_inbound

log = logging.getLogger("flagman.inbound")

# Fewer mails than this are parsed in the service's own process: sending them to the worker
# and back costs more than parsing them (the latency case: one order mail at a time).
MIN_WORKER_BATCH = 8


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """What `parse_inbound` needs besides the mail: the bot's own addresses (mail from them is
    ignored), its loop header, the line cap of the orders text."""

    own_addresses: frozenset[str]
    loop_header: str
    max_lines: int


Unparsed = tuple[bytes | None, int]  # a mail's bytes (None: over the size cap, not fetched) and its size


def parse_batch(mails: Sequence[Unparsed], options: ParseOptions) -> list[Inbound | None]:
    """Each mail parsed (`parse_inbound` never raises); None for a mail not fetched (over the cap)."""
    return [None if data is None else parse_inbound(data, own_addresses=options.own_addresses,
                                                    loop_header=options.loop_header,
                                                    max_lines=options.max_lines, size=size)
            for data, size in mails]


def _outlive_no_owner(owner: int) -> None:
    """In the worker, at its start: end it as soon as the service that started it is gone (a
    SIGKILL, a crash: no `close`), rather than wait forever for the next batch."""
    def watch() -> None:
        while os.getppid() == owner:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


def _parse_in_worker(mails: Sequence[Unparsed], options: ParseOptions) -> tuple[int, list[Inbound | None]]:
    """`parse_batch` as the worker runs it, with the worker's process id."""
    return os.getpid(), parse_batch(mails, options)


def unparsed(mails: Sequence[RawMail]) -> list[Unparsed]:
    return [(mail.data, mail.size) for mail in mails]


class MailParser(Protocol):
    def parse(self, mails: Sequence[RawMail], options: ParseOptions) -> list[Inbound | None]:
        """`parse_batch` of `mails`, wherever it runs; blocks until done."""
        ...

    def close(self) -> None: ...


class InlineParser:
    """Every batch parsed in the calling thread (``[inbox] parse_workers = 0``, and the tests' fakes)."""

    def parse(self, mails: Sequence[RawMail], options: ParseOptions) -> list[Inbound | None]:
        return parse_batch(unparsed(mails), options)

    def close(self) -> None:
        pass


class WorkerParser:
    """Batches of `MIN_WORKER_BATCH` mails or more parsed in a worker process (spawned on first
    use); smaller ones, and every batch once the worker has failed, in the calling thread. As
    with any spawned process, the program's main module is imported again in the worker: it
    must start the program only under ``if __name__ == "__main__":`` (the `flagman` command
    does)."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._failed = False
        self._closed = False
        self._pids: set[int] = set()  # the worker processes that have parsed a batch

    def parse(self, mails: Sequence[RawMail], options: ParseOptions) -> list[Inbound | None]:
        items = unparsed(mails)
        pool = self._pool_for(len(items))
        if pool is None:
            return parse_batch(items, options)
        try:
            pid, parsed = pool.submit(_parse_in_worker, items, options).result()
        except Exception as exc:  # noqa: BLE001 - a worker that died or cannot take the batch: parsed here
            self._give_up(exc)
            return parse_batch(items, options)
        with self._lock:
            if self._pool is pool:
                self._pids.add(pid)
        return parsed

    def _pool_for(self, count: int) -> ProcessPoolExecutor | None:
        if count < MIN_WORKER_BATCH:
            return None
        with self._lock:
            if self._failed or self._closed:
                return None
            if self._pool is None:
                try:
                    # Spawned (a fresh interpreter: none of the service's threads, connections
                    # or locks is copied into it), a child of the service, which it outlives by
                    # a second at most however the service ends (`_outlive_no_owner`).
                    self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                     initializer=_outlive_no_owner, initargs=(os.getpid(),))
                except (OSError, ValueError) as exc:
                    self._failed = True
                    log.warning("mail is parsed in the service's process: no parse worker (%s)", exc)
                    return None
            return self._pool

    def _give_up(self, exc: BaseException) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._pids.clear()
            first = not self._failed
            self._failed = True
        if first:
            log.warning("the parse worker failed (%s: %s); mail is parsed in the service's process from now on",
                        type(exc).__name__, exc)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def worker_pids(self) -> tuple[int, ...]:
        """The worker processes in use that have parsed a batch (none before the first large
        batch, after a failure, after `close`)."""
        with self._lock:
            return tuple(sorted(self._pids))

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._pids.clear()
            self._closed = True
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
