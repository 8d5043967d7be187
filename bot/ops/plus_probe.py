"""`flagman doctor --probe-plus`: does mail to the bot's plus-addresses reach its INBOX?

Every reply to the bot comes back to a signed plus-address, ``flagman+rc1.kelly.<mac>@domain``
(mail-interface.md, "Addresses and identity"). A mail server that refuses those, or files them
anywhere but the INBOX, loses every order. The probe is that path, end to end: one mail from
the bot's address to ``<local>+doctor.probe.<random>@<domain>`` (a tag of the same shape as a
seat's) through the [outbox] relay, then a wait for it in the [inbox] account, then it is
deleted again. Verdicts, each with its fix:

* it arrived in the INBOX (or a running flagman already moved it to Processed): ok;
* the relay refused the address (Postfix without ``recipient_delimiter = +``, a Dovecot that
  looks ``flagman+...`` up as a user of its own): a problem;
* it was delivered into another folder (Dovecot's ``lmtp_save_to_detail_mailbox = yes``, a
  Sieve rule, a hosted mailbox's filter; only a copy with the delivery agent's Return-Path or
  Delivered-To counts, not the relay's copy in Sent): a problem, and the copy is deleted;
* it did not arrive within ``--probe-wait`` seconds: a problem.

The wait is on the server's events (IMAP IDLE on the INBOX, where the server has it), not on
a fixed delay: a probe that arrives at once is seen at once. The probe carries the bot's own
From and its loop header, so a running service that reads it first ignores it (logged as
ignored, "own mail") and moves it to Processed, where the probe finds and deletes it too.
It carries no capability: the tag is random, not signed.
"""

from __future__ import annotations

import secrets
import smtplib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, formataddr
from typing import TYPE_CHECKING

from bot.ops.deploy import doc_dir, running_venv
from bot.ops.findings import Finding, ok, problem, warning
from bot.ops.reach import (
    describe,
    failure_of,
    hint,
    imap_server,
    imap_session,
    smtp_server,
    smtp_session,
)

if TYPE_CHECKING:
    from imapclient import IMAPClient

    from bot.settings import Settings

