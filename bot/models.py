"""The database tables, as SQLAlchemy 2 typed models.

Everything the bot knows lives here. The schema is made only by the Alembic migrations in
`migrations/`; a test checks that they and these models agree.
"""

from __future__ import annotations

import enum
import json
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _utc() -> DateTime:
    return DateTime(timezone=True)


class GameStatus(enum.StrEnum):
    SIGNUP = "signup"  # open for JOIN
    ACTIVE = "active"
    PAUSED = "paused"
    FINISHED = "finished"


class InboundStatus(enum.StrEnum):
    APPLIED = "applied"  # its effect and a confirmation
    REFUSED = "refused"  # a clear error reply
    IGNORED = "ignored"  # never answered: logged and in the digest
    QUARANTINED = "quarantined"  # processing crashed: kept for the GM


class Reason(enum.StrEnum):
    """Why a mail ended as it did, one value per outcome the intake knows (the record
    says it in a column, for the digest and the limits to select on, not in words to match).
    The `detail` column beside it says the rest in words, for people."""

    # Applied: its effect and a confirmation.
    ORDERS = "orders"
    COMMANDS = "commands"
    FOR_ANYONE = "for anyone"  # the commands for anyone (and codes of ours) from an unproven sender
    NOTE = "note"  # words and no orders (a thank-you, a note): what stands is said again, nothing changes
    JOIN_ASKED = "join asked"  # a stranger's JOIN: the code is out
    # Refused, with an answer.
    ORDERS_REFUSED = "orders refused"
    ORDERS_OFFERED = "orders offered back"  # prose whose orders hedge or negate: offered back, none taken
    NOT_STARTED = "not started"
    FINISHED = "finished"
    LATE = "late"
    NOT_EXPECTED = "not expected"
    EMPTY = "empty"
    RESOLVED_TURN = "answers a resolved turn"  # orders in a reply to a mail of a turn already resolved
    AMBIGUOUS_GAME = "ambiguous game"
    NOT_UNDERSTOOD = "not understood"  # a GM's lines that are neither commands nor orders
    JOIN_REFUSED = "join refused"
    UNKNOWN_SENDER = "unknown sender"  # proved nobody: the stranger notice, or nothing within the caps
    AUTH_FAILED = "authentication failed"  # a player's registered From without proof
    AUTH_FAILED_GM = "GM authentication failed"  # the GM's address or From without the GM's second proof
    OVERSIZE = "over the size limit"
    # Ignored: never answered (besides the ignore policy's own reasons below).
    RATE_LIMIT = "rate limit"
    # The ignore policy's verdicts (bot.mail_in.parse.IgnoreReason), by the same values.
    BOUNCE = "bounce"
    AUTO_REPLY = "auto-reply"
    BULK = "bulk"
    LOOP = "loop"
    OWN_MAIL = "own mail"
    NO_SENDER = "no sender"
    AMBIGUOUS_SENDER = "several senders"
    UNPARSEABLE = "unparseable"
    CALENDAR_REPLY = "calendar reply"
    QUARANTINED = "quarantined"  # processing crashed (bot.service)


class AnswerFate(enum.StrEnum):
    """What became of the answer a mail would get (caps withhold answers, never
    actions or records): every mail records whether it was answered and, if not, why."""

    SENT = "sent"  # answered (one answer, in sections where it made several)
    HOLDER = "sent to holder"  # proved nobody, and told the registered address it claimed (never the sender)
    NONE = "none"  # nothing to answer: never-answered mail (bounces, auto-replies ...), a mail with no answer due
    RATE_LIMIT = "rate limit"  # withheld: its sender's (or seat's) mail this hour passed the loop limit
    STRANGER_DAY = "stranger daily cap"  # withheld: this unproven address had its answers for the day
    STRANGER_HOUR = "stranger hourly cap"  # withheld: the answers to unproven senders for this hour are out
    TOLD_TODAY = "told today"  # withheld: the same notice went to the same address today

    @property
    def withheld(self) -> bool:
        return self not in (AnswerFate.SENT, AnswerFate.HOLDER, AnswerFate.NONE)


