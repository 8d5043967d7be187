"""Deadlines: fixed local times across daylight-saving changes, the grace period, early
resolution on and off, and a service that was down across a deadline (the backlog)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app import App
from bot.clock import as_utc
from bot.deadlines import MIN_NOTICE, format_local, next_deadline, parse_schedule
from bot.games import create_game, find_game_row
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

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
LONDON = ZoneInfo("Europe/London")
DAILY_18 = parse_schedule("daily 18:00")


def set_game(app: App, **values: object) -> None:
    with app.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        for key, value in values.items():
            setattr(game, key, value)


# -- daylight saving -------------------------------------------------------------------------------

@pytest.mark.parametrize("opened, expected_utc", [
    # Spring forward, Sunday 29 March 2026 01:00 UTC: 18:00 GMT on Saturday, 18:00 BST on Sunday.
    (datetime(2026, 3, 27, 20, 0, tzinfo=UTC), datetime(2026, 3, 28, 18, 0, tzinfo=UTC)),
    (datetime(2026, 3, 28, 12, 0, tzinfo=UTC), datetime(2026, 3, 29, 17, 0, tzinfo=UTC)),
    # Fall back, Sunday 25 October 2026 01:00 UTC: 18:00 BST on Saturday, 18:00 GMT on Sunday.
    (datetime(2026, 10, 23, 20, 0, tzinfo=UTC), datetime(2026, 10, 24, 17, 0, tzinfo=UTC)),
    (datetime(2026, 10, 24, 12, 0, tzinfo=UTC), datetime(2026, 10, 25, 18, 0, tzinfo=UTC)),
])
def test_a_daily_deadline_stays_at_18_local_across_the_clock_change(opened: datetime, expected_utc: datetime) -> None:
    """bot/deadlines.py: 18:00 Europe/London stays 18:00 local across a daylight-saving change."""
    deadline = next_deadline(DAILY_18, opened, "Europe/London")
    assert deadline == expected_utc
    assert deadline.astimezone(LONDON).strftime("%H:%M") == "18:00"


@settings(max_examples=150, deadline=None)
@given(opened=st.datetimes(min_value=datetime(2026, 3, 20), max_value=datetime(2026, 11, 5),  # noqa: DTZ001 - st.datetimes bounds are naive
                           timezones=st.just(UTC)))
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
        create_game(app.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM,
                    deadline="daily 18:00", timezone="Europe/London", seed=5, options={"turns": "5"})
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
        app.clock.set(deadline + timedelta(minutes=1))
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

def test_orders_within_the_grace_period_count_and_the_turn_waits_for_it(rc: App) -> None:
    """With a 30-minute grace, orders 10 minutes after the deadline are taken; the turn resolves
    only after the grace has passed."""
    set_game(rc, grace_minutes=30)
    deadline = as_utc(turns(rc)[0].deadline)  # type: ignore[arg-type]
    rc.clock.set(deadline + timedelta(minutes=10))
    player_says(rc, "seb", "USE 4")
    assert "[ERROR]" not in str(last(rc, ADDRESS["seb"])["Subject"])
    assert turns(rc)[0].resolved_at is None
    rc.clock.set(deadline + timedelta(minutes=31))
    player_says(rc, "kelly", "USE 4")
    assert any("Too late" in str(m["Subject"]) for m in mails(rc, ADDRESS["kelly"]))
    assert turns(rc)[0].resolved_at is not None


def test_early_resolution_off_waits_for_the_deadline_with_every_order_in(rc: App) -> None:
    """Early resolution off: all orders in does not resolve the turn before its deadline."""
    set_game(rc, early_resolution=False)
    for seat in ADDRESS:
        player_says(rc, seat, "USE 3")
    assert turns(rc)[0].resolved_at is None
    rc.clock.advance(hours=48)
    cycle(rc)
    assert turns(rc)[0].resolved_at is not None


def test_early_resolution_on_resolves_once_every_order_is_in(rc: App) -> None:
    for seat in ADDRESS:
        player_says(rc, seat, "USE 3")
    assert turns(rc)[0].resolved_at is not None


# -- the backlog after downtime -------------------------------------------------------------------

def test_after_downtime_one_turn_is_resolved_the_next_gets_a_full_turn_and_the_gm_is_told(tmp_path: Path) -> None:
    """issue 5: after downtime, do not resolve a backlog blindly. reminders.py: the next deadline
    counts from the resolution, so after ten days down only the overdue turn is resolved; the
    next is due a full turn from now; the GM hears why."""
    app = new_app(tmp_path)
    with app.db.transaction() as session:
        create_game(app.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM,
                    deadline="48h", timezone="Europe/London", seed=9)
    app.service.send()
    app.clock.set(START + timedelta(days=10))
    cycle(app)
    rows = turns(app)
    assert [t.resolved_at is not None for t in rows] == [True, False]
    assert as_utc(rows[1].deadline) == app.clock.now() + timedelta(hours=48)  # type: ignore[arg-type]
    notice = last(app, GM)
    assert "resolved late" in str(notice["Subject"])
    assert "192 hours after its deadline" in body_of(notice)
    app.close()


def test_a_turn_resolved_on_time_brings_no_late_notice(rc: App) -> None:
    rc.clock.set(START + timedelta(hours=48, minutes=1))
    cycle(rc)
    assert turns(rc)[0].resolved_at is not None
    assert not any("late" in str(m["Subject"]) for m in mails(rc, GM))
