"""A rendered mail made into its final bytes, with the right headers.

Every outgoing mail carries the headers that keep auto-responders quiet (RFC 3834
``Auto-Submitted``, ``Precedence: bulk``, ``X-Auto-Response-Suppress: All``) and our loop
header, so our own mail coming back is recognised and never answered. Mail of a stream also
carries its list fields (`bot.mail_out.lists`), a turn sheet its deadline as a calendar
object (`bot.mail_out.calendar`), and every mail, when ``[dkim]`` names keys, a DKIM
signature per key (`bot.dkim`), made here so that what is stored is what is sent.
"""

from __future__ import annotations

import binascii
import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email import policy, quoprimime
from email.headerregistry import Address, BaseHeader, HeaderRegistry
from email.message import EmailMessage
from email.utils import format_datetime
from functools import lru_cache
from typing import Any

from bot import dkim
from bot.mail_out.lists import ListHeaders
from bot.mail_out.render import RenderedMail
from bot.settings import Settings

log = logging.getLogger("flagman.mail")


class _MemoRegistry(HeaderRegistry):
    """policy.default's header registry, memoised (performance.md: compose without waste).

    The stdlib builds a new class for every header it parses and re-parses equal values
    (From, Precedence, Content-Type ... are the same in every mail); here each class is built
    once per name, and each short string value or single Address parsed once (a player's To
    and Reply-To recur in every mail to them). Header objects are immutable, so
    sharing them between mails is safe (the bytes are the same: bench/README.md).
    """

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[str, type[BaseHeader]] = {}
        self._values: dict[tuple[str, ...], BaseHeader] = {}
        self.shared: set[int] = set()  # ids of the header objects held in _values

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        cls = self._classes.get(key)
        if cls is None:
            cls = self._classes[key] = super().__getitem__(name)
        return cls

    def __call__(self, name: str, value: object) -> BaseHeader:
        key: tuple[str, ...]
        if type(value) is Address:  # From, To, Reply-To: one address, the same in many mails
            key = (name.lower(), value.display_name, value.username, value.domain)
        elif type(value) is str and len(value) <= 300:
            key = (name.lower(), value)
        else:
            return super().__call__(name, value)
        header = self._values.get(key)
        if header is None or header.name != name:
            if len(self._values) > 512:  # a parsed header with its tree weighs ~14 KB
                self._values.clear()
                self.shared.clear()
                _FOLDED.clear()
            header = self._values[key] = super().__call__(name, value)
            self.shared.add(id(header))
        return header


class _WirePolicy(policy.EmailPolicy):
    """Folds each shared (memoised) header object once: folding is most of as_bytes's cost."""

    def _fold(self, name: str, value: Any, refold_binary: bool = False) -> str:
        if id(value) not in _REGISTRY.shared:
            return str(super()._fold(name, value, refold_binary))  # type: ignore[misc]  # a private hook of email.policy
        entry = _FOLDED.get(id(value))
        if entry is None or entry[0] is not value or entry[1] is not self:
            entry = _FOLDED[id(value)] = (value, self, str(value.fold(policy=self)))
        return entry[2]


_FOLDED: dict[int, tuple[BaseHeader, policy.EmailPolicy, str]] = {}
# Mail is built with the memoised registry, and written with the folding cache.
_REGISTRY = _MemoRegistry()
_BUILD = policy.default.clone(header_factory=_REGISTRY)
# The outbox holds the wire bytes: CRLF line ends (RFC 5322 2.1; smtplib sends bytes as
# they are), headers folded only past 998 characters (the stdlib's folding of shorter
# subjects moves the whole value to a continuation line, which some readers show with a
# leading space).
_POLICY = _WirePolicy(header_factory=_REGISTRY, max_line_length=998, linesep="\r\n")
# A mail to an address with a non-ASCII local part goes out only by SMTPUTF8 (bot.mail_out.smtp
# refuses it otherwise), so its headers are written in UTF-8 (RFC 6532): an encoded word is not
# allowed in an address, and would name another mailbox.
_POLICY_UTF8 = _POLICY.clone(utf8=True)


