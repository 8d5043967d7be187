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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.mail_in.inbox import RawMail
from bot.mail_in.parse import Inbound, parse_inbound
from bot.processes import WorkerFailed, WorkerPool

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
    return [
        None
        if data is None
        else parse_inbound(
            data,
            own_addresses=options.own_addresses,
            loop_header=options.loop_header,
            max_lines=options.max_lines,
            size=size,
        )
        for data, size in mails
    ]


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
    """Batches of `MIN_WORKER_BATCH` mails or more parsed in a worker process (`WorkerPool`:
    spawned on first use, given up for good when it fails); smaller ones, and every batch once
    the worker has failed, in the calling thread."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._pool = WorkerPool("parse worker", "mail is parsed", workers, log)

    def parse(self, mails: Sequence[RawMail], options: ParseOptions) -> list[Inbound | None]:
        items = unparsed(mails)
        if len(items) < MIN_WORKER_BATCH or not self._pool.usable:
            return parse_batch(items, options)
        try:
            return self._pool.submit(parse_batch, items, options).result()
        except WorkerFailed:  # died, or could not take the batch (logged once): parsed here
            return parse_batch(items, options)

    def start(self, options: ParseOptions) -> bool:
        """The worker process spawned now, not at the first batch worth sending it, and made
        ready (its imports) by parsing a batch of no mail; False when it cannot be used (every
        batch is then parsed here)."""
        return self._pool.start(parse_batch, [], options)

    def worker_pids(self) -> tuple[int, ...]:
        """The worker processes in use that have parsed a batch (none before the first large
        batch, after a failure, after `close`)."""
        return self._pool.worker_pids()

    def close(self) -> None:
        self._pool.close()
