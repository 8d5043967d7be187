"""Deadlines in the calendar: every turn sheet carries its deadline as an
iCalendar event (RFC 5545/5546), read here with a maintained iCalendar library (`icalendar`)
as a calendar client would: one stable UID per game and turn, the time right in the
recipient's zone, updated (same UID, higher SEQUENCE) when the GM extends or moves the
deadline, cancelled when the turn resolves early, an alarm at each reminder mark; CALENDAR
OFF stops it."""

from __future__ import annotations

import email.policy
import secrets
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.games import preferences
from bot.mail_out import calendar as ical
from bot.mail_out import compose as mailout
from bot.mail_out.render import RenderedMail
from bot.models import Game, Player, Turn
from bot.schedules import format_local
from bot.settings import Settings, parse_settings
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, START, cycle, gm_says, mails, player_says, turns
from tests.helpers import fake_inbox, moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
ZONES: dict[str, str] = {p.seat: p.timezone for p in gm_helpers.RACERS if p.timezone is not None}


def deadline_of(turn: Turn) -> datetime:
    """A turn's deadline as the calendar shows it (UTC)."""
    assert turn.deadline is not None
    return turn.deadline.replace(tzinfo=UTC)


def calendars(msg: EmailMessage) -> list[icalendar.Calendar]:
    """Every calendar object of a mail, parsed from its text/calendar parts."""
    found = []
    for part in msg.walk():
        if part.get_content_type() == "text/calendar":
            data = part.get_payload(decode=True)
            assert isinstance(data, bytes)
            cal = icalendar.Calendar.from_ical(data)
            assert str(cal["METHOD"]) == part.get_param("method"), "the METHOD of the part and of the object agree"
            found.append(cal)
    return found


def event_of(cal: icalendar.Calendar) -> icalendar.Event:
    events = list(cal.walk("VEVENT"))
    assert len(events) == 1 and isinstance(events[0], icalendar.Event)
    return events[0]


def latest_calendar(app: TestApp, seat: str) -> tuple[EmailMessage, icalendar.Calendar]:
    for msg in reversed(mails(app, ADDRESS[seat])):
        found = calendars(msg)
        if found:
            return msg, found[0]
    raise AssertionError(f"no calendar object in any mail to {seat}")


def test_the_turn_sheet_carries_the_deadline_in_the_recipients_zone(rc: TestApp) -> None:
    """RFC 5546 REQUEST: one VEVENT, DTSTART the turn's deadline (in UTC, so every client shows
    it in its own zone), the recipient's zone named with the local time the mail shows; the
    bot the organizer, the recipient the only attendee, nothing to answer (RSVP=FALSE)."""
    deadline = turns(rc)[0].deadline
    assert deadline is not None
    uids = set()
    for seat, address in ADDRESS.items():
        msg = mails(rc, address)[0]
        assert msg.get_content_type() == "multipart/alternative", "the text and HTML stay what a reader sees"
        [cal] = calendars(msg)
        assert str(cal["METHOD"]) == "REQUEST" and str(cal["VERSION"]) == "2.0" and cal.get("PRODID")
        event = event_of(cal)
        start = event.decoded("DTSTART")
        assert start == deadline.replace(tzinfo=UTC) and start.utcoffset() == timedelta(0)
        local = start.astimezone(ZoneInfo(ZONES[seat]))
        shown = format_local(start, ZONES[seat])
        assert (
            f"{local:%H:%M}" in shown
            and shown in str(event["DESCRIPTION"])
            and ZONES[seat] in str(event["DESCRIPTION"])
        )
        assert int(str(event["SEQUENCE"])) == 0 and event.decoded("DTSTAMP") == START
        assert str(event["ORGANIZER"]) == "mailto:flagman@example.org"
        attendee = event["ATTENDEE"]
        assert str(attendee) == f"mailto:{address}" and attendee.params["RSVP"] == "FALSE"
        uids.add(str(event["UID"]))
    assert len(uids) == 1, "one event per game and turn: the same UID for every player"


def test_the_gm_copy_and_the_answers_carry_no_calendar(rc: TestApp) -> None:
    """Only the players' turn sheets: the GM's copy and an answer to a mail carry none."""
    assert all(not calendars(m) for m in mails(rc, gm_helpers.GM))
    player_says(rc, "seb", "USE 3")
    assert not calendars(mails(rc, ADDRESS["seb"])[-1])


