"""Mail that lands, deadlines in the calendar, orders in one tap, by real mail:
through a real SMTP relay into a real Dovecot, every mail read over IMAP as a mail client
reads it, every answer delivered over LMTP as an MTA delivers it, and the DKIM keys looked up
in a real DNS server on 127.0.0.1.

* every mail the bot sends is DKIM-signed and verifies at the receiving end (after the relay
  and the delivery added their headers), against the key record `flagman doctor` asks for;
* a turn sheet's calendar invitation, read from the mailbox, is the turn's deadline;
* a reply whose body is empty and whose subject holds the order (a one-tap link) is applied
  and confirmed;
* PING is answered at once, at the registered address;
* a reminder's List-Unsubscribe, sent as a mail client sends it, stops that seat's reminders.
"""

from __future__ import annotations

import itertools
import re
import urllib.parse
from collections.abc import Callable, Iterator
from datetime import UTC, timedelta
from email.message import EmailMessage
from pathlib import Path

import dkim as dkimpy
import dns.resolver
import icalendar
import nacl.encoding
import nacl.signing
import pytest

from bot import dkim
from bot.app import build_app
from bot.games.turns import PlayerSpec, create_game
from bot.mail_out.one_tap import mailto_link
from bot.testing import FakeClock, plain_mail, words_of
from tests.e2e.conftest import MailWorld, world_settings
from tests.e2e.test_game_by_mail import cycle, read_inbox
from tests.helpers import fresh_database
from tests.servers import DnsServer, Dovecot, SmtpSink

pytestmark = [pytest.mark.e2e]
SEATS = ("kelly", "seb", "steve", "roger", "anna")
_serial = itertools.count(1)


@pytest.fixture(scope="module")
def dns_server() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def signed_world(tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, dns_server: DnsServer) -> Iterator[MailWorld]:
    """The bot on the real servers, signing with an ed25519 key whose record is in the DNS server."""
    domain = f"lands{next(_serial)}.test"
    bot = dovecot.add_user(f"flagman@{domain}", "bot-password")
    seed = nacl.signing.SigningKey.generate().encode(encoder=nacl.encoding.Base64Encoder).decode("ascii")
    dns_server.set_txt(f"fm1._domainkey.{domain}", dkim.load_key("fm1", seed).record())
    settings = world_settings(
        tmp_path,
        bot,
        fresh_database("sqlite", tmp_path),
        dovecot,
        smtp_sink,
        sections={
            "dkim": {"selectors": ["fm1"]},
            "dns": {"nameservers": [dns_server.host], "port": dns_server.port, "timeout": 5.0},
        },
        env={"FLAGMAN_DKIM_KEY_FM1": seed},
    )
    smtp_sink.reset()
    app = build_app(settings, clock=FakeClock())
    try:
        yield MailWorld(app, dovecot, smtp_sink, bot, domain)
    finally:
        app.close()


def start_game(world: MailWorld) -> dict[str, str]:
    tag = world.domain.split(".")[0]
    addresses = {seat: world.player(f"{seat}-{tag}") for seat in SEATS}
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=[
                PlayerSpec(s, a, s.title(), "America/Chicago" if s == "steve" else "Europe/London")
                for s, a in addresses.items()
            ],
            gm_address=world.player(f"gm-{tag}"),
            deadline="48h",
            timezone="Europe/London",
            seed=11,
        )
    world.app.service.send()
    return addresses


def dnsfunc(server: DnsServer) -> Callable[[bytes | str, float], bytes | None]:  # dkimpy's lookup signature
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port, resolver.lifetime = [server.host], server.port, 5.0

    def lookup(name: bytes | str, timeout: float = 5) -> bytes | None:
        text = name.decode() if isinstance(name, bytes) else name
        try:
            return b"".join(next(iter(resolver.resolve(text.rstrip("."), "TXT"))).strings)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return None

    return lookup


