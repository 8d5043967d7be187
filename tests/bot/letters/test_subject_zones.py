"""Every time a letter shows, in its subject and its body, is in its reader's zone, and the
letter names that zone (its sign-off: "Times are shown in Europe/Paris"). A reader in
Europe/London reads "21:00 GMT", never "21:00 UTC"; the GM reads the game's zone.

The subjects that carry a time (templates/_common/*.txt, their ``Subject:`` lines): the turn
sheet and the GM's copy ("due ..."), the reminder ("due ..."), the results ("next due ..."),
the GM's digest and the GM's STATUS (the moment they were made). Each is checked here for
readers in four zones other than UTC."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from email.message import EmailMessage
from zoneinfo import ZoneInfo

import pytest

from bot.games.turns import create_game
from bot.gm import digest
from bot.testing import TestApp, body_of
from tests.bot import gm_helpers
from tests.bot.conftest import RACERS
from tests.bot.gm_helpers import GM, START, cycle, gm_says, mails
from tests.helpers import moving_clock

gapp = gm_helpers.gapp  # the shared fixture

# "Tue 6 Jan 2026 21:00 GMT": a time as the letters show one, and the zone's abbreviation.
TIME = re.compile(r"\b(\d{1,2} [A-Z][a-z]{2}(?: \d{4})? \d{1,2}:\d{2}) ([A-Z][A-Z0-9+-]{1,5})\b")


def _abbreviation(zone: str, shown: str) -> str:
    """The abbreviation `zone` has at the moment `shown` ("6 Jan 2026 21:00", or without the
    year: the tests' games run in January 2026) names there."""
    parts = shown.split(" ")
    if len(parts) == 3:
        parts.insert(2, str(START.year))
    local = datetime.strptime(" ".join(parts), "%d %b %Y %H:%M").replace(tzinfo=ZoneInfo(zone))
    return str(local.tzname())


def _times(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in TIME.finditer(text)]


def _in_zone(mail: EmailMessage, zone: str) -> list[str]:
    """What of `mail` shows a time not in `zone`, or fails to name `zone`."""
    wrong = [
        f"subject: {shown} {abbr}" for shown, abbr in _times(str(mail["Subject"])) if abbr != _abbreviation(zone, shown)
    ]
    body = body_of(mail)
    wrong += [f"body: {shown} {abbr}" for shown, abbr in _times(body) if abbr != _abbreviation(zone, shown)]
    if f"Times are shown in {zone}." not in " ".join(body.split()):
        wrong.append(f"the zone {zone} is not named")
    return wrong


@pytest.mark.parametrize("game_zone", ["UTC", "Europe/London"])
def test_every_time_in_every_subject_and_body_is_in_its_readers_zone(gapp: TestApp, game_zone: str) -> None:
    """Racecraft with players in London, Paris, New York, Sydney and UTC, the game in UTC (the
    players' zones are not the game's) or in London; the GM reads the game's zone."""
    rc = gapp
    with rc.db.transaction() as session:
        create_game(
            rc.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="48h",
            timezone=game_zone,
            seed=7,
        )
    rc.service.send()
    moving_clock(rc).set(START + timedelta(hours=24))  # the reminders
    cycle(rc)
    gm_says(rc, "STATUS rc1")
    digest.send_due_digests(rc.shell, force=True)
    rc.service.send()
    moving_clock(rc).set(START + timedelta(hours=49))  # the deadline: results, the next sheets
    cycle(rc)
    readers = {p.address: p.timezone or "UTC" for p in RACERS} | {GM: game_zone}
    timed = {"due", "Reminder", "next due", "GM copy", "GM digest", "Status for the GM"}
    seen: set[str] = set()
    for address, zone in readers.items():
        for mail in mails(rc, address):
            subject = str(mail["Subject"])
            seen |= {kind for kind in timed if kind in subject and _times(subject)}
            assert not _in_zone(mail, zone), (address, subject, _in_zone(mail, zone))
    assert seen == timed, timed - seen
    assert len({z for z in readers.values() if z != "UTC"}) >= 4