@dataclass(frozen=True, slots=True)
class Recipient:
    address: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class InlineImage:
    """A picture the HTML part shows as ``<img src="cid:{cid}">`` (RFC 2392), sent in the mail."""

    cid: str  # without the angle brackets
    data: bytes
    filename: str
    subtype: str = "png"


@dataclass(frozen=True, slots=True)
class HtmlBody:
    """The HTML alternative of a mail and the images it shows inline."""

    html: str
    images: tuple[InlineImage, ...] = ()


@dataclass(frozen=True, slots=True)
class CalendarPart:
    """An iCalendar object the mail carries (RFC 6047 iMIP): its METHOD, its text (CRLF lines,
    as `bot.mail_out.calendar.to_ics` writes it) and the file name a client saves it as."""

    method: str  # REQUEST | CANCEL
    ics: str
    filename: str


def _address(recipient: Recipient) -> Address:
    local, _, domain = recipient.address.rpartition("@")
    # Address() encodes the display name (RFC 2047) and refuses CR/LF, so a player's chosen
    # name can never inject a header.
    name = " ".join(recipient.name.split())
    return Address(display_name=name, username=local, domain=domain)


_SIMPLE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@+")
_ENCODED_IMAGES: dict[bytes, str] = {}


def _base64_lines(data: bytes) -> str:
    """`data` in base64, 76-character CRLF lines (as ``base64.encodebytes`` writes them, with
    CRLF); kept by content, since one turn's picture rides in every mail of the turn."""
    found = _ENCODED_IMAGES.get(data)
    if found is None:
        if len(_ENCODED_IMAGES) > 256:
            _ENCODED_IMAGES.clear()
        found = _ENCODED_IMAGES[data] = _base64(data)
    return found


def _base64(data: bytes) -> str:
    """`data` in base64, each 57 octets a 76-character line ending in CRLF, as
    ``base64.encodebytes(data)`` with its line ends made CRLF, written by one call to binascii."""
    encoded = binascii.b2a_base64(data, newline=False).decode("ascii")
    if not encoded:
        return ""
    return "\r\n".join([encoded[i : i + 76] for i in range(0, len(encoded), 76)]) + "\r\n"


def _make_alternative(msg: EmailMessage, html: HtmlBody | None, calendars: tuple[CalendarPart, ...] = ()) -> None:
    """Turn the text-only `msg` into multipart/alternative: its text part as it was, then a
    multipart/related of the HTML and its inline images (RFC 2046, RFC 2387, RFC 2392), then
    the first calendar object; a multipart/mixed around it when there are more (`_body`).

    The body is assembled here rather than by the stdlib generator, which writes line by line
    and re-parses each sub-part's headers: ~6 ms a mail against ~1 ms, at 4,000 mails a
    deadline. Encodings: quoted-printable (binascii, in C) for text and HTML, base64 for
    images and calendar objects.
    """
    text_crlf = str(msg.get_payload()).replace("\r\n", "\n").replace("\n", "\r\n")
    content_type, parts = _body(text_crlf, html, calendars)
    del msg["Content-Type"]
    del msg["Content-Transfer-Encoding"]
    msg["Content-Type"] = content_type
    # A multipart whose payload is a string is written as it is (email.generator).
    msg.set_payload("".join(parts))


