"""Raw mail bytes -> an `Inbound`: who sent it, to which address, and the text of the orders.

Pure: no I/O, no clock. The pipeline is the one shared/design/testing.md ("What real mail looks
like") found clean on every synthetic case:

1. stdlib `email` with `policy.default` (its header registry memoised: the same parsing,
   five times faster; each part's fields looked up by name in an index made once);
   `get_body(('plain', 'html'))`, decoded leniently (declared charset, else UTF-8, else
   Latin-1; a Latin-1 label read as windows-1252, or as the UTF-8 it carries) so that no charset ever stops a mail; a broken RFC 2047 word spoils only
   itself; a Content-Transfer-Encoding the stdlib does not recognise ("quoted printable")
   read for the encoding it names; format=flowed soft breaks joined (RFC 3676); an inline
   PGP signature's armour and signature block removed (RFC 4880, 7);
2. HTML-only mail: the quote containers (blockquote, gmail_quote, moz-cite-prefix, Outlook's
   divRplyFwdMsg / border-top header block / <hr>) are removed from the tree first, then
   `inscriptis` renders the rest as text;
3. an explicit ``ORDERS`` ... ``END`` block, when present, is all that counts
   (mail-interface.md, "Subject and body"); it is looked for before quote stripping, but
   not in ``>`` lines nor inside a quoted message without ``>`` (Outlook);
4. otherwise a line filter drops ``>`` lines, attribution lines ("On ... wrote:", "Am ...
   schrieb ...:", "Le ... a écrit :", Outlook's From/Sent block, "-----Original Message-----",
   underscore rules) and what follows them, and cuts at ``-- `` and "Sent from my ..." style
   signatures. An attribution that is followed by ``>`` lines only removes itself: the
   ``>`` lines go anyway, and text after the quote is the reply of a bottom-poster or an
   interleaved answer, so it is kept.

`quotequail` was tried and is not used: it treats everything after the first quote as quoted,
which loses bottom-posted and interleaved orders.

The ignore policy (mail-interface.md, "Mail that is never answered") is decided here from
the headers alone: bounces, auto-replies (RFC 3834), bulk mail, our loop header, our own
mail, mail without a sender, and bytes that are not a mail.

`parse_inbound` never raises: the stdlib parser has no closed set of exceptions (IndexError,
RecursionError, LookupError, ... on hostile input), so every failure becomes either
``IgnoreReason.UNPARSEABLE`` or a best-effort `Inbound` whose `defects` say what was lost.

Hostile headers cost a bounded, linear amount (SECURITY.md, "Limits"). A stranger's
2 MB of Authentication-Results, 140,000 Cc addresses or a 100,000-character encoded name once
held the poll for minutes; now what is read of the header section is capped:

* the header section: the first ``MAX_HEADER_BYTES`` (256 KiB) and the first
  ``MAX_HEADER_FIELDS`` (1,000) fields; the rest is never parsed (a defect says so, and a
  Content-Type cut away leaves the body read as plain text);
* any one value: its first ``_MAX_HEADER_CHARS`` (16,000) characters, whitespace folded;
* Authentication-Results: the first ``MAX_AUTH_RESULTS`` (5) fields, topmost first (only the
  topmost one can count, bot.mail_in.auth), each parsed in linear time;
* To, Cc, Delivered-To, X-Original-To (read only to find the bot's plus-address): the first
  ``MAX_RECIPIENT_FIELDS`` (10) fields of each name, at most ``MAX_ADDRESSES_PER_FIELD`` (100)
  addresses of each, a cheap scan instead of the stdlib's address parser for long values;
* From: a value longer than ``_MAX_HEADER_CHARS`` is no usable sender (cutting it could leave
  an address out of the display name); more than one From field, or a From with more than one
  mailbox, is ``IgnoreReason.AMBIGUOUS_SENDER``: the receiving server may have checked
  another one than we would read, so it authenticates no one and is never answered;
* Subject and the From display name: at most ``_MAX_DECODE_CHARS`` (4,000) characters are
  decoded (RFC 2047), and the result passes through `bot.safe_text` (mail-interface.md, "Text
  taken from a mail and shown anywhere ... is one line, without control or bidi characters,
  and capped in length"): one printable line of at most 200 (subject) / 60 (name)
  characters. Header text quoted in ``Ignore`` (why a mail is ignored) is echoed the same way.
"""

from __future__ import annotations

import binascii
import codecs
import enum
import functools
import hashlib
import html
import itertools
import quopri
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from email import policy
from email.errors import MessageError
from email.header import decode_header
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import getaddresses
from typing import Any

import lxml.etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]
from inscriptis import Inscriptis  # type: ignore[import-untyped]

from bot.mail_in.addresses import PLAIN_ADDRESS, is_address
from bot.safe_text import echo, echo_name


class IgnoreReason(enum.Enum):
    """Why a mail must never be answered (mail-interface.md, "Mail that is never answered")."""

    BOUNCE = "bounce"
    AUTO_REPLY = "auto-reply"
    BULK = "bulk"
    LOOP = "loop"  # carries our loop header
    OWN_MAIL = "own mail"  # From is the bot's own address
    NO_SENDER = "no sender"  # no usable From address
    AMBIGUOUS_SENDER = "several senders"  # more than one From field, or mailbox in it
    UNPARSEABLE = "unparseable"  # not a mail at all
    # A calendar client's answer to the deadline invitations (iTIP REPLY, COUNTER or REFRESH,
    # RFC 5546 3.2): sent when a player accepts or declines the event, never orders.
    CALENDAR_REPLY = "calendar reply"


class IgnoreWhy(enum.Enum):
    """What in a mail decided the ignore policy's verdict (`Ignore`): its words are the
    letters' (``templates/_common/words/ignore_detail.txt``)."""

    LOOP = "loop"  # our loop header (`header`), its `value`, and whether the value is `ours`
    OWN_FROM = "own_from"  # the From (`value`) is one of the bot's own addresses
    HEADER = "header"  # a header field (`header`) whose `value` says what the mail is
    NULL_RETURN_PATH = "null_return_path"  # Return-Path: <>
    SEVERAL_FROMS = "several_froms"  # `count` From fields, the first `addresses`, `more` of them
    SEVERAL_MAILBOXES = "several_mailboxes"  # one From with several mailboxes (`addresses`, `more`)
    LONG_FROM = "long_from"  # a From field of `count` characters, not read
    LONG_ADDRESS = "long_address"  # a From address longer than RFC 5321 allows
    NO_FROM = "no_from"  # no usable From address
    PARSER_FAILED = "parser_failed"  # the parser failed: `value` names the exception
    NO_HEADERS = "no_headers"  # no header fields: not a mail
    MIME_UNREADABLE = "mime_unreadable"  # the MIME structure could not be read: `value` names why
    CALENDAR = "calendar"  # a calendar client's answer: its iTIP method (`value`)


@dataclass(frozen=True, slots=True)
class Ignore:
    """Why the ignore policy passed a mail by (its `IgnoreReason` is `Inbound.ignore`): what
    decided it and the header text quoted (`value`, `addresses`: made safe by
    bot.safe_text.echo where they come from the mail, or quoted whole inside one echoed line)."""

    why: IgnoreWhy
    header: str = ""
    value: str = ""
    count: int = 0
    addresses: tuple[str, ...] = ()
    more: bool = False
    ours: bool = False


@dataclass(frozen=True, slots=True)
class AuthResult:
    """One `Authentication-Results` header (RFC 8601), topmost first."""

    authserv_id: str
    dmarc: str | None  # "pass", "fail", ... or None when absent
    dkim_pass_domains: tuple[str, ...]  # d= (header.d / header.i domain) of each dkim=pass
    spf: str | None
    # The header.from of that dmarc result: the From domain the server checked (lower-cased,
    # no trailing dot), None when absent. dmarc=pass counts only for this domain (bot.mail_in.auth).
    dmarc_from: str | None = None