AREA = "plus"
# The Dovecot half of the mail recipe, where `flagman deploy` puts it.
RECIPE = doc_dir(running_venv()) / "mail" / "dovecot-flagman.conf"
TAG = "doctor.probe"
IDLE_ROUND = 5.0  # seconds: the longest single IDLE wait before the other folders are looked at again
# Folders a delivery never goes to: the relay's own copy of a sent mail lands in Sent (some
# hosted mailboxes keep one), and \All is every mail at once (Gmail's All Mail).
_NOT_DELIVERY = frozenset({b"\\sent", b"\\drafts", b"\\all", b"\\noselect", b"\\nonexistent"})


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe mail: its random token, the plus-address it goes to, its Message-ID."""

    token: str
    recipient: str
    message_id: str

    @classmethod
    def to(cls, address: str) -> Probe:
        local, _, domain = address.rpartition("@")
        token = secrets.token_hex(6)
        tag = f"{TAG}.{token}"
        return cls(token, f"{local}+{tag}@{domain}", f"<{tag}@{domain}>")

    @property
    def tag(self) -> str:
        return f"{TAG}.{self.token}"


def probe_mail(settings: Settings, probe: Probe, now: datetime) -> EmailMessage:
    bot = settings.bot
    msg = EmailMessage()
    msg["From"] = formataddr((bot.name, bot.address))
    msg["To"] = probe.recipient
    msg["Subject"] = f"Flagman doctor: plus-address probe {probe.token}"
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = probe.message_id
    msg["Auto-Submitted"] = "auto-generated"
    msg[bot.loop_header] = bot.address  # a running flagman ignores its own mail
    msg.set_content(
        "`flagman doctor --probe-plus` sent this mail to the bot's own plus-address, to check that\n"
        "replies to the bot's signed reply addresses reach its INBOX.\n"
        "It deletes the mail as soon as it sees it: if you read this, it did not, and this mail\n"
        "can be deleted.\n"
    )
    return msg


@dataclass(frozen=True, slots=True)
class Seen:
    """Where the probe was found."""

    folder: str
    uids: tuple[int, ...]
    after: float  # seconds after it was sent


def run_probe(
    settings: Settings, *, wait: float, timeout: float, clock: Callable[[], float] = time.monotonic
) -> Iterator[Finding]:
    """Send the probe, wait up to `wait` seconds for it, say where it went; then delete it."""
    if settings.inbox.kind != "imap" or settings.outbox.kind != "smtp":
        yield warning(
            AREA,
            'plus-address probe not run: it needs [inbox] kind = "imap" and [outbox] kind = '
            '"smtp" (a Maildir is not a mail server)',
            "with a Maildir inbox, check that the local mail server delivers <local>+<anything>@ to it",
        )
        return
    probe = Probe.to(settings.bot.address)
    relay, account = smtp_server(settings, timeout), imap_server(settings, timeout)
    fix_refused = (
        f"the mail server must accept {settings.bot.local_part}+<anything>@{settings.bot.domain} for "
        f"{settings.bot.address}: Postfix: recipient_delimiter = + (postconf -e 'recipient_delimiter = +'); "
        f"Dovecot: recipient_delimiter = + ({RECIPE}); a hosted mailbox: turn plus addressing on "
        '(OPERATING.md, "The mail server")'
    )
    started = clock()
    try:
        with smtp_session(settings, timeout) as conn:
            conn.send_message(
                probe_mail(settings, probe, datetime.now(UTC)),
                from_addr=settings.bot.address,
                to_addrs=[probe.recipient],
            )
    except smtplib.SMTPRecipientsRefused as exc:
        code, text = next(iter(exc.recipients.values()), (0, b""))
        yield problem(AREA, f"the relay refused the plus-address {probe.recipient}: {code} {_text(text)}", fix_refused)
        return
    except smtplib.SMTPSenderRefused as exc:
        yield problem(
            AREA,
            f"plus-address probe not sent: the relay refused the sender {settings.bot.address}: "
            f"{exc.smtp_code} {_text(exc.smtp_error)}",
            "the relay must let [outbox] username send as [bot] address (the bot's own mail has it as its sender too)",
        )
        return
    except smtplib.SMTPDataError as exc:  # refused at DATA (a relay that delivers at once)
        yield problem(
            AREA,
            f"the mail to the plus-address {probe.recipient} was refused: {exc.smtp_code} {_text(exc.smtp_error)}",
            fix_refused,
        )
        return
    except (smtplib.SMTPException, OSError) as exc:
        failure = failure_of(exc)
        yield problem(AREA, "plus-address probe not sent: " + describe(failure, exc, relay), hint(failure, relay))
        return
    try:
        with imap_session(settings, timeout) as client:
            seen, elsewhere = _wait_for(client, settings, probe, started + wait, clock, started)
            removed = _delete(client, seen or elsewhere)
    except Exception as exc:  # noqa: BLE001 - the account was checked above; say what broke here
        failure = failure_of(exc)
        yield problem(
            AREA,
            "plus-address probe sent, but the IMAP account could not be read: " + describe(failure, exc, account),
            hint(failure, account),
        )
        return
    yield _where_it_went(settings, probe, seen, elsewhere, removed, wait)


def _where_it_went(
    settings: Settings, probe: Probe, seen: Seen | None, elsewhere: Seen | None, removed: bool, wait: float
) -> Finding:
    """What the probe's arrival says: in the INBOX (good), in another folder, or nowhere in time."""
    left = "" if removed else f"; delete it by hand (Message-ID {probe.message_id}): it could not be deleted"
    if seen is not None:
        moved = "" if seen.folder == settings.inbox.folder else f" (a running flagman had moved it to {seen.folder})"
        return ok(
            AREA,
            f"a probe to {probe.recipient} arrived in {settings.inbox.folder} after {seen.after:.1f} s"
            f"{moved}; deleted{left}",
        )
    elif elsewhere is not None:
        return problem(
            AREA,
            f"a probe to {probe.recipient} was delivered into the folder {elsewhere.folder!r}, not "
            f"{settings.inbox.folder}: the bot reads only {settings.inbox.folder}, so every reply would be "
            f"lost{left or '; the probe was deleted'}",
            "the mail server files plus-addressed mail by its tag: Dovecot: lmtp_save_to_detail_mailbox = no "
            f"({RECIPE}); else a Sieve rule or a filter of the hosted mailbox on '+', on "
            "the To address or on the subject: take it out, or make it keep such mail in the INBOX",
        )
    else:
        return problem(
            AREA,
            f"a probe to {probe.recipient} was accepted by the relay but did not arrive in "
            f"{settings.inbox.folder} (or any folder) within {wait:g} s",
            f"look the probe up in the mail server's log (`journalctl -u postfix -u dovecot -g {probe.tag}`): "
            f"a bounce to {settings.bot.address} says why; mail that is slow to arrive needs a longer "
            "--probe-wait; on a hosted mailbox, also try a mail from another account to the plus-address",
        )