_ALTERNATIVE, _RELATED, _MIXED = "=_flagman_alternative_=", "=_flagman_related_=", "=_flagman_mixed_="
_NL = "\r\n"
# The multipart skeleton: fixed boundaries (RFC 2046 5.1.1 only asks that no line of the content
# starts with them, and no quoted-printable or base64 line can start with "--=_"), so each
# delimiter and the headers of the fixed parts are the same text in every mail.
_ALTERNATIVE_TYPE = f'multipart/alternative; boundary="{_ALTERNATIVE}"'
_MIXED_TYPE = f'multipart/mixed; boundary="{_MIXED}"'
_TEXT_PART = (
    f'--{_ALTERNATIVE}{_NL}Content-Type: text/plain; charset="utf-8"{_NL}'
    f"Content-Transfer-Encoding: quoted-printable{_NL}{_NL}"
)
_HTML_PARTS = (
    f'{_NL}--{_ALTERNATIVE}{_NL}Content-Type: multipart/related; boundary="{_RELATED}";{_NL} type="text/html"{_NL}{_NL}'
    f'--{_RELATED}{_NL}Content-Type: text/html; charset="utf-8"{_NL}Content-Transfer-Encoding: quoted-printable{_NL}{_NL}'
)
_RELATED_END = f"{_NL}--{_RELATED}--{_NL}"
_ALTERNATIVE_NEXT, _ALTERNATIVE_END = f"{_NL}--{_ALTERNATIVE}{_NL}", f"{_NL}--{_ALTERNATIVE}--{_NL}"
_MIXED_START = f"--{_MIXED}{_NL}Content-Type: {_ALTERNATIVE_TYPE}{_NL}{_NL}"
_MIXED_NEXT, _MIXED_END = f"{_NL}--{_MIXED}{_NL}", f"{_NL}--{_MIXED}--{_NL}"


def _calendar_entity(calendar: CalendarPart, *, attachment: bool) -> str:
    """One text/calendar body part (RFC 6047 2.4: its METHOD in the Content-Type too), its
    headers and base64 content (the object's CRLF lines kept exactly)."""
    return _calendar_head(calendar.method, calendar.filename, attachment) + _base64(calendar.ics.encode("utf-8"))


@lru_cache(maxsize=256)
def _calendar_head(method: str, filename: str, attachment: bool) -> str:
    """The headers of a text/calendar body part and the blank line after them (`_calendar_entity`)."""
    if not (method.isalpha() and method.isascii() and set(filename) <= _SIMPLE):
        raise ValueError(f"calendar part names must be plain: {method!r}, {filename!r}")
    nl = _NL
    head = (
        f'Content-Type: text/calendar; charset="utf-8"; method={method};{nl} name="{filename}"{nl}'
        f"Content-Transfer-Encoding: base64{nl}"
    )
    if attachment:
        head += f'Content-Disposition: attachment; filename="{filename}"{nl}'
    return head + nl


def _body(text_crlf: str, html: HtmlBody | None, calendars: tuple[CalendarPart, ...]) -> tuple[str, list[str]]:
    """The Content-Type and the body (in pieces, to be joined) of a mail with HTML or calendar
    objects: the alternative (`_alternative_body`), in a multipart/mixed with the other calendar
    objects, attached, when there is more than one. `text_crlf`: the text part's
    quoted-printable payload with CRLF line ends."""
    parts = _alternative_body(text_crlf, html, calendars[0] if calendars else None)
    if len(calendars) <= 1:
        return _ALTERNATIVE_TYPE, parts
    parts = [_MIXED_START, *parts]
    for calendar in calendars[1:]:
        parts += [_MIXED_NEXT, _calendar_entity(calendar, attachment=True)]
    parts.append(_MIXED_END)
    return _MIXED_TYPE, parts


def _alternative_body(text_crlf: str, html: HtmlBody | None, calendar: CalendarPart | None = None) -> list[str]:
    """The body of the multipart/alternative, in pieces: the text part's quoted-printable
    payload, then the multipart/related of the HTML and its images (each picture encoded once,
    `_base64_lines`), then the calendar object, the last alternative as calendar servers put it."""
    parts = [_TEXT_PART, text_crlf]
    if html is not None:
        parts += [_HTML_PARTS, _html_qp_crlf(html.html)]
        for image in html.images:
            parts += [_image_head(image.cid, image.filename, image.subtype), _base64_lines(image.data)]
        parts.append(_RELATED_END)
    if calendar is not None:
        parts += [_ALTERNATIVE_NEXT, _calendar_entity(calendar, attachment=False)]
    parts.append(_ALTERNATIVE_END)
    return parts


