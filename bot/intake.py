"""The intake: one mail, top to bottom.

    parse         bot.mail_in.parse (in the batch, before this): raw bytes -> Inbound
    (duplicate?)  the same Message-ID and content handled before: nothing to do
    ignore        the ignore policy's verdict (bounces, auto-replies, loops ...): Ignored
    authenticate  bot.mail_in.identity: which seat or GM role the mail proved itself to be
    authorize     the rate limit of that principal; mail that proved nobody is answered
                  (within caps) at most, never acted on, except a stranger's JOIN and the
                  commands for anyone (HELP, LIST, RULES, OBSERVE, UNOBSERVE, CONFIRM,
                  UNSUBSCRIBE: its code is the proof, also from a registered From)
    act           GM commands, player commands, orders (a body with none: the subject's,
                  `orders_in_subject`): each returns its answers or raises
    answer        the answers go out through bot.letters; the mail is recorded

A refusal anywhere is an exception carrying its answer (`bot.answers`), caught once, in
`Intake.handle`; so is a deliberate ignore. Anything else escapes to the batch, which rolls
the mail's savepoint back and quarantines it. `bot.service` runs batches of mails through here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot import letters
from bot.answers import Answer, Done, Ignored, Letter, Notice, Outcome, Refused, Submission
from bot.clock import as_utc
from bot.commands import (
    MAX_COMMANDS,
    PLAYER_COMMANDS,
    Address,
    Confirm,
    Join,
    MailCommands,
    Ping,
    PlayerCommand,
    Resign,
    Stop,
    Unsubscribe,
    anyone,
    parse_commands,
    player,
    streams,
    suggest,
)
from bot.db import among, autoflushing, insert_many
from bot.echo import echo, quote_lines
from bot.games import signups, store
from bot.games import turns as G
from bot.gm import powers as gm
from bot.letters import Addressee, ToAddress, ToGm, ToSeat
from bot.mail_in import tokens
from bot.mail_in.auth import GM_SEAT, parse_tag, strip_password_lines, tag_in_recipients, verify_tag
from bot.mail_in.identity import Who, identify
from bot.mail_in.inbox import RawMail
from bot.mail_in.parse import Inbound, parse_inbound
from bot.mail_out import lists
from bot.mail_out import outbox as mailout
from bot.models import (
    AnswerFate,
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    OrderSubmission,
    Outbox,
    Player,
    Seat,
    Turn,
)
from bot.settings import Settings
from rules.api import AnyGame, GameOrder, GameState, OrderProblem, ProblemKind

log = logging.getLogger("flagman.inbound")

# Backscatter bounds (issue 6, issue 14; SECURITY.md): answers to mail that proved nobody.
STRANGER_REPLIES_PER_DAY = 3  # per address: JOIN answers and the answers to commands for anyone included
_STRANGER_TOLD = "unknown sender: one notice sent"
# The details of answered unauthenticated mail that count towards the global hourly cap
# ([limits] answers_to_strangers_per_hour): the stranger notice, every JOIN answer, and every
# answer to the commands for anyone (HELP, LIST, RULES, OBSERVE, UNOBSERVE, CONFIRM).
_ANYONE = "for anyone: "
MAX_STRANGER_COMMANDS = 5  # commands for anyone answered in one mail that proved nobody
MAX_PROBLEMS_SHOWN = 20  # order lines quoted back, with their reasons, in one answer; the rest are counted
_VERBS_TAKING_A_GAME = {c.verb for c in PLAYER_COMMANDS if c.takes_game}


MailKey = tuple[str, str]  # an inbound mail's (Message-ID, content hash): unique in the table
RECENT_FOR = timedelta(minutes=1)  # how long a rate-limit count read once is used (BatchMemo)


def _is_code(context: player.Context, command: PlayerCommand) -> bool:
    """`command` hands back a code of ours that stands (CONFIRM, STOP, UNSUBSCRIBE): what it does
    is done whatever the caps on answers say (issue 27)."""
    if isinstance(command, Confirm | Stop):
        return anyone.code_stands(context, command.code)
    if isinstance(command, Unsubscribe):
        return streams.code_stands(context, command.code)
    return False


def _rate_key(principal: str, sender: str) -> tuple[str, str]:
    """What a mail counts against (bot.mail_in.identity.Who.principal, else its From)."""
    return (principal, "") if principal else ("", sender)


def dedupe_hash(inbound: Inbound) -> str:
    """Stable across redelivery: a relay adds Received/Delivered-To headers, not this."""
    key = "\x00".join((inbound.message_id, inbound.sender, inbound.subject, inbound.text))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _gm_hints(text: str, who: Who) -> str:
    """What each line of a GM's mail not understood most likely meant (issue 17, did you mean)."""
    games = sorted(g.name for g in who.gm_of)
    known = suggest.vocabulary(gm=True, games=games)
    hints = []
    for line in text.splitlines()[:20]:
        hint = suggest.gm_game_hint(line, games) or known.suggest(line)
        if hint:
            hints.append(f'"{echo(line, 80)}": {hint}')
    return ("\n\n" + "\n".join(hints)) if hints else ""


def _with_subject_code(commands: MailCommands, subject: str) -> MailCommands:
    """A reply to a confirmation mail (OBSERVE, ADDRESS) brings its code back in the subject,
    ``[confirm <code>]``: that is a CONFIRM, unless the body says the same CONFIRM already. A
    List-Unsubscribe mail (bot.mail_out.lists) brings ``unsubscribe <code>``: an UNSUBSCRIBE."""
    code = tokens.in_subject(subject)
    if code is not None and Confirm(code) not in commands.player:
        commands = dataclasses.replace(commands, player=(*commands.player, Confirm(code)))
    stop = lists.code_in_subject(subject)
    if stop is not None and Unsubscribe(stop) not in commands.player:
        commands = dataclasses.replace(commands, player=(*commands.player, Unsubscribe(stop)))
    return commands


# What a reply puts before the subject it answers ("Re: ", "AW: ", "Re[2]: ", "SV: " ...) and
# the tags of lists and of the bot ("[rc1]", "[rc1.kelly.<mac>]"): gone before the subject is
# read as orders.
_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|aw|sv|vs|antw|odp|ynt|res|rif|r)\s*(?:\[\d+\]|\^\d+)?\s*:|\[[^\]]*\])\s*",
                           re.I)
MAX_SUBJECT_ORDER_LINES = 10


