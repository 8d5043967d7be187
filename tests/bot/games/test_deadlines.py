"""Deadlines: fixed local times across daylight-saving changes, the grace period, early
resolution on and off, and a service that was down across a deadline (the backlog)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.clock import as_utc
from bot.games.turns import create_game
from bot.letters.refusals import deadline_refused
from bot.schedules import (
    MAX_DURATION,
    MIN_NOTICE,
    DeadlineError,
    Schedule,
    format_local,
    next_deadline,
    parse_duration,
    parse_grace,
    parse_schedule,
    parse_when,
)
from bot.store import find_game_row
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    ADDRESS,
    GM,
    RACERS,
    START,
    body_of,
    cycle,
    last,
    mails,
    new_app,
    player_says,
    turns,
)
from tests.helpers import moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
LONDON = ZoneInfo("Europe/London")
DAILY_18 = parse_schedule("daily 18:00")


def set_game(app: TestApp, **values: object) -> None:
    with app.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        for key, value in values.items():
            setattr(game, key, value)


# -- daylight saving -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "opened, expected_utc",
    [
        # Spring forward, Sunday 29 March 2026 01:00 UTC: 18:00 GMT on Saturday, 18:00 BST on Sunday.
        (datetime(2026, 3, 27, 20, 0, tzinfo=UTC), datetime(2026, 3, 28, 18, 0, tzinfo=UTC)),
        (datetime(2026, 3, 28, 12, 0, tzinfo=UTC), datetime(2026, 3, 29, 17, 0, tzinfo=UTC)),
        # Fall back, Sunday 25 October 2026 01:00 UTC: 18:00 BST on Saturday, 18:00 GMT on Sunday.
        (datetime(2026, 10, 23, 20, 0, tzinfo=UTC), datetime(2026, 10, 24, 17, 0, tzinfo=UTC)),
        (datetime(2026, 10, 24, 12, 0, tzinfo=UTC), datetime(2026, 10, 25, 18, 0, tzinfo=UTC)),
    ],
)
def test_a_daily_deadline_stays_at_18_local_across_the_clock_change(opened: datetime, expected_utc: datetime) -> None:
    """bot/schedules.py: 18:00 Europe/London stays 18:00 local across a daylight-saving change."""
    deadline = next_deadline(DAILY_18, opened, "Europe/London")
    assert deadline == expected_utc
    assert deadline.astimezone(LONDON).strftime("%H:%M") == "18:00"


@settings(max_examples=150, deadline=None)
@given(
    opened=st.datetimes(
        min_value=datetime(2026, 3, 20),  # noqa: DTZ001 - st.datetimes bounds are naive
        max_value=datetime(2026, 11, 5),  # noqa: DTZ001
        timezones=st.just(UTC),
    )
)
def test_every_daily_deadline_is_18_local_and_the_first_with_enough_notice(opened: datetime) -> None:
    """Property: the deadline is 18:00 in London, at least MIN_NOTICE after the opening, and no
    18:00 in between would have done."""
    deadline = next_deadline(DAILY_18, opened, "Europe/London")
    assert deadline is not None
    local = deadline.astimezone(LONDON)
    assert (local.hour, local.minute) == (18, 0)
    assert deadline - opened >= MIN_NOTICE
    earlier = datetime.combine(local.date() - timedelta(days=1), local.time(), tzinfo=LONDON).astimezone(UTC)
    assert earlier - opened < MIN_NOTICE


def test_a_game_with_daily_deadlines_keeps_18_local_through_the_spring_change(tmp_path: Path) -> None:
    """Turn after turn through the spring change, each player sees 18:00 London in their own zone."""
    app = new_app(tmp_path, start=datetime(2026, 3, 26, 9, 0, tzinfo=UTC))
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="daily 18:00",
            timezone="Europe/London",
            seed=5,
            options={"turns": "5"},
        )
    app.service.send()
    seen = []
    for _ in range(4):
        turn = turns(app)[-1]
        if turn.resolved_at is not None or turn.deadline is None:
            break
        deadline = as_utc(turn.deadline)
        seen.append(deadline)
        sheet = [m for m in mails(app, ADDRESS["steve"]) if "due" in str(m["Subject"])][-1]
        assert format_local(deadline, "America/New_York") in str(sheet["Subject"])
        moving_clock(app).set(deadline + timedelta(minutes=1))
        cycle(app)
    locals_ = [d.astimezone(LONDON).strftime("%a %H:%M %Z") for d in seen]
    assert all(" 18:00 " in text for text in locals_), locals_
    assert {d.astimezone(LONDON).tzname() for d in seen} == {"GMT", "BST"}, locals_
    app.close()


def test_autumn_change_seen_by_a_player_in_paris_and_new_york(tmp_path: Path) -> None:
    """The same deadline, shown in each recipient's zone, before and after 25 October."""
    before = next_deadline(DAILY_18, datetime(2026, 10, 23, 20, 0, tzinfo=UTC), "Europe/London")
    after = next_deadline(DAILY_18, datetime(2026, 10, 24, 12, 0, tzinfo=UTC), "Europe/London")
    assert before is not None and after is not None
    assert format_local(before, "Europe/Paris") == "Sat 24 Oct 2026 19:00 CEST"
    assert format_local(after, "Europe/Paris") == "Sun 25 Oct 2026 19:00 CET"
    # New York changes a week later (1 November): 18:00 London is 13:00 there on the 25th.
    assert format_local(after, "America/New_York") == "Sun 25 Oct 2026 14:00 EDT"