def test_an_alarm_at_each_reminder_mark(rc: TestApp) -> None:
    """A VALARM at each mark of the game's reminder schedule (24h and 2h before the deadline)."""
    _, cal = latest_calendar(rc, "kelly")
    triggers = sorted(alarm.decoded("TRIGGER") for alarm in event_of(cal).walk("VALARM"))
    assert triggers == [timedelta(hours=-24), timedelta(hours=-2)]
    assert all(str(alarm["ACTION"]) == "DISPLAY" for alarm in event_of(cal).walk("VALARM"))


def test_extend_and_deadline_update_the_event_with_a_higher_sequence(rc: TestApp) -> None:
    """EXTEND, then DEADLINE: each announcement carries the event again, same UID, SEQUENCE up
    by one each time, DTSTART the new deadline."""
    _, first = latest_calendar(rc, "steve")
    uid = str(event_of(first)["UID"])
    moving_clock(rc).advance(hours=1)
    gm_says(rc, "EXTEND rc1 24h")
    msg, after_extend = latest_calendar(rc, "steve")
    assert "extended" in str(msg["Subject"]).lower()
    event = event_of(after_extend)
    assert str(event["UID"]) == uid and int(str(event["SEQUENCE"])) == 1
    assert event.decoded("DTSTART") == deadline_of(turns(rc)[0])
    assert event.decoded("DTSTART") == event_of(first).decoded("DTSTART") + timedelta(hours=24)
    assert event.decoded("DTSTAMP") > event_of(first).decoded("DTSTAMP")
    moving_clock(rc).advance(hours=1)
    gm_says(rc, "DEADLINE rc1 2026-01-10 12:00")
    _, after_deadline = latest_calendar(rc, "steve")
    event = event_of(after_deadline)
    assert str(event["UID"]) == uid and int(str(event["SEQUENCE"])) == 2
    assert event.decoded("DTSTART") == datetime(2026, 1, 10, 12, 0, tzinfo=ZoneInfo("Europe/London"))


def test_resume_moves_the_event_with_the_deadline(rc: TestApp) -> None:
    """RESUME restarts the clock from now (GM_COMMANDS): the announcement carries the event
    again, same UID, DTSTART the new deadline; its SEQUENCE is 2, after the PAUSE's CANCEL (1)
    (the calendar follows the pause)."""
    _, first = latest_calendar(rc, "steve")
    uid = str(event_of(first)["UID"])
    gm_says(rc, "PAUSE rc1")
    moving_clock(rc).advance(hours=30)
    gm_says(rc, "RESUME rc1")
    msg, after = latest_calendar(rc, "steve")
    assert "resumes" in str(msg["Subject"]).lower()
    event = event_of(after)
    assert str(event["UID"]) == uid and int(str(event["SEQUENCE"])) == 2
    assert event.decoded("DTSTART") == deadline_of(turns(rc)[0])
    assert event.decoded("DTSTART") > event_of(first).decoded("DTSTART")


def test_an_early_resolution_cancels_the_event_and_the_results_bring_the_next(rc: TestApp) -> None:
    """Every order in before the deadline: the results mail carries the CANCEL of that turn's
    event (same UID, SEQUENCE higher, STATUS:CANCELLED) beside the REQUEST of the next turn's,
    each in its own text/calendar part (RFC 6047 2.4)."""
    _, first = latest_calendar(rc, "anna")
    uid = str(event_of(first)["UID"])
    for seat in ADDRESS:
        player_says(rc, seat, "USE 2")
    assert turns(rc)[0].resolved_at is not None and len(turns(rc)) == 2
    results = mails(rc, ADDRESS["anna"])[-1]
    assert "Results of Turn 1" in str(results["Subject"])
    assert results.get_content_type() == "multipart/mixed"
    found = {str(c["METHOD"]): event_of(c) for c in calendars(results)}
    assert set(found) == {"REQUEST", "CANCEL"}
    cancel, request = found["CANCEL"], found["REQUEST"]
    assert str(cancel["UID"]) == uid and int(str(cancel["SEQUENCE"])) > int(str(event_of(first)["SEQUENCE"]))
    assert str(cancel["STATUS"]) == "CANCELLED"
    assert str(request["UID"]) != uid and "turn-2" in str(request["UID"])
    assert request.decoded("DTSTART") == deadline_of(turns(rc)[1])


def test_a_turn_resolved_at_its_deadline_is_not_cancelled(rc: TestApp) -> None:
    """The deadline passed: the event happened as it said; the results bring the next only."""
    moving_clock(rc).set(START + timedelta(hours=49))
    cycle(rc)
    results = mails(rc, ADDRESS["kelly"])[-1]
    assert "Results of Turn 1" in str(results["Subject"])
    assert [str(c["METHOD"]) for c in calendars(results)] == ["REQUEST"]
    assert results.get_content_type() == "multipart/alternative"


