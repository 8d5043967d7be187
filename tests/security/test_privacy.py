"""Privacy and "nobody acts for someone else" (gap e): a seat's password goes to that
seat only, never into a log, the export or the archive; answers go to registered addresses; nothing
of a turn's results is out before it is resolved."""

from __future__ import annotations

import logging
import re
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.games.archive import write_game_archive
from bot.models import Outbox, Seat, Turn
from bot.ops.backup import dumps, export_game
from bot.testing import plain_mail
from tests.security.conftest import ADDRESS, BOT, GM, RACERS, Bot


def texts(row: Outbox) -> str:
    """Every text part of a mail the bot wrote, decoded, headers included."""
    msg = message_from_bytes(row.data, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    parts = [str(v) for v in msg.values()]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            parts.append(part.get_content())
    return "\n".join(parts)


def passwords(bot: Bot) -> dict[str, str]:
    """Seat name -> seat password, and 'gm' -> the GM password."""
    with bot.app.db.read() as session:
        found = {s.name: s.secret for s in session.scalars(select(Seat))}
    found["gm"] = bot.gm_secret()
    return found


def test_each_turn_1_sheet_tells_its_seat_its_password_and_no_other_mail_holds_one(bot: Bot) -> None:
    """Gap (b)/(c): the seat's own first turn sheet carries its password (and says when it is needed);
    the GM copy carries the GM password and no seat's; no other mail carries any."""
    secrets = passwords(bot)
    owner = {**ADDRESS, "gm": GM}
    rows = bot.outbox(since_start=False)
    assert {r.kind for r in rows} == {"turn_sheet", "turn_sheet_gm"}
    for row in rows:
        body = texts(row)
        holders = {name for name, secret in secrets.items() if secret in body}
        expected = {"gm"} if row.kind == "turn_sheet_gm" else {n for n, a in ADDRESS.items() if a == row.recipient}
        assert holders == expected, (row.recipient, holders)
        assert all(owner[name] == row.recipient for name in holders)
    kelly = next(texts(r) for r in rows if r.recipient == ADDRESS["kelly"])
    # The password stands on a line of its own, never run on into the sentence after it.
    assert re.search(rf"Your seat password:\r?\n    {re.escape(secrets['kelly'])}\r?\n", kelly), kelly
    assert "Replying to the bot's mail needs no password" in kelly
    assert "GM password" in next(texts(r) for r in rows if r.kind == "turn_sheet_gm")


def test_the_gm_password_from_the_gm_copy_admits_gm_commands_to_the_plain_address(bot: Bot) -> None:
    """Gap (c): the GM learns the GM password from the GM copy of the turn-1 sheet, and it works."""
    gm_copy = next(texts(r) for r in bot.outbox(since_start=False) if r.kind == "turn_sheet_gm")
    found = re.search(r"Your GM password for rc1:\r?\n    (\S+)\r?\n", gm_copy)
    assert found is not None, gm_copy
    password = found.group(1)
    bot.deliver(plain_mail(GM, BOT, "[rc1]", f"EXTEND rc1 24h\nPASSWORD {password}"))
    bot.poll()
    assert bot.rows()[-1].status == "applied" and "EXTEND done" in bot.rows()[-1].detail


def play_with_passwords(bot: Bot) -> None:
    """Every kind of mail that names a password: right ones, wrong ones, the GM's, a seat's used by
    another player, then the deadline."""
    secrets = passwords(bot)
    for seat in ("kelly", "seb", "steve"):
        bot.deliver(plain_mail(ADDRESS[seat], BOT, "orders", f"USE 2\nPASSWORD {secrets[seat]}"))
    bot.deliver(plain_mail(ADDRESS["roger"], BOT, "orders", f"USE 3\nPASSWORD {secrets['anna']}"))
    bot.deliver(plain_mail(ADDRESS["anna"], BOT, "orders", f"USE 3 PASSWORD {secrets['anna']}\nSTATUS"))
    bot.deliver(plain_mail(GM, BOT, "[rc1]", f"PREVIEW rc1\nPASSWORD {secrets['gm']}"))
    bot.poll()
    bot.clock.advance(hours=49)
    bot.service.tick()
    bot.service.send()


def test_no_password_reaches_a_log_another_players_mail_the_export_or_the_archive(
    bot: Bot, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A seat's secret never appears in logs or in mail to anyone else; the export and the
    public archive hold none."""
    caplog.set_level(logging.DEBUG)
    play_with_passwords(bot)
    secrets = passwords(bot)
    owner = {**ADDRESS, "gm": GM}
    leaked = [name for name, secret in secrets.items() if secret in caplog.text]
    assert not leaked, f"passwords in the log: {leaked}"
    for row in bot.outbox():
        body = texts(row)
        for name, secret in secrets.items():
            assert secret not in body or owner[name] == row.recipient, f"{name}'s password in mail to {row.recipient}"
    with bot.app.db.read() as session:
        export = dumps(export_game(session, "rc1"))
    assert not [n for n, s in secrets.items() if s in export]
    site = write_game_archive(bot.app.db, "rc1", tmp_path / "archive").parent
    published = b"".join(p.read_bytes() for p in site.rglob("*") if p.is_file())
    assert not [n for n, s in secrets.items() if s.encode() in published]
    with bot.app.db.read() as session:
        from bot.models import InboundMessage

        stored = " ".join(session.scalars(select(InboundMessage.text)))
    # A PASSWORD line is never stored; anna wrote hers inside an order line, where it is no password
    # (and was refused as such) but the mail's own words, kept like any other.
    assert not [n for n, s in secrets.items() if s in stored and n != "anna"], "a password line stored"


def test_answers_to_a_signed_mail_from_another_address_go_to_the_registered_address(bot: Bot) -> None:
    """Gap (e): STATUS, ORDERS and HELP through the signed address from any From are answered at the
    seat's registered address only: whoever learned the address cannot read the answers."""
    bot.deliver(plain_mail("mallory@evil.example", bot.signed("seb"), "Re: rc1", "STATUS\nORDERS\nHELP"))
    bot.poll()
    # One answer to the mail (mail-interface.md), with the three in it, to seb's address alone.
    assert bot.recipients() == [ADDRESS["seb"]]


def test_an_attacker_with_the_address_and_the_game_name_gets_nothing_done_or_told(bot: Bot) -> None:
    """Gap (e): knowing a player's address and the game's name: no orders accepted, no status, no
    orders shown, no GM command, and the player is told once, not once per forged mail."""
    forged = [
        ("[rc1] orders", "USE 10"),
        ("[rc1]", "ORDERS"),
        ("[rc1]", "STATUS"),
        ("[rc1] help", "HELP"),
        ("[rc1]", "EXTEND rc1 30d"),
        ("[rc1]", "USE 10\nPASSWORD guess"),
        ("[rc1]", "RESIGN rc1"),
    ]
    for n, (subject, body) in enumerate(forged * 5):
        bot.deliver(plain_mail(f"Seb <{ADDRESS['seb']}>", BOT, subject, body, message_id=f"<forged-{n}@evil>"))
    bot.poll()
    assert bot.orders() == 0
    assert bot.recipients() == [ADDRESS["seb"]], "one note to the registered address, nothing more"
    details = [r.detail for r in bot.rows()]
    assert all(d.startswith(("authentication failed", "rate limit")) for d in details), details
    assert sum(d.startswith("rate limit") for d in details) == len(details) - 30  # [limits] default: 30 an hour
    with bot.app.db.read() as session:
        seat = session.scalars(select(Seat).where(Seat.name == "seb")).one()
        assert seat.active


def test_nothing_of_a_turn_is_out_before_it_is_resolved(bot: Bot) -> None:
    """Until the deadline no player gets results; the GM's PREVIEW goes to the GM only;
    confirmations go each to their own seat."""
    play_with_passwords(bot)
    with bot.app.db.read() as session:
        resolved_at = session.scalars(select(Turn.resolved_at).where(Turn.number == 1)).one()
    assert resolved_at is not None
    before = [r for r in bot.outbox() if r.created_at < resolved_at]
    players = set(ADDRESS.values())
    assert not [r for r in before if r.recipient in players and r.kind in ("results", "final")]
    previews = [r for r in before if "PREVIEW" in texts(r) or "preview" in r.kind]
    assert previews and all(r.recipient == GM for r in previews)
    assert len(RACERS) == 5


def test_a_replaced_seat_gets_a_new_password_only_its_new_holder_learns(bot: Bot) -> None:
    """GM REPLACE: the new holder's turn sheet tells them a fresh password; the old password no
    longer admits mail, and the outgoing player is not told the new one."""
    from bot.commands.registry import execute

    old = bot.secret("seb")
    with bot.app.db.transaction() as session:
        result = execute(bot.app.shell, session, "REPLACE", "rc1", ("seb", "newseb@example.net"), actor=GM, via="cli")
    assert result.ok, result.text
    bot.service.send()
    new = bot.secret("seb")
    assert new != old
    holders = [r.recipient for r in bot.outbox() if new in texts(r)]
    assert holders and set(holders) == {"newseb@example.net"}
    bot.deliver(plain_mail(ADDRESS["seb"], BOT, "orders", f"USE 2\nPASSWORD {old}"))
    bot.deliver(plain_mail("newseb@example.net", BOT, "orders", f"USE 2\nPASSWORD {old}"))
    bot.poll()
    assert bot.orders() == 0