# -- grace and early resolution -------------------------------------------------------------------


def test_orders_within_the_grace_period_count_and_the_turn_waits_for_it(rc: TestApp) -> None:
    """With a 30-minute grace, orders 10 minutes after the deadline are taken; the turn resolves
    only after the grace has passed."""
    set_game(rc, grace_minutes=30)
    stored = turns(rc)[0].deadline
    assert stored is not None
    deadline = as_utc(stored)
    moving_clock(rc).set(deadline + timedelta(minutes=10))
    player_says(rc, "seb", "USE 4")
    assert "[ERROR]" not in str(last(rc, ADDRESS["seb"])["Subject"])
    assert turns(rc)[0].resolved_at is None
    moving_clock(rc).set(deadline + timedelta(minutes=31))
    player_says(rc, "kelly", "USE 4")
    assert any("Too late" in str(m["Subject"]) for m in mails(rc, ADDRESS["kelly"]))
    assert turns(rc)[0].resolved_at is not None


def test_early_resolution_off_waits_for_the_deadline_with_every_order_in(rc: TestApp) -> None:
    """Early resolution off: all orders in does not resolve the turn before its deadline."""
    set_game(rc, early_resolution=False)
    for seat in ADDRESS:
        player_says(rc, seat, "USE 3")
    assert turns(rc)[0].resolved_at is None
    moving_clock(rc).advance(hours=48)
    cycle(rc)
    assert turns(rc)[0].resolved_at is not None


def test_early_resolution_on_resolves_once_every_order_is_in(rc: TestApp) -> None:
    for seat in ADDRESS:
        player_says(rc, seat, "USE 3")
    assert turns(rc)[0].resolved_at is not None


# -- the backlog after downtime -------------------------------------------------------------------


def test_after_downtime_one_turn_is_resolved_the_next_gets_a_full_turn_and_the_gm_is_told(tmp_path: Path) -> None:
    """After downtime, do not resolve a backlog blindly. reminders.py: the next deadline
    counts from the resolution, so after ten days down only the overdue turn is resolved; the
    next is due a full turn from now; the GM hears why."""
    app = new_app(tmp_path)
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=9,
        )
    app.service.send()
    moving_clock(app).set(START + timedelta(days=10))
    cycle(app)
    rows = turns(app)
    assert [t.resolved_at is not None for t in rows] == [True, False]
    assert rows[1].deadline is not None and as_utc(rows[1].deadline) == app.clock.now() + timedelta(hours=48)
    notice = last(app, GM)
    assert "resolved late" in str(notice["Subject"])
    assert "8 days after its deadline" in body_of(notice)
    app.close()


def test_a_turn_resolved_on_time_brings_no_late_notice(rc: TestApp) -> None:
    moving_clock(rc).set(START + timedelta(hours=48, minutes=1))
    cycle(rc)
    assert turns(rc)[0].resolved_at is not None
    assert not any("late" in str(m["Subject"]) for m in mails(rc, GM))


# -- every parser refuses bad input with a DeadlineError ---------------------------------------

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
HUGE = "9" * 5000


def words(error: DeadlineError) -> str:
    """The refusal as the GM or the operator reads it: its facts in the letters' words."""
    return deadline_refused(error.problem)


