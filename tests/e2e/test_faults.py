"""Fault injection against the real servers (testing.md, "Fault injection").

Each test compares a run with faults against the same run without: the database (turns,
orders, what became of every mail) and the mails the relay received must be the same, with no
order lost, no mail missing, and no Message-ID twice except a mail in flight when the bot was
killed (the relay had it, the bot had not yet recorded it).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from bot.app import build_app
from bot.faults import CrashPoint
from bot.games.turns import PlayerSpec, create_game
from bot.settings import load_settings
from bot.testing import FakeClock, plain_mail
from tests.e2e import bot_worker
from tests.e2e.conftest import MailWorld
from tests.helpers import migrated
from tests.servers import Dovecot, SmtpSink

# The bot processes are forked from a server process that has imported the bot once (each
# a process of its own, killed and started again as before, without a second of imports each).
WORKERS = multiprocessing.get_context("forkserver")
WORKERS.set_forkserver_preload(["tests.e2e.bot_worker"])
START = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
_serial = itertools.count(1)
GAMES = ("g1", "g2", "g3", "g4")  # g2 waits for its deadline: one player stays silent


@dataclass
class Run:
    config: Path
    bot: str
    domain: str
    db_url: str


def make_run(tmp_path: Path, dovecot: Dovecot, sink: SmtpSink, label: str) -> Run:
    n = next(_serial)
    domain = f"{label}{n}.test"
    bot = dovecot.add_user(f"flagman@{domain}", "bot-pw")
    root = tmp_path / f"{label}{n}"
    root.mkdir()
    db_url = f"sqlite:///{root / 'flagman.sqlite'}"
    (root / "secret").write_text("fault-secret\n")
    config = root / "flagman.toml"
    config.write_text(f"""
