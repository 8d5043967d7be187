"""Deadlines in the calendar: each turn sheet carries its deadline as an iCalendar
event (RFC 5545), sent as an iTIP request by mail (RFC 5546, RFC 6047 iMIP).

* One event per game and turn, its ``UID`` stable (`event_uid`): a turn sheet, a results mail
  that opens the next turn, and every update of that turn's deadline name the same event.
* ``METHOD:REQUEST`` with the deadline as ``DTSTART``. Written in UTC (RFC 5545 3.3.5, form
  2): every calendar client places a UTC time right in whatever zone its user reads it in,
  while a ``TZID`` needs a ``VTIMEZONE`` that clients read unevenly (and Outlook maps by its
  own zone names). The recipient's zone is named in the description, with the deadline as
  the bot's mail shows it there ("Fri 4 Dec 2026 18:00 CET (Europe/Paris)").
* ``SEQUENCE`` goes up each time the GM moves the deadline (EXTEND, DEADLINE: the turn's
  `Turn.calendar_sequence`); ``DTSTAMP`` is when the object was made, so a client keeps the
  latest (RFC 5546 2.1.5).
* ``METHOD:CANCEL`` (SEQUENCE one higher, STATUS:CANCELLED) when a turn is resolved before its
  deadline (early resolution, or the GM's PROCESS): the event no longer stands.
* A ``VALARM`` at each of the game's reminder marks (`Game.reminder_spec`, the marks
  `bot.games.reminders` reminds at) still ahead.
* ``ORGANIZER`` is the bot's plain address, ``ATTENDEE`` the recipient alone (no other
  player's address), ``RSVP=FALSE``: nothing to answer. A client that answers anyway sends an
  iTIP REPLY to the bot, which ignores it (bot.mail_in.parse, IgnoreReason.CALENDAR_REPLY).

Where the object goes in the mail (`bot.mail_out.compose`): the first one as the last
alternative of the mail's multipart/alternative, as calendar servers send invitations (the
text and the HTML stay what a reader sees); a second one (the CANCEL of an early-resolved turn
beside the REQUEST of the next) in a multipart/mixed around it (RFC 6047 2.4: objects with
different METHODs each in their own text/calendar entity).

A player turns it off for all their games with ``CALENDAR OFF`` (`Player.calendar`).

This module writes the object from a `DeadlineEvent`; which seat gets which event, and its
words (the summary and the description), are the letters' (`bot.letters.invitations`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

from bot.clock import as_utc
from bot.mail_out.compose import CalendarPart
from bot.schedules import DeadlineError, parse_duration

if TYPE_CHECKING:  # models only for their attributes: no import of the ORM needed to write events
    from bot.models import Game, Turn

REQUEST = "REQUEST"
CANCEL = "CANCEL"
PRODID = "-//Flagman//Flagman race director//EN"


@dataclass(frozen=True, slots=True)
class DeadlineEvent:
    """One turn's deadline as one recipient's calendar gets it."""

    uid: str
    sequence: int
    stamp: datetime  # DTSTAMP: when this object was made
    deadline: datetime  # DTSTART, aware
    summary: str
    description: str
    organizer: str  # the bot's address
    organizer_name: str
    attendee: str  # the recipient's address
    attendee_name: str
    alarms: tuple[timedelta, ...] = ()  # before the deadline
    method: str = REQUEST  # REQUEST | CANCEL


# -- the text format (RFC 5545 3.1, 3.3) --------------------------------------------------------


def _utc(moment: datetime) -> str:
    return as_utc(moment).strftime("%Y%m%dT%H%M%SZ")


_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f]")  # every control character but the line feed


def escape_text(value: str) -> str:
    """A TEXT value (RFC 5545 3.3.11): backslash, semicolon, comma and line breaks escaped;
    other control characters dropped (they are not allowed in a content line)."""
    value = _CONTROLS.sub("", value.replace("\r\n", "\n").replace("\r", "\n"))
    return value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _param(value: str) -> str:
    """A parameter value (RFC 5545 3.2): quoted, without DQUOTE or control characters."""
    cleaned = "".join(c for c in " ".join(value.split()) if c != '"' and c >= " " and c != "\x7f")
    return f'"{cleaned}"'


def fold(line: str) -> str:
    """One content line folded at 75 octets (RFC 5545 3.1), never inside a UTF-8 character."""
    if line.isascii():  # most lines: an octet a character
        if len(line) <= 75:
            return line
        return "\r\n ".join([line[:75], *(line[i : i + 74] for i in range(75, len(line), 74))])
    out: list[str] = []
    current, size = "", 0
    limit = 75
    for char in line:
        width = len(char.encode("utf-8"))
        if size + width > limit:
            out.append(current)
            current, size, limit = " ", 1, 75
        current += char
        size += width
    out.append(current)
    return "\r\n".join(out)


def _duration(before: timedelta) -> str:
    """A TRIGGER before the start (RFC 5545 3.3.6): ``-PT24H``, ``-P2DT1H30M``."""
    minutes = max(0, int(before.total_seconds()) // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    time = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return "-P" + (f"{days}D" if days else "") + (f"T{time}" if time else ("" if days else "T0M"))


def to_ics(event: DeadlineEvent) -> str:
    """The whole iCalendar object of `event`: CRLF line ends, folded lines (`attendee_ics`)."""
    shared = dataclasses.replace(event, attendee="", attendee_name="")
    return attendee_ics(shared, event.attendee, event.attendee_name)


def attendee_ics(shared: DeadlineEvent, attendee: str, attendee_name: str) -> str:
    """The iCalendar object of `shared` (an event without its attendee) with `attendee` for its
    attendee: its lines but the ATTENDEE are written once for the attendees of one event
    (`_shared_lines`: a turn's deadline goes to each seat of it alike), and each attendee's line
    once for that attendee (`_attendee_line`), so a seat's object costs the joining of three."""
    before, after = _shared_lines(shared)
    return f"{before}{_attendee_line(attendee, attendee_name)}{after}"


@lru_cache(maxsize=4096)
def _attendee_line(attendee: str, attendee_name: str) -> str:
    """The folded ATTENDEE line of an object to `attendee`, with its CRLF."""
    return fold(_attendee(attendee, attendee_name)) + "\r\n"


def _attendee(attendee: str, attendee_name: str) -> str:
    """The ATTENDEE content line: the recipient alone, nothing to answer."""
    return (
        f"ATTENDEE;CN={_param(attendee_name)};ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=FALSE:mailto:{attendee}"
    )


@lru_cache(maxsize=256)
def _shared_lines(event: DeadlineEvent) -> tuple[str, str]:
    """The folded CRLF lines of `event`'s object before its ATTENDEE line and after it (`to_ics`)."""
    lines = _lines(event)
    at = next(i for i, line in enumerate(lines) if line.startswith("ATTENDEE;"))
    return "".join(fold(line) + "\r\n" for line in lines[:at]), "".join(fold(line) + "\r\n" for line in lines[at + 1 :])


def _lines(event: DeadlineEvent) -> list[str]:
    """The content lines of `event`'s object, unfolded."""
    cancel = event.method == CANCEL
    lines = [
        "BEGIN:VCALENDAR",
        f"PRODID:{PRODID}",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        f"METHOD:{event.method}",
        "BEGIN:VEVENT",
        f"UID:{event.uid}",
        f"DTSTAMP:{_utc(event.stamp)}",
        f"DTSTART:{_utc(event.deadline)}",
        f"SEQUENCE:{event.sequence}",
        f"SUMMARY:{escape_text(event.summary)}",
        f"DESCRIPTION:{escape_text(event.description)}",
        f"ORGANIZER;CN={_param(event.organizer_name)}:mailto:{event.organizer}",
        _attendee(event.attendee, event.attendee_name),
        f"STATUS:{'CANCELLED' if cancel else 'CONFIRMED'}",
        "TRANSP:TRANSPARENT",
    ]
    if not cancel:
        for before in event.alarms:
            lines += [
                "BEGIN:VALARM",
                "ACTION:DISPLAY",
                f"DESCRIPTION:{escape_text(event.summary)}",
                f"TRIGGER:{_duration(before)}",
                "END:VALARM",
            ]
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return lines


def part(event: DeadlineEvent, filename: str) -> CalendarPart:
    return CalendarPart(event.method, to_ics(event), filename)


def attendee_part(shared: DeadlineEvent, attendee: str, attendee_name: str, filename: str) -> CalendarPart:
    """`part` of `shared` (an event without its attendee) with `attendee` for its attendee (`attendee_ics`)."""
    return CalendarPart(shared.method, attendee_ics(shared, attendee, attendee_name), filename)


# -- a turn's event ----------------------------------------------------------------------------


def event_uid(game: Game, number: int, domain: str) -> str:
    """One UID per game and turn (the game's id too: a later game may take a finished one's name)."""
    return event_uid_of(game.id, game.name, number, domain)


def event_uid_of(game_id: int, game: str, number: int, domain: str) -> str:
    """`event_uid` of the game with id `game_id` and name `game`."""
    return f"deadline-{game_id}-{game}-turn-{number}@{domain}"


@lru_cache(maxsize=256)
def reminder_marks(spec: str) -> tuple[timedelta, ...]:
    """The reminder marks of a game's schedule (``24h,2h``), longest first; () for none or for a
    schedule not understood (bot.games.reminders reads the same)."""
    text = spec.strip().lower()
    if text in ("", "none", "off"):
        return ()
    try:
        return tuple(sorted({parse_duration(p) for p in text.split(",") if p.strip()}, reverse=True))
    except DeadlineError:
        return ()


@dataclass(frozen=True, slots=True)
class Sender:
    """Who sends the invitation: the bot's plain address, and its domain for UIDs."""

    address: str
    name: str

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]


def resolved_early(turn: Turn) -> bool:
    """Whether `turn` was resolved before its deadline (its event must be cancelled)."""
    return (
        turn.deadline is not None and turn.resolved_at is not None and as_utc(turn.resolved_at) < as_utc(turn.deadline)
    )


__all__ = [
    "CANCEL",
    "REQUEST",
    "DeadlineEvent",
    "Sender",
    "attendee_ics",
    "attendee_part",
    "escape_text",
    "event_uid",
    "event_uid_of",
    "fold",
    "part",
    "reminder_marks",
    "resolved_early",
    "to_ics",
]