@lru_cache(maxsize=1024)
def _image_head(cid: str, filename: str, subtype: str) -> str:
    """The delimiter and headers of an inline image's part, and the blank line after them."""
    if not (set(cid) <= _SIMPLE and set(filename) <= _SIMPLE and subtype.isalnum()):
        raise ValueError(f"inline image names must be plain: {cid!r}, {filename!r}")
    nl = _NL
    return (
        f"{nl}--{_RELATED}{nl}Content-Type: image/{subtype}{nl}Content-Transfer-Encoding: base64{nl}"
        f'Content-Disposition: inline; filename="{filename}"{nl}Content-ID: <{cid}>{nl}{nl}'
    )


# The plain header fast path (bench: deadline). The stdlib parses each header it is given into
# a tree and folds it back; for a header made only of plain ASCII words, short of any
# folding, that gives back "Name: value" with the display name quoted when it holds a
# special. `compose` writes such a mail itself (`_written_plainly`: the headers, and the
# quoted-printable text body as `set_content` encodes it), and leaves every other mail to the
# stdlib (`_written_by_the_stdlib`). tests/e2e/test_bench_smoke.py and tests/bot/mail_out/test_calendar.py
# check that both give the same bytes.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._'-]{0,60}")  # a display name, normalised
_PLAIN_ADDR = re.compile(r"[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_PLAIN_SUBJECT = re.compile(r"[!-~](?:[ -~]{0,400}[!-~])?")
_PLAIN_ID = re.compile(r"<[A-Za-z0-9_+.-]+@[A-Za-z0-9.-]+>")
# RFC 5322 3.6.4's msg-id with dot-atom-text on both sides: an id we quote back in In-Reply-To
# must be one (a mangled id, ':' or spaces in it, is not echoed into our header at all).
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_MSG_ID = re.compile(rf"<{_ATEXT}(?:\.{_ATEXT})*@{_ATEXT}(?:\.{_ATEXT})*>")
_PLAIN_FIELD = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,60}")
_PLAIN_LIST = re.compile(r"<[!-;=?-~]{1,300}>")  # a List-Id or a mailto URL in angle brackets, no space
_SPECIALS = frozenset('()<>@,:;."[]')


@lru_cache(maxsize=16)
def _plain_sender(name: str, address: str, loop_header: str) -> str | None:
    """The From field's value (`_plain_mailbox`), or None when it, the bot's address or its loop
    header is not plain."""
    if not _PLAIN_FIELD.fullmatch(loop_header) or not _PLAIN_ADDR.fullmatch(address):
        return None
    return _plain_mailbox(name, address)


@lru_cache(maxsize=4096)
def _plain_mailbox(name: str, address: str) -> str | None:
    """An address header's value as the stdlib writes it, or None when it is not plain (made once
    for a name and an address: each player is mailed every turn)."""
    if not _PLAIN_ADDR.fullmatch(address):
        return None
    if not name:
        return address
    if not _PLAIN_NAME.fullmatch(name) or "  " in name or name.endswith(" "):
        return None
    return (f'"{name}"' if not _SPECIALS.isdisjoint(name) else name) + f" <{address}>"


def _date(now: datetime) -> str:
    """The Date field's value (RFC 5322 3.3), made once for the mails of one moment (by its
    offset too: equal moments in two zones are written apart)."""
    return _date_in(now, now.utcoffset())


@lru_cache(maxsize=16)
def _date_in(now: datetime, offset: timedelta | None) -> str:
    return format_datetime(now)


