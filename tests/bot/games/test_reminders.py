"""Reminders before the deadline (product.md: "a reminder before the deadline if nothing is on
file"): at each mark of the game's schedule, once, to the seats with nothing on file, with the
deadline in each recipient's own zone."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.games.reminders import mark_name, marks_due, parse_marks, validate_spec
from bot.store import find_game_row
from bot.testing import TestApp
from rules import find_game
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, START, body_of, cycle, gm_says, mails, past_setup, player_says, turns
from tests.helpers import moving_clock

RACECRAFT = find_game("racecraft")
gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def reminders_to(app: TestApp, seat: str) -> list[str]:
    return [body_of(m) for m in mails(app, ADDRESS[seat]) if "Reminder" in str(m["Subject"])]


def all_reminders(app: TestApp) -> int:
    return sum(len(reminders_to(app, seat)) for seat in ADDRESS)


def set_game(app: TestApp, **values: object) -> None:
    with app.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        for key, value in values.items():
            setattr(game, key, value)


def test_reminders_go_at_each_mark_once_and_only_to_seats_with_nothing_on_file(rc: TestApp) -> None:
    """24h and 2h before the deadline, once each; a seat with orders on file gets none."""
    player_says(rc, "seb", "USE 3")
    moving_clock(rc).set(START + timedelta(hours=23))
    cycle(rc)
    assert all_reminders(rc) == 0
    moving_clock(rc).set(START + timedelta(hours=24))  # 24h before Wed 09:00
    cycle(rc)
    assert len(reminders_to(rc, "kelly")) == 1 and reminders_to(rc, "seb") == []
    assert all_reminders(rc) == 4
    for _ in range(3):
        moving_clock(rc).advance(minutes=30)
        cycle(rc)
    assert all_reminders(rc) == 4, "no reminder is sent twice"
    player_says(rc, "anna", "USE 2")
    moving_clock(rc).set(START + timedelta(hours=46))  # 2h before
    cycle(rc)
    cycle(rc)
    assert len(reminders_to(rc, "kelly")) == 2 and len(reminders_to(rc, "anna")) == 1
    assert all_reminders(rc) == 7
    assert set(turns(rc)[0].reminded.split(",")) == {"1d", "2h"}  # both marks recorded on the turn


def test_a_reminder_shows_the_deadline_in_the_recipients_zone_and_the_default(rc: TestApp) -> None:
    """Every deadline is shown in the recipient's own zone; the reminder says what the default is."""
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    kelly, steve, roger = (reminders_to(rc, s)[0] for s in ("kelly", "steve", "roger"))
    assert "Wed 7 Jan 2026 09:00 GMT" in kelly
    assert "Wed 7 Jan 2026 04:00 EST" in steve
    assert "Wed 7 Jan 2026 20:00 AEDT" in roger
    assert "> USE 5" in kelly and "in 24 hours" in kelly
    reminder = [m for m in mails(rc, ADDRESS["kelly"]) if "Reminder" in str(m["Subject"])][0]
    assert "rc1.kelly." in str(reminder["Reply-To"])  # replying to it authenticates


def test_a_mark_already_past_when_the_turn_opens_is_skipped(gapp: TestApp) -> None:
    """A 12-hour turn gets no "24h before" reminder straight after its turn sheet."""
    from bot.games.turns import create_game
    from tests.bot.gm_helpers import GM, RACERS

    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="12h",
            timezone="Europe/London",
            seed=1,
        )
    cycle(gapp)
    assert all_reminders(gapp) == 0
    assert turns(gapp)[0].reminded == "1d"
    moving_clock(gapp).advance(hours=10)
    cycle(gapp)
    assert all_reminders(gapp) == 5


def test_marks_due_together_after_downtime_send_one_reminder(rc: TestApp) -> None:
    """The service was down across both marks: one reminder, not two."""
    moving_clock(rc).set(START + timedelta(hours=47))
    cycle(rc)
    assert len(reminders_to(rc, "kelly")) == 1
    assert "in 1 hour" in reminders_to(rc, "kelly")[0]


def test_moving_the_deadline_rearms_the_reminders(rc: TestApp) -> None:
    """After EXTEND the reminders count again from the new deadline."""
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    assert len(reminders_to(rc, "kelly")) == 1
    gm_says(rc, "EXTEND rc1 48h")
    cycle(rc)
    assert len(reminders_to(rc, "kelly")) == 1
    moving_clock(rc).set(START + timedelta(hours=72))  # 24h before the new deadline
    cycle(rc)
    assert len(reminders_to(rc, "kelly")) == 2


def test_no_reminders_for_a_paused_game_or_with_the_schedule_off(rc: TestApp) -> None:
    gm_says(rc, "PAUSE rc1")
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    assert all_reminders(rc) == 0
    set_game(rc, reminder_spec="none")
    gm_says(rc, "RESUME rc1")
    moving_clock(rc).advance(hours=47)
    cycle(rc)
    assert all_reminders(rc) == 0


