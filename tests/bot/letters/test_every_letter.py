"""Properties of every letter a broad scenario of the suite's helpers produces (players' orders,
hedges, words for the GM, the GM's PLOT, PROCESS, ROLLBACK, RESUME, STATUS, PREVIEW, EXTEND,
RESIGN with a farewell, a substitutes bench's seat offer, JOIN, OBSERVE and PRACTICE code mails,
HELP, a Speed Circuit race to its end):

* every letter signs with the one sign-off (templates/_common/_signoff.txt): a letter about a
  game as its race director with the zone its times are shown in, any other as the bot;
* no line is wider than 78 characters, except a line that is a bare link (a one-tap
  ``mailto:`` stands on a line of its own): running text is filled, and laid-out lines (the
  rules' syntax, tables, the dice's block of values, quotes) are laid out to fit;
* running text set in (a GM command's answer under "Done:") is a paragraph, every line of it
  at its indent: never laid out as a hanging indent, as the rules' syntax is (the GM's answers
  to PLOT, REPLACE, ROLLBACK, RESUME were one set-in line of 150 to 230 characters, then a
  line and its sentence going on four columns further in);
* every subject says its news in at most 78 characters (a ROLLBACK's letter joined every
  part's title, 136 characters; Speed Circuit's results, 86).

And the same of a whole game of each kind to its final result, with STATUS, PREVIEW, HISTORY
and the GM's digest: its sheets, results, standings, final results and every subject.
"""

from __future__ import annotations

import re
from email.message import EmailMessage

import pytest

from bot.games.turns import create_game
from bot.testing import TestApp, reply_to
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    BOT,
    GM,
    body_of,
    cycle,
    gm_says,
    mails,
    one_lap_race,
    player_says,
    stranger_says,
    to_the_finish,
)
from tests.bot.letters.whole_games import GAMES, whole_game
from tests.helpers import fake_inbox

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures

GAME_SIGNOFF = re.compile(r"Flagman, race director for [a-z0-9-]+\. Times are shown in [A-Za-z_]+(/[A-Za-z_+-]+)*\.")
BOT_SIGNOFF = re.compile(re.escape(f"Flagman <{BOT}>") + r"(\. Times are shown in \S+\.)?")
BARE_LINK = re.compile(r"\s*(mailto:|https?://)\S+")


def _play(app: TestApp) -> None:
    """The scenario: rc1 (the `rc` fixture) and a Speed Circuit race, through their letters."""
    player_says(app, "kelly", "use 2 or 3, whatever you think")
    player_says(app, "seb", "What happens if I run out of EP?")
    player_says(app, "anna", "USE 2")
    gm_says(app, "PLOT rc1 seb USE 3")
    gm_says(app, "PROCESS rc1")
    player_says(app, "anna", "USE 3")
    gm_says(app, "ROLLBACK rc1")
    stranger_says(app, "zoe@example.org", "OBSERVE rc1")
    stranger_says(app, "zed@example.org", "HELP")
    stranger_says(app, "sub@example.net", "SUBSTITUTE ON racecraft")
    fake_inbox(app).deliver(reply_to(mails(app, "sub@example.net")[-1], "yes", sender="sub@example.net"))
    cycle(app)
    player_says(app, "roger", "RESIGN rc1\nIt was fun, thanks all. Bye!")
    gm_says(app, "RESUME rc1")
    gm_says(app, "STATUS rc1\nPREVIEW rc1\nEXTEND rc1 12h")
    player_says(app, "kelly", "STATUS rc1\nORDERS rc1")
    with app.db.transaction() as session:
        create_game(app.shell, session, kind="racecraft", name="rc2", players=(), gm_address=GM, signup=True)
    stranger_says(app, "new@example.net", "JOIN rc2 Newbie")
    stranger_says(app, "prac@example.net", "PRACTICE racecraft")
    one_lap_race(app, ("kelly", "seb"))
    player_says(app, "kelly", "speed 100 if legal, otherwise 80", game="sc1")
    player_says(app, "seb", "speed 40 or 60, whatever you think", game="sc1")
    to_the_finish(app, "sc1", 12)


def _lines(mail: EmailMessage) -> list[str]:
    return body_of(mail).replace("\r\n", "\n").rstrip("\n").split("\n")


def _too_wide(mail: EmailMessage) -> list[str]:
    """What of `mail` passes 78 columns: its subject, and every line but a bare link's."""
    subject = str(mail["Subject"])
    wide = [f"subject ({len(subject)}): {subject}"] if len(subject) > 78 else []
    return wide + [f"({len(line)}) {line}" for line in _lines(mail) if len(line) > 78 and not BARE_LINK.fullmatch(line)]


_CELLS = re.compile(r"\S {2,}\S")
_PROSE_WORD = re.compile(r"[a-z][a-z'’]+[,;:.]?")