@dataclass(frozen=True, slots=True)
class Inbound:
    message_id: str  # as sent (angle brackets stripped); a synthetic "<sha256>@flagman.invalid" if missing
    content_hash: str  # sha256 hex of the raw bytes
    sender: str  # From address, lower-cased ("" if none, or if the From is ambiguous)
    sender_name: str  # display name, decoded, then bot.safe_text.echo_name: one printable line, capped
    recipients: tuple[str, ...]  # To, Cc, Delivered-To, X-Original-To addresses, lower-cased (capped)
    subject: str  # decoded, then bot.safe_text.echo: one printable line of at most 200 characters
    text: str  # the text of the orders: decoded, HTML converted, quotes/signatures stripped; ORDERS..END block only if present
    in_reply_to: str
    references: tuple[str, ...]
    auth_results: tuple[AuthResult, ...]
    ignore: IgnoreReason | None
    ignore_why: Ignore | None  # what decided `ignore` (its words: bot.letters.records.ignore_detail)
    size: int  # raw size in bytes
    truncated: bool  # the text was cut at the line cap
    # The sender's own words (quotes and signatures stripped) even when an ORDERS..END block
    # narrowed `text` to the block: a PASSWORD line or a command written outside the block.
    reply_text: str = ""
    # What could not be read and was skipped (undecodable body, HTML too large, ...): for the log.
    defects: tuple[str, ...] = ()
    # The local part of the From address as written, its case kept ("" without a usable From):
    # what names a person whose From gives no display name.
    sender_local: str = ""


# --- limits ---------------------------------------------------------------------------------

# HTML is rendered by inscriptis at roughly 3 MB/s; orders are at the top of a mail, so a
# larger HTML body is cut (and `truncated` set) rather than stalling the poll.
MAX_HTML_CHARS = 400_000
# Header values longer than this are not real headers; parsing them fully buys nothing.
_MAX_HEADER_CHARS = 16_000
# The header section looked at: real mail has well under 100 fields and 64 KiB
# (long Received chains, DKIM and ARC included); what lies beyond these is never parsed.
MAX_HEADER_BYTES = 256 * 1024
MAX_HEADER_FIELDS = 1000
# Only the topmost Authentication-Results can count (bot.mail_in.auth.authentication_passes).
MAX_AUTH_RESULTS = 5
# Recipient fields are read only to find the bot's plus-address.
MAX_RECIPIENT_FIELDS = 10  # of each of To, Cc, Delivered-To, X-Original-To
MAX_ADDRESSES_PER_FIELD = 100
# Longer values are scanned with a regular expression rather than email.utils.getaddresses.
_MAX_ADDRESS_PARSE_CHARS = 2_000
# A Subject or display name is decoded (RFC 2047) from at most this much of its value; enough
# for bot.safe_text's 200 characters of CJK text in quoted-printable words.
_MAX_DECODE_CHARS = 4_000
# A Message-ID longer than the line limit of RFC 5322 is replaced by the synthetic one.
_MAX_MESSAGE_ID = 995
# Lines longer than this are never an attribution, a header block or a signature.
_MAX_MARKER_LINE = 1000
# Parts looked at when get_body() finds nothing (a bound against hostile nesting).
_MAX_PARTS = 200

_SYNTHETIC_DOMAIN = "flagman.invalid"
# A Message-ID we may quote back: printable ASCII, no space or angle bracket, no encoded word.
_MESSAGE_ID_RE = re.compile(r"(?!.*=\?)[!-;=?-~]+")


# What the stdlib parser and lxml raise on hostile input, as far as it has been seen; anything
# else still ends in parse_inbound's last-resort handler.
_PARSE_ERRORS = (
    RecursionError,
    LookupError,
    ValueError,
    TypeError,
    AttributeError,
    MessageError,
    lxml.etree.LxmlError,
)


class _MemoHeaderRegistry(HeaderRegistry):
    """policy.default's header registry, memoised.

    `get_body` and the feed parser ask for a part's Content-Type many times, and policy.default
    re-parses the header on every access; that parsing was two thirds of the time per mail.
    Header objects are immutable strings, so sharing them is safe. Long values bypass the memo.
    """

    def __init__(self) -> None:
        super().__init__()
        self._memo = functools.lru_cache(maxsize=2048)(super().__call__)

    def __call__(self, name: str, value: str) -> BaseHeader:
        if len(value) > 300:
            return super().__call__(name, value)
        header: BaseHeader = self._memo(name, value)
        return header


class _CappedMessage(EmailMessage):
    """An EmailMessage (and MIME part) that keeps only its first MAX_HEADER_FIELDS fields.

    The feed parser stores each field with `set_raw`; `get` indexes all of them (once for the
    fields as they are: `_known`), and get_body asks a part for its Content-Type and
    Content-Disposition many times, so a part of 100,000 fields inside the body would cost a
    quarter of a second. The top level's header section is cut before parsing
    (`cap_header_section`); this bounds the parts.
    """

    # The index `get` reads: the list of fields it was made from and its length then, each
    # lower-cased name's first field, and what was worked out from them so far (`_known`).
    _index: tuple[list[tuple[str, str]], int, dict[str, tuple[str, str]], dict[object, object]] | None = None

    def set_raw(self, name: str, value: str) -> None:
        if len(self) < MAX_HEADER_FIELDS:
            super().set_raw(name, value)

    def _known(self) -> tuple[dict[str, tuple[str, str]], dict[object, object]]:
        """Each lower-cased name's first field, and what was worked out from the fields as they
        are now (emptied whenever they change). The index is made afresh whenever the fields
        are not those it was made from: another list (`__delitem__`, `set_boundary` and the
        multipart makers replace it), another length (a field added) or a field replaced in
        place (`replace_header`, which drops it)."""
        headers: list[tuple[str, str]] = self._headers  # type: ignore[attr-defined]  # the stdlib's own list
        index = self._index
        if index is None or index[0] is not headers or index[1] != len(headers):
            first: dict[str, tuple[str, str]] = {}
            for field, value in headers:
                first.setdefault(field.lower(), (field, value))
            index = self._index = (headers, len(headers), first, {})
        return index[2], index[3]

    def get(self, name: str, failobj: Any = None) -> Any:
        """`Message.get`, each field's value fetched once: the feed parser, `get_body` and this
        module ask a part for its Content-Type a dozen times, and the stdlib walks every field
        (lower-casing each name) and parses the value again each time."""
        first, known = self._known()
        key = name.lower()
        fetched = known.get(key, _MISSING)
        if fetched is _MISSING:
            found = first.get(key)
            fetched = known[key] = None if found is None else self.policy.header_fetch_parse(*found)
        return failobj if fetched is None else fetched

    def get_content_type(self) -> str:
        """`Message.get_content_type`, worked out once for the fields as they are and the
        default type (which a multipart/digest sets on its parts)."""
        _, known = self._known()
        key = ("content type", self.get_default_type())
        found = known.get(key)
        if not isinstance(found, str):
            found = known[key] = super().get_content_type()
        return found

    def replace_header(self, _name: str, _value: Any) -> None:
        self._index = None
        super().replace_header(_name, _value)


_MISSING = object()


# policy.default with the memoised registry: the same parsing, done once per distinct value.
_POLICY = policy.default.clone(header_factory=_MemoHeaderRegistry(), message_factory=_CappedMessage)


# --- small text helpers ---------------------------------------------------------------------


def _unsurrogate(text: str) -> str:
    """8-bit header bytes reach us as surrogate escapes; read them as UTF-8, else Latin-1."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape") if _escapes_only(text) else None
        if raw is None:
            return text.encode("utf-8", "replace").decode("utf-8")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")
    return text


def _escapes_only(text: str) -> bool:
    return all(not ("\ud800" <= ch <= "\udfff") or "\udc80" <= ch <= "\udcff" for ch in text)


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Bytes in a declared charset, leniently (never raises).

    The declared charset, else UTF-8 (the usual mislabel); if neither decodes cleanly, the
    one with the fewest bad sequences when those are rare (a stray byte), else Latin-1.
    """
    declared = None
    if charset:
        name = charset.strip().strip('"').strip()
        try:
            if codecs.lookup(name).name == "iso8859-1" and not data.isascii():
                return _latin1_label(data)
            return data.decode(name)
        except (LookupError, UnicodeError, ValueError, TypeError):
            declared = name
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    best = data.decode("utf-8", "replace")
    if declared is not None:
        try:
            other = data.decode(declared, "replace")
            if other.count("\ufffd") < best.count("\ufffd"):
                best = other
        except (LookupError, UnicodeError, ValueError, TypeError):
            pass
    if best.count("\ufffd") * 50 <= len(best):
        return best
    return data.decode("latin-1")


