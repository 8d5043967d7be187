"""Deadline schedules: when the turn that opens now closes.

A game's schedule is one of (case-insensitive):
* a turn length: ``48h``, ``3d``, ``90m``, ``1d12h`` -- the deadline is that long after the
  turn opens;
* fixed times in the game's time zone: ``daily 18:00``, or weekdays ``mon,thu 18:00`` --
  the next such time at least `MIN_NOTICE` after the turn opens (so a turn opened at 17:50
  does not close at 18:00 the same day);
* ``manual`` -- no deadline: the GM resolves with PROCESS.

Times are computed in the game's zone with `zoneinfo`, so 18:00 Europe/London stays 18:00
local across a daylight-saving change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

MIN_NOTICE = timedelta(hours=12)
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_LENGTH_RE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$")
_FIXED_RE = re.compile(r"^(daily|[a-z,]+)\s+(\d{1,2}):(\d{2})$")


class DeadlineError(ValueError):
    """A schedule or a time that cannot be understood; the message says what is allowed."""


@dataclass(frozen=True, slots=True)
class Schedule:
    length: timedelta | None = None
    weekdays: tuple[int, ...] = ()
    at: time | None = None

    @property
    def manual(self) -> bool:
        return self.length is None and self.at is None


HELP = "a turn length (48h, 3d, 1d12h), fixed times (daily 18:00, mon,thu 18:00) or manual"


def parse_duration(text: str) -> timedelta:
    match = _LENGTH_RE.match(text.strip().lower().replace(" ", ""))
    if not match or not any(match.groups()):
        raise DeadlineError(f"{text!r} is not a duration; write e.g. 24h, 2d, 1d12h or 90m")
    days, hours, minutes = (int(g) if g else 0 for g in match.groups())
    delta = timedelta(days=days, hours=hours, minutes=minutes)
    if delta <= timedelta(0):
        raise DeadlineError("a duration must be longer than zero")
    return delta


def parse_schedule(spec: str) -> Schedule:
    text = " ".join(spec.strip().lower().split())
    if text in ("manual", "none"):
        return Schedule()
    fixed = _FIXED_RE.match(text)
    if fixed:
        days_text, hour, minute = fixed.group(1), int(fixed.group(2)), int(fixed.group(3))
        if hour > 23 or minute > 59:
            raise DeadlineError(f"{hour}:{minute:02d} is not a time of day")
        if days_text == "daily":
            weekdays = tuple(range(7))
        else:
            names = [d for d in days_text.split(",") if d]
            unknown = [d for d in names if d[:3] not in _DAYS]
            if unknown:
                raise DeadlineError(f"unknown day {unknown[0]!r} in {spec!r}; days are {', '.join(_DAYS)}")
            weekdays = tuple(sorted({_DAYS.index(d[:3]) for d in names}))
        return Schedule(weekdays=weekdays, at=time(hour, minute))
    try:
        return Schedule(length=parse_duration(text))
    except DeadlineError:
        raise DeadlineError(f"{spec!r} is not a schedule; use {HELP}") from None


def next_deadline(schedule: Schedule, opened: datetime, zone: str) -> datetime | None:
    """When a turn opened at `opened` closes, in UTC; None for a manual schedule."""
    if schedule.length is not None:
        return (opened + schedule.length).astimezone(UTC)
    if schedule.at is None:
        return None
    tz = ZoneInfo(zone)
    earliest = opened + MIN_NOTICE
    local = earliest.astimezone(tz)
    for offset in range(0, 15):
        day = (local + timedelta(days=offset)).date()
        if day.weekday() not in schedule.weekdays:
            continue
        candidate = datetime.combine(day, schedule.at, tzinfo=tz)
        if candidate >= earliest:
            return candidate.astimezone(UTC)
    raise AssertionError("a weekly schedule always has a time within 15 days")


def parse_when(text: str, now: datetime, zone: str) -> datetime:
    """A new deadline given by the GM: ``2026-12-01 18:00`` (game time), or ``+24h`` from now."""
    text = text.strip()
    if text.startswith("+"):
        return (now + parse_duration(text[1:])).astimezone(UTC)
    for fmt in ("%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            naive = datetime.strptime(text, fmt)  # noqa: DTZ007 - zone attached on the next line
        except ValueError:
            continue
        return naive.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    raise DeadlineError(f"{text!r} is not a time; write 2026-12-01 18:00 (the game's time zone) or +24h")


def format_local(moment: datetime, zone: str) -> str:
    """``Fri 4 Dec 18:00 GMT``: how a deadline is shown to someone in `zone`."""
    local = moment.astimezone(ZoneInfo(zone))
    return f"{local:%a} {local.day} {local:%b %Y %H:%M} {local.tzname()}"
