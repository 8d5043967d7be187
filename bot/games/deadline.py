"""The deadline: every turn that is due resolved, its letters queued and sent, then what follows
from the resolutions, then the reminders -- in one function, `run`, in the order it happens:

    run()
    1 due       which turns are due: `turns.due_ids`, on a read-only snapshot of its own
                (`turns.is_due`: the deadline and grace passed, or every person's orders in
                where the game resolves early; a WAIT holds the turn); a turn that may
                resolve early is checked as its chunk is read, in step 2
    2 outlook   each chunk of due turns read together on a snapshot (`work_out_due`): each
                expected seat's orders and where they come from, on file (mail, the GM's
                ORDER, a robot's), the GM's plot or the game's default (`bot.outlook.of_turn`)
    3 resolve   the rules resolve the turn, its dice seeded from the turn's secret and these
                orders (`turns.compute`); what that writes, worked out without writing it
                (`turns.work_out`: the turn, the NMR defaults and streaks, the next turn and its
                robots' orders, and what every results letter says); the letters rendered from
                that on the same snapshot (`_worked_out`: `bot.letters.turn.render`)
    4 write     `_write`: the turn's own transaction, opened there; `turns.write_turn` (what
                was worked out, as plain values: no object of the snapshot is written back)
    5 letters   the turn's letters queued in that same transaction (`letters.queue_rows`)
    6 archive   the turn published (`archive.publish`), after the commit
    7 send      `on_resolved()`: the service's sender starts on the turn's mail
    then        `_after_resolutions` (the NMR limits of the games resolved, the GM told of a turn
                resolved late: one transaction) and `reminders.send_reminders`; on SQLite the
                write-ahead log copied into the database file (`Database.checkpoint`), which
                the sender's commits never do

A turn's resolution and letters are worked out on a snapshot, never in a write transaction (on
SQLite a snapshot holds no write lock, so the sender's commits never wait for a turn's
rendering), a chunk of turns at a time (`chunked`: small chunks first, then `TICK_CHUNK`), by
the turn worker when the service has one (in a worker process, every chunk once it is running,
the first worked out here while it starts: `bot.games.workers`). The transaction that writes
a turn writes what was worked out only if nothing it was worked out from has changed since
(`store.resolution_inputs`); otherwise the turn is worked out again inside it. Either way a
crash loses no mail and sends none twice: the turn and its letters are committed together, or
neither is. A turn is resolved at most once: its row is read again (and on PostgreSQL locked)
in the transaction, and skipped if another process resolved it meanwhile.

The GM's PROCESS resolves a turn through the same steps (`resolve_now`), in the transaction of
the mail or command that asked for it; that caller publishes it after its commit.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from bot import letters, store
from bot.db import among
from bot.faults import CrashPoint
from bot.games import archive, observers, reminders, seasons, seats, turns
from bot.games.turns import TurnKey, TurnWrites
from bot.letters import turn as turn_letters
from bot.letters.cache import DrawnPictures, LetterCache
from bot.mail_out import queue as mailout
from bot.models import Game, GameStatus, Seat, Turn
from bot.outlook import Outcome
from bot.pictures import needs_history
from bot.shell import Shell
from rules.api import GameState

log = logging.getLogger("flagman.games")

# A turn resolved this long after its closing time was resolved late (the service was down),
# and the GM is told (`_after_resolutions`). Below it, a tick interval's delay is normal.
LATE_AFTER = timedelta(hours=1)

# The due turns worked out on one snapshot (bench: deadline): their games, seats, players,
# turns and submissions read together, a few queries for them all, not a dozen a turn.
TICK_CHUNK = 20
# The first chunk of a tick of more turns than that (`chunked`): the chunks after it double.
FIRST_CHUNK = 2

Due = Sequence[tuple[int, int]]  # due turns, as (game id, turn id) pairs


@dataclass(frozen=True, slots=True)
class Resolved:
    """A turn the deadline resolved; `late`: how long after its closing time, when over
    LATE_AFTER and the turn waited for orders (a turn nobody orders in is never late)."""

    game: str
    number: int
    late: timedelta | None = None


@dataclass(frozen=True, slots=True)
class WorkedOut:
    """A due turn worked out on a snapshot: the inputs it was worked out from
    (`store.resolution_inputs`), the turn as writing it needs it, when it stopped taking orders
    if it waited for any (`_closes`), what resolving it writes, its letters rendered (outbox
    rows), and the pictures drawn for them. Plain values, no ORM object: a turn worker sends it
    back to the service, which writes it as it is or reads again what it must (`_write`)."""

    inputs: tuple[object, ...]
    turn: TurnKey
    closes: datetime | None
    writes: TurnWrites
    mails: mailout.NewRows
    pictures: DrawnPictures


class TurnWorker(Protocol):
    """Where the due turns are worked out (`work_out_due`), a chunk at a time: in the service's
    process (`InlineTurnWorker`) or in a worker process beside it
    (`bot.games.workers.ProcessTurnWorker`), which changes where, never what."""

    def work_out(self, shell: Shell, chunks: Sequence[Due]) -> Generator[list[WorkedOut], None, None]:
        """Each chunk worked out, in order; the deadline writes each before it asks for the next.
        The crash point WORKED_OUT is reached in the service's process for every turn worked out."""
        ...

    def close(self) -> None: ...