def test_reminder_schedules_parse_and_print_canonically() -> None:
    assert parse_marks("2h, 24h") == (timedelta(hours=24), timedelta(hours=2))
    assert validate_spec("90m,1d") == "1d,1h30m"
    assert validate_spec("none") == "none" and parse_marks("off") == ()


@settings(max_examples=200, deadline=None)
@given(
    marks=st.sets(st.integers(min_value=1, max_value=72 * 60), min_size=1, max_size=4),
    turn_minutes=st.integers(min_value=30, max_value=96 * 60),
    steps=st.lists(st.integers(min_value=1, max_value=30 * 60), min_size=1, max_size=40),
)
def test_each_mark_is_handled_once_and_only_reached_marks_are_sent(
    marks: set[int], turn_minutes: int, steps: list[int]
) -> None:
    """Property (reminders.py): whatever the tick times, a mark is reminded for at most once,
    never before it is reached, never if it was already past when the turn opened, and every
    mark reached before the deadline is handled by the first tick after it."""
    schedule = tuple(sorted((timedelta(minutes=m) for m in marks), reverse=True))
    opened = START
    deadline = opened + timedelta(minutes=turn_minutes)
    done: set[str] = set()
    sent: list[timedelta] = []
    now = opened
    for step in steps:
        now += timedelta(minutes=step)
        if now >= deadline:
            break
        due, skipped = marks_due(schedule, done, deadline, opened, now)
        for mark in due:
            assert deadline - mark > opened and now >= deadline - mark
        for mark in skipped:
            assert deadline - mark <= opened
        sent.extend(due)
        done |= {mark_name(m) for m in (*due, *skipped)}
        assert all(mark_name(m) in done for m in schedule if now >= deadline - m)
    assert len(sent) == len(set(sent))


def test_a_player_on_vacation_gets_no_reminder(rc: TestApp) -> None:
    """mail-interface.md: VACATION <from> <to>: "defaults apply" for a turn due in those days:
    the player is away, so the reminders before it are not sent to them (the others get theirs)."""
    player_says(rc, "kelly", "VACATION 2026-01-05 2026-01-08")  # turn 1 closes on Wed 7 Jan
    moving_clock(rc).set(START + timedelta(hours=24))  # 24h before the deadline
    cycle(rc)
    assert reminders_to(rc, "kelly") == []
    assert len(reminders_to(rc, "seb")) == 1


def test_a_reminder_names_the_gms_plot_as_what_a_silent_seat_gets(rc: TestApp) -> None:
    """ "the player sees it named as the GM's plot wherever a default is
    mentioned" -- the reminder included."""
    gm_says(rc, "PLOT rc1 steve USE 1")
    moving_clock(rc).set(START + timedelta(hours=24))
    cycle(rc)
    (reminder,) = reminders_to(rc, "steve")
    text = " ".join(reminder.split())  # its words, wrapping aside
    assert "If nothing arrives by then, you get the GM's plot (the game's own default would be USE 5): > USE 1" in text
    (other,) = reminders_to(rc, "kelly")
    assert "you get the default:" in other


def test_a_seat_whose_set_lacks_a_part_is_reminded_with_what_fills_it(gapp: TestApp) -> None:
    """The reminders render what counts: speed-circuit.md §8, "every line is optional
    but SPEED"; a driver whose plot on file lacks SPEED is reminded, told the set lacks the speed
    and which speed the default fills in (the safe plot's); a driver with a whole plot is not."""
    from tests.bot.commands.test_self_service import _game

    _game(gapp, "speed_circuit", 3)
    past_setup(gapp)
    player_says(gapp, "p0", "PAY ROLL", game="g1", address="p0@example.org")
    player_says(gapp, "p1", "SPEED 40", game="g1", address="p1@example.org")
    deadline = turns(gapp, "g1")[-1].deadline
    assert deadline is not None
    moving_clock(gapp).set(deadline.replace(tzinfo=START.tzinfo) - timedelta(hours=24))
    cycle(gapp)

    def reminded(seat: str) -> list[str]:
        found = mails(gapp, f"{seat}@example.org")
        return [body_of(m).replace("\r\n", "\n") for m in found if "Reminder" in str(m["Subject"])]

    (lacking,) = reminded("p0")
    flat = " ".join(lacking.split())
    assert "are not a complete set" in flat and "    > PAY ROLL" in lacking
    assert "    - the speed: a SPEED line" in lacking
    assert "the game's default fills what is missing with: > SPEED " in flat
    assert reminded("p1") == []
    assert len(reminded("p2")) == 1 and "No orders from you are on file yet" in reminded("p2")[0]