def test_calendar_off_stops_the_invitations_and_on_brings_them_back(rc: TestApp) -> None:
    """CALENDAR OFF (confirmed) for all the player's games; CALENDAR ON again."""
    player_says(rc, "roger", "CALENDAR OFF")
    answer = mails(rc, ADDRESS["roger"])[-1]
    assert "Calendar off" in str(answer["Subject"])
    with rc.db.read() as session:
        assert session.query(Player).filter_by(address=ADDRESS["roger"]).one().calendar is False
    moving_clock(rc).advance(hours=1)
    gm_says(rc, "EXTEND rc1 2h")
    assert not calendars(mails(rc, ADDRESS["roger"])[-1])
    assert calendars(mails(rc, ADDRESS["kelly"])[-1]), "the others still get it"
    player_says(rc, "roger", "CALENDAR ON")
    assert "Calendar on" in str(mails(rc, ADDRESS["roger"])[-1]["Subject"])
    moving_clock(rc).set(START + timedelta(hours=60))
    cycle(rc)
    assert calendars(mails(rc, ADDRESS["roger"])[-1])


def test_set_calendar_reports_whether_it_changed() -> None:
    """The function CALENDAR uses, for anyone driving the bot from Python."""
    player = Player(address="a@example.org", name="A", timezone="UTC", calendar=True)
    assert preferences.set_calendar(player, False) is True and player.calendar is False
    assert preferences.set_calendar(player, False) is False
    assert preferences.set_calendar(player, True) is True and player.calendar is True


@settings(max_examples=80, deadline=None)
@given(summary=st.text(min_size=1, max_size=200), name=st.text(max_size=60))
def test_any_text_round_trips_through_a_calendar_reader(summary: str, name: str) -> None:
    """Property: escaping (RFC 5545 3.3.11) and folding at 75 octets (3.1) keep any summary and
    name readable: the parsed text is ours (control characters dropped), every line <= 75
    octets, CRLF line ends."""
    event = ical.DeadlineEvent(
        uid="u@x",
        sequence=3,
        stamp=START,
        deadline=START + timedelta(days=2),
        summary=summary,
        description=summary * 3,
        organizer="flagman@x.test",
        organizer_name=name,
        attendee="p@x.test",
        attendee_name=name,
        alarms=(timedelta(hours=2),),
    )
    text = ical.to_ics(event)
    lines = text.split("\r\n")
    assert lines[-1] == "" and all(len(line.encode()) <= 75 for line in lines)
    parsed = event_of(icalendar.Calendar.from_ical(text))
    expected = "".join(
        c for c in summary.replace("\r\n", "\n").replace("\r", "\n") if c == "\n" or (c >= " " and c != "\x7f")
    )
    assert str(parsed["SUMMARY"]) == expected
    assert int(str(parsed["SEQUENCE"])) == 3 and parsed.decoded("DTSTART") == START + timedelta(days=2)


def _settings() -> Settings:
    return parse_settings(
        {"bot": {"address": "flagman@bench.test", "name": "Flagman"}},
        env={"FLAGMAN_SECRET": "x"},
        base_dir=Path("."),
        source="test",
    )