def assert_clear(error: DeadlineError, reason: str = "") -> None:
    """One line, saying `reason`, and at most ~40 characters of the input quoted back; the
    error's own text (a log line's) is as short, and is no refusal's words."""
    message = words(error)
    assert reason in message, message
    logged = str(error)
    assert len(logged.splitlines()) == 1 and len(logged) < 500 and logged.startswith(error.problem.why.value)
    assert message and len(message.splitlines()) == 1 and "\n" not in message
    assert "9" * 41 not in message and "1" * 41 not in message and "x" * 41 not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24h", timedelta(hours=24)),
        ("2d", timedelta(days=2)),
        ("1d12h", timedelta(hours=36)),
        ("90m", timedelta(minutes=90)),
        (" 1d 12h ", timedelta(hours=36)),
        ("24 h", timedelta(hours=24)),
        ("2D", timedelta(days=2)),
        ("365d", MAX_DURATION),
        ("8760h", MAX_DURATION),
        ("0001d", timedelta(days=1)),
    ],
)
def test_parse_duration_reads_the_documented_forms(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("999999999999d", "at most 365 days"),  # not an OverflowError in timedelta
        ("99999999999999999999999999h", "at most 365 days"),
        ("366d", "at most 365 days"),
        ("8761h", "at most 365 days"),
        ("525601m", "at most 365 days"),
        ("364d23h61m", "at most 365 days"),
        (HUGE + "d", "too long"),
        ("1" * 100_000, "too long"),
        ("", "no duration"),
        ("   ", "no duration"),
        ("0h", "longer than zero"),
        ("0d0h0m", "longer than zero"),
        ("24", "not a duration"),
        ("h", "not a duration"),
        ("-24h", "not a duration"),
        ("+24h", "not a duration"),
        ("1h1d", "not a duration"),
        ("1d1d", "not a duration"),
        ("2 4h", "not a duration"),
        ("1.5h", "not a duration"),
        ("1e9h", "not a duration"),
        ("24h\nPROCESS rc1", "not a duration"),
        ("\u0661\u0662h", "not a duration"),  # Arabic-Indic digits: int() would read them
        ("\uff12\uff14h", "not a duration"),  # full-width digits
        ("\u00b2h", "not a duration"),  # superscript two
        ("24h\u202e", "not a duration"),
    ],
)
def test_parse_duration_refuses_with_a_clear_deadline_error(text: str, reason: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    with pytest.raises(DeadlineError) as caught:
        parse_duration(text)
    assert_clear(caught.value, reason)


def test_a_refusal_quotes_at_most_forty_characters_and_no_line_break() -> None:
    with pytest.raises(DeadlineError) as caught:
        parse_duration("x" * 39 + "\n" + "x" * 50)
    message = words(caught.value)
    assert "\n" not in message and "\\n" in message  # the line break is shown escaped
    assert message.count("x") == 39 and "..." in message  # 40 characters of the input, then cut


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+24h", NOW + timedelta(hours=24)),
        ("+ 2d", NOW + timedelta(days=2)),
        ("2026-06-10 18:00", datetime(2026, 6, 10, 17, 0, tzinfo=UTC)),  # BST
        ("2026-06-10T18:00", datetime(2026, 6, 10, 17, 0, tzinfo=UTC)),
        ("2026-01-10", datetime(2026, 1, 10, 0, 0, tzinfo=UTC)),
        ("2026-1-9 9:05", datetime(2026, 1, 9, 9, 5, tzinfo=UTC)),
        ("2025-01-01 12:00", datetime(2025, 1, 1, 12, 0, tzinfo=UTC)),  # in the past: the caller refuses it
    ],
)
def test_parse_when_reads_game_time_and_plus_durations(text: str, expected: datetime) -> None:
    assert parse_when(text, NOW, "Europe/London") == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("+99999999999999d", "at most 365 days"),
        ("+366d", "at most 365 days"),
        ("+" + HUGE + "h", "too long"),
        ("+", "no duration"),
        ("", "no time"),
        ("9999-12-31 23:59", "at most 365 days"),
        ("2027-06-01 18:00", "at most 365 days"),
        ("2027-01-06 09:01", "at most 365 days"),
        (HUGE + "-01-01", "too long"),
        ("99999-01-01", "not a time"),
        ("2026-02-30 18:00", "not a date"),
        ("2026-13-01", "not a date"),
        ("0000-01-01", "not a date"),
        ("2026-01-10 24:00", "not a date"),
        ("2026-01-10 18:60", "not a date"),
        ("tomorrow", "not a time"),
        ("2026-01-10 18", "not a time"),
        ("2026/01/10", "not a time"),
        ("2026-01-10 18:00:00", "not a time"),
        ("2026-01-10 18:00 PROCESS", "not a time"),
        ("\uff12\uff10\uff12\uff16-02-01 18:00", "not a time"),
        ("2026-0\u0662-01", "not a time"),
    ],
)
def test_parse_when_refuses_with_a_clear_deadline_error(text: str, reason: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    with pytest.raises(DeadlineError) as caught:
        parse_when(text, NOW, "Europe/London")
    assert_clear(caught.value, reason)


def test_parse_when_refuses_moments_outside_datetimes_range() -> None:
    """datetime + timedelta past the year 9999, or a local time before the year 1 in UTC."""
    with pytest.raises(DeadlineError) as caught:
        parse_when("+1h", datetime(9999, 12, 31, 23, 30, tzinfo=UTC), "UTC")
    assert "out of range" in words(caught.value)
    with pytest.raises(DeadlineError) as caught:
        parse_when("0001-01-01 00:00", datetime(1, 1, 2, tzinfo=UTC), "Asia/Tokyo")
    assert "out of range" in words(caught.value)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("48h", Schedule(length=timedelta(hours=48))),
        ("manual", Schedule()),
        ("None", Schedule()),
        ("daily 18:00", Schedule(weekdays=tuple(range(7)), at=datetime(2026, 1, 1, 18, 0).time())),  # noqa: DTZ001
        ("Mon,Thu  18:00", Schedule(weekdays=(0, 3), at=datetime(2026, 1, 1, 18, 0).time())),  # noqa: DTZ001
        ("monday,thursday 7:30", Schedule(weekdays=(0, 3), at=datetime(2026, 1, 1, 7, 30).time())),  # noqa: DTZ001
    ],
)
def test_parse_schedule_reads_the_documented_forms(spec: str, expected: Schedule) -> None:
    assert parse_schedule(spec) == expected


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("999999999999d", "at most 365 days"),
        ("400d", "at most 365 days"),
        ("0h", "longer than zero"),
        ("daily 25:00", "not a time of day"),
        ("daily 18:99", "not a time of day"),
        ("moon 18:00", "unknown day"),
        ("mo 18:00", "unknown day"),
        (", 18:00", "names no day"),
        ("daily 18:00:00", "not a schedule"),
        ("soon", "not a schedule"),
        ("", "not a schedule"),
        ("daily \u0661\u0668:00", "not a schedule"),
        ("x" * 100_000, "too long"),
        ("a," * 50_000 + " 18:00", "too long"),
    ],
)
def test_parse_schedule_refuses_with_a_clear_deadline_error(spec: str, reason: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    with pytest.raises(DeadlineError) as caught:
        parse_schedule(spec)
    assert_clear(caught.value, reason)


@pytest.mark.parametrize(
    ("text", "minutes"), [("30", 30), ("0", 0), (" 45 ", 45), ("2h", 120), ("1d", 1440), ("525600", 525600)]
)
def test_parse_grace_takes_minutes_or_a_duration(text: str, minutes: int) -> None:
    assert parse_grace(text) == minutes


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("525601", "at most 365 days"),
        ("99999999999", "at most 365 days"),
        (HUGE, "too long"),
        ("-5", "not a duration"),
        ("\u0663\u0660", "not a duration"),
        ("3 0", "not a duration"),
        ("", "no duration"),
    ],
)
def test_parse_grace_refuses_with_a_clear_deadline_error(text: str, reason: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    with pytest.raises(DeadlineError) as caught:
        parse_grace(text)
    assert_clear(caught.value, reason)


def _when(text: str) -> object:
    return parse_when(text, NOW, "Europe/London")


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        (
            parse_duration,
            "1" * 101,
            "'" + "1" * 40 + "'... is too long for a duration; write e.g. 24h, 2d, 1d12h or 90m",
        ),
        (parse_grace, "525601", "'525601' is too long: a grace period is at most 365 days"),
        (parse_duration, " ", "no duration given; write e.g. 24h, 2d, 1d12h or 90m"),
        (_when, "", "no time given; write 2026-12-01 18:00 (the game's time zone) or +24h"),
        (parse_duration, "24", "'24' is not a duration; write e.g. 24h, 2d, 1d12h or 90m"),
        (
            parse_schedule,
            "soon",
            "'soon' is not a schedule; use a turn length (48h, 3d, 1d12h), fixed times (daily 18:00, mon,thu 18:00) or manual",
        ),
        (_when, "tomorrow", "'tomorrow' is not a time; write 2026-12-01 18:00 (the game's time zone) or +24h"),
        (parse_duration, "0h", "a duration must be longer than zero"),
        (parse_schedule, "daily 25:00", "25:00 is not a time of day"),
        (parse_schedule, ", 18:00", "', 18:00' names no day; days are mon, tue, wed, thu, fri, sat, sun"),
        (
            parse_schedule,
            "moon 18:00",
            "unknown day 'moon' in 'moon 18:00'; days are mon, tue, wed, thu, fri, sat, sun",
        ),
        (_when, "2027-06-01 18:00", "'2027-06-01 18:00' is too far ahead: a deadline is at most 365 days from now"),
        (
            _when,
            "2026-02-30 18:00",
            "'2026-02-30 18:00' is not a date and time: day is out of range for month; "
            "write 2026-12-01 18:00 (the game's time zone) or +24h",
        ),
    ],
)
def test_a_refusal_reads_word_for_word_as_the_gm_has_always_read_it(
    parse: Callable[[str], object], text: str, expected: str
) -> None:
    """The words of each kind of refusal (deadline_refused, from the error's facts), byte for
    byte: the GM's answer to a bad EXTEND or DEADLINE and the operator's to a bad --deadline."""
    with pytest.raises(DeadlineError) as caught:
        parse(text)
    assert words(caught.value) == expected


