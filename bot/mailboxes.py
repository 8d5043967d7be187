"""Whose mailbox an address reaches: the unit every cap on a person counts in.

``farm+1@example.org`` and ``Farm+2@Example.org`` reach one mailbox, ``farm@example.org``: a
sub-address tag (RFC 5233, ``+tag``) and the case are the sender's to vary at will, so a cap
counted on the exact address string is a cap anyone can multiply (one catch-all
mailbox started 24 practice games in an hour through plus-tags). Pure: no database, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, and_
from sqlalchemy.orm import InstrumentedAttribute

SUB_ADDRESS = "+"  # the separator of a sub-address tag in a local part


def mailbox(address: str) -> str:
    """`address` case-folded, without its sub-address tag: ``Farm+1@X.org`` -> ``farm@x.org``
    ("" for a string that is no address)."""
    local, at, domain = address.strip().casefold().rpartition("@")
    if not at or not local or not domain:
        return ""
    base = local.partition(SUB_ADDRESS)[0]
    return f"{base or local}@{domain}"


def domain(address: str) -> str:
    """The domain `address` is at, case-folded ("" for a string that is no address)."""
    local, at, host = address.strip().casefold().rpartition("@")
    return host if at and local and host else ""


def may_reach(column: InstrumentedAttribute[str], box: str) -> ColumnElement[bool]:
    """A condition on an address column (stored lower-cased) that holds for every address of
    mailbox `box`, and for a few others besides: filter the rows it selects with `mailbox`."""
    local, _, host = box.rpartition("@")
    return and_(column.startswith(local, autoescape=True), column.endswith("@" + host, autoescape=True))


def of_mailbox(addresses: Iterable[str], box: str) -> list[str]:
    """The addresses of `addresses` that reach mailbox `box`."""
    return [a for a in addresses if mailbox(a) == box]


__all__ = ["SUB_ADDRESS", "domain", "mailbox", "may_reach", "of_mailbox"]
