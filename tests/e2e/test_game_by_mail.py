"""A whole Racecraft game through a real Dovecot and a real SMTP relay.

The players read their turn sheets and results over IMAP as a mail client would, and reply
to them; replies are delivered into the bot's mailbox over LMTP as an MTA would.
"""

from __future__ import annotations

from collections import Counter
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from sqlalchemy import text
from sqlalchemy.pool import QueuePool

from bot.games.turns import PlayerSpec, create_game
from bot.testing import body_of, reply_to
from tests.e2e.conftest import MailWorld

SEATS = ("kelly", "seb", "steve", "roger", "anna")


def read_inbox(world: MailWorld, address: str) -> list[EmailMessage]:
    client = world.dovecot.imap_client(address)
    try:
        uids = client.search(["ALL"])
        fetched = client.fetch(uids, [b"BODY.PEEK[]"]) if uids else {}
        msgs = []
        for uid in sorted(fetched):
            msg = message_from_bytes(fetched[uid][b"BODY[]"], policy=policy.default)
            assert isinstance(msg, EmailMessage)
            msgs.append(msg)
        return msgs
    finally:
        client.logout()


def cycle(world: MailWorld) -> None:
    service = world.app.service
    service.poll()
    service.tick()
    service.send()


def test_a_whole_game_by_real_mail(world: MailWorld) -> None:
    """A whole Racecraft game through Dovecot and SMTP, players reading over IMAP and replying."""
    addresses = {seat: world.player(f"{seat}-{world.domain.split('.')[0]}") for seat in SEATS}
    gm = world.player(f"gm-{world.domain.split('.')[0]}")
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=[PlayerSpec(s, a, s.title()) for s, a in addresses.items()],
            gm_address=gm,
            deadline="48h",
            seed=11,
        )
    world.app.service.send()
    answered = Counter[str]()
    for turn in range(1, 5):
        for seat, address in addresses.items():
            inbox = read_inbox(world, address)
            sheet = [m for m in inbox if "[ERROR]" not in str(m["Subject"]) and m["Reply-To"] is not None][-1]
            assert f"Turn {turn} of 5" in body_of(sheet)
            text = "USE 1" if turn == 1 else ("OVERTAKE" if seat == "anna" else "CRUISE")
            world.dovecot.deliver(world.bot, reply_to(sheet, text, sender=address))
            cycle(world)
            confirmation = read_inbox(world, address)[-1]
            subject = str(confirmation["Subject"])
            assert any(word in subject for word in ("Orders received", "Results", "Final result")), subject
            answered[seat] += 1
        cycle(world)  # early resolution: everyone is in
    cycle(world)  # the final sprint needs no orders
    for seat, address in addresses.items():
        final = read_inbox(world, address)[-1]
        assert "Final result" in str(final["Subject"]), (seat, final["Subject"])
    assert "final result" in str(read_inbox(world, gm)[-1]["Subject"])
    # Every mail reached the relay exactly once: no Message-ID twice.
    ids = world.sink.message_ids()
    assert len(ids) == len(set(ids))
    assert not world.sink.onward_errors
    # The bot's mailbox is empty: every mail was moved to Processed after its commit.
    client = world.dovecot.imap_client(world.bot)
    try:
        assert client.search(["ALL"]) == []
        client.select_folder("Processed")
        assert len(client.search(["ALL"])) == sum(answered.values())
    finally:
        client.logout()


@pytest.mark.parametrize("world", ["postgresql"], indirect=True)
def test_the_send_leaves_no_connection_changed_behind_it(world: MailWorld) -> None:
    """On PostgreSQL the send records each outcome on a connection of its own, autocommitted
    without waiting for the server's fsync (bot.mail_out.drain.drain); the connection goes
    back to the pool as it was: no other transaction of the bot gives up waiting for fsync."""
    players = [PlayerSpec(seat, world.player(f"{seat}-{world.domain.split('.')[0]}"), seat.title()) for seat in SEATS]
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=players,
            gm_address=world.player(f"gm-{world.domain.split('.')[0]}"),
            deadline="48h",
            seed=11,
        )
    report = world.app.service.send()
    assert report.sent == len(SEATS) + 1 and report.failed == report.retrying == 0  # a turn sheet each, the GM's
    engine = world.app.db.engine
    assert isinstance(engine.pool, QueuePool)
    pooled = engine.pool.checkedin()
    assert pooled >= 1
    conns = [engine.connect() for _ in range(pooled)]
    try:
        for conn in conns:
            source, level = conn.execute(
                text(
                    "SELECT source, current_setting('transaction_isolation') FROM pg_settings"
                    " WHERE name = 'synchronous_commit'"
                )
            ).one()
            assert source != "session" and level == "read committed", (source, level)
    finally:
        for conn in conns:
            conn.close()
