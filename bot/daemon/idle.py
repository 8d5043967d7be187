"""IMAP IDLE on a connection of its own: the poll is woken as soon as mail comes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from bot.app import build_inbox
from bot.daemon.backoff import BACKOFF_MAX
from bot.settings import Settings

log = logging.getLogger("flagman.service")

# The IDLE loop shows a sign of life at least this often (it waits at most 30 s a cycle, and
# no longer than that at a time in its reconnect back-off).
ALIVE_EVERY = 60.0


class IdleWatch:
    """The IDLE thread: waits on the inbox, calls `on_mail` when mail comes, reconnects with
    back-off when the connection is lost (polling covers the gap), and stops with `stop`."""

    def __init__(self, settings: Callable[[], Settings], stop: threading.Event, on_mail: Callable[[], None]) -> None:
        self.settings = settings  # the settings in force (a reload replaces them)
        self.stop = stop
        self.on_mail = on_mail
        self.alive = 0.0  # time.monotonic() of the loop's last sign of life
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.alive = time.monotonic()
        self.thread = threading.Thread(target=self._loop, name="idle", daemon=True)
        self.thread.start()

    def healthy(self, now: float, grace: float) -> bool:
        """Alive, and showed a sign of life within `ALIVE_EVERY` plus `grace` seconds (always
        True when there is no IDLE thread)."""
        if self.thread is None:
            return True
        return self.thread.is_alive() and now - self.alive <= ALIVE_EVERY + grace

    def _loop(self) -> None:
        from bot.safe_text import error_text

        settings = self.settings()
        inbox = build_inbox(settings)
        failures = 0
        try:
            while not self.stop.is_set():
                self.alive = time.monotonic()
                try:
                    if inbox.wait(min(30.0, self.settings().schedule.poll_seconds)):
                        self.on_mail()
                except Exception as exc:  # reconnect after a pause; polling covers the gap
                    # One line per try, each pause twice the last (5 s up to 5 min), so a server that
                    # is down for hours costs a line every five minutes, not a traceback every five seconds.
                    failures += 1
                    pause = min(BACKOFF_MAX, 5.0 * 2 ** (failures - 1))
                    # The server's outage is said once by bot.mail_in.imap (and its end); the
                    # IDLE loop's own steps are details.
                    log.log(
                        logging.INFO if failures == 1 else logging.DEBUG,
                        "IDLE connection lost (%s); reconnecting in %g s (failure %d in a row)",
                        error_text(exc),
                        pause,
                        failures,
                    )
                    log.debug("IDLE failure", exc_info=True)
                    while not self.stop.wait(min(pause, 30.0)):  # alive for the watchdog meanwhile
                        self.alive = time.monotonic()
                        pause -= 30.0
                        if pause <= 0:
                            break
                else:
                    if failures:
                        log.info("IDLE connection back after %d failure(s)", failures)
                    failures = 0
        finally:
            inbox.close()
