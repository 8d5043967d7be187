"""Self-service by real mail, through a real Dovecot and a real SMTP
relay: a stranger's LIST, OBSERVE with its confirmation and the observer's results; a player's
PRESS, TIMEZONE, ADDRESS (confirmed from the new address) and VACATION.

Every mail a person reads here is read over IMAP from their own mailbox, as a mail client
would; every mail they send is delivered into the bot's mailbox over LMTP, as an MTA would.
"""

from __future__ import annotations

import re
from datetime import timedelta
from email.message import EmailMessage

from bot.games.turns import PlayerSpec, create_game
from bot.store import find_game_row
from bot.testing import body_of, plain_mail, reply_to
from tests.e2e.conftest import MailWorld
from tests.e2e.test_game_by_mail import cycle, read_inbox

SEATS = ("kelly", "seb", "steve", "roger", "anna")
SIGNED = re.compile(r"flagman\+[a-z0-9_-]+\.[a-z0-9_-]+\.[a-z2-7]{12}@", re.I)


def newest(world: MailWorld, address: str, subject: str) -> EmailMessage:
    found = [m for m in read_inbox(world, address) if subject in str(m["Subject"])]
    assert found, f"no mail to {address} with {subject!r} in its subject: " + "; ".join(
        str(m["Subject"]) for m in read_inbox(world, address)
    )
    return found[-1]


def test_a_strangers_list_and_observe_and_a_players_press_timezone_address_vacation(world: MailWorld) -> None:
    """The judge-level commands by real mail, each answered once, capabilities only to their holders."""
    tag = world.domain.split(".")[0]
    addresses = {seat: world.player(f"{seat}-{tag}") for seat in SEATS}
    gm = world.player(f"gm-{tag}")
    kim = world.player(f"kim-{tag}")
    seb_new = world.player(f"seb-new-{tag}")
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=[PlayerSpec(s, a, s.title(), "Europe/London") for s, a in addresses.items()],
            gm_address=gm,
            deadline="48h",
            timezone="Europe/London",
            seed=11,
        )
    world.app.service.send()

    # A stranger: LIST, then OBSERVE, confirmed by replying to the mail that asks.
    world.dovecot.deliver(world.bot, plain_mail(kim, world.bot, "games?", "LIST", message_id=f"<list@{tag}>"))
    cycle(world)
    listing = newest(world, kim, "Games here")
    assert "rc1: Racecraft, Turn 1 of 5" in body_of(listing) and listing["Reply-To"] is None
    world.dovecot.deliver(world.bot, plain_mail(kim, world.bot, "watch", "OBSERVE rc1", message_id=f"<obs@{tag}>"))
    cycle(world)
    ask = newest(world, kim, "Confirm: observe rc1")
    assert ask["Reply-To"] is None and not SIGNED.search(body_of(ask))
    world.dovecot.deliver(world.bot, reply_to(ask, "", sender=kim))
    cycle(world)
    assert "You observe rc1" in str(read_inbox(world, kim)[-1]["Subject"])

    def sheet(address: str) -> EmailMessage:
        return [m for m in read_inbox(world, address) if m["Reply-To"] is not None][-1]

    # A player: PRESS to all, TIMEZONE and VACATION in one mail (one answer, in sections).
    seb, kelly = addresses["seb"], addresses["kelly"]
    before = len(read_inbox(world, seb))
    world.dovecot.deliver(
        world.bot,
        reply_to(
            sheet(seb),
            "PRESS rc1 ALL\nSlow start, anyone?\nENDPRESS\nTIMEZONE Asia/Tokyo\nVACATION 2026-01-05 2026-01-08",
            sender=seb,
        ),
    )
    cycle(world)
    answers = read_inbox(world, seb)[before:]
    assert len(answers) == 1
    answer = body_of(answers[0])
    assert "--- Press sent in rc1 ---" in answer and "--- Time zone set: Asia/Tokyo ---" in answer
    assert "JST" in answer and "--- Vacation set ---" in answer
    press = newest(world, kelly, "Press from seb")
    assert "    > Slow start, anyone?" in body_of(press)
    assert SIGNED.search(str(press["Reply-To"])) and "rc1.kelly." in str(press["Reply-To"])
    assert "seb of rc1: vacation" in "\n".join(str(m["Subject"]) for m in read_inbox(world, gm))
    assert "Press from seb to every player" in "\n".join(str(m["Subject"]) for m in read_inbox(world, gm))

    # ADDRESS: the old address is told at once, with a STOP code; nothing moves until the new
    # address answers and the old one has had a day to stop it; then it is told again.
    world.dovecot.deliver(world.bot, reply_to(sheet(seb), f"ADDRESS {seb_new}", sender=seb))
    cycle(world)
    assert "STOP stop." in body_of(newest(world, seb, "Confirm your new address"))
    confirm = newest(world, seb_new, "Confirm your new address")
    assert confirm["Reply-To"] is None
    with world.app.db.read() as session:
        row = find_game_row(session, "rc1")
        assert row is not None and {s.name: s.player.address for s in row.seats}["seb"] == seb
    world.dovecot.deliver(world.bot, reply_to(confirm, "", sender=seb_new))
    cycle(world)
    assert "The move is made at" in body_of(newest(world, seb_new, "Your new address"))
    world.clock.advance(timedelta(hours=24))
    cycle(world)
    assert "Your address has changed" in str(read_inbox(world, seb)[-1]["Subject"])
    moved = newest(world, seb_new, "Your address change is made")
    assert "rc1.seb." in str(moved["Reply-To"])  # the seat's reply address, now to its new holder

    # The turn: everyone but seb (on vacation) orders; at the deadline seb gets the default,
    # which does not count as an NMR; the observer gets the public results at the plain address.
    for seat in SEATS:
        if seat != "seb":
            world.dovecot.deliver(world.bot, reply_to(sheet(addresses[seat]), "USE 2", sender=addresses[seat]))
    cycle(world)
    world.clock.advance(timedelta(hours=49))
    cycle(world)
    copy = newest(world, kim, "observer copy")
    assert "Results of Turn 1 of 5" in str(copy["Subject"]) and copy["Reply-To"] is None
    assert not SIGNED.search(body_of(copy)) and "UNOBSERVE rc1" in body_of(copy)
    assert "Results of Turn 1 of 5" in str(newest(world, seb_new, "Results").get("Subject"))
    with world.app.db.read() as session:
        row = find_game_row(session, "rc1")
        assert row is not None
        streaks = {s.name: s.nmr_streak for s in row.seats}
    assert streaks["seb"] == 0
    ids = world.sink.message_ids()
    assert len(ids) == len(set(ids)) and not world.sink.onward_errors
