"""Who may act for a seat: signed reply addresses, seat passwords, Authentication-Results.

mail-interface.md, "Addresses and identity":
* every mail the bot sends to a seat carries the reply address
  ``<local>+<game>.<seat>.<mac>@<domain>``, where `mac` is a truncated HMAC-SHA256 of
  ``"<game>.<seat>"`` under the site secret: replying authenticates, from any address;
* a mail to the plain address counts for a seat when its From is the seat's registered
  address and it carries a proof the configuration accepts: the seat password (a line
  ``PASSWORD xyz``, or the signed tag in the subject), or a DMARC / aligned-DKIM pass in the
  topmost Authentication-Results header of our own receiving server. A DMARC pass counts only
  for the From domain the server checked (its ``header.from``), which must be the domain of
  the From the bot read: a mail with two From fields, one checked and one read,
  never gets here (bot.mail_in.parse ignores it as AMBIGUOUS_SENDER).

The GM signs with the seat name ``gm``. Secrets rotate: a MAC made under any of the previous
secrets still verifies, so games in progress keep working while new mail uses the new one.
"""

from __future__ import annotations

import base64
import functools
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from publicsuffixlist import PublicSuffixList

from bot.mail_in.parse import AuthResult
from bot.safe_text import echo

GM_SEAT = "gm"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,29}$")
_TAG_RE = re.compile(r"^(?P<game>[a-z0-9][a-z0-9_-]{0,29})\.(?P<seat>[a-z0-9][a-z0-9_-]{0,29})\.(?P<mac>[a-z2-7]{12})$")
_SUBJECT_TAG_RE = re.compile(r"\[(?:[a-z0-9][a-z0-9_-]{0,29})\.(?:[a-z0-9][a-z0-9_-]{0,29})\.(?:[a-z2-7]{12})\]", re.I)
_PASSWORD_RE = re.compile(r"^\s*PASSWORD\s*[:=]?\s*(\S+)\s*$", re.I | re.M)


def new_secret() -> str:
    """A seat password: short enough to type on a phone, long enough not to guess."""
    return secrets.token_urlsafe(9)


@functools.lru_cache(maxsize=4096)
def mac(secret: str, game: str, seat: str, salt: str = "") -> str:
    """The first 12 base32 characters of HMAC-SHA256(secret, "game.seat[.salt]"), lower case.
    Base32 writes each 5 bytes as 8 characters of their own, so the digest's first 10 bytes
    give those 12 characters (the whole digest is not encoded, a mail's letters ask for it
    twice a seat). Each is worked out once a process (the last 4,096 kept): a seat's mail is
    checked and answered with the same one, again and again."""
    message = f"{game}.{seat}" + (f".{salt}" if salt else "")
    digest = hmac.digest(secret.encode(), message.encode(), "sha256")
    return base64.b32encode(digest[:10]).decode("ascii")[:12].lower()


def signed_tag(secret: str, game: str, seat: str, salt: str = "") -> str:
    return f"{game}.{seat}.{mac(secret, game, seat, salt)}"


def signed_address(bot_address: str, secret: str, game: str, seat: str, salt: str = "") -> str:
    """The reply address of a seat; `salt` is the seat's reply salt (renewed when it changes hands)."""
    local, _, domain = bot_address.rpartition("@")
    return f"{local}+{signed_tag(secret, game, seat, salt)}@{domain}"


@dataclass(frozen=True, slots=True)
class SignedTag:
    game: str
    seat: str


def parse_tag(tag: str) -> SignedTag | None:
    """The game and seat a tag claims, not yet verified."""
    match = _TAG_RE.match(tag.strip().lower())
    return SignedTag(match["game"], match["seat"]) if match else None


def verify_tag(tag: str, secrets_in_force: Sequence[str], salt: str = "") -> SignedTag | None:
    """The game and seat a tag names, if its MAC verifies under any secret in force."""
    match = _TAG_RE.match(tag.strip().lower())
    if not match:
        return None
    game, seat, given = match["game"], match["seat"], match["mac"]
    for secret in secrets_in_force:
        if secret and hmac.compare_digest(mac(secret, game, seat, salt), given):
            return SignedTag(game, seat)
    return None


def tag_in_recipients(bot_address: str, recipients: Sequence[str]) -> str | None:
    """The plus-tag of the first recipient that is the bot's address with a tag."""
    local, _, domain = bot_address.lower().rpartition("@")
    for address in recipients:
        a_local, _, a_domain = address.lower().rpartition("@")
        if a_domain != domain:
            continue
        base, plus, tag = a_local.partition("+")
        if base == local and plus and tag:
            return tag
    return None


def tag_in_subject(subject: str) -> str | None:
    match = _SUBJECT_TAG_RE.search(subject)
    return match.group(0)[1:-1].lower() if match else None


def password_in_text(text: str) -> str | None:
    match = _PASSWORD_RE.search(text)
    return match.group(1) if match else None