def _plain_head(
    settings: Settings,
    now: datetime,
    message_id: str,
    to: Recipient,
    subject: str,
    reply_to: str | None,
    in_reply_to: str,
    auto_replied: bool,
    lists: ListHeaders | None = None,
) -> list[str] | None:
    """The header lines up to the MIME ones, as the stdlib would write them; None if any is not plain."""
    bot = settings.bot
    sender = _plain_sender(bot.name, bot.address, bot.loop_header)
    recipient = _plain_mailbox(" ".join(to.name.split()), to.address)
    if (
        sender is None
        or recipient is None
        or not _PLAIN_SUBJECT.fullmatch(subject)
        or "=?" in subject
        or "  " in subject
    ):
        return None
    lines = [
        f"From: {sender}",
        f"To: {recipient}",
        f"Subject: {subject}",
        f"Date: {_date(now)}",
        f"Message-ID: {message_id}",
    ]
    if reply_to:
        answer = _plain_mailbox(bot.name, reply_to)
        if answer is None:
            return None
        lines.append(f"Reply-To: {answer}")
    if in_reply_to and in_reply_to.isprintable() and in_reply_to.isascii() and "=?" not in in_reply_to:
        if not _PLAIN_ID.fullmatch(in_reply_to):
            return None
        lines += [f"In-Reply-To: {in_reply_to}", f"References: {in_reply_to}"]
    lines += [
        f"Auto-Submitted: {'auto-replied' if auto_replied else 'auto-generated'}",
        "Precedence: bulk",
        "X-Auto-Response-Suppress: All",
        f"{bot.loop_header}: {bot.address}",
    ]
    if lists is not None:
        fields = [("List-Id", lists.list_id)] + ([("List-Unsubscribe", lists.unsubscribe)] if lists.unsubscribe else [])
        for name, value in fields:
            if not _PLAIN_LIST.fullmatch(value):
                return None
            lines.append(f"{name}: {value}")
    return lines


# Quoted-printable in a body (RFC 2045 6.7, as quoprimime writes it): every octet but the printable
# ones other than "=", the tab and the line ends, as "=XX".
_QP_QUOTED = {c: f"={c:02X}" for c in range(256) if not (32 <= c <= 126 and c != 61) and c not in (9, 10, 13)}
_QP_WIDTH = _BUILD.max_line_length or 78
# A line that quoprimime does more with than quote its octets: wider than a line may be, or ending in a blank.
_QP_MORE = re.compile(rf"^(?:.{{{_QP_WIDTH + 1},}}|.*[ \t])$", re.M)


def _text_qp_crlf(body: str) -> str:
    """The text part's quoted-printable payload, as ``set_content(body, cte="quoted-printable")``
    makes it (email.contentmanager._encode_text), with CRLF line ends, as the mail carries it:
    the text's line ends made one "\\n" (those ``bytes.splitlines`` knows: LF, CR, CRLF),
    ending in one, each line encoded on its own by quoprimime (`_qp_lines`), and its blocks
    kept by their text, each encoded from its octets when not found (`_text_block_crlf`): a
    block of lines the letters of a turn share is encoded once (`_by_blocks`)."""
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    if not body.endswith("\n"):
        body += "\n"
    return _by_blocks(body, _text_block_crlf, "text-crlf")


def _text_block_crlf(block: str) -> str:
    """A block of the text (whole lines) quoted-printable from its UTF-8 octets, with CRLF line ends."""
    return _qp_lines(block.encode("utf-8").decode("latin-1")).replace("\n", "\r\n")


def _qp_lines(raw: str) -> str:
    """Whole lines (`raw`: octets as latin-1, each line ending in "\\n") as quoprimime encodes
    them, a line at a time, keeping nothing from one line to the next: their octets are quoted
    at once, and only the lines it does more with (`_QP_MORE`: a soft line break, a blank at
    the end) are encoded by quoprimime."""
    encoded = raw.translate(_QP_QUOTED)
    more = list(_QP_MORE.finditer(encoded))
    if not more:
        return encoded
    lines, originals = encoded.split("\n"), raw.split("\n")
    for found in more:
        i = encoded.count("\n", 0, found.start())
        lines[i] = str(quoprimime.body_encode(originals[i], _QP_WIDTH))
    return "\n".join(lines)


def _html_qp(html: str) -> str:
    """The HTML part's quoted-printable payload (LF line ends), exactly as ``binascii.b2a_qp``
    encodes the whole text with its line ends made "\\n", a block at a time (`_by_blocks`).
    b2a_qp works a line at a time but for the end of its input (a blank or a lone "." there
    is quoted) and the line end it writes (CRLF when its input's first line ends in one): a
    block ends in a line end, and a text with a CRLF left in it ("\\r\\r\\n") is encoded whole."""
    if "\r" in html:
        text = html.replace("\r\n", "\n")
        if "\r\n" in text:
            return _b2a_qp(text)
        html = text
    return _by_blocks(html, _b2a_qp, "html")


