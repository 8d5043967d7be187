"""Hostile header sections through the whole pipeline.

A stranger's mail with 2 MB of Authentication-Results, 140,000 Cc addresses or a
100,000-character name or subject once held the poll for minutes, and the player's order
behind it waited. Each such mail now ends ignored or refused and the on-time order after it
is applied and confirmed, in the same poll; nothing is quarantined.

DMARC: a ``dmarc=pass`` for another domain than the From the bot read proves nothing, and a
mail with two From fields authenticates no one (the server may have checked the other one);
neither gets a player's orders applied, and the forged sender is never mailed.

No time limits here (a machine may be slow or busy): bench/hostile.py times the parser.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from email import message_from_bytes, policy

import pytest

from bot.testing import plain_mail
from tests.security.conftest import ADDRESS, AUTHSERV, BOT, Bot
from tests.security.test_corpus import check_outgoing

MALLORY = "mallory@evil.example"
# The security fixture's size cap is 1 MiB; the default (`[limits] max_mail_bytes`) is 2 MiB,
# and these mails must be read whole to reach the parser: the inbox lets them in.
WHOLE_MAILS = 16 * 1024 * 1024
LONG = ("é\u202eñ" * 34_000)[:100_000]  # non-ASCII, with right-to-left overrides among it


def raw_mail(headers: list[str], body: str = "USE 2") -> bytes:
    """A mail from whole header fields (already folded), as a stranger's client could write it."""
    head = headers + [
        "Date: Mon, 05 Jan 2026 10:00:00 +0000",
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Transfer-Encoding: 8bit",
    ]
    return ("\r\n".join(head) + "\r\n\r\n" + body + "\r\n").encode("utf-8", "surrogateescape")


def encoded_words(text: str) -> str:
    return "\r\n ".join(
        "=?utf-8?b?" + base64.b64encode(text[i : i + 12].encode()).decode() + "?=" for i in range(0, len(text), 12)
    )


def stranger(extra: list[str], *, name: str = "Mallory", subject: str = "orders", mid: str) -> bytes:
    return raw_mail(
        [f"From: {name} <{MALLORY}>", f"To: {BOT}", f"Subject: {subject}", f"Message-ID: <{mid}@evil.example>"] + extra
    )


def auth_results_2mb() -> bytes:
    """2 MB of Authentication-Results: 125 fields, each a 16,000-character token (no "=")."""
    return stranger(["Authentication-Results: " + AUTHSERV + "; " + "a" * 16_000] * 125, mid="ar")


def cc_140000() -> bytes:
    """140,000 Cc addresses in 1,400 Cc fields of 100."""
    return stranger(
        ["Cc: " + ", ".join(f"u{i}@x{i % 97}.example" for i in range(k, k + 100)) for k in range(0, 140_000, 100)],
        mid="cc",
    )


def long_name() -> bytes:
    """A From display name of 100,000 non-ASCII characters in RFC 2047 words."""
    return stranger([], name=encoded_words(LONG), mid="name")


def long_subject() -> bytes:
    """A Subject of 100,000 non-ASCII characters, the first word decoding to CR LF and a Bcc."""
    return stranger([], subject="=?utf-8?q?=0D=0ABcc=3A_victim@example.com?=\r\n " + encoded_words(LONG), mid="subject")


def medium_name() -> bytes:
    """A display name of 2,900 non-ASCII characters (within the cap on a From value): read, capped."""
    return stranger([], name=encoded_words(LONG[:2_900]), mid="medium-name")


def seb_order(bot: Bot) -> bytes:
    """The on-time order that follows: to seb's signed reply address, from seb's address."""
    return plain_mail(
        ADDRESS["seb"], bot.signed("seb"), "Re: [rc1] Turn 1", "USE 2", message_id="<seb-order@example.net>"
    )


def assert_safe_outgoing(bot: Bot) -> None:
    """Every mail the bot wrote: one recipient, nothing injected, a short one-line Subject and name."""
    for row in bot.outbox():
        msg = check_outgoing(row)
        assert len(str(msg["Subject"])) <= 300
        assert all(len(a.display_name) <= 60 for a in msg["To"].addresses)
        assert "victim" not in str(msg["Bcc"] or "") and msg["Bcc"] is None


