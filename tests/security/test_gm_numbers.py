"""Hostile or mistyped numbers in GM commands, through the real mail pipeline
("GM numbers"): GM arguments validated with clear refusals (no quarantine, no traceback).

Each mail comes from the GM's registered address to the game's signed GM address, as a reply to
a GM mail would. Before the fix `EXTEND rc1 999999999999d` (OverflowError in timedelta),
`DEADLINE rc1 +99999999999999d` and `SET rc1 seb ep <5000 digits>` (ValueError from int() past
4300 digits) escaped `bot.commands.registry.execute` and the mail was quarantined instead of answered.
"""

from __future__ import annotations

from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

import pytest
from sqlalchemy import select

from bot.mail_in.auth import signed_address
from bot.models import InboundStatus, Turn
from bot.testing import plain_mail
from tests.security.conftest import BOT, GM, SITE_SECRET, Bot

DIGITS_5000 = "9" * 5000

# (the GM's line, what the refusal must say)
CASES = [
    # the three of the issue
    ("EXTEND rc1 999999999999d", "at most 365 days"),
    ("DEADLINE rc1 +99999999999999d", "at most 365 days"),
    (f"SET rc1 seb ep {DIGITS_5000}", "0 to 10"),
    # variants: just over the cap, overflowing units, many digits, no digits, other digits
    ("EXTEND rc1 366d", "at most 365 days"),
    ("EXTEND rc1 8761h", "at most 365 days"),
    ("EXTEND rc1 999999999999999999999m", "at most 365 days"),
    (f"EXTEND rc1 {DIGITS_5000}h", "too long"),
    ("EXTEND rc1 0d0h", "longer than zero"),
    ("EXTEND rc1 24", "not a duration"),
    ("EXTEND rc1 -24h", "not a duration"),
    ("EXTEND rc1 \u0661\u0662h", "not a duration"),  # Arabic-Indic digits: int() would take them
    ("EXTEND rc1 \uff12\uff14h", "not a duration"),  # full-width digits
    ("EXTEND rc1 1e9h", "not a duration"),
    ("DEADLINE rc1 +366d", "at most 365 days"),
    ("DEADLINE rc1 +", "no duration"),
    ("DEADLINE rc1 9999-12-31 23:59", "at most 365 days"),
    ("DEADLINE rc1 2027-06-01 18:00", "at most 365 days"),
    (f"DEADLINE rc1 {DIGITS_5000}-01-01", "too long"),
    ("DEADLINE rc1 2026-02-30 18:00", "not a date"),
    ("DEADLINE rc1 2026-13-01", "not a date"),
    ("DEADLINE rc1 0001-01-01 00:00", "in the past"),
    ("DEADLINE rc1 \uff12\uff10\uff12\uff16-02-01 18:00", "not a time"),
    ("SET rc1 seb ep 11", "0 to 10"),
    ("SET rc1 seb ep -1", "0 to 10"),
    ("SET rc1 seb ep 1e1", "0 to 10"),
    ("SET rc1 seb ep 0x0a", "0 to 10"),
    ("SET rc1 seb ep \u00b2", "0 to 10"),  # superscript two: isdigit() is true, int() refuses it
    ("SET rc1 seb ep \u0667", "0 to 10"),  # Arabic-Indic seven: int() would take it
    (f"SET rc1 seb ep {'0' * 5000}7", "0 to 10"),
]


def gm_mail(bot: Bot, line: str) -> None:
    to = signed_address(BOT, SITE_SECRET, "rc1", "gm")
    bot.deliver(
        plain_mail(
            GM, to, "Re: [rc1] GM digest", line + "\n", message_id=f"<gm-numbers-{abs(hash(line))}@client.example>"
        )
    )


def open_turn(bot: Bot) -> tuple[Any, dict[str, Any]]:
    with bot.app.db.read() as session:
        turn = session.scalars(select(Turn).where(Turn.resolved_at.is_(None))).one()
        return turn.deadline, dict(turn.state)


def body(data: bytes) -> str:
    msg = message_from_bytes(data, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    part = msg.get_body(("plain",))
    assert part is not None
    text: str = part.get_content()
    return text


@pytest.mark.parametrize(("line", "reason"), CASES, ids=[line[:40] for line, _ in CASES])
def test_a_bad_number_from_the_gm_is_refused_by_mail_never_quarantined(bot: Bot, line: str, reason: str) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    The GM gets exactly one answer: refused, and why; the deadline and the figures are as they
    were; no player is told anything."""
    before = open_turn(bot)
    gm_mail(bot, line)
    report = bot.poll()
    assert bot.quarantined() == []
    assert report.outcomes == {InboundStatus.APPLIED: 1}, report
    rows = bot.outbox()
    assert [row.recipient for row in rows] == [GM], "one answer, to the GM only"
    assert "refused" in rows[0].subject
    text = body(rows[0].data)
    assert "Refused" in text or "refused" in text
    assert reason in text, text
    assert "Traceback" not in text and "Error" not in text.replace("[ERROR]", "")
    assert DIGITS_5000[:100] not in text.split("Refused", 1)[-1], "the reason quotes at most ~40 characters"
    assert open_turn(bot) == before


def test_the_refusal_quotes_at_most_forty_characters_of_the_argument_on_one_line(bot: Bot) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    The reason names the cap and cuts what the GM wrote."""
    gm_mail(bot, "EXTEND rc1 " + "1" * 60 + "h")
    bot.poll()
    assert bot.quarantined() == []
    text = body(bot.outbox()[0].data)
    # The reason is a paragraph the letter breaks to 78 columns: read it by its words.
    paragraphs = [" ".join(p.split()) for p in text.replace("\r\n", "\n").split("\n\n")]
    reason = next(p for p in paragraphs if "at most 365 days" in p)
    assert "'" + "1" * 40 + "'..." in reason
    assert "1" * 41 not in reason


def test_several_bad_numbers_in_one_mail_get_a_section_each_and_a_good_line_still_works(bot: Bot) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    A bad line does not stop the next one: the valid EXTEND is carried out. The one answer to
    the mail (mail-interface.md) has a section for each command."""
    deadline, state = open_turn(bot)
    gm_mail(bot, f"EXTEND rc1 999999999999d\nSET rc1 seb ep {DIGITS_5000}\nEXTEND rc1 24h")
    bot.poll()
    assert bot.quarantined() == []
    (answer,) = [row for row in bot.outbox() if row.recipient == GM]
    text = body(answer.data)
    done, _, not_done = text.partition("== Not done ==")
    assert done.count("--- GM: EXTEND done ---") == 1
    assert not_done.count("--- GM: EXTEND refused ---") == 1 and not_done.count("--- GM: SET refused ---") == 1
    assert DIGITS_5000 not in text
    new_deadline, new_state = open_turn(bot)
    assert new_state == state
    assert (new_deadline - deadline).total_seconds() == 24 * 3600


def test_a_good_set_still_works(bot: Bot) -> None:
    """The validation refuses only what is wrong: SET rc1 seb ep 7 is done."""
    gm_mail(bot, "SET rc1 seb ep 7")
    bot.poll()
    assert bot.quarantined() == []
    rows = bot.outbox()
    assert sorted(row.recipient for row in rows) == sorted([GM, "seb@example.net"])  # the player is told
    to_gm = next(row for row in rows if row.recipient == GM)
    assert "refused" not in to_gm.subject
    assert "seb: ep set to 7" in body(to_gm.data)