def raw_inbox(world: MailWorld, address: str) -> list[bytes]:
    client = world.dovecot.imap_client(address)
    try:
        uids = client.search(["ALL"])
        fetched = client.fetch(uids, [b"BODY.PEEK[]"]) if uids else {}
        return [fetched[uid][b"BODY[]"] for uid in sorted(fetched)]
    finally:
        client.logout()


def sheet(world: MailWorld, address: str) -> EmailMessage:
    return [m for m in read_inbox(world, address) if m["Reply-To"] is not None and "Turn" in str(m["Subject"])][-1]


def test_every_mail_is_signed_and_verifies_where_it_lands(signed_world: MailWorld, dns_server: DnsServer) -> None:
    """DKIM: the mail in each player's mailbox, relayed and delivered, verifies
    (dkimpy, the key from DNS); the signature's d= is the From's domain."""
    addresses = start_game(signed_world)
    for address in addresses.values():
        [data] = raw_inbox(signed_world, address)
        assert dkimpy.verify(data, dnsfunc=dnsfunc(dns_server)), address
        assert f"d={signed_world.domain};".encode() in data.replace(b"\r\n ", b" ")


def test_a_subject_only_reply_is_applied_and_confirmed(signed_world: MailWorld) -> None:
    """The one-tap mail -- an empty body, the order in the subject of a reply
    to the turn sheet's signed reply address -- is put on file and confirmed."""
    addresses = start_game(signed_world)
    kelly = addresses["kelly"]
    turn_sheet = sheet(signed_world, kelly)
    reply_to = turn_sheet["Reply-To"].addresses[0].addr_spec
    link = mailto_link(reply_to, "USE 4")
    url = urllib.parse.urlsplit(link)
    subject = urllib.parse.parse_qs(url.query)["subject"][0]
    signed_world.dovecot.deliver(
        signed_world.bot,
        plain_mail(kelly, urllib.parse.unquote(url.path), "Re: [rc1] " + subject, "", message_id="<tap@phone.example>"),
    )
    cycle(signed_world)
    confirmation = read_inbox(signed_world, kelly)[-1]
    assert "[ERROR]" not in str(confirmation["Subject"]) and "USE 4" in words_of(confirmation)


def test_the_turn_sheets_calendar_invitation_is_the_deadline(signed_world: MailWorld) -> None:
    """As a calendar client reads the mail it got: one REQUEST event at the
    turn's deadline, the recipient's zone named."""
    addresses = start_game(signed_world)
    msg = sheet(signed_world, addresses["steve"])
    [part] = [p for p in msg.walk() if p.get_content_type() == "text/calendar"]
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    cal = icalendar.Calendar.from_ical(payload)
    event = next(iter(cal.walk("VEVENT")))
    assert str(cal["METHOD"]) == "REQUEST"
    with signed_world.app.db.read() as session:
        from sqlalchemy import select

        from bot.models import Turn

        deadline = session.scalars(select(Turn.deadline)).one()
    assert deadline is not None
    assert event.decoded("DTSTART") == deadline.replace(tzinfo=UTC)
    assert "America/Chicago" in str(event["DESCRIPTION"]) and "CST" in str(event["DESCRIPTION"])


def test_ping_is_answered_at_the_registered_address(signed_world: MailWorld) -> None:
    """PING through the signed reply address from another account: the answer
    goes to the registered address and says how the mail was accepted."""
    addresses = start_game(signed_world)
    seb = addresses["seb"]
    other = signed_world.player(f"seb-phone-{signed_world.domain.split('.')[0]}")
    reply_to = sheet(signed_world, seb)["Reply-To"].addresses[0].addr_spec
    signed_world.dovecot.deliver(
        signed_world.bot, plain_mail(other, reply_to, "test", "PING", message_id="<ping@phone.example>")
    )
    cycle(signed_world)
    answer = read_inbox(signed_world, seb)[-1]
    assert "PING: your mail was accepted" in str(answer["Subject"])
    assert "seb in rc1" in words_of(answer) and "signed reply address" in words_of(answer)
    assert read_inbox(signed_world, other) == []


