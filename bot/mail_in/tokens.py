"""Signed confirmation codes: what a confirmation mail carries, and its reply brings back.

Three commands act only once the address they concern has answered a mail sent to it
(mail-interface.md): ``OBSERVE <game>`` from a stranger (its results go to the
From, which anyone can forge), ``JOIN <game>`` from a stranger (a seat for the From) and
``ADDRESS <new>`` (seats move to an address that has not proved itself). The bot mails that
address a code, in the subject as ``[confirm <code>]`` and in the body as a ``CONFIRM <code>``
line; a reply brings it back, and only then is the thing done. The code is a truncated HMAC
under the site secret of what it confirms, the address that must send it back, and the day it
was made, so it is good for that address only, for `VALID_DAYS`, and for nothing else::

    <kind>.<ref>.<day>.<mac>     observe.rc1.20460.k3j2...   address.42.20460.x7q...

`ref` is the game (OBSERVE) or the id of the request waiting for the answer (JOIN, ADDRESS:
`bot.games.requests`; an ADDRESS code's MAC also covers the address the player has now); a
SERIES code's is the series, its MAC covering the request waiting (`requests.series_code`). A
``STOP <code>`` (kind ``stop``) goes to the old address of an ADDRESS request, and stops it
before it takes effect. A code is a capability for the address it was mailed to, and goes
nowhere else (bot.letters). Pure: the secret and the time are given.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

# The form of every code (a CONFIRM or STOP line's argument, the subject's tag).
CONFIRM_CODE = re.compile(r"[a-z]{1,16}\.[a-z0-9_-]{1,30}\.[0-9]{1,8}\.[a-z2-7]{16}")

OBSERVE = "observe"
ADDRESS = "address"
JOIN = "join"
STOP = "stop"
PRACTICE = "practice"  # a stranger's PRACTICE: the game starts when the code comes back
OFFER = "offer"  # a seat offered to the substitutes bench: the first to send it back takes it
BENCH = "bench"  # a stranger's SUBSTITUTE ON: on the bench when the code comes back
SERIES = "series"  # a stranger's JOIN <series> with no race open: in its next season when it comes back
KINDS = (OBSERVE, ADDRESS, JOIN, STOP, PRACTICE, OFFER, BENCH, SERIES)
VALID_DAYS = 3  # a code made on day d is good on days d .. d+3 (UTC)
_EPOCH = date(1970, 1, 1)
_SUBJECT = re.compile(r"\[confirm\s+(" + CONFIRM_CODE.pattern + r")\]", re.I)


@dataclass(frozen=True, slots=True)
class Code:
    """A confirmation code as read back, not yet verified."""

    kind: str
    ref: str
    day: int
    mac: str


def _day(moment: datetime) -> int:
    return (moment.astimezone(UTC).date() - _EPOCH).days


def _mac(secret: str, kind: str, ref: str, day: int, address: str, extra: str) -> str:
    message = "\x00".join(("flagman-confirm", kind, ref, str(day), address.strip().lower(), extra.strip().lower()))
    digest = hmac.new(secret.encode(), message.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii")[:16].lower()


def make(secret: str, kind: str, ref: str, now: datetime, address: str, extra: str = "") -> str:
    """The code confirming `kind` of `ref`, to be sent back from `address` (`extra`: what else
    it must still be true of, e.g. the player's address now)."""
    day = _day(now)
    return f"{kind}.{ref}.{day}.{_mac(secret, kind, ref, day, address, extra)}"


def parse(text: str) -> Code | None:
    """The parts of a code (from a CONFIRM line or a subject), or None if it is none."""
    text = text.strip().lower()
    if not CONFIRM_CODE.fullmatch(text):
        return None
    kind, ref, day, mac = text.split(".")
    return Code(kind, ref, int(day), mac) if kind in KINDS else None


def verify(code: Code, secrets_in_force: Sequence[str], now: datetime, address: str, extra: str = "") -> bool:
    """Whether `code` was made by us for `address` (and `extra`), within `VALID_DAYS`."""
    if not 0 <= _day(now) - code.day <= VALID_DAYS:
        return False
    return any(
        secret and hmac.compare_digest(_mac(secret, code.kind, code.ref, code.day, address, extra), code.mac)
        for secret in secrets_in_force
    )


def in_subject(subject: str) -> str | None:
    """The code of a ``[confirm <code>]`` tag in a subject ("Re: [confirm ...] ...")."""
    match = _SUBJECT.search(subject)
    return match.group(1).lower() if match else None


def subject_tag(code: str) -> str:
    return f"[confirm {code}]"


__all__ = [
    "ADDRESS",
    "BENCH",
    "SERIES",
    "CONFIRM_CODE",
    "JOIN",
    "KINDS",
    "OBSERVE",
    "OFFER",
    "PRACTICE",
    "STOP",
    "VALID_DAYS",
    "Code",
    "in_subject",
    "make",
    "parse",
    "subject_tag",
    "verify",
]
