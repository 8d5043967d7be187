"""A restore on a fresh machine from what deploy/OPERATING.md, section 8, says to keep off the
machine: the daily backup of the database, the site secret and the previous
secrets, the DKIM key and flagman.toml -- and the game goes on there.

Machine A is a directory laid out as the unit lays out a host (etc/: flagman.toml and the
credentials directory; var/: the state directory), running the real `flagman run` with a game in
progress, its site secret rotated since the turn sheets went out and DKIM on. The backup is
taken while it runs (`flagman backup --keep 14`, what the timer runs). Machine B is a new
directory that receives only the files of the list; it restores, and the players' replies to
the turn sheets machine A mailed are taken, the turn resolves, and the results go out signed
with the same DKIM key.
"""

from __future__ import annotations

import email
import email.policy
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import dkim as dkimpy
import nacl.encoding
import nacl.signing
import pytest

from bot.db import Database
from bot.dkim import load_key
from bot.mail_in.inbox import deliver_to_maildir
from bot.ops.backup import kept_backups, replay_game
from bot.testing import reply_to
from tests.e2e.test_service_signals import NotifySocket, Service
from tests.helpers import Done, flagman_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = ("kelly", "seb", "steve", "roger", "anna")
# What OPERATING.md, section 8, lists under "Keep it off the machine" (beside the backups):
# the paths on the machine, and where they are in this test's layout.
KEPT = {
    "/etc/flagman/flagman.toml": "etc/flagman.toml",
    "/etc/flagman/credentials/site-secret": "etc/credentials/site-secret",
    "/etc/flagman/credentials/previous-secrets": "etc/credentials/previous-secrets",
    "/etc/flagman/credentials/dkim-<selector>": "etc/credentials/dkim-fm2026",
}
CONFIG = """\
[bot]
address = "flagman@race.test"
[database]
url = "sqlite:///../var/flagman.sqlite"
[inbox]
kind = "maildir"
path = "../var/mail/inbox"
[outbox]
kind = "maildir"
path = "../var/mail/outbox"
[schedule]
poll_seconds = 0.3
tick_seconds = 0.3
send_seconds = 0.3
[dkim]
selectors = ["fm2026"]
"""


@pytest.fixture
def notify(tmp_path: Path) -> Iterator[NotifySocket]:
    sock = NotifySocket(tmp_path / "notify.sock")
    try:
        yield sock
    finally:
        sock.close()


def flagman(machine: Path, *args: str, process: bool = False) -> Any:
    """A flagman command on `machine` with the unit's configuration and credentials: in the
    test's process (`tests.helpers.flagman_command`), or as a process of its own (`process`,
    as the timer runs it beside the running service)."""
    config = machine / "etc" / "flagman.toml"
    credentials = {"CREDENTIALS_DIRECTORY": str(machine / "etc" / "credentials")}
    if not process:
        done: Done | subprocess.CompletedProcess[str] = flagman_command(config, *args, env=credentials)
    else:
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "--config", str(config), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", **credentials},
            cwd=ROOT,
        )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def mails_to(machine: Path, address: str) -> list[EmailMessage]:
    """What `machine` has sent to `address` (its Maildir outbox), oldest first."""
    box = machine / "var" / "mail" / "outbox" / address
    files = sorted((p for p in box.rglob("*") if p.is_file()), key=lambda p: (p.stat().st_mtime_ns, p.name))
    mails = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in files]
    return [m for m in mails if isinstance(m, EmailMessage)]


def answer(sheet_from: Path, to: Path, seat: str, orders: str) -> None:
    """`seat` replies to the newest rc1 mail `sheet_from` sent them; the reply lands in `to`'s inbox."""
    address = f"{seat}@players.test"
    (sheet,) = [m for m in mails_to(sheet_from, address) if "+rc1." in str(m["Reply-To"] or "")][-1:]
    deliver_to_maildir(to / "var" / "mail" / "inbox", reply_to(sheet, orders, sender=address))