def _lead(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def is_prose(text: str) -> bool:
    """Whether `text` is running text (sentences: most of its words in lower case, six of them
    at least), not laid-out lines (the rules' syntax: words in capitals, "n" for a number)."""
    words = text.split()
    prose = [w for w in words if _PROSE_WORD.fullmatch(w)]
    return len(prose) >= 6 and 2 * len(prose) > len(words)


# A definition's term at the head of a laid-out line ("CRUISE (or B): spend nothing; ..."): the
# rules' summary hangs its text under the term, as the syntax does.
_TERM = re.compile(r"[A-Z]{2,}(?: \([^)]*\))?:")


def hung_running_text(lines: list[str]) -> list[str]:
    """The lines of running text laid out as a hanging indent: a line set in (no quote, no
    cells, no term it defines) whose sentence goes on on the next line four columns further in
    (a link standing on its own line there is laid out)."""
    found = []
    for line, after in zip(lines, lines[1:], strict=False):
        lead = _lead(line)
        if not lead or _lead(after) != lead + 4 or ">" in (line[lead : lead + 1], after.strip()[:1]):
            continue
        if _CELLS.search(line[lead:]) or _TERM.match(line, lead) or BARE_LINK.fullmatch(after):
            continue
        if is_prose(f"{line} {after}"):
            found.append(f"{line.strip()} / {after.strip()}")
    return found


def test_the_detector_tells_running_text_from_laid_out_lines() -> None:
    hung = [
        "  seat seb is now run by a robot (was seb@example.org); it is never mailed;",
        "      the other players were told. Its orders for Turn 1 are on file.",
    ]
    assert hung_running_text(hung) == [f"{hung[0].strip()} / {hung[1].strip()}"]
    paragraph = [hung[0], "  " + hung[1].strip()]
    syntax = ["  DESIGN ACC n DEC n TOP n START n PRIME n OPTION n", "      SKILL n"]
    cells = ["  SPEED n     how fast to go this turn, in miles per hour, from 0 up to", "      your top speed"]
    quoted = ["  GM plot for kelly (used whenever nothing is on file at a deadline):", "      > USE 3"]
    term = ["  CRUISE (or B): spend nothing; your score is the average score of those who", "      did not cruise"]
    link = [
        "  - line 1: not taken, as it does not settle on one order; to send USE 2, tap:",
        "      mailto:x@y?subject=USE",
    ]
    for laid_out in (paragraph, syntax, cells, quoted, term, link):
        assert hung_running_text(laid_out) == [], laid_out


def test_the_gms_answers_are_paragraphs_within_78_columns(rc: TestApp) -> None:
    """R6 of the final playtest: the GM's answers to PLOT, REPLACE ... ROBOT, PAUSE, RESUME,
    PROCESS and ROLLBACK, alone and in one mail of several commands."""
    player_says(rc, "anna", "USE 2")
    for command in (
        "PLOT rc1 kelly USE 3",
        "REPLACE rc1 seb ROBOT",
        "PAUSE rc1",
        "RESUME rc1",
        "PROCESS rc1",
        "ROLLBACK rc1",
        "PLOT rc1 anna USE 1\nSET rc1 anna ep 14\nPAUSE rc1",
    ):
        gm_says(rc, command)
    answers = [m for m in mails(rc, GM) if " GM: " in str(m["Subject"]) or "Answers" in str(m["Subject"])]
    assert len(answers) >= 7
    for mail in answers:
        where = f"{mail['Subject']}"
        assert not _too_wide(mail), (where, _too_wide(mail))
        assert not hung_running_text(_lines(mail)), (where, hung_running_text(_lines(mail)))


def test_every_letter_signs_off_and_keeps_every_line_within_78_columns(rc: TestApp) -> None:
    _play(rc)
    every = mails(rc)
    assert len(every) > 100
    kinds = {str(m["Subject"]) for m in every}
    for wanted in (
        "Confirm: observe rc1",
        "Confirm: a seat in rc2",
        "reopened by the GM",
        "A seat to take over: roger in rc1",
    ):
        assert any(wanted in subject for subject in kinds), (wanted, sorted(kinds))
    for mail in every:
        lines = _lines(mail)
        where = f"{mail['To']}: {mail['Subject']}"
        assert "-- " in lines, where
        signature = lines[len(lines) - lines[::-1].index("-- ") :]
        assert len(signature) == 1, (where, signature)
        assert GAME_SIGNOFF.fullmatch(signature[0]) or BOT_SIGNOFF.fullmatch(signature[0]), (where, signature)
        assert not _too_wide(mail), (where, _too_wide(mail))
        assert not hung_running_text(lines), (where, hung_running_text(lines))


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_letter_of_a_whole_game_keeps_within_78_columns(kind: str) -> None:
    """Each game to its final result, players in five zones, two robots where the game has
    them (`whole_game`): the turn sheets (the rules' syntax), the results and the GM's copies
    (the standings, the dice's block of values), STATUS, PREVIEW, HISTORY, the digest, the
    final results."""
    every = whole_game(kind)
    subjects = {str(m["Subject"]) for m in every}
    for wanted in ("Results of", "inal result of", "GM copy", "Answers to your mail", "GM digest"):
        assert any(wanted in subject for subject in subjects), (wanted, sorted(subjects))
    for mail in every:
        assert not _too_wide(mail), (f"{mail['To']}: {mail['Subject']}", _too_wide(mail))
        assert not hung_running_text(_lines(mail)), (
            f"{mail['To']}: {mail['Subject']}",
            hung_running_text(_lines(mail)),
        )