def _latin1_label(data: bytes) -> str:
    """8-bit text labelled ISO-8859-1: the UTF-8 it is when it is valid UTF-8 (the usual mislabel;
    Latin-1 text is almost never valid UTF-8), else windows-1252 as browsers read the label
    (smart quotes and dashes rather than C1 control characters), else Latin-1."""
    for codec in ("utf-8", "cp1252"):
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            pass
    return data.decode("latin-1")


def _cut(value: str, cap: int) -> str:
    """The first `cap` characters of a raw header value, not ending in a cut 8-bit sequence.

    8-bit bytes arrive as surrogate escapes; a UTF-8 character cut in two would make the whole
    value fail to decode as UTF-8 (and read as Latin-1), so trailing escapes are dropped.
    """
    if len(value) <= cap:
        return value
    value = value[:cap]
    end = len(value)
    while end > len(value) - 3 and end and "\udc80" <= value[end - 1] <= "\udcbf":
        end -= 1  # continuation bytes ...
    if end and "\udcc0" <= value[end - 1] <= "\udcff":
        end -= 1  # ... and the lead byte they follow
    return value[:end]


def _unfold(value: str, cap: int = _MAX_HEADER_CHARS) -> str:
    """A header value as one line of text, from its first `cap` characters only."""
    return " ".join(_unsurrogate(_cut(value, cap)).split())


def _shown(value: str) -> str:
    """A header value as quoted in `Ignore.value` (shown in the log and the digest)."""
    return echo(_unfold(value, _MAX_DECODE_CHARS))


def decode_words(value: str, cap: int = _MAX_HEADER_CHARS) -> str:
    """An RFC 2047 header value as text; unknown charsets and broken words degrade, never raise.

    Only the first `cap` characters are decoded (ending at a space, so that no encoded word is
    cut in two): decode_header is quadratic in the number of words.
    """
    if len(value) > cap:
        value = _cut(value, cap)
        space = max(value.rfind(" "), value.rfind("\t"), value.rfind("\n"))
        if "=?" in value and space > cap // 2:
            value = value[:space]
    value = _unfold(value, cap)
    if "=?" not in value:
        return value
    try:
        return _decoded(decode_header(value))
    except _PARSE_ERRORS:  # broken encoded words: binascii.Error, HeaderParseError, ...
        return _decode_word_by_word(value)


def _decoded(chunks: list[tuple[bytes | str, str | None]]) -> str:
    return "".join(chunk if isinstance(chunk, str) else decode_bytes(chunk, charset) for chunk, charset in chunks)


# An RFC 2047 encoded word: =?charset?B|Q?text?=
_ENCODED_WORD_RE = re.compile(r"=\?[^?\s]++\?[BbQq]\?[^?\s]*+\?=")


def _decode_word_by_word(value: str) -> str:
    """A header value whose encoded words do not all decode: each word on its own, one that does
    not decode shown as written (RFC 2047, 6.3); the blank between two decoded words dropped."""
    out: list[str] = []
    end = 0
    previous_decoded = False
    for match in _ENCODED_WORD_RE.finditer(value):
        between = value[end : match.start()]
        try:
            text, decoded = _decoded(decode_header(match.group(0))), True
        except _PARSE_ERRORS:
            text, decoded = match.group(0), False
        if not (decoded and previous_decoded and not between.strip()):
            out.append(between)
        out.append(text)
        end, previous_decoded = match.end(), decoded
    out.append(value[end:])
    return "".join(out)


# Invisible or exotic spaces that mail clients put into text (U+202F before "PM" in Gmail's
# attribution, U+00A0 from &nbsp;), and zero-width marks that would make "USE 3" not parse.
_SPACES: dict[int, str | None] = dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2000\u2001\u2002\u2003\u2009\u3000"), " ")
_SPACES.update(dict.fromkeys(map(ord, "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"), None))
_SPACES.update(dict.fromkeys([c for c in range(32) if c not in (9, 10)] + [127], None))


def _normalise_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.translate(_SPACES)


# --- addresses ------------------------------------------------------------------------------


def address_parts(addr: str) -> tuple[str, str | None, str]:
    """``flagman+racecraft-1.roger.ab12cd@example.org`` -> ("flagman", "racecraft-1.roger.ab12cd", "example.org").

    Local part and domain are lower-cased; the tag keeps its case and is None when absent
    or empty. An address without "@" has the domain "".
    """
    addr = addr.strip()
    if addr.startswith("<") and addr.endswith(">"):
        addr = addr[1:-1].strip()
    local, at, domain = addr.rpartition("@")
    if not at:
        local, domain = addr, ""
    base, plus, tag = local.partition("+")
    return base.lower(), (tag if plus and tag else None), domain.lower()


# The common shapes, `addr@host`, `Name <addr@host>` and `"Name, Jr" <addr@host>`, without
# the general RFC 5322 parser (a third of the time per mail); anything else goes to getaddresses.
_SIMPLE_ADDRESS_RE = re.compile(
    r'\s*(?:"([^"\\]*)"|([^",;:@<>()\\]*?))\s*<([^<>\s@",;:()]+@[^<>\s@",;:()]+)>\s*'
    r'|\s*([^<>\s@",;:()]+@[^<>\s@",;:()]+)\s*'
)


def _simple_address(value: str) -> tuple[str, str] | None:
    match = _SIMPLE_ADDRESS_RE.fullmatch(value)
    if match is None:
        return None
    quoted, plain, bracketed, bare = match.groups()
    if bare is not None:
        return "", bare
    return (quoted if quoted is not None else plain or "").strip(), bracketed


def _first_address(value: str) -> tuple[str, str]:
    """(display name, address) of the first address in a header value, ("", "") if none."""
    simple = _simple_address(value)
    if simple is not None:
        return simple
    try:
        pairs = getaddresses([value])
    except _PARSE_ERRORS:  # getaddresses has raised on hostile input in some CPython releases
        pairs = []
    for name, addr in pairs:
        if "@" in addr:
            return name, addr
    for name, addr in pairs:
        if addr:
            return name, addr
    match = re.search(r"<([^<>\s]*)>", value)
    if match:
        return "", match.group(1)
    return "", ""


# An address-like token: no separator on either side, "@" inside. The lookbehind and the
# possessive local part keep the scan linear on a long run of letters without an "@" (the
# plain `[^...]+@` would retry from every position of the run: quadratic).
_ADDRESS_SCAN_RE = re.compile(r'(?<![^\s<>,;:"()])[^\s<>,;:"()@]++@[^\s<>,;:"()]++')


def _scan_addresses(value: str, limit: int) -> list[str]:
    """At most `limit` address-like tokens of `value`, in order: one linear regular-expression pass."""
    return [match.group(0) for match in itertools.islice(_ADDRESS_SCAN_RE.finditer(value), limit)]


def _mailboxes(value: str, limit: int = MAX_ADDRESSES_PER_FIELD) -> list[tuple[str, str]]:
    """(display name, address) of the mailboxes of one unfolded address field, at most `limit`.

    The common one-address shapes by a regular expression, other short values by the stdlib's
    parser, long ones (over `_MAX_ADDRESS_PARSE_CHARS`) by a scan for address-like tokens
    (without names): getaddresses is slow on long hostile values.
    """
    simple = _simple_address(value)
    if simple is not None:
        return [simple]
    pairs: list[tuple[str, str]] = []
    if len(value) <= _MAX_ADDRESS_PARSE_CHARS:
        try:
            pairs = [(name, addr.strip()) for name, addr in getaddresses([value]) if addr.strip()]
        except _PARSE_ERRORS:  # see _first_address
            pairs = []
        if any("@" in addr for _, addr in pairs):
            return pairs[:limit]
    scanned = _scan_addresses(value, limit)
    return [("", addr) for addr in scanned] if scanned else pairs[:limit]


def _addresses(value: str) -> list[str]:
    """The addresses (lower-cased) of one unfolded recipient field, at most MAX_ADDRESSES_PER_FIELD."""
    return [addr.lower() for _, addr in _mailboxes(value) if "@" in addr]


def _msgid(value: str) -> str:
    match = re.search(r"<([^<>]*)>", value)
    if match:
        return match.group(1).strip()
    parts = value.split()
    return parts[0].strip("<>") if parts else ""


# --- Authentication-Results (RFC 8601) ------------------------------------------------------


