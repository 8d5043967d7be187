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

Everything here reads text a GM or an operator typed (EXTEND, DEADLINE, ``--deadline``,
``--grace``, reminder marks), so every parser refuses bad input with a `DeadlineError` that
carries what was wrong as a fact (`Problem`: a `Why`, what the text was read as, the text and
the values at fault) -- never another exception ("GM numbers"): durations are capped at
`MAX_DURATION`, numbers are checked for length before `int()`, only ASCII digits count, and
date arithmetic that would leave datetime's range is refused. Parsing is a single pass over at
most `MAX_INPUT` characters (no backtracking regular expression).

No words are made here: the refusal a GM or an operator reads is rendered from the fact by
`bot.letters.refusals` (templates/_common/words/deadline_refused.txt, which says what is
allowed), quoting at most `SHOW_CHARS` characters of the input (`shown`) and no line break
from it.
"""

from __future__ import annotations

import difflib
import enum
import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from functools import cache, lru_cache
from zoneinfo import ZoneInfo

MIN_NOTICE = timedelta(hours=12)
MAX_DURATION = timedelta(days=365)
"""The longest duration (turn length, EXTEND, DEADLINE +..., grace, reminder mark) and the
furthest ahead a DEADLINE may be set: a year is far beyond any real game's turn."""
MAX_DAYS = MAX_DURATION.days
MAX_INPUT = 100  # longer text is refused before it is read: no real duration, time or schedule is this long
SHOW_CHARS = 40  # at most this much of the input is quoted back in a message
_MAX_MINUTES = MAX_DAYS * 24 * 60
_MAX_DIGITS = len(str(_MAX_MINUTES))  # a number with more digits is over the cap whatever its unit
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # as a refusal names them
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_UNITS = {"d": 24 * 60, "h": 60, "m": 1}
# Only ever matched against at most MAX_INPUT ASCII characters (see parse_schedule).
_FIXED_RE = re.compile(r"(daily|[a-z,]+) ([0-9]{1,2}):([0-9]{2})")


class Reading(enum.Enum):
    """What a text was read as: a refusal says what such a text looks like."""

    DURATION = "duration"
    GRACE = "grace"  # a grace period: minutes or a duration
    SCHEDULE = "schedule"
    TIME = "time"  # a new deadline: a date and time, or +duration


class Why(enum.Enum):
    """Why a text is refused (`Problem.why`)."""

    TOO_LONG = "too_long"  # longer than MAX_INPUT: not read at all
    OVER_CAP = "over_cap"  # a duration or grace period over `Problem.days` days
    EMPTY = "empty"  # nothing given
    NOT_READ = "not_read"  # not written as the `Problem.reading` at all
    NOT_POSITIVE = "not_positive"  # a duration of zero
    MOMENT_OUT_OF_RANGE = "moment_out_of_range"  # a moment plus a duration leaves datetime's range
    NOT_A_TIME_OF_DAY = "not_a_time_of_day"  # `Problem.hour`:`Problem.minute`
    NO_DAY = "no_day"  # a fixed-time schedule naming no day
    UNKNOWN_DAY = "unknown_day"  # `Problem.day` is no day's name
    PAST_9999 = "past_9999"  # the next deadline would be after the year 9999
    TOO_FAR_AHEAD = "too_far_ahead"  # a deadline more than `Problem.days` days from now
    NOT_A_DATE = "not_a_date"  # no such date or time; `Problem.detail`: datetime's reason
    OUT_OF_RANGE = "out_of_range"  # a local time outside datetime's range in UTC


@dataclass(frozen=True, slots=True)
class Problem:
    """What is wrong with a text a GM or an operator typed: `why`, what it was read as, the
    text as given (`text`, quoted by the refusal at most `SHOW_CHARS` characters of it), and
    the values at fault."""

    why: Why
    reading: Reading = Reading.DURATION
    text: str = ""
    days: int = MAX_DAYS  # the cap, for OVER_CAP and TOO_FAR_AHEAD
    hour: int = 0  # NOT_A_TIME_OF_DAY
    minute: int = 0
    day: str = ""  # UNKNOWN_DAY: the word that is no day
    detail: str = ""  # NOT_A_DATE: datetime's own reason (its month or day out of range ...)