def test_a_reminders_list_unsubscribe_stops_them(signed_world: MailWorld) -> None:
    """The reminder's List-Unsubscribe, opened and sent as a mail client does:
    confirmed, and no reminder at the next mark for that seat."""
    addresses = start_game(signed_world)
    clock = signed_world.app.clock
    assert isinstance(clock, FakeClock)
    clock.advance(hours=24)
    cycle(signed_world)
    anna = addresses["anna"]
    reminder = [m for m in read_inbox(signed_world, anna) if "Reminder: orders" in str(m["Subject"])][-1]
    match = re.fullmatch(r"<(mailto:[^>]+)>", str(reminder["List-Unsubscribe"]))
    assert match is not None
    url = urllib.parse.urlsplit(match.group(1))
    subject = urllib.parse.parse_qs(url.query)["subject"][0]
    assert urllib.parse.unquote(url.path) == signed_world.bot, "to the plain address: nothing signed in a header"
    signed_world.dovecot.deliver(
        signed_world.bot, plain_mail(anna, signed_world.bot, subject, "", message_id="<unsub@anna.example>")
    )
    cycle(signed_world)
    assert "Reminders off for rc1" in str(read_inbox(signed_world, anna)[-1]["Subject"])
    clock.advance(timedelta(hours=22))  # the 2h mark
    cycle(signed_world)

    def reminders(address: str) -> int:
        return len([m for m in read_inbox(signed_world, address) if "Reminder: orders" in str(m["Subject"])])

    assert reminders(anna) == 1 and reminders(addresses["kelly"]) == 2


def test_flagman_doctor_checks_the_sending_domain_in_dns(
    tmp_path: Path, dovecot: Dovecot, smtp_sink: SmtpSink, dns_server: DnsServer
) -> None:
    """The whole doctor on the real servers: a missing DKIM key record is a
    problem (exit 1) whose fix is the record; published, with SPF and DMARC, all good."""
    import io

    from bot.ops.doctor import run_doctor

    domain = f"doc{next(_serial)}.test"
    bot = dovecot.add_user(f"flagman@{domain}", "pw")
    seed = nacl.signing.SigningKey.generate().encode(encoder=nacl.encoding.Base64Encoder).decode("ascii")
    config = tmp_path / "flagman.toml"
    config.write_text(f"""
[bot]
address = "{bot}"
[database]
url = "{fresh_database("sqlite", tmp_path)}"
[inbox]
kind = "imap"
host = "{dovecot.host}"
port = {dovecot.imap_port}
security = "none"
username = "{bot}"
[outbox]
kind = "smtp"
host = "{smtp_sink.host}"
port = {smtp_sink.port}
security = "none"
[dkim]
selectors = ["fm1"]
[dns]
nameservers = ["{dns_server.host}"]
port = {dns_server.port}
timeout = 5.0
""")
    env = {"FLAGMAN_SECRET": "a-long-enough-e2e-secret", "FLAGMAN_IMAP_PASSWORD": "pw", "FLAGMAN_DKIM_KEY_FM1": seed}

    def doctor() -> tuple[int, str]:
        out = io.StringIO()
        return run_doctor(config, env=env, out=out), out.getvalue()

    code, out = doctor()
    assert code == 1, out
    record = dkim.load_key("fm1", seed).record()
    assert f'fix: publish fm1._domainkey.{domain}. IN TXT "{record}"' in out
    assert f"publish _dmarc.{domain}. IN TXT" in out and f'publish {domain}. IN TXT "v=spf1' in out
    dns_server.set_txt(f"fm1._domainkey.{domain}", record)
    dns_server.set_txt(domain, "v=spf1 mx ~all")
    dns_server.set_txt(f"_dmarc.{domain}", f"v=DMARC1; p=none; rua=mailto:postmaster@{domain}")
    code, out = doctor()
    assert code == 0 and "all good" in out, out
    assert f"fm1._domainkey.{domain} publishes the ed25519 key the bot signs with" in out
    assert not [line for line in out.splitlines() if line.startswith(("warning", "PROBLEM"))], out
