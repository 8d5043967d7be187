"""A capability goes only to its holder, in the self-service mail too.

mail-interface.md: "Answers to strangers, to refused senders and to observers carry the plain
address." The check of `test_capabilities` (every signed address and every password in a mail
queued belongs to its recipient, by the database at that moment) runs on each mail the
commands for anyone and the players' own commands make: LIST, HELP, RULES, OBSERVE and its
confirmation, an observer's results, PRESS (signed and anonymous), TIMEZONE, VACATION, and an
ADDRESS change with its confirmation (after which the seat's reply address belongs to the new
address, and the old address gets nothing signed).
"""

from __future__ import annotations

import itertools
from email import message_from_bytes, policy

from bot.models import PressMode
from bot.store import find_game_row
from bot.testing import plain_mail
from tests.security import test_capabilities
from tests.security.conftest import ADDRESS, BOT, Bot
from tests.security.test_capabilities import Watch

watch = test_capabilities.watch  # the shared fixture
STRANGER = "kim@else.example"
NEW = "seb@new.example"


def _reply_to_last(bot: Bot, to: str, text: str, sender: str) -> None:
    """A reply (keeping its subject) to the last mail queued for `to`, to its From."""
    row = [r for r in bot.outbox() if r.recipient == to][-1]
    msg = message_from_bytes(row.data, policy=policy.default)
    bot.deliver(
        plain_mail(sender, BOT, "Re: " + str(msg["Subject"]), text, message_id=f"<re-{row.id}-{sender}@client.example>")
    )


def test_self_service_mail_carries_capabilities_only_to_their_holders(bot: Bot, watch: Watch) -> None:
    """A day of self-service by mail; the check runs on each mail queued."""
    n = itertools.count()

    def mail(sender: str, to: str, text: str) -> None:
        bot.deliver(plain_mail(sender, to, "x", text, message_id=f"<ss-{next(n)}@client.example>"))

    mail(STRANGER, BOT, "HELP\nLIST")
    mail(STRANGER, BOT, "RULES rc1")
    mail(STRANGER, BOT, "OBSERVE rc1")
    bot.poll()
    _reply_to_last(bot, STRANGER, "", STRANGER)  # the confirmation
    mail(ADDRESS["seb"], bot.signed("seb"), "PRESS rc1 ALL\nhello all\nENDPRESS\nTIMEZONE Asia/Tokyo")
    mail(ADDRESS["kelly"], bot.signed("kelly"), "VACATION 2026-01-05 2026-01-09\nOBSERVE rc1")
    mail(ADDRESS["seb"], bot.signed("seb"), f"ADDRESS {NEW}")
    bot.poll()
    _reply_to_last(bot, NEW, "", "mallory@evil.example")  # someone else's reply: refused
    _reply_to_last(bot, NEW, "", NEW)  # the move
    bot.poll()
    with bot.app.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.press = PressMode.ANONYMOUS
    mail(NEW, bot.signed("seb"), "PRESS rc1 kelly\npsst")
    mail(ADDRESS["seb"], bot.signed("seb"), "USE 1")  # the old holder of the address, through the reply address
    bot.poll()
    for _ in range(3):  # deadlines: results to the players, the GM and the observer
        bot.clock.advance(hours=49)
        bot.service.tick()
    bot.service.send()
    assert watch.violations == []
    expected = {
        "stranger",
        "observer",
        "press",
        "press_gm",
        "address_confirm",
        "address_moved",
        "address_gm",
        "vacation_gm",
        "address",
        "answers",
    }
    missing = expected - set(watch.kinds)
    assert not missing, f"kinds not exercised: {sorted(missing)}; seen: {sorted(watch.kinds)}"
    assert bot.quarantined() == []
