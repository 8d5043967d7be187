"""bot.mail_in.parse never raises (testing.md, "Fault injection": broken MIME, unknown charsets, ...).

Hypothesis feeds random bytes and mutations of the project's own fixtures (byte flips,
truncation, duplicated header lines, spliced fixtures) to `parse_inbound`; the invariants
hold for every input. Also hostile header sections: long and many headers (many
Authentication-Results, huge address lists, long encoded words, many From fields), and the
caps as invariants: the subject and the display name are one printable line (mail-interface.md,
"Text taken from a mail and shown anywhere ... is one line, without control or bidi
characters, and capped in length"), at most MAX_AUTH_RESULTS results, a bounded number of
recipients. No timing assertions (bench/hostile.py times the parser).
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.letters.records import ignore_detail
from bot.mail_in.parse import (
    MAX_ADDRESSES_PER_FIELD,
    MAX_AUTH_RESULTS,
    MAX_RECIPIENT_FIELDS,
    IgnoreReason,
    Inbound,
    address_parts,
    cap_header_section,
    parse_authentication_results,
    parse_inbound,
    strip_quotes,
)
from bot.safe_text import LINE_CAP, NAME_CAP

MAIL = Path(__file__).resolve().parents[2] / "data" / "mail"
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
    assert (inbound.ignore is None) == (inbound.ignore_why is None)
    # What is taken from the headers is capped, and shown text is one printable line.
    assert len(inbound.subject) <= LINE_CAP and printable_line(inbound.subject)
    assert len(inbound.sender_name) <= NAME_CAP and printable_line(inbound.sender_name)
    assert len(inbound.auth_results) <= MAX_AUTH_RESULTS
    assert len(inbound.recipients) <= 4 * MAX_RECIPIENT_FIELDS * MAX_ADDRESSES_PER_FIELD
    if inbound.ignore is not None and inbound.ignore is not IgnoreReason.UNPARSEABLE:
        assert printable_line(ignore_detail(inbound.ignore_why))
    return inbound


_NOT_SHOWN = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")


def printable_line(text: str) -> bool:
    """One line without control, format (bidi) or separator characters, no surrounding space."""
    return text == text.strip() and not any(
        ch in _NOT_SHOWN or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") for ch in text
    )


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
                        b'Content-Type: multipart/mixed; boundary=""\r\n',
                        b'charset="utf-7"',
                        b"\r\n\r\n",
                        b'<blockquote><div class="gmail_quote">',
                        b'Authentication-Results: ((;;=="\r\n',
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

    from bot.mail_in.parse import _first_address

    for value in (f"{name} <{addr}>", f'"{name}" <{addr}>', addr):
        expected = [a for _, a in getaddresses([value]) if "@" in a]
        found = _first_address(value)[1]
        if expected:
            assert found == expected[0], value


# --- hostile header sections ------------------------------------------------------------------

# Pieces of header text that have stalled or fooled parsers: encoded words that decode to
# CR LF, controls and bidi overrides, unclosed quotes and comments, long tokens, separators.
_HOSTILE_TEXT = st.sampled_from(
    [
        "a",
        "é",
        "\u202e",
        "\u2066",
        "\x1b[31m",
        " ",
        "\t",
        "=?utf-8?q?=0D=0ABcc:_x@evil.example?=",
        "=?utf-8?b?AAEC?=",
        "=?x-unknown?q?abc?=",
        "=?utf-8?q?",
        '"',
        "(",
        ")",
        "\\",
        "<",
        ">",
        ",",
        ";",
        ":",
        "@",
        "seb@example.net",
        "<mallory@evil.example>",
        "dmarc=pass",
        "header.from=example.net",
        "dkim=pass header.d=example.net",
        "=",
        "\u2028",
        "\x85",
    ]
)


@st.composite
def long_text(draw: st.DrawFn) -> str:
    """Header text up to ~100,000 characters: a few hostile pieces, repeated."""
    unit = "".join(draw(st.lists(_HOSTILE_TEXT, min_size=1, max_size=6)))
    return unit * draw(st.sampled_from([1, 3, 50, 1_000, 20_000]))


def encoded(text: str) -> str:
    """`text` as folded RFC 2047 words."""
    data = text.encode("utf-8", "surrogatepass")
    return "\r\n ".join(
        "=?utf-8?b?" + base64.b64encode(data[i : i + 30]).decode() + "?=" for i in range(0, max(len(data), 1), 30)
    )


@st.composite
def hostile_mail(draw: st.DrawFn) -> tuple[bytes, int]:
    """A mail whose header section is built to be expensive: (raw, number of From fields)."""
    headers: list[str] = []
    froms = draw(st.sampled_from([0, 1, 1, 1, 2, 3, 1000]))
    name = draw(long_text())
    name = encoded(name) if draw(st.booleans()) else name
    for i in range(froms):
        headers.append(
            f"From: {name if i == 0 else 'm' + str(i)} <{'seb@example.net' if i == 0 else f'm{i}@evil.example'}>"
        )
    for _ in range(draw(st.sampled_from([0, 1, 6, 200, 2_000]))):
        headers.append(
            "Authentication-Results: mx.example.org; "
            + draw(
                st.sampled_from(
                    [
                        "dmarc=pass header.from=example.net",
                        "a" * 16_000,
                        "(" * 3_000 + "dkim=pass",
                        'x="' * 3_000,
                        "dkim=pass header.d=" + "b." * 5_000,
                    ]
                )
            )
        )
    cc_count = draw(st.sampled_from([0, 10, 1_000, 140_000]))
    per_field = draw(st.sampled_from([cc_count or 1, 100, 1]))
    addresses = [f"u{i}@x{i % 7}.example" for i in range(cc_count)]
    for start in range(0, min(cc_count, 3_000 * per_field), per_field):
        headers.append("Cc: " + ",\r\n ".join(addresses[start : start + per_field]))
    subject = draw(long_text())
    headers.append("Subject: " + (encoded(subject) if draw(st.booleans()) else subject))
    headers.append("To: flagman+rc1.seb.abcdefghijkl@example.org")
    if draw(st.booleans()):
        headers = list(reversed(headers))
    raw = ("\r\n".join(headers) + "\r\nMessage-ID: <h@evil.example>\r\n\r\nUSE 2\r\n").encode(
        "utf-8", "surrogateescape"
    )
    return raw, froms


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_mail())
def test_hostile_header_sections_never_raise_and_respect_the_caps(case: tuple[bytes, int]) -> None:
    """Long and many headers -- many Authentication-Results, huge address lists, long
    encoded words, many From fields -- give an Inbound within the caps; several From fields
    always make the mail ignored with no sender (it authenticates no one)."""
    raw, froms = case
    inbound = check(raw)
    read, _ = cap_header_section(raw)
    head = b"\r\n" + read.split(b"\r\n\r\n", 1)[0]
    if head.count(b"\r\nFrom:") > 1:  # several From fields within what is read
        assert inbound.ignore is IgnoreReason.AMBIGUOUS_SENDER, ignore_detail(inbound.ignore_why)
        assert inbound.sender == "" and inbound.sender_name == ""


@FUZZ
@given(long_text(), st.booleans())
def test_long_subjects_and_names_are_one_capped_line(text: str, as_words: bool) -> None:
    """mail-interface.md: "Text taken from a mail and shown anywhere (subject, display name, ...) is
    one line, without control or bidi characters, and capped in length"."""
    value = encoded(text) if as_words else text
    raw = f"From: {value} <seb@example.net>\r\nSubject: {value}\r\n\r\nUSE 2\r\n".encode("utf-8", "surrogateescape")
    inbound = check(raw)
    assert "\r" not in inbound.subject and "\n" not in inbound.subject