def _html_qp_crlf(html: str) -> str:
    """`_html_qp(html)` with its line ends "\\n" made CRLF, as the mail carries it (its blocks kept so)."""
    if "\r" in html:
        return _html_qp(html).replace("\n", "\r\n")
    return _by_blocks(html, _b2a_qp_crlf, "html-crlf")


def _b2a_qp(text: str) -> str:
    return binascii.b2a_qp(text.encode("utf-8"), istext=True).decode("ascii")


def _b2a_qp_crlf(text: str) -> str:
    return _b2a_qp(text).replace("\n", "\r\n")


# Blocks of text (between blank lines) encoded once a process, by their encoding and their text:
# the letters of a turn share most of theirs (the report, the dice, the sign-off). A block not
# found is encoded a line at a time, each line's encoding kept too: a seat's own block differs
# from the other seats' in a few lines. A table is emptied when it holds its most: the text and
# the HTML part 2,048 blocks each (as many as all blocks before lines were kept), 8,192 lines.
_ENCODED: dict[str, dict[str, str]] = {}
_BLOCKS_MOST, _LINES_MOST = 2048, 8192


def _kept(name: str) -> dict[str, str]:
    """The table of the encodings called `name`."""
    table = _ENCODED.get(name)
    if table is None:
        table = _ENCODED[name] = {}
    return table


def _keep(table: dict[str, str], most: int, key: str, encoded: str) -> str:
    """`encoded`, kept in `table` under `key`; the table emptied first when it holds `most`."""
    if len(table) >= most:
        table.clear()
    table[key] = encoded
    return encoded


def _by_blocks(text: str, encode: Callable[[str], str], name: str) -> str:
    """`encode(text)` for an `encode` that works a line at a time, keeping nothing from one
    line to the next but at the end of its input: `text` in blocks each ending in a blank
    line (the last as it is), each block's encoding kept (by the block without its blank line;
    the last apart) or made (`_by_lines`)."""
    *blocks, last = text.split("\n\n")
    table = _kept(name)
    out: list[str] = []
    for block in blocks:
        found = table.get(block)
        if found is None:
            found = _keep(table, _BLOCKS_MOST, block, _by_lines(block + "\n\n", encode, name))
        out.append(found)
    if last:  # the end of the text: kept apart, its encoding may differ at the end of the input
        ends = _kept(name + " ends")
        found = ends.get(last)
        if found is None:
            found = _keep(ends, _BLOCKS_MOST, last, _by_lines(last, encode, name))
        out.append(found)
    return "".join(out)


def _by_lines(block: str, encode: Callable[[str], str], name: str) -> str:
    """`encode(block)` (as `_by_blocks`) a line at a time, each line's encoding kept (by the line
    without its line end) or made; the last piece, when it has no line end, kept apart."""
    *lines, last = block.split("\n")
    table = _kept(name + " lines")
    out: list[str] = []
    for line in lines:
        found = table.get(line)
        if found is None:
            found = _keep(table, _LINES_MOST, line, encode(line + "\n"))
        out.append(found)
    if last:
        ends = _kept(name + " line ends")
        found = ends.get(last)
        if found is None:
            found = _keep(ends, _LINES_MOST, last, encode(last))
        out.append(found)
    return "".join(out)


def compose(
    settings: Settings,
    now: datetime,
    *,
    kind: str,
    to: Recipient,
    rendered: RenderedMail,
    reply_to: str | None = None,
    in_reply_to: str = "",
    auto_replied: bool = False,
    html: HtmlBody | None = None,
    lists: ListHeaders | None = None,
    calendars: tuple[CalendarPart, ...] = (),
) -> tuple[str, str, bytes]:
    """(Message-ID, VERP envelope sender, bytes) of one mail.

    With `html`, the mail is multipart/alternative: the plain text first (what text-only
    readers and our own reply parser use), then the HTML in a multipart/related with its
    inline images. With `calendars`, the first is the last alternative, the others are
    attached in a multipart/mixed around it. Without either, the mail is the single text part
    it always was. `lists`: its List-Id and List-Unsubscribe. With [dkim] keys, signed.
    """
    token = f"{kind}-{secrets.token_hex(8)}"
    domain = settings.bot.domain
    message_id = f"<{token}@{domain}>"
    envelope_from = f"{settings.bot.local_part}+bounce-{token}@{domain}"
    subject = " ".join(rendered.subject.split())
    head = _plain_head(settings, now, message_id, to, subject, reply_to, in_reply_to, auto_replied, lists)
    data = (
        _written_plainly(head, rendered, html, calendars)
        if head is not None
        else _written_by_the_stdlib(
            settings,
            now,
            message_id,
            to,
            subject,
            rendered,
            reply_to,
            in_reply_to,
            auto_replied,
            html,
            lists,
            calendars,
        )
    )
    return message_id, envelope_from, _signed(settings, data)


