"""Raw mail bytes -> an `Inbound`: who sent it, to which address, and the text of the orders.

Pure: no I/O, no clock. (Being implemented: see the extraction pipeline in
shared/design/testing.md.)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class IgnoreReason(enum.Enum):
    """Why a mail must never be answered (mail-interface.md, "Mail that is never answered")."""

    BOUNCE = "bounce"
    AUTO_REPLY = "auto-reply"
    BULK = "bulk"
    LOOP = "loop"  # carries our loop header
    OWN_MAIL = "own mail"  # From is the bot's own address
    NO_SENDER = "no sender"  # no usable From address
    UNPARSEABLE = "unparseable"  # not a mail at all


@dataclass(frozen=True, slots=True)
class AuthResult:
    """One `Authentication-Results` header (RFC 8601), topmost first."""

    authserv_id: str
    dmarc: str | None  # "pass", "fail", ... or None when absent
    dkim_pass_domains: tuple[str, ...]  # d= (header.d / header.i domain) of each dkim=pass
    spf: str | None


@dataclass(frozen=True, slots=True)
class Inbound:
    message_id: str  # as sent (angle brackets stripped); a synthetic "<sha256>@flagman.invalid" if missing
    content_hash: str  # sha256 hex of the raw bytes
    sender: str  # From address, lower-cased ("" if none)
    sender_name: str  # display name, decoded
    recipients: tuple[str, ...]  # To, Cc, Delivered-To, X-Original-To addresses, lower-cased
    subject: str  # decoded, whitespace-folded
    text: str  # the text of the orders: decoded, HTML converted, quotes/signatures stripped; ORDERS..END block only if present
    in_reply_to: str
    references: tuple[str, ...]
    auth_results: tuple[AuthResult, ...]
    ignore: IgnoreReason | None
    ignore_detail: str  # human-readable why, for the log and digest
    size: int  # raw size in bytes
    truncated: bool  # the text was cut at the line cap
