"""A capability goes only to its holder (mail-interface.md, "Addresses and identity").

"A mail carries a signed reply address only when it goes to that seat's (or the GM's)
registered address. Answers to strangers, to refused senders and to observers carry the plain
address." The same holds for a seat password and the GM password.

The check runs where every outgoing mail is made (`bot.mail_out.queue.queue`, which only
`bot.letters` calls): each mail queued while the bot works through a day of mail of every
kind -- strangers, forged senders, players, the GM, sign-ups, reminders, the digest, a
deadline -- is taken apart, and every signed address and every password in its headers and
text must belong to the mail's recipient, by the database as it stands at that moment. A
Hypothesis property then sends random mail from random senders through random addresses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.games.turns import create_game
from bot.gm import digest
from bot.mail_in.auth import GM_SEAT, parse_tag, verify_tag
from bot.mail_out import queue as mailout
from bot.mail_out.compose import compose as compose_mail
from bot.models import Game, Seat
from bot.testing import plain_mail
from tests.security.conftest import ADDRESS, BOT, GM, MAX_MAIL_BYTES, OLD_SECRET, SITE_SECRET, Bot
from tests.settled import examples
from tests.source_trees import parsed

REPO = Path(__file__).resolve().parents[2]
SIGNED_RE = re.compile(r"flagman\+([a-z0-9][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*\.[a-z2-7]{12})@example\.org", re.I)
GM2 = "gm2@example.org"
STRANGER = "mallory@evil.example"


def _texts(data: bytes) -> str:
    """Everything a reader sees of a mail: its headers and every text part, decoded."""
    msg = message_from_bytes(data, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    parts = [f"{k}: {v}" for k, v in msg.items()]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            parts.append(str(part.get_content()))
    return "\n".join(parts)


@dataclass
class Watch:
    """Checks each mail as it is queued; counts the kinds it saw."""

    kinds: dict[str, int] = field(default_factory=dict)
    signed_seen: int = 0
    violations: list[str] = field(default_factory=list)

    def check(self, session: Session, kind: str, to: str, data: bytes) -> None:
        # Recorded, not raised: an exception here would be caught by the service (quarantine).
        try:
            self._check(session, kind, to, data)
        except AssertionError as exc:
            self.violations.append(f"{kind} to {to}: {exc}")

    def _check(self, session: Session, kind: str, to: str, data: bytes) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        text = _texts(data)
        to = to.lower()
        for tag in {m.lower() for m in SIGNED_RE.findall(text)}:
            claimed = parse_tag(tag)
            assert claimed is not None
            game = session.scalar(select(Game).where(Game.name == claimed.game))
            assert game is not None, (kind, tag)
            self.signed_seen += 1
            if claimed.seat == GM_SEAT:
                assert verify_tag(tag, (SITE_SECRET, OLD_SECRET)) is not None
                assert to == game.gm_address.lower(), f"{kind}: the GM's reply address in mail to {to}"
                continue
            seat = session.scalar(select(Seat).where(Seat.game_id == game.id, Seat.name == claimed.seat))
            assert seat is not None, (kind, tag)
            assert verify_tag(tag, (SITE_SECRET,), seat.reply_salt) is not None, f"{kind}: a stale reply address"
            assert to == seat.player.address.lower(), f"{kind}: {seat.name}'s reply address in mail to {to}"
        for game in session.scalars(select(Game)):
            if game.gm_secret and game.gm_secret in text:
                assert to == game.gm_address.lower(), f"{kind}: the GM password of {game.name} in mail to {to}"
            for seat in game.seats:
                if seat.secret and seat.secret in text:
                    assert to == seat.player.address.lower(), f"{kind}: {seat.name}'s password in mail to {to}"


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[Watch]:
    watch = Watch()
    original_queue, original_compose = mailout.queue, compose_mail
    sessions: list[Session] = []

    def queue(session: Session, *args: Any, **kwargs: Any) -> Any:
        sessions.append(session)
        try:
            return original_queue(session, *args, **kwargs)
        finally:
            sessions.pop()

    def compose(*args: Any, **kwargs: Any) -> Any:
        # Every outgoing mail is composed by `queue` (in the outbox at once or with its batch).
        message_id, envelope_from, data = original_compose(*args, **kwargs)
        assert sessions, "a mail composed outside bot.mail_out.queue.queue"
        watch.check(sessions[-1], kwargs["kind"], kwargs["to"].address, data)
        return message_id, envelope_from, data

    monkeypatch.setattr(mailout, "queue", queue)
    monkeypatch.setattr(mailout, "compose", compose)
    yield watch


def _signup_game(bot: Bot) -> None:
    with bot.app.db.transaction() as session:
        create_game(
            bot.app.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=(),
            gm_address=GM2,
            deadline="48h",
            timezone="Europe/London",
            signup=True,
            seed=3,
        )


def _gm_signed(game: str = "rc1") -> str:
    from bot.mail_in.auth import signed_address

    return signed_address(BOT, SITE_SECRET, game, GM_SEAT)


def test_only_the_letters_module_queues_mail() -> None:
    """Structural: one place decides a letter's recipient and its Reply-To (bot/letters/addressing.py)."""
    callers = []
    for path in sorted((REPO / "bot").rglob("*.py")):
        tree = parsed(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("queue", "compose")
                and isinstance(node.value, ast.Name)
                and node.value.id == "mailout"
            ):
                callers.append(path.relative_to(REPO).as_posix())
            if (
                isinstance(node, ast.ImportFrom)
                and node.module in ("bot.mail_out.queue", "bot.mail_out.compose")
                and any(a.name in ("queue", "compose") for a in node.names)
            ):
                callers.append(path.relative_to(REPO).as_posix())
    # addressing queues every letter; the queue composes it (and nothing else does either)
    assert sorted(set(callers)) == ["bot/letters/addressing.py", "bot/mail_out/queue.py"]