def _strip_comments(value: str) -> str:
    """Remove (nested) comments outside quoted strings: one linear pass."""
    out: list[str] = []
    depth = 0
    quoted = False
    escaped = False
    for ch in value:
        if escaped:
            escaped = False
            if depth == 0:
                out.append(ch)
            continue
        if ch == "\\":
            escaped = True
            if depth == 0:
                out.append(ch)
            continue
        if quoted:
            out.append(ch)
            if ch == '"':
                quoted = False
            continue
        if ch == "(":
            depth += 1
            continue
        if ch == ")" and depth:
            depth -= 1
            if not depth:
                out.append(" ")
            continue
        if depth:
            continue
        if ch == '"':
            quoted = True
        out.append(ch)
    return "".join(out)


def _split_outside_quotes(value: str, sep: str) -> list[str]:
    parts: list[str] = []
    start = 0
    quoted = False
    escaped = False
    for i, ch in enumerate(value):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    return parts


# A property: key = value or key = "quoted". The lookbehind (a key starts a token) and the
# possessive quantifiers keep it linear: without them, a 16,000-character token with no "="
# was retried from each of its positions, 2 minutes for 2 MB of such headers.
_PAIR_RE = re.compile(r'(?<![A-Za-z0-9_.\-/])([A-Za-z0-9_.\-/]++)\s*+=\s*+("(?:[^"\\]|\\.)*+"|[^\s";]*+)')


def parse_authentication_results(value: str) -> AuthResult:
    """One Authentication-Results header value; comments, quoting and odd spacing tolerated."""
    value = _strip_comments(_unfold(value))
    segments = _split_outside_quotes(value, ";")
    head = segments[0].split()
    authserv_id = head[0].lower() if head else ""
    dmarc: str | None = None
    dmarc_from: str | None = None
    spf: str | None = None
    dkim_domains: list[str] = []
    for segment in segments[1:]:
        pairs = [(k.lower(), v.strip('"').strip()) for k, v in _PAIR_RE.findall(segment)]
        if not pairs:
            continue
        method, result = pairs[0]
        method = method.partition("/")[0]
        result = result.lower()
        if method == "dmarc" and dmarc is None:
            dmarc = result
            header_from = dict(reversed(pairs[1:])).get("header.from", "")
            # RFC 7489 §11.2: the domain; some servers write the whole address.
            dmarc_from = header_from.rpartition("@")[2].strip().lower().rstrip(".") or None
        elif method == "spf" and spf is None:
            spf = result
        elif method == "dkim" and result == "pass":
            props = dict(reversed(pairs[1:]))  # the first occurrence of a property wins
            domain = props.get("header.d") or props.get("header.i", "").rpartition("@")[2]
            domain = domain.lower().strip()
            if domain and domain not in dkim_domains:
                dkim_domains.append(domain)
    return AuthResult(authserv_id, dmarc, tuple(dkim_domains), spf, dmarc_from)


# --- HTML -> text ---------------------------------------------------------------------------

_QUOTE_CLASSES = frozenset(
    {
        "gmail_quote",
        "gmail_quote_container",
        "gmail_attr",
        "gmail_signature",
        "moz-cite-prefix",
        "moz-signature",
        "yahoo_quoted",
        "protonmail_quote",
        "zmail_extra",
    }
)
# Everything from one of these on is the quoted message (Outlook web/365/Mac, Zimbra, Hotmail).
_CUT_IDS = frozenset(
    {"divrplyfwdmsg", "appendonsend", "mail-editor-reference-message-container", "zwchr", "stopspelling"}
)
_HEADER_START_RE = re.compile(r"\s*(?:From|Von|De|Van|Da|Fra|Från|Od|От|发件人|寄件者|差出人|보낸 사람)\s*[:：]", re.I)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _cut_from(element: lxml.html.HtmlElement) -> None:
    """Remove `element` and everything after it in document order."""
    node = element
    while node is not None:
        parent = node.getparent()
        if parent is None:
            break
        for sibling in list(node.itersiblings()):
            parent.remove(sibling)
        node.tail = None
        node = parent
    parent = element.getparent()
    if parent is not None:
        parent.remove(element)


def _leading_text(element: lxml.html.HtmlElement, limit: int = 200) -> str:
    """The first `limit` characters of an element's text, without building all of it."""
    parts: list[str] = []
    size = 0
    for piece in element.itertext():
        parts.append(piece)
        size += len(piece)
        if size >= limit:
            break
    return "".join(parts)[:limit]


def _prune_quotes(root: lxml.html.HtmlElement) -> None:
    """Remove quote containers, and everything from the first quoted-message marker on.

    Walks in document order without descending into what is removed anyway, so an <hr> inside
    a quoted (bottom-posted) message cannot cut away the answer that follows the quote.
    """
    cut: lxml.html.HtmlElement | None = None
    drop: list[lxml.html.HtmlElement] = []
    stack = [root]
    while stack:
        element = stack.pop()
        tag = element.tag
        if not isinstance(tag, str):
            continue
        tag = tag.lower()
        classes = (element.get("class") or "").split()
        if tag in ("script", "style", "head", "title", "blockquote") or any(c in _QUOTE_CLASSES for c in classes):
            drop.append(element)
            continue
        ident = (element.get("id") or "").lower()
        if tag == "hr" or ident in _CUT_IDS or ident.startswith("divrplyfwdmsg"):
            cut = element
            break
        style = (element.get("style") or "").lower()
        if tag == "div" and "border-top" in style and _HEADER_START_RE.match(_leading_text(element)):
            cut = element  # Outlook desktop: the quoted header block sits in a border-top div
            break
        stack.extend(reversed(element))
    if cut is not None:
        _cut_from(cut)
    for element in drop:
        if element.getparent() is not None:
            element.drop_tree()


def html_to_text(markup: str) -> str:
    """Rendered text of an HTML body with the quoted parts removed first (never raises)."""
    markup = _CONTROL_RE.sub("", markup)
    if not markup.strip():
        return ""
    try:
        parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
        tree = lxml.html.document_fromstring(markup.encode("utf-8", "replace"), parser=parser)
        _prune_quotes(tree)
        return str(Inscriptis(tree).get_text())
    except _PARSE_ERRORS:
        # Not HTML lxml can read: drop the tags by hand (linear; [^>] cannot backtrack).
        return html.unescape(re.sub(r"<[^>]*>", " ", markup))


# --- the reply text -------------------------------------------------------------------------