def passwords_in_text(text: str, limit: int = 10) -> list[str]:
    """The passwords of the PASSWORD lines of a mail (at most `limit`), in order."""
    return [m.group(1) for m, _ in zip(_PASSWORD_RE.finditer(text), range(limit), strict=False)]


def strip_password_lines(text: str) -> str:
    return _PASSWORD_RE.sub("", text)


def _domain(domain: str) -> str:
    """A domain for comparison: lower case, no trailing dot, a Unicode domain as its A-label."""
    domain = domain.strip().lower().rstrip(".")
    if not domain.isascii():
        try:
            domain = domain.encode("idna").decode("ascii")
        except UnicodeError:
            return ""
    return domain


@functools.cache
def _suffixes() -> PublicSuffixList:
    """The Public Suffix List as the installed `publicsuffixlist` bundles it (read once, on
    first use: nothing is read at import time, and nothing is fetched)."""
    return PublicSuffixList()


def organizational_domain(domain: str) -> str | None:
    """The organizational domain of `domain` (RFC 7489 3.2: one label below its public suffix,
    by the Public Suffix List, private registries such as github.io included), or None when
    `domain` is a public suffix itself (``test``, ``co.uk``): nobody owns that."""
    domain = _domain(domain)
    return _suffixes().privatesuffix(domain) if domain else None


def _aligned(domain: str, sender_domain: str) -> bool:
    """DMARC's relaxed alignment (RFC 7489 3.1.1): the signing domain and the From's domain
    have the same organizational domain. ``d=test`` aligns with nothing (it counted
    for ``kelly@x.test``), nor does ``d=co.uk`` with ``foo.co.uk``."""
    organizational = organizational_domain(domain)
    return organizational is not None and organizational == organizational_domain(sender_domain)


def authentication_passes(results: Sequence[AuthResult], authserv_id: str, sender: str) -> bool:
    """The topmost Authentication-Results of our own server says DMARC or aligned DKIM pass.

    Only the topmost header with our authserv-id counts (RFC 8601 §5: headers further down,
    or naming another server, may have been written by anyone). ``dmarc=pass`` counts only
    when its ``header.from`` is the domain of `sender` (the From the bot parsed; case and a
    trailing dot aside): a pass for another domain, or one that does not say which, proves
    nothing about this From.
    """
    if not authserv_id:
        return False
    ours = [r for r in results if r.authserv_id.lower() == authserv_id.lower()]
    if not ours or results[0].authserv_id.lower() != authserv_id.lower():
        return False
    top = ours[0]
    sender_domain = _domain(sender.rpartition("@")[2]) if "@" in sender else ""
    if not sender_domain:
        return False
    if top.dmarc == "pass" and top.dmarc_from and _domain(top.dmarc_from) == sender_domain:
        return True
    return any(_aligned(d, sender_domain) for d in top.dkim_pass_domains)


def describe_authentication(results: Sequence[AuthResult], authserv_id: str, sender: str) -> str:
    """What our receiving server's Authentication-Results say of `sender`'s mail, in words, as
    `authentication_passes` weighs them (for PING: why a mail was accepted or not). Values
    from the mail are shown as one short printable line each (they come from outside)."""
    if not authserv_id:
        return "no receiving server is named to trust (the operator has not set [auth] authserv_id)"
    ours = [r for r in results if r.authserv_id.lower() == authserv_id.lower()]
    if not ours:
        return f"the mail carries no Authentication-Results of {echo(authserv_id, 80)}"
    if results[0].authserv_id.lower() != authserv_id.lower():
        return f"the topmost Authentication-Results is not {echo(authserv_id, 80)}'s, so none counts (RFC 8601 5)"
    top = ours[0]
    sender_domain = _domain(sender.rpartition("@")[2]) if "@" in sender else ""
    if top.dmarc == "pass" and top.dmarc_from and _domain(top.dmarc_from) == sender_domain:
        return f"dmarc=pass for {echo(sender_domain, 80)}"
    aligned = [d for d in top.dkim_pass_domains if sender_domain and _aligned(d, sender_domain)]
    if aligned:
        return f"dkim=pass for {echo(aligned[0], 80)}, aligned with the From's domain {echo(sender_domain, 80)}"
    dmarc = top.dmarc or "none"
    if top.dmarc == "pass":
        dmarc = f"pass, but for {echo(top.dmarc_from or 'no domain named', 80)}, not {echo(sender_domain, 80)}"
    dkim = (
        (
            "pass for "
            + ", ".join(echo(d, 80) for d in top.dkim_pass_domains[:3])
            + f" (none aligned with {echo(sender_domain, 80)})"
        )
        if top.dkim_pass_domains
        else "no pass"
    )
    return f"dmarc={echo(dmarc, 160)}; dkim={dkim}; spf={echo(top.spf or 'none', 40)}"