def test_every_kind_of_mail_carries_capabilities_only_to_their_holders(bot: Bot, watch: Watch) -> None:
    """A day of mail of every kind the bot answers or sends; the check runs on each mail queued."""
    _signup_game(bot)
    n = iter(range(10_000))

    def mail(sender: str, to: str, text: str, subject: str = "orders", **headers: str) -> None:
        bot.deliver(
            plain_mail(sender, to, subject, text, message_id=f"<cap-{next(n)}@client.example>", headers=headers or None)
        )

    # Strangers: a notice, JOIN refusals (closed game, unknown game), a JOIN that works.
    mail(STRANGER, BOT, "HELP")
    mail("joiner1@else.example", BOT, "JOIN rc1 Spammy")
    mail("joiner2@else.example", BOT, "JOIN nosuchgame buy cheap watches")
    mail("kim@else.example", BOT, "JOIN rc2 Kim")
    bot.poll()
    bot.confirm("kim@else.example")  # JOIN is double opt-in: the seat comes with the answer to the code
    # Players through their signed addresses: orders, refusals, STATUS, ORDERS, HELP.
    mail(ADDRESS["seb"], bot.signed("seb"), "USE 2")
    mail(ADDRESS["seb"], bot.signed("seb"), "USE 999")
    mail(ADDRESS["seb"], bot.signed("seb"), "STATUS\nORDERS\nHELP")  # one answer, in sections
    mail(ADDRESS["seb"], bot.signed("seb"), "ORDERS")
    mail(ADDRESS["seb"], bot.signed("seb"), "Hello\nEXTEND rc1 1h")
    # A registered From without proof; the GM's address used by others.
    mail(ADDRESS["kelly"], BOT, "USE 1")
    mail(STRANGER, _gm_signed(), "EXTEND rc1 1h\nPREVIEW rc1")
    mail(ADDRESS["kelly"], _gm_signed(), "USE 1")
    bot.poll()
    bot.clock.advance(days=1, hours=1)  # past once-a-day limits
    # The GM: every kind of command, by the signed address from the registered From.
    gm_lines = [
        "EXTEND rc1 1h",
        "DEADLINE rc1 +30h",
        "PREVIEW rc1",
        "PAUSE rc1",
        "RESUME rc1",
        "ORDER rc1 anna USE 1",
        "PLOT rc1 steve USE 2",
        "SET rc1 seb ep 90",
        "EXTEND rc1 lots",
        "what is this line",
        "HELP",
        "STATUS",
    ]
    for line in gm_lines:
        mail(GM, _gm_signed(), line)
    mail(GM, BOT, f"PASSWORD {bot.gm_secret()}\nEXTEND rc1 1h")
    mail(GM, _gm_signed(), "REPLACE rc1 roger rog2@else.example Rog")
    mail(GM, _gm_signed(), "DROP rc1 steve")
    mail(ADDRESS["anna"], bot.signed("anna"), "RESIGN rc1")
    bot.poll()
    # A mail over the size cap through a signed address.
    bot.deliver(
        plain_mail(ADDRESS["kelly"], bot.signed("kelly"), "big", "USE 1", message_id="<cap-big@x>")
        + b"A" * (MAX_MAIL_BYTES + 10)
    )
    bot.poll()
    # The digest, reminders, the deadline with its results, a late order.
    digest.send_due_digests(bot.app.shell, force=True)
    for _ in range(4):
        bot.clock.advance(hours=12)
        bot.service.tick()
    mail(ADDRESS["seb"], bot.signed("seb"), "USE 3")
    bot.poll()
    for _ in range(20):  # play on to the end: results and final mails
        bot.clock.advance(hours=49)
        bot.service.tick()
    bot.service.send()
    expected = {
        "stranger",
        "join_refused",
        "join_confirm",
        "welcome",
        "joined",
        "confirmation",
        "refused",
        "status",
        "orders",
        "help",
        "auth_refused",
        "gm_extend",
        "gm_deadline",
        "gm_preview",
        "gm_pause",
        "gm_resume",
        "gm_order",
        "gm_plot",
        "gm_set",
        "gm_replace",
        "gm_drop",
        "extend",
        "deadline",
        "pause",
        "resume",
        "replaced",
        "dropped",
        "resigned",
        "resigned_gm",
        "turn_sheet",
        "oversize",
        "digest",
        "reminder",
        "results",
        "results_gm",
        "final",
        "final_gm",
        "notice",
    }
    assert watch.violations == []
    missing = expected - set(watch.kinds)
    assert not missing, f"kinds not exercised: {sorted(missing)}; seen: {sorted(watch.kinds)}"
    assert watch.signed_seen > 50
    assert bot.quarantined() == []