_QUOTE_PREFIX = ">"
_WROTE_RE = re.compile(
    r"(?:\bwrote|\bwrites|\bschrieb|\ba écrit|\bécrit|\bescribió|\bescreveu|\bha scritto|\bscrisse"
    r"|\bschreef|\bskrev|\bkirjoitti|\bnapisał|\bnapisała|\bnapsal|\bnapsala|\byazdı|\bέγραψε"
    r"|\bнаписал|\bнаписала|\bнаписали)\s*[:：]\s*$",
    re.I,
)
# The verbs of Chinese, Korean and Japanese attributions ("... 写道：", "...님이 작성:", "...のメール:"):
# no word boundary before them (they follow a digit or a name directly), so they count only in a
# line that names an address.
_CJK_WROTE_RE = re.compile(r"(?:写道|寫道|작성|のメール|のメッセージ)\s*[:：]\s*$")
# Verb-first attributions (The Bat!: "You wrote <date>:", "Вы писали <date>:"), and a line that
# starts with a date and ends with "<address>:" (Gmail in Japanese has no verb): attributions
# only where a quote follows them (`_is_weak_attribution`), as a sentence may have their shape.
_VERB_FIRST_RE = re.compile(r"\s*(?:You\s+wrote|Вы\s+писали)\b", re.I)
_DATE_START_RE = re.compile(r"\s*\d{4}\s*[年년/.\-]")
# "Am <date> schrieb <name>:", "Op <date> schreef <name>:", "El <date>, <name> escribió:" ...:
# a line that starts with the date word, has the verb somewhere and ends with ":" (two
# separate linear checks rather than one pattern that backtracks between them).
_LEAD_RE = re.compile(r"\s*(?:On|Am|Op|Den|El|Em|Le|Il|Dne|W dniu)\b", re.I)
_VERB_RE = re.compile(
    r"\b(?:wrote|schrieb|schreef|geschreven|skrev|escribió|escreveu|a écrit|ha scritto|napisał|napsal)\b", re.I
)
# The first line of an attribution the client wrapped over two lines.
_ATTRIBUTION_START_RE = re.compile(
    r"\s*(?:On|Am|Op|Den|El|Em|Le|Il|Dne|W dniu)\b|\s*\d{1,4}[./-]\d{1,2}[./-]\d{1,4}", re.I
)
_SEPARATOR_RE = re.compile(
    r"\s*-{2,}\s*(?:original message|ursprüngliche nachricht|message d'origine|mensaje original"
    r"|messaggio originale|oorspronkelijk bericht|originalmeddelande|opprinnelig melding"
    r"|alkuperäinen viesti|wiadomość oryginalna|původní zpráva|исходное сообщение"
    r"|原始邮件|原始郵件|원본 메시지)\s*-{2,}\s*$"
    r"|\s*_{10,}\s*$",
    re.I,
)
_FROM_KEY = r"From|Von|De|Van|Da|Fra|Från|Od|От|Lähettäjä|发件人|寄件者|寄件人|差出人|보낸 사람"
_OTHER_KEY = (
    r"Sent|Gesendet|Envoyé|Enviado|Inviato|Verzonden|Skickat|Sendt|Wysłano|Отправлено"
    r"|Date|Datum|Fecha|Data|To|An|À|Para|Aan|Till|Til|Кому"
    r"|Subject|Betreff|Objet|Asunto|Oggetto|Onderwerp|Ämne|Emne|Temat|Тема|Cc|Kopie|Reply-To"
    r"|发送时间|发送日期|收件人|抄送|主题|日期|寄件日期|收件者|副本|主旨|送信日時|宛先|件名|日付"
    r"|보낸 날짜|받는 사람|참조|제목|날짜"
)
_FROM_LINE_RE = re.compile(rf"\s*\*?(?:{_FROM_KEY})\*?\s*[:：]", re.I)
_HEADER_LINE_RE = re.compile(rf"\s*\*?(?:{_FROM_KEY}|{_OTHER_KEY})\*?\s*[:：]", re.I)
_MOBILE_SIGNATURE_RE = re.compile(
    r"[\s(<\[]*(?:"
    r"sent (?:from|via|with|using|by) \S"
    r"|get outlook for \S"
    r"|envoyé (?:depuis|de|avec) \S"
    r"|von meinem .{0,80}gesendet"
    r"|diese nachricht wurde von meinem .{0,120}gesendet"
    r"|gesendet (?:von|mit|vom) \S"
    r"|enviado (?:desde|de|do) \S"
    r"|inviato da \S"
    r"|(?:verzonden|verstuurd) (?:met|vanaf|van|via) \S"
    r"|skickat från \S"
    r"|sendt fra \S"
    r"|lähetetty \S"
    r"|wysłane z \S"
    r"|odesláno z \S"
    r"|trimis de pe \S"
    r"|elküldve az? \S"
    r"|enviat des del? \S"
    r"|отправлено (?:с|из) \S"
    r"|надіслано з \S"
    r"|στάλθηκε από \S"
    r"|(?:iphone|ipad|android)\S{0,12} gönderildi\s*$"
    r"|\S.{0,40}から送信\s*$"
    r"|\S.{0,40}에서 보냄\s*$"
    r"|[发發]自我的.{0,40}$"
    r"|從我的.{0,40}傳送"
    r"|从我的.{0,40}发送"
    r")",
    re.I,
)


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(_QUOTE_PREFIX)


def _is_attribution(line: str) -> bool:
    if len(line) > _MAX_MARKER_LINE or not line.rstrip().endswith((":", "：")):
        return False
    if _WROTE_RE.search(line) or (_LEAD_RE.match(line) and _VERB_RE.search(line)):
        return True
    return "@" in line and bool(_CJK_WROTE_RE.search(line))


def _is_weak_attribution(line: str) -> bool:
    """A line of an attribution's shape that is one only over a quote (see _VERB_FIRST_RE)."""
    stripped = line.rstrip()
    if len(stripped) > _MAX_MARKER_LINE or not stripped.endswith((":", "：")):
        return False
    if _VERB_FIRST_RE.match(stripped):
        return True
    head = stripped[:-1].rstrip()
    return head.endswith(">") and "@" in head[head.rfind("<") :] and bool(_DATE_START_RE.match(head))


def _attribution_span(lines: list[str], i: int) -> int:
    """Number of lines (1 or 2) of the attribution starting at line i, 0 if there is none."""
    line = lines[i]
    if _is_attribution(line):
        return 1
    if i + 1 < len(lines) and line.strip() and len(line) <= _MAX_MARKER_LINE:
        nxt = lines[i + 1]
        if nxt.strip() and not _is_quote(nxt) and not _ATTRIBUTION_START_RE.match(nxt):
            if (_ATTRIBUTION_START_RE.match(line) or line.rstrip().endswith("<")) and _is_attribution(
                line.rstrip() + " " + nxt.strip()
            ):
                return 2
    return 0


def _is_header_block(lines: list[str], i: int) -> bool:
    """Outlook's quoted header block: From/Sent/To/Subject (or Von/Gesendet/An/Betreff ...)."""
    line = lines[i]
    if len(line) > _MAX_MARKER_LINE or not _HEADER_LINE_RE.match(line):
        return False
    window = lines[i + 1 : i + 5]
    others = sum(1 for w in window if len(w) <= _MAX_MARKER_LINE and _HEADER_LINE_RE.match(w))
    if _FROM_LINE_RE.match(line):
        return others >= 1
    return others >= 2


def _is_signature(line: str) -> bool:
    stripped = line.rstrip()
    if stripped == "--":
        return True
    return len(stripped) <= 160 and bool(_MOBILE_SIGNATURE_RE.match(stripped))


def _scan(lines: list[str], limit: int | None) -> tuple[list[str], int]:
    """(the sender's own lines, index of the first line of a quoted message or len(lines)).

    Linear in the number of lines; every look-ahead is bounded. Quote lines and attributions
    over them are skipped; a quoted message without ">" (Outlook's header block, an "Original
    Message" rule, an attribution over unmarked text) ends the scan; a signature ends what is
    kept, but the scan goes on to find where a quoted message starts (for `marked_orders`).
    With `limit`, the scan stops once more than `limit` lines are kept.
    """
    kept: list[str] = []
    signed = False
    i = 0
    n = len(lines)
    while i < n:
        if limit is not None and len(kept) > limit and kept[-1]:
            return kept, n
        line = lines[i]
        if _is_quote(line):
            i += 1
            continue
        if not line.strip():
            if kept and kept[-1] and not signed:
                kept.append("")
            i += 1
            continue
        if _SEPARATOR_RE.match(line) or _is_header_block(lines, i):
            return kept, i
        span = _attribution_span(lines, i)
        weak = not span and _is_weak_attribution(line)
        if span or weak:
            # An attribution over ">" lines removes itself (the quote goes line by line, and
            # what follows the quote is a bottom-posted or interleaved answer); one over
            # anything else (Yahoo's indented quote) ends the reply, unless it is only of an
            # attribution's shape (`_is_weak_attribution`): then it is the sender's text.
            j = i + (span or 1)
            while j < n and j < i + (span or 1) + 3 and not lines[j].strip():
                j += 1
            if j < n and _is_quote(lines[j]):
                i = j
                continue
            if span:
                return kept, i
        if not signed and _is_signature(line):
            signed = True
        if not signed:
            kept.append(line.rstrip())
        i += 1
    return kept, n


def strip_quotes(text: str, *, limit: int | None = None) -> str:
    """The sender's own lines: quotes, attributions, quoted header blocks and signatures removed.

    With `limit`, the scan stops once more than `limit` lines are kept (the caller caps the
    text anyway).
    """
    return _trim_blank(_scan(text.split("\n"), limit)[0])