def test_next_deadline_past_the_year_9999_is_a_deadline_error() -> None:
    late = datetime(9999, 12, 31, 12, 0, tzinfo=UTC)
    with pytest.raises(DeadlineError) as caught:
        next_deadline(Schedule(length=timedelta(days=2)), late, "UTC")
    assert "9999" in words(caught.value)
    with pytest.raises(DeadlineError) as caught:
        next_deadline(DAILY_18, late, "Europe/London")
    assert "9999" in words(caught.value)


def test_parsing_100000_characters_is_refused() -> None:
    """Hostile texts of 100,000 characters are refused by every deadline parser. That each is
    read in linear time (no backtracking regular expression; the 28 parses in under a second)
    is measured by `python -m bench --only budgets` (bench.budgets.DEADLINE_TEXTS, the same texts)."""
    texts = [
        "1" * 100_000,
        "1d" * 50_000,
        "a," * 50_000 + " 18:00",
        "daily " + "1" * 100_000,
        "+" + "9" * 100_000,
        " " * 99_999 + "1h",
        "1 " * 50_000,
    ]
    for text in texts:
        for parse in (parse_duration, parse_schedule, parse_grace, lambda t: parse_when(t, NOW, "UTC")):
            with pytest.raises(DeadlineError):
                parse(text)