[bot]
address = "{bot}"
timezone = "Europe/London"
secret_file = "secret"
[database]
url = "{db_url}"
[inbox]
kind = "imap"
host = "{dovecot.host}"
port = {dovecot.imap_port}
security = "none"
username = "{bot}"
batch_size = 7
timeout = 10.0
[outbox]
kind = "smtp"
host = "{sink.host}"
port = {sink.port}
security = "none"
batch_size = 5
timeout = 10.0
""")
    os.environ["FLAGMAN_IMAP_PASSWORD"] = "bot-pw"
    migrated(db_url)
    return Run(config, bot, domain, db_url)


def seed_games(run: Run, dovecot: Dovecot) -> list[bytes]:
    """Four games; the mails their players send for turn 1 (one player of g2 stays silent)."""
    app = build_app(load_settings(run.config), clock=FakeClock(START))
    mails: list[bytes] = []
    with app.db.transaction() as session:
        for g in GAMES:
            players = [PlayerSpec(f"p{i}", f"{g}p{i}@{run.domain}", f"P{i}") for i in range(5)]
            create_game(
                app.shell,
                session,
                kind="racecraft",
                name=g,
                players=players,
                gm_address=f"gm@{run.domain}",
                deadline="48h",
                seed=99 if g != "g2" else 5,
            )
    from bot.mail_in.auth import signed_address

    for g in GAMES:
        for i in range(5):
            if g == "g2" and i == 4:
                continue  # NMR: resolved at the deadline
            to = signed_address(run.bot, "fault-secret", g, f"p{i}")
            sender = f"{g}p{i}@{run.domain}"
            if i == 1:
                mails.append(plain_mail(sender, to, f"Re: [{g}]", "USE 11", message_id=f"<{g}-{i}-bad@c>"))
            mails.append(plain_mail(sender, to, f"Re: [{g}]", f"USE {i + 1}", message_id=f"<{g}-{i}@c>"))
            if i == 2:
                mails.append(plain_mail(sender, to, f"Re: [{g}]", f"USE {i + 1}", message_id=f"<{g}-{i}@c>"))
    mails.append(plain_mail(f"stranger@{run.domain}", run.bot, "hi", "hello?", message_id="<stranger@c>"))
    mails.append(
        plain_mail(
            f"g1p0@{run.domain}",
            run.bot,
            "Out of office",
            "away",
            message_id="<ooo@c>",
            headers={"Auto-Submitted": "auto-replied"},
        )
    )
    app.close()
    with dovecot.lmtp_connection() as lmtp:
        for data in mails:
            dovecot.deliver(run.bot, data, lmtp=lmtp)
    return mails


@dataclass
class Worker:
    """A bot process (tests/e2e/bot_worker.py) working on a run's inbox and database."""

    process: multiprocessing.process.BaseProcess
    log: Path

    def wait(self, timeout: float) -> int:
        """Its exit status (negative: the signal that ended it), once it has ended."""
        self.process.join(timeout)
        assert self.process.exitcode is not None, f"the bot process did not end in {timeout} s"
        return self.process.exitcode

    def errors(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


def worker(run: Run, now: datetime, kill: str | None = None, mode: str = "") -> Worker:
    """`mode` "overlapped": the send in a thread of its own beside the poll and the tick, as the
    service runs them (tests/e2e/bot_worker.py)."""
    log = run.config.parent / f"worker-{next(_serial)}.log"
    process = WORKERS.Process(target=bot_worker.serve, args=(str(run.config), now.isoformat(), kill, str(log), mode))
    process.start()
    return Worker(process, log)


def finish(run: Run, now: datetime) -> None:
    proc = worker(run, now)
    assert proc.wait(timeout=120) == 0, proc.errors()


def killed_at(run: Run, now: datetime, point: CrashPoint, nth: int, mode: str = "") -> bool:
    """Run the worker until it reaches `point` the `nth` time, where it kills itself (SIGKILL).
    True if it died there; False if it finished its work without reaching it that often."""
    proc = worker(run, now, f"{point.value}:{nth}", mode)
    status = proc.wait(timeout=120)
    assert status in (0, -signal.SIGKILL), proc.errors()
    return status == -signal.SIGKILL


def killed_at_random_moments(run: Run, now: datetime, kills: int, rng: random.Random) -> int:
    """Start the worker and SIGKILL it after a random pause, `kills` times. Where such a kill lands
    is up to the machine's speed, so nothing is asserted of it but the outcome; returns how many
    struck a running worker (each may have had one mail in flight)."""
    landed = 0
    for _ in range(kills):
        proc = worker(run, now)
        time.sleep(rng.uniform(0.25, 1.2))  # start-up alone takes a tenth of a second or more
        if proc.process.is_alive():
            proc.process.kill()
            landed += 1
        proc.wait(timeout=30)
    return landed


@dataclass(frozen=True)
class CleanRun:
    snapshot: dict[str, object]
    mails: set[object]
    ids: Counter[str]
    mailboxes: dict[str, int]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory, dovecot: Dovecot, smtp_sink: SmtpSink) -> CleanRun:
    """The run without faults that every faulty run must equal: the inbox at +1 h, g2's deadline at +49 h."""
    run = make_run(tmp_path_factory.mktemp("clean"), dovecot, smtp_sink, "clean")
    seed_games(run, dovecot)
    finish(run, START + timedelta(hours=1))
    finish(run, START + timedelta(hours=49))
    mails, ids = relay_view(smtp_sink, run.domain)
    assert ids and all(n == 1 for n in ids.values())
    return CleanRun(
        normalise(snapshot(run), run.domain),
        set(normalise(dict(mails), run.domain)),
        ids,
        mailbox_counts(dovecot, run.bot),
    )


def assert_same_as_clean(run: Run, clean: CleanRun, smtp_sink: SmtpSink, dovecot: Dovecot) -> int:
    """The faulty run's database, mail sent and mailboxes equal the clean run's; returns the
    number of repeated Message-IDs at the relay (for the caller to bound)."""
    assert normalise(snapshot(run), run.domain) == clean.snapshot
    mails, ids = relay_view(smtp_sink, run.domain)
    assert set(normalise(dict(mails), run.domain)) == clean.mails, "a mail is missing, or one too many"
    assert len(ids) == len(clean.ids)
    counts = mailbox_counts(dovecot, run.bot)
    assert counts["INBOX"] == 0 and counts == clean.mailboxes
    return sum(n - 1 for n in ids.values())


