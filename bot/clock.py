"""The clock: the only place the shell learns the time. Rules never see it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A moment that stays: the clock of a piece of work done in another process (a turn
    worker, `bot.games.workers`), the moment the service asked for it."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment


def as_utc(moment: datetime) -> datetime:
    """Stored datetimes come back naive from SQLite; they are always UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
