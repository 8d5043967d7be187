"""Property: over random histories of
players' mail (orders, refusals, notes, CLEAR, WAIT, ORDERS, STATUS, orders after the deadline
and replies to a turn gone by or withdrawn), the GM's commands (PLOT,
ORDER, SET, EXTEND, DEADLINE, PAUSE/RESUME, ROLLBACK, PROCESS, PREVIEW, STATUS, REPLACE, DROP),
the GM's digest and robots, in all three games and a practice race, every claim every outgoing
letter makes holds against what the bot then actually did: the turn sheets, results,
reminders, confirmations, refusals (the late and the stale ones too), STATUS and ORDERS, the
GM's answers (PREVIEW's orders that count, PLOT's and ORDER's among them) and the digest.

A letter's claims are data kept beside its text (`bot.facts.Claims`, the outbox row's
`claims`), so the check compares claims, never wording:

* "the turn is resolved" (the last orders' confirmation, the NOWAIT that releases a turn): it
  is, once the mail is answered;
* a claim about a turn still open says its deadline as it stands (none while paused); a letter
  never makes a claim about a turn as open that its own mail has resolved;
* "if nothing else arrives, these orders count for this seat, as its own / the GM's plot / the
  default": the seat's last such claim before the turn resolves is what the resolution used,
  and why (a seat handed to a robot or dropped since is told no more, so its claims lapse);
* "the turn resolves as soon as every order is in" or "it waits for its deadline" (a seat's
  WAIT holding it, early resolution off, paused: `Claims.early`), said by a confirmation, a
  reminder, STATUS, the GM's STATUS or the digest: until something may change it (a WAIT or
  NOWAIT, the GM's PROCESS, PAUSE, RESUME, ROLLBACK, SET, REPLACE or DROP, the clock), a turn
  claimed to wait for its deadline is not resolved by the orders that arrive, and one claimed
  to resolve early is resolved once every expected seat's set is complete.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from bot import store
from bot.games import record
from bot.games.turns import PlayerSpec, closing_time, create_game
from bot.gm import digest
from bot.mail_in.auth import signed_address
from bot.models import Game, Outbox, Turn
from bot.testing import TestApp, plain_mail
from rules import find_game
from tests.bot.gm_helpers import BOT, GM, Played, copy_of, cycle, gm_says, played_once, player_says
from tests.helpers import fake_inbox, moving_clock
from tests.settled import examples


@dataclass(frozen=True)
class Deck:
    """A game to play: its seats (people first), its robots, and what may be sent in it."""

    kind: str
    people: tuple[str, ...]
    robots: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    figure: tuple[str, str] | None = None  # SET <seat> <figure> <value>
    practice: bool = False
    whole: str = ""  # a whole set: every person sending it completes the turn


DECKS = {
    "racecraft": Deck(
        "racecraft",
        ("p0", "p1", "p2", "p3"),
        ("r0",),
        ("USE 3", "USE 1", "CRUISE", "OVERTAKE", "USE 12", "hello"),
        ("USE 2", "CRUISE"),
        ("EP", "4"),
        whole="USE 3",
    ),
    "speed_circuit": Deck(
        "speed_circuit",
        ("p0", "p1"),
        ("r0",),
        ("SPEED 40", "SPEED 60", "SPEED MPS", "PAY ROLL", "SLIP 2", "LANE B", "hello"),
        ("SPEED 40", "SPEED 20"),
        whole="SPEED 40",
    ),
    "speedphreakz": Deck(
        "speedphreakz",
        ("p0", "p1"),
        ("r0",),
        ("START FREE FACING E", "ROUND 1: F1 F1", "ROUND 2: F1 L1", "ROUND 1: F2", "hello"),
        ("ROUND 1: F1", "ROUND 2: F1 F1"),
        whole="START FREE FACING E\nROUND 1: F1 F1\nROUND 2: F1 F1",
    ),
    "practice": Deck(
        "speedphreakz",
        ("p0",),
        ("r0", "r1"),
        ("START FREE FACING E", "ROUND 1: F1 F1", "ROUND 2: F1 F1", "hello"),
        practice=True,
        whole="START FREE FACING E\nROUND 1: F1 F1\nROUND 2: F1 F1",
    ),
}

GM_STEPS = (
    "plot",
    "order",
    "pause",
    "resume",
    "process",
    "rollback",
    "replace",
    "drop",
    "set",
    "extend",
    "deadline",
    "preview",
    "gmstatus",
    "digest",
)
PLAYER_STEPS = ("mail", "mail", "mail", "whole", "all", "clear", "wait", "nowait", "orders", "status", "late", "stale")

Step = tuple[str, int, tuple[int, ...]]


def steps(deck: Deck) -> st.SearchStrategy[list[Step]]:
    kinds = PLAYER_STEPS + ("tick",) + (() if deck.practice else GM_STEPS)
    one = st.tuples(
        st.sampled_from(kinds),
        st.integers(0, len(deck.people) - 1),
        st.lists(st.integers(0, len(deck.lines) - 1), min_size=1, max_size=3).map(tuple),
    )
    return st.lists(one, min_size=1, max_size=7)


@dataclass
class Ledger:
    """The claims made so far that are still to be checked, and where the outbox was read to."""

    read_to: int = 0
    counts: dict[int, dict[str, tuple[str, str, int]]] = field(default_factory=dict)  # turn -> seat -> claim
    checked: int = 0  # claims of orders compared with a resolution
    # turn -> the claims of whether it resolves early made since the last step that may change
    # it (`HOLD_MAY_CHANGE`): (resolves early, outbox row, its kind)
    early: dict[int, list[tuple[bool, int, str]]] = field(default_factory=dict)
    checked_early: int = 0  # such claims compared with what the orders then did


# The steps after which an earlier claim of whether the turn resolves early may no longer hold:
# a hold set or lifted, the game paused or resumed, a turn resolved or reopened by the GM, a seat
# changed or gone, the clock moved (the deadline) -- and the first look at the game.
HOLD_MAY_CHANGE = frozenset(
    {
        "start",
        "wait",
        "nowait",
        "pause",
        "resume",
        "process",
        "rollback",
        "set",
        "replace",
        "drop",
        "tick",
        "late",
        "stale",
    }
)
# The steps that may complete the last set of a turn that resolves early.
COMPLETING = frozenset({"mail", "whole", "order"})


def _game(app: TestApp, deck: Deck) -> None:
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind=deck.kind,
            name="g1",
            players=[PlayerSpec(s, f"{s}@example.org", s.upper(), "UTC") for s in deck.people],
            robot_seats=deck.robots,
            gm_address=GM,
            deadline="manual" if deck.practice else "48h",
            seed=5,
            practice=deck.practice,
            options={"laps": "1"} if deck.kind == "speed_circuit" else None,
        )
    app.service.send()


def _act(app: TestApp, deck: Deck, step: Step) -> None:
    what, who, picks = step
    seat = deck.people[who]
    address = f"{seat}@example.org"
    line = deck.plots[picks[0] % len(deck.plots)] if deck.plots else ""
    if what == "mail":
        player_says(app, seat, "\n".join(deck.lines[i] for i in picks), game="g1", address=address)
    elif what in ("finish", "whole"):  # a whole set from the seat
        player_says(app, seat, deck.whole, game="g1", address=address)

    elif what == "late":  # the lines, past the turn's deadline and grace, before the tick runs
        with app.db.read() as session:
            game = store.find_game_row(session, "g1")
            assert game is not None
            turn = store.open_turn(session, game)
            closing = closing_time(game, turn) if turn is not None else None
        if closing is not None and closing > app.clock.now():
            moving_clock(app).advance(closing - app.clock.now() + timedelta(minutes=1))
        _deliver(app, seat, "\n".join(deck.lines[i] for i in picks), "[g1] orders")
        app.service.poll()
        app.service.send()
    elif what == "stale":  # a reply to a turn gone by (by its subject) or to the newest results (withdrawn?)
        with app.db.read() as session:
            game = store.find_game_row(session, "g1")
            assert game is not None
            gone = session.scalars(
                select(Turn).where(Turn.game_id == game.id, Turn.resolved_at.is_not(None)).order_by(Turn.number.desc())
            ).first()
            results = session.scalars(
                select(Outbox).where(Outbox.recipient == address, Outbox.kind == "results").order_by(Outbox.id.desc())
            ).first()
            label, answered = (gone.label if gone else ""), (results.message_id if results else None)
        text = "\n".join(deck.lines[i] for i in picks)
        if picks[0] % 2 and answered is not None:
            _deliver(app, seat, text, "Re: [g1] results", answered)
        else:
            _deliver(app, seat, text, f"Re: [g1] {deck.kind}: {label}")
        cycle(app)
    elif what in ("clear", "wait", "nowait", "orders", "status"):
        player_says(app, seat, what.upper(), game="g1", address=address)
    elif what == "tick":
        moving_clock(app).advance(timedelta(hours=49))
        cycle(app)
    elif what == "plot":
        gm_says(app, f"PLOT g1 {seat} {line}", game="g1")
    elif what == "order":
        gm_says(app, f"ORDER g1 {seat} {line}", game="g1")
    elif what == "set":
        if deck.figure is not None:
            gm_says(app, f"SET g1 {seat} {deck.figure[0]} {deck.figure[1]}", game="g1")
    elif what == "replace":
        gm_says(app, f"REPLACE g1 {seat} ROBOT", game="g1")
    elif what == "drop":
        gm_says(app, f"DROP g1 {seat}", game="g1")
    elif what == "extend":
        gm_says(app, "EXTEND g1 24h", game="g1")
    elif what == "deadline":
        gm_says(app, "DEADLINE g1 +30h", game="g1")
    elif what == "gmstatus":
        gm_says(app, "STATUS g1", game="g1")
    elif what == "digest":
        digest.send_due_digests(app.shell, force=True)
        app.service.send()
    else:
        gm_says(app, f"{what.upper()} g1", game="g1")


def _deliver(app: TestApp, seat: str, text: str, subject: str, in_reply_to: str | None = None) -> None:
    """A mail from `seat` to its reply address, answering `in_reply_to` when given."""
    to = signed_address(BOT, "test-site-secret", "g1", seat)
    headers = (
        {"In-Reply-To": in_reply_to if in_reply_to.startswith("<") else f"<{in_reply_to}>"} if in_reply_to else None
    )
    fake_inbox(app).deliver(
        plain_mail(
            f"{seat}@example.org", to, subject, text, message_id=f"<{next(_MAIL)}@client.example>", headers=headers
        )
    )


_MAIL = itertools.count(1)


def _turns(app: TestApp) -> dict[int, Turn]:
    with app.db.read() as session:
        game = store.find_game_row(session, "g1")
        assert game is not None
        return {t.number: t for t in session.scalars(select(Turn).where(Turn.game_id == game.id))}


def _utc(when: datetime | None) -> str | None:
    from bot.clock import as_utc

    return as_utc(when).isoformat() if when is not None else None


def _used(app: TestApp, number: int) -> dict[str, tuple[str, str]]:
    """What the resolution of turn `number` used, seat by seat: (the set, filled as resolved,
    one canonical line each, sorted; and why: own, plot or default)."""
    with app.db.read() as session:
        game = store.find_game_row(session, "g1", with_seats=True)
        assert game is not None
        turn = session.scalars(select(Turn).where(Turn.game_id == game.id, Turn.number == number)).one()
        rules = find_game(game.kind)
        state = rules.load_state(turn.state)
        subs = store.turns_submissions(session, [turn.id]).get(turn.id, {})
        used = record.orders_used(rules, state, game, subs)
        out: dict[str, tuple[str, str]] = {}
        for name, orders in used.items():
            seat = store.seat_named(game, name)
            rows = list(subs.get(seat.id, ())) if seat is not None else []
            own = store.orders_on_file(rules, state, seat, rows) if seat is not None else None
            if own is not None:
                text, why = rules.format_orders(rules.filled_orders(state, name, own)), "own"
            else:
                filed = [r.source for r in rows if r.source in ("default", "plot")]
                text, why = rules.format_orders(orders), filed[-1] if filed else "default"
            out[name] = ("\n".join(sorted(text.splitlines())), why)
        return out


def _all_in(app: TestApp, number: int) -> bool:
    """Whether every seat turn `number` expects has a complete set on file (its outlook)."""
    from bot.outlook import of_turn

    with app.db.read() as session:
        game = store.find_game_row(session, "g1", with_seats=True)
        assert game is not None
        turn = session.scalars(select(Turn).where(Turn.game_id == game.id, Turn.number == number)).one()
        rules = find_game(game.kind)
        state = rules.load_state(turn.state)
        return of_turn(game, rules, state, store.turn_submissions(session, turn)).all_in


def _check(app: TestApp, ledger: Ledger, step: Step, before: dict[int, Turn]) -> None:
    after = _turns(app)
    with app.db.read() as session:
        game = session.scalar(select(Game).where(Game.name == "g1"))
        assert game is not None
        status = game.status
        rows = list(session.scalars(select(Outbox).where(Outbox.id > ledger.read_to).order_by(Outbox.id)))
    if rows:
        ledger.read_to = rows[-1].id
    what, who, _ = step
    # A ROLLBACK reopens a turn: what was claimed for the turns it discarded or reopened lapses.
    if what == "rollback":
        for number in list(ledger.counts):
            if number not in after or after[number].resolved_at is None:
                ledger.counts.pop(number, None)
    # A seat handed to a robot or dropped is told no more: its claims lapse.
    if what in ("replace", "drop"):
        for claimed in ledger.counts.values():
            claimed.pop(f"p{who}", None)
    if what in HOLD_MAY_CHANGE:
        ledger.early.clear()
    for row in rows:
        for claim in row.claimed:
            number = int(claim["turn"])
            turn = after.get(number)
            assert turn is not None, (row.subject, claim)
            if claim["resolved"]:
                assert turn.resolved_at is not None, (row.subject, claim)
            else:
                # "You may send new orders until ..." of a turn resolved already: false.
                assert turn.resolved_at is None, ("a turn claimed open, resolved already", row.subject, claim)
                assert claim["paused"] == (status == "paused"), (row.subject, claim)
                assert claim["deadline"] == (None if claim["paused"] else _utc(turn.deadline)), (row.subject, claim)
            for counts in claim["counts"]:
                orders = "\n".join(sorted(str(counts["orders"]).splitlines()))
                ledger.counts.setdefault(number, {})[str(counts["seat"])] = (orders, str(counts["why"]), row.id)
            if not claim["resolved"] and claim.get("early") is not None:
                ledger.early.setdefault(number, []).append((bool(claim["early"]), row.id, row.kind))
    # Whether it resolves early, against what the orders that arrived since did.
    for number, turn in sorted(after.items()):
        was, fresh = before.get(number), ledger.early.get(number, [])
        if not fresh or was is None or was.resolved_at is not None or what in HOLD_MAY_CHANGE:
            continue
        if turn.resolved_at is not None:  # by the orders that arrived: early, the clock unmoved
            assert all(early for early, _, _ in fresh), (
                "claimed to wait for its deadline, resolved early",
                step,
                fresh,
            )
            ledger.checked_early += len(fresh)
        elif what in COMPLETING and any(early for early, _, _ in fresh) and _all_in(app, number):
            raise AssertionError(("claimed to resolve once every set is in: every set in, not resolved", step, fresh))
    for number, turn in after.items():
        if turn.resolved_at is not None:
            ledger.early.pop(number, None)
    # The turns this step resolved: the claims of orders made before it, against what was used.
    for number, turn in sorted(after.items()):
        was = before.get(number)
        if turn.resolved_at is not None and (was is None or was.resolved_at is None):
            claimed = ledger.counts.pop(number, {})
            used = _used(app, number)
            for seat, (orders, why, outbox_id) in claimed.items():
                if seat in used:
                    assert used[seat] == (orders, why), (number, seat, outbox_id, step)
                    ledger.checked += 1


Started = Callable[[str], Played]
"""A deck's game created and its first turn sheets sent (`_game`), once a module: each history
is played on a `copy_of` it."""


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Started:
    made: dict[str, Played] = {}

    def start(name: str) -> Played:
        if name not in made:
            made[name] = played_once(tmp_path_factory.mktemp(f"started-{name}"), lambda app: _game(app, DECKS[name]))
        return made[name]

    return start


def _play(start: Played, deck: Deck, history: list[Step]) -> Ledger:
    with tempfile.TemporaryDirectory() as tmp:
        app = copy_of(start, Path(tmp))
        try:
            ledger = Ledger()
            _check(app, ledger, ("start", 0, (0,)), {})
            if deck.kind == "speed_circuit":  # to the race: its design and qualifying turns by default
                history = [("tick", 0, (0,)), ("tick", 0, (0,)), *history]
            # At the end, whatever is open goes on and resolves, to check the last claims.
            ending: list[Step] = [("tick", 0, (0,))] if deck.practice else [("resume", 0, (0,)), ("tick", 0, (0,))]
            if deck.practice:
                ending = [("finish", 0, (0,))]
            played: list[Step] = []
            for what, who, picks in [*history, *ending]:
                who %= len(deck.people)
                if deck.practice and what in GM_STEPS:
                    continue  # a practice race has no GM
                if what == "all":  # a whole set from every person, the seat last: the turn completes
                    others = [i for i in range(len(deck.people)) if i != who]
                    played.extend(("whole", i, picks) for i in [*others, who])
                elif what == "late":  # the tick that follows resolves the turn the refusal spoke of
                    played.extend([(what, who, picks), ("tick", 0, (0,))])
                else:
                    played.append((what, who, picks))
            for step in played:
                before = _turns(app)
                _act(app, deck, step)
                _check(app, ledger, step, before)
            return ledger
        finally:
            app.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DECKS))
def test_every_claim_of_every_letter_holds(name: str, started: Started) -> None:
    deck = DECKS[name]
    checked: list[int] = []

    @settings(max_examples=examples(3, 6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(steps(deck))
    # Every person's orders in: the turn resolves early (a WAIT held the turn before, which the
    # GM's PROCESS resolved: a WAIT holds its own turn alone).
    @example(history=[("wait", 0, (0,)), ("process", 0, (0,)), ("status", 0, (0,)), ("all", 1, (0,))])
    # p0's WAIT holds it (STATUS, the confirmations, the GM's STATUS say so); the NOWAIT releases it.
    @example(
        history=[("wait", 0, (0,)), ("status", 1, (0,)), ("all", 1, (0,)), ("gmstatus", 0, (0,)), ("nowait", 0, (0,))]
    )
    @example(  # orders sent for the next turn, kept by a ROLLBACK, checked when it resolves again
        history=[("all", 0, (0,)), ("whole", 1, (0,)), ("order", 0, (1,)), ("rollback", 0, (0,)), ("process", 0, (0,))]
    )
    @example(history=[("plot", 0, (0,)), ("tick", 0, (0,)), ("mail", 1, (1,)), ("pause", 0, (0,)), ("resume", 0, (0,))])
    @example(
        history=[("replace", 1, (0,)), ("set", 0, (0,)), ("drop", 0, (0,)), ("mail", 1, (0, 2)), ("tick", 0, (0,))]
    )
    @example(  # orders past the deadline, replies to a turn gone by and to results rolled back
        history=[("late", 0, (0,)), ("stale", 1, (0,)), ("rollback", 0, (0,)), ("stale", 0, (1,)), ("plot", 1, (0,))]
    )
    @example(  # the deadline moved, told in the GM's answers, STATUS, the digest and PREVIEW
        history=[
            ("extend", 0, (0,)),
            ("status", 0, (0,)),
            ("mail", 1, (0,)),
            ("deadline", 0, (0,)),
            ("digest", 0, (0,)),
            ("pause", 0, (0,)),
            ("gmstatus", 0, (0,)),
            ("preview", 0, (0,)),
            ("resume", 0, (0,)),
        ]
    )
    def run(history: list[Step]) -> None:
        ledger = _play(started(name), deck, history)
        checked.append(ledger.checked)
        early.append(ledger.checked_early)

    early: list[int] = []
    run()
    assert sum(checked) > 0, "no claim of orders was ever put to the test"
    assert deck.practice or sum(early) > 0, "no claim of whether the turn resolves early was put to the test"


def test_refusals_status_preview_the_gms_answers_and_the_digest_carry_their_claims(started: Started) -> None:
    """The letters that say what counts or when the turn is due carry it as claims, as the turn
    sheets and confirmations do (on main a refusal's "your earlier orders stay in force", STATUS,
    ORDERS, a note's "what stands", PREVIEW, the GM's EXTEND / DEADLINE / PAUSE / RESUME answers and
    the digest carried none, so no property could check them)."""
    deck = DECKS["racecraft"]
    history: list[Step] = [
        ("extend", 0, (0,)),
        ("status", 0, (0,)),
        ("mail", 1, (4,)),  # USE 12: refused
        ("mail", 1, (5,)),  # hello: a note
        ("orders", 1, (0,)),
        ("deadline", 0, (0,)),
        ("digest", 0, (0,)),
        ("pause", 0, (0,)),
        ("gmstatus", 0, (0,)),
        ("preview", 0, (0,)),
        ("resume", 0, (0,)),
        ("tick", 0, (0,)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        app = copy_of(started("racecraft"), Path(tmp))
        try:
            ledger = Ledger()
            _check(app, ledger, ("start", 0, (0,)), {})
            for step in history:
                before = _turns(app)
                _act(app, deck, step)
                _check(app, ledger, step, before)
            with app.db.read() as session:
                rows = list(session.scalars(select(Outbox).order_by(Outbox.id)))
        finally:
            app.close()
    claimed = {(row.kind, row.recipient): row.claimed for row in rows}
    seats = len(deck.people) + len(deck.robots)
    for kind, counts in {
        "refused": 1,
        "note": 1,
        "orders": 1,
        "status": 0,
        "gm_extend": 0,
        "gm_deadline": 0,
        "gm_pause": 0,
        "gm_resume": 0,
        "digest": seats,  # what counts for every seat (claims.of_outlook)
        "gm_preview": seats,
    }.items():
        made = [(to, c) for (k, to), cs in claimed.items() if k == kind for c in cs]
        assert made, f"no claim in a {kind} letter"
        # A GM's STATUS is the digest's block of the game: what counts for every seat.
        assert all(len(c["counts"]) == (seats if (kind, to) == ("status", GM) else counts) for to, c in made), (
            kind,
            made,
        )
    assert ledger.checked >= seats  # PREVIEW's and the refusal's claims among those checked


def test_late_and_stale_refusals_and_the_gms_plot_and_order_answers_carry_their_claims(started: Started) -> None:
    """The refusal of orders past the deadline ("these orders were not used"), of a reply to a turn
    gone by or to results a ROLLBACK withdrew ("its orders were not used for any turn"), and the
    GM's answers to PLOT and ORDER claim what counts for the seat and the deadline, and the
    property checks them against the resolution (on main they carried no claim)."""
    deck = DECKS["racecraft"]
    history: list[Step] = [
        ("plot", 0, (0,)),  # PLOT g1 p0 USE 2: the GM's answer claims the plot counts for p0
        ("order", 1, (0,)),  # ORDER g1 p1 USE 2
        ("late", 2, (0,)),  # USE 3 past the deadline: refused, p2's default stands
        ("tick", 0, (0,)),
        ("stale", 3, (0,)),  # USE 3 in reply to Turn 1, gone by
        ("rollback", 0, (0,)),
        ("stale", 3, (1,)),  # USE 1 in reply to Turn 1's results, withdrawn
        ("process", 0, (0,)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        app = copy_of(started("racecraft"), Path(tmp))
        try:
            ledger = Ledger()
            _check(app, ledger, ("start", 0, (0,)), {})
            for step in history:
                before = _turns(app)
                _act(app, deck, step)
                _check(app, ledger, step, before)
            with app.db.read() as session:
                rows = list(session.scalars(select(Outbox).options(selectinload(Outbox.body)).order_by(Outbox.id)))
        finally:
            app.close()
    made: dict[str, list[dict[str, Any]]] = {}  # Outbox.claimed, as stored
    for row in rows:
        kind = f"{row.kind} to the GM" if row.recipient == GM else row.kind
        made.setdefault(kind, []).extend(row.claimed)
    stale = [row for row in rows if row.kind == "stale_turn"]
    assert len(stale) == 2 and "rolled back" in stale[1].data.decode(errors="replace").lower(), [
        r.subject for r in stale
    ]
    for kind, seat in {
        "late": "p2",
        "stale_turn": "p3",
        "gm_plot to the GM": "p0",
        "gm_order to the GM": "p1",
    }.items():
        assert made.get(kind), (f"no claim in a {kind} letter", sorted(made))
        assert all([c["seat"] for c in claim["counts"]] == [seat] for claim in made[kind]), (kind, made[kind])
    assert [c["why"] for claim in made["gm_plot to the GM"] for c in claim["counts"]] == ["plot"]
    assert ledger.checked >= 2 * len(deck.people), ledger  # turn 1, resolved twice: every person's claims