def snapshot(run: Run) -> dict[str, object]:
    engine = create_engine(run.db_url)
    with engine.connect() as conn:
        turns = conn.execute(
            text(
                "select g.name, t.number, t.state_after, t.events from turn t join game g on g.id = t.game_id "
                "order by g.name, t.number"
            )
        ).all()
        orders = conn.execute(
            text(
                "select g.name, s.name, o.source, o.text from order_submission o join seat s on s.id = o.seat_id "
                "join game g on g.id = s.game_id"
            )
        ).all()
        inbound = conn.execute(text("select message_id, status from inbound_message")).all()
        outbox = conn.execute(text("select recipient, subject, status from outbox")).all()
    engine.dispose()
    return {
        "turns": [(g, n, str(s), str(e)) for g, n, s, e in turns],
        "orders": Counter(tuple(r) for r in orders),
        "inbound": Counter(tuple(r) for r in inbound),
        "outbox": Counter(tuple(r) for r in outbox),
    }


def relay_view(sink: SmtpSink, domain: str) -> tuple[Counter[tuple[str, str]], Counter[str]]:
    from email import message_from_bytes, policy

    mails = Counter[tuple[str, str]]()
    ids = Counter[str]()
    for received in sink.messages:
        if not any(r.endswith("@" + domain) for r in received.rcpt_tos):
            continue
        msg = message_from_bytes(received.data, policy=policy.default)
        ids[str(msg["Message-ID"])] += 1
        for rcpt in received.rcpt_tos:
            mails[(rcpt, str(msg["Subject"]))] += 1
    return mails, ids


def mailbox_counts(dovecot: Dovecot, user: str) -> dict[str, int]:
    client = dovecot.imap_client(user, folder=None)
    try:
        return {f: int(client.folder_status(f, [b"MESSAGES"])[b"MESSAGES"]) for f in ("INBOX", "Processed", "Failed")}
    finally:
        client.logout()


def normalise(snap: dict[str, object], domain: str) -> dict[str, object]:
    """The same run in another mailbox differs only in its domain name."""
    normalised: dict[str, object] = eval(repr(snap).replace(domain, "DOMAIN"))  # our own repr of plain values
    return normalised


@pytest.mark.slow
@pytest.mark.parametrize("point", list(CrashPoint), ids=lambda p: p.value)
def test_a_kill_at_each_crash_point_loses_nothing_and_sends_nothing_twice(
    point: CrashPoint, tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, clean: CleanRun
) -> None:
    """testing.md, "Fault injection": kill the bot (SIGKILL) while it works through a full inbox and a
    deadline, restart; the database and the mail sent equal a run without faults. Here the kill is at
    a named crash point (bot.faults), the second time the worker reaches it: each point is hit for
    certain, on any machine. Only a kill after the relay accepted a mail and before its outcome was
    recorded sends that one mail again (with its Message-ID); every other point sends nothing twice."""
    run = make_run(tmp_path, dovecot, smtp_sink, f"kill-{point.value}-")
    seed_games(run, dovecot)
    assert killed_at(run, START + timedelta(hours=1), point, 2), f"{point.value} was not reached twice"
    finish(run, START + timedelta(hours=1))
    finish(run, START + timedelta(hours=49))
    repeats = assert_same_as_clean(run, clean, smtp_sink, dovecot)
    assert repeats == (1 if point is CrashPoint.AFTER_SEND else 0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "point",
    [
        CrashPoint.AFTER_COMMIT,
        CrashPoint.AFTER_MOVE,
        CrashPoint.AFTER_RESOLVE,
        CrashPoint.BEFORE_SEND,
        CrashPoint.AFTER_SEND,
        CrashPoint.AFTER_RECORD,
    ],
    ids=lambda p: p.value,
)
def test_a_kill_while_the_send_runs_beside_the_poll_and_the_tick_loses_nothing_and_sends_nothing_twice(
    point: CrashPoint, tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, clean: CleanRun
) -> None:
    """The same kill at a named crash point, with the bot's jobs overlapped as the service runs
    them: the send in a thread of its own, woken as each batch of mail is committed and each turn
    resolved, sending the mail already committed while the poll reads the next batch and the
    tick resolves the next turns. The kill ends every thread at once; after a restart the
    database and the mail sent equal the run without faults. A kill in the sending thread sends
    a mail again only after the relay accepted it and before its outcome was recorded (that one
    mail); a kill in the poll's or the tick's thread lands wherever the send has got to, so it
    may strike with one mail in flight, never more."""
    run = make_run(tmp_path, dovecot, smtp_sink, f"overlap-{point.value}-")
    seed_games(run, dovecot)
    assert killed_at(run, START + timedelta(hours=1), point, 2, "overlapped"), f"{point.value} was not reached twice"
    finish(run, START + timedelta(hours=1))
    finish(run, START + timedelta(hours=49))
    repeats = assert_same_as_clean(run, clean, smtp_sink, dovecot)
    if point in SEND:
        assert repeats == (1 if point is CrashPoint.AFTER_SEND else 0)
    else:
        assert repeats <= 1


