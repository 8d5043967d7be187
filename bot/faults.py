"""Crash points: the named moments where a crash must lose nothing and send nothing twice.

testing.md, "Fault injection": the bot is killed while it works, and the result must be the
same as a run that was never killed (at most the one mail in flight is sent again, with its
Message-ID). Killing at random moments decides by timing whether a kill lands where it
matters; these named points let a test kill the worker exactly there instead.

Production code calls ``faults.reached(CrashPoint.X)`` at each point; the `App` carries
`NO_FAULTS`, which does nothing. The fault tests give their worker process a `Faults` that
kills the process at the n-th time a chosen point is reached (tests/e2e/bot_worker.py).
Nothing here reads the environment: the choice is made by whoever builds the `App`.
"""

from __future__ import annotations

import enum
from typing import Protocol


class CrashPoint(enum.StrEnum):
    # The intake (Service.poll / handle_batch): one batch is one transaction.
    AFTER_FETCH = "after-fetch"  # a batch fetched, nothing written yet
    BEFORE_COMMIT = "before-commit"  # a batch's mails handled and its rows written, not yet committed
    AFTER_COMMIT = "after-commit"  # the batch's effects committed, the mails not yet moved
    AFTER_MOVE = "after-move"  # the batch's mails moved out of the inbox
    # The deadline (games.tick): a turn is worked out on a snapshot, then written in one transaction.
    WORKED_OUT = "worked-out"  # a turn resolved and its mails rendered, nothing written yet
    AFTER_RESOLVE = "after-resolve"  # a turn resolved and committed, its mail queued
    # The send (mailout.drain): each mail's outcome is committed after the relay answered.
    BEFORE_SEND = "before-send"  # a batch of mail read from the outbox, none handed over yet
    AFTER_SEND = "after-send"  # the relay accepted one mail; its outcome not yet recorded
    AFTER_RECORD = "after-record"  # one mail's outcome committed


class Faults(Protocol):
    def reached(self, point: CrashPoint) -> None:
        """Called at each crash point; a test's implementation may end the process here."""
        ...


class NoFaults:
    """What production runs: the points are reached and nothing happens."""

    def reached(self, point: CrashPoint) -> None:
        return None


NO_FAULTS: Faults = NoFaults()

__all__ = ["NO_FAULTS", "CrashPoint", "Faults", "NoFaults"]
