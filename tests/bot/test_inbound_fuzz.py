"""bot.inbound never raises (testing.md, "Fault injection": broken MIME, unknown charsets, ...).

Hypothesis feeds random bytes and mutations of the project's own fixtures (byte flips,
truncation, duplicated header lines, spliced fixtures) to `parse_inbound`; the invariants
hold for every input.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.inbound import (
    IgnoreReason,
    Inbound,
    address_parts,
    parse_authentication_results,
    parse_inbound,
    strip_quotes,
)

MAIL = Path(__file__).resolve().parents[1] / "data" / "mail"
FIXTURES = [p.read_bytes() for p in sorted(MAIL.glob("*.eml"))]
OWN = ("flagman@example.org",)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(raw: bytes, max_lines: int = 2000) -> Inbound:
    """The invariants of every Inbound, whatever the input."""
    inbound = parse_inbound(raw, own_addresses=OWN, max_lines=max_lines)
    assert isinstance(inbound, Inbound)
    assert inbound.content_hash == hashlib.sha256(raw).hexdigest()
    assert inbound.size == len(raw)
    assert inbound.message_id and "<" not in inbound.message_id[:1]
    assert inbound.sender == inbound.sender.lower()
    assert all(r == r.lower() for r in inbound.recipients)
    assert len(inbound.text.split("\n")) <= max(max_lines, 1)
    assert isinstance(inbound.ignore, IgnoreReason | None)
    assert (inbound.ignore is None) == (inbound.ignore_detail == "")
    return inbound


@st.composite
def mutated_fixture(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.sampled_from(FIXTURES)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "duplicate", "insert", "splice"]))
        if not raw:
            break
        at = draw(st.integers(0, len(raw) - 1))
        if kind == "flip":
            raw[at] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del raw[at:]
        elif kind == "duplicate":
            lines = bytes(raw).split(b"\n")
            index = draw(st.integers(0, min(len(lines) - 1, 15)))  # a header line, mostly
            lines.insert(index, lines[index])
            raw = bytearray(b"\n".join(lines))
        elif kind == "insert":
            raw[at:at] = draw(
                st.sampled_from(
                    [
                        b"\x00",
                        b"=?utf-8?q?=FF=FE?=",
                        b"=?x-unknown?b?////?=",
                        b"\r\n--000000000000abcdef\r\n",
                        b"Content-Type: multipart/mixed; boundary=\"\"\r\n",
                        b"charset=\"utf-7\"",
                        b"\r\n\r\n",
                        b"<blockquote><div class=\"gmail_quote\">",
                        b"Authentication-Results: ((;;==\"\r\n",
                    ]
                )
            )
        else:
            other = draw(st.sampled_from(FIXTURES))
            raw[at:] = other[draw(st.integers(0, len(other) - 1)) :]
    return bytes(raw)


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_raise(raw: bytes) -> None:
    """Any bytes give an Inbound."""
    check(raw)


@FUZZ
@given(mutated_fixture(), st.integers(0, 50))
def test_mutated_fixtures_never_raise(raw: bytes, max_lines: int) -> None:
    """Byte flips, truncation, duplicated header lines, hostile insertions: an Inbound, capped."""
    check(raw, max_lines=max_lines)


@FUZZ
@given(st.text(max_size=2000))
def test_strip_quotes_keeps_no_quote_line(text: str) -> None:
    """Whatever the text, no kept line is a ">" quote, and the result is a subset of the lines."""
    stripped = strip_quotes(text)
    source = {line.rstrip() for line in text.split("\n")}
    for line in stripped.split("\n"):
        assert not line.lstrip().startswith(">")
        assert not line or line in source


@FUZZ
@given(st.text(max_size=500))
def test_authentication_results_never_raise(value: str) -> None:
    """Any header value gives an AuthResult with lower-case results."""
    result = parse_authentication_results(value)
    assert result.dmarc is None or result.dmarc == result.dmarc.lower()
    assert all(d == d.lower() for d in result.dkim_pass_domains)


@FUZZ
@given(
    st.from_regex(r"[a-z0-9.]{1,10}", fullmatch=True),
    st.from_regex(r"[a-z0-9.\-]{1,20}", fullmatch=True),
    st.from_regex(r"[a-z0-9.]{1,10}\.[a-z]{2,5}", fullmatch=True),
)
def test_address_parts_round_trip(local: str, tag: str, domain: str) -> None:
    """local+tag@domain splits back into its parts."""
    assert address_parts(f"{local}+{tag}@{domain}") == (local, tag, domain)
    assert address_parts(f"{local}@{domain}") == (local, None, domain)


@FUZZ
@given(
    st.from_regex(r'[A-Za-z0-9 .,\'"=?@<>()\\-]{0,30}', fullmatch=True),
    st.from_regex(r"[a-z0-9.+_-]{1,12}@[a-z0-9-]{1,10}\.[a-z]{2,4}", fullmatch=True),
)
def test_from_address_agrees_with_getaddresses(name: str, addr: str) -> None:
    """The fast path for common From shapes finds the same address as email.utils.getaddresses."""
    from email.utils import getaddresses

    from bot.inbound import _first_address

    for value in (f"{name} <{addr}>", f'"{name}" <{addr}>', addr):
        expected = [a for _, a in getaddresses([value]) if "@" in a]
        found = _first_address(value)[1]
        if expected:
            assert found == expected[0], value