class InlineTurnWorker:
    """Each chunk worked out in the calling thread when the deadline asks for it."""

    def work_out(self, shell: Shell, chunks: Sequence[Due]) -> Generator[list[WorkedOut], None, None]:
        for chunk in chunks:
            yield work_out_due(shell, chunk)

    def close(self) -> None:
        pass


INLINE = InlineTurnWorker()


def run(
    shell: Shell,
    *,
    worker: TurnWorker = INLINE,
    on_resolved: Callable[[], None] | None = None,
    limit_per_game: int = 50,
) -> list[Resolved]:
    """Resolve every due turn, each in a transaction of its own, then the NMR limits and the
    late notices, then the reminders (the module's docstring, step by step); returns what was
    resolved, in order. A game whose next turn is due at once (nothing to wait for) has it
    resolved in the next round, up to `limit_per_game` rounds."""
    done: list[Resolved] = []
    rounds = 0
    among: set[int] | None = None  # after the first round: the games that resolved a turn in the last
    while rounds < limit_per_game and among != set():
        rounds += 1
        with shell.db.read() as session:  # 1 due
            # A turn that may resolve early is checked as its chunk is worked out (`work_out_due`).
            due = turns.due_ids(session, shell.now(), pace=_pace(shell), among=among, early_unread=True)
        if not due:
            break
        among = set()
        chunks = chunked(due)
        with closing(worker.work_out(shell, chunks)) as worked_out:  # 2 outlook, 3 resolve
            for chunk in worked_out:
                for worked in chunk:
                    written = _write(shell, worked)  # 4 write, 5 letters
                    if written is None:
                        continue
                    resolved, new_turn = written
                    archive.publish(shell, [new_turn])  # 6 archive, now that it is committed
                    done.append(resolved)
                    among.add(worked.turn.game_id)  # its next turn may be due at once (nothing to wait for)
                    shell.faults.reached(CrashPoint.AFTER_RESOLVE)
                    if on_resolved is not None:  # 7 send
                        on_resolved()
    if done:
        _after_resolutions(shell, done)
    reminders.send_reminders(shell)
    if done:
        _checkpoint(shell)
    return done


def _checkpoint(shell: Shell) -> None:
    """SQLite: the log of the turns just written copied into the database file, beside the
    send rather than in a mail's outcome (`Database.checkpoint`). A checkpoint that fails (a
    full disk) changes nothing written: it is logged, and a later commit copies the log."""
    try:
        shell.db.checkpoint()
    except sqlite3.Error as exc:
        log.warning("the deadline's turns are written; their log was not copied into the database file now: %s", exc)


