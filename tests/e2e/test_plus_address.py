"""Plus-addresses end to end: the mail recipe delivers them to the bot's INBOX, and
`flagman doctor --probe-plus` tells a mail server that does from one that does not.

The "MTA" is `LmtpRelay` (tests/servers.py): SMTP in, the whole recipient address handed to
Dovecot over LMTP, as Postfix does with the recipe's transport map entry ``flagman@... lmtp:...``. The
session Dovecot delivers by the recipe itself (deploy/mail/dovecot-flagman.conf, included
word for word); the broken set-ups are Dovecots given other delivery settings.
"""

from __future__ import annotations

import io
import smtplib
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from bot.cli import main
from bot.games.turns import PlayerSpec, create_game
from bot.models import InboundStatus
from bot.ops.doctor import run_doctor
from bot.testing import body_of, reply_to
from tests.e2e.conftest import MailWorld
from tests.e2e.test_doctor_e2e import Site, problems
from tests.helpers import fresh_database
from tests.servers import DELIVERY_RECIPE, Dovecot, LmtpRelay, SmtpSink

pytestmark = pytest.mark.e2e


def folder_mails(dovecot: Dovecot, user: str, folder: str = "INBOX") -> list[EmailMessage]:
    client = dovecot.imap_client(user, folder=folder)
    try:
        uids = client.search(["ALL"])
        fetched = client.fetch(uids, [b"BODY.PEEK[]"]) if uids else {}
        found = [message_from_bytes(fetched[uid][b"BODY[]"], policy=policy.default) for uid in sorted(fetched)]
        return [m for m in found if isinstance(m, EmailMessage)]
    finally:
        client.logout()


@pytest.fixture(scope="module")
def relay(dovecot: Dovecot) -> Iterator[LmtpRelay]:
    """SMTP in front of the session Dovecot (the recipe's delivery settings)."""
    with LmtpRelay(dovecot) as server:
        yield server


def test_the_test_dovecot_delivers_by_the_shipped_recipe(dovecot: Dovecot) -> None:
    """The private Dovecot's configuration holds the recipe file as shipped, line for line."""
    config = dovecot.config_path.read_text()
    recipe = DELIVERY_RECIPE.read_text()
    assert recipe in config
    assert "recipient_delimiter = +" in recipe and "lmtp_save_to_detail_mailbox = no" in recipe


def test_a_reply_to_a_signed_plus_address_reaches_the_bot_and_is_confirmed(world: MailWorld, relay: LmtpRelay) -> None:
    """A player answers a turn sheet: the mail goes by SMTP to the Reply-To, the bot's signed
    plus-address, through the relay and LMTP into the bot's INBOX; the bot confirms the orders."""
    seats = ("kelly", "seb", "steve", "roger", "anna")
    addresses = {seat: world.player(f"{seat}-plus-{world.domain.split('.')[0]}") for seat in seats}
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=[PlayerSpec(s, a, s.title()) for s, a in addresses.items()],
            gm_address=world.player(f"gm-plus-{world.domain.split('.')[0]}"),
            deadline="48h",
            seed=3,
        )
    world.app.service.send()
    sheet = [m for m in folder_mails(world.dovecot, addresses["kelly"]) if m["Reply-To"] is not None][-1]
    signed = sheet["Reply-To"].addresses[0].addr_spec
    local, _, domain = world.bot.partition("@")
    assert signed.startswith(f"{local}+rc1.kelly.") and signed.endswith(f"@{domain}"), signed
    mail = reply_to(sheet, "USE 2", sender=addresses["kelly"]).replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    with smtplib.SMTP(relay.host, relay.port, timeout=10) as conn:  # as the player's mail client sends it
        refused = conn.sendmail(addresses["kelly"], [signed], mail)
    assert refused == {}
    assert relay.verdicts[-1] == ((signed,), "250 2.0.0 delivered over LMTP")
    report = world.app.service.poll()
    assert report.fetched == 1 and report.outcomes == {InboundStatus.APPLIED: 1}, report
    world.app.service.send()
    confirmation = folder_mails(world.dovecot, addresses["kelly"])[-1]
    assert "Orders received" in str(confirmation["Subject"]), confirmation["Subject"]
    assert "USE 2" in body_of(confirmation)


# -- the doctor's probe ------------------------------------------------------------------------


def probe_site(tmp_path: Path, dovecot: Dovecot, host: str, port: int) -> Site:
    return Site(tmp_path, dovecot, host, port, fresh_database("sqlite", tmp_path))


def probes_left(dovecot: Dovecot, user: str) -> list[str]:
    """Every folder of the user that still holds a probe."""
    client = dovecot.imap_client(user, folder=None)
    try:
        left = []
        for flags, _, name in client.list_folders():
            if b"\\Noselect" in flags:
                continue
            client.select_folder(name, readonly=True)
            if client.search(["HEADER", "Message-ID", "doctor.probe."]):
                left.append(name)
        return left
    finally:
        client.logout()


def test_the_probe_arrives_through_the_recipe_and_is_deleted(
    tmp_path: Path, dovecot: Dovecot, relay: LmtpRelay
) -> None:
    """The recipe's Dovecot: the probe to <bot>+doctor.probe.<random>@ arrives in the INBOX,
    the doctor says so and deletes it; all good."""
    site = probe_site(tmp_path, dovecot, relay.host, relay.port)
    code, out = site.doctor("--probe-plus")
    assert code == 0, out
    (line,) = [line for line in out.splitlines() if line.split()[1:2] == ["plus"]]
    local, _, domain = site.user.partition("@")
    assert line.startswith("ok") and f"a probe to {local}+doctor.probe." in line and "arrived in INBOX" in line, out
    assert "deleted" in line and "by hand" not in line
    (rcpts, verdict) = relay.verdicts[-1]
    assert rcpts[0].startswith(f"{local}+doctor.probe.") and rcpts[0].endswith(f"@{domain}")
    assert verdict.startswith("250")
    assert probes_left(dovecot, site.user) == []