def orders_in_subject(subject: str) -> str:
    """The orders a subject may hold (issue 19, one-tap ``mailto:`` links with the order in the
    subject): the subject without the reply prefixes and tags, ``;`` separating lines (as in a
    GM's ORDER), or "" when nothing is left."""
    text = subject
    while True:
        stripped = _REPLY_PREFIX.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    lines = [line.strip() for line in text.split(";") if line.strip()]
    return "\n".join(lines[:MAX_SUBJECT_ORDER_LINES])


def _games_hint(line: str, who: Who) -> str:
    """For a command that names a game, given without one (or a bad one): the sender's games."""
    words = line.split()
    names = sorted({g.name for g in who.games} | {g.name for g in who.gm_of})
    if not words or words[0].upper() not in _VERBS_TAKING_A_GAME or not names:
        return ""
    return f" (your games: {', '.join(names)})"


_ORDER_WORD = re.compile(r"\b[A-Z]{2,}\b")


def _left_out(problems: Sequence[OrderProblem], order_help: str) -> list[str]:
    """The lines not understood, as the confirmation names them: "line 2 (PATH)" where the line
    starts with an order word of the game, so that the player sees which order the set lacks."""
    words = set(_ORDER_WORD.findall(order_help))
    out = []
    for problem in problems:
        first = problem.line.split()[0].upper() if problem.line.split() else ""
        out.append(f"line {problem.line_no} ({first})" if first in words else f"line {problem.line_no}")
    return out


_GREETING = re.compile(r"\AHello [^\n]*,\n\n")
_TAGS = re.compile(r"\A(?:\[ERROR\] )?(?:\[[^\]\s]+\] )?")


def answer_part(shell: G.Shell, answer: Answer) -> dict[str, object]:
    """One answer as a section of a combined letter: its subject (without the tags the
    combined subject carries) as the heading, its body without greeting and signature."""
    if isinstance(answer, Notice):
        rendered = shell.renderer.render("notice", {
            "bot": {"name": shell.settings.bot.name, "address": shell.settings.bot.address}, "game_name": "",
            "title": answer.title, "text": answer.text, "error": answer.error, "greeting": ""})
        error = answer.error
    else:
        rendered = answer.rendered
        error = rendered.subject.startswith("[ERROR]")
    body = _GREETING.sub("", rendered.body)
    lines = body.splitlines()
    if "-- " in lines:  # the signature (RFC 3676 4.3): the combined letter signs once
        lines = lines[: len(lines) - 1 - lines[::-1].index("-- ")]
    return {"heading": _TAGS.sub("", rendered.subject), "body": "\n".join(lines).strip("\n"), "error": error}


