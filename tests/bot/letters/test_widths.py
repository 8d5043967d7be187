"""What keeps every letter within 78 columns (`bot.mail_out.render`), over any text: `tidy`
breaks a laid-out line too wide (the rules' syntax, a table's row, a quote) at spaces only, so
every word is kept whole and in its order, and `fit_subject` keeps a subject's start (the
game's tag, the news) and leaves a subject that fits as it is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.mail_out.render import LINE_WIDTH, columns, fit_subject, tidy
from rules import fair

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789|<.,:;()'-", min_size=1, max_size=14)
_LINE = st.builds(
    lambda indent, words, gaps: (
        " " * indent + "".join(w + (" " * g) for w, g in zip(words, gaps, strict=False)).rstrip()
    ),
    st.integers(0, 30),
    st.lists(_WORD, min_size=1, max_size=24),
    st.lists(st.integers(1, 12), min_size=24, max_size=24),
)


def _words(text: str) -> list[str]:
    return text.split()


@given(st.lists(_LINE, min_size=1, max_size=8))
def test_a_laid_out_line_too_wide_is_broken_at_spaces_its_words_whole_and_in_order(lines: list[str]) -> None:
    body = "\n".join(lines) + "\n-- \nFlagman\n"
    out = tidy(body).split("\n-- \n")[0].splitlines()
    assert _words("\n".join(out)) == _words("\n".join(lines))
    assert all(len(line) <= LINE_WIDTH for line in out), out


def test_a_quote_too_wide_keeps_its_mark_on_every_line() -> None:
    body = "    > " + " ".join(["word"] * 20) + "\n"
    out = tidy(body).splitlines()
    assert [line[:6] for line in out] == ["    > ", "    > "] and all(len(line) <= LINE_WIDTH for line in out)


def test_the_syntax_breaks_with_a_hanging_indent_and_an_explanation_under_itself() -> None:
    body = (
        "Syntax:\n"
        "  USE n (or A n, BID n or just n): spend n EP; your score this turn is n; n from 0 to 12.\n"
        "  PASS YES|NO            force past a blocking car on the passing table (default NO: brake instead)\n"
    )
    assert tidy(body).splitlines() == [
        "Syntax:",
        "  USE n (or A n, BID n or just n): spend n EP; your score this turn is n; n",
        "      from 0 to 12.",
        "  PASS YES|NO            force past a blocking car on the passing table",
        "                         (default NO: brake instead)",
    ]


def test_a_table_too_wide_for_its_usual_columns_narrows_them() -> None:
    heading = ["Place", "Player", "Square", "Heading", "Lap", "Checkpoint", "Recklessness", "Crashes", "Status"]
    rows = [heading, ["1.", "rita (robot)", "10,3", "NE", "1/3", "2/5", "0", "1", "finished"]]
    table = columns(rows).splitlines()
    assert max(map(len, table)) <= LINE_WIDTH
    assert [line.split() for line in table] == [heading, ["1.", "rita", "(robot)", *rows[1][2:]]]
    usual = columns([["Place", "Player", "EP", "Score"], ["1.", "kelly", "3", "10"]])
    assert usual.splitlines()[1] == "1.     kelly                   3       10"  # as it always was


_TAG = st.from_regex(r"\[[a-z][a-z0-9-]{0,20}\]", fullmatch=True)


@given(_TAG, st.lists(_WORD, min_size=1, max_size=30))
def test_a_subject_keeps_to_78_characters_and_its_start(tag: str, words: list[str]) -> None:
    subject = " ".join([tag, *words])
    fitted = fit_subject(subject)
    assert len(fitted) <= LINE_WIDTH
    if len(subject) <= LINE_WIDTH:
        assert fitted == subject
    else:
        assert fitted.startswith(tag)


def test_a_long_subject_drops_the_year_then_its_brackets_then_its_last_clause() -> None:
    results = "[sc1] Results of Race turn 3 (leader on lap 2 of 3); next due Sun 11 Jan 2026 14:00 GMT"
    assert fit_subject(results) == "[sc1] Results of Race turn 3; next due Sun 11 Jan 14:00 GMT"
    sheet = "[sp-cup-3] GM copy: SpeedPhreakz Set-up and round 1, due Tue 6 Jan 2026 09:00 AEDT"
    assert fit_subject(sheet) == "[sp-cup-3] GM copy: SpeedPhreakz Set-up and round 1, due Tue 6 Jan 09:00 AEDT"
    long_name = "[sp-spring-cup-round-3] GM copy: SpeedPhreakz Set-up and round 1, due Tue 6 Jan 2026 09:00 GMT"
    assert fit_subject(long_name) == "[sp-spring-cup-round-3] GM copy: SpeedPhreakz Set-up and round 1"
    assert fit_subject("[g1] " + "word " * 30) == "[g1] " + " ".join(["word"] * 14) + "..."


def test_the_block_of_values_is_kept_whole_so_a_long_order_still_checks() -> None:
    """A seat's orders in the block that `flagman verify` and check-dice.py read (rules.fair.
    read_mail) stay on their lines however wide: broken in two, the order read back would be
    another text than the one its receipt was made of."""
    order = "SPEED 120 PATH " + " ".join(f"C{i}" for i in range(30)) + " TYRES soft"
    body = (
        "To check the receipts yourself, save this mail as a file and run check-dice.py\n"
        "on it. What it reads: [flagman-check]\n"
        "  game        sc1\n"
        "  secret      " + "ab" * 32 + "\n"
        "  receipt     anna " + "cd" * 32 + "\n"
        "  orders      anna\n"
        "      > " + order + "\n"
        "\n" + " ".join(["Running text after the block is filled as before."] * 3) + "\n"
    )
    out = tidy(body)
    found = fair.read_mail(out.encode())
    assert found is not None and found.orders == {"anna": order}
    after = out.split("\n\n", 1)[1].splitlines()
    assert all(len(line) <= LINE_WIDTH for line in after), after


_ANY_LINE = st.one_of(
    _LINE,
    st.just(""),
    st.builds(
        lambda lead, words: lead + " ".join(words),
        st.sampled_from(["- ", "  * ", "   - "]),
        st.lists(_WORD, max_size=30),
    ),
    st.builds(" ".join, st.lists(_WORD, min_size=1, max_size=30)),
)


@given(st.lists(_ANY_LINE, max_size=14), st.booleans())
def test_a_block_is_filled_the_same_wherever_it_stands_and_however_often(lines: list[str], again: bool) -> None:
    """`tidy` fills the lines between two blank lines once a process (a turn's letters share
    most of them): a blank line starts every run and row afresh, so filling each block alone,
    or taking it as filled before, gives the lines filling them all at once gives."""
    from bot.mail_out.render import _filled, _filled_block

    expected = _filled_block(list(lines))
    if again:
        _filled(list(lines))
    assert _filled(list(lines)) == expected
