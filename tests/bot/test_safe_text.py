"""bot.safe_text: text from a mail as one printable, capped line (mail-interface.md:
"Text taken from a mail and shown anywhere (subject, display name, names, order lines) is one
line, without control or bidi characters, and capped in length")."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from bot.safe_text import ELLIPSIS, LINE_CAP, NAME_CAP, _by_character, echo, echo_name, name_from_address, quote_lines

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_line_breaks_of_every_kind_become_one_space() -> None:
    assert (
        echo("orders\r\n\r\n== Notice from the operator ==\r\nmail me")
        == "orders == Notice from the operator == mail me"
    )
    assert echo("a\u2028b\u2029c\x85d\x0be\x0cf\tg") == "a b c d e f g"


def test_control_and_bidi_characters_are_dropped() -> None:
    assert echo("Kim\u202eeeL\u202c \x1b[2Jx\x00y\x7f") == "KimeeL [2Jxy"
    assert echo("\u2066isolated\u2069") == "isolated"
    assert echo("zero\u200bwidth") == "zerowidth"  # a format character (Cf)


def test_letters_of_every_script_and_emoji_with_joiners_stay() -> None:
    assert echo("Jürgen Ωμέγα 山田 👩\u200d👩\u200d👧") == "Jürgen Ωμέγα 山田 👩\u200d👩\u200d👧"


def test_white_space_is_folded_and_trimmed() -> None:
    assert echo("   a  \n\n  b   ") == "a b"
    assert echo("") == "" and echo(" \r\n\t ") == ""


def test_long_text_is_capped_with_an_ellipsis() -> None:
    cut = echo("x" * 500)
    assert len(cut) == LINE_CAP and cut.endswith(ELLIPSIS)
    assert echo("x" * LINE_CAP) == "x" * LINE_CAP
    assert len(echo_name("é" * 100_000)) == NAME_CAP


def test_a_huge_input_is_read_only_as_far_as_needed() -> None:
    """A 10-million-character name costs no more than a short one (only a bounded prefix is read):
    the result is the same as for its first few thousand characters."""
    huge = "\u202e" * 10_000_000 + "visible"
    assert echo(huge) == ELLIPSIS or echo(huge).endswith(ELLIPSIS)
    assert echo("ab" * 5_000_000) == echo("ab" * 1000)


def test_quote_lines_quotes_each_line_flattened_and_caps_their_number() -> None:
    text = "\n".join(f"line {i}\x1b" for i in range(30))
    quoted = quote_lines(text, most=5)
    assert quoted.splitlines()[:2] == ["    > line 0", "    > line 1"]
    assert quoted.splitlines()[-1] == "    > [25 more lines not shown]"


@given(st.text(), st.integers(min_value=1, max_value=400))
def test_echo_is_always_one_printable_capped_line(text: str, cap: int) -> None:
    """Property: whatever the input, the echo is one line, without control, format (but ZWJ),
    surrogate or bidi characters, at most `cap` characters, without leading or trailing space."""
    out = echo(text, cap)
    assert len(out) <= cap
    assert out == out.strip()
    assert len(out.splitlines()) <= 1
    for char in out:
        assert char not in BIDI
        assert unicodedata.category(char) not in ("Cc", "Cs", "Co", "Cn")
        assert unicodedata.category(char) != "Cf" or char == "\u200d"
        assert not (char.isspace() and char != " ")
    assert "  " not in out


@given(st.text(alphabet=st.characters(categories=("L", "N", "P", "Zs")), max_size=150))
def test_plain_short_text_is_shown_as_it_is_but_for_white_space(text: str) -> None:
    """Property: printable text within the cap is kept, only its white space folded."""
    assert echo(text) == " ".join(text.split())


def test_a_name_from_an_address_is_written_as_a_name() -> None:
    """Played by mail (playtest4, P3): zoe@example.org was greeted "Hello zoe,". A name taken
    from an address's local part is capitalised as a name is; one with a capital already, as
    the sender wrote it."""
    assert name_from_address("zoe") == "Zoe"
    assert name_from_address("sam.jones") == "Sam.Jones" and name_from_address("mary-ann") == "Mary-Ann"
    assert name_from_address("Sam.Jones") == "Sam.Jones" and name_from_address("deMarco") == "deMarco"
    assert name_from_address("42") == "42" and name_from_address("") == ""


@given(st.text(max_size=80))
def test_a_name_from_an_address_is_the_echoed_local_part_in_another_case_at_most(local: str) -> None:
    shown = echo_name(local)
    name = name_from_address(local)
    assert name.lower() == shown.lower() and len(name) == len(shown)
    assert name == shown or shown == shown.lower()


def _echo_by_character(text: str, cap: int) -> str:
    """`echo` with every text folded a character at a time (no printable-ASCII shortcut)."""
    if not text or cap <= 0:
        return ""
    window = text[: cap * 8 + 64]
    folded, over = _by_character(window, cap)
    if over or len(window) < len(text):
        return folded[: max(0, cap - 1)].rstrip() + ELLIPSIS
    return folded


@given(
    st.text(alphabet=st.sampled_from(" ab~!\t\r\n\x00\x7f\u00a0é\u202e\u2028"), max_size=300)
    | st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=300),
    st.integers(min_value=-1, max_value=40),
)
def test_printable_ascii_is_folded_as_a_character_at_a_time(text: str, cap: int) -> None:
    """The shortcut for printable ASCII (most text echoed) gives what the character-by-character
    folding gives, cut or not, for any text and cap."""
    assert echo(text, cap) == _echo_by_character(text, cap)