SENDERS = [STRANGER, ADDRESS["seb"], ADDRESS["kelly"], GM, GM2, "kim@else.example"]
ROUTES = ["plain", "seb", "kelly", "gm", "gm2"]
BODIES = [
    "USE 2",
    "STATUS",
    "ORDERS",
    "HELP",
    "JOIN rc2 Zed",
    "JOIN rc1",
    "RESIGN rc1",
    "EXTEND rc1 2h",
    "PREVIEW rc1",
    "PROCESS rc1",
    "START rc2",
    "REPLACE rc1 kelly k2@else.example",
    "PASSWORD nope\nUSE 1",
    "DROP rc1 anna",
    "hello there",
    "ROLLBACK rc1",
    "OPEN rc2",
]


@settings(max_examples=examples(8, 40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(SENDERS), st.sampled_from(ROUTES), st.sampled_from(BODIES), st.booleans()),
        min_size=1,
        max_size=12,
    )
)
# Someone else on a seat's and on the GM's addresses: GM commands, a replacement, a new player.
@example(
    [
        (STRANGER, "gm", "REPLACE rc1 kelly k2@else.example", True),
        (ADDRESS["kelly"], "seb", "PASSWORD nope\nUSE 1", False),
        (GM2, "gm", "DROP rc1 anna", True),
        ("kim@else.example", "plain", "JOIN rc2 Zed", False),
        (GM, "gm2", "START rc2", True),
        (ADDRESS["seb"], "kelly", "ORDERS", True),
    ]
)
# The GM's own commands on the GM's address, the turn resolved and rolled back between them.
@example([(GM, "gm", "PROCESS rc1", True), (GM, "gm", "ROLLBACK rc1", True), (GM, "plain", "STATUS", False)])
@pytest.mark.slow
def test_random_mail_never_hands_a_capability_to_anyone_else(
    make_bot: Callable[..., Bot], watch: Watch, mails: list[tuple[str, str, str, bool]]
) -> None:
    """Property: whatever arrives, from whoever, through whichever address, every capability in
    every mail queued belongs to that mail's recipient (checked as each mail is queued)."""
    bot = make_bot()
    _signup_game(bot)
    for i, (sender, route, body, tick) in enumerate(mails):
        to = {
            "plain": BOT,
            "seb": bot.signed("seb"),
            "kelly": bot.signed("kelly"),
            "gm": _gm_signed(),
            "gm2": _gm_signed("rc2"),
        }[route]
        bot.deliver(plain_mail(sender, to, "x", body, message_id=f"<p-{i}@client.example>"))
        if tick:
            bot.poll()
            bot.clock.advance(timedelta(hours=25))
            bot.service.tick()
    bot.poll()
    assert watch.violations == []
    assert bot.quarantined() == []
