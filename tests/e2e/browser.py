"""One headless Chromium for every page the end-to-end tests open, driven over its DevTools
pipe (`--remote-debugging-pipe`: JSON messages ending in NUL on file descriptors 3 and 4).

Starting Chromium costs more than laying out a page, so a test process starts it once (on the
first page) and stops it when the process ends. Each page is opened in a browser context of
its own (no cookies, storage or cache shared with another page), in a viewport of the size
asked for; what is read back is what `chromium --dump-dom` prints (the document's outerHTML
once its load event and every listener of it have run) or what `--screenshot` writes (a PNG
of the viewport).

Chromium is Debian's `chromium` package. Without it the tests FAIL (testing.md: a test that
needs a server the machine lacks fails loudly; it is never silently skipped).
"""

from __future__ import annotations

import atexit
import base64
import itertools
import json
import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

# An answer or event not come after this long means Chromium is stuck: the test fails.
STUCK_SECONDS = 120.0


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is not installed (apt-get install chromium)", pytrace=False)


class Browser:
    """A headless Chromium and its DevTools pipe."""

    def __init__(self, binary: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="flagman-chromium-"))
        self.log = self.profile.with_suffix(".log")  # a file: a pipe nobody reads would fill and stall it
        to_chromium_r, self._to_chromium = os.pipe()
        self._from_chromium, from_chromium_w = os.pipe()
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={self.profile}",
            "--disable-dev-shm-usage",
            "--allow-file-access-from-files",
            "--remote-debugging-pipe",
        ]
        log_file = self.log.open("wb")
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_chromium_r} 4>&{from_chromium_w}', binary, *flags],
            pass_fds=(to_chromium_r, from_chromium_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
        log_file.close()  # Chromium has its own
        os.close(to_chromium_r)
        os.close(from_chromium_w)
        self._ids = itertools.count(1)
        self._buffer = b""
        self._events: list[dict[str, Any]] = []

    # -- the pipe ---------------------------------------------------------------------------
    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_chromium], [], [], STUCK_SECONDS)
            if not ready:
                raise AssertionError(f"Chromium said nothing for {STUCK_SECONDS:.0f} s")
            chunk = os.read(self._from_chromium, 1 << 20)
            if not chunk:
                self.proc.wait(10)
                stderr = self.log.read_text(errors="replace")
                raise AssertionError(f"chromium failed ({self.proc.returncode}): {stderr[-2000:]}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        result: dict[str, Any] = json.loads(message)
        return result

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """The result of one DevTools command (events that come meanwhile are kept)."""
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chromium, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read_message()
            if answer.get("id") == number:
                if "error" in answer:
                    raise AssertionError(f"Chromium refused {method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            if "method" in answer:
                self._events.append(answer)

    def wait_for(self, method: str, session: str) -> dict[str, Any]:
        """The next event `method` of `session`."""
        while True:
            for event in self._events:
                if event["method"] == method and event.get("sessionId") == session:
                    self._events.remove(event)
                    return event
            answer = self._read_message()
            if "method" in answer:
                self._events.append(answer)

    # -- pages ------------------------------------------------------------------------------
    def _open(self, url: str, width: int, height: int, hide_scrollbars: bool) -> tuple[str, str, str]:
        """`url` loaded in a new context and tab of `width` x `height`: (context, target, session)."""
        context = self.send("Target.createBrowserContext")["browserContextId"]
        target = self.send("Target.createTarget", url="about:blank", browserContextId=context)["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable", session)
        self.send(
            "Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1, mobile=False
        )
        if hide_scrollbars:
            self.send("Emulation.setScrollbarsHidden", session, hidden=True)
        navigated = self.send("Page.navigate", session, url=url)
        assert "errorText" not in navigated, f"Chromium could not open {url}: {navigated['errorText']}"
        self.wait_for("Page.loadEventFired", session)
        # The load listeners have run; a task queued after them returns the document.
        return context, target, session

    def _close(self, context: str, target: str) -> None:
        self.send("Target.closeTarget", targetId=target)
        self.send("Target.disposeBrowserContext", browserContextId=context)

    def dump_dom(self, url: str, width: int = 800, height: int = 600) -> str:
        """What `chromium --dump-dom URL` prints: the document once loaded and its load listeners run."""
        context, target, session = self._open(url, width, height, hide_scrollbars=False)
        try:
            value = self.send(
                "Runtime.evaluate",
                session,
                expression="new Promise(done => setTimeout(() => done(document.documentElement.outerHTML), 0))",
                awaitPromise=True,
                returnByValue=True,
            )["result"]["value"]
        finally:
            self._close(context, target)
        assert isinstance(value, str)
        return value

    def screenshot(self, url: str, path: Path, width: int, height: int, hide_scrollbars: bool = True) -> None:
        """What `chromium --screenshot=PATH --window-size=W,H URL` writes: the viewport as a PNG."""
        context, target, session = self._open(url, width, height, hide_scrollbars)
        try:
            data = self.send("Page.captureScreenshot", session, format="png")["data"]
        finally:
            self._close(context, target)
        path.write_bytes(base64.b64decode(data))

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("Browser.close")
            except AssertionError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._to_chromium, self._from_chromium):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
        self.log.unlink(missing_ok=True)


_browser: list[Browser] = []


def browser() -> Browser:
    """The Chromium of this test process, started on first use, stopped when the process ends."""
    if not _browser or _browser[0].proc.poll() is not None:
        _browser[:] = [Browser(chromium())]
        atexit.register(_browser[0].stop)
    return _browser[0]


def run_browser(*args: str) -> str:
    """A `chromium --headless` command line's page (the last argument) opened in the shared
    browser: `--dump-dom` returns the document, `--screenshot=PATH` writes the viewport,
    `--window-size=W,H` sizes it (800,600 by default), `--hide-scrollbars` hides them.
    (`--virtual-time-budget` and `--allow-file-access-from-files` are what the shared browser
    does always: the page is read once loaded, files may load their neighbours.)"""
    *flags, url = args
    width, height = 800, 600
    shot: Path | None = None
    for flag in flags:
        if flag.startswith("--window-size="):
            width, height = (int(n) for n in flag.split("=", 1)[1].split(","))
        elif flag.startswith("--screenshot="):
            shot = Path(flag.split("=", 1)[1])
        elif flag not in ("--dump-dom", "--hide-scrollbars", "--allow-file-access-from-files") and not flag.startswith(
            "--virtual-time-budget="
        ):
            raise AssertionError(f"run_browser: {flag} is not a flag the shared browser knows")
    if shot is not None:
        browser().screenshot(url, shot, width, height, hide_scrollbars="--hide-scrollbars" in flags)
        return ""
    return browser().dump_dom(url, width, height)