class DeadlineError(ValueError):
    """A schedule or a time that cannot be understood: `problem` says what is wrong; its words
    are `bot.letters.refusals.refusal`'s."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        self.problem = problem

    def __str__(self) -> str:
        """For a log line: the reason and what was read, the text quoted as `shown` quotes it
        (at most `SHOW_CHARS` characters of it, one line), never the words a person reads."""
        return f"{self.problem.why.value} ({self.problem.reading.value}): {shown(self.problem.text)}"


class _NotADuration(DeadlineError):  # noqa: N818 - named for what happened, as Refused
    """The text is not written as a duration at all (as opposed to one out of range)."""


@dataclass(frozen=True, slots=True)
class Schedule:
    length: timedelta | None = None
    weekdays: tuple[int, ...] = ()
    at: time | None = None

    @property
    def manual(self) -> bool:
        return self.length is None and self.at is None


def shown(text: str) -> str:
    """`text` quoted for a message: one line (line breaks and control characters escaped),
    at most `SHOW_CHARS` characters of it, ``...`` when cut."""
    cut = text.strip()
    return repr(cut[:SHOW_CHARS]) + ("..." if len(cut) > SHOW_CHARS else "")


def _refused(why: Why, reading: Reading, text: str = "") -> DeadlineError:
    return DeadlineError(Problem(why, reading, text))


def _number(digits: str, text: str, reading: Reading = Reading.DURATION) -> int:
    """The value of a run of ASCII digits, refused when it is too long to be under the cap."""
    significant = digits.lstrip("0")
    if len(significant) > _MAX_DIGITS:
        raise _refused(Why.OVER_CAP, reading, text)
    return int(significant or "0")


def parse_duration(text: str) -> timedelta:
    """``24h``, ``2d``, ``1d12h``, ``90m`` (spaces ignored): longer than zero, at most `MAX_DURATION`."""
    if len(text) > MAX_INPUT:
        raise _refused(Why.TOO_LONG, Reading.DURATION, text)
    lowered = text.strip().lower()
    if not lowered:
        raise _NotADuration(Problem(Why.EMPTY, Reading.DURATION))
    bad = _NotADuration(Problem(Why.NOT_READ, Reading.DURATION, text))
    if not lowered.isascii():
        raise bad
    minutes = 0
    digits = ""
    gap = False  # white space after digits: "24 h" is fine, "2 4h" is not
    units_left = "dhm"  # each unit at most once, in this order
    for char in lowered:
        if char.isspace():
            gap = bool(digits)
        elif "0" <= char <= "9":
            if gap:
                raise bad
            digits += char
        elif char in units_left and digits:
            gap = False
            minutes += _number(digits, text) * _UNITS[char]
            units_left = units_left[units_left.index(char) + 1 :]
            digits = ""
        else:
            raise bad
    if digits:  # a number without its unit
        raise bad
    if minutes <= 0:
        raise _refused(Why.NOT_POSITIVE, Reading.DURATION, text)
    if minutes > _MAX_MINUTES:
        raise _refused(Why.OVER_CAP, Reading.DURATION, text)
    return timedelta(minutes=minutes)


def parse_grace(text: str) -> int:
    """A grace period in whole minutes: a plain number of minutes (``30``, ``0``) or a
    duration (``30m``, ``2h``); at most `MAX_DURATION`."""
    compact = text.strip() if len(text) <= MAX_INPUT else ""
    if compact.isascii() and compact.isdigit():
        minutes = _number(compact, text, Reading.GRACE)
        if minutes > _MAX_MINUTES:
            raise _refused(Why.OVER_CAP, Reading.GRACE, text)
        return minutes
    return int(parse_duration(text).total_seconds()) // 60


def add(moment: datetime, delta: timedelta) -> datetime:
    """`moment` + `delta` in UTC, or DeadlineError when that leaves datetime's range."""
    try:
        return (moment + delta).astimezone(UTC)
    except (OverflowError, ValueError):
        raise _refused(Why.MOMENT_OUT_OF_RANGE, Reading.TIME) from None


def parse_schedule(spec: str) -> Schedule:
    if len(spec) > MAX_INPUT:
        raise _refused(Why.TOO_LONG, Reading.SCHEDULE, spec)
    text = " ".join(spec.strip().lower().split())
    if not text.isascii():
        raise _refused(Why.NOT_READ, Reading.SCHEDULE, spec)
    if text in ("manual", "none"):
        return Schedule()
    fixed = _FIXED_RE.fullmatch(text)
    if fixed:
        days_text, hour, minute = fixed.group(1), int(fixed.group(2)), int(fixed.group(3))
        if hour > 23 or minute > 59:
            raise DeadlineError(Problem(Why.NOT_A_TIME_OF_DAY, Reading.SCHEDULE, spec, hour=hour, minute=minute))
        if days_text == "daily":
            weekdays = tuple(range(7))
        else:
            names = [d for d in days_text.split(",") if d]
            if not names:
                raise _refused(Why.NO_DAY, Reading.SCHEDULE, spec)
            found = [_weekday(d) for d in names]
            unknown = [d for d, day in zip(names, found, strict=True) if day is None]
            if unknown:
                raise DeadlineError(Problem(Why.UNKNOWN_DAY, Reading.SCHEDULE, spec, day=unknown[0]))
            weekdays = tuple(sorted({day for day in found if day is not None}))
        return Schedule(weekdays=weekdays, at=time(hour, minute))
    try:
        return Schedule(length=parse_duration(text))
    except _NotADuration:
        raise _refused(Why.NOT_READ, Reading.SCHEDULE, spec) from None


