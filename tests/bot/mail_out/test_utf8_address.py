"""A mail to an address whose local part is not ASCII (RFC 6531/6532): it goes out only by
SMTPUTF8, so its headers are UTF-8 and the To field names exactly that mailbox; an encoded
word in an address (RFC 2047 forbids it there) would name another one."""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes, message_from_string, policy

import pytest

from bot.mail_out import compose as mailout
from bot.mail_out.render import RenderedMail
from bot.settings import Settings

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("address", ["zoë@players.test", "emil.ÿþlindqvist@example.se", "кира@example.org"])
def test_a_non_ascii_local_part_is_written_as_itself(address: str) -> None:
    rendered = RenderedMail("Résultats", "Bonjour\n")
    _, _, data = mailout.compose(
        Settings(), NOW, kind="results", to=mailout.Recipient(address, "Zoë"), rendered=rendered
    )
    head = data.partition(b"\r\n\r\n")[0]
    assert b"=?" not in head.split(b"\r\nTo: ")[1].split(b"\r\n")[0]
    msg = message_from_string(data.decode("utf-8"), policy=policy.default)
    assert [a.addr_spec for a in msg["To"].addresses] == [address]
    assert not msg.defects


def test_an_ascii_address_keeps_ascii_headers() -> None:
    rendered = RenderedMail("Résultats", "Bonjour\n")
    _, _, data = mailout.compose(
        Settings(), NOW, kind="results", to=mailout.Recipient("zoe@players.test", "Zoë"), rendered=rendered
    )
    assert data.partition(b"\r\n\r\n")[0].isascii()
    msg = message_from_bytes(data, policy=policy.default)
    assert [a.addr_spec for a in msg["To"].addresses] == ["zoe@players.test"]
    assert str(msg["Subject"]) == "Résultats"
