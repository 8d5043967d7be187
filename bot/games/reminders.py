"""Reminders before a deadline, and the note to the GM of a turn resolved late.

product.md: a player "gets a reminder before the deadline if nothing is on file"; so does one
whose set on file lacks a part, told what it lacks and what will fill it. Each game
has a reminder schedule (`Game.reminder_spec`, e.g. ``24h,2h``: durations before the
deadline; ``none`` for no reminders). `Turn.reminded` records the marks already handled, so
no reminder is sent twice for the same deadline:

* a mark that was already due when the turn opened (a 12-hour turn has no "24h before") is
  skipped, not sent: the turn sheet has just told the player the deadline;
* when several marks fall due at once (after downtime), one reminder goes out, not several;
* when the GM moves the deadline (EXTEND, DEADLINE, RESUME, ROLLBACK) the marks are re-armed
  for the new deadline with `rearm`.

Every reminder shows the deadline in the recipient's own time zone, and carries a
``List-Unsubscribe`` that stops the reminders of that seat alone (bot.mail_out.lists); a
player who used it (or REMINDERS OFF) gets none until REMINDERS ON (bot.games.preferences).
The same marks are the alarms of the turn's calendar event (bot.mail_out.calendar).

Backlog after downtime: `bot.games.turns` opens each turn with a deadline computed from the moment
the previous one was resolved, so at most one turn per game can be overdue when the service
comes back: the tick resolves that one (as it would have been, with the NMR defaults), and the
next turn gets a full turn length from now. A backlog of several overdue turns cannot build
up, so none is ever resolved blindly; what the GM needs to know is that a turn was resolved
late (`bot.games.deadline.run` says which, `tell_late` tells them).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import letters, outlook, store
from bot.clock import as_utc
from bot.games import turns
from bot.games.preferences import reminders_wanted
from bot.letters import ToGm, ToSeat, notices
from bot.letters.context import deadline_text, time_in_words
from bot.letters.words import say
from bot.models import Game, GameStatus, Turn
from bot.outlook import what_counts
from bot.schedules import DeadlineError, parse_duration
from bot.shell import Shell

log = logging.getLogger("flagman.reminders")


def parse_marks(spec: str) -> tuple[timedelta, ...]:
    """``24h,2h`` -> (24h, 2h), longest first; ``none`` or "" -> ()."""
    text = spec.strip().lower()
    if text in ("", "none", "off"):
        return ()
    marks = {parse_duration(part) for part in text.split(",") if part.strip()}
    return tuple(sorted(marks, reverse=True))


def mark_name(mark: timedelta) -> str:
    minutes = int(mark.total_seconds()) // 60
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    return (f"{days}d" if days else "") + (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")


def validate_spec(spec: str) -> str:
    """The canonical form of a reminder schedule, or DeadlineError."""
    marks = parse_marks(spec)
    return ",".join(mark_name(m) for m in marks) if marks else "none"


def _marks_of(game: Game) -> tuple[timedelta, ...]:
    try:
        return parse_marks(game.reminder_spec)
    except DeadlineError:
        log.warning("game %s: reminder schedule %r not understood; no reminders", game.name, game.reminder_spec)
        return ()


def _done(turn: Turn) -> set[str]:
    return {m for m in (turn.reminded or "").split(",") if m}


def rearm(game: Game, turn: Turn, now: datetime) -> None:
    """The deadline moved: forget the marks sent, and skip those already due at the new one."""
    if turn.deadline is None:
        turn.reminded = ""
        return
    deadline = as_utc(turn.deadline)
    turn.reminded = ",".join(mark_name(m) for m in _marks_of(game) if deadline - m <= now)


def marks_due(
    marks: tuple[timedelta, ...], done: set[str], deadline: datetime, opened: datetime, now: datetime
) -> tuple[list[timedelta], list[timedelta]]:
    """(marks to remind for now, marks to skip silently): pure, so it can be checked alone.

    A mark is reached when `now` is at or after ``deadline - mark``; one reached before the
    turn opened is skipped (the turn sheet has just said the deadline); one already in `done`
    is neither.
    """
    due: list[timedelta] = []
    skipped: list[timedelta] = []
    for mark in marks:
        if mark_name(mark) in done or now < deadline - mark:
            continue
        (skipped if deadline - mark <= opened else due).append(mark)
    return due, skipped


def send_reminders(shell: Shell) -> int:
    """Queue the reminders that are due; returns how many mails were queued. The open turns
    with a mark to note are found on a snapshot (one query), and only those are written, each
    in a transaction of its own (bench: deadline: not one transaction per open turn)."""
    now = shell.now()
    with shell.db.read() as session:
        candidates = [
            turn.id
            for turn, game in session.execute(
                select(Turn, Game)
                .join(Game, Game.id == Turn.game_id)
                .where(Game.status == GameStatus.ACTIVE, Turn.resolved_at.is_(None), Turn.deadline.is_not(None))
                .order_by(Turn.id)
            ).all()
            if _marks_to_note(game, turn, now) is not None
        ]
    queued = 0
    for turn_id in candidates:
        with shell.db.transaction() as session:
            turn = session.get(Turn, turn_id)
            if turn is None or turn.resolved_at is not None or turn.deadline is None:
                continue
            queued += remind_turn(shell, session, turn, now)
    return queued


def _marks_to_note(game: Game, turn: Turn, now: datetime) -> tuple[list[timedelta], list[timedelta]] | None:
    """The reminder marks of `turn` to remind for now and to skip silently (`marks_due`);
    None when there is nothing to note (none reached, or the turn has closed)."""
    when = outlook.timing(game, turn)
    if game.status != GameStatus.ACTIVE or when.due is None or when.closes is None or now >= when.closes:
        return None
    due, skipped = marks_due(_marks_of(game), _done(turn), when.due, as_utc(turn.opened_at), now)
    return (due, skipped) if due or skipped else None


def remind_turn(shell: Shell, session: Session, turn: Turn, now: datetime) -> int:
    game = session.get(Game, turn.game_id)
    if game is None or turn.deadline is None:
        return 0
    marks = _marks_to_note(game, turn, now)
    if marks is None:
        return 0
    due, skipped = marks
    deadline = outlook.timing(game, turn).due
    if deadline is None:
        return 0
    done = _done(turn)
    turn.reminded = ",".join(sorted(done | {mark_name(m) for m in (*due, *skipped)}))
    if not due:
        return 0
    rules = turns.rules_of(game)
    state = rules.load_state(turn.state)
    by_seat = store.turn_submissions(session, turn)
    # Whether the turn may resolve before the deadline, as the tick reads it: no WAIT holding it.
    early = outlook.of_turn(game, rules, state, by_seat).resolves_early(outlook.timing(game, turn))
    sent = 0
    for name in sorted(rules.expected_players(state)):
        seat = store.seat_named(game, name)
        if seat is None or not seat.active or not reminders_wanted(seat):
            continue
        if outlook.on_vacation(seat.player, deadline):  # VACATION: the default applies, the player is away
            continue
        # Nothing on file, or a set that lacks a part (a seat whose set is incomplete is
        # reminded too, with what is missing and what will fill it); a complete set is not.
        on_file = store.orders_on_file(rules, state, seat, by_seat.get(seat.id, []))
        if on_file is not None and rules.is_complete(state, seat.name, on_file):
            continue
        counting = what_counts(rules, state, seat, on_file)
        rendered = notices.reminder(
            shell,
            game,
            rules,
            state,
            turn,
            seat,
            on_file=on_file,
            counting=counting,
            left=time_in_words(deadline - now),
            early=early,
        )
        letters.post(shell, session, ToSeat(seat), rendered, kind="reminder")
        sent += 1
    log.info("game %s %s: %d reminder(s) (%s before the deadline)", game.name, turn.label, sent, mark_name(min(due)))
    return sent


# -- late resolutions -------------------------------------------------------------------


def tell_late(shell: Shell, session: Session, game: Game, number: int, lateness: timedelta) -> None:
    """The GM is told that turn `number` was resolved `lateness` after its deadline, the turn
    named by its label and the time in words ("1 hour 30 min", "8 days")."""
    turn = store.open_turn(session, game)
    label = session.scalar(select(Turn.label).where(Turn.game_id == game.id, Turn.number == number)) or str(number)
    text = say(
        "deadline_late",
        label=label,
        game=game.name,
        late=time_in_words(lateness),
        next=turn.label if turn is not None else None,
        due=deadline_text(outlook.timing(game, turn), game.timezone) if turn is not None else None,
    )
    letters.notice(shell, session, ToGm(game), say("deadline_late_subject", label=label), text, kind="late")