def _weekday(name: str) -> int | None:
    """``mon``, ``mond``, ``monday`` -> 0: three letters or more of a day's name."""
    if len(name) < 3:
        return None
    for index, full in enumerate(_DAY_NAMES):
        if full.startswith(name):
            return index
    return None


def next_deadline(schedule: Schedule, opened: datetime, zone: str) -> datetime | None:
    """When a turn opened at `opened` closes, in UTC; None for a manual schedule."""
    if schedule.length is not None:
        return add(opened, schedule.length)
    if schedule.at is None:
        return None
    tz = ZoneInfo(zone)
    try:
        earliest = opened + MIN_NOTICE
        local = earliest.astimezone(tz)
        for offset in range(0, 15):
            day = (local + timedelta(days=offset)).date()
            if day.weekday() not in schedule.weekdays:
                continue
            candidate = datetime.combine(day, schedule.at, tzinfo=tz)
            if candidate >= earliest:
                return candidate.astimezone(UTC)
    except OverflowError:
        raise _refused(Why.PAST_9999, Reading.SCHEDULE) from None
    raise AssertionError("a weekly schedule always has a time within 15 days")


def parse_when(text: str, now: datetime, zone: str) -> datetime:
    """A new deadline given by the GM: ``2026-12-01 18:00`` (game time, ``T`` or a space
    between date and time; the date alone means midnight), or ``+24h`` from now. At most
    `MAX_DURATION` after `now`; a moment in the past is returned (the caller says why it
    will not do)."""
    if len(text) > MAX_INPUT:
        raise _refused(Why.TOO_LONG, Reading.TIME, text)
    compact = " ".join(text.split())
    if compact.startswith("+"):
        return add(now, parse_duration(compact[1:]))
    if not compact:
        raise _refused(Why.EMPTY, Reading.TIME)
    bad = _refused(Why.NOT_READ, Reading.TIME, text)
    if not compact.isascii():
        raise bad
    date_text, _, time_text = compact.replace("T", " ").replace("t", " ").partition(" ")
    fields = date_text.split("-")
    if len(fields) != 3 or " " in time_text:
        raise bad
    if time_text:
        fields += time_text.split(":")
        if len(fields) != 5:
            raise bad
    widths = ((4, 4), (1, 2), (1, 2), (1, 2), (1, 2))
    if not all(f.isdigit() and low <= len(f) <= high for f, (low, high) in zip(fields, widths, strict=False)):
        raise bad
    year, month, day, hour, minute = ([int(f) for f in fields] + [0, 0])[:5]
    if year > now.year + 1:
        raise _refused(Why.TOO_FAR_AHEAD, Reading.TIME, text)
    try:
        local = datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(zone))
    except ValueError as exc:
        raise DeadlineError(Problem(Why.NOT_A_DATE, Reading.TIME, text, detail=str(exc))) from None
    try:
        moment = local.astimezone(UTC)
    except (OverflowError, ValueError):
        raise _refused(Why.OUT_OF_RANGE, Reading.TIME, text) from None
    if moment - now > MAX_DURATION:
        raise _refused(Why.TOO_FAR_AHEAD, Reading.TIME, text)
    return moment


@lru_cache(maxsize=1024)
def format_local(moment: datetime, zone: str) -> str:
    """``Fri 4 Dec 18:00 GMT``: how a deadline is shown to someone in `zone` (kept for the
    next letter: a deadline's letters show the same few moments in the same few zones)."""
    local = moment.astimezone(ZoneInfo(zone))
    return f"{local:%a} {local.day} {local:%b %Y %H:%M} {local.tzname()}"


# -- time zones -----------------------------------------------------------------------------


@cache
def _zones() -> dict[str, str]:
    """Every zone name `zoneinfo` knows, by its lower-case spelling."""
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def find_zone(text: str) -> str | None:
    """The IANA zone `text` names (any case: "europe/paris" is Europe/Paris), or None."""
    return _zones().get(text.strip().lower())


def closest_zones(text: str) -> list[str]:
    """The zone names nearest to `text` (a typo's likely meaning), at most one."""
    names = _zones()
    return [names[z] for z in difflib.get_close_matches(text.strip().lower(), list(names), n=1, cutoff=0.6)]
