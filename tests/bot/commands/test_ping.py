"""PING: an immediate answer, to the registered address only, saying that
the path works and as what the mail was accepted -- the signed reply address, the password,
DMARC or aligned DKIM as the receiving server's Authentication-Results say -- or why not; a
stranger gets what strangers get."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.games.turns import create_game
from bot.mail_in.auth import signed_address
from bot.settings import AuthSettings
from bot.testing import TestApp, body_of, plain_mail, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, GM, RACERS, cycle, mails
from tests.helpers import fake_inbox

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
AUTHSERV = "mx.example.org"


@pytest.fixture
def dmarc_site(tmp_path: Path) -> Iterator[TestApp]:
    """rc1 on a site that accepts the password and a DMARC pass from mx.example.org."""
    app = gm_helpers.new_app(tmp_path, auth=AuthSettings(accept=("password", "dmarc"), authserv_id=AUTHSERV))
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
    app.service.send()
    yield app
    app.close()


def ping(app: TestApp, sender: str, to: str = BOT, text: str = "PING", **headers: str) -> None:
    fake_inbox(app).deliver(
        plain_mail(
            sender,
            to,
            "testing my new phone",
            text,
            message_id=f"<ping-{len(mails(app))}-{sender}@client.example>",
            headers=headers or None,
        )
    )
    cycle(app)


def answer(app: TestApp, address: str) -> tuple[str, str]:
    msg = mails(app, address)[-1]
    return str(msg["Subject"]), words_of(msg)  # its words, wrapping aside


def password_of(app: TestApp, seat: str) -> str:
    from sqlalchemy import select

    from bot.models import Seat

    with app.db.read() as session:
        return session.scalars(select(Seat.secret).where(Seat.name == seat)).one()


def test_a_ping_through_the_signed_reply_address_says_so(rc: TestApp) -> None:
    """From any address: the signed reply address signs the seat in; the answer goes to the
    registered address, names the seat and the proof, and the turn's deadline."""
    before = len(mails(rc, "kelly.phone@mobile.example"))
    ping(rc, "kelly.phone@mobile.example", to=signed_address(BOT, "test-site-secret", "rc1", "kelly"))
    subject, text = answer(rc, ADDRESS["kelly"])
    assert subject.endswith("PING: your mail was accepted")
    assert "accepted as kelly in rc1" in text and "signed reply address" in text
    assert "Turn 1 of 5" in text and "registered address" in text
    assert len(mails(rc, "kelly.phone@mobile.example")) == before, "never to a From that is not registered"


def test_a_ping_with_the_password_says_so(rc: TestApp) -> None:
    ping(rc, ADDRESS["seb"], text=f"PING\nPASSWORD {password_of(rc, 'seb')}")
    subject, text = answer(rc, ADDRESS["seb"])
    assert subject.endswith("PING: your mail was accepted") and "by the password in the mail" in text
    assert password_of(rc, "seb") not in text, "the password is not mailed back"


def test_a_ping_from_the_gm_says_as_the_gm(rc: TestApp) -> None:
    ping(rc, GM, to=signed_address(BOT, "test-site-secret", "rc1", "gm"))
    subject, text = answer(rc, GM)
    assert subject.endswith("PING: your mail was accepted") and "the GM of rc1" in text
    assert "GM reply address, sent from your registered address" in text


def test_a_ping_passed_by_dmarc_names_the_servers_verdict(dmarc_site: TestApp) -> None:
    """The topmost Authentication-Results of our server says dmarc=pass for the From's domain."""
    ping(
        dmarc_site,
        ADDRESS["steve"],
        **{"Authentication-Results": f"{AUTHSERV}; dkim=pass header.d=example.org; dmarc=pass header.from=example.org"},
    )
    subject, text = answer(dmarc_site, ADDRESS["steve"])
    assert subject.endswith("PING: your mail was accepted")
    assert "dmarc=pass for example.org" in text and AUTHSERV in text


def test_a_ping_passed_by_aligned_dkim_says_dkim(dmarc_site: TestApp) -> None:
    ping(dmarc_site, ADDRESS["anna"], **{"Authentication-Results": f"{AUTHSERV}; dkim=pass header.d=example.org"})
    assert "dkim=pass for example.org, aligned" in answer(dmarc_site, ADDRESS["anna"])[1]


def test_a_ping_that_proves_nothing_is_told_why_at_the_registered_address_once_a_day(dmarc_site: TestApp) -> None:
    """From a registered address with no proof (and a DMARC fail): why not, to that address,
    once a day; nothing in it repeats the mail."""
    ping(dmarc_site, ADDRESS["roger"], **{"Authentication-Results": f"{AUTHSERV}; dmarc=fail header.from=example.org"})
    subject, text = answer(dmarc_site, ADDRESS["roger"])
    assert subject.endswith("PING: your mail was not accepted")
    assert "plain address flagman@example.org" in text and "no PASSWORD line" in text
    assert "dmarc=fail" in text and "testing my new phone" not in text
    count = len(mails(dmarc_site, ADDRESS["roger"]))
    ping(dmarc_site, ADDRESS["roger"])
    assert len(mails(dmarc_site, ADDRESS["roger"])) == count, "at most once a day"


def test_a_stale_reply_address_is_named_as_the_reason(rc: TestApp) -> None:
    """A reply address that does not verify (a seat handed on, a typo) is said to be the reason."""
    bad = signed_address(BOT, "another-secret", "rc1", "anna")
    ping(rc, ADDRESS["anna"], to=bad)
    subject, text = answer(rc, ADDRESS["anna"])
    assert subject.endswith("PING: your mail was not accepted") and "not valid (any more)" in text


def test_a_strangers_ping_gets_the_general_answer_strangers_get(rc: TestApp) -> None:
    ping(rc, "nobody@else.example")
    subject, text = answer(rc, "nobody@else.example")
    assert subject.endswith("You are not in a game here") and "PING" not in subject
    assert "accepted" not in text


def test_no_line_of_these_answers_is_an_order_line(dmarc_site: TestApp) -> None:
    """testing.md: Outlook quotes without '>', so no line of the bot's mail may parse as an
    order -- PING's answers (accepted, and why not), CALENDAR's, REMINDERS', UNSUBSCRIBE's."""
    from rules import find_game
    from tests.bot.gm_helpers import turns

    app = dmarc_site
    signed = signed_address(BOT, "test-site-secret", "rc1", "kelly")
    ping(app, ADDRESS["kelly"], to=signed, text="PING\nCALENDAR OFF\nREMINDERS OFF")
    ping(app, ADDRESS["kelly"], to=signed, text="CALENDAR ON\nREMINDERS ON\nUNSUBSCRIBE o.rc1.abcdefghijklmnop")
    ping(app, ADDRESS["seb"], **{"Authentication-Results": f"{AUTHSERV}; dkim=pass header.d=example.org"})
    ping(app, ADDRESS["roger"])
    rules = find_game("racecraft")
    state = rules.load_state(turns(app)[0].state)
    answers = [m for a in (ADDRESS["kelly"], ADDRESS["seb"], ADDRESS["roger"]) for m in mails(app, a)[1:]]
    assert len(answers) == 4
    for msg in answers:
        for line in body_of(msg).splitlines():
            assert not rules.parse_orders(state, "kelly", line).orders, (str(msg["Subject"]), line)
