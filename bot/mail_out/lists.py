"""List headers: ``List-Id`` on the mail that is not an answer to its reader, and
``List-Unsubscribe`` on the streams a reader may stop by mail.

Mail a reader did not ask for by their own action -- turn sheets, results, reminders, the GM's
digest, observer copies, announcements -- comes in streams, and mail providers treat a stream
that names itself (RFC 2919 ``List-Id``) and offers a way out (RFC 2369
``List-Unsubscribe``) better than one that does not. The streams:

* each game is one list, ``<rc1.flagman.example.org>`` (the game, the bot's local part, its
  domain: a namespace only the operator of that domain can claim);
* the GM's daily digest is a list of its own, ``<digest.flagman.example.org>``.

``List-Unsubscribe`` is a ``mailto:`` to the bot's own address with the stream's code in the
subject (``unsubscribe r.rc1.kelly.<mac>``): Flagman has no web server, so there is no HTTPS
one-click (RFC 8058), and nothing is ever changed by fetching a link. The code is a truncated
HMAC under the site secret (as `bot.mail_in.auth` signs reply addresses) of exactly one
stream -- game, recipient and kind -- and the mail that brings it back stops that stream and
no other (`bot.commands.streams`):

    r.<game>.<seat>.<mac>   the reminders of one seat, for the player holding it now (the
                            MAC covers the player and the seat's reply salt: once the seat
                            changes hands, the old holder's code stands for nothing)
    o.<game>.<mac>          the results one observer address gets of one game (the MAC
                            covers the address)

Only observer copies and reminders carry one; the others are what a player or GM
cannot do without. Pure: the secret is given.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

REMINDERS = "r"
OBSERVER = "o"

# Mail of a game's stream (the kinds `bot.letters.post` is given); answers are never listed.
GAME_STREAMS = frozenset(
    {
        "turn_sheet",
        "turn_sheet_gm",
        "results",
        "results_gm",
        "final",
        "final_gm",
        "reminder",
        "observer",
        "announce",
        "extend",
        "deadline",
        "pause",
        "resume",
        "rollback",
    }
)
DIGEST = "digest"

_NAME = r"[a-z0-9][a-z0-9_-]{0,29}"
UNSUBSCRIBE_CODE = re.compile(rf"(?:{REMINDERS}\.{_NAME}\.{_NAME}|{OBSERVER}\.{_NAME})\.[a-z2-7]{{16}}")
_SUBJECT = re.compile(r"\bunsubscribe\s+(" + UNSUBSCRIBE_CODE.pattern + r")(?![a-z0-9_.-])", re.I)
_LABEL = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class ListHeaders:
    """The list fields of one mail: ``List-Id`` and, for a stream one may stop, ``List-Unsubscribe``."""

    list_id: str
    unsubscribe: str = ""


@dataclass(frozen=True, slots=True)
class Stream:
    """A stream as an unsubscribe code names it, not yet verified: its kind, game and (for
    reminders) seat."""

    kind: str
    game: str
    seat: str
    mac: str


def _label(text: str) -> str:
    return _LABEL.sub("-", text.lower()).strip("-") or "flagman"


@functools.lru_cache(maxsize=1024)
def list_id(bot_address: str, stream: str) -> str:
    """``<stream.local.domain>`` (RFC 2919 2: a list-label in a namespace the domain owns); made
    once for a stream, whose every mail carries it."""
    local, _, domain = bot_address.lower().rpartition("@")
    return f"<{_label(stream)}.{_label(local)}.{domain.strip('.')}>"


def _mac(secret: str, kind: str, game: str, seat: str, bound: Sequence[str]) -> str:
    message = "\x00".join(("flagman-unsubscribe", kind, game, seat, *(b.strip().lower() for b in bound)))
    digest = hmac.new(secret.encode(), message.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii")[:16].lower()


def reminders_code(secret: str, game: str, seat: str, player_id: int, reply_salt: str) -> str:
    """The code that stops the reminders of `seat` in `game` for player `player_id`."""
    return f"{REMINDERS}.{game}.{seat}.{_mac(secret, REMINDERS, game, seat, (str(player_id), reply_salt))}"


def observer_code(secret: str, game: str, address: str) -> str:
    """The code that stops the results of `game` to the observer `address`."""
    return f"{OBSERVER}.{game}.{_mac(secret, OBSERVER, game, '', (address,))}"


def parse_code(text: str) -> Stream | None:
    """The stream a code names (from an UNSUBSCRIBE line or a subject), or None."""
    text = text.strip().lower()
    if not UNSUBSCRIBE_CODE.fullmatch(text):
        return None
    parts = text.split(".")
    if parts[0] == REMINDERS:
        return Stream(REMINDERS, parts[1], parts[2], parts[3])
    return Stream(OBSERVER, parts[1], "", parts[2])


def reminders_code_stands(stream: Stream, secrets_in_force: Sequence[str], player_id: int, reply_salt: str) -> bool:
    return stream.kind == REMINDERS and any(
        secret
        and hmac.compare_digest(
            _mac(secret, REMINDERS, stream.game, stream.seat, (str(player_id), reply_salt)), stream.mac
        )
        for secret in secrets_in_force
    )


def observer_code_stands(stream: Stream, secrets_in_force: Sequence[str], address: str) -> bool:
    return stream.kind == OBSERVER and any(
        secret and hmac.compare_digest(_mac(secret, OBSERVER, stream.game, "", (address,)), stream.mac)
        for secret in secrets_in_force
    )


def code_in_subject(subject: str) -> str | None:
    """The code of an ``unsubscribe <code>`` in a subject (``Re:`` and the like around it)."""
    match = _SUBJECT.search(subject)
    return match.group(1).lower() if match else None


def unsubscribe_subject(code: str) -> str:
    return f"unsubscribe {code}"


def mailto_link(address: str, subject: str) -> str:
    """A ``mailto:`` URL (RFC 6068) to `address` with `subject`, everything but the unreserved
    characters percent-encoded UTF-8: a space as ``%20`` and a plus (the signed reply
    address's ``flagman+rc1...``) as ``%2B``, since clients that read a mailto as a web form
    would turn a bare ``+`` into a space (RFC 6068 2 allows both spellings; the encoded one
    reads the same everywhere)."""
    return _mailto_prefix(address) + _quoted(subject)


@functools.lru_cache(maxsize=4096)
def _mailto_prefix(address: str) -> str:
    """``mailto:<address>?subject=``, the address percent-encoded (`mailto_link`): made once for
    an address, since a seat's one-tap links all go to its own reply address."""
    local, _, domain = address.rpartition("@")
    return f"mailto:{_quoted(local)}@{_quoted(domain)}?subject="


@functools.lru_cache(maxsize=4096)
def _quoted(text: str) -> str:
    """`text` percent-encoded, everything but the unreserved characters (`mailto_link`): kept,
    since a seat's one-tap links quote its address and the same few orders again and again."""
    return urllib.parse.quote(text, safe="")


def unsubscribe_header(bot_address: str, code: str) -> str:
    """The ``List-Unsubscribe`` value: a mailto to the bot's plain address (RFC 2369 3.2)."""
    return f"<{mailto_link(bot_address, unsubscribe_subject(code))}>"


__all__ = [
    "DIGEST",
    "GAME_STREAMS",
    "OBSERVER",
    "REMINDERS",
    "UNSUBSCRIBE_CODE",
    "ListHeaders",
    "Stream",
    "code_in_subject",
    "list_id",
    "mailto_link",
    "observer_code",
    "observer_code_stands",
    "parse_code",
    "reminders_code",
    "reminders_code_stands",
    "unsubscribe_header",
    "unsubscribe_subject",
]
