"""The hostile corpus: every mail in tests/security/data/ comes to the outcome
data/expected.toml gives it, the bot writes only to whom it says, and every mail the bot
writes is safe to send: one recipient, the anti-auto-responder headers, no injected header.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from email import message_from_bytes, message_from_string, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from bot.mail_in.auth import GM_SEAT, signed_address, signed_tag
from bot.mail_in.inbox import Folder
from bot.models import Outbox
from tests.security.conftest import ADDRESS, AUTHSERV, BOT, GM, OLD_SECRET, SITE_SECRET, Bot

DATA = Path(__file__).resolve().parent / "data"
CASES: list[dict[str, Any]] = tomllib.loads((DATA / "expected.toml").read_text())["case"]


def fill(bot: Bot, raw: bytes) -> bytes:
    """The corpus with this game's signed addresses and passwords put in."""
    values = {
        "@@SIGNED_SEB@@": bot.signed("seb"),
        "@@SIGNED_SEB_OLD@@": bot.signed("seb", OLD_SECRET),
        "@@PASSWORD_SEB@@": bot.secret("seb"),
        "@@PASSWORD_GM@@": bot.gm_secret(),
        "@@TAG_SEB@@": signed_tag(SITE_SECRET, "rc1", "seb"),
        "@@SIGNED_GM@@": signed_address(BOT, SITE_SECRET, "rc1", GM_SEAT),
    }
    for key, value in values.items():
        raw = raw.replace(key.encode(), value.encode())
    return raw


def check_outgoing(row: Outbox, *, holder_wrote: bool = False) -> EmailMessage:
    """One mail the bot writes: to one address, the recipient of record, and nothing injected.

    `holder_wrote`: the mail answered carried the recipient's own capability (their signed reply
    address or password), so its lines may be quoted back to them, spam included; to anyone else
    a stranger's words never travel."""
    head = row.data.partition(b"\r\n\r\n")[0]
    # A mail to a non-ASCII address carries UTF-8 headers (RFC 6532, sent by SMTPUTF8 only).
    msg = (
        message_from_bytes(row.data, policy=policy.default)
        if head.isascii()
        else message_from_string(row.data.decode("utf-8"), policy=policy.default)
    )
    assert isinstance(msg, EmailMessage)
    assert not msg.defects, msg.defects
    to = msg["To"].addresses
    assert [a.addr_spec for a in to] == [row.recipient]
    for name in ("Cc", "Bcc", "Resent-To", "Resent-Bcc"):
        assert msg[name] is None, f"{name} in a mail the bot wrote"
    to_fields = msg.get_all("To")
    assert to_fields and len(to_fields) == 1
    for name, value in msg.items():
        assert "\r" not in str(value) and "\n" not in str(value), f"a line break in {name}"
    assert msg["X-Injected"] is None
    # No injected blank line ended the header early (the body may quote the player's own words;
    # In-Reply-To and References quote the mail's Message-ID, a msg-id that may hold any atext).
    head = row.data.split(b"\r\n\r\n", 1)[0]
    own = [line for line in head.split(b"\r\n") if not line.lower().startswith((b"in-reply-to:", b"references:"))]
    assert not any(b"Click_here" in line or b"Click here" in line for line in own)
    # mail-interface.md: what stops auto-responders, and what lets us recognise our own mail.
    assert msg["Auto-Submitted"] in ("auto-generated", "auto-replied")
    assert msg["Precedence"] == "bulk"
    assert msg["X-Auto-Response-Suppress"] == "All"
    assert msg["X-Flagman-Loop"] == BOT
    # A signed reply address only in mail to its holder's registered address.
    if msg["Reply-To"] is not None:
        tag = str(msg["Reply-To"].addresses[0].addr_spec).partition("+")[2].partition("@")[0]
        holder = GM if tag.split(".")[1] == GM_SEAT else ADDRESS[tag.split(".")[1]]
        assert row.recipient == holder, f"{tag} in mail to {row.recipient}"
    # Nothing the sender wrote comes back as a line of its own or with control characters.
    text = "\n".join(str(p.get_content()) for p in msg.walk() if p.get_content_maintype() == "text")
    for line in text.splitlines():
        assert not line.lstrip("> ").startswith(("== Notice", "mail your GM password")), line
        assert not any(c in line for c in "\x1b\u202e\u2028"), line
    if not holder_wrote:
        assert "cheap watches" not in text.lower() and "spam.example" not in text
    return msg