def _trim_blank(lines: list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(line.rstrip() for line in lines[start:end])


def marked_orders(text: str) -> str | None:
    """The lines between a line ``ORDERS`` and the next line ``END`` (case-insensitive), if any."""
    lines = text.split("\n")
    start: int | None = None
    for index, line in enumerate(lines):
        word = line.strip().rstrip(":").strip().casefold()
        if start is None:
            if word == "orders":
                start = index
        elif word == "end":
            return _trim_blank(lines[start + 1 : index])
    return None


def cap_lines(text: str, max_lines: int) -> tuple[str, bool]:
    """At most `max_lines` lines of `text`, and whether any were cut."""
    if max_lines <= 0:
        return "", bool(text)
    cut = -1
    for _ in range(max_lines):
        cut = text.find("\n", cut + 1)
        if cut < 0:
            return text, False
    return text[:cut].rstrip(), True


# --- MIME -----------------------------------------------------------------------------------


def _iter_parts(msg: Message) -> Iterator[Message]:
    """Parts depth-first without recursion, at most _MAX_PARTS of them.

    A message/rfc822 (or other message/*) part is yielded but not entered: a forwarded mail is
    someone else's text, never the sender's orders nor the sender's calendar answer.
    """
    stack = [msg]
    seen = 0
    while stack and seen < _MAX_PARTS:
        part = stack.pop()
        seen += 1
        yield part
        if part.is_multipart() and not _content_type(part).startswith("message/"):
            payload = part.get_payload()
            if isinstance(payload, list):
                stack.extend(p for p in reversed(payload) if isinstance(p, Message))


def _text_parts(msg: EmailMessage) -> tuple[Message | None, Message | None]:
    """(text/plain, text/html) body parts: get_body's choice, else the first inline ones."""
    plain: Message | None = None
    markup: Message | None = None
    try:
        body = msg.get_body(("plain", "html"))
    except _PARSE_ERRORS:
        body = None
    if body is not None:
        if body.get_content_type() == "text/plain":
            plain = body
            try:
                markup = msg.get_body(("html",))
            except _PARSE_ERRORS:
                markup = None
        else:
            markup = body
        return plain, markup
    for part in _iter_parts(msg):
        if part.is_multipart() or part.get_content_disposition() == "attachment":
            continue
        ctype = part.get_content_type()
        if ctype == "text/plain" and plain is None:
            plain = part
        elif ctype == "text/html" and markup is None:
            markup = part
    return plain, markup


# The transfer encodings the stdlib decodes, as it compares them (the whole value, lower-cased).
_KNOWN_TRANSFER_ENCODINGS = frozenset(
    {"", "7bit", "8bit", "binary", "quoted-printable", "base64", "x-uuencode", "uuencode", "uue", "x-uue"}
)


def _meant_transfer_encoding(part: Message) -> str | None:
    """ "quoted-printable" or "base64" when the part's Content-Transfer-Encoding names one in a form
    the stdlib does not decode ("quoted printable", "Base64 " with a blank, quoted, with a
    parameter, an underscore), else None. Such a body reached the text undecoded: soft line
    breaks inside orders ("US=" / "E 2"), "=E9" for "é"."""
    value = str(part.get("content-transfer-encoding", "") or "")
    if value.lower() in _KNOWN_TRANSFER_ENCODINGS:
        return None
    token = re.sub(r"[\s_\-\"']", "", value.split(";")[0]).lower()
    return {"quotedprintable": "quoted-printable", "base64": "base64"}.get(token)


def _decode_transfer(data: bytes, encoding: str) -> bytes:
    if encoding == "quoted-printable":
        return quopri.decodestring(data)
    try:
        return binascii.a2b_base64(data)
    except binascii.Error:  # lost padding: complete it (a2b_base64 skips what is not base64)
        try:
            return binascii.a2b_base64(data + b"==")
        except binascii.Error:
            return data


def _part_text(part: Message) -> str:
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes):
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    meant = _meant_transfer_encoding(part)
    if meant is not None:
        data = _decode_transfer(data, meant)
    return decode_bytes(data, part.get_content_charset())


def unflow(text: str, *, delsp: bool = False) -> str:
    """RFC 3676 format=flowed: join soft-broken lines (ending in a space) of one quote depth.

    Thunderbird and Apple Mail wrap long lines this way; unjoined, a long order would arrive
    as two lines. Space-stuffing is undone; "-- " stays a hard line (the signature rule).
    """
    out: list[str] = []
    depth = -1
    parts: list[str] = []

    def emit() -> None:
        if depth >= 0:
            out.append((">" * depth + " " if depth else "") + "".join(parts))

    for line in text.split("\n"):
        quote = len(line) - len(line.lstrip(">"))
        content = line[quote:]
        if content.startswith(" "):
            content = content[1:]
        soft = content.endswith(" ") and content != "-- "
        if soft and delsp:
            content = content[:-1]
        if quote != depth:
            emit()
            depth, parts = quote, []
        parts.append(content)
        if not soft:
            emit()
            depth, parts = -1, []
    emit()
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class _Body:
    text: str
    truncated: bool
    defects: tuple[str, ...]


def body_text(msg: EmailMessage) -> _Body:
    """The decoded body as text (HTML rendered, quote containers removed), not yet stripped."""
    defects: list[str] = []
    truncated = False
    plain, markup = _text_parts(msg)
    text = ""
    if plain is not None:
        text = _normalise_text(_part_text(plain))
        if str(plain.get_param("format", "")).lower() == "flowed":
            text = unflow(text, delsp=str(plain.get_param("delsp", "")).lower() == "yes")
    if not text.strip() and markup is not None:
        source = _part_text(markup)
        if len(source) > MAX_HTML_CHARS:
            source = source[:MAX_HTML_CHARS]
            truncated = True
            defects.append(f"HTML body cut at {MAX_HTML_CHARS} characters")
        # Indentation in rendered HTML comes from the layout, not from the sender.
        text = "\n".join(line.strip() for line in _normalise_text(html_to_text(source)).split("\n"))
    return _Body(pgp_cleartext(text), truncated, tuple(defects))


_PGP_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_PGP_SIGNATURE_END = "-----END PGP SIGNATURE-----"
_ARMOR_HEADER_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,40}: ")


def pgp_cleartext(text: str) -> str:
    """`text` with its inline (cleartext) PGP signatures taken apart (RFC 4880, 7): the armour
    line, its armour headers ("Hash: SHA256") and the signature block go, dash-escaped lines
    ("- -- ", "- - USE 2") are unescaped. Armour lines count only unindented and unquoted;
    the text around a signed block stays. One pass over the lines."""
    if _PGP_SIGNED not in text:
        return text
    out: list[str] = []
    state = "text"
    for line in text.split("\n"):
        bare = line.rstrip()
        if state == "headers":
            if not bare or _ARMOR_HEADER_RE.match(bare):
                state = "headers" if bare else "signed"
                continue
            state = "signed"  # no empty line after the headers: the signed text has begun
        if state == "text":
            if bare == _PGP_SIGNED:
                state = "headers"
            else:
                out.append(line)
        elif state == "signed":
            if bare == _PGP_SIGNATURE:
                state = "signature"
            else:
                out.append(line[2:] if line.startswith("- ") else line)
        elif bare == _PGP_SIGNATURE_END:
            state = "text"
    return "\n".join(out)


def extract_text(msg: EmailMessage, *, max_lines: int = 2000) -> tuple[str, str, bool, tuple[str, ...]]:
    """(text of the orders, the sender's own text, truncated, defects) of a parsed mail.

    The orders are the ORDERS..END block when there is one (looked for before quote
    stripping, so an explicit block wins; ">" lines and a quoted message are not looked at),
    else the sender's own text.
    """
    try:
        body = body_text(msg)
    except _PARSE_ERRORS as exc:
        return "", "", False, (f"body not readable: {type(exc).__name__}",)
    lines = body.text.split("\n")
    kept, quoted_from = _scan(lines, max_lines)
    own = _trim_blank(kept)
    # The block is looked for before stripping, but not inside a quoted message without ">"
    # (an Outlook quote of an earlier mail with a block must not replace today's orders).
    block = marked_orders("\n".join(lines[:quoted_from]))
    text, cut = cap_lines(own if block is None else block, max_lines)
    own, own_cut = cap_lines(own, max_lines)
    return text, own, body.truncated or cut or own_cut, body.defects


# --- headers and the ignore policy ----------------------------------------------------------


# A line end followed by the start of a field (not a continuation line), as the feed parser
# splits lines: CR LF, CR or LF.
_FIELD_END_RE = re.compile(rb"(?:\r\n|\r|\n)(?![ \t])")


def _blank_line(data: bytes, start: int = 0, end: int | None = None) -> int:
    """The end of the header section: the index just past the line end that precedes the first
    empty line in data[start:end] (-1 if there is none)."""
    best = -1
    stop = len(data) if end is None else end
    for pattern in (b"\n\n", b"\n\r\n", b"\r\r"):
        found = data.find(pattern, start, stop if best < 0 else min(stop, best + len(pattern)))
        if found >= 0 and (best < 0 or found < best):
            best = found
    return best + 1 if best >= 0 else -1


