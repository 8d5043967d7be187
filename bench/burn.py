"""CPU burners for ``python -m bench --burn N``: N processes that each spin on one core, at
the bot's own priority, for the whole run (the references included), so that the figures say
what the bot does when another busy program shares the machine. Every ratio is then taken
against a reference measured under the same load, in the same run."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

SPIN = "while True:\n    pass\n"


@contextlib.contextmanager
def burners(count: int) -> Iterator[list[int]]:
    """Start `count` burners; yields their process ids; ends each of them on the way out."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            started.append(subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL))
        yield [p.pid for p in started]
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait()
