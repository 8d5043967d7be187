"""A seat's orders from a mail: checked against the turn, confirmed or refused with the reasons.

The orders are the mail's lines that are not commands (bot.commands.grammar), or, in a reply
whose body holds none, its subject (one-tap ``mailto:`` links put the order there).
A set is taken when at least one line is an order; a later valid set replaces the earlier
(merged, in games where parts may come in several mails). Deadlines are judged by when the
mail server received the mail (mail-interface.md).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from bot import dice, store
from bot.clock import as_utc
from bot.commands import GM_VERBS, suggest
from bot.commands.grammar import ForTheGm, is_courtesy
from bot.facts import Claims
from bot.fate import Answer, Done, Letter, Notice, Refused, Submission
from bot.games import attention, turns
from bot.intake import prose
from bot.intake.batch import Batch, Mail
from bot.letters import ToGm, ToSeat, claims
from bot.letters.context import deadline_text, due_by, game_context, orders_block, practice_terms
from bot.letters.defaults import gets
from bot.letters.words import say
from bot.mail_in.inbox import RawMail
from bot.mail_out.one_tap import SUBJECT_LINE_SEPARATOR, mailto_link
from bot.models import AttentionKind, Game, GameStatus, GmAudit, Outbox, Reason, Seat, Turn
from bot.outlook import Counts, timing, what_counts
from bot.safe_text import echo
from bot.shell import Shell
from rules.api import AnyGame, GameOrder, GameState, OrderProblem, Parsed, ProblemKind

log = logging.getLogger("flagman.inbound")

MAX_PROBLEMS_SHOWN = 20  # order lines quoted back, with their reasons, in one answer; the rest are counted
MAX_PROSE_LINES = 20  # lines of one mail read as prose (`prose_to_read`); the rest stay not understood
MAX_PROSE_WORDS = 400  # words of those lines in all: the reading's steps are bounded before it starts
MAX_SUBJECT_ORDER_LINES = 10
# What a reply puts before the subject it answers ("Re: ", "AW: ", "Re[2]: ", "SV: " ...) and
# the tags of lists and of the bot ("[rc1]", "[rc1.kelly.<mac>]"): gone before the subject is
# read as orders.
_REPLY_PREFIX = re.compile(
    r"^\s*(?:(?:re|aw|sv|vs|antw|odp|ynt|res|rif|r)\s*(?:\[\d+\]|\^\d+)?\s*:|\[[^\]]*\])\s*", re.I
)
_REPLY = re.compile(r"^\s*(?:re|aw|sv|vs|antw|odp|ynt|res|rif|r)\s*(?:\[\d+\]|\^\d+)?\s*:", re.I)


def orders_in_subject(subject: str) -> str:
    """The orders a subject may hold (one-tap ``mailto:`` links with the order in the
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


def _problems_label(problems: Sequence[OrderProblem]) -> str:
    """What the subject says of the lines refused (an illegal line was understood)."""
    count = len(problems)
    lines = f"{count} line{'s' if count > 1 else ''}"
    kinds = {p.kind for p in problems}
    if kinds == {ProblemKind.INVALID}:
        return f"{lines} not understood"
    if kinds == {ProblemKind.ILLEGAL}:
        return f"{lines} not allowed now"
    return f"{lines} ignored"


def _left_out(problems: Sequence[OrderProblem], order_help: str) -> list[str]:
    """The lines not understood, as the confirmation names them: "line 2 (PATH)" where the line
    starts with an order word of the game, so that the player sees which order the set lacks."""
    if not problems:
        return []
    words = prose.capital_words(order_help)
    out = []
    for problem in problems:
        first = problem.line.split()[0].upper() if problem.line.split() else ""
        out.append(f"line {problem.line_no} ({first})" if first in words else f"line {problem.line_no}")
    return out


def _overruled(
    rules: AnyGame, state: GameState, seat: str, problems: Sequence[OrderProblem], merged: Sequence[GameOrder]
) -> set[int]:
    """The numbers of the refused lines whose kind of order the set holds already ("SKILL ALL"
    then "SKILL NONE": the first stands): for them the set's own order stands, not a default.
    A line is of a kind when, on its own, the game's parser reads it as an order of that type."""
    kinds = {type(order) for order in merged}
    out = set()
    for problem in problems:
        alone = rules.parse_orders(state, seat, problem.line).orders
        if alone and all(type(order) in kinds for order in alone):
            out.add(problem.line_no)
    return out


def _left_out_of(
    rules: AnyGame,
    state: GameState,
    seat: str,
    shown: Sequence[OrderProblem],
    merged: Sequence[GameOrder],
    order_help: str,
) -> dict[str, object]:
    """The refused lines a complete set is without, as the confirmation names them: those not
    understood (`left_out`: the default stands for what they would have said), those understood
    but not allowed now (`set_aside`: the game's reason says what stands instead, a locked
    program, an order given before), and, of those, the ones whose kind of order the set holds
    already (`overruled`: the set's own order stands)."""
    overruled = _overruled(rules, state, seat, shown, merged)
    return {
        "left_out": _left_out(
            [p for p in shown if p.kind is not ProblemKind.ILLEGAL and p.line_no not in overruled], order_help
        ),
        "set_aside": _left_out(
            [p for p in shown if p.kind is ProblemKind.ILLEGAL and p.line_no not in overruled], order_help
        ),
        "overruled": [
            {"line": named, "word": named.partition("(")[2].rstrip(")") or "order"}
            for p in shown
            if p.line_no in overruled
            for named in _left_out([p], order_help)
        ],
    }


def subject_orders(batch: Batch, session: Session, seat: Seat, subject: str) -> str:
    """The orders in the subject of a mail whose body has none (`orders_in_subject`), when
    they are orders of the seat's turn now: at least one line is an order, legal now or
    not (an illegal one is refused with its reason, as from a body). A plain reply's
    subject, "Re: [rc1] Results of Turn 2 ...", holds none, and the mail stays empty."""
    game = seat.game
    text = orders_in_subject(subject)
    if not text or game.status != GameStatus.ACTIVE:
        return ""
    rules, state, turn = batch.current_state(session, game)
    if turn is None or seat.name not in rules.expected_players(state):
        return ""
    parsed = rules.parse_orders(state, seat.name, text)
    return text if parsed.orders or any(p.kind is ProblemKind.ILLEGAL for p in parsed.problems) else ""


def arrival(batch: Batch, raw: RawMail) -> datetime:
    """When the mail arrived, for its deadline (mail-interface.md: judged by when the mail
    server received it, not by when the bot reads it): the server's receipt time (IMAP
    INTERNALDATE, the Maildir delivery time), never later than now. The server's clock is
    trusted; one more than `[inbox] clock_skew` seconds ahead of ours is logged, since the
    two clocks should agree (a server clock behind ours by d would let mail up to d late
    count as on time; one ahead does no harm)."""
    now = batch.shell.now()
    received = raw.received_at
    if received is None:
        return now
    if received - now > timedelta(seconds=batch.settings.inbox.clock_skew):
        log.warning(
            "mail %s: received at %s by the mail server's clock, %s by ours: the clocks disagree",
            raw.key,
            received.isoformat(),
            now.isoformat(),
        )
    return min(as_utc(received), now)


def answered_turn(batch: Batch, session: Session, mail: Mail, game: Game, open_turn: Turn) -> Turn | None:
    """The turn of `game` the mail's orders were written for, when it is not the open one
    (mail-interface.md: orders bind to the turn they answer): the turn that was open
    when the mail it answers was sent (In-Reply-To, else the newest of its References); failing
    those, a label of a resolved turn in a reply's subject ("Re: [rc1] Racecraft: Turn 1 of 5").
    None when the mail answers the open turn or names none (the plain address, a new mail)."""
    inbound = mail.inbound
    answered = batch.memo.answered
    refs = [m for m in (inbound.in_reply_to, *reversed(inbound.references[-5:])) if m]
    found = next((answered[f"<{m}>"] for m in refs if answered.get(f"<{m}>", (None,))[0] == game.id), None)
    if found is not None:
        _, sent, claimed = found
        if claimed is not None and claimed < open_turn.number:
            # The letter says which turn it spoke of (its claims): an older one. Its time
            # cannot tell where it was queued as that turn resolved and the next opened (the
            # answer to the orders that completed it).
            older = session.scalar(select(Turn).where(Turn.game_id == game.id, Turn.number == claimed))
            if older is not None and older.resolved_at is not None:
                return older
        if sent >= as_utc(open_turn.opened_at):
            return None
        # The turn open when that mail went: opened by then, not resolved by then (a results
        # mail goes out as the turn it reports closes and the next opens: it answers the next).
        return session.scalar(
            select(Turn)
            .where(
                Turn.game_id == game.id,
                Turn.opened_at <= sent,
                or_(Turn.resolved_at.is_(None), Turn.resolved_at > sent),
            )
            .order_by(Turn.number.desc())
            .limit(1)
        )
    subject = inbound.subject
    if not _REPLY.match(subject) or open_turn.label in subject:
        return None
    for turn in session.scalars(
        select(Turn).where(Turn.game_id == game.id, Turn.resolved_at.is_not(None)).order_by(Turn.number.desc())
    ):
        at = subject.find(turn.label)
        if at >= 0 and not subject[:at].rstrip().endswith("Results of"):
            return turn
    return None


def withdrawn_sheet(session: Session, mail: Mail, game: Game, open_turn: Turn) -> str | None:
    """The label of the turn whose sheet the mail answers when a ROLLBACK has since withdrawn it:
    the mail it answers is one of those the reopened `open_turn`'s resolution sent or one sent
    after them, before the GM rolled it back (the ROLLBACK's audit row keeps their outbox ids);
    None otherwise. Such a reply was written against results that no longer count: its orders
    are for no open turn."""
    if not open_turn.corrections:
        return None
    inbound = mail.inbound
    refs = [f"<{m}>" for m in (inbound.in_reply_to, *inbound.references[-5:]) if m]
    ids = set(session.scalars(select(Outbox.id).where(Outbox.message_id.in_(refs), Outbox.game_id == game.id)))
    if not ids:
        return None
    for row in session.scalars(
        select(GmAudit).where(GmAudit.game_id == game.id, GmAudit.command.like("ROLLBACK %")).order_by(GmAudit.id)
    ):
        undone = (row.undo or {}).get("undone")
        for entry in undone if isinstance(undone, list) else ():
            span = entry.get("mail_ids") if isinstance(entry, dict) else None
            if entry.get("turn") != open_turn.number or not isinstance(span, list) or len(span) != 2:
                continue
            if any(span[0] <= i <= span[1] for i in ids):
                following = entry.get("next_turn")
                return str(following.get("label")) if isinstance(following, dict) else open_turn.label
    return None


def _stale(
    batch: Batch,
    seat: Seat,
    answered: str,
    open_turn: Turn,
    rules: AnyGame,
    state: GameState,
    text: str,
    *,
    said: tuple[Claims, ...] = (),
    rolled_back: bool = False,
    on_file: str = "",
) -> Refused:
    """Orders written for a turn already resolved, or for one whose results a ROLLBACK
    withdrew (`rolled_back`), are not applied to another: the answer says so, names the open turn,
    and offers the same orders for it as one-tap links, when they are orders of it (the player
    decides: a tap opens a mail, nothing happens until it is sent). It claims (`said`) what
    still counts for the seat in the open turn, and its deadline; after a ROLLBACK it shows the
    orders the seat has on file for the reopened turn (`on_file`), which a tap would replace,
    and that orders for the turn the mail answered are sent once that turn's sheet arrives."""
    game = seat.game
    parsed = rules.parse_orders(state, seat.name, text)
    link = quoted = orders = ""
    if parsed.orders and not parsed.problems:
        address = batch.shell.reply_address(game.name, seat.name, seat.reply_salt)
        orders = rules.format_orders(parsed.orders)
        link = mailto_link(address, SUBJECT_LINE_SEPARATOR.join(orders.splitlines()))
        quoted = orders_block(orders)
    if rolled_back:
        text = (
            say(
                "rollback_stale_reply",
                answered=answered,
                reopened=open_turn.label,
                paused=timing(game, open_turn).paused,
                deadline=deadline_text(timing(game, open_turn), seat.player.timezone),
            )
            + "\n\n"
            + say(
                "stale_turn_offer",
                open=open_turn.label,
                answered=answered,
                on_file=on_file.splitlines(),
                link=link,
                orders=orders.splitlines(),
                help=rules.order_help(state, seat.name),
            )
        )
        title = say("stale_turn_subject", answered=answered, open=open_turn.label, rolled_back=True)
    else:
        text = say(
            "intake_stale",
            answered=answered,
            open=open_turn.label,
            deadline=due_by(batch.shell, timing(game, open_turn), seat.player.timezone),
            link=link,
            quoted=quoted,
            help="" if link else rules.order_help(state, seat.name),
        )
        title = say("intake_stale_title", answered=answered)
    return Refused(
        say("mail_record", why="stale", answered=answered, rolled_back=rolled_back, open=open_turn.label),
        Notice(ToSeat(seat), title, text, kind="stale_turn", claims=said),
        reason=Reason.RESOLVED_TURN,
        game=game,
        seat=seat,
    )


def prose_to_read(mail: Mail, problems: Sequence[OrderProblem]) -> list[OrderProblem]:
    """The lines of a mail the parser did not understand that are read as prose, bounded before
    the reading starts (2,000 lines of prose cost seconds of poll): none for a mail
    past its sender's hourly limit (its answer is withheld: it is acted on, not read at
    length), else the first `MAX_PROSE_LINES` of them, as long as their words stay within
    `MAX_PROSE_WORDS` (a word starts at most `prose.MAX_PHRASE_WORDS` parses). The lines left
    out stay lines not understood, counted in the answer."""
    if mail.over_limit:
        return []
    chosen: list[OrderProblem] = []
    words = 0
    for problem in problems:
        if problem.kind is not ProblemKind.INVALID:
            continue
        words += len(problem.line.split())
        if len(chosen) >= MAX_PROSE_LINES or words > MAX_PROSE_WORDS:
            break
        chosen.append(problem)
    return chosen


def take_orders(batch: Batch, session: Session, mail: Mail, seat: Seat, text: str) -> Done:
    """The seat's orders in `text`: confirmed (with what the set lacks, what it costs, what will
    count), or refused with every bad line's reason; a refusal raises `Refused`."""
    game = seat.game
    _refuse_unless_running(game, seat, session)
    rules, state, turn = batch.current_state(session, game)
    assert turn is not None
    _refuse_unless_expected(batch, session, mail, seat, turn, rules, state, text)
    text = without_signature(text, seat)
    order_help = rules.order_help(state, seat.name)
    parsed, read = _parsed(rules, state, seat, mail, text, order_help)
    parsed = _not_taken(batch, session, turn, rules, state, seat, parsed, text, read)
    readings = _readings(batch, seat, read)
    earlier = batch.on_file(session, rules, state, turn, seat)
    if read is not None and read.readings and not read.text.strip():
        # A note, or orders only offered back (hedged) or negated: nothing asked was refused.
        return _nothing_taken(batch, session, seat, turn, rules, state, earlier, readings, read)
    # At most MAX_PROBLEMS_SHOWN lines are quoted back with their reasons, the rest counted
    # (an answer never grows past what the mail deserves).
    shown = parsed.problems[:MAX_PROBLEMS_SHOWN]
    ctx = _answer_context(batch, session, seat, turn, rules, parsed, shown, order_help, readings)
    if not parsed.orders:
        refused = _orders_refused(batch, seat, turn, rules, state, earlier, shown, ctx)
        to_gm = _pass_on(batch, session, seat, read)
        if not to_gm or refused.answer is None:
            raise refused
        # Refused, and words for the GM beside the orders (a question): they reach the GM all the same.
        return Done(
            refused.detail,
            Reason.ORDERS_REFUSED,
            (refused.answer, *to_gm),
            game=seat.game,
            seat=seat,
            refused=True,
        )
    return _orders_confirmed(
        batch, session, mail, seat, turn, rules, state, earlier, parsed, shown, read, order_help, ctx
    )


def _running_games_of(session: Session, seat: Seat) -> list[str]:
    """The other games running now (active or paused) where the seat's player holds a seat:
    where orders sent to a game that is over were most likely meant (a season's next race)."""
    return sorted(
        session.scalars(
            select(Game.name)
            .join(Seat, Seat.game_id == Game.id)
            .where(
                Seat.player_id == seat.player_id,
                Seat.active.is_(True),
                Game.id != seat.game_id,
                Game.status.in_((GameStatus.ACTIVE, GameStatus.PAUSED)),
            )
        )
    )


def _refuse_unless_running(game: Game, seat: Seat, session: Session) -> None:
    """Orders for a game not started yet, or over, are refused (`Refused`); the refusal for a
    game that is over names the player's games running now, where the orders may be meant."""
    to = ToSeat(seat)
    if game.status == GameStatus.SIGNUP:
        raise Refused(
            say("mail_record", why="not_started"),
            Notice(to, say("intake_not_started_title"), say("intake_not_started", game=game.name)),
            reason=Reason.NOT_STARTED,
            game=game,
            seat=seat,
        )
    if game.status == GameStatus.FINISHED:
        raise Refused(
            say("mail_record", why="finished"),
            Notice(
                to,
                say("intake_game_over_title"),
                say("game_over", game=game.name, running=_running_games_of(session, seat)),
            ),
            reason=Reason.FINISHED,
            game=game,
            seat=seat,
        )


def _refuse_unless_expected(
    batch: Batch,
    session: Session,
    mail: Mail,
    seat: Seat,
    turn: Turn,
    rules: AnyGame,
    state: GameState,
    text: str,
) -> None:
    """Orders that came after the turn's deadline, answer a turn sheet withdrawn or a turn gone
    by, or come from a seat the turn does not wait for, are refused (`Refused`). The late and
    the stale refusals claim what still counts for the seat in the open turn (the orders it had
    on file, the GM's plot or the default: `bot.outlook`), and the turn's deadline."""
    game = seat.game
    to = ToSeat(seat)
    zone = seat.player.timezone
    closing = turns.closing_time(game, turn)
    expected = rules.expected_players(state)

    def said() -> tuple[Claims, ...]:
        return claims.for_seat(game, rules, state, turn, seat, batch.on_file(session, rules, state, turn, seat))

    if closing is not None and arrival(batch, mail.raw) >= closing and expected and game.status == GameStatus.ACTIVE:
        raise Refused(
            say("mail_record", why="late"),
            Notice(
                to,
                say("intake_late_title", turn=turn.label),
                say("intake_late", turn=turn.label, deadline=deadline_text(timing(game, turn), zone)),
                kind="late",
                claims=said(),
            ),
            reason=Reason.LATE,
            game=game,
            seat=seat,
        )
    withdrawn = withdrawn_sheet(session, mail, game, turn)
    if withdrawn is not None:
        on_file = batch.on_file(session, rules, state, turn, seat)
        raise _stale(
            batch,
            seat,
            withdrawn,
            turn,
            rules,
            state,
            text,
            said=said(),
            rolled_back=True,
            on_file=rules.format_orders(on_file) if on_file is not None else "",
        )
    answered = answered_turn(batch, session, mail, game, turn)
    if answered is not None and answered.id != turn.id:
        raise _stale(batch, seat, answered.label, turn, rules, state, text, said=said())
    if seat.name not in expected:
        raise Refused(
            say("mail_record", why="not_expected"),
            Notice(to, say("intake_not_expected_title"), say("intake_not_expected", turn=turn.label)),
            reason=Reason.NOT_EXPECTED,
            game=game,
            seat=seat,
        )


def _parsed(
    rules: AnyGame, state: GameState, seat: Seat, mail: Mail, text: str, order_help: str
) -> tuple[Parsed[GameOrder], prose.ProseResult | None]:
    """The orders in `text` as the game parses them; the lines it did not understand read as a
    GM reads prose, within the bound set before the reading starts (`prose_to_read`),
    and the text so read parsed again (its problems numbered as the mail's lines; a line not read
    whose order word comes after other words has the reason for the line from that word on)."""
    parsed = rules.parse_orders(state, seat.name, text)
    read: prose.ProseResult | None = None
    to_read = prose_to_read(mail, parsed.problems)
    if to_read:
        read = prose.read(rules, state, seat.name, text, to_read, prose.order_words(order_help))
        if read.readings:
            again = rules.parse_orders(state, seat.name, read.text)
            parsed = dataclasses.replace(
                again, problems=tuple(dataclasses.replace(p, line_no=read.line_no(p.line_no)) for p in again.problems)
            )
        if read.reasons:
            parsed = dataclasses.replace(
                parsed,
                problems=tuple(
                    dataclasses.replace(p, reason=read.reasons[p.line_no])
                    if p.kind is ProblemKind.INVALID and p.line_no in read.reasons
                    else p
                    for p in parsed.problems
                ),
            )
    return parsed, read


class _OthersOnFile(Mapping[str, Sequence[GameOrder]]):
    """The other seats' orders on file for the open turn, each read when a game asks for it
    (`Game.taken`: only a game with a choice one seat may have reads any). The game's seats
    too are read only then: a batch loads only the seats that wrote (`Batch._read_games`)."""

    def __init__(self, batch: Batch, session: Session, turn: Turn, rules: AnyGame, state: GameState, seat: Seat):
        self._read = (batch, session, turn, rules, state)
        self._seat = seat

    @functools.cached_property
    def _seats(self) -> dict[str, Seat]:
        return {s.name: s for s in self._seat.game.seats if s.id != self._seat.id}

    def __getitem__(self, name: str) -> Sequence[GameOrder]:
        batch, session, turn, rules, state = self._read
        return batch.on_file(session, rules, state, turn, self._seats[name]) or ()

    def __iter__(self) -> Iterator[str]:
        return iter(self._seats)

    def __len__(self) -> int:
        return len(self._seats)


def _not_taken(
    batch: Batch,
    session: Session,
    turn: Turn,
    rules: AnyGame,
    state: GameState,
    seat: Seat,
    parsed: Parsed[GameOrder],
    text: str,
    read: prose.ProseResult | None,
) -> Parsed[GameOrder]:
    """`parsed` less the orders that ask for what another seat's set on file already claims
    (`Game.taken`: a SpeedPhreakz colour), each refused on its line with who has it and what
    is free."""
    taken = rules.taken(state, seat.name, parsed.orders, _OthersOnFile(batch, session, turn, rules, state, seat))
    if not taken:
        return parsed
    # Each refused on the line it was read from, quoted as it was read ("COLOUR blue" of "I'll
    # take blue and start at 2,5"): the prose line's other orders stand.
    read_lines = (read.text if read is not None and read.readings else text).splitlines()
    problems = list(parsed.problems)
    refused = [order for order, _ in taken]
    for order, reason in taken:
        at = next(
            (i for i, line in enumerate(read_lines, 1) if order in rules.parse_orders(state, seat.name, line).orders),
            0,
        )
        line = read_lines[at - 1] if at else rules.format_orders((order,))
        number = read.line_no(at) if read is not None and read.readings and at else at
        problems.append(OrderProblem(number, line, reason, ProblemKind.ILLEGAL))
    orders = tuple(o for o in parsed.orders if o not in refused)
    problems.sort(key=lambda p: p.line_no)
    return Parsed(orders, tuple(problems), rules.is_complete(state, seat.name, orders))


def _gm_verb(rules: AnyGame, turn: Turn, seat: Seat, problem: OrderProblem, order_help: str) -> str:
    """The reason for a player's line that starts with a GM command's verb and no order word of
    the game ("PREVIEW", "PAUSE sc1"): it is the GM's command, not an order; for PREVIEW, where
    the game foresees what orders cost, that the confirmation says it, else how to ask the GM.
    Empty for any other line."""
    words = problem.line.split()
    command = GM_VERBS.get(words[0].upper()) if words else None
    if command is None or command.verb in prose.order_words(order_help):
        return ""
    costs = False
    if command.verb == "PREVIEW":
        state = rules.load_state(turn.state)
        # What the game foresees of the orders that count for the seat now (the outlook's).
        costs = bool(rules.consequences(state, seat.name, what_counts(rules, state, seat, None).orders))
    return say("intake_gm_verb", verb=command.verb, summary=command.summary, costs=costs, game=seat.game.name)


@dataclasses.dataclass(frozen=True, slots=True)
class _TurnBefore:
    """The words saying the turn before is over and what it used for the seat (`words`), for
    the lines that start with an order word that turn took and this one takes none of
    (`order_words`)."""

    words: str
    order_words: frozenset[str]


def _of_the_turn_before(problem: OrderProblem, order_words: frozenset[str]) -> bool:
    """Whether a line refused now starts with an order word of the turn before only."""
    words = problem.line.split()
    return bool(words) and problem.kind is ProblemKind.ILLEGAL and words[0].upper() in order_words


def _turn_before(
    session: Session, seat: Seat, rules: AnyGame, shown: Sequence[OrderProblem], order_help: str
) -> _TurnBefore | None:
    """Where a line refused now is an order of the turn before alone (a grid bid sent in the
    race: BID was qualifying's order, the race takes none): that turn is over, and the orders
    it used for the seat (its own, the GM's plot, or the default), said beside the game's
    reason. None when no such line is refused (one query more only then)."""
    now = prose.order_words(order_help)
    if not any(
        p.kind is ProblemKind.ILLEGAL and p.line.split() and p.line.split()[0].upper() not in now for p in shown
    ):
        return None
    before = store.last_resolved_turn(session, seat.game)
    if before is None:
        return None
    state = rules.load_state(before.state)
    if seat.name not in rules.expected_players(state):
        return None
    then = prose.order_words(rules.order_help(state, seat.name)) - now
    if not any(_of_the_turn_before(p, then) for p in shown):
        return None
    rows = store.submissions(session, before, seat)
    own = store.orders_on_file(rules, state, seat, rows)
    how = "own"
    if own is None:
        filed = [r for r in rows if r.source in ("default", "plot")]
        how = filed[-1].source if filed else "default"
        own = (
            rules.parse_orders(state, seat.name, filed[-1].text).orders
            if filed
            else rules.default_orders(state, seat.name)
        )
    used = " / ".join(rules.format_orders(own).splitlines())
    return _TurnBefore(say("intake_turn_before", label=before.label, used=used, how=how), then)


def _answer_context(
    batch: Batch,
    session: Session,
    seat: Seat,
    turn: Turn,
    rules: AnyGame,
    parsed: Parsed[GameOrder],
    shown: Sequence[OrderProblem],
    order_help: str,
    readings: list[str],
) -> dict[str, object]:
    """The context the answer to orders starts from, confirmed or refused: the game, the seat,
    the turn (its deadline, whether it resolves early, a practice turn's pace), the lines not
    understood (each with its reason and, when one is close, a suggestion), the game's order
    help and how the prose was read."""
    shell = batch.shell
    game = seat.game
    zone = seat.player.timezone
    ctx = game_context(shell, game, rules)
    known = suggest.vocabulary(order_help=order_help) if parsed.problems else None
    over = _turn_before(session, seat, rules, shown, order_help)
    problems = [
        {
            "line_no": p.line_no,
            "line": echo(p.line),
            "illegal": p.kind is ProblemKind.ILLEGAL,
            "reason": (_gm_verb(rules, turn, seat, p, order_help) or suggest.with_suggestion(p.reason, p.line, known))
            if p.kind is ProblemKind.INVALID
            else (f"{over.words}; {p.reason}" if over and _of_the_turn_before(p, over.order_words) else p.reason),
        }
        for p in shown
    ]
    when = timing(game, turn)
    ctx.update(
        {
            "seat": {"name": seat.name, "display": seat.player.name},
            "turn": {
                "label": turn.label,
                "deadline": deadline_text(when, zone),
                "early": game.status == GameStatus.ACTIVE and batch.resolves_early(session, game, turn),
                "paused": when.paused,
                "practice": practice_terms(shell, when),
                # A practice turn waits for a set that lacks a part: no default fills it.
                "waits": when.waits_for_the_set,
                # A practice turn's pace, as the tick applies it (`turns.is_due`): when it may
                # resolve, in the player's zone, if that is still to come.
                "soonest": turns.soonest_text(shell, game, turn, zone),
            },
            "problems": problems,
            "problems_more": len(parsed.problems) - len(shown),
            "timezone": zone,
            "problems_label": _problems_label(parsed.problems),
            "help": order_help,
            "readings": readings,
        }
    )
    return ctx


def _orders_refused(
    batch: Batch,
    seat: Seat,
    turn: Turn,
    rules: AnyGame,
    state: GameState,
    earlier: tuple[GameOrder, ...] | None,
    shown: Sequence[OrderProblem],
    ctx: dict[str, object],
) -> Refused:
    """No line was an order: the refusal, with what stays on file and what the deadline would use."""
    game = seat.game
    standing = what_counts(rules, state, seat, earlier)
    ctx.update(
        {
            "on_file": rules.format_orders(earlier) if earlier is not None else None,
            "gets": gets(standing),
            "filled": "\n".join(standing.filled),
        }
    )
    rendered = batch.shell.renderer.render("refused", ctx, game=game.kind)
    claimed = claims.of_turn(game, turn, claims.counts(seat.name, standing))  # what stands, from the outlook
    return Refused(
        # The record's detail (the GM's digest lists it): each line's rule reason, as a fact.
        say("orders_refused_detail", problems=[(p.line_no, p.reason) for p in shown]),
        Letter(ToSeat(seat), rendered.claiming(claimed), "refused"),
        reason=Reason.ORDERS_REFUSED,
        game=game,
        seat=seat,
    )


def _orders_confirmed(
    batch: Batch,
    session: Session,
    mail: Mail,
    seat: Seat,
    turn: Turn,
    rules: AnyGame,
    state: GameState,
    earlier: tuple[GameOrder, ...] | None,
    parsed: Parsed[GameOrder],
    shown: Sequence[OrderProblem],
    read: prose.ProseResult | None,
    order_help: str,
    ctx: dict[str, object],
) -> Done:
    """The orders merged with the set on file, filed, and confirmed: what was understood, what
    the set lacks, what it costs, what the deadline will use, its receipt."""
    game = seat.game
    canonical = rules.format_orders(parsed.orders)
    filed = canonical
    merged = parsed.orders if earlier is None else rules.merge_orders(earlier, parsed.orders)
    if earlier and (
        (read is not None and read.keeps_rest)
        or (merged == parsed.orders and store.adds_a_part(rules, state, seat.name, earlier, parsed.orders))
    ):
        merged = store.with_the_rest(rules, state, seat.name, earlier, merged)
        # Filed as the whole set it makes, so that the tick's fold (`store.orders_on_file`)
        # reads the same set.
        filed = rules.format_orders(merged)
    counting = what_counts(rules, state, seat, merged)
    ctx.update(_set_facts(turn, rules, state, seat, earlier, parsed, merged, counting, shown, order_help))
    ctx["understood"] = canonical
    # The last orders of a turn that resolves early: it is resolved as this mail's answers are
    # queued (the pipeline), so the confirmation says so, not until when orders may change.
    last = batch.resolves_with(session, game, turn, seat, filed)
    turn_facts = ctx["turn"]
    assert isinstance(turn_facts, dict)
    turn_facts["last"] = last
    rendered = batch.shell.renderer.render("confirmation", ctx, game=game.kind)
    claimed = claims.of_turn(
        game, turn, claims.counts(seat.name, counting), resolved=last, early=turn_facts["early"] is True
    )
    confirmation = Letter(ToSeat(seat), rendered.claiming(claimed), "confirmation", in_part=bool(parsed.problems))
    batch.file_orders(turn, seat, merged)
    if last:
        mail.resolves.append((game.id, turn.id))
    return Done(
        say(
            "mail_record",
            why="orders",
            ignored=len(parsed.problems),
            no_gm=bool(game.practice and read and read.for_gm),
        ),
        Reason.ORDERS,
        (confirmation, *_pass_on(batch, session, seat, read)),
        game=game,
        seat=seat,
        submission=Submission(turn.id, seat.id, filed),
    )


def _set_facts(
    turn: Turn,
    rules: AnyGame,
    state: GameState,
    seat: Seat,
    earlier: tuple[GameOrder, ...] | None,
    parsed: Parsed[GameOrder],
    merged: tuple[GameOrder, ...],
    counting: Counts,
    shown: Sequence[OrderProblem],
    order_help: str,
) -> dict[str, object]:
    """What the confirmation says of the set now on file (`merged`, of which `counting` is what
    the deadline will use: each missing part filled as the resolution fills it, named line by
    line), but the orders understood (the caller's ``understood``, the mail's own lines)."""
    # The contract (rules.api): a full set is `is_complete`; no need to parse the merged set again.
    # An incomplete set says what it lacks (the game's words, `missing_orders`); a set
    # complete without the lines not understood says which lines those were (a
    # bad PATH line dropped must not leave "a complete set" unexplained).
    # The receipt of the set on file as the dice digest it (bot.dice.used: in the game's normal
    # form): the results list the receipt of the set used, so the player sees that what was
    # used is what they sent.
    receipt, receipt_of = dice.receipt_of(seat.game.name, turn, rules, state, seat.name, merged)
    complete = rules.is_complete(state, seat.name, merged)
    return {
        **_against_the_set_on_file(rules, earlier, parsed.orders, merged),
        "on_file": counting.text,
        "filled": "\n".join(counting.filled),
        "later": list(counting.later),
        "receipt": receipt,
        "receipt_of": receipt_of,
        "complete": complete,
        "missing": list(rules.missing_orders(state, seat.name, merged)),
        **_left_out_of(rules, state, seat.name, shown, merged, order_help),
        # What the set will cost, where the game can say so ("this plot
        # costs 2 wear and a top speed test").
        "consequences": list(rules.consequences(state, seat.name, merged)),
    }


def _against_the_set_on_file(
    rules: AnyGame,
    earlier: tuple[GameOrder, ...] | None,
    sent: tuple[GameOrder, ...],
    merged: tuple[GameOrder, ...],
) -> dict[str, list[str]]:
    """What a mail did to the set already on file, line by line, for the confirmation to say
    before anything else: `added_to`, the lines of it that stand beside the mail's (the mail
    was an addition: "Oops, forgot: SPEED 40"); `no_longer`, the lines of it that the mail
    replaced and that are no longer on file. Both empty when nothing was on file."""
    if not earlier:
        return {"added_to": [], "no_longer": []}
    now = set(rules.format_orders(merged).splitlines())
    mail = set(rules.format_orders(sent).splitlines())
    before = rules.format_orders(earlier).splitlines()
    return {
        "added_to": [line for line in before if line in now and line not in mail],
        "no_longer": [line for line in before if line not in now],
    }


def without_signature(text: str, seat: Seat) -> str:
    """`text` without a last line that is the player's own name, first name or seat name (a
    sign-off such as "Bob" under a plot), blank lines aside."""
    lines = text.rstrip("\n").splitlines()
    if not lines:
        return text
    names = {seat.name.lower(), seat.player.name.lower(), *(seat.player.name.lower().split()[:1])}
    last = lines[-1].strip().strip(".,!-~ ").lower()
    if last and last in names and len(lines) > 1:
        return "\n".join(lines[:-1])
    return text


def _readings(batch: Batch, seat: Seat, read: prose.ProseResult | None) -> list[str]:
    """How the mail's prose was read, a line each, for the answer: what was taken, what was
    not (a negation), what is offered back as a one-tap link to the seat's reply address, and
    which words went to the GM."""
    if read is None:
        return []
    address = batch.shell.reply_address(seat.game.name, seat.name, seat.reply_salt)
    out: list[str] = []
    for reading in read.readings:
        # One item per line read: the line quoted once, then each thing said of it.
        parts: list[str] = []
        line = {
            "line_no": reading.line_no,
            "line": echo(reading.line, 80),
            "game": seat.game.name,
            "idle_days": batch.shell.settings.practice.idle_days,  # a practice race's close, when left alone
        }

        def said(parts: list[str] = parts, line: dict[str, object] = line) -> dict[str, object]:
            return {**line, "continued": bool(parts)}

        if reading.applied and reading.first_choice:  # "SPEED 100 if legal, otherwise 80": the fallback
            parts.append(
                say(
                    "intake_reading",
                    how="fallback",
                    orders=reading.applied,
                    refused=reading.first_choice,
                    reason=reading.refused_because,
                    **said(),
                )
            )
        elif reading.applied and reading.fallback_refused:  # neither the first choice nor the fallback
            parts.append(
                say(
                    "intake_reading",
                    how="fallback_refused",
                    orders=reading.applied,
                    fallback=reading.fallback,
                    reason=reading.fallback_refused,
                    **said(),
                )
            )
        elif reading.applied and reading.fallback:  # the first choice, allowed now
            parts.append(say("intake_reading", how="first_choice", orders=reading.applied, **said()))
        elif reading.applied and reading.corrected:  # "Use 2. No wait, use 1.": the last word counts
            parts.append(
                say("intake_reading", how="corrected", orders=reading.applied, took_back=reading.corrected, **said())
            )
        elif reading.applied:
            parts.append(say("intake_reading", how="applied", orders=reading.applied, **said()))
        if reading.keeps_rest:
            parts.append(say("intake_reading", how="keeps_rest", **said()))
        if reading.negated:
            parts.append(say("intake_reading", how="negated", orders=reading.negated, **said()))
        for n, offer in enumerate(reading.offered):
            link = mailto_link(address, SUBJECT_LINE_SEPARATOR.join(offer.splitlines()))
            shown = " / ".join(offer.splitlines())  # the lines of one set offered together
            parts.append(say("intake_reading", how="offered", orders=[shown], link=link, more=n > 0, **said()))
        if reading.for_gm is not None:
            how = {ForTheGm.FAREWELL: "farewell", ForTheGm.QUESTION: "question"}.get(reading.for_gm, "for_gm")
            if seat.game.practice:  # no GM to pass them to (`_pass_on`)
                how = {"farewell": "no_gm_farewell"}.get(how, "no_gm")
            parts.append(say("intake_reading", how=how, **said()))
        if reading.unread:  # the words of a line with orders in it that were read as none
            parts.append(
                say(
                    "intake_reading",
                    how="unread",
                    parts=[echo(p, 80) for p in reading.unread],
                    refused=[(echo(r, 80), echo(why, 200)) for r, why in reading.not_offered],
                    **said(),
                )
            )
        elif reading.note and reading.for_gm is None and not is_courtesy(reading.line):
            parts.append(say("intake_reading", how="unread", parts=[], **said()))
        if parts:
            out.append("\n    ".join(part.strip() for part in parts))
    return out


def _pass_on(batch: Batch, session: Session, seat: Seat, read: prose.ProseResult | None) -> tuple[Answer, ...]:
    """The mail's words for the GM (a farewell, a question, words naming the GM: no rule of the
    bot answers them), passed on as PRESS GM passes a message: one notice to the GM, and each
    an item of the GM's "needs your attention" (`bot.games.attention`)."""
    if read is None or not read.for_gm:
        return ()
    game = seat.game
    if game.practice:  # a practice race has no GM: passed to nobody, and the answer says so
        return ()
    now = batch.shell.now()
    # However many lines a mail has for the GM, its notice and its items keep as many as an item
    # keeps lines (`attention.MAX_LINES`); the notice says how many more there were.
    shown = read.for_gm[: attention.MAX_LINES]
    for reading in shown:
        kind = AttentionKind.QUESTION if reading.for_gm is ForTheGm.QUESTION else AttentionKind.NOTE
        attention.add(session, game, kind, reading.line, at=now, seat=seat)
    facts = {"seat": seat.name, "player": echo(seat.player.name, 80), "game": game.name, "kind": game.kind}
    text = say(
        "intake_words_for_gm",
        lines=[echo(r.line, 200) for r in shown],
        more=len(read.for_gm) - len(shown),
        farewell=any(r.for_gm is ForTheGm.FAREWELL for r in read.for_gm),
        **facts,
    )
    title = say("intake_words_for_gm_title", **facts)
    return (Notice(ToGm(game), title, text, kind="intake_words_for_gm", error=False, game=game),)


def _stands(
    shell: Shell, rules: AnyGame, state: GameState, turn: Turn, seat: Seat, on_file: tuple[GameOrder, ...] | None
) -> str:
    """What will count for the seat, in words: its orders on file, or the default (the outlook's
    `what_counts`); a paused game's turn has no deadline running."""
    standing = what_counts(rules, state, seat, on_file)
    if on_file is None and seat.game.practice:
        return say("practice_nothing_on_file", label=turn.label, idle_days=shell.settings.practice.idle_days)
    return say(
        "intake_stands",
        expected=True,
        game=seat.game.name,
        turn=turn.label,
        paused=timing(seat.game, turn).paused,
        deadline=due_by(shell, timing(seat.game, turn), seat.player.timezone),
        on_file=orders_block(rules.format_orders(on_file)) if on_file is not None else "",
        filled=orders_block("\n".join(standing.filled)) if on_file is not None and standing.filled else "",
        gets=gets(standing),
        # A practice turn waits for what the set lacks: no default fills it.
        waits=timing(seat.game, turn).waits_for_the_set,
    )


def what_stands(batch: Batch, session: Session, seat: Seat) -> str:
    """What will count for the seat now, in words (or that it has no orders to send)."""
    rules, state, turn = batch.current_state(session, seat.game)
    if turn is None or seat.name not in rules.expected_players(state):
        return say("intake_stands", expected=False, game=seat.game.name)
    return _stands(batch.shell, rules, state, turn, seat, batch.on_file(session, rules, state, turn, seat))


def what_stands_claims(batch: Batch, session: Session, seat: Seat) -> tuple[Claims, ...]:
    """What `what_stands` claims (`bot.facts.Claims`): what counts for the seat and the
    deadline, from the outlook its words come from; nothing without an open turn."""
    rules, state, turn = batch.current_state(session, seat.game)
    on_file = batch.on_file(session, rules, state, turn, seat) if turn is not None else None
    return claims.for_seat(seat.game, rules, state, turn, seat, on_file)


def _nothing_taken(
    batch: Batch,
    session: Session,
    seat: Seat,
    turn: Turn,
    rules: AnyGame,
    state: GameState,
    earlier: tuple[GameOrder, ...] | None,
    readings: list[str],
    read: prose.ProseResult,
) -> Done:
    """A mail of words and no order (a thank-you, a note, words for the GM), or whose orders
    were only offered back or negated: a short answer without an error tag, saying what stands;
    words for the GM go to the GM."""
    stand = _stands(batch.shell, rules, state, turn, seat, earlier)
    said = (claims.of_turn(seat.game, turn, claims.counts(seat.name, what_counts(rules, state, seat, earlier))),)
    to_gm = _pass_on(batch, session, seat, read)
    if read.offered or read.negated:
        return Done(
            say("mail_record", why="offered"),
            Reason.ORDERS_OFFERED,
            (
                Notice(
                    ToSeat(seat),
                    say("intake_offered_title"),
                    say("intake_offered", readings=readings, stands=stand),
                    kind="offered",
                    error=False,
                    claims=said,
                ),
                *to_gm,
            ),
            game=seat.game,
            seat=seat,
        )
    for_gm = bool(to_gm)
    no_gm = seat.game.practice and bool(read.for_gm)  # words for a GM a practice race does not have
    return Done(
        say("mail_record", why="note", for_gm=for_gm, no_gm=no_gm),
        Reason.NOTE,
        (
            Notice(
                ToSeat(seat),
                say("intake_note_title", for_gm=for_gm, no_gm=no_gm),
                say("intake_note", for_gm=for_gm, no_gm=no_gm, readings=readings, stands=stand),
                kind="note",
                error=False,
                claims=said,
            ),
            *to_gm,
        ),
        game=seat.game,
        seat=seat,
    )


__all__ = [
    "MAX_PROBLEMS_SHOWN",
    "arrival",
    "orders_in_subject",
    "subject_orders",
    "take_orders",
    "what_stands",
    "what_stands_claims",
    "without_signature",
]