class RequestKind(enum.StrEnum):
    """A request that waits for an address to answer a code."""

    JOIN = "join"  # a seat for the address that sent JOIN, once it answers
    ADDRESS = "address"  # seats moved to a new address, once it answers (and the old one had time to stop it)
    PRACTICE = "practice"  # a practice game for the address that sent PRACTICE (`name`: the kind), once it answers
    SERIES = "series"  # a newcomer in a series' next season (`name`: the name chosen), once it answers


class RequestStatus(enum.StrEnum):
    WAITING = "waiting"  # the code is out; nothing done yet
    CONFIRMED = "confirmed"  # ADDRESS: the new address answered; done at `effective_at` unless stopped
    DONE = "done"
    STOPPED = "stopped"  # ADDRESS: stopped from the old address


class OutboxStatus(enum.StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class Player(Base):
    __tablename__ = "player"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    address: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    created_at: Mapped[datetime] = mapped_column(_utc())
    # VACATION <from> <to> (migration 0005): days in the player's zone, both included, on
    # which a missed turn gets the NMR default without counting towards the NMR limit.
    vacation_from: Mapped[date | None] = mapped_column(Date, nullable=True)
    vacation_to: Mapped[date | None] = mapped_column(Date, nullable=True)
    # CALENDAR ON|OFF (migration 0006): whether turn sheets carry the deadline as a calendar
    # event (bot.mail_out.calendar), for all the player's games.
    calendar: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # RATING ON|OFF (migration 0021_ratings): whether the player's rating is shown to them (in
    # their own results letters), off until they ask; it is worked out either way (bot.ratings).
    rating: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class PressMode(enum.StrEnum):
    """What PRESS may do in a game (mail-interface.md, player commands): the GM's choice."""

    NONE = "none"  # no press
    SIGNED = "signed"  # the message names its sender
    ANONYMOUS = "anonymous"  # the players are not told who sent it (the GM's copy says)


class Game(Base):
    __tablename__ = "game"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    kind: Mapped[str] = mapped_column(String(40))  # rules registry key
    status: Mapped[str] = mapped_column(String(16), default=GameStatus.ACTIVE)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    gm_address: Mapped[str] = mapped_column(String(320))
    gm_secret: Mapped[str] = mapped_column(String(64))
    seed: Mapped[int] = mapped_column(BigInteger)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    deadline_spec: Mapped[str] = mapped_column(String(120))
    grace_minutes: Mapped[int] = mapped_column(Integer, default=0)
    early_resolution: Mapped[bool] = mapped_column(Boolean, default=True)
    # GM side (migration 0002): reminder marks before the deadline; NMR-streak limit and what follows it.
    reminder_spec: Mapped[str] = mapped_column(String(120), default="24h,2h", server_default="24h,2h")
    nmr_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    nmr_action: Mapped[str] = mapped_column(String(16), default="gm", server_default="gm")  # gm | drop
    press: Mapped[str] = mapped_column(String(16), default=PressMode.SIGNED, server_default="signed")  # PressMode
    # A practice game (migration 0013, PRACTICE by mail): one person against robots,
    # counting for nothing, closed when left alone (bot.games.robots).
    practice: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The entry gate (migration 0019_season2b, `--min-reliability`): the least on-time ratio a
    # JOIN's person must have (`rules.reliability.parse_minimum` reads it, e.g. "0.8"); NULL: none.
    min_reliability: Mapped[str | None] = mapped_column(String(12), nullable=True)
    created_at: Mapped[datetime] = mapped_column(_utc())
    finished_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)
    # How many times the game has finished (a ROLLBACK reopens a finished game; resolved again,
    # it finishes anew: a corrected result), and how many of those finishes its GM's digest has
    # listed (`bot.gm.digest`: each finish once, in the first digest after it).
    finishes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    finishes_listed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    seats: Mapped[list[Seat]] = relationship(back_populates="game", order_by="Seat.id")
    turns: Mapped[list[Turn]] = relationship(back_populates="game", order_by="Turn.number")