# Hypothesis: on any text a parser returns a value within the cap or raises DeadlineError --
# never anything else (OverflowError, ValueError from int(), ...).

_GM_TEXT = st.one_of(
    st.text(max_size=60),
    st.text(alphabet="0123456789dhm +-:T, ", max_size=40),
    st.from_regex(r"\+?[0-9]{1,30}[dhm]([0-9]{1,30}[dhm])?", fullmatch=True),
    st.from_regex(r"[0-9]{1,6}-[0-9]{1,3}-[0-9]{1,3}( [0-9]{1,3}:[0-9]{1,3})?", fullmatch=True),
    st.integers(min_value=0, max_value=10**40).map(lambda n: f"{n}d"),
)


@settings(max_examples=400, deadline=None)
@given(text=_GM_TEXT)
def test_parse_duration_returns_a_duration_within_the_cap_or_a_deadline_error(text: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    try:
        delta = parse_duration(text)
    except DeadlineError as exc:
        assert_clear(exc)
    else:
        assert timedelta(0) < delta <= MAX_DURATION


@settings(max_examples=400, deadline=None)
@given(
    text=_GM_TEXT,
    zone=st.sampled_from(["UTC", "Europe/London", "America/New_York", "Pacific/Kiritimati"]),
    now=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),  # noqa: DTZ001
)
def test_parse_when_returns_a_moment_within_the_cap_or_a_deadline_error(text: str, zone: str, now: datetime) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    try:
        moment = parse_when(text, now, zone)
    except DeadlineError as exc:
        assert_clear(exc)
    else:
        assert moment.tzinfo is not None and moment <= now + MAX_DURATION


@settings(max_examples=300, deadline=None)
@given(text=_GM_TEXT)
def test_parse_schedule_and_parse_grace_return_values_within_the_cap_or_a_deadline_error(text: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback)."""
    try:
        schedule = parse_schedule(text)
    except DeadlineError as exc:
        assert_clear(exc)
    else:
        assert schedule.length is None or timedelta(0) < schedule.length <= MAX_DURATION
    try:
        minutes = parse_grace(text)
    except DeadlineError as exc:
        assert_clear(exc)
    else:
        assert 0 <= minutes <= MAX_DURATION.total_seconds() // 60