@FUZZ
@given(
    st.lists(
        st.sampled_from([b"A: 1", b" folded", b"\tfolded", b"X-Long: " + b"z" * 3000, b"", b"no colon"]), max_size=1500
    ),
    st.sampled_from([b"\r\n", b"\n", b"\r"]),
    st.binary(max_size=300),
    st.integers(0, 300),
)
def test_cap_header_section_only_cuts_out_header_lines(
    lines: list[bytes], newline: bytes, body: bytes, repeat: int
) -> None:
    """The header section is cut to its caps by removing one stretch of it, nothing
    else (lines here are shorter than the byte cap; a longer one would also get a line end):
    what comes before and after the cut is the mail as it was, and a mail within the caps is
    untouched."""
    raw = newline.join(lines * (1 + repeat // 100)) + newline + newline + body
    capped, defects = cap_header_section(raw)
    if not defects:
        assert capped == raw
        return
    assert len(capped) < len(raw)
    prefix = 0
    while prefix < len(capped) and capped[prefix] == raw[prefix]:
        prefix += 1
    assert capped[prefix:] == raw[len(raw) - (len(capped) - prefix) :], "one stretch removed, the rest intact"


def test_an_empty_loop_header_is_still_a_printable_detail() -> None:
    """Found by test_mutated_fixtures_never_raise: a loop header cut to its name ("X-Flagman-Loop:"
    and nothing after it) made the detail end in a space; it says "(empty)" instead."""
    raw = (
        b"From: Roger Racer <roger@example.net>\r\nTo: flagman@example.org\r\nSubject: x\r\n"
        b"Message-ID: <loop@example.net>\r\nX-Flagman-Loop:"
    )
    inbound = parse_inbound(raw, own_addresses={"flagman@example.org"}, loop_header="X-Flagman-Loop", max_lines=0)
    assert ignore_detail(inbound.ignore_why) == "X-Flagman-Loop: (empty)" and printable_line(
        ignore_detail(inbound.ignore_why)
    )
