"""Whose mailbox an address reaches (`bot.mailboxes`; caps count "the address without
its sub-address tag, case-folded"), as properties: every tag and every casing of one address
reach one mailbox, the mailbox reaches itself, and addresses that differ in their base or
domain reach different mailboxes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.mailboxes import domain, mailbox, of_mailbox

_ATOM = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", min_size=1, max_size=12)
_TAG = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789+-", max_size=10)


@given(_ATOM, _TAG, _ATOM, st.booleans())
def test_every_tag_and_casing_of_an_address_reaches_one_mailbox(base: str, tag: str, host: str, upper: bool) -> None:
    address = f"{base}+{tag}@{host}"
    varied = address.upper() if upper else address.swapcase()
    assert mailbox(address) == mailbox(varied) == mailbox(f"{base}@{host}") == f"{base.casefold()}@{host.casefold()}"
    assert mailbox(mailbox(address)) == mailbox(address)
    assert domain(varied) == host.casefold()
    assert of_mailbox([address, varied, f"other{base}@{host}"], mailbox(address)) == [address, varied]


@given(_ATOM, _ATOM, _ATOM)
def test_different_bases_or_domains_are_different_mailboxes(base: str, other: str, host: str) -> None:
    if base.casefold() != other.casefold():
        assert mailbox(f"{base}+x@{host}") != mailbox(f"{other}+x@{host}")
        assert mailbox(f"{base}@{host}") != mailbox(f"{base}@{host}.{other}")


def test_what_is_no_address_reaches_no_mailbox() -> None:
    assert mailbox("") == mailbox("no-at-sign") == mailbox("@x.org") == mailbox("a@") == ""
    assert mailbox("+tag@x.org") == "+tag@x.org"  # a local part that is all tag is kept whole