def cap_header_section(raw: bytes) -> tuple[bytes, tuple[str, ...]]:
    """`raw` with its header section cut to MAX_HEADER_BYTES and MAX_HEADER_FIELDS, and what was cut.

    The body (from the empty line on) is kept. A header section within both caps, as every
    real mail's is, is returned as it is, after two bounded searches.
    """
    if raw[:1] in (b"\n", b"\r"):
        return raw, ()  # no header section at all: the parser reads it all as body
    defects: list[str] = []
    stop = _blank_line(raw, 0, MAX_HEADER_BYTES + 2)
    if stop >= 0:
        head, rest = raw[:stop], raw[stop:]
    elif len(raw) <= MAX_HEADER_BYTES:
        head, rest = raw, b""  # headers only
    else:
        # Longer than the cap: keep whole lines within it, then the body after the empty line.
        cut = max(raw.rfind(b"\n", 0, MAX_HEADER_BYTES), raw.rfind(b"\r", 0, MAX_HEADER_BYTES))
        head = raw[: cut + 1] if cut > 0 else raw[:MAX_HEADER_BYTES] + b"\n"
        stop = _blank_line(raw, MAX_HEADER_BYTES - 2)
        rest = raw[stop:] if stop >= 0 else b""
        defects.append(f"header section over {MAX_HEADER_BYTES} bytes: the rest not read")
    end = next(itertools.islice(_FIELD_END_RE.finditer(head), MAX_HEADER_FIELDS - 1, None), None)
    if end is not None and end.end() < len(head):
        head = head[: end.end()]
        defects.append(f"more than {MAX_HEADER_FIELDS} header fields: the rest not read")
    if not defects:
        return raw, ()
    return head + rest, tuple(defects)