def _text(value: bytes | str) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return " ".join(text.split())[:300]


def _search(client: IMAPClient, folder: str, probe: Probe, *, readonly: bool) -> tuple[int, ...]:
    """The UIDs of the probe in `folder`; none if the folder cannot be opened (a shared or
    virtual folder the account may list but not select)."""
    from imapclient.exceptions import IMAPClientError

    try:
        client.select_folder(folder, readonly=readonly)
    except IMAPClientError:
        return ()
    return tuple(int(uid) for uid in client.search(["HEADER", "Message-ID", probe.tag]))


def _delivered(client: IMAPClient, uids: tuple[int, ...]) -> tuple[int, ...]:
    """The copies a delivery agent wrote (Return-Path or Delivered-To), not a relay's Sent copy."""
    fetched = client.fetch(list(uids), ["BODY.PEEK[HEADER.FIELDS (RETURN-PATH DELIVERED-TO)]"])
    return tuple(
        uid for uid, data in fetched.items() if any(v.strip() for k, v in data.items() if k.startswith(b"BODY["))
    )


def _wait_for(
    client: IMAPClient, settings: Settings, probe: Probe, deadline: float, clock: Callable[[], float], started: float
) -> tuple[Seen | None, Seen | None]:
    """(where it arrived in the bot's folders, or else where else it was delivered)."""
    cfg = settings.inbox
    ours = (cfg.folder, cfg.processed_folder, cfg.failed_folder)
    idle = b"IDLE" in {c.upper() for c in client.capabilities()}
    while True:
        for folder in ours:
            if not client.folder_exists(folder):
                continue
            uids = _search(client, folder, probe, readonly=True)
            if uids:
                return Seen(folder, uids, clock() - started), None
        for flags, _delimiter, name in client.list_folders():
            folder = name if isinstance(name, str) else name.decode("utf-8", "replace")
            if folder in ours or _NOT_DELIVERY & {bytes(f).lower() for f in flags}:
                continue
            found = _search(client, folder, probe, readonly=True)
            delivered = _delivered(client, found) if found else ()
            if delivered:
                return None, Seen(folder, delivered, clock() - started)
        left = deadline - clock()
        if left <= 0:
            return None, None
        client.select_folder(cfg.folder, readonly=True)
        if idle:
            client.idle()
            try:
                client.idle_check(timeout=min(left, IDLE_ROUND))
            finally:
                client.idle_done()
        else:  # no IDLE: look again after a short pause (the server cannot tell us)
            time.sleep(min(left, 1.0))


def _delete(client: IMAPClient, seen: Seen | None) -> bool:
    """Delete the probe where it was seen; False if the server would not."""
    if seen is None:
        return True
    try:
        client.select_folder(seen.folder)
        client.delete_messages(list(seen.uids))
        if b"UIDPLUS" in {c.upper() for c in client.capabilities()}:
            client.uid_expunge(list(seen.uids))  # only these: never another mail marked \Deleted
        else:
            return False  # marked \Deleted; without UIDPLUS an EXPUNGE could take other mail with it
        return True
    except Exception:  # noqa: BLE001 - the verdict stands; the finding says it is left over
        return False