@dataclass
class Mail:
    """The mail in hand: what the server gave, what the parser made of it, whom it proved."""

    raw: RawMail
    inbound: Inbound
    principal: str = ""  # Who.principal, once authenticated
    answers: list[Answer] = field(default_factory=list)  # what the mail made, in order; sent once
    changes_games: bool = False  # a GM command, JOIN or RESIGN: the batch's memo is forgotten
    # Over its sender's loop limit: acted on all the same, its answers withheld (issue 27).
    over_limit: bool = False
    answer: AnswerFate = AnswerFate.NONE  # what became of its answers, for its record

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

    `seen` (the Message-IDs handled already) and `recent` (mails per rate-limit key in the last
    hour) are kept up to date as mails are recorded. `games`, `seats`, `states`, `subs` and `on_file` hold while the
    batch only takes orders and answers questions: a mail that does anything else (a GM
    command, JOIN, RESIGN) may change games, seats and turns, and `forget`s them.
    """

    seen: set[tuple[str, str]] = field(default_factory=set)
    recent: dict[tuple[str, str], int] = field(default_factory=dict)
    recent_read_at: dict[tuple[str, str], datetime] = field(default_factory=dict)
    games: dict[str, Game | None] = field(default_factory=dict)
    seats: dict[tuple[int, str], Seat | None] = field(default_factory=dict)  # (game id, name): the seats that wrote
    states: dict[int, tuple[AnyGame, GameState, Turn | None]] = field(default_factory=dict)
    subs: dict[tuple[int, int], list[store.FiledOrders]] = field(default_factory=dict)  # (turn, seat) -> its own
    on_file: dict[tuple[int, int], tuple[GameOrder, ...] | None] = field(default_factory=dict)  # (turn, seat) -> merged
    pending: set[tuple[str, str]] = field(default_factory=set)  # rate-limit keys of rows not yet written

    def forget(self) -> None:
        self.games.clear()
        self.seats.clear()
        self.states.clear()
        self.subs.clear()
        self.on_file.clear()


@dataclass
class BatchRows:
    """What a batch adds, inserted together (performance.md: bulk inserts, work per batch): its
    mails, the orders they brought, and the answers to them; one statement each, in the order
    the mails came, when the batch is done or a mail needs them written first."""

    inbound: list[dict[str, object]] = field(default_factory=list)
    submissions: list[tuple[MailKey, dict[str, object]]] = field(default_factory=list)  # the mail's, values
    outbox: mailout.NewRows = field(default_factory=list)

    def write(self, session: Session) -> None:
        if self.inbound:
            ids: dict[MailKey, int] = {}
            for i, m, h in insert_many(session, InboundMessage, self.inbound, ("id", "message_id", "content_hash")):
                assert isinstance(i, int) and isinstance(m, str) and isinstance(h, str)
                ids[(m, h)] = i
            self.inbound.clear()
            if self.submissions:
                insert_many(session, OrderSubmission,
                            [{**values, "inbound_id": ids[key]} for key, values in self.submissions])
                self.submissions.clear()
        mailout.insert_rows(session, self.outbox)

    def clear(self) -> None:
        self.inbound.clear()
        self.submissions.clear()
        self.outbox.clear()


class Intake:
    def __init__(self, shell: G.Shell) -> None:
        self.shell = shell
        self.memo = BatchMemo()
        self.rows = BatchRows()

    def begin_batch(self, session: Session, inbounds: Sequence[Inbound], *, again: bool = False) -> None:
        """A new batch (`again`: the same one, mail by mail): read what it has seen before at once.

        The rate-limit counts are carried from batch to batch (a sender's mails rarely come in
        one batch) for up to `RECENT_FOR` after they were read: a mail that has just left its
        hour may go on counting for that long (a limit a minute late), never one that did not
        come. After a failed attempt (`again`) nothing is carried over: it counted mails that
        the rollback undid."""
        recent, read_at = self.memo.recent, self.memo.recent_read_at
        self.memo = BatchMemo()
        if not again:
            now = self.shell.now()
            for key, when in read_at.items():
                if now - when < RECENT_FOR:
                    self.memo.recent[key], self.memo.recent_read_at[key] = recent[key], when
        ids = sorted({i.message_id[:998] for i in inbounds})
        self.memo.seen.update((m, h) for m, h in among(
            session, select(InboundMessage.message_id, InboundMessage.content_hash),
            (InboundMessage.message_id,), [(i,) for i in ids]))
        self._read_games(session, inbounds)

    def _read_games(self, session: Session, inbounds: Sequence[Inbound]) -> None:
        """The games the batch's signed reply addresses name (most mail is a reply to one), the
        seats those addresses name with their players, the games' open turns and states, and
        those seats' submissions: four queries for the whole batch; whatever else a mail needs
        is read when it needs it."""
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
        turns = store.open_turns(session, list(found.values()))
        for game in found.values():
            if game.id in turns:
                self.memo.states[game.id] = G.state_with(session, game, turns[game.id])
        # Their submissions (a seat's are what its orders on file are made of).
        pairs = [(turns[seat.game_id].id, seat.id) for seat in seats.values() if seat.game_id in turns]
        self.memo.subs.update(store.seats_submissions(session, pairs))

    def _find_game(self, session: Session, name: str) -> Game | None:
        key = name.lower()
        if key not in self.memo.games:
            self.memo.games[key] = store.find_game_row(session, key, with_seats=True)
        return self.memo.games[key]

    def _find_seat(self, game: Game, name: str) -> Seat | None:
        key = (game.id, name)
        if key in self.memo.seats:
            return self.memo.seats[key]
        return store.seat_named(game, name)

    def _current_state(self, session: Session, game: Game) -> tuple[AnyGame, GameState, Turn | None]:
        if game.id not in self.memo.states:
            self.memo.states[game.id] = G.current_state(session, game)
        return self.memo.states[game.id]

    def _on_file(self, session: Session, rules: AnyGame, state: GameState, turn: Turn,
                 seat: Seat) -> tuple[GameOrder, ...] | None:
        """The seat's orders on file for the turn (`orders_on_file`), worked out once a batch and
        kept up to date as its orders come (`_orders`)."""
        pair = (turn.id, seat.id)
        if pair not in self.memo.on_file:
            subs = self.memo.subs.pop(pair) if pair in self.memo.subs else store.submissions(session, turn, seat)
            self.memo.on_file[pair] = G.orders_on_file(rules, state, seat, subs)
        return self.memo.on_file[pair]

    @property
    def settings(self) -> Settings:
        return self.shell.settings

    # -- the pipeline ------------------------------------------------------------------------

    def handle(self, session: Session, raw: RawMail, inbound: Inbound | None) -> Outcome | None:
        """One mail, in the batch's transaction. None: a duplicate."""
        if inbound is None:
            return self._oversize(session, raw)
        mail = Mail(raw, inbound)
        try:
            # The rows the batch adds are written together at its end (performance.md: work per
            # batch), not a few at a time before every query: what this mail reads does not
            # depend on them, except where `write_rows` runs first.
            with session.no_autoflush:
                return self._handle(session, mail)
        finally:
            if mail.changes_games:  # what the memo holds may have changed under it
                self.memo.forget()

    def write_rows(self, session: Session) -> None:
        """Write what the batch added so far, in order -- what commands changed through the
        session, then the rows collected since: when the batch (or, mail by mail, the mail) is
        done, and before a query that counts or reads rows of earlier mails of the batch (rate
        limits, replies to strangers, commands), as autoflush is off while a mail is handled."""
        if session.new or session.dirty or session.deleted:
            session.flush()
        self.rows.write(session)
        self.memo.pending.clear()

    def drop_rows(self) -> None:
        """The mail (or batch) was rolled back: what it collected goes too."""
        self.rows.clear()
        self.memo.forget()  # it may hold what the rollback undid

    def _handle(self, session: Session, mail: Mail) -> Outcome | None:
        inbound = mail.inbound
        if mail.key in self.memo.seen:
            log.info("mail %s: duplicate of a mail already handled; skipped", inbound.message_id)
            return None
        try:
            self._not_ignored(session, mail)
            who = identify(self.shell, session, inbound, lambda name: self._find_game(session, name), self._find_seat)
            mail.principal = who.principal
            mail.over_limit = self._over_rate_limit(session, mail, who)
            commands = _with_subject_code(parse_commands(inbound.text, gm_games=[g.name for g in who.gm_of]),
                                          inbound.subject)
            if commands.gm or any(isinstance(c, Join | Resign | Confirm | Address | Stop) for c in commands.player):
                mail.changes_games = True
                self.memo.forget()
            if who.seat is None and not who.gm_of and not who.games:  # proved nobody
                self.write_rows(session)
                with autoflushing(session):
                    done = self._unauthenticated(session, mail, who, commands)
            elif commands.gm or commands.player:
                self.write_rows(session)
                with autoflushing(session):
                    done = self._act(session, mail, who, commands)
                    session.flush()  # what the commands did comes before the answers (outbox order)
            else:  # orders only: the hot path, reading nothing an earlier mail of the batch wrote
                done = self._act(session, mail, who, commands)
        except Refused as refused:
            if refused.answer is not None:
                mail.answers.append(refused.answer)
            self._send_answers(session, mail)
            self._record(session, mail, InboundStatus.REFUSED, refused.detail, refused.game, refused.seat)
            return Outcome(InboundStatus.REFUSED, refused.label)
        except Ignored as ignored:
            mail.answer = ignored.answer
            self._record(session, mail, InboundStatus.IGNORED, ignored.detail, ignored.game)
            return Outcome(InboundStatus.IGNORED, ignored.label)
        mail.answers.extend(done.answers)
        self._send_answers(session, mail)
        key = self._record(session, mail, done.status, done.detail, done.game, done.seat)
        if done.submission is not None:
            s = done.submission
            values: dict[str, object] = {"turn_id": s.turn_id, "seat_id": s.seat_id, "source": "mail",
                                         "text": s.text, "received_at": self.shell.now()}
            self.rows.submissions.append((key, values))
        return Outcome(done.status, done.label)

    def _not_ignored(self, session: Session, mail: Mail) -> None:
        inbound = mail.inbound
        if inbound.ignore is None:
            return
        detail, game = f"{inbound.ignore.value}: {inbound.ignore_detail}", None
        bounced = self._bounced_mail(session, inbound)
        if bounced is not None:
            # VERP: the bounce came back to the envelope sender of one outbox mail, so it
            # names the recipient (and the game) whose mail did not arrive.
            detail = f"bounce of our {bounced.kind} mail to {bounced.recipient}: {inbound.ignore_detail}"
            game = session.get(Game, bounced.game_id) if bounced.game_id else None
        raise Ignored(detail, label=inbound.ignore.value, game=game)

    def _over_rate_limit(self, session: Session, mail: Mail, who: Who) -> bool:
        """Whether the mail's sender passed the loop limit this hour: `[limits]
        mails_per_sender_per_hour`, counted per principal for mail that proved a seat or the GM
        (a forger spends only the forged From's unauthenticated allowance), per From for the
        rest. Over it, a mail is still acted on -- an order is applied, a code of ours is used
        -- and only its answers are withheld (issue 27: a player's own broken autoresponder
        must not cost them their order)."""
        limit = self.settings.limits.mails_per_sender_per_hour
        key = _rate_key(who.principal, mail.inbound.sender)
        if key not in self.memo.recent:
            if key in self.memo.pending:  # an earlier mail of the batch counts, not yet written
                self.write_rows(session)
            same = (InboundMessage.principal == who.principal if who.principal else
                    (InboundMessage.sender == mail.inbound.sender) & (InboundMessage.principal == ""))
            self.memo.recent[key] = session.scalar(select(func.count()).select_from(InboundMessage).where(
                same, InboundMessage.received_at >= self.shell.now() - timedelta(hours=1))) or 0
            self.memo.recent_read_at[key] = self.shell.now()
        return self.memo.recent[key] >= limit

    # -- answering and recording -------------------------------------------------------------

    def _send_answers(self, session: Session, mail: Mail, *, withhold: AnswerFate | None = None) -> None:
        """One answer per mail (mail-interface.md): what the mail made for one addressee goes
        out as one letter, in sections, as Mailman answers commands -- done, then not done.
        A mail that made one answer gets that answer as it is. (Several addressees happen only
        where the answer must not go where the others go, e.g. "which game?" to the From.)

        Over its sender's loop limit (or `withhold`: a cap on answers to unproven senders),
        the answers are withheld, all but the `essential` ones, and the record says why
        (issue 27: caps withhold answers, never actions or records)."""
        if mail.over_limit and withhold is None:
            withhold = AnswerFate.RATE_LIMIT
        if withhold is not None:
            kept = [a for a in mail.answers if a.essential]
            if len(kept) < len(mail.answers):
                mail.answer = withhold
                log.info("mail %s: %d answer(s) withheld (%s)", mail.inbound.message_id,
                         len(mail.answers) - len(kept), withhold.value)
            mail.answers = kept
        if not mail.answers:
            return
        if mail.answer is AnswerFate.NONE:
            to_holder = not mail.principal and all(isinstance(a.to, ToSeat | ToGm) for a in mail.answers)
            mail.answer = AnswerFate.HOLDER if to_holder else AnswerFate.SENT
        if len(mail.answers) == 1:  # the common case (one confirmation): nothing to group
            self._post(session, mail, mail.answers[0])
            return
        groups: dict[tuple[str, str | None], list[Answer]] = {}
        for answer in mail.answers:
            env = letters.envelope(self.shell, answer.to)
            groups.setdefault((env.to.address, env.reply_to), []).append(answer)
        for answers in groups.values():
            if len(answers) == 1:
                self._post(session, mail, answers[0])
            else:
                self._post(session, mail, self._in_sections(answers))

    def _post(self, session: Session, mail: Mail, answer: Answer) -> None:
        """Mail one answer to `mail`; who gets it (and which reply address) is `bot.letters`' call."""
        if isinstance(answer, Notice):
            letters.notice(self.shell, session, answer.to, answer.title, answer.text, kind=answer.kind,
                           error=answer.error, game=answer.game, in_reply_to=mail.in_reply_to, into=self.rows.outbox)
        else:
            letters.post(self.shell, session, answer.to, answer.rendered, kind=answer.kind, game=answer.game,
                         in_reply_to=mail.in_reply_to, into=self.rows.outbox)

    def _in_sections(self, answers: list[Answer]) -> Letter:
        """Several answers to one addressee as one letter: each under its own heading, the ones
        that did what was asked first, then the ones that refused something."""
        parts = [answer_part(self.shell, answer) for answer in answers]
        games = {answer.game.name if answer.game is not None else "" for answer in answers}
        envelope = letters.envelope(self.shell, answers[0].to)
        game_name = envelope.game.name if envelope.game is not None else (games.pop() if len(games) == 1 else "")
        sections = [{"title": title, "parts": chosen} for title, chosen in (
            ("Done", [p for p in parts if not p["error"]]), ("Not done", [p for p in parts if p["error"]])) if chosen]
        rendered = self.shell.renderer.render("answers", {
            "bot": {"name": self.settings.bot.name, "address": self.settings.bot.address},
            "greeting": letters.greeting(answers[0].to), "game_name": game_name,
            "error": any(p["error"] for p in parts), "count": len(parts), "sections": sections,
        })
        game = next((a.game for a in answers if a.game is not None), None)
        return Letter(answers[0].to, rendered, "answers", game=game)

    def _record(self, session: Session, mail: Mail, status: InboundStatus, detail: str,
                game: Game | None = None, seat: Seat | None = None) -> MailKey:
        """The mail's row, written with the batch (`BatchRows`); its key, for the rows that point at it."""
        inbound = mail.inbound
        detail = echo(detail, 500)  # it may quote the mail (an order line): one line, capped
        key = mail.key
        sender = inbound.sender[:320]
        self.rows.inbound.append({
            "message_id": key[0], "content_hash": key[1], "mailbox_key": mail.raw.key[:200],
            "received_at": self.shell.now(), "sender": sender, "subject": echo(inbound.subject),
            "status": status, "detail": detail, "game_id": game.id if game else None,
            "seat_id": seat.id if seat else None,
            "text": strip_password_lines(inbound.text)[:20000],  # a seat password is never stored
            "principal": mail.principal, "answer": mail.answer,
        })
        self.memo.seen.add(key)
        rate = _rate_key(mail.principal, sender)
        self.memo.pending.add(rate)
        if rate in self.memo.recent:
            self.memo.recent[rate] += 1
        log.info("mail %s from %s: %s%s%s (%s)%s", inbound.message_id, inbound.sender or "?", status,
                 f" game={game.name}" if game else "", f" seat={seat.name}" if seat else "", detail,
                 f"; answer withheld: {mail.answer.value}" if mail.answer.withheld else "")
        return key

    # -- mail over the size limit ------------------------------------------------------------

    def _oversize(self, session: Session, raw: RawMail) -> Outcome | None:
        # Not fetched (the inbox checked the size first): only the size is known, and the
        # header section where the inbox could read it (RawMail.headers). mail-interface.md:
        # never answered, except once, briefly, to a player -- at their registered address,
        # at most once a day, so a forged From cannot make the bot mail anyone repeatedly.
        detail = f"over the size limit ({raw.size} bytes)"
        head = parse_inbound(raw.headers, own_addresses={self.settings.bot.address.lower()},
                             loop_header=self.settings.bot.loop_header, max_lines=1,
                             size=raw.size) if raw.headers else None
        key_hash = hashlib.sha256(raw.key.encode()).hexdigest()
        message_id = f"oversize.{key_hash[:24]}@flagman.invalid"
        if head is not None and not head.message_id.endswith("@flagman.invalid"):
            message_id = head.message_id[:998]
        if session.scalar(select(InboundMessage.id).where(InboundMessage.message_id == message_id)) is not None:
            log.info("mail %s (%s): over the size limit, already handled; skipped", message_id, raw.key)
            return None
        sender = head.sender if head is not None else ""
        status, game, answer = InboundStatus.IGNORED, None, AnswerFate.NONE
        if head is not None and head.ignore is not None:
            detail += f"; {head.ignore.value}: {head.ignore_detail}"
        elif head is not None and sender:
            # The seat of a signed reply address (whatever the From), else of the From.
            tag = tag_in_recipients(self.settings.bot.address, head.recipients)
            signed = verify_tag(tag, self.shell.secrets_in_force) if tag else None
            tagged = self._find_game(session, signed.game) if signed else None
            seat = self._find_seat(tagged, signed.seat) if tagged and signed else None
            seat = seat if seat is not None and seat.active else session.scalars(
                select(Seat).join(Player).join(Game).where(
                    Player.address == sender, Seat.active.is_(True), Game.status != GameStatus.FINISHED)).first()
            gm_game = None if seat else (tagged if signed and signed.seat == GM_SEAT else session.scalars(
                select(Game).where(Game.gm_address == sender, Game.status != GameStatus.FINISHED)).first())
            game = seat.game if seat else gm_game
            told = game is not None and self._told_today(session, sender, "over the size limit") > 0
            if told:
                answer = AnswerFate.TOLD_TODAY
            elif game is not None:
                limit = self.settings.limits.max_mail_bytes
                # To the registered address only (never the From, which may be forged).
                holder: Addressee = ToSeat(seat) if seat is not None else ToGm(game)
                letters.notice(self.shell, session, holder, "Your mail was too big",
                               f'Your mail "{echo(head.subject, 100)}" was {raw.size // 1024} kB, over the limit of '
                               f"{limit // 1024} kB for mail to this address, so it was not read. Send your orders "
                               "as plain text, without attachments. (This note is sent at most once a day.)",
                               error=True, kind="oversize", in_reply_to=f"<{head.message_id}>")
                status, detail, answer = InboundStatus.REFUSED, detail + "; the player was told", AnswerFate.HOLDER
        session.add(InboundMessage(message_id=message_id, content_hash=dedupe_hash(head) if head else key_hash,
                                   mailbox_key=raw.key[:200], received_at=self.shell.now(), sender=sender[:320],
                                   subject=echo(head.subject if head else ""), status=status, detail=detail,
                                   game_id=game.id if game else None, text="", answer=answer))
        session.flush()
        log.warning("mail %s (%s) from %s not read: %s", message_id, raw.key, sender or "?", detail)
        return Outcome(status, detail)

    def _told_today(self, session: Session, sender: str, detail_prefix: str) -> int:
        """How many mails from `sender` of this kind were answered in the last day."""
        return session.scalar(select(func.count()).select_from(InboundMessage).where(
            InboundMessage.sender == sender, InboundMessage.status == InboundStatus.REFUSED,
            InboundMessage.detail.startswith(detail_prefix, autoescape=True),
            InboundMessage.received_at >= self.shell.now() - timedelta(days=1))) or 0

    def _bounced_mail(self, session: Session, inbound: Inbound) -> Outbox | None:
        """The outbox mail a bounce answers, from the VERP address it was sent back to."""
        local, _, domain = self.settings.bot.address.lower().rpartition("@")
        prefix = f"{local}+bounce-"
        for address in inbound.recipients:
            a_local, _, a_domain = address.lower().rpartition("@")
            if a_domain == domain and a_local.startswith(prefix):
                token = a_local.removeprefix(prefix)
                return session.scalar(select(Outbox).where(Outbox.message_id == f"<{token}@{domain}>"))
        return None

    # -- mail that proved nobody -------------------------------------------------------------

    def _unauthenticated(self, session: Session, mail: Mail, who: Who, commands: MailCommands) -> Done:
        """Mail that proved nobody. What a code of ours in it does (CONFIRM, STOP, UNSUBSCRIBE) is
        done whatever the caps (issue 27: caps withhold answers, never actions). Otherwise
        answers go to the sender only when the sender is a stranger (a JOIN's code, the answers
        to the commands for anyone, or one notice), within per-address and global caps, and never
        repeat the sender's words; a mail claiming a registered address is answered at that
        address, once a day."""
        inbound = mail.inbound
        context = player.Context(self.shell, session, inbound, who, None, None)
        codes = [c for c in commands.player if _is_code(context, c)]
        if mail.over_limit and not codes:
            limit = self.settings.limits.mails_per_sender_per_hour
            raise Ignored(f"rate limit: over {limit} mails in an hour", label="rate limit",
                          answer=AnswerFate.RATE_LIMIT)
        joins = [c for c in commands.player if isinstance(c, Join)]
        if joins and not codes and not who.claimed and not who.claimed_gm:
            # JOIN is double opt-in (issue 27): the From gets a code and nothing else. A forged
            # From must not turn that into a stream of mail to a third party: a few answers a
            # day per address, and a global cap an hour for all of them together.
            self._stranger_caps(session, inbound.sender, "JOIN")
            return signups.ask_to_join(self.shell, session, inbound, joins[0].game, joins[0].name)
        if (who.claimed or who.claimed_gm) and not codes:
            # (A List-Unsubscribe mail comes from the registered address without a proof: its
            # code is the proof, and it is answered as the commands for anyone are.)
            self._claimed_without_proof(session, mail, who, ping=any(isinstance(c, Ping) for c in commands.player))
        for_anyone = [c for c in commands.player if c.for_anyone and not isinstance(c, Join)]
        if for_anyone:
            return self._for_anyone(session, mail, context, commands, for_anyone, codes)
        # A stranger: at most one short notice per address a day, and a global cap an hour
        # (no backscatter storms from many forged Froms).
        if not inbound.sender:
            raise Ignored("unknown sender: no sender address", label="no sender")
        if self._answered_today(session, inbound.sender) > 0:
            raise Ignored("unknown sender: already told today", label="unknown sender", answer=AnswerFate.STRANGER_DAY)
        cap = self.settings.limits.answers_to_strangers_per_hour
        if self._answers_to_strangers_this_hour(session) >= cap:
            raise Ignored(f"unknown sender: over {cap} answers to unknown senders this hour", label="unknown sender",
                          answer=AnswerFate.STRANGER_HOUR)
        text = ("This address runs play-by-email games, and your address is not in any game running here. "
                "LIST shows the games; to join one open for sign-ups, send JOIN <game> [your name]; to get a "
                "game's results by mail, OBSERVE <game>. Send HELP for the commands.")
        raise Refused(_STRANGER_TOLD, Notice(ToAddress(inbound.sender), "You are not in a game here", text,
                                             kind="stranger"), label="unknown sender")

    def _for_anyone(self, session: Session, mail: Mail, context: player.Context, commands: MailCommands,
                    asked: Sequence[PlayerCommand], codes: Sequence[PlayerCommand]) -> Done:
        """A stranger's HELP, LIST, RULES, OBSERVE, UNOBSERVE, CONFIRM, STOP, UNSUBSCRIBE: answered
        (one answer, in sections), at most `MAX_STRANGER_COMMANDS` of them, within the limits of
        answers to mail that proved nobody -- a few a day per address, and a cap an hour for
        every sender together. A code of ours (`codes`) is used whatever those limits say, and
        its answer goes: only a mail of ours can have brought it, once. The answer names none of
        what else the mail said, carries the plain address only, and stays under
        `bot.letters.STRANGER_ANSWER_BYTES`."""
        inbound = mail.inbound
        sender = inbound.sender
        if not sender:
            raise Ignored("unknown sender: no sender address", label="no sender")
        others = [c for c in asked if c not in codes]
        fate = self._stranger_cap(session, sender) if others else None
        if fate is not None and not codes:
            raise Ignored(f"unknown sender: {', '.join(c.verb for c in others)} not answered ({fate.value})",
                          label="unknown sender", answer=fate)
        chosen = list(codes) + ([] if fate is not None else others[:MAX_STRANGER_COMMANDS])
        labels: list[str] = []
        refused = False
        for command in chosen:
            reply = player.run(context, command)
            # Every answer to mail that proved nobody, at its From, is of one kind in the outbox:
            # "stranger" (what a code made for a seat, a welcome, is that seat's mail).
            mail.answers.extend(dataclasses.replace(a, kind="stranger") if isinstance(a.to, ToAddress) else a
                                for a in reply.answers)
            refused = refused or any(isinstance(a, Notice) and a.error for a in reply.answers)
            labels.append(reply.label or command.verb)
        if fate is not None:
            # The codes were used; the rest of the mail is not answered (recorded: `fate`).
            mail.answer = fate
            return Done(_ANYONE + "; ".join(labels) + f"; the rest not answered ({fate.value})", "for anyone")
        players_only = sorted({c.verb for c in commands.player if not c.for_anyone})
        # Words around a code sent back ("Yes please") are what people write: not "not understood".
        lines = 0 if codes else len([line for line in commands.orders_text.splitlines() if line.strip()])
        skipped = len(others) - len(others[:MAX_STRANGER_COMMANDS]) + commands.over
        if players_only or lines or commands.problems or skipped or commands.repeated:
            parts = []
            if players_only:
                parts.append(f"{', '.join(players_only)}: only for the players of a game, so not done.")
            for problem in commands.problems:  # the reasons only: the sender's words are not repeated
                parts.append(f"A command not understood: {problem.reason}.")
            if commands.more_problems:
                parts.append(f"... and {commands.more_problems} more lines not understood.")
            if lines:
                parts.append(f"{lines} other line{'s' if lines != 1 else ''} of your mail "
                             f"{'were' if lines != 1 else 'was'} not understood. Send HELP for the commands.")
            if skipped:
                parts.append(f"{skipped} more command{'s' if skipped != 1 else ''}: not carried out (at most "
                             f"{MAX_STRANGER_COMMANDS} a mail from an address not in a game).")
            if commands.repeated:
                parts.append(f"{commands.repeated} line{'s' if commands.repeated != 1 else ''} repeated a command "
                             "given above: each command is answered once.")
            # With the other answers (one answer per mail): to whom they go, the sender's address.
            to = mail.answers[0].to if mail.answers else ToAddress(sender)
            mail.answers.append(Notice(to, "Not done", "\n\n".join(parts), kind="stranger"))
            refused = True
        return Done(_ANYONE + "; ".join(labels), "for anyone", refused=refused)

    def _stranger_caps(self, session: Session, sender: str, what: str) -> None:
        """Raise Ignored (recorded with the cap's name) when an answer to a sender who proved
        nobody would pass the caps."""
        fate = self._stranger_cap(session, sender)
        if fate is not None:
            raise Ignored(f"unknown sender: {what} not answered ({fate.value})", label="unknown sender", answer=fate)

    def _stranger_cap(self, session: Session, sender: str) -> AnswerFate | None:
        """The cap an answer to `sender`, who proved nobody, would pass, or None: a few a day per
        address (`STRANGER_REPLIES_PER_DAY`) and `[limits] answers_to_strangers_per_hour` for all
        of them together."""
        if self._answered_today(session, sender) >= STRANGER_REPLIES_PER_DAY:
            return AnswerFate.STRANGER_DAY
        if self._answers_to_strangers_this_hour(session) >= self.settings.limits.answers_to_strangers_per_hour:
            return AnswerFate.STRANGER_HOUR
        return None

    def _answered_today(self, session: Session, sender: str) -> int:
        """How many mails from `sender` that proved nobody were answered at that address in the
        last day: the stranger notice, JOIN codes, answers to the commands for anyone (issue 14:
        a few replies a day per address, whatever it sends)."""
        return session.scalar(select(func.count()).select_from(InboundMessage).where(
            InboundMessage.sender == sender, InboundMessage.principal == "", InboundMessage.answer == AnswerFate.SENT,
            InboundMessage.received_at >= self.shell.now() - timedelta(days=1))) or 0

    def _claimed_without_proof(self, session: Session, mail: Mail, who: Who, *, ping: bool = False) -> None:
        """The From is a player's (or the GM's), or the GM's reply address was used without the
        GM's From or password: tell the registered address, never the sender (mail-interface.md,
        identity) -- once a day, so that forged mail cannot flood the player; every one is in
        the GM's digest. A PING is told why it was not accepted (`streams.refused_text`), on the
        same terms. Always raises."""
        game = who.claimed[0].game if who.claimed else who.claimed_gm[0]
        holder: Addressee = ToSeat(who.claimed[0]) if who.claimed else ToGm(who.claimed_gm[0])
        # Once a day per registered address: a seat's is the From itself; the GM's role is
        # claimed from any address (its reply address), so it is counted per game.
        detail = ("authentication failed for a registered address" if who.claimed else
                  f"authentication failed for the GM's role of {game.name}")
        told = (self._told_today(session, mail.inbound.sender, "authentication failed") if who.claimed else
                session.scalar(select(func.count()).select_from(InboundMessage).where(
                    InboundMessage.detail == detail, InboundMessage.status == InboundStatus.REFUSED,
                    InboundMessage.received_at >= self.shell.now() - timedelta(days=1))) or 0)
        if told > 0:
            raise Ignored("authentication failed for a registered address; already told today",
                          label="authentication failed", game=game)
        if ping:
            context = player.Context(self.shell, session, mail.inbound, who, None, None)
            raise Refused(detail, Notice(holder, "PING: your mail was not accepted",
                                         streams.refused_text(context, mail.inbound, who), kind="ping"),
                          label="authentication failed", game=game)
        if isinstance(holder, ToSeat):
            text = ("A mail claiming to come from you arrived without proof that it is yours, so it was not "
                    "used. To act for your seat, reply to this mail or any other mail of the bot for this "
                    "game (its reply address signs you in), or put the line PASSWORD <your seat password> in "
                    "the mail. If you did not send it, you need do nothing: the GM sees it in the daily digest.")
        else:
            text = ("A mail to the GM's reply address, or claiming to come from you, arrived without the proof "
                    "GM commands need, so nothing in it was done. GM commands need your GM reply address "
                    "and your registered address as the sender, or the line PASSWORD <your GM password> in "
                    "the mail. If you did not send it, you need do nothing; it is listed in your daily digest.")
        raise Refused(detail, Notice(holder, "A mail from your address was not accepted", text, kind="auth_refused"),
                      label="authentication failed", game=game)

    def _answers_to_strangers_this_hour(self, session: Session) -> int:
        """Answers sent to mail that proved nobody, at its From (stranger notices, JOIN codes, the
        answers to the commands for anyone), in the last hour, all senders together: many forged
        Froms must not make the bot a source of backscatter."""
        return session.scalar(select(func.count()).select_from(InboundMessage).where(
            InboundMessage.received_at >= self.shell.now() - timedelta(hours=1),
            InboundMessage.principal == "", InboundMessage.answer == AnswerFate.SENT)) or 0

    # -- acting for a seat or the GM ---------------------------------------------------------

    def _act(self, session: Session, mail: Mail, who: Who, commands: MailCommands) -> Done:
        """GM commands, then player commands, then the orders. Each answer joins `mail.answers`
        (one answer per mail, sent by `handle`); a refusal of the whole mail raises."""
        inbound = mail.inbound
        seat = who.seat
        game = seat.game if seat else (who.gm_of[0] if len(who.gm_of) == 1 else None)
        handled: list[str] = []
        if commands.gm:
            for gm_command in commands.gm:
                label, letter = gm.run(self.shell, session, inbound, gm_command)
                handled.append(label)
                if letter is not None:
                    mail.answers.append(letter)
            if seat is None and commands.orders_text.strip():  # e.g. a command naming another GM's game
                mail.answers.append(gm.leftover(who.gm_of, commands.orders_text))
        context = player.Context(self.shell, session, inbound, who, game, seat)
        for command in commands.player:
            reply = player.run(context, command)
            if reply.done is not None:
                return reply.done  # JOIN: the mail is a sign-up, nothing else of it counts
            mail.answers.extend(reply.answers)
            if reply.label:
                handled.append(reply.label)
            handled.append(type(command).__name__.upper())
        problems = list(commands.problems)
        if problems:
            text = "\n".join(f'"{echo(p.line)}": {p.reason}{_games_hint(p.line, who)}' for p in problems)
            if commands.more_problems:
                text += f"\n... and {commands.more_problems} more lines not understood."
            mail.answers.append(Notice(who.holder(inbound), "Command not understood", text, game=game))
        if commands.over:
            mail.answers.append(Notice(who.holder(inbound), "Not done", (
                f"{commands.over} more command{'s' if commands.over != 1 else ''} of your mail "
                f"{'were' if commands.over != 1 else 'was'} not carried out: at most {MAX_COMMANDS} commands a "
                "mail. Send the rest in another mail."), game=game))
        if commands.repeated:
            mail.answers.append(Notice(who.holder(inbound), "Repeated commands", (
                f"{commands.repeated} line{'s' if commands.repeated != 1 else ''} of your mail repeated a command "
                "given above: each command was carried out, and is answered, once."), error=False, game=game))
        if seat is not None and not commands.orders_text.strip() and not handled and not problems:
            in_subject = self._subject_orders(session, seat, inbound.subject)
            if in_subject:  # a body with no order and no command: a one-tap reply (issue 19)
                return self._orders(session, mail, seat, in_subject)
        if commands.orders_text.strip() and not (commands.gm and not seat):
            if seat is None:
                if who.gm_of and not who.seat:
                    raise Refused("GM mail with lines not understood", Notice(
                        who.holder(inbound), "Lines not understood",
                        "These lines are neither GM commands nor orders:\n\n" + quote_lines(commands.orders_text)
                        + _gm_hints(commands.orders_text, who) + "\n\nSend HELP for the GM commands.", game=game),
                        label="not understood", game=game)
                raise Refused("which game? ambiguous", player.which_game(inbound, who), label="ambiguous game")
            return self._orders(session, mail, seat, commands.orders_text)
        if not handled and not problems:
            raise Refused("empty mail", Notice(who.holder(inbound), "Nothing to do",
                                               "Your mail held no orders and no commands. Send HELP for what you "
                                               "can write.", game=game), label="empty", game=game, seat=seat)
        return Done("commands: " + ", ".join(handled), "commands", game=game, seat=seat, refused=bool(problems))

    # -- orders ------------------------------------------------------------------------------

    def _subject_orders(self, session: Session, seat: Seat, subject: str) -> str:
        """The orders in the subject of a mail whose body has none (`orders_in_subject`), when
        they are orders of the seat's turn now: at least one line is an order, legal now or
        not (an illegal one is refused with its reason, as from a body). A plain reply's
        subject, "Re: [rc1] Results of Turn 2 ...", holds none, and the mail stays empty."""
        game = seat.game
        text = orders_in_subject(subject)
        if not text or game.status != GameStatus.ACTIVE:
            return ""
        rules, state, turn = self._current_state(session, game)
        if turn is None or seat.name not in rules.expected_players(state):
            return ""
        parsed = rules.parse_orders(state, seat.name, text)
        return text if parsed.orders or any(p.kind is ProblemKind.ILLEGAL for p in parsed.problems) else ""

    def _arrival(self, raw: RawMail) -> datetime:
        """When the mail arrived, for its deadline (mail-interface.md: judged by when the mail
        server received it, not by when the bot reads it): the server's receipt time (IMAP
        INTERNALDATE, the Maildir delivery time), never later than now. The server's clock is
        trusted; one more than `[inbox] clock_skew` seconds ahead of ours is logged, since the
        two clocks should agree (a server clock behind ours by d would let mail up to d late
        count as on time; one ahead does no harm)."""
        now = self.shell.now()
        received = raw.received_at
        if received is None:
            return now
        if received - now > timedelta(seconds=self.settings.inbox.clock_skew):
            log.warning("mail %s: received at %s by the mail server's clock, %s by ours: the clocks disagree",
                        raw.key, received.isoformat(), now.isoformat())
        return min(as_utc(received), now)

    def _orders(self, session: Session, mail: Mail, seat: Seat, text: str) -> Done:
        game = seat.game
        to = ToSeat(seat)
        if game.status == GameStatus.SIGNUP:
            raise Refused("orders before the start", Notice(
                to, "The game has not started",
                f"{game.name} is still open for sign-ups; orders are taken once the GM starts it."),
                label="not started", game=game, seat=seat)
        if game.status == GameStatus.FINISHED:
            raise Refused("orders after the end", Notice(
                to, "The game is over", f"{game.name} has finished; no more orders are taken."),
                label="finished", game=game, seat=seat)
        rules, state, turn = self._current_state(session, game)
        assert turn is not None
        zone = seat.player.timezone
        closing = G.closing_time(game, turn)
        expected = rules.expected_players(state)
        if closing is not None and self._arrival(mail.raw) >= closing and expected and game.status == GameStatus.ACTIVE:
            raise Refused("after the deadline", Notice(
                to, f"Too late for {turn.label}",
                f"The deadline for {turn.label} passed at {G.deadline_text(turn, zone)}, so these orders "
                "were not used. The results follow shortly, with the next turn sheet; send your orders "
                "for the next turn in reply to that.", kind="late"), label="late", game=game, seat=seat)
        if seat.name not in expected:
            raise Refused("not expected this turn", Notice(
                to, "No orders needed", f"You have no orders to send for {turn.label}."),
                label="not expected", game=game, seat=seat)
        parsed = rules.parse_orders(state, seat.name, text)
        earlier = self._on_file(session, rules, state, turn, seat)
        ctx = G.base_context(self.shell, game, rules)
        order_help = rules.order_help(state, seat.name)
        known = suggest.vocabulary(order_help=order_help) if parsed.problems else None
        # At most MAX_PROBLEMS_SHOWN lines are quoted back with their reasons, the rest counted
        # (issue 27: an answer never grows past what the mail deserves).
        shown = parsed.problems[:MAX_PROBLEMS_SHOWN]
        problems = [{"line_no": p.line_no, "line": echo(p.line),
                     "reason": suggest.with_suggestion(p.reason, p.line, known) if p.kind is ProblemKind.INVALID
                     else p.reason} for p in shown]
        ctx.update({
            "seat": {"name": seat.name, "display": seat.player.name},
            "turn": {"label": turn.label, "deadline": G.deadline_text(turn, zone), "early": game.early_resolution},
            "problems": problems, "problems_more": len(parsed.problems) - len(shown), "timezone": zone,
            "help": order_help,
        })
        if not parsed.orders:
            default = rules.format_orders(G.nmr_default(rules, state, seat)[0])
            ctx.update({"on_file": rules.format_orders(earlier) if earlier is not None else None, "default": default})
            raise Refused("; ".join(f"line {p.line_no}: {p.reason}" for p in shown) or "no orders",
                          Letter(to, self.shell.renderer.render("refused", ctx, game=game.kind), "refused"),
                          label="orders refused", game=game, seat=seat)
        canonical = rules.format_orders(parsed.orders)
        merged = parsed.orders if earlier is None else rules.merge_orders(earlier, parsed.orders)
        # The contract (rules.api): a full set is `is_complete`; no need to parse the merged set again.
        # An incomplete set says what it lacks (the game's words, `missing_orders`); a set
        # complete without the lines not understood says which lines those were (issue 17: a
        # bad PATH line dropped must not leave "a complete set" unexplained).
        ctx.update({"understood": canonical, "on_file": rules.format_orders(merged),
                    "complete": rules.is_complete(state, seat.name, merged),
                    "missing": list(rules.missing_orders(state, seat.name, merged)),
                    "left_out": _left_out(shown, order_help),
                    # What the set will cost, where the game can say so (issue 16: "this plot
                    # costs 2 wear and a top speed test").
                    "consequences": list(rules.consequences(state, seat.name, merged))})
        confirmation = Letter(to, self.shell.renderer.render("confirmation", ctx, game=game.kind), "confirmation")
        self.memo.on_file[(turn.id, seat.id)] = merged  # what the batch's next mail from the seat finds
        return Done("orders" + (f" ({len(parsed.problems)} line(s) ignored)" if parsed.problems else ""), "orders",
                    (confirmation,), game=game, seat=seat, submission=Submission(turn.id, seat.id, canonical))


__all__ = ["Intake", "Mail", "dedupe_hash", "orders_in_subject"]
