"""The SMTP client's own dot-stuffing and address quoting give what smtplib's would."""

from __future__ import annotations

import smtplib

from hypothesis import given
from hypothesis import strategies as st

from bot.mail_out.smtp import quote_periods, quoteaddr

# Mail made of the bytes that decide dot-stuffing: dots, both halves of a line end, a letter.
_MAIL = st.lists(st.sampled_from([b".", b"\r", b"\n", b"\r\n", b"a", b"..", b"\r\n."]), max_size=40).map(b"".join)


@given(_MAIL)
def test_quote_periods_is_smtplibs(data: bytes) -> None:
    assert quote_periods(data) == smtplib._quote_periods(data)  # type: ignore[attr-defined]


@given(_MAIL)
def test_quote_periods_hands_back_mail_with_no_line_starting_with_a_dot_as_it_is(data: bytes) -> None:
    stuffed = quote_periods(data)
    if stuffed == data:
        assert stuffed is data
    else:
        assert data.startswith(b".") or b"\n." in data


def test_a_dot_after_a_lone_cr_is_not_stuffed_as_smtplib_leaves_it() -> None:
    assert quote_periods(b"a\r.b") == b"a\r.b"
    assert quote_periods(b"a\r\n.b\n.c") == b"a\r\n..b\n..c"


@given(st.sampled_from(["a@b.test", "a.b+c@d-e.test", "A B <a@b.test>", "a@b", "", "x y@z.test", '"q"@z.test']))
def test_quoteaddr_is_smtplibs(address: str) -> None:
    assert quoteaddr(address) == smtplib.quoteaddr(address)
