"""The parse worker (bot.mail_in.parse_worker; work per batch): the batch read ahead is
parsed in a worker process, on another core, while the batch in hand is handled.

What must hold: the worker changes where a mail is parsed, never what comes out; a small
batch never pays for the trip; a worker that dies costs no mail (the batch is parsed in the
service's process, and so is every later one); closing the app stops the worker; and the
service handles a whole inbox through it exactly as without it."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.db import Database
from bot.mail_in.inbox import Folder, RawMail
from bot.mail_in.parse_worker import (
    MIN_WORKER_BATCH,
    InlineParser,
    ParseOptions,
    WorkerParser,
    parse_batch,
    unparsed,
)
from bot.mail_out.render import Renderer
from bot.models import InboundMessage, Outbox
from bot.settings import DatabaseSettings, InboxSettings
from bot.testing import FakeClock, FakeInbox, FakeMailer, TestApp, plain_mail
from tests.bot.conftest import BOT, GM, RACERS, make_settings
from tests.helpers import fresh_database, wait_until

REPO = Path(__file__).resolve().parents[3]

OPTIONS = ParseOptions(frozenset({BOT}), "X-Flagman-Loop", 2000)


def mails(count: int) -> list[RawMail]:
    """Mails of several shapes: plain orders, a quoted reply, an HTML-only one, an auto-reply,
    one of our own, one over the size cap (not fetched), Latin-1 text."""
    out: list[RawMail] = []
    for n in range(count):
        shape = n % 6
        if shape == 5:
            out.append(RawMail(f"k{n}", None, 20_000_000, headers=b"From: a@players.test\r\n\r\n"))
            continue
        if shape == 4:
            data = (
                f"From: Zoë <z{n}@players.test>\r\nTo: {BOT}\r\nSubject: =?utf-8?q?caf=C3=A9?=\r\n"
                f"Message-ID: <m{n}@players.test>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                "<p>USE 3</p><blockquote>USE 5</blockquote>"
            ).encode()
        else:
            extra = {1: {"Auto-Submitted": "auto-replied"}, 3: {"X-Flagman-Loop": "1"}}.get(shape, {})
            sender = BOT if shape == 3 else f"p{n}@players.test"
            body = "USE 2\n\nOn Monday you wrote:\n> USE 5\n" if shape == 2 else f"USE {n % 7}\nécrit à la main"
            data = plain_mail(sender, BOT, f"orders {n}", body, message_id=f"<m{n}@players.test>", headers=extra)
        out.append(RawMail(f"k{n}", data, len(data)))
    return out


@pytest.fixture
def worker() -> Iterator[WorkerParser]:
    parser = WorkerParser()
    yield parser
    parser.close()


def test_a_batch_parsed_in_the_worker_is_what_parsing_it_here_gives(worker: WorkerParser) -> None:
    batch = mails(3 * MIN_WORKER_BATCH)
    here = parse_batch(unparsed(batch), OPTIONS)
    assert worker.parse(batch, OPTIONS) == here
    assert worker.worker_pids() and os.getpid() not in worker.worker_pids(), "parsed in a worker process"
    assert here[5] is None and here[1] is not None and here[1].ignore is not None  # the shapes are there
    assert InlineParser().parse(batch, OPTIONS) == here


def test_a_small_batch_is_parsed_here_without_starting_a_worker(worker: WorkerParser) -> None:
    batch = mails(MIN_WORKER_BATCH - 1)
    assert worker.parse(batch, OPTIONS) == parse_batch(unparsed(batch), OPTIONS)
    assert worker.worker_pids() == ()


def test_a_worker_started_ahead_parses_the_first_batch(worker: WorkerParser) -> None:
    """`WorkerParser.start` (the bench starts it before its clock, as a service that has read a
    batch has it): the worker is ready before any batch, and the first batch is parsed by that
    very process, as parsing it here would."""
    assert worker.worker_pids() == ()
    assert worker.start(OPTIONS)
    (pid,) = worker.worker_pids()
    batch = mails(MIN_WORKER_BATCH)
    assert worker.parse(batch, OPTIONS) == parse_batch(unparsed(batch), OPTIONS)
    assert worker.worker_pids() == (pid,)


def test_a_worker_that_dies_loses_no_mail_and_is_not_used_again(
    worker: WorkerParser, caplog: pytest.LogCaptureFixture
) -> None:
    batch = mails(2 * MIN_WORKER_BATCH)
    expected = parse_batch(unparsed(batch), OPTIONS)
    assert worker.parse(batch, OPTIONS) == expected
    for pid in worker.worker_pids():
        os.kill(pid, signal.SIGKILL)
    with caplog.at_level(logging.WARNING, logger="flagman.inbound"):
        assert worker.parse(batch, OPTIONS) == expected
        assert worker.parse(batch, OPTIONS) == expected
    warnings = [r.getMessage() for r in caplog.records if "parse worker failed" in r.getMessage()]
    assert len(warnings) == 1, caplog.text
    assert worker.worker_pids() == ()


def test_closing_the_parser_stops_its_worker() -> None:
    parser = WorkerParser()
    parser.parse(mails(MIN_WORKER_BATCH), OPTIONS)
    pids = parser.worker_pids()
    assert pids
    parser.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert parser.parse(mails(MIN_WORKER_BATCH), OPTIONS) == parse_batch(unparsed(mails(MIN_WORKER_BATCH)), OPTIONS)
    assert parser.worker_pids() == ()


def _handled(tmp_path: Path, parser_name: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]], int]:
    """A game, 60 order and command mails handled by the service in batches of 10 with
    `parser_name`'s parser: each inbound row, each outbox row (recipient, subject), and how
    many mails went to Processed."""
    from bot.games.turns import create_game

    root = tmp_path / parser_name
    root.mkdir()
    settings = make_settings(root)
    settings = replace(
        settings,
        inbox=replace(settings.inbox, batch_size=10),
        database=DatabaseSettings(url=fresh_database("sqlite", root)),
    )
    parser = WorkerParser() if parser_name == "worker" else InlineParser()
    inbox = FakeInbox(max_size=settings.limits.max_mail_bytes)
    app = TestApp(
        settings=settings,
        db=Database(settings.database_url),
        clock=FakeClock(),
        renderer=Renderer(),
        inbox=inbox,
        mailer=FakeMailer(),
        parser=parser,
    )
    with app:
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind="racecraft",
                name="rc1",
                players=RACERS,
                gm_address=GM,
                deadline="48h",
                timezone="Europe/London",
                seed=7,
            )
        for n in range(60):
            racer = RACERS[n % len(RACERS)]
            text = ["HELP", "STATUS rc1", f"USE {n % 5}", "USE 99", "WHAT"][n % 5]
            inbox.deliver(plain_mail(racer.address, BOT, f"mail {n}", text, message_id=f"<h{n}@players.test>"))
        report = app.service.poll()
        assert report.fetched == 60
        if parser_name == "worker":
            assert isinstance(parser, WorkerParser) and parser.worker_pids(), "the worker parsed the batches read ahead"
        with app.db.read() as session:
            inbound = [
                (m.message_id, m.status, m.detail)
                for m in session.scalars(select(InboundMessage).order_by(InboundMessage.id))
            ]
            outbox = [(o.recipient, o.subject) for o in session.scalars(select(Outbox).order_by(Outbox.id))]
        return inbound, outbox, len(inbox.folders[Folder.PROCESSED])


def test_the_service_handles_an_inbox_through_the_worker_as_without_it(tmp_path: Path) -> None:
    with_worker = _handled(tmp_path, "worker")
    inline = _handled(tmp_path, "inline")
    assert with_worker == inline
    assert with_worker[2] == 60 and len(with_worker[0]) == 60


def test_parse_workers_is_a_setting_with_a_range() -> None:
    from bot.settings import SettingsError, validate

    assert InboxSettings().parse_workers == 1
    settings = make_settings(Path("/tmp"))
    validate(replace(settings, inbox=replace(settings.inbox, parse_workers=0)))
    with pytest.raises(SettingsError, match="parse_workers"):
        validate(replace(settings, inbox=replace(settings.inbox, parse_workers=-1)))


OWNER = """
import sys, time
if __name__ == "__main__":
    from bot.mail_in.parse_worker import WorkerParser
    from tests.bot.mail_in.test_parse_worker import OPTIONS, mails
    parser = WorkerParser()
    parser.parse(mails(10), OPTIONS)
    print(" ".join(map(str, parser.worker_pids())), flush=True)
    time.sleep(600)
"""


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended, whoever reaps it


def test_the_worker_ends_when_the_service_is_killed(tmp_path: Path) -> None:
    """A service killed with SIGKILL (no `close`) leaves no parse worker behind: the worker
    sees its owner gone and ends (it would otherwise wait forever for the next batch)."""
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    owner = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert owner.stdout is not None
        pids = [int(pid) for pid in owner.stdout.readline().split()]
        assert pids and all(_running(pid) for pid in pids)
    finally:
        owner.kill()
        owner.wait()
    # the worker checks every second that its service lives; 120 s bounds a busy machine's delay
    wait_until(lambda: not any(_running(pid) for pid in pids), "the parse worker outlived the service", 120)