def test_the_corpus_and_its_expectations_agree() -> None:
    """Every file of the corpus has an expectation, and every expectation names files that exist."""
    named = {f for case in CASES for f in case["files"]}
    on_disk = {p.name for p in DATA.glob("*.eml")}
    assert named == on_disk
    for case in CASES:
        assert len(case["files"]) == len(case["outcomes"]), case["name"]
        assert set(case["outcomes"]) <= {"applied", "refused", "ignored", "duplicate"}, case["name"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_hostile_mail_comes_to_its_expected_outcome(case: dict[str, Any], make_bot: Callable[..., Bot]) -> None:
    """Each case of data/expected.toml: the outcome of every mail, who is written to, what is stored."""
    bot = make_bot()
    keys = [bot.deliver(fill(bot, (DATA / name).read_bytes())) for name in case["files"]]
    report = bot.poll()

    rows = bot.rows()
    expected = [o for o in case["outcomes"] if o != "duplicate"]
    assert [str(r.status) for r in rows] == expected, [(r.status, r.detail) for r in rows]
    assert report.duplicates == case["outcomes"].count("duplicate")
    assert all(r.detail for r in rows), "every outcome is explained in the log and the digest"
    if "detail" in case:
        assert case["detail"] in rows[-1].detail
    assert bot.quarantined() == []
    assert bot.orders() == case["orders"]
    assert sorted(bot.recipients()) == sorted(case["mailed"])
    for row in bot.outbox():
        check_outgoing(row)
    # Every mail is out of the inbox, in Processed: nothing is left to be fetched again.
    assert bot.inbox.pending == {} and sorted(bot.inbox.folders[Folder.PROCESSED]) == sorted(keys)
    # An attachment or a body is never stored whole: only the text of the orders, capped.
    assert all(len(r.text) <= 20000 and "TVqQAAMA" not in r.text for r in rows)


def test_dmarc_is_no_proof_when_the_configuration_accepts_only_the_password(make_bot: Callable[..., Bot]) -> None:
    """settings [auth] accept: a DMARC pass of our own server counts only when "dmarc" is accepted."""
    bot = make_bot(accept=("password",))
    bot.deliver(fill(bot, (DATA / "auth_dmarc_pass.eml").read_bytes()))
    bot.poll()
    assert [str(r.status) for r in bot.rows()] == ["refused"] and bot.orders() == 0


def test_the_password_is_no_proof_when_the_configuration_accepts_only_dmarc(make_bot: Callable[..., Bot]) -> None:
    """settings [auth] accept = ["dmarc"]: the seat password (line or subject tag) no longer admits a mail."""
    bot = make_bot(accept=("dmarc",))
    for name in ("auth_password.eml", "auth_subject_tag.eml"):
        bot.deliver(fill(bot, (DATA / name).read_bytes()))
    bot.poll()
    assert bot.orders() == 0
    assert all("authentication failed" in r.detail for r in bot.rows())


def test_without_an_authserv_id_no_authentication_results_header_is_believed(make_bot: Callable[..., Bot]) -> None:
    """An empty [auth] authserv_id: no header can pass, even one naming an empty or our old id."""
    bot = make_bot(authserv_id="")
    bot.deliver(fill(bot, (DATA / "auth_dmarc_pass.eml").read_bytes()))
    bot.poll()
    assert bot.orders() == 0
    assert AUTHSERV  # the corpus's header names it; the configuration does not
