"""The layout of every letter: one blank line parts two blocks, never two or more, and no blank
line ends the text (`bot.mail_out.render.tidy`); a table prints one row a line."""

from __future__ import annotations

import re
from email.message import EmailMessage

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.mail_out.render import tidy
from tests.bot.gm_helpers import body_of
from tests.bot.letters.whole_games import GAMES, whole_game


def _text(mail: EmailMessage) -> str:
    return body_of(mail).replace("\r\n", "\n")


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_no_letter_of_a_whole_game_has_two_blank_lines_in_a_row_or_ends_blank(kind: str) -> None:
    """Stray blank lines were the playtest's finding: "Results of ...:\\n\\n\\nWhat happened", three
    after "You are its GM.", one before the signature's "-- " of results, STATUS and PREVIEW.
    Every mail of a game played to its final result (`whole_game`: turn sheets, confirmations,
    STATUS, HISTORY, PREVIEW, results, the GM's copies, the digest, the final result) has at
    most one blank line between two blocks, none before its signature and none at its end; the
    final result, the players' and the GM's, lists its places one a line under "Final result:"."""
    people = GAMES[kind][1]
    letters = whole_game(kind)
    finals = [m for m in letters if "inal result of" in str(m["Subject"])]
    assert len(finals) == len(people) + 1, [str(m["Subject"]) for m in letters[-6:]]
    for mail in letters:
        text = _text(mail)
        where = f"{mail['To']}: {mail['Subject']}"
        assert not re.search(r"\n[ \t]*\n[ \t]*\n", text), f"two blank lines in a row in {where}:\n{text}"
        assert text.endswith("\n") and not text.endswith("\n\n"), f"blank end of {where}:\n{text}"
        assert not text.startswith("\n"), where
        assert "\n\n-- \n" not in text, f"a blank line before the signature of {where}:\n{text}"
    for mail in finals:
        text = _text(mail)
        table = text.split("\nFinal result:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        places = [line for line in table if re.match(r"  \d+\. ", line)]
        assert len(places) == len(table) >= 2, f"{mail['To']}:\n{text}"
        assert all(len(re.findall(r"\b\d+\. ", line)) == 1 for line in places), table


_LINES = st.lists(st.sampled_from(["", " ", "\t", "-- ", "a", "  b c  ", "> d "]), max_size=30)


@given(_LINES)
def test_tidy_keeps_every_word_and_at_most_one_blank_line_between_blocks(lines: list[str]) -> None:
    """A letter's text as sent: the same lines of words in the same order (blanks at a line's
    end dropped, the signature's "-- " kept), one blank line where the template left one or
    more, none at the start or the end, and none before the signature's "-- "."""
    text = tidy("\n".join(lines))
    if not any(line.strip() or line == "-- " for line in lines):
        assert text == "\n"
        return
    out = text.split("\n")
    assert text.endswith("\n") and out[-1] == ""
    out = out[:-1]
    words = [line if line == "-- " else line.rstrip() for line in lines]
    assert [line for line in out if line] == [line for line in words if line]
    assert all(line == "-- " or line == line.rstrip() for line in out)
    assert not any(a == b == "" for a, b in zip(out, out[1:], strict=False))
    assert not any(a == "" and b == "-- " for a, b in zip(out, out[1:], strict=False))
    assert out[0] != "" and out[-1] != ""