@pytest.mark.parametrize("html", [False, True])
@pytest.mark.parametrize("count", [1, 2])
def test_a_mail_with_calendars_is_the_same_on_the_fast_path_and_the_stdlibs(
    monkeypatch: pytest.MonkeyPatch, html: bool, count: int
) -> None:
    """compose writes the plain headers itself (bench: deadline); with calendar parts the bytes
    equal the stdlib's composition, and the stdlib parses them back into the parts."""
    settings = _settings()
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    event = ical.DeadlineEvent(
        uid="u@x",
        sequence=0,
        stamp=now,
        deadline=now + timedelta(days=1),
        summary="rc1: due",
        description="Ünïcode ✓",
        organizer="flagman@bench.test",
        organizer_name="Flagman",
        attendee="p@x.test",
        attendee_name="P",
    )
    parts = tuple(ical.part(event, f"t{i}.ics") for i in range(count))
    body = (
        mailout.HtmlBody("<p>hi ✓</p>", (mailout.InlineImage("pic@x", b"\x89PNG" * 40, "race.png"),)) if html else None
    )

    def make() -> bytes:
        monkeypatch.setattr(secrets, "token_hex", lambda n: "0" * 16)  # compose draws the Message-ID from it
        return mailout.compose(
            settings,
            now,
            kind="turn_sheet",
            to=mailout.Recipient("p@x.test", "P"),
            rendered=RenderedMail("[rc1] Turn 1", "Hello ✓\n"),
            html=body,
            calendars=parts,
        )[2]

    fast = make()
    with monkeypatch.context() as m:
        m.setattr(mailout, "_BUILD", email.policy.default)
        m.setattr(mailout, "_POLICY", email.policy.default.clone(max_line_length=998, linesep="\r\n"))
        m.setattr(mailout, "_plain_head", lambda *args, **kwargs: None)  # the stdlib writes every mail
        plain = make()
    assert fast == plain
    msg = email.message_from_bytes(fast, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    types = [p.get_content_type() for p in msg.walk()]
    assert types.count("text/calendar") == count and msg.get_body(("plain",)) is not None
    assert msg.get_content_type() == ("multipart/mixed" if count == 2 else "multipart/alternative")


def test_uids_are_stable_and_differ_by_game_and_turn() -> None:
    """One UID per game and turn; the game's id is in it (a later game may reuse a name)."""

    def game(id_: int, name: str) -> Game:
        return Game(id=id_, name=name)  # the row as loaded: only its id and name are read

    uids = {ical.event_uid(game(i, n), t, "x.test") for i in (1, 2) for n in ("rc1", "rc2") for t in range(1, 6)}
    assert len(uids) == 20
    assert ical.event_uid(game(1, "rc1"), 3, "x.test") == ical.event_uid(game(1, "rc1"), 3, "x.test")
    assert all(uid.endswith("@x.test") for uid in uids)


def test_a_calendar_clients_answer_to_the_invitation_is_never_answered(rc: TestApp) -> None:
    """A player who accepts the event in their calendar makes the client send an iTIP REPLY to
    the organizer, the bot's address (RFC 5546 3.2.3): ignored, as an auto-reply is."""
    from bot.models import InboundMessage
    from bot.testing import plain_mail

    _, cal = latest_calendar(rc, "kelly")
    event = event_of(cal)
    answer = EmailMessage()
    answer["From"], answer["To"] = ADDRESS["kelly"], "flagman@example.org"
    answer["Subject"], answer["Message-ID"] = f"Accepted: {event['SUMMARY']}", "<accept@calendar.example>"
    answer.set_content("Kelly has accepted this invitation.")
    reply = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//client//EN\r\nMETHOD:REPLY\r\nBEGIN:VEVENT\r\n"
        f"UID:{event['UID']}\r\nDTSTAMP:20260105T100000Z\r\nATTENDEE;PARTSTAT=ACCEPTED:mailto:{ADDRESS['kelly']}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    answer.add_alternative(reply, subtype="calendar", params={"method": "REPLY"})
    before = len(mails(rc))
    fake_inbox(rc).deliver(answer.as_bytes())
    no_param = plain_mail(ADDRESS["seb"], "flagman@example.org", "Declined", "no")
    fake_inbox(rc).deliver(
        no_param.replace(b"Content-Type: text/plain", b"Content-Type: text/calendar").replace(
            b"\n\nno", b"\n\nBEGIN:VCALENDAR\r\nMETHOD:COUNTER\r\nEND:VCALENDAR"
        )
    )
    cycle(rc)
    assert len(mails(rc)) == before
    with rc.db.read() as session:
        rows = session.query(InboundMessage).order_by(InboundMessage.id).all()[-2:]
    assert [r.status for r in rows] == ["ignored", "ignored"] and all("calendar" in r.detail for r in rows)


@settings(max_examples=80, deadline=None)
@given(
    attendees=st.lists(st.tuples(st.text(max_size=40), st.emails()), min_size=1, max_size=4),
    summary=st.text(max_size=120),
    method=st.sampled_from([ical.REQUEST, ical.CANCEL]),
    alarms=st.lists(st.integers(0, 5000), max_size=3),
)
def test_each_attendees_object_is_the_event_written_whole(
    attendees: list[tuple[str, str]], summary: str, method: str, alarms: list[int]
) -> None:
    """Property: the lines of an event the same for every attendee are written once
    (`to_ics`), and each attendee's object is still every line of it folded, in order, as
    written whole for that attendee alone."""
    for name, address in attendees:
        event = ical.DeadlineEvent(
            uid="deadline-1-g-turn-2@x.test",
            sequence=1,
            stamp=START,
            deadline=START + timedelta(days=2),
            summary=summary,
            description=summary + " (Europe/Paris)",
            organizer="flagman@x.test",
            organizer_name="Flagman",
            attendee=address,
            attendee_name=name,
            alarms=tuple(timedelta(minutes=m) for m in alarms),
            method=method,
        )
        assert ical.to_ics(event) == "".join(ical.fold(line) + "\r\n" for line in ical._lines(event))