def chunked(due: Due, most: int | None = None) -> list[Due]:
    """The due turns in the chunks they are worked out in: one chunk when they are `most`
    (`TICK_CHUNK`) or fewer; else the first chunks small (`FIRST_CHUNK`, then twice as many
    each) up to `most` at a time, so that the first turns are written and their mail is on its
    way while the rest are worked out, instead of every mail waiting for a whole chunk."""
    most = TICK_CHUNK if most is None else most
    if len(due) <= most:
        return [due] if due else []
    chunks: list[Due] = []
    start, size = 0, min(FIRST_CHUNK, most)
    while start < len(due):
        chunks.append(due[start : start + size])
        start += size
        size = min(size * 2, most)
    return chunks


def work_out_due(shell: Shell, due: Due) -> list[WorkedOut]:
    """Steps 2 and 3 for the turns `due`, on one read-only snapshot, in order; a turn that is
    not (or no longer) due is left out. What is returned pickles (a turn worker sends it back
    to the service)."""
    worked: list[WorkedOut] = []
    with shell.db.read() as session:
        inputs = store.resolution_inputs_of(session, due)
        game_ids = sorted({game_id for game_id, _ in due})
        turn_ids = sorted({turn_id for _, turn_id in due})
        wanted = set(turn_ids)
        games = store.games_with_seats(session, game_ids)
        # A game whose picture needs its history has every turn read ahead, the due one among
        # them: that one is not read a second time.
        store.read_ahead_turns(session, [g.id for g in games.values() if needs_history(g.kind)])
        turn_rows = {
            turn.id: turn
            for game_id in games
            for turn in store.game_turns_read_ahead(session, game_id)
            if turn.id in wanted
        }
        missing = [turn_id for turn_id in turn_ids if turn_id not in turn_rows]
        if missing:
            turn_rows.update((turn.id, turn) for turn in session.scalars(select(Turn).where(Turn.id.in_(missing))))
        subs = store.turns_submissions(session, turn_ids)
        observers.read_ahead(session, game_ids)
        seasons.read_ahead(session, game_ids)
        store.read_ahead_logs(session, game_ids)
        for game_id, turn_id in due:
            game, turn = games.get(game_id), turn_rows.get(turn_id)
            if game is None or turn is None or turn.resolved_at is not None or game.status != GameStatus.ACTIVE:
                continue  # (a game not active: `turns.is_due` says no before decoding its state)
            state = turns.rules_of(game).load_state(turn.state)  # decoded once for the turn's every step
            if not turns.is_due(
                session, game, turn, shell.now(), pace=_pace(shell), subs=subs.get(turn_id, {}), state=state
            ):
                continue
            key, closes = TurnKey.of(game, turn), _closes(game, turn, state)
            writes, mails, pictures = _worked_out(shell, session, game, turn, subs.get(turn_id, {}), state)
            shell.faults.reached(CrashPoint.WORKED_OUT)
            worked.append(WorkedOut(inputs[turn_id], key, closes, writes, mails, pictures))
    return worked


def _write(shell: Shell, worked: WorkedOut) -> tuple[Resolved, archive.NewTurn] | None:
    """Steps 4 and 5: write one turn worked out on a snapshot, with its letters, in a
    transaction of its own: as worked out if its inputs are unchanged, else worked out again
    here; None if it is no longer due."""
    key, closes, writes, mails, pictures = worked.turn, worked.closes, worked.writes, worked.mails, worked.pictures
    with shell.db.transaction() as session:
        if store.resolution_inputs(session, key.game_id, key.turn_id, lock=True) == worked.inputs:
            turns.write_turn(session, key, writes)
        else:
            # An order, a GM command... came in meanwhile: worked out again, here. The seats
            # and their players in one query each, not one per seat.
            game = session.get(Game, key.game_id, options=[selectinload(Game.seats).selectinload(Seat.player)])
            turn = session.get(Turn, key.turn_id)
            if game is None or turn is None or turn.resolved_at is not None:
                return None
            subs = store.turn_submissions(session, turn)
            if not turns.is_due(session, game, turn, shell.now(), pace=_pace(shell), subs=subs):
                return None
            key, closes = TurnKey.of(game, turn), _closes(game, turn)
            writes, mails, pictures = _worked_out(shell, session, game, turn, subs)
            turns.write_turn(session, key, writes)
            turns.expire_written(session, game, turn)
        letters.queue_rows(session, mails)
    return Resolved(key.game, key.number, _lateness(closes, shell.now())), archive.NewTurn(
        key.game_id, key.number, pictures
    )


