"""The bytes `bot.mail_out.compose` writes itself are the stdlib's: its quoted-printable text
part is what ``set_content(..., cte="quoted-printable")`` makes of any text, its HTML part what
``binascii.b2a_qp`` makes of the whole HTML, however often a block or a line of it was encoded
before, with CRLF line ends as the mail carries them; its base64 what ``base64.encodebytes``
writes."""

from __future__ import annotations

import base64
import binascii
from email import quoprimime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.mail_out import compose
from bot.mail_out.compose import _base64, _base64_lines, _html_qp, _html_qp_crlf, _text_qp_crlf

# Any text, with what makes quoted-printable do more than quote an octet: long lines, "=",
# blanks and tabs at the ends of lines, line ends of every kind, non-ASCII letters.
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(["a", "=", " ", "\t", "\n", "\r", "-", "é", "€", "\x0b", "\x1c", "\u2028", "\x00"]),
        st.characters(exclude_categories=["Cs"]),  # text that can be written in UTF-8
    ),
    max_size=400,
)
# Blocks (parted by blank lines) to repeat, as a turn's letters repeat theirs.
_BLOCKS = st.lists(_TEXT, min_size=1, max_size=4)


@given(_TEXT, st.integers(0, 100))
def test_the_text_part_is_quoted_printable_as_the_stdlib_writes_it(text: str, long_line: int) -> None:
    body = text + "\n" + "x" * long_line + " \n-- \n"
    for case in (text, body):
        lines = case.encode("utf-8").splitlines()
        expected = quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), 78)
        assert _text_qp_crlf(case) == expected.replace("\n", "\r\n")


@given(_BLOCKS, st.lists(st.integers(0, 3), max_size=8), st.sampled_from(["", "\n", ".", " ", "\n\n", "\r"]))
def test_the_html_part_is_quoted_printable_as_binascii_writes_it(blocks: list[str], order: list[int], end: str) -> None:
    for picks in ([0], order):
        html = "\n\n".join(blocks[i % len(blocks)] for i in picks) + end
        expected = binascii.b2a_qp(html.replace("\r\n", "\n").encode("utf-8"), istext=True).decode("ascii")
        assert _html_qp(html) == expected


@given(_BLOCKS, st.lists(st.integers(0, 3), max_size=8))
def test_the_text_part_is_the_same_however_often_its_blocks_were_encoded(blocks: list[str], order: list[int]) -> None:
    for picks in ([0], order):
        text = "\n\n".join(blocks[i % len(blocks)] for i in picks)
        lines = text.encode("utf-8").splitlines()
        expected = quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), 78)
        assert _text_qp_crlf(text) == expected.replace("\n", "\r\n")


@given(_BLOCKS, st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8))
def test_a_block_not_seen_is_encoded_as_a_whole_from_lines_seen_in_others(
    blocks: list[str], mixes: list[tuple[int, int]]
) -> None:
    """Property: blocks made of the lines of blocks encoded before (a seat's own block shares
    most lines with the other seats'), with CRLF line ends or not, encode as the whole text."""
    lines = [line for block in blocks for line in block.split("\n")]
    texts = ["\n\n".join(blocks)]
    for first, second in mixes:
        mixed = lines[first % len(lines) :] + lines[: second % len(lines)]
        texts.append("\n\n".join([blocks[first % len(blocks)], "\n".join(mixed), blocks[second % len(blocks)]]))
    for text in texts:
        octets = text.encode("utf-8")
        expected_html = binascii.b2a_qp(text.replace("\r\n", "\n").encode("utf-8"), istext=True).decode("ascii")
        expected_text = quoprimime.body_encode((b"\n".join(octets.splitlines()) + b"\n").decode("latin-1"), 78)
        assert _html_qp(text) == expected_html
        assert _html_qp_crlf(text) == expected_html.replace("\n", "\r\n")
        assert _text_qp_crlf(text) == expected_text.replace("\n", "\r\n")


@given(st.binary(max_size=600))
def test_base64_is_written_as_encodebytes_writes_it_with_crlf(data: bytes) -> None:
    """Property: a picture's or a calendar object's base64, 76 characters a line, CRLF line ends."""
    expected = base64.encodebytes(data).decode("ascii").replace("\n", "\r\n")
    assert _base64(data) == expected
    assert _base64_lines(data) == expected
    assert _base64_lines(bytes(data)) == expected  # kept by content: another object of the same bytes


def test_full_tables_are_emptied_and_the_encoding_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables of encoded blocks and lines are emptied when full (a bound on the memory a
    process keeps), and what is encoded after is still the stdlib's."""
    monkeypatch.setattr(compose, "_BLOCKS_MOST", 3)
    monkeypatch.setattr(compose, "_LINES_MOST", 5)
    monkeypatch.setattr(compose, "_ENCODED", {})
    for n in range(40):
        text = "\n\n".join(f"block {n % 7} line {i}\nsame line\n{'x' * (70 + n)} " for i in range(n % 5 + 1)) + "\nend"
        expected = binascii.b2a_qp(text.encode("utf-8"), istext=True).decode("ascii")
        assert _html_qp_crlf(text) == expected.replace("\n", "\r\n")
        assert all(len(table) <= (3 if " line" not in name else 5) for name, table in compose._ENCODED.items())
