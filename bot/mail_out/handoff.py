"""The outbox's bodies handed from the thread that wrote them to this process's sender, so that
the drain need not read back from the database the mail it has just been given.

The database stays the truth: a body is handed over only once the transaction that inserted it
has committed (`keep`, on the session's commit; a rollback hands over nothing), under its row's
Message-ID (unique in the outbox), and it is the very `bytes` object that transaction stored.
The drain still reads every row it sends from the database (status, attempts, envelope); it
takes the body of a row from here when its Message-ID is here (`take`, which forgets it) and
reads it from the database otherwise: after a restart, for mail written by another process,
for a body not held because the handoff was full.

Bounded: at most `capacity` bytes of bodies. The drain takes them oldest first, so when a new
body would pass the bound the ones held are kept and the new one is not (the sender, behind the
writer, finds the next bodies it needs here, and reads back from the database only those that
came while the handoff was full); only bodies held longer than `stale` seconds (mail this
process does not send soon: a relay that is down, a drain in another process that sent it) are
pushed out, oldest first, to make room.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from bot.db import once_committed

# A deadline's results mails are about 29 kB each: some 2,300 of them, the sender that far behind
# the writer.
CAPACITY = 64 * 1024 * 1024
STALE = 600.0  # seconds

_PENDING = "flagman_outbox_handoff"  # session.info: the bodies inserted, not yet committed


class Handoff:
    """Bodies by Message-ID, committed and not yet sent by this process, at most `capacity`
    bytes of them; safe to use from several threads. `clock` (seconds, monotonic) tells how
    long a body has been held."""

    def __init__(
        self, capacity: int = CAPACITY, stale: float = STALE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.capacity = capacity
        self.stale = stale
        self.clock = clock
        self._bodies: dict[str, tuple[float, bytes]] = {}  # (when put, body), oldest first
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._bodies)

    @property
    def size(self) -> int:
        """The bytes of the bodies held."""
        return self._size

    def put(self, bodies: Iterable[tuple[str, bytes]]) -> None:
        """Hold these committed bodies (Message-ID, body), each in place of any held under its
        Message-ID, while they fit in `capacity` with those held (bodies held `stale` seconds
        or more pushed out, oldest first, to make room); one that does not fit is not held."""
        with self._lock:
            held = self._bodies
            now = self.clock()
            for message_id, data in bodies:
                before = held.pop(message_id, None)
                if before is not None:
                    self._size -= len(before[1])
                while held and self._size + len(data) > self.capacity:
                    oldest = next(iter(held))
                    since, body = held[oldest]
                    if now - since < self.stale:
                        break
                    del held[oldest]
                    self._size -= len(body)
                if self._size + len(data) > self.capacity:
                    continue
                held[message_id] = (now, data)
                self._size += len(data)

    def take(self, message_id: str) -> bytes | None:
        """The body committed under `message_id`, forgotten here; None when not held."""
        with self._lock:
            held = self._bodies.pop(message_id, None)
            if held is None:
                return None
            self._size -= len(held[1])
            return held[1]


_HANDOFFS: weakref.WeakKeyDictionary[Engine, Handoff] = weakref.WeakKeyDictionary()
_MADE = threading.Lock()


def handoff_for(engine: Engine) -> Handoff:
    """The handoff of the bodies written through `engine` (one an engine, made at first use)."""
    with _MADE:
        handoff = _HANDOFFS.get(engine)
        if handoff is None:
            handoff = _HANDOFFS[engine] = Handoff()
        return handoff


def keep(session: Session, bodies: Iterable[tuple[str, bytes]]) -> None:
    """Hand these bodies (Message-ID, body), inserted in `session`'s transaction, to the sender
    of this process once that transaction commits (`bot.db.once_committed`: a step of
    `Database.transaction` after its commit); nothing if it rolls back. Inserted inside a
    SAVEPOINT (which may be rolled back on its own while the transaction commits), they are not
    handed over: the drain reads them from the database."""
    if session.in_nested_transaction():
        return
    pending: list[tuple[str, bytes]] | None = session.info.get(_PENDING)
    if pending is None:
        bind = session.get_bind()
        handoff = handoff_for(bind if isinstance(bind, Engine) else bind.engine)
        held: list[tuple[str, bytes]] = []
        session.info[_PENDING] = pending = held
        once_committed(session, lambda: handoff.put(held))
    pending.extend(bodies)


__all__ = ["CAPACITY", "STALE", "Handoff", "handoff_for", "keep"]
