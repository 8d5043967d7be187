"""The systemd notify protocol (sd_notify(3)), in a few lines of the standard library.

With ``Type=notify`` systemd passes ``$NOTIFY_SOCKET``, a unix datagram socket (a path, or
an abstract name written ``@name``), and reads newline-separated ``KEY=VALUE`` assignments
from it: ``READY=1`` once the service is up, ``WATCHDOG=1`` at least every ``WatchdogSec=``
(passed to us as ``$WATCHDOG_USEC``), ``RELOADING=1``/``READY=1`` around a reload,
``STOPPING=1`` when shutting down, ``STATUS=...`` free text shown by ``systemctl status``.

Outside systemd (no ``$NOTIFY_SOCKET``) every call is a no-op, so the same code runs from a
shell, cron or a test. A failed send is logged and otherwise ignored: the protocol is
advisory, and the service must never die because systemd's socket went away.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Mapping

log = logging.getLogger("flagman.notify")


def _address(path: str) -> str | bytes:
    # "@name" is Linux's abstract namespace: the name starts with a NUL byte on the wire.
    if path.startswith("@"):
        return b"\0" + path[1:].encode()
    return path


class Notifier:
    """Sends state changes to systemd when run under it; does nothing otherwise."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.socket_path = env.get("NOTIFY_SOCKET", "")
        self.watchdog_usec = 0
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        # WATCHDOG_PID names the process the watchdog is meant for (sd_watchdog_enabled(3)):
        # a child that inherited the environment must not ping on its parent's behalf.
        if usec.isdigit() and (not pid or pid == str(os.getpid())):
            self.watchdog_usec = int(usec)
        self._last_ping = 0.0

    @property
    def enabled(self) -> bool:
        return bool(self.socket_path)

    @property
    def watchdog_seconds(self) -> float:
        """WatchdogSec= in seconds, 0 when the watchdog is off."""
        return self.watchdog_usec / 1_000_000 if self.enabled else 0.0

    def send(self, *assignments: str) -> bool:
        """Send ``KEY=VALUE`` lines as one datagram; True if it was sent."""
        if not self.socket_path:
            return False
        payload = "\n".join(a.replace("\n", " ") for a in assignments).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(_address(self.socket_path))
                sock.sendall(payload)
        except OSError as exc:
            log.warning("cannot notify systemd at %s: %s", self.socket_path, exc)
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def reloading(self) -> bool:
        # systemd >= 253 wants MONOTONIC_USEC with RELOADING=1 (Type=notify-reload); older
        # ones ignore it.
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def stopping(self, status: str = "") -> bool:
        return self.send("STOPPING=1", *([f"STATUS={status}"] if status else []))

    def watchdog(self) -> bool:
        sent = self.send("WATCHDOG=1")
        if sent:
            self._last_ping = time.monotonic()
        return sent

    def watchdog_due(self) -> bool:
        """Is it time for the next ping? (every half WatchdogSec, as sd_watchdog_enabled(3) advises)"""
        interval = self.watchdog_seconds
        return interval > 0 and time.monotonic() - self._last_ping >= interval / 2