def _worked_out(
    shell: Shell, session: Session, game: Game, turn: Turn, subs: store.BySeat, state: GameState | None = None
) -> tuple[TurnWrites, mailout.NewRows, DrawnPictures]:
    """Step 3: the due `turn` worked out (`turns.work_out`) and its letters rendered from what
    it says of them (`bot.letters.turn.render`), in `session`, writing nothing; the writes
    returned no longer hold the letters' plan (what is worked out on a snapshot pickles). `state`:
    the turn's state already decoded (else decoded here)."""
    cache = LetterCache()  # the turn's letters share its picture and public report
    writes = turns.work_out(shell, session, game, turn, cache=cache, subs=subs, state=state)
    assert writes.letters is not None
    mails = turn_letters.render(shell, session, game, turn, writes.letters, cache=cache)
    return dataclasses.replace(writes, letters=None), mails, cache.pictures


def _pace(shell: Shell) -> timedelta:
    return turns.practice_pace(shell.settings.practice)


def _closes(game: Game, turn: Turn, state: GameState | None = None) -> datetime | None:
    """When `turn` stops taking orders, if it waits for any (a turn nobody orders in is never late).
    `state`: the turn's state already decoded (else decoded here)."""
    closing_at = turns.closing_time(game, turn)
    if closing_at is None:
        return None
    rules = turns.rules_of(game)
    return closing_at if rules.expected_players(state if state is not None else rules.load_state(turn.state)) else None


def _lateness(closes: datetime | None, now: datetime) -> timedelta | None:
    """How late a turn that stopped taking orders at `closes` is resolved `now`, when over LATE_AFTER."""
    return now - closes if closes is not None and now - closes > LATE_AFTER else None


def _after_resolutions(shell: Shell, done: Sequence[Resolved]) -> None:
    """What follows from the turns resolved, in one transaction: the NMR-streak limits of their
    games, and the GM told of each turn resolved late (the service was down over its deadline)."""
    with shell.db.transaction() as session:
        # The games with their seats and players in three queries, not one per game; only those
        # where a seat missed a turn (the NMR limit acts on no other) or a turn was late.
        missed = {
            name
            for (name,) in among(
                session,
                select(Game.name).join(Seat, Seat.game_id == Game.id).where(Seat.nmr_streak > 0).distinct(),
                (Game.name,),
                [(name,) for name in sorted({r.game for r in done})],
            )
        }
        games = store.find_games(session, missed | {r.game for r in done if r.late is not None}, with_seats=True)
        for name in sorted(games):
            seats.enforce_nmr_limit(shell, session, games[name])
        for r in done:
            late_game = games.get(r.game) if r.late is not None else None
            if late_game is not None and r.late is not None:
                reminders.tell_late(shell, session, late_game, r.number, r.late)


def resolve_now(shell: Shell, session: Session, game: Game, turn: Turn) -> tuple[Outcome, archive.NewTurn]:
    """The GM's PROCESS: the open turn resolved at once, through the deadline's steps 2 to 5, in
    the caller's transaction, its letters queued there. The caller publishes the turn returned
    (`archive.publish`) after its commit."""
    writes, new_turn = resolve_writes(shell, session, game, turn)
    return writes.outcome, new_turn


def resolve_writes(shell: Shell, session: Session, game: Game, turn: Turn) -> tuple[TurnWrites, archive.NewTurn]:
    """`resolve_now`, returning all it wrote (the orders a ROLLBACK kept: `TurnWrites.recheck`)."""
    writes, mails, pictures = _worked_out(shell, session, game, turn, store.turn_submissions(session, turn))
    shell.faults.reached(CrashPoint.WORKED_OUT)  # worked out in the caller's transaction, nothing written
    turns.write_turn(session, TurnKey.of(game, turn), writes)
    turns.expire_written(session, game, turn)
    letters.queue_rows(session, mails)
    return writes, archive.NewTurn(game.id, turn.number, pictures)