INTAKE = (CrashPoint.AFTER_FETCH, CrashPoint.BEFORE_COMMIT, CrashPoint.AFTER_COMMIT, CrashPoint.AFTER_MOVE)
SEND = (CrashPoint.BEFORE_SEND, CrashPoint.AFTER_SEND, CrashPoint.AFTER_RECORD)
# What is left to do at each phase, in the order the worker does it, and how many kills each
# stage takes: a kill lands only while work of its stage is left (a worker that passes a point
# too few times has finished everything), so the kills are drawn stage by stage, few enough that
# work is always left (4 batches of mail, 3 games resolving early, dozens of mails to send at
# +1 h; g2 and its results mails at +49 h).
RESOLVE = (CrashPoint.WORKED_OUT, CrashPoint.AFTER_RESOLVE)
PHASES = (
    (timedelta(hours=1), ((INTAKE, 2, 1), (RESOLVE, 1, 1), (SEND, 3, 2))),
    (timedelta(hours=49), ((RESOLVE, 1, 1), (SEND, 1, 1))),
)


@pytest.mark.slow
def test_kills_at_random_points_and_moments_lose_nothing_and_duplicate_nothing(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, clean: CleanRun
) -> None:
    """testing.md: kill the bot at random points while it works through a full inbox and a deadline;
    restart; the final database and the mails sent equal a run without faults. The crash points, and
    how often each is passed before the kill, are drawn from a seeded rng stage by stage (so every
    kill lands where it was drawn, on any machine); then a few kills at random moments, wherever
    the machine has got to by then."""
    run = make_run(tmp_path, dovecot, smtp_sink, "faulty")
    seed_games(run, dovecot)
    rng = random.Random(20261130)
    in_flight = 0
    for offset, stages in PHASES:
        now = START + offset
        for points, kills, most in stages:
            for _ in range(kills):
                point, nth = rng.choice(points), rng.randint(1, most)
                assert killed_at(run, now, point, nth), f"{point.value} x{nth} at +{offset}: no work left there"
                in_flight += point is CrashPoint.AFTER_SEND
        in_flight += killed_at_random_moments(run, now, 2, rng)
        finish(run, now)
    repeats = assert_same_as_clean(run, clean, smtp_sink, dovecot)
    assert repeats <= in_flight, f"{repeats} repeated Message-IDs for {in_flight} kills with a mail in flight"


def test_a_restart_across_a_deadline_resolves_the_turn_exactly_once(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink
) -> None:
    """testing.md: a restart across a deadline: the turn is resolved exactly once, after start-up."""
    smtp_sink.reset()
    run = make_run(tmp_path, dovecot, smtp_sink, "restart")
    seed_games(run, dovecot)
    finish(run, START + timedelta(hours=1))
    # The service was down over g2's deadline; two instances start one after the other.
    finish(run, START + timedelta(hours=60))
    finish(run, START + timedelta(hours=61))
    engine = create_engine(run.db_url)
    with engine.connect() as conn:
        resolved = conn.execute(
            text("select g.name, t.number from turn t join game g on g.id = t.game_id where t.resolved_at is not null")
        ).all()
        results = conn.execute(
            text("select count(*) from outbox where kind = 'results' and recipient like 'g2%'")
        ).scalar()
    engine.dispose()
    # g2's turn 1 waited for its deadline; the others' turn 2 (opened at +1h) also fell due at +49h.
    assert sorted(resolved) == sorted([(g, 1) for g in GAMES] + [(g, 2) for g in GAMES if g != "g2"])
    assert results == 5, "g2's turn 1 resolved once: one results mail per player"