class _Headers:
    """Raw header values by lower-cased name, in order (topmost first), never parsed by email."""

    def __init__(self, items: Iterable[tuple[str, object]]) -> None:
        self._by_name: dict[str, list[str]] = {}
        for name, value in itertools.islice(items, MAX_HEADER_FIELDS):
            self._by_name.setdefault(str(name).strip().lower(), []).append(str(value))

    def __bool__(self) -> bool:
        return bool(self._by_name)

    def all(self, name: str) -> list[str]:
        return self._by_name.get(name.lower(), [])

    def first(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None


def _keyword(value: str) -> str:
    """The first token of a keyword header ("auto-generated (warning-timeout)" -> "auto-generated")."""
    token = _strip_comments(_unfold(value)).split(";")[0].strip().lower()
    return token.split()[0] if token else ""


def _ignore_reason(
    headers: _Headers,
    content_type: str,
    from_addr: str,
    sender: str,
    sender_issue: tuple[IgnoreReason, Ignore] | None,
    own: frozenset[tuple[str, str]],
    loop_header: str,
    loop_value: str | None,
) -> tuple[IgnoreReason | None, Ignore | None]:
    loop = headers.all(loop_header)
    if loop:
        value = _unfold(loop[0])
        ours = loop_value is not None and value == loop_value.strip()
        return IgnoreReason.LOOP, Ignore(IgnoreWhy.LOOP, header=loop_header, value=echo(value), ours=ours)
    if sender:
        local, _, domain = address_parts(sender)
        if (local, domain) in own:
            return IgnoreReason.OWN_MAIL, Ignore(IgnoreWhy.OWN_FROM, value=sender)
    # A DSN is a bounce whatever else it carries (MTAs add Auto-Submitted to theirs too) ...
    if content_type == "multipart/report":
        return IgnoreReason.BOUNCE, Ignore(IgnoreWhy.HEADER, header="Content-Type", value=content_type)
    local = address_parts(from_addr)[0] if from_addr else ""
    if local in ("mailer-daemon", "postmaster"):
        return IgnoreReason.BOUNCE, Ignore(IgnoreWhy.HEADER, header="From", value=echo(from_addr))
    # ... while an auto-reply is one even with a null Return-Path, with which RFC 3834 and 5230
    # (Sieve vacation) have responders send: the digest lists bounces apart, as undelivered mail.
    for value in headers.all("auto-submitted"):
        keyword = _keyword(value)
        if keyword and keyword != "no":
            return IgnoreReason.AUTO_REPLY, Ignore(IgnoreWhy.HEADER, header="Auto-Submitted", value=_shown(value))
    for name in ("X-Autoreply", "X-Autorespond"):
        values = headers.all(name)
        if values:
            return IgnoreReason.AUTO_REPLY, Ignore(IgnoreWhy.HEADER, header=name, value=_shown(values[0]))
    precedence = [(_keyword(value), value) for value in headers.all("precedence")]
    for keyword, value in precedence:
        if keyword == "auto_reply":
            return IgnoreReason.AUTO_REPLY, Ignore(IgnoreWhy.HEADER, header="Precedence", value=_shown(value))
    return_path = headers.first("return-path")
    if return_path is not None and re.fullmatch(r"<\s*>|", _unfold(return_path)):
        return IgnoreReason.BOUNCE, Ignore(IgnoreWhy.NULL_RETURN_PATH)
    for keyword, value in precedence:
        if keyword in ("bulk", "junk", "list"):
            return IgnoreReason.BULK, Ignore(IgnoreWhy.HEADER, header="Precedence", value=_shown(value))
    if sender_issue is not None:
        return sender_issue
    if not sender:
        return IgnoreReason.NO_SENDER, Ignore(IgnoreWhy.NO_FROM)
    return None, None


_ITIP_ANSWERS = frozenset({"reply", "counter", "refresh"})
_METHOD_LINE = re.compile(rb"^METHOD:([A-Za-z-]{1,20})\r?$", re.M)


def _calendar_reply(msg: Message) -> tuple[IgnoreReason | None, Ignore | None]:
    """An iTIP answer a calendar client sent to the organizer of our deadline invitations: a
    text/calendar (or application/ics) part whose METHOD is REPLY, COUNTER or REFRESH (in the
    Content-Type's method parameter, or in the object itself)."""
    for part in _iter_parts(msg):
        if part.get_content_type() not in ("text/calendar", "application/ics"):
            continue
        method = str(part.get_param("method", "") or "").strip().lower()
        if not method:
            try:
                data = part.get_payload(decode=True)
            except _PARSE_ERRORS:
                data = None
            found = _METHOD_LINE.search(data[:8192]) if isinstance(data, bytes) else None
            method = found.group(1).decode("ascii").lower() if found else ""
        if method in _ITIP_ANSWERS:
            return IgnoreReason.CALENDAR_REPLY, Ignore(IgnoreWhy.CALENDAR, value=method.upper())
    return None, None


def _sender(headers: _Headers) -> tuple[str, str, tuple[IgnoreReason, Ignore] | None]:
    """(display name, From address as written, why it cannot be used or None) of a mail.

    More than one From field, or a From with more than one mailbox, is ambiguous: the
    receiving server may have checked (DMARC) another one than we would read, so none is
    believed. A From value over the cap is not cut (the cut could leave an address
    out of the display name): it gives no sender.
    """
    froms = headers.all("from")
    if not froms:
        return "", "", None
    if len(froms) > 1:
        shown = tuple(addr or "?" for _, addr in (_one_mailbox(v) for v in froms[:3]))
        several = Ignore(IgnoreWhy.SEVERAL_FROMS, count=len(froms), addresses=shown, more=len(froms) > 3)
        return "", "", (IgnoreReason.AMBIGUOUS_SENDER, several)
    value = froms[0]
    if len(value) > _MAX_HEADER_CHARS:
        return "", "", (IgnoreReason.NO_SENDER, Ignore(IgnoreWhy.LONG_FROM, count=len(value)))
    mailboxes = _mailboxes(_unfold(value))
    addressed = [(name, addr) for name, addr in mailboxes if "@" in addr]
    if len(addressed) > 1:
        shown = tuple(addr for _, addr in addressed[:3])
        several = Ignore(IgnoreWhy.SEVERAL_MAILBOXES, addresses=shown, more=len(addressed) > 3)
        return "", "", (IgnoreReason.AMBIGUOUS_SENDER, several)
    name, addr = _one_mailbox(value, mailboxes)
    return name, _unsurrogate(addr).strip(), None


def _one_mailbox(value: str, mailboxes: list[tuple[str, str]] | None = None) -> tuple[str, str]:
    """(display name, address) of the first mailbox of a From value, ("", "") if none."""
    if mailboxes is None:
        if len(value) > _MAX_HEADER_CHARS:
            return "", ""
        mailboxes = _mailboxes(_unfold(value))
    for name, addr in mailboxes:
        if "@" in addr:
            return name, addr
    for name, addr in mailboxes:
        if addr:
            return name, addr
    match = re.search(r"<([^<>\s]*)>", _unfold(value))
    if match:
        return "", match.group(1)
    return "", ""


@functools.lru_cache(maxsize=16)
def _own_set(own_addresses: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    own: set[tuple[str, str]] = set()
    for addr in own_addresses:
        _, found = _first_address(addr)
        local, _, domain = address_parts(found or addr)
        if local or domain:
            own.add((local, domain))
    return frozenset(own)


def _content_type(msg: Message) -> str:
    try:
        return msg.get_content_type()
    except _PARSE_ERRORS:
        return "text/plain"


def parse_inbound(
    raw: bytes,
    *,
    own_addresses: Collection[str],
    loop_header: str = "X-Flagman-Loop",
    loop_value: str | None = None,
    max_lines: int = 2000,
    size: int | None = None,
) -> Inbound:
    """Raw mail -> `Inbound`, with the ignore verdict. Pure, and never raises (see module doc)."""
    raw = bytes(raw)
    content_hash = hashlib.sha256(raw).hexdigest()
    size = len(raw) if size is None else size
    try:
        return _parse(raw, content_hash, size, own_addresses, loop_header, loop_value, max_lines)
    except Exception as exc:  # noqa: BLE001 - the last line of "never raises": the mail becomes UNPARSEABLE
        failed = type(exc).__name__
        return _unparseable(
            content_hash, size, Ignore(IgnoreWhy.PARSER_FAILED, value=failed), f"parser failed: {failed}"
        )


def _unparseable(content_hash: str, size: int, why: Ignore, defect: str) -> Inbound:
    """A mail the parser could not read: ignored as UNPARSEABLE, `why`, and `defect` for the log."""
    return Inbound(
        message_id=f"{content_hash}@{_SYNTHETIC_DOMAIN}",
        content_hash=content_hash,
        sender="",
        sender_name="",
        recipients=(),
        subject="",
        text="",
        in_reply_to="",
        references=(),
        auth_results=(),
        ignore=IgnoreReason.UNPARSEABLE,
        ignore_why=why,
        size=size,
        truncated=False,
        defects=(defect,),
    )


def _reply_sender(
    from_addr: str, sender_issue: tuple[IgnoreReason, Ignore] | None
) -> tuple[str, tuple[IgnoreReason, Ignore] | None]:
    """The address a reply may go to (lower case, a domain in its A-label form), or "" when
    there is none, and why the From is not usable (`_sender`'s reason, or its length)."""
    # A sender we may write to: a plain local part and domain. Quoted local parts and
    # specials are legal but never a player's; a reply to one would be a malformed envelope
    # (or a header built from hostile text), so such mail counts as having no usable From.
    sender = from_addr.lower() if PLAIN_ADDRESS.fullmatch(from_addr) else ""
    if sender and not sender.isascii():
        # A domain in Unicode (a U-label) is the same domain as its A-label, which is what a
        # reply can carry in its headers; one that has no A-label cannot be answered.
        local, _, domain = sender.rpartition("@")
        try:
            a_label = domain.encode("idna").decode("ascii") if not domain.isascii() else domain
        except UnicodeError:
            a_label = ""
        # The codec does not check the result (nameprep can map a character to a space).
        sender = f"{local}@{a_label}" if re.fullmatch(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*", a_label) else ""
    if sender and not is_address(sender):
        # Longer than RFC 5321 allows: no relay takes it, and a Maildir cannot
        # name it; such mail has no usable From and is never answered.
        sender_issue = sender_issue or (IgnoreReason.NO_SENDER, Ignore(IgnoreWhy.LONG_ADDRESS))
        sender = ""
    return sender, sender_issue


def _message_id(headers: _Headers, content_hash: str, defects: list[str]) -> str:
    """The mail's Message-ID, or one made from its content hash when it has none we may quote
    (too long, not printable ASCII: `defects` says so)."""
    message_id = _msgid(_unfold(headers.first("message-id") or ""))
    if len(message_id) > _MAX_MESSAGE_ID:
        defects.append("Message-ID too long: replaced")
        message_id = ""
    elif message_id and not _MESSAGE_ID_RE.fullmatch(message_id):
        # Our replies quote it in In-Reply-To/References, and the stdlib decodes an encoded
        # word there when it writes the header: "=?utf-8?q?=0D=0ABcc:...?=" would become a
        # header of the attacker's choosing (found by tests/security/test_fuzz_service.py).
        defects.append("Message-ID not printable ASCII: replaced")
        message_id = ""
    return message_id or f"{content_hash}@{_SYNTHETIC_DOMAIN}"


def _recipients(headers: _Headers) -> tuple[str, ...]:
    """The addresses the mail was sent to, only to find the bot's plus-address: a few fields
    of each name, a few addresses of each, each once."""
    recipients: dict[str, None] = {}
    for name in ("to", "cc", "delivered-to", "x-original-to"):
        for value in headers.all(name)[:MAX_RECIPIENT_FIELDS]:
            recipients.update(dict.fromkeys(_addresses(_unfold(value))))
    return tuple(recipients)


def _references(headers: _Headers) -> tuple[str, ...]:
    """The References field's message ids (bracketed; else its words)."""
    refs_value = _unfold(headers.first("references") or "")
    references = tuple(r.strip() for r in re.findall(r"<([^<>]*)>", refs_value) if r.strip())
    if not references and refs_value:
        references = tuple(refs_value.split())
    return references


def _parse(
    raw: bytes,
    content_hash: str,
    size: int,
    own_addresses: Collection[str],
    loop_header: str,
    loop_value: str | None,
    max_lines: int,
) -> Inbound:
    structure_error: Ignore | None = None
    raw, cut = cap_header_section(raw)
    defects: list[str] = list(cut)
    msg: EmailMessage
    try:
        msg = BytesParser(policy=_POLICY).parsebytes(raw)
    except _PARSE_ERRORS as exc:
        # Hostile MIME (thousands of nested parts): keep the headers for the log and digest.
        structure_error = Ignore(IgnoreWhy.MIME_UNREADABLE, value=type(exc).__name__)
        msg = BytesParser(policy=_POLICY).parsebytes(raw, headersonly=True)
    headers = _Headers(msg.raw_items())
    if not headers:
        return _unparseable(content_hash, size, Ignore(IgnoreWhy.NO_HEADERS), "no header fields: not a mail")

    sender_name, from_addr, sender_issue = _sender(headers)
    sender, sender_issue = _reply_sender(from_addr, sender_issue)
    # mail-interface.md: text taken from a mail is one line, printable, capped -- from here on.
    sender_name = echo_name(decode_words(sender_name, _MAX_DECODE_CHARS))

    message_id = _message_id(headers, content_hash, defects)
    in_reply_to = _msgid(_unfold(headers.first("in-reply-to") or ""))
    references = _references(headers)

    auth_values = headers.all("authentication-results")[:MAX_AUTH_RESULTS]
    auth_results = tuple(parse_authentication_results(v) for v in auth_values)
    subject = echo(decode_words(headers.first("subject") or "", _MAX_DECODE_CHARS))

    content_type = "text/plain" if structure_error is not None else _content_type(msg)
    ignore, why = _ignore_reason(
        headers,
        content_type,
        from_addr,
        sender,
        sender_issue,
        _own_set(tuple(own_addresses)),
        loop_header,
        loop_value,
    )
    if structure_error is not None:
        text, own_text, truncated = "", "", False
        defects.append(f"MIME structure not readable: {structure_error.value}")
        if ignore is None:
            ignore, why = IgnoreReason.UNPARSEABLE, structure_error
    else:
        if ignore is None:
            ignore, why = _calendar_reply(msg)
        text, own_text, truncated, body_defects = extract_text(msg, max_lines=max_lines)
        defects.extend(body_defects)

    return Inbound(
        message_id=message_id,
        content_hash=content_hash,
        sender=sender,
        sender_name=sender_name,
        recipients=_recipients(headers),
        subject=subject,
        text=text,
        in_reply_to=in_reply_to,
        references=references,
        auth_results=auth_results,
        ignore=ignore,
        ignore_why=why,
        size=size,
        truncated=truncated,
        reply_text=own_text,
        defects=tuple(defects),
        sender_local=echo_name(from_addr.rpartition("@")[0]) if sender else "",
    )
