"""List-Id and List-Unsubscribe: mail that is not an answer to its reader's
own action names its stream (RFC 2919); reminders and observer copies carry a ``mailto:``
List-Unsubscribe (RFC 2369) whose signed code stops exactly that stream -- game, recipient and
kind -- when the mail it opens comes back, and the stop is confirmed to the address the
stream went to. Nothing changes by reading a link: there is no web link to fetch."""

from __future__ import annotations

import re
import urllib.parse
from datetime import timedelta
from email.message import EmailMessage

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.games import observers
from bot.gm import digest
from bot.mail_out import lists
from bot.models import Observer, Seat
from bot.store import find_game_row
from bot.testing import TestApp, body_of, plain_mail
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, GM, START, cycle, gm_says, mails, player_says
from tests.helpers import fake_inbox, moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
WATCHER = "watcher@fans.example"
SECRET = "test-site-secret"


def by_subject(app: TestApp, to: str, words: str) -> list[EmailMessage]:
    return [m for m in mails(app, to) if words in str(m["Subject"])]


def unsubscribe_mail(msg: EmailMessage, sender: str, message_id: str) -> bytes:
    """What a mail client sends for the List-Unsubscribe of `msg` (RFC 2369: open the mailto)."""
    value = str(msg["List-Unsubscribe"])
    match = re.fullmatch(r"<(mailto:[^>]+)>", value)
    assert match, value
    url = urllib.parse.urlsplit(match.group(1))
    query = urllib.parse.parse_qs(url.query)
    assert url.scheme == "mailto" and set(query) == {"subject"}
    return plain_mail(sender, urllib.parse.unquote(url.path), query["subject"][0], "", message_id=message_id)


def observe(app: TestApp, address: str, game: str = "rc1") -> None:
    with app.db.transaction() as session:
        row = find_game_row(session, game)
        assert row is not None
        observers.observe(session, row, address, app.shell.now())


def observing(app: TestApp) -> set[tuple[str, str]]:
    with app.db.read() as session:
        return {(row.address, find_name(session, row.game_id)) for row in session.scalars(select(Observer))}


def find_name(session: Session, game_id: int) -> str:
    from bot.models import Game

    game = session.get(Game, game_id)
    assert game is not None
    return game.name


def reminders(app: TestApp, seat: str) -> list[EmailMessage]:
    return by_subject(app, ADDRESS[seat], "Reminder: orders")


def test_stream_mail_names_its_list_and_answers_do_not(rc: TestApp) -> None:
    """Turn sheets, results and announcements carry the game's List-Id; the GM's digest its own;
    a confirmation (an answer to the reader's own mail) none."""
    sheet = mails(rc, ADDRESS["kelly"])[0]
    assert str(sheet["List-Id"]) == "<rc1.flagman.example.org>"
    assert sheet["List-Unsubscribe"] is None, "a turn sheet is what a player cannot do without"
    assert str(mails(rc, GM)[0]["List-Id"]) == "<rc1.flagman.example.org>"
    player_says(rc, "kelly", "USE 2")
    confirmation = mails(rc, ADDRESS["kelly"])[-1]
    assert "USE 2" in body_of(confirmation) and confirmation["List-Id"] is None
    moving_clock(rc).advance(hours=1)
    gm_says(rc, "EXTEND rc1 1h")
    assert str(by_subject(rc, ADDRESS["seb"], "extended")[-1]["List-Id"]) == "<rc1.flagman.example.org>"
    assert by_subject(rc, GM, "EXTEND")[-1]["List-Id"] is None, "the GM's confirmation answers the GM's mail"
    moving_clock(rc).set(START.replace(hour=8) + timedelta(days=1))
    assert digest.send_due_digests(rc.shell, force=True) == 1
    rc.service.send()
    assert str(by_subject(rc, GM, "GM digest")[-1]["List-Id"]) == "<digest.flagman.example.org>"
    moving_clock(rc).set(START + timedelta(hours=60))
    cycle(rc)
    assert str(by_subject(rc, ADDRESS["anna"], "Results of Turn 1")[-1]["List-Id"]) == "<rc1.flagman.example.org>"


def test_a_reminders_unsubscribe_stops_that_seats_reminders_only_and_is_confirmed(rc: TestApp) -> None:
    """The reminder's List-Unsubscribe, sent back from the player's mail client (to the plain
    address, with no password: the code is the proof), stops the reminders of that seat and no
    other; the answer goes to the registered address."""
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    reminder = reminders(rc, "kelly")[-1]
    assert str(reminder["List-Id"]) == "<rc1.flagman.example.org>"
    fake_inbox(rc).deliver(unsubscribe_mail(reminder, ADDRESS["kelly"], "<unsub-1@client.example>"))
    cycle(rc)
    answer = mails(rc, ADDRESS["kelly"])[-1]
    assert "Reminders off for rc1" in str(answer["Subject"]) and answer["List-Id"] is None
    moving_clock(rc).set(START + timedelta(hours=46))  # the 2h mark
    cycle(rc)
    assert len(reminders(rc, "kelly")) == 1, "no more reminders for kelly"
    assert len(reminders(rc, "seb")) == 2, "the others still get theirs"
    player_says(rc, "kelly", "REMINDERS ON")
    assert "Reminders on for rc1" in str(mails(rc, ADDRESS["kelly"])[-1]["Subject"])


