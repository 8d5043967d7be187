"""SIGTERM, SIGINT and SIGHUP, noted by the handlers and acted on by the main loop."""

from __future__ import annotations

import select
import signal
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from types import FrameType

    _Handler: TypeAlias = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
    """A signal's handler, as `signal.signal` takes and returns it."""


class Signals:
    """Signal handlers only note what came, in plain attributes; the main loop acts on it.

    A Python signal handler runs in the main thread between two of its bytecodes, possibly
    while that thread holds a lock: `threading.Event.wait` holds its Condition's lock for a
    moment on every wake-up, so an `Event.set()` in the handler can wait for a lock its own
    thread holds, forever (SIGTERM during the main loop's wait hung the service so). So the
    handlers take no lock; the main loop waits on a socket that `signal.set_wakeup_fd` writes a
    byte to when a signal comes (from C, before the handler runs), and wakes at once.
    """

    def __init__(self) -> None:
        self.stopping = False
        self.reloading = False
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self.stop = StopFlag(self)
        self._before: dict[signal.Signals, _Handler] = {}
        self._before_fd = -1

    def install(self) -> None:
        self._before_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._before = {
            sig: signal.signal(sig, handler)
            for sig, handler in (
                (signal.SIGTERM, self._on_stop),
                (signal.SIGINT, self._on_stop),
                (signal.SIGHUP, self._on_reload),
            )
        }

    def uninstall(self) -> None:
        """The handlers (and wake-up fd) there were before `install`."""
        for sig, handler in self._before.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(self._before_fd)
        self._read.close()
        self._write.close()

    def _on_stop(self, *_: object) -> None:
        self.stopping = True

    def _on_reload(self, *_: object) -> None:
        self.reloading = True

    def wait(self, timeout: float) -> None:
        """Up to `timeout` seconds, less if a signal comes (or came since the last wait)."""
        if not (self.stopping or self.reloading):
            select.select([self._read], [], [], timeout)
        try:
            while self._read.recv(512):
                pass
        except (BlockingIOError, InterruptedError):
            pass


class StopFlag:
    """`Signals.stopping` as the `is_set`/`wait` pair `wait_for_lock` waits on."""

    def __init__(self, signals: Signals) -> None:
        self._signals = signals

    def is_set(self) -> bool:
        return self._signals.stopping

    def wait(self, timeout: float | None = None) -> bool:
        self._signals.wait(60.0 if timeout is None else timeout)
        return self._signals.stopping
