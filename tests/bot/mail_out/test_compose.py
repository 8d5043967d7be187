"""The bytes `bot.mail_out.compose` writes itself are the stdlib's: its quoted-printable text
part is what ``set_content(..., cte="quoted-printable")`` makes of any text."""

from __future__ import annotations

from email import quoprimime

from hypothesis import given
from hypothesis import strategies as st

from bot.mail_out.compose import _text_qp

# Any text, with what makes quoted-printable do more than quote an octet: long lines, "=",
# blanks and tabs at the ends of lines, line ends of every kind, non-ASCII letters.
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(["a", "=", " ", "\t", "\n", "\r", "-", "é", "€", "\x0b", "\x1c", "\u2028", "\x00"]),
        st.characters(),
    ),
    max_size=400,
)


@given(_TEXT, st.integers(0, 100))
def test_the_text_part_is_quoted_printable_as_the_stdlib_writes_it(text: str, long_line: int) -> None:
    body = text + "\n" + "x" * long_line + " \n-- \n"
    for case in (text, body):
        lines = case.encode("utf-8").splitlines()
        expected = quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), 78)
        assert _text_qp(case) == expected