class Seat(Base):
    __tablename__ = "seat"
    __table_args__ = (UniqueConstraint("game_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    name: Mapped[str] = mapped_column(String(40))  # the PlayerId the rules know
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"), index=True)
    secret: Mapped[str] = mapped_column(String(64))  # the seat password
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    nmr_streak: Mapped[int] = mapped_column(Integer, default=0)
    gm_plot: Mapped[str | None] = mapped_column(Text, nullable=True)  # canonical orders
    # Part of the signed reply address's MAC; renewed when the seat changes hands, so the
    # reply address the previous holder kept stops working (REPLACE, NMR hand-over).
    reply_salt: Mapped[str] = mapped_column(String(32), default="", server_default="")
    joined_at: Mapped[datetime] = mapped_column(_utc())
    # The player who stopped this seat's reminders (migration 0006: List-Unsubscribe, REMINDERS
    # OFF); they are sent while it is not the seat's holder now, so a new holder gets them.
    reminders_off_for: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Driven by the game's robot (migration 0013): its holder is the robots' player
    # (bot.games.robots.ROBOT_ADDRESS, no address at all), it is never mailed, and its orders are
    # filed as soon as each turn opens.
    robot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # How well its robot drives (migration 0016_robots, `rules.api.RobotLevel`): "normal" or "easy".
    robot_level: Mapped[str] = mapped_column(String(8), default="normal", server_default="normal")
    # Given to another person by the GM's REPLACE or taken from the substitutes bench (migration
    # 0022_talk4): the letters show it as "<seat> (<holder's name>)"
    # (bot.letters.context.seat_labels); the rules key it by `name`.
    handed_over: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    game: Mapped[Game] = relationship(back_populates="seats")
    player: Mapped[Player] = relationship()


class Turn(Base):
    """One turn of a game. `state` is the state the turn opened with; `state_after`,
    `events` and `resolved_at` are filled once, when it is resolved."""

    __tablename__ = "turn"
    __table_args__ = (UniqueConstraint("game_id", "number"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(String(200))
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(BigInteger)
    opened_at: Mapped[datetime] = mapped_column(_utc())
    deadline: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)
    state_after: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    events: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    reminded: Mapped[str] = mapped_column(String(200), default="")  # reminder marks sent
    # The SEQUENCE of the turn's calendar event (migration 0006): up by one each time the GM
    # moves the deadline, so calendars take the update (RFC 5546 2.1.5).
    calendar_sequence: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The seats whose orders were sent, in the order their final sets arrived (migration
    # 0010), written when the turn is resolved and given to the rules (`Game.resolve`'s
    # `submitted`: SpeedPhreakz's "whoever submitted first"); NULL before it was kept.
    submitted: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # The secret of the turn's dice (migration 0011): drawn when the turn opens, its
    # commitment on every sheet, revealed in the results; the seed above is worked out from it
    # and the orders used when the turn resolves (bot.dice). NULL for turns opened before.
    secret: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # How often ROLLBACK reopened the turn (migration 0012): its results then say
    # that they replace the ones sent before.
    corrections: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The derivation of the turn's dice digest, seed and receipts (migration 0014, rules.fair):
    # 2 for every turn opened since (the orders in normal form, the turn named by its label);
    # 1 for the turns opened before, which keep the one their mails were made with.
    dice_scheme: Mapped[int] = mapped_column(Integer, default=2, server_default="1")
    # The orders sent for the turn after this one when a ROLLBACK reopened it (migration 0017):
    # each {"seat", "source" (mail | gm), "text", "received_at", "inbound_id"}; when this turn
    # resolves again, each is filed for the new turn where it stands, else withdrawn
    # (`bot.games.carried`). NULL: none.
    carried: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)

    game: Mapped[Game] = relationship(back_populates="turns")


class CommitmentFate(enum.StrEnum):
    """What became of a commitment (`Commitment.fate`)."""

    OPEN = "open"  # its turn is open: the secret is the bot's until the turn resolves
    RESOLVED = "resolved"  # its turn resolved with it; the results revealed the secret
    ROLLED_BACK = "rolled back"  # resolved, then undone by ROLLBACK: the turn was drawn again
    WITHDRAWN = "withdrawn"  # its turn never resolved with it: a ROLLBACK of the turn before discarded it


class Commitment(Base):
    """One entry of a game's commitment log (migration 0014, rules.fair): every commitment ever
    made to a turn's dice, in the order made, each chained to the one before by `head`. Rows are
    only ever added; an entry's secret, fate and publication are filled in later, never its
    commitment, time, reason or head. Keyed by the turn's number, not its row: a ROLLBACK deletes
    the turn opened after the one it reopens, never its entry."""

    __tablename__ = "commitment"
    __table_args__ = (UniqueConstraint("game_id", "seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # 1, 2, ... in the game's log
    number: Mapped[int] = mapped_column(Integer)  # the turn's
    label: Mapped[str] = mapped_column(String(200))
    commitment: Mapped[str] = mapped_column(String(64))
    made_at: Mapped[datetime] = mapped_column(_utc())
    why: Mapped[str] = mapped_column(String(16))  # opened | reopened | recorded (rules.fair.WHYS)
    head: Mapped[str] = mapped_column(String(64))  # the log's head after this entry
    secret: Mapped[str | None] = mapped_column(String(64), nullable=True)  # once revealed
    revealed_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)
    fate: Mapped[str] = mapped_column(String(16), default=CommitmentFate.OPEN)
    # When the bot's own archive ([bot] archive_dir) published it: NULL until then
    # (bot.games.archive.publish writes every game with an entry not yet published).
    published_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True, index=True)


class OrderSubmission(Base):
    """A valid set of orders as received (or filled in), in canonical text.

    The set on file for a seat is every submission of the turn folded with the game's
    `merge_orders`, in id order. `source`: mail, gm (ORDER), default (NMR), plot (GM plot).
    """

    __tablename__ = "order_submission"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turn.id"), index=True)
    seat_id: Mapped[int] = mapped_column(ForeignKey("seat.id"), index=True)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_message.id"), nullable=True)
    source: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    received_at: Mapped[datetime] = mapped_column(_utc())
    # The mail the orders came in (no schema of its own: the foreign key above). Set as an object,
    # the intake needs no flush per mail to learn the mail's id (performance.md: work per batch).
    inbound: Mapped[InboundMessage | None] = relationship()


class InboundMessage(Base):
    __tablename__ = "inbound_message"
    __table_args__ = (UniqueConstraint("message_id", "content_hash"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(998))
    content_hash: Mapped[str] = mapped_column(String(64))
    mailbox_key: Mapped[str] = mapped_column(String(200))
    received_at: Mapped[datetime] = mapped_column(_utc(), index=True)
    sender: Mapped[str] = mapped_column(String(320), index=True)
    subject: Mapped[str] = mapped_column(String(998))
    status: Mapped[str] = mapped_column(String(16))
    detail: Mapped[str] = mapped_column(Text, default="")
    game_id: Mapped[int | None] = mapped_column(ForeignKey("game.id"), nullable=True, index=True)
    seat_id: Mapped[int | None] = mapped_column(ForeignKey("seat.id"), nullable=True)
    text: Mapped[str] = mapped_column(Text, default="")  # the extracted orders text
    # Whom the mail proved itself to be (bot.games.identity.Who.principal): "seat:<id>",
    # "gm:<address>", or "" for mail that proved nobody. Rate limits count per principal.
    principal: Mapped[str] = mapped_column(String(340), default="", server_default="", index=True)
    # What became of its answer (AnswerFate, migration 0008): sent, none due, or withheld and why.
    answer: Mapped[str] = mapped_column(String(24), default=AnswerFate.NONE, server_default="none")
    # Why it ended as it did (Reason, migration 0009): what the digest and the limits select on.
    reason: Mapped[str] = mapped_column(String(32), default="", server_default="", index=True)


class Outbox(Base):
    __tablename__ = "outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(998), unique=True)
    kind: Mapped[str] = mapped_column(String(32))
    game_id: Mapped[int | None] = mapped_column(ForeignKey("game.id"), nullable=True, index=True)
    recipient: Mapped[str] = mapped_column(String(320))
    envelope_from: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(998))
    status: Mapped[str] = mapped_column(String(16), default=OutboxStatus.PENDING, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(_utc())
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(_utc())
    sent_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)
    # What the letter claims about what happens next (migration 0017, `bot.facts.Claims`): data
    # beside its text, never in the mail; NULL for a letter that claims nothing.
    # JSON text (a list of `Claims.to_json`), read with `claimed`.
    claims: Mapped[str | None] = mapped_column(Text, nullable=True)

    @property
    def claimed(self) -> list[dict[str, Any]]:
        """The letter's claims, decoded (none: [])."""
        return list(json.loads(self.claims)) if self.claims else []

    # The mail's bytes, in a row of their own (`OutboxBody`): loaded only when read.
    body: Mapped[OutboxBody | None] = relationship(cascade="all, delete-orphan", passive_deletes=True)

    @property
    def data(self) -> bytes:
        """The mail's bytes (its `body`, read from the database if not loaded yet: a query of
        its own, so many rows' bodies are read with `selectinload(Outbox.body)`); b"" once
        pruned."""
        return self.body.data if self.body is not None else b""


class OutboxBody(Base):
    """The bytes of an outbox row's mail, exactly as they are sent (and resent, with the same
    Message-ID), in a table of their own (migration 0025): an outcome's update of the
    outbox row (status, attempts) writes a small row, not the ~30 kB of a results mail again
    (SQLite rewrites a whole row on update). No row: the body was pruned ([retention]
    sent_mail_days); a pending mail always has its body."""

    __tablename__ = "outbox_body"
    id: Mapped[int] = mapped_column(ForeignKey("outbox.id", ondelete="CASCADE"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Quarantine(Base):
    __tablename__ = "quarantine"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    mailbox_key: Mapped[str] = mapped_column(String(200))
    message_id: Mapped[str] = mapped_column(String(998))
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    error: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(_utc())
    reported: Mapped[bool] = mapped_column(Boolean, default=False)


class GmAudit(Base):
    __tablename__ = "gm_audit"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("game.id"), nullable=True, index=True)
    actor: Mapped[str] = mapped_column(String(320))
    via: Mapped[str] = mapped_column(String(16))  # mail | cli | auto | deadline (bot.games.audit: the bot's own)
    message_id: Mapped[str] = mapped_column(String(998), default="")
    command: Mapped[str] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(_utc())
    undo: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # what ROLLBACK discarded


class GmDigest(Base):
    """One daily digest sent to one GM: `day` is the GM's local date (YYYY-MM-DD)."""

    __tablename__ = "gm_digest"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    gm_address: Mapped[str] = mapped_column(String(320), index=True)
    day: Mapped[str] = mapped_column(String(10))
    sent_at: Mapped[datetime] = mapped_column(_utc())


class AttentionKind(enum.StrEnum):
    """What a GM's "needs your attention" item is about (`bot.games.attention`)."""

    NOTE = "note"  # a player's words for the GM (prose addressed to the GM, a farewell)
    QUESTION = "question"  # a player's question (a rules question): the bot cannot answer it
    LOST = "lost"  # orders that were not used (too late, for a turn already resolved)
    WITHDRAWN = "withdrawn"  # orders on file withdrawn by the bot (they cannot stand after a change)
    REFUSED_RESEND = "refused re-send"  # orders sent again and refused


class GmAttention(Base):
    """One thing a GM should look at, kept until the digest shows it (and after, for the
    record): a player's note or question, orders lost or withdrawn. `seat`: the seat's name
    when it is about one; `text`: what to show, as one printable line or a few quoted ones."""

    __tablename__ = "gm_attention"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    seat: Mapped[str | None] = mapped_column(String(40), nullable=True)
    kind: Mapped[str] = mapped_column(String(24))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(_utc(), index=True)


class Observer(Base):
    """An address that gets a game's public results by mail (OBSERVE, confirmed from that
    address first; UNOBSERVE ends it). Read-only: an observer acts for nobody."""

    __tablename__ = "observer"
    __table_args__ = (UniqueConstraint("game_id", "address"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    address: Mapped[str] = mapped_column(String(320))
    created_at: Mapped[datetime] = mapped_column(_utc())


class PendingRequest(Base):
    """What waits for an address to answer a code (migration 0008): a JOIN (the seat is
    made when the joining address answers) or an ADDRESS (the seats move when the new address
    answers, and not before the old address has had `[limits] address_change_hold` to stop it).
    The code mailed is the request's id signed with the address that must answer it
    (bot.mail_in.tokens); nothing else of it leaves the database."""

    __tablename__ = "pending_request"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # RequestKind
    status: Mapped[str] = mapped_column(String(16), default=RequestStatus.WAITING, index=True)  # RequestStatus
    game_id: Mapped[int | None] = mapped_column(ForeignKey("game.id"), nullable=True, index=True)  # JOIN
    player_id: Mapped[int | None] = mapped_column(ForeignKey("player.id"), nullable=True, index=True)  # ADDRESS
    seat_ids: Mapped[list[int]] = mapped_column(JSON, default=list)  # ADDRESS: the seats it moves
    address: Mapped[str] = mapped_column(String(320))  # the address that must answer (JOIN's From, the new one)
    old_address: Mapped[str] = mapped_column(String(320), default="", server_default="")  # ADDRESS: told, may stop
    name: Mapped[str] = mapped_column(String(200), default="", server_default="")  # JOIN: the name chosen
    created_at: Mapped[datetime] = mapped_column(_utc())
    confirmed_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)
    effective_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)  # ADDRESS: not before
    ended_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)


class SeasonStatus(enum.StrEnum):
    RUNNING = "running"  # races to come or under way
    FINISHED = "finished"


class Season(Base):
    """A championship season (migration 0018_season): its races are games (`SeasonRace`), its
    table is worked out from their archived results by `rules.season` with these settings."""

    __tablename__ = "season"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    kind: Mapped[str] = mapped_column(String(40))  # the rules registry key every race uses
    gm_address: Mapped[str] = mapped_column(String(320))
    status: Mapped[str] = mapped_column(String(16), default=SeasonStatus.RUNNING)
    # The scoring table as `rules.season.ScoringTable.shown` writes it: f1, cfr, linear, custom:10,6,4
    scoring: Mapped[str] = mapped_column(String(200))
    drop_results: Mapped[int] = mapped_column(Integer, default=0)
    no_show_penalty: Mapped[int] = mapped_column(Integer, default=0)
    nmr_penalty: Mapped[int] = mapped_column(Integer, default=0)
    races_planned: Mapped[int] = mapped_column(Integer)  # how many races the season runs
    # The tracks (or maps) in rotation, as game options: race n uses item (n-1) mod len; [] none.
    tracks: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(_utc())
    # Tiers (migration 0020_season2a): the series the season belongs to (its own name unless
    # given), its tier (1 the top), its edition (the series' first season is 1; the seasons of
    # one edition are its tiers) and how many of its top go up (`promote`, unused in tier 1) and
    # of its bottom go down (`relegate`, unused in the bottom tier) when the next is drawn.
    series: Mapped[str] = mapped_column(String(40), default="", server_default="", index=True)
    tier: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    edition: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    promote: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    relegate: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Newcomers (migration 0023_season4_draw): the least field of the tier's next race, filled
    # with robots when the draw gives it fewer drivers (0: no robots added), and whether the
    # bench volunteers of the series' kind are drawn into its lowest tier as newcomers.
    min_field: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    bench_newcomers: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    races: Mapped[list[SeasonRace]] = relationship(back_populates="season", order_by="SeasonRace.round")


class SeasonDraw(Base):
    """A series' next season as drawn when it was first shown (migration 0023_season4_draw): the
    draw confirmed is this one, never a recomputation. `edition` is the next season's number in
    the series; `drawn` each tier's drivers in grid order (top tier first), each
    ``{"driver", "came_from", "move", "place"}``; `basis` what the draw was drawn from (each tier's
    races: game id, status, corrections), so that a correction since shows it stale; `made_at`
    when it was confirmed and made (NULL: waiting)."""

    __tablename__ = "season_draw"
    __table_args__ = (UniqueConstraint("series", "edition"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    series: Mapped[str] = mapped_column(String(40), index=True)
    edition: Mapped[int] = mapped_column(Integer)
    drawn: Mapped[list[list[dict[str, Any]]]] = mapped_column(JSON)
    basis: Mapped[list[list[Any]]] = mapped_column(JSON)
    # The tiers whose GM confirmed it by mail, when the tiers have different GMs (the draw is
    # made once every tier's GM has).
    confirmed: Mapped[list[int]] = mapped_column(JSON, default=list)
    shown_at: Mapped[datetime] = mapped_column(_utc())
    made_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)


class SeriesEntry(Base):
    """A person who joined a series for its next season (``JOIN <series>`` with no race open,
    migration 0023_season4_draw): drawn into its lowest tier as a newcomer, and the entry gone
    once that season is made."""

    __tablename__ = "series_entry"
    __table_args__ = (UniqueConstraint("series", "player_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    series: Mapped[str] = mapped_column(String(40), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"), index=True)
    since: Mapped[datetime] = mapped_column(_utc())


class SeasonRace(Base):
    """One race of a season: a game, its round (1, 2, ...)."""

    __tablename__ = "season_race"
    __table_args__ = (UniqueConstraint("season_id", "round"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("season.id"), index=True)
    round: Mapped[int] = mapped_column(Integer)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), unique=True)

    season: Mapped[Season] = relationship(back_populates="races")
    game: Mapped[Game] = relationship()


class ChangeWhy(enum.StrEnum):
    """Why a seat left its holder (`SeatChange.why`)."""

    REPLACED = "replaced"  # the GM's REPLACE with a person
    ROBOT = "robot"  # the GM's REPLACE ... ROBOT
    RESIGNED = "resigned"  # the holder's RESIGN while the game was under way
    NMR_LIMIT = "nmr limit"  # the NMR-streak limit put the holder out (dropped, or handed on)
    DROPPED = "dropped"  # the GM's DROP
    SUBSTITUTE = "substitute"  # a person on the substitutes bench took it over


class SeatChange(Base):
    """A seat leaving its holder while its game is under way (migration 0019_season2b): who held
    it (`player_id`), who holds it after (`successor_id`; NULL: the seat closed), the number of
    the turn open then, when and why. Rows are only ever added. The holder of a seat at turn
    *n* is the `player_id` of its first change with a turn above *n*, else the seat's player
    now: the reliability record (`bot.games.reliability`) is worked out from these."""

    __tablename__ = "seat_change"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat_id: Mapped[int] = mapped_column(ForeignKey("seat.id"), index=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"), index=True)
    successor_id: Mapped[int | None] = mapped_column(ForeignKey("player.id"), nullable=True, index=True)
    turn: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(_utc())
    why: Mapped[str] = mapped_column(String(16))  # ChangeWhy


class Substitute(Base):
    """A person on the substitutes bench of a kind of game (SUBSTITUTE ON <game kind>, migration
    0019_season2b): offered the seats of that kind whose holders leave under way."""

    __tablename__ = "substitute"
    __table_args__ = (UniqueConstraint("player_id", "kind"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"), index=True)
    kind: Mapped[str] = mapped_column(String(40))  # the rules registry key
    since: Mapped[datetime] = mapped_column(_utc())

    player: Mapped[Player] = relationship()


class OfferStatus(enum.StrEnum):
    OPEN = "open"  # mailed to the bench; a robot drives the seat meanwhile
    TAKEN = "taken"  # a person of the bench took it
    CLOSED = "closed"  # the game ended (or the seat left the race) before anyone took it


class SeatOffer(Base):
    """A seat offered to the substitutes bench (migration 0019_season2b): the first of the bench
    to accept takes it (`taken_by`); a robot drives it until then."""

    __tablename__ = "seat_offer"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id"), index=True)
    seat_id: Mapped[int] = mapped_column(ForeignKey("seat.id"), index=True)
    made_at: Mapped[datetime] = mapped_column(_utc())
    why: Mapped[str] = mapped_column(String(16))  # ChangeWhy: what freed the seat
    status: Mapped[str] = mapped_column(String(16), default=OfferStatus.OPEN, index=True)
    taken_by: Mapped[int | None] = mapped_column(ForeignKey("player.id"), nullable=True)
    taken_at: Mapped[datetime | None] = mapped_column(_utc(), nullable=True)


class RatingKind(Base):
    """What the stored ratings of a kind of game count (migration 0024_ratings2_cache): `races`
    rated races, `digest` the SHA-256 of their game numbers in the order they ended
    (`bot.games.ratings`). The stored ratings of the kind stand for the record only while the
    record's rated races give the same digest; otherwise they are worked out again."""

    __tablename__ = "rating_kind"
    kind: Mapped[str] = mapped_column(String(40), primary_key=True)  # the rules registry key
    races: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))


class StoredRating(Base):
    """A person's rating in a kind of game after the rated races `RatingKind` counts (migration
    0024_ratings2_cache): openskill's mu and sigma, and the rated races counted. Updated at each
    rated final, worked out again from the archived results by `flagman rating rebuild` (and
    at a ROLLBACK of a finished race)."""

    __tablename__ = "stored_rating"
    kind: Mapped[str] = mapped_column(String(40), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"), primary_key=True, index=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    races: Mapped[int] = mapped_column(Integer)
