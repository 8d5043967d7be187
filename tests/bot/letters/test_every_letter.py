"""Properties of every letter a broad scenario of the suite's helpers produces (players' orders,
hedges, words for the GM, the GM's PLOT, PROCESS, ROLLBACK, RESUME, STATUS, PREVIEW, EXTEND,
RESIGN with a farewell, a substitutes bench's seat offer, JOIN, OBSERVE and PRACTICE code mails,
HELP, a Speed Circuit race to its end):

* every letter signs with the one sign-off (templates/_common/_signoff.txt): a letter about a
  game as its race director with the zone its times are shown in, any other as the bot;
* no line is wider than 78 characters, except a line that is a bare link (a one-tap
  ``mailto:`` stands on a line of its own): running text is filled, and laid-out lines (the
  rules' syntax, tables, the dice's block of values, quotes) are laid out to fit;
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