def test_a_fresh_machine_restored_from_the_kept_files_plays_on(
    tmp_path: Path, notify: NotifySocket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Back up a running instance, copy off the listed files, restore them on a new machine: the
    replies to turn sheets mailed by the old machine (signed with the secret before the
    rotation) are applied, the orders in before the backup count, the turn resolves, the
    results are signed with the same DKIM key, and the next turn is played."""
    guide = (ROOT / "deploy" / "OPERATING.md").read_text()
    section = guide.split("## 8. Backup and restore", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{path}`" in section for path in KEPT), "the guide lists what this test keeps"

    a = tmp_path / "machine-a"
    credentials = a / "etc" / "credentials"
    credentials.mkdir(parents=True)
    (a / "var").mkdir()
    (a / "etc" / "flagman.toml").write_text(CONFIG)
    old_secret, new_secret = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    key = nacl.signing.SigningKey.generate().encode(encoder=nacl.encoding.Base64Encoder).decode("ascii")
    (credentials / "site-secret").write_text(old_secret + "\n")
    (credentials / "dkim-fm2026").write_text(key + "\n")
    flagman(a, "migrate")
    players = [arg for seat in PLAYERS for arg in ("--player", f"{seat}={seat}@players.test")]
    flagman(a, "game", "new", "racecraft", "--name", "rc1", "--gm", "gm@race.test", "--deadline", "48h", *players)
    flagman(a, "send")  # the turn sheets, their reply addresses signed with the old secret
    # The site secret is rotated (OPERATING.md, section 4): the old one becomes a previous secret.
    (credentials / "previous-secrets").write_text(old_secret + "\n")
    (credentials / "site-secret").write_text(new_secret + "\n")

    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(credentials))
    service = Service(a / "etc" / "flagman.toml", notify)
    try:
        notify.wait_for("READY=1")
        for seat in ("kelly", "seb"):
            answer(a, a, seat, "USE 1")
            service.wait_log(f"applied game=rc1 seat={seat}")
        flagman(a, "backup", "--keep", "14", str(a / "var" / "backups"), process=True)  # the timer's run, while it runs
    finally:
        code = service.stop()
    assert code == 0, service.log
    (backup,) = kept_backups(a / "var" / "backups")

    # Off the machine: the backup and the files of the list; nothing else of machine A.
    b = tmp_path / "machine-b"
    for place in KEPT.values():
        (b / place).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(a / place, b / place)
    (b / "var").mkdir()
    shutil.copy2(backup, b / "var" / "restore.sqlite")
    # OPERATING.md, section 8: migrate (makes the state directory), restore, start (migrate again).
    flagman(b, "migrate")
    flagman(b, "restore", str(b / "var" / "restore.sqlite"))
    flagman(b, "migrate")

    for seat in ("steve", "roger", "anna"):  # replying to machine A's turn sheets
        answer(a, b, seat, "USE 1")
    polled = flagman(b, "poll").stdout
    assert "applied 3" in polled, polled
    flagman(b, "gm", "process", "rc1", "--as", "operator")  # the GM resolves the turn now
    flagman(b, "send")
    results = [m for m in mails_to(b, "kelly@players.test") if "+rc1." in str(m["Reply-To"] or "")]
    assert results, "machine B mailed the results"
    public = load_key("fm2026", key).public

    def dns(name: bytes, timeout: int = 5) -> bytes:
        assert name == b"fm2026._domainkey.race.test.", name
        return f"v=DKIM1; k=ed25519; p={public}".encode()

    assert dkimpy.verify(results[-1].as_bytes(), dnsfunc=dns), "signed with the restored key"

    # The next turn, on machine B alone: its sheets are signed with the new secret.
    for seat in PLAYERS:
        answer(b, b, seat, "USE 2")
    assert "applied 5" in flagman(b, "poll").stdout  # the orders that complete the turn resolve it
    db = Database(f"sqlite:///{b / 'var' / 'flagman.sqlite'}")
    try:
        with db.read() as session:
            replayed = replay_game(session, "rc1")
    finally:
        db.dispose()
    numbers = [r.number for r in replayed]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 2 and all(r.same for r in replayed)
