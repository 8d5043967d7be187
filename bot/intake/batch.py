"""What a batch of mail shares: the mail in hand, what the batch reads once, and what it adds.

A batch is one transaction (bot.service); its mails read the same games, seats and turns again
and again, and add rows that are inserted together when it is done (performance.md: work per
batch). `Batch` holds both, and reads what a mail needs through its memo.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot import outlook, store
from bot.clock import as_utc
from bot.db import among, insert_many
from bot.fate import Answer
from bot.games import turns
from bot.games.archive import NewTurn
from bot.mail_in.auth import parse_tag, tag_in_recipients
from bot.mail_in.inbox import RawMail
from bot.mail_in.parse import Inbound
from bot.mail_out import queue as mailout
from bot.models import AnswerFate, Game, GameStatus, InboundMessage, OrderSubmission, Outbox, Seat, Turn
from bot.settings import Settings
from bot.shell import Shell
from rules.api import AnyGame, GameOrder, GameState

MailKey = tuple[str, str]  # an inbound mail's (Message-ID, content hash): unique in the table
LOOP_WINDOW = timedelta(hours=1)  # the loop limit counts a principal's mails over this long
RECENT_FOR = timedelta(minutes=1)  # how long a loop-limit count read once is used (BatchMemo)


def _claimed_turn(claims: str | None) -> int | None:
    """The newest turn number an outbox row's claims (`Outbox.claims`, JSON) speak of; None
    when it claims none or they cannot be read."""
    try:
        numbers = [int(c["turn"]) for c in json.loads(claims)] if claims else []
    except (ValueError, TypeError, KeyError):
        return None
    return max(numbers, default=None)


def dedupe_hash(inbound: Inbound) -> str:
    """Stable across redelivery: a relay adds Received/Delivered-To headers, not this."""
    key = "\x00".join((inbound.message_id, inbound.sender, inbound.subject, inbound.text))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Mail:
    """The mail in hand: what the server gave, what the parser made of it, whom it proved."""

    raw: RawMail
    inbound: Inbound
    principal: str = ""  # Who.principal, once authenticated
    answers: list[Answer] = field(default_factory=list)  # what the mail made, in order; sent once
    changes_games: bool = False  # a GM command, JOIN or RESIGN: the batch's memo is forgotten
    # Over its sender's loop limit: acted on all the same, its answers withheld.
    over_limit: bool = False
    answer: AnswerFate = AnswerFate.NONE  # what became of its answers, for its record
    # The turns (game id, turn id) its orders complete, or its NOWAIT releases, in a game that
    # resolves early: its answers said so, and the pipeline resolves them once they are queued.
    resolves: list[tuple[int, int]] = field(default_factory=list)

    @property
    def in_reply_to(self) -> str:
        return f"<{self.inbound.message_id}>"

    @cached_property
    def key(self) -> MailKey:
        """Its (Message-ID, content hash): what tells a copy of a mail handled before."""
        return (self.inbound.message_id[:998], dedupe_hash(self.inbound))


@dataclass
class BatchMemo:
    """What a batch of mail reads again and again, read once (performance.md: work per batch).

    `seen` (the Message-IDs handled already) and `recent` (mails per loop-limit key in the last
    hour) are kept up to date as mails are recorded. `games`, `seats`, `states`, `subs` and
    `on_file` hold while the batch only takes orders and answers questions: a mail that does
    anything else (a GM command, JOIN, RESIGN) may change games, seats and turns, and
    `forget`s them.
    """

    seen: set[tuple[str, str]] = field(default_factory=set)
    recent: dict[tuple[str, str], int] = field(default_factory=dict)
    recent_read_at: dict[tuple[str, str], datetime] = field(default_factory=dict)
    games: dict[str, Game | None] = field(default_factory=dict)
    seats: dict[tuple[int, str], Seat | None] = field(default_factory=dict)  # (game id, name): the seats that wrote
    states: dict[int, tuple[AnyGame, GameState, Turn | None]] = field(default_factory=dict)
    subs: dict[tuple[int, int], list[store.FiledOrders]] = field(default_factory=dict)  # (turn, seat) -> its own
    on_file: dict[tuple[int, int], tuple[GameOrder, ...] | None] = field(default_factory=dict)  # (turn, seat) -> merged
    early: dict[int, bool] = field(default_factory=dict)  # turn id -> it resolves early (Outlook.resolves_early)
    senders: dict[int, set[int]] = field(default_factory=dict)  # turn id -> the seats with orders sent (store.senders)
    pending: set[tuple[str, str]] = field(default_factory=set)  # loop-limit keys of rows not yet written
    # Our own mails the batch's mails answer (In-Reply-To, References): Message-ID -> (game id,
    # when sent, the newest turn number the letter's claims speak of, None: it claims none).
    answered: dict[str, tuple[int | None, datetime, int | None]] = field(default_factory=dict)

    def forget(self) -> None:
        self.games.clear()
        self.seats.clear()
        self.states.clear()
        self.subs.clear()
        self.on_file.clear()
        self.early.clear()
        self.senders.clear()


@dataclass
class BatchRows:
    """What a batch adds, inserted together (performance.md: bulk inserts, work per batch): its
    mails, the orders they brought, and the answers to them; one statement each, in the order
    the mails came, when the batch is done or a mail needs them written first."""

    inbound: list[dict[str, object]] = field(default_factory=list)
    submissions: list[tuple[MailKey, dict[str, object]]] = field(default_factory=list)  # the mail's, values
    outbox: mailout.NewRows = field(default_factory=list)
    resolved: list[NewTurn] = field(default_factory=list)  # turns a GM's PROCESS resolved, to publish once committed

    def write(self, session: Session) -> None:
        if self.inbound:
            ids: dict[MailKey, int] = {}
            for i, m, h in insert_many(session, InboundMessage, self.inbound, ("id", "message_id", "content_hash")):
                assert isinstance(i, int) and isinstance(m, str) and isinstance(h, str)
                ids[(m, h)] = i
            self.inbound.clear()
            if self.submissions:
                insert_many(
                    session, OrderSubmission, [{**values, "inbound_id": ids[key]} for key, values in self.submissions]
                )
                self.submissions.clear()
        mailout.insert_rows(session, self.outbox)

    def clear(self) -> None:
        self.inbound.clear()
        self.resolved.clear()
        self.submissions.clear()
        self.outbox.clear()


class Batch:
    """The batch in hand: the shell, what it read (`memo`) and what it adds (`rows`)."""

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.memo = BatchMemo()
        self.rows = BatchRows()
        self.resolved: list[NewTurn] = []  # the turns resolved by the mails written so far (`write_rows`)
        # What the log says of each mail ("mail <id> from ...: applied"), said only once what it
        # says is committed: the lines of the mail in hand, and those of the mails kept so far.
        self.said: list[tuple[str, tuple[object, ...]]] = []
        self.kept_said: list[tuple[str, tuple[object, ...]]] = []

    @property
    def settings(self) -> Settings:
        return self.shell.settings

    def begin(self, session: Session, inbounds: Sequence[Inbound], *, again: bool = False) -> None:
        """A new batch (`again`: the same one, mail by mail): read what it has seen before at once.

        The loop-limit counts are carried from batch to batch (a sender's mails rarely come in
        one batch) for up to `RECENT_FOR` after they were read: a mail that has just left its
        hour may go on counting for that long (a limit a minute late), never one that did not
        come. After a failed attempt (`again`) nothing is carried over: it counted mails that
        the rollback undid."""
        recent, read_at = self.memo.recent, self.memo.recent_read_at
        self.memo = BatchMemo()
        self.resolved = []  # a batch done again: what the failed attempt resolved was rolled back
        if not again:
            now = self.shell.now()
            for key, when in read_at.items():
                if now - when < RECENT_FOR:
                    self.memo.recent[key], self.memo.recent_read_at[key] = recent[key], when
        ids = sorted({i.message_id[:998] for i in inbounds})
        self.memo.seen.update(
            (m, h)
            for m, h in among(
                session,
                select(InboundMessage.message_id, InboundMessage.content_hash),
                (InboundMessage.message_id,),
                [(i,) for i in ids],
            )
        )
        self._read_answered(session, inbounds)
        self._read_games(session, inbounds)

    def _read_answered(self, session: Session, inbounds: Sequence[Inbound]) -> None:
        """Which of our mails the batch's mails answer, when each was sent (one query): what
        tells the turn a reply's orders were written for (`orders.answered_turn`)."""
        domain = "@" + self.settings.bot.domain.lower()
        wanted = sorted(
            {
                f"<{m}>"
                for i in inbounds
                if i.ignore is None
                for m in (i.in_reply_to, *i.references[-5:])
                if m and m.lower().endswith(domain)
            }
        )
        if wanted:
            self.memo.answered.update(
                (m, (g, as_utc(t), _claimed_turn(claims)))
                for m, g, t, claims in among(
                    session,
                    select(Outbox.message_id, Outbox.game_id, Outbox.created_at, Outbox.claims),
                    (Outbox.message_id,),
                    [(m,) for m in wanted],
                )
            )

    def _read_games(self, session: Session, inbounds: Sequence[Inbound]) -> None:
        """The games the batch's signed reply addresses name (most mail is a reply to one), the
        seats those addresses name with their players, the games' open turns and states, and
        those seats' submissions and loop-limit counts: five queries for the whole batch;
        whatever else a mail needs is read when it needs it."""
        claims: set[tuple[str, str]] = set()
        for inbound in inbounds:
            tag = tag_in_recipients(self.settings.bot.address, inbound.recipients) if inbound.ignore is None else None
            claimed = parse_tag(tag) if tag else None
            if claimed is not None:
                claims.add((claimed.game, claimed.seat))
        if not claims:
            return
        names = {game for game, _ in claims}
        found = store.find_games(session, names)
        for name in names:
            self.memo.games[name] = found.get(name)
        # The seats that wrote, alone: a game's other seats are not needed to take orders.
        wanted = [(found[name].id, seat) for name, seat in claims if name in found]
        seats = store.seats_named(session, wanted)
        for key in wanted:
            self.memo.seats[key] = seats.get(key)
        open_turns = store.open_turns(session, list(found.values()))
        for game in found.values():
            if game.id in open_turns:
                self.memo.states[game.id] = turns.state_with(session, game, open_turns[game.id])
        # Their submissions (a seat's are what its orders on file are made of).
        pairs = [(open_turns[seat.game_id].id, seat.id) for seat in seats.values() if seat.game_id in open_turns]
        self.memo.subs.update(store.seats_submissions(session, pairs))
        self._read_recent(session, [s for s in seats.values() if not s.game.practice])

    def _read_recent(self, session: Session, seats: Sequence[Seat]) -> None:
        """The loop-limit counts (`limits.Limiter.over_loop_limit`) of the seats the batch's signed
        reply addresses name, not carried over from the batch before, in one query: what the
        limiter would read for each of them on its first mail, read at the same moment. A seat
        that writes proves itself as ``seat:<id>`` (`Who.principal`; a practice seat counts by
        its mailbox and is read when it writes)."""
        now = self.shell.now()
        keys = [k for k in sorted({(f"seat:{s.id}", "") for s in seats}) if k not in self.memo.recent]
        if not keys:
            return
        counts: dict[str, int] = {
            principal: int(n)
            for principal, n in among(
                session,
                select(InboundMessage.principal, func.count())
                .where(InboundMessage.received_at >= now - LOOP_WINDOW)
                .group_by(InboundMessage.principal),
                (InboundMessage.principal,),
                [(principal,) for principal, _ in keys],
            )
        }
        for key in keys:
            self.memo.recent[key] = counts.get(key[0], 0)
            self.memo.recent_read_at[key] = now

    def seen(self, mail: Mail) -> bool:
        """The same mail (Message-ID and content) was handled before, in this batch or another."""
        return mail.key in self.memo.seen

    def find_game(self, session: Session, name: str) -> Game | None:
        key = name.lower()
        if key not in self.memo.games:
            self.memo.games[key] = store.find_game_row(session, key, with_seats=True)
        return self.memo.games[key]

    def find_seat(self, game: Game, name: str) -> Seat | None:
        key = (game.id, name)
        if key in self.memo.seats:
            return self.memo.seats[key]
        return store.seat_named(game, name)

    def current_state(self, session: Session, game: Game) -> tuple[AnyGame, GameState, Turn | None]:
        if game.id not in self.memo.states:
            self.memo.states[game.id] = turns.current_state(session, game)
        return self.memo.states[game.id]

    def on_file(
        self, session: Session, rules: AnyGame, state: GameState, turn: Turn, seat: Seat
    ) -> tuple[GameOrder, ...] | None:
        """The seat's orders on file for the turn (`store.orders_on_file`), worked out once a batch and
        kept up to date as its orders come (`file_orders`)."""
        pair = (turn.id, seat.id)
        if pair not in self.memo.on_file:
            subs = self.memo.subs.pop(pair) if pair in self.memo.subs else store.submissions(session, turn, seat)
            self.memo.on_file[pair] = store.orders_on_file(rules, state, seat, subs)
        return self.memo.on_file[pair]

    def resolves_early(self, session: Session, game: Game, turn: Turn) -> bool:
        """Whether `turn` may resolve as soon as every order is in: the turn's outlook says so
        (`Outlook.resolves_early`: the game's early resolution, and no seat's WAIT holding it),
        read once a batch (a WAIT or NOWAIT forgets it)."""
        if not outlook.timing(game, turn).early:
            return False
        if turn.id not in self.memo.early:
            rules, state, _ = self.current_state(session, game)
            held = outlook.held_by(rules, state, store.turn_waits(session, turn))
            self.memo.early[turn.id] = outlook.resolves_early(outlook.timing(game, turn), held)
        return self.memo.early[turn.id]

    def resolves_with(self, session: Session, game: Game, turn: Turn, seat: Seat, text: str) -> bool:
        """Whether the deadline would find `turn` due at once (`turns.is_due`, the tick's own
        test) were the seat's `text` filed now, with the orders the batch has taken so far and
        not yet written: the orders that complete a turn that resolves early."""
        if not outlook.timing(game, turn).early or game.status != GameStatus.ACTIVE:
            return False
        # Not every seat has sent anything yet: it cannot complete the turn (no seat is read).
        if turn.id not in self.memo.senders:
            self.memo.senders[turn.id] = store.senders(session, turn)
        self.memo.senders[turn.id].add(seat.id)
        self.memo.senders[turn.id].update(
            int(str(values["seat_id"])) for _, values in self.rows.submissions if values["turn_id"] == turn.id
        )
        rules, state, _ = self.current_state(session, game)
        if len(self.memo.senders[turn.id]) < len(rules.expected_players(state)):
            return False
        now = self.shell.now()
        subs: dict[int, list[OrderSubmission]] = {k: list(v) for k, v in store.turn_submissions(session, turn).items()}
        pending = [values for _, values in self.rows.submissions if values["turn_id"] == turn.id]
        pending.append({"turn_id": turn.id, "seat_id": seat.id, "source": "mail", "text": text, "received_at": now})
        for values in pending:
            subs.setdefault(int(str(values["seat_id"])), []).append(OrderSubmission(**values))
        return turns.is_due(session, game, turn, now, pace=turns.practice_pace(self.settings.practice), subs=subs)

    def file_orders(self, turn: Turn, seat: Seat, merged: tuple[GameOrder, ...]) -> None:
        """What the batch's next mail from the seat finds on file."""
        self.memo.on_file[(turn.id, seat.id)] = merged

    def write_rows(self, session: Session) -> None:
        """Write what the batch added so far, in order -- what commands changed through the
        session, then the rows collected since: when the batch (or, mail by mail, the mail) is
        done, and before a query that counts or reads rows of earlier mails of the batch
        (limits, replies to strangers, commands), as autoflush is off while a mail is handled."""
        if session.new or session.dirty or session.deleted:
            session.flush()
        self.resolved.extend(self.rows.resolved)
        self.rows.write(session)
        self.memo.pending.clear()

    def drop_rows(self) -> None:
        """The mail (or batch) was rolled back: what it collected goes too, and what the log
        would have said of it."""
        self.rows.clear()
        self.said.clear()
        self.memo.forget()  # it may hold what the rollback undid

    def say(self, message: str, *args: object) -> None:
        """A log line (INFO) of the mail in hand, said once its batch is committed (`tell`)."""
        self.said.append((message, args))

    def keep_said(self) -> None:
        """The mail in hand (or every mail of the batch) is kept: its lines wait for the commit."""
        self.kept_said.extend(self.said)
        self.said.clear()

    def tell(self, logger: logging.Logger) -> None:
        """The batch is committed: its mails' lines, in the order they came."""
        lines, self.kept_said = self.kept_said, []
        for message, args in lines:
            logger.info(message, *args)

    def forget_said(self) -> None:
        """The batch's transaction was rolled back: nothing it would have said is true."""
        self.said.clear()
        self.kept_said.clear()


__all__ = ["LOOP_WINDOW", "RECENT_FOR", "Batch", "BatchMemo", "BatchRows", "Mail", "MailKey", "dedupe_hash"]