def test_the_probe_is_only_run_when_asked(tmp_path: Path, dovecot: Dovecot, relay: LmtpRelay) -> None:
    """Without --probe-plus no probe is sent."""
    site = probe_site(tmp_path, dovecot, relay.host, relay.port)
    before = len(relay.verdicts)
    code, out = site.doctor()
    assert code == 0 and " plus " not in out and len(relay.verdicts) == before


@pytest.fixture(scope="module")
def no_delimiter() -> Iterator[tuple[Dovecot, LmtpRelay]]:
    """A Dovecot that takes flagman+x@ for a user of its own (no recipient_delimiter): it
    refuses the plus-address, as Postfix without recipient_delimiter does."""
    with Dovecot(delivery="recipient_delimiter =\n") as server, LmtpRelay(server) as mta:
        yield server, mta


def test_a_mail_server_that_refuses_plus_addresses_is_a_problem(
    tmp_path: Path, no_delimiter: tuple[Dovecot, LmtpRelay]
) -> None:
    """The relay refuses the probe's address: a problem quoting the server, fixed by
    recipient_delimiter = + (Postfix and Dovecot)."""
    server, mta = no_delimiter
    site = probe_site(tmp_path, server, mta.host, mta.port)
    code, out = site.doctor("--probe-plus")
    assert code == 1, out
    (found,) = problems(out)
    assert found.split()[1] == "plus" and "refused" in found and "550" in found, out
    fix = out.split("fix: ")[-1]
    assert "postconf -e 'recipient_delimiter = +'" in fix and "dovecot-flagman.conf" in fix
    # The bot's own plain address still works: the refusal is the plus-address's alone.
    with smtplib.SMTP(mta.host, mta.port, timeout=10) as conn:
        assert conn.sendmail(site.user, [site.user], b"Subject: plain\r\n\r\nhi\r\n") == {}


@pytest.fixture(scope="module")
def detail_folders() -> Iterator[tuple[Dovecot, LmtpRelay]]:
    """A Dovecot that files plus-addressed mail in a folder named after the tag."""
    delivery = "recipient_delimiter = +\nlmtp_save_to_detail_mailbox = yes\nlda_mailbox_autocreate = yes\n"
    with Dovecot(delivery=delivery) as server, LmtpRelay(server) as mta:
        yield server, mta


def test_a_probe_filed_in_another_folder_is_a_problem_and_is_deleted(
    tmp_path: Path, detail_folders: tuple[Dovecot, LmtpRelay]
) -> None:
    """Delivered, but into the folder 'doctor.probe.<random>': the bot would never see a
    reply; the fix names lmtp_save_to_detail_mailbox; the probe is deleted from there."""
    server, mta = detail_folders
    site = probe_site(tmp_path, server, mta.host, mta.port)
    code, out = site.doctor("--probe-plus")
    assert code == 1, out
    (found,) = problems(out)
    assert "delivered into the folder 'doctor.probe." in found and "not INBOX" in found, out
    assert "the probe was deleted" in found
    assert "lmtp_save_to_detail_mailbox = no" in out.split("fix: ")[-1]
    assert probes_left(server, site.user) == []


@pytest.fixture
def black_hole() -> Iterator[SmtpSink]:
    """A relay that accepts every mail and delivers none."""
    with SmtpSink() as sink:
        yield sink


def test_a_probe_that_never_arrives_is_a_problem(tmp_path: Path, dovecot: Dovecot, black_hole: SmtpSink) -> None:
    """Accepted by the relay, never delivered: after --probe-wait (IDLE on the INBOX all the
    while), a problem that says where to look. The relay did take the probe."""
    site = probe_site(tmp_path, dovecot, black_hole.host, black_hole.port)
    code, out = site.doctor("--probe-plus", probe_wait=1.0)
    assert code == 1, out
    (found,) = problems(out)
    assert "accepted by the relay but did not arrive in INBOX" in found and "within 1 s" in found, out
    assert "journalctl -u postfix -u dovecot -g doctor.probe." in out
    (mail,) = black_hole.messages
    assert mail.rcpt_tos[0].startswith(site.user.partition("@")[0] + "+doctor.probe.")


def test_the_probe_needs_imap_and_smtp(tmp_path: Path) -> None:
    """On the embedded default (Maildir in and out) there is no mail server to probe: a
    warning saying so, not a problem."""
    from tests.helpers import init_site

    config = init_site(tmp_path / "site")
    out = io.StringIO()
    assert run_doctor(config, env={}, out=out, probe_plus=True) == 0
    assert "plus-address probe not run" in out.getvalue()


def test_the_cli_runs_the_probe(
    tmp_path: Path,
    dovecot: Dovecot,
    relay: LmtpRelay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`flagman --config X doctor --probe-plus --probe-wait 5`: the probe through the CLI."""
    site = probe_site(tmp_path, dovecot, relay.host, relay.port)
    site.write()
    for key, value in site.env.items():
        monkeypatch.setenv(key, value)
    assert main(["--config", str(site.config), "doctor", "--probe-plus", "--probe-wait", "5"]) == 0
    assert "arrived in INBOX" in capsys.readouterr().out
