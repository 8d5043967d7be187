"""Which addresses the bot will keep and write to: one rule for every door.

An address reaches the bot from a mail's From (every answer, JOIN, OBSERVE), from ADDRESS,
from the GM's REPLACE and from the command line (`flagman game new --player`, `--gm`). Each
door asks `address_problem`, so no address is stored that a relay would refuse or a Maildir
could not name (a 313-character From stalled every later mail of the outbox).

* RFC 5321 4.5.3.1: a local part of at most 64 octets, a domain of at most 255, and a path
  (the address between angle brackets) of at most 256 octets, so an address of at most 254;
  each label of the domain at most 63 octets (RFC 1035 2.3.4).
* Plain characters only: no white space, control characters, quotes, comments or other
  specials (RFC 5322 3.2.3) on either side of the one "@", and a domain of non-empty
  dot-separated labels. Non-ASCII letters are fine (SMTPUTF8).
"""

from __future__ import annotations

import re

MAX_LOCAL_PART = 64
MAX_DOMAIN = 255
MAX_ADDRESS = 254  # a path of 256 octets, angle brackets included
MAX_LABEL = 63

_ADDR_CHAR = r'[^\s@<>"(),:;\[\]\\\x00-\x1f\x7f-\x9f'
PLAIN_ADDRESS = re.compile(_ADDR_CHAR + r"]+@" + _ADDR_CHAR + r".]+(?:\." + _ADDR_CHAR + r".]+)*")


def address_problem(address: str) -> str | None:
    """Why `address` cannot be a player's, a GM's or an observer's address, or None if it can.

    The reason is short and never repeats the address (it may be anyone's text)."""
    if len(address) > 4 * MAX_ADDRESS or not PLAIN_ADDRESS.fullmatch(address):
        return "not a plain mail address (name@domain, without spaces, quotes or brackets)"
    local, _, domain = address.rpartition("@")
    octets = len(address.encode("utf-8", "surrogatepass"))
    if len(local.encode("utf-8", "surrogatepass")) > MAX_LOCAL_PART:
        return f"the part before the @ is longer than the {MAX_LOCAL_PART} characters mail allows"
    if len(domain.encode("utf-8", "surrogatepass")) > MAX_DOMAIN or any(
        len(label.encode("utf-8", "surrogatepass")) > MAX_LABEL for label in domain.split(".")
    ):
        return "the domain is longer than mail allows (255 characters, 63 between dots)"
    if octets > MAX_ADDRESS:
        return f"longer than the {MAX_ADDRESS} characters a mail address may have"
    return None


def is_address(address: str) -> bool:
    """`address` may be stored and written to (`address_problem` finds nothing)."""
    return address_problem(address) is None


__all__ = ["MAX_ADDRESS", "MAX_DOMAIN", "MAX_LABEL", "MAX_LOCAL_PART", "PLAIN_ADDRESS", "address_problem", "is_address"]