def test_the_same_message_delivered_twice_is_applied_once(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink
) -> None:
    """testing.md: the same Message-ID delivered twice: applied once (each copy moved out of the inbox)."""
    smtp_sink.reset()
    run = make_run(tmp_path, dovecot, smtp_sink, "dup")
    mails = seed_games(run, dovecot)
    with dovecot.lmtp_connection() as lmtp:
        for data in mails[:3]:
            dovecot.deliver(run.bot, data, lmtp=lmtp)
    finish(run, START + timedelta(hours=1))
    engine = create_engine(run.db_url)
    with engine.connect() as conn:
        confirmations = conn.execute(text("select count(*) from outbox where kind = 'confirmation'")).scalar()
    engine.dispose()
    assert confirmations == 5 * len(GAMES) - 1  # every player but the silent one: each confirmed once
    assert mailbox_counts(dovecot, run.bot)["INBOX"] == 0


def test_smtp_451_550_and_dropped_connections_retry_then_fail_for_good(world: MailWorld) -> None:
    """testing.md: SMTP answers 451, 550, or drops the connection: retry with backoff, then a failed state
    (reported to the GM in the digest); every other mail goes out."""
    from sqlalchemy import select as sa_select

    from bot.models import Outbox, OutboxStatus

    addresses = [world.player(f"smtp{i}-{world.domain.split('.')[0]}") for i in range(5)]
    sink = world.sink
    sink.fail_rcpt("451 4.3.0 Try again later", [addresses[0]], times=2)
    sink.fail_rcpt("550 5.1.1 No such user", [addresses[1]], times=None)
    sink.drop_connection("data", [addresses[2]], times=1)
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="s1",
            players=[PlayerSpec(f"p{i}", a, f"P{i}") for i, a in enumerate(addresses)],
            gm_address=addresses[4],
            deadline="48h",
            seed=1,
        )
    for _ in range(4):
        world.app.service.send()
        world.clock.advance(minutes=10)
    sink.clear_faults()
    with world.app.db.read() as session:
        rows = {r.recipient: r for r in session.scalars(sa_select(Outbox))}
    assert rows[addresses[0]].status == OutboxStatus.SENT and rows[addresses[0]].attempts == 3
    assert rows[addresses[1]].status == OutboxStatus.FAILED and "550" in rows[addresses[1]].last_error
    assert rows[addresses[2]].status == OutboxStatus.SENT and rows[addresses[2]].attempts == 2
    assert rows[addresses[3]].status == OutboxStatus.SENT and rows[addresses[3]].attempts == 1
    ids = sink.message_ids()
    assert len(ids) == len(set(ids)) == 5  # four players and the GM copy; the 550 never arrived


def test_a_uidvalidity_change_reprocesses_nothing_and_loses_nothing(world: MailWorld) -> None:
    """testing.md: UIDVALIDITY changes (folder recreated): nothing reprocessed, nothing lost."""
    from sqlalchemy import func as sa_func
    from sqlalchemy import select as sa_select

    from bot.mail_in.inbox import Folder
    from bot.models import InboundMessage, OrderSubmission

    addresses = {f"p{i}": world.player(f"uv{i}-{world.domain.split('.')[0]}") for i in range(5)}
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="u1",
            players=[PlayerSpec(s, a, s) for s, a in addresses.items()],
            gm_address=world.bot,
            deadline="48h",
            seed=2,
        )
    from bot.mail_in.auth import signed_address

    for seat, address in list(addresses.items())[:3]:
        to = signed_address(world.bot, "e2e-secret", "u1", seat)
        world.dovecot.deliver(world.bot, plain_mail(address, to, "orders", "USE 2", message_id=f"<uv-{seat}@c>"))

    def killed(keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        raise ConnectionError("killed")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(world.app.inbox, "mark_done", killed)
        with pytest.raises(ConnectionError):
            world.app.service.poll()
    world.dovecot.recreate_inbox(world.bot)
    for seat, address in list(addresses.items())[3:]:
        to = signed_address(world.bot, "e2e-secret", "u1", seat)
        world.dovecot.deliver(world.bot, plain_mail(address, to, "orders", "USE 3", message_id=f"<uv-{seat}@c>"))
    report = world.app.service.poll()
    assert report.duplicates == 3 and report.fetched == 5
    with world.app.db.read() as session:
        assert session.scalar(sa_select(sa_func.count()).select_from(OrderSubmission)) == 5
        assert session.scalar(sa_select(sa_func.count()).select_from(InboundMessage)) == 5
    counts = mailbox_counts(world.dovecot, world.bot)
    assert counts["INBOX"] == 0 and counts["Processed"] == 5