def _written_plainly(
    head: list[str], rendered: RenderedMail, html: HtmlBody | None, calendars: tuple[CalendarPart, ...]
) -> bytes:
    """A mail whose headers are all plain (`_plain_head`), written as the stdlib would write it."""
    text_crlf = _text_qp_crlf(rendered.body)  # every line end as CRLF, as Generator._write_lines writes them
    if html is None and not calendars:
        head += _TEXT_ONLY_HEAD
        parts = [text_crlf]
    else:
        content_type, parts = _body(text_crlf, html, calendars)
        head += ["MIME-Version: 1.0", f"Content-Type: {content_type}"]
    return "".join(["\r\n".join(head), "\r\n\r\n", *parts]).encode("ascii")


_TEXT_ONLY_HEAD = [
    'Content-Type: text/plain; charset="utf-8"',
    "Content-Transfer-Encoding: quoted-printable",
    "MIME-Version: 1.0",
]


def _written_by_the_stdlib(
    settings: Settings,
    now: datetime,
    message_id: str,
    to: Recipient,
    subject: str,
    rendered: RenderedMail,
    reply_to: str | None,
    in_reply_to: str,
    auto_replied: bool,
    html: HtmlBody | None,
    lists: ListHeaders | None,
    calendars: tuple[CalendarPart, ...],
) -> bytes:
    """Any mail, written by the stdlib's email package (names, subjects and addresses that need
    encoding or folding)."""
    msg = EmailMessage(policy=_BUILD)
    msg["From"] = Address(display_name=settings.bot.name, addr_spec=settings.bot.address)
    msg["To"] = _address(to)
    msg["Subject"] = subject
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id
    if reply_to:
        msg["Reply-To"] = Address(display_name=settings.bot.name, addr_spec=reply_to)
    if in_reply_to and _MSG_ID.fullmatch(in_reply_to) and "=?" not in in_reply_to:
        # A second line of defence (bot.mail_in.parse already sanitises Message-IDs): a quoted-back
        # id must never carry a line break, an encoded word or anything but a msg-id into our headers.
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg["Auto-Submitted"] = "auto-replied" if auto_replied else "auto-generated"
    msg["Precedence"] = "bulk"
    msg["X-Auto-Response-Suppress"] = "All"
    msg[settings.bot.loop_header] = settings.bot.address
    if lists is not None:
        msg["List-Id"] = lists.list_id
        if lists.unsubscribe:
            msg["List-Unsubscribe"] = lists.unsubscribe
    msg.set_content(rendered.body, charset="utf-8", cte="quoted-printable")
    if html is not None or calendars:
        _make_alternative(msg, html, calendars)
    # The body was encoded (quoted-printable, 76-character lines) by set_content above; the
    # serialising policy only decides how headers are folded.
    return msg.as_bytes(policy=_POLICY if to.address.isascii() else _POLICY_UTF8)


def _signed(settings: Settings, data: bytes) -> bytes:
    """`data` with a DKIM signature per configured key (none: `data` as it is, byte for byte)."""
    if not settings.secrets.dkim_keys:
        return data
    return dkim.sign(data, signing_domain(settings), dkim.keys_of(settings.secrets.dkim_keys))


def signing_domain(settings: Settings) -> str:
    """The d= of our signatures: [dkim] domain, else the domain of the bot's address."""
    return (settings.dkim.domain or settings.bot.domain).strip(".").lower()