@pytest.mark.parametrize(
    "make",
    [auth_results_2mb, cc_140000, long_name, long_subject, medium_name],
    ids=["auth-results-2mb", "cc-140000", "name-100000", "subject-100000", "name-2900"],
)
def test_a_hostile_header_section_does_not_hold_up_the_order_behind_it(bot: Bot, make: Callable[[], bytes]) -> None:
    """The stranger's mail ends ignored or refused (never quarantined); the player's
    on-time order delivered after it is applied and confirmed in the same poll."""
    bot.inbox.max_size = WHOLE_MAILS
    hostile = make()
    bot.deliver(hostile)
    bot.deliver(seb_order(bot))
    report = bot.poll()

    assert report.fetched == 2
    first, order = bot.rows()
    assert first.status in ("ignored", "refused"), first.detail
    assert first.sender in ("", MALLORY)
    assert len(first.subject) <= 200 and "\n" not in first.subject and "\u202e" not in first.subject
    assert order.status == "applied", order.detail
    assert bot.orders() == 1 and bot.quarantined() == []
    confirmation = bot.mailer.messages(ADDRESS["seb"])[-1]
    plain = confirmation.get_body(("plain",))
    assert plain is not None and "USE 2" in plain.get_content()
    # The stranger gets at most the one short notice, at the From it wrote; no one else is mailed.
    assert set(bot.recipients()) <= {ADDRESS["seb"], MALLORY}
    assert bot.recipients().count(MALLORY) <= 1
    assert_safe_outgoing(bot)


def test_an_over_cap_hostile_header_section_is_cheap_too(bot: Bot) -> None:
    """The same mail over the size cap: only its header section (64 KiB) is read, and it is
    never answered; the order behind it is applied."""
    bot.deliver(auth_results_2mb())  # over the fixture's 1 MiB: not fetched, its head parsed
    bot.deliver(seb_order(bot))
    bot.poll()
    first, order = bot.rows()
    assert (first.status, order.status) == ("ignored", "applied")
    assert "over the size limit" in first.detail
    assert bot.recipients() == [ADDRESS["seb"]] and bot.quarantined() == []


def dmarc_mail(header_from: str, *, mid: str) -> bytes:
    """Seb's From to the plain address, with our server's DMARC pass for `header_from`; the
    forger's own Reply-To and Sender."""
    return raw_mail(
        [
            f"Authentication-Results: {AUTHSERV}; dkim=pass header.d={header_from}; "
            f"spf=pass smtp.mailfrom={header_from}; dmarc=pass (p=reject) header.from={header_from}",
            f"From: Seb <{ADDRESS['seb']}>",
            f"To: {BOT}",
            f"Reply-To: {MALLORY}",
            f"Sender: {MALLORY}",
            "Subject: orders",
            f"Message-ID: <{mid}@evil.example>",
        ],
        body="USE 9",
    )


def test_a_dmarc_pass_for_another_domain_authenticates_no_one(bot: Bot) -> None:
    """``dmarc=pass header.from=evil.example`` on a mail whose From is seb's: the
    server checked the forger's domain, not seb's. Not authenticated, no orders applied; the
    note goes to seb's registered address, never to the forger."""
    bot.deliver(dmarc_mail("evil.example", mid="misaligned"))
    bot.poll()
    (row,) = bot.rows()
    assert row.status == "refused" and "authentication failed" in row.detail
    assert bot.orders() == 0 and bot.quarantined() == []
    assert all(not r.endswith("@evil.example") for r in bot.recipients())
    assert bot.recipients() == [ADDRESS["seb"]]
    assert_safe_outgoing(bot)


def test_a_dmarc_pass_for_the_from_domain_still_authenticates(bot: Bot) -> None:
    """The control: the same mail with the DMARC pass for seb's own domain is applied (so the
    refusal above is the domain's doing)."""
    bot.deliver(dmarc_mail(ADDRESS["seb"].partition("@")[2], mid="aligned"))
    bot.poll()
    (row,) = bot.rows()
    assert row.status == "applied", row.detail
    assert bot.orders() == 1 and bot.recipients() == [ADDRESS["seb"]]


@pytest.mark.parametrize("to", ["signed", "plain"])
def test_a_mail_with_two_from_fields_authenticates_no_one(bot: Bot, to: str) -> None:
    """Two From fields, seb's first (the one a naive reader takes) and the forger's,
    with a DMARC pass the server may have computed for either: ignored ("several senders"),
    no orders applied, never answered -- not the forger, not seb. The order after it is applied."""
    recipient = bot.signed("seb") if to == "signed" else BOT
    bot.deliver(
        raw_mail(
            [
                f"Authentication-Results: {AUTHSERV}; dmarc=pass header.from=evil.example",
                f"From: Seb <{ADDRESS['seb']}>",
                f"From: {MALLORY}",
                f"To: {recipient}",
                f"Reply-To: {MALLORY}",
                "Subject: orders",
                "Message-ID: <two-from@evil.example>",
            ],
            body="USE 9",
        )
    )
    bot.deliver(seb_order(bot))
    bot.poll()
    first, order = bot.rows()
    assert first.status == "ignored" and first.detail.startswith("several senders")
    assert first.sender == ""
    assert order.status == "applied"
    assert bot.orders() == 1 and bot.quarantined() == []
    assert bot.recipients() == [ADDRESS["seb"]]  # the confirmation of the real order only
    confirmation = message_from_bytes(bot.outbox()[-1].data, policy=policy.default)
    plain = confirmation.get_body(("plain",))
    assert plain is not None and "USE 2" in plain.get_content()