def test_the_code_is_the_proof_whoever_sends_it_and_the_answer_goes_to_the_seat(rc: TestApp) -> None:
    """A forwarding service or another account may send the unsubscribe: it still stops just
    that seat's reminders, and the confirmation goes to the seat's registered address, never
    to the sender."""
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    fake_inbox(rc).deliver(
        unsubscribe_mail(
            reminders(rc, "steve")[-1],
            "other@elsewhere.example",
            "<unsub-2@client.example>",
        )
    )
    cycle(rc)
    assert mails(rc, "other@elsewhere.example") == []
    assert "Reminders off" in str(mails(rc, ADDRESS["steve"])[-1]["Subject"])
    with rc.db.read() as session:
        seats = {s.name: s for s in session.scalars(select(Seat))}
        assert seats["steve"].reminders_off_for == seats["steve"].player_id
        assert all(s.reminders_off_for is None for name, s in seats.items() if name != "steve")


def test_a_code_changed_or_of_a_seat_handed_on_stops_nothing(rc: TestApp) -> None:
    """A code whose MAC does not verify, and the code of a seat's previous holder (REPLACE),
    change nothing."""
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    reminder = reminders(rc, "roger")[-1]
    code = lists.code_in_subject(urllib.parse.unquote(str(reminder["List-Unsubscribe"])))
    assert code is not None
    forged = code[:-1] + ("a" if code[-1] != "a" else "b")
    fake_inbox(rc).deliver(
        plain_mail(
            ADDRESS["roger"],
            BOT,
            f"unsubscribe {forged}",
            "",
            message_id="<forged@client.example>",
        )
    )
    cycle(rc)
    gm_says(rc, "REPLACE rc1 roger rita@example.org Rita")
    fake_inbox(rc).deliver(unsubscribe_mail(reminder, ADDRESS["roger"], "<old@client.example>"))
    cycle(rc)
    with rc.db.read() as session:
        assert all(s.reminders_off_for is None for s in session.scalars(select(Seat)))
    assert "Nothing to stop" in str(mails(rc, ADDRESS["roger"])[-1]["Subject"])


def test_an_observer_copys_unsubscribe_stops_that_games_copies_to_that_address(rc: TestApp) -> None:
    """An observer of two games unsubscribes from one game's copy: that observation ends (and
    is confirmed to the observer address); the other game's and other observers' go on."""
    with rc.db.transaction() as session:
        from bot.games.turns import create_game

        create_game(
            rc.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=gm_helpers.RACERS,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=8,
        )
    observe(rc, WATCHER)
    observe(rc, WATCHER, "rc2")
    observe(rc, "other@fans.example")
    moving_clock(rc).set(START + timedelta(hours=49))
    cycle(rc)
    copies = by_subject(rc, WATCHER, "rc1")
    assert copies, [str(m["Subject"]) for m in mails(rc, WATCHER)]
    copy = copies[-1]
    assert copy["Reply-To"] is None and str(copy["List-Id"]) == "<rc1.flagman.example.org>"
    assert "rc1.kelly" not in str(copy["List-Unsubscribe"])
    fake_inbox(rc).deliver(unsubscribe_mail(copy, WATCHER, "<unsub-obs@fans.example>"))
    cycle(rc)
    assert observing(rc) == {(WATCHER, "rc2"), ("other@fans.example", "rc1")}
    answer = mails(rc, WATCHER)[-1]
    assert "You no longer observe rc1" in str(answer["Subject"]) and answer["Reply-To"] is None


def test_a_body_line_unsubscribe_does_the_same(rc: TestApp) -> None:
    """``UNSUBSCRIBE <code>`` in the body of any mail: the command behind the header."""
    observe(rc, WATCHER)
    with rc.db.read() as session:
        code = lists.observer_code(SECRET, "rc1", WATCHER)
        assert lists.parse_code(code) is not None
        del session
    fake_inbox(rc).deliver(plain_mail(WATCHER, BOT, "stop", f"UNSUBSCRIBE {code}", message_id="<b@fans.example>"))
    cycle(rc)
    assert observing(rc) == set()


@settings(max_examples=100, deadline=None)
@given(
    game=st.from_regex(r"[a-z0-9][a-z0-9_-]{0,29}", fullmatch=True),
    seat=st.from_regex(r"[a-z0-9][a-z0-9_-]{0,29}", fullmatch=True),
    player=st.integers(1, 10**6),
    salt=st.text(max_size=12),
    address=st.emails(),
)
def test_each_code_names_one_stream_and_verifies_for_it_alone(
    game: str, seat: str, player: int, salt: str, address: str
) -> None:
    """Property: a code parses back to its stream, verifies for its own recipient only (another
    player, another salt, another address, another secret: no), and fits in a subject."""
    code = lists.reminders_code(SECRET, game, seat, player, salt)
    stream = lists.parse_code(code)
    assert stream is not None and (stream.kind, stream.game, stream.seat) == (lists.REMINDERS, game, seat)
    assert lists.reminders_code_stands(stream, [SECRET], player, salt)
    assert not lists.reminders_code_stands(stream, [SECRET], player + 1, salt)
    assert not lists.reminders_code_stands(stream, [SECRET], player, salt + "x")
    assert not lists.reminders_code_stands(stream, ["another"], player, salt)
    assert lists.reminders_code_stands(stream, ["new", SECRET], player, salt), "a previous secret still counts"
    watch = lists.observer_code(SECRET, game, address)
    watched = lists.parse_code(watch)
    assert watched is not None and watched.kind == lists.OBSERVER and watched.game == game
    assert lists.observer_code_stands(watched, [SECRET], address.upper())
    assert not lists.observer_code_stands(watched, [SECRET], "x" + address)
    assert not lists.observer_code_stands(stream, [SECRET], address)
    header = lists.unsubscribe_header("flagman@example.org", code)
    assert lists.code_in_subject("Re: " + urllib.parse.unquote(header.split("subject=")[1].rstrip(">"))) == code
