"""The poll and the prune of the Processed folder take one lock, the mailbox lock
(`bot.host.instance.holding_mailbox`): a prune that comes while a poll pass is between its
commit and the move of its mail (the crash point AFTER_COMMIT) waits for the pass to end, and
then prunes the folder as the pass left it. The meeting is made at that named point, and the
prune's wait is seen through the lock's own `on_wait`, never by timing."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import App, build_app
from bot.faults import CrashPoint
from bot.host.instance import holding_mailbox, mailbox_lock_path
from bot.mail_in.inbox import deliver_to_maildir
from bot.ops.retention import Pruned, prune
from bot.settings import DatabaseSettings
from bot.testing import FakeClock, FakeMailer, plain_mail
from tests.bot.conftest import BOT, make_settings

DAY_NS = 86400 * 10**9
GUARD = 120.0  # seconds: only ever reached when the test fails (the prune never waited, or never ended)


class PruneAtCommit:
    """Faults that, the first time the poll reaches AFTER_COMMIT (its batch committed, the mail
    not yet moved to Processed), start a prune in a thread of its own and hold the poll there
    until the prune says it waits for the mailbox lock."""

    def __init__(self) -> None:
        self.app: App | None = None
        self.waiting = threading.Event()
        self.pruned: list[Pruned] = []
        self.thread: threading.Thread | None = None
        self.processed_at_the_meeting: list[str] = []

    def reached(self, point: CrashPoint) -> None:
        if point is not CrashPoint.AFTER_COMMIT or self.thread is not None:
            return
        app = self.app
        assert app is not None

        def run_prune() -> None:
            self.pruned.append(prune(app.db, app.settings, datetime.now(UTC), on_wait=self.waiting.set))

        self.thread = threading.Thread(target=run_prune, name="prune")
        self.thread.start()
        assert self.waiting.wait(GUARD), "the prune did not wait for the poll's mailbox lock"
        # The prune waits: it has deleted nothing yet.
        self.processed_at_the_meeting = sorted(p.name for p in processed(app))


def processed(app: App) -> list[Path]:
    folder = app.settings.resolve_path(app.settings.inbox.path) / ".Processed"
    return [p for sub in ("new", "cur") for p in (folder / sub).iterdir()]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_prune_that_meets_a_poll_waits_for_its_pass_and_prunes_what_it_moved(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    """ "the IMAP Processed folder grows forever" is pruned; the prune and the poll
    work on the same mailbox, so the prune takes the lock the poll takes. A mail received 40
    days ago waits in the inbox (the service was down), one of 40 days ago is in Processed: the
    poll commits the first, the prune comes and waits; once the pass has moved the mail, the
    prune deletes both (processed_mail_days = 30), and the poll's answer is queued."""
    from tests.helpers import fresh_database

    postgres = request.getfixturevalue("postgres") if kind == "postgresql" else None
    settings = replace(make_settings(tmp_path), database=DatabaseSettings(url=fresh_database(kind, tmp_path, postgres)))
    faults = PruneAtCommit()
    app = build_app(settings, clock=FakeClock(datetime.now(UTC)), mailer=FakeMailer(), faults=faults)
    faults.app = app
    try:
        inbox = settings.resolve_path(settings.inbox.path)
        old = time.time_ns() - 40 * DAY_NS
        deliver_to_maildir(inbox / ".Processed", plain_mail("a@players.test", BOT, "old", "HELP"), clock_ns=old)
        deliver_to_maildir(
            inbox, plain_mail("b@players.test", BOT, "late", "HELP", message_id="<late@players.test>"), clock_ns=old
        )
        report = app.service.poll()
        assert faults.thread is not None
        faults.thread.join(GUARD)
        assert not faults.thread.is_alive(), "the prune never ended"
        assert report.fetched == 1
        assert len(faults.processed_at_the_meeting) == 1, "the prune deleted nothing while the poll held the lock"
        (pruned,) = faults.pruned
        assert pruned.processed_mails == 2, pruned
        assert processed(app) == [] and list((inbox / "new").iterdir()) == []
    finally:
        app.close()


def test_the_lock_file_opens_for_whoever_made_it(tmp_path: Path) -> None:
    """On SQLite the lock is a flock on `<database>.mailbox.lock`, opened for reading only: a
    file another user made (root, by `flagman prune` by hand), mode 0644, does not stop the
    service's user from taking it (a process without root's override of file modes here)."""
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT, as_unprivileged

    settings = make_settings(tmp_path)
    path = mailbox_lock_path(settings.database_url)
    assert path == tmp_path / "flagman.sqlite.mailbox.lock"
    path.write_bytes(b"")
    os.chown(path, 65534, 65534)
    path.chmod(0o644)
    code = (
        "import sys; from bot.host.instance import holding_mailbox\n"
        "with holding_mailbox(sys.argv[1], 'maildir:/box', on_wait=lambda: print('waited')):\n"
        "    print('held')\n"
    )
    argv = as_unprivileged([sys.executable, "-c", code, settings.database_url])
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "held\n", (done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///{tmp}/flagman.sqlite"])
def test_one_holder_at_a_time_and_the_next_is_told_it_waits(tmp_path: Path, url: str) -> None:
    """Two holders of one mailbox (two threads here; two processes alike on a file): the second
    is told it waits (`on_wait`) and gets the lock only once the first lets go."""
    url = url.format(tmp=tmp_path)
    first_in, second_waits, second_in = threading.Event(), threading.Event(), threading.Event()
    release = threading.Event()

    def first() -> None:
        with holding_mailbox(url, "maildir:/box"):
            first_in.set()
            release.wait(GUARD)

    def second() -> None:
        with holding_mailbox(url, "maildir:/box", on_wait=second_waits.set):
            second_in.set()

    one = threading.Thread(target=first)
    one.start()
    assert first_in.wait(GUARD)
    two = threading.Thread(target=second)
    two.start()
    assert second_waits.wait(GUARD), "the second holder was not told it waits"
    assert not second_in.is_set()
    release.set()
    one.join(GUARD)
    two.join(GUARD)
    assert second_in.is_set()
