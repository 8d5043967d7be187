"""ImapInbox against a real Dovecot: batches, size cap, moves, crashes, UIDVALIDITY, IDLE."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Literal, TypedDict, Unpack

import pytest

from bot.mail_in.imap import ImapInbox, ImapLoginError, ImapUnavailable
from bot.mail_in.inbox import Folder, RawMail, ReadAhead
from tests.servers import Dovecot, free_port

pytestmark = pytest.mark.e2e

_serial = itertools.count(1)


def make_mail(n: int, body: str = "Move 3 to B7\r\n") -> bytes:
    return (
        f"From: Player {n} <p{n}@players.test>\r\n"
        f"To: bot@flagman.test\r\n"
        f"Subject: orders {n}\r\n"
        f"Message-ID: <order-{n}@players.test>\r\n"
        f"\r\n{body}"
    ).encode()


def message_id(mail: RawMail) -> str:
    assert mail.data is not None
    for line in mail.data.split(b"\r\n"):
        if line.lower().startswith(b"message-id:"):
            return line.split(b":", 1)[1].strip().decode()
    raise AssertionError("no Message-ID")


def folder_count(dovecot: Dovecot, user: str, folder: str) -> int:
    client = dovecot.imap_client(user, folder=folder)
    try:
        return len(client.search("ALL"))
    finally:
        client.logout()


@pytest.fixture
def user(dovecot: Dovecot) -> str:
    """A fresh mailbox per test, so tests on the shared Dovecot cannot see each other."""
    return dovecot.add_user(f"bot{next(_serial)}@flagman.test", "pw")


class InboxOptions(TypedDict, total=False):
    """The keywords of `ImapInbox` the tests set."""

    security: Literal["tls", "starttls", "none"]
    timeout: float
    folder: str
    processed_folder: str
    failed_folder: str
    max_size: int
    batch_size: int
    create_folders: bool
    reconnect_attempts: int
    backoff_initial: float
    backoff_max: float
    idle_cycle: float
    idle_check: float
    poll_interval: float
    sleep: Callable[[float], None]


@pytest.fixture
def make_inbox(dovecot: Dovecot, user: str) -> Iterator[Callable[..., ImapInbox]]:
    made: list[ImapInbox] = []

    def make(server: Dovecot = dovecot, login: str = user, **options: Unpack[InboxOptions]) -> ImapInbox:
        chosen: InboxOptions = {
            "security": "none",
            "timeout": 10.0,
            "backoff_initial": 0.05,
            "backoff_max": 0.2,
            "reconnect_attempts": 3,
            **options,
        }
        inbox = ImapInbox(server.host, server.imap_port, login, server.users.get(login, "pw"), **chosen)
        made.append(inbox)
        return inbox

    yield make
    for inbox in made:
        inbox.close()


def test_fetch_returns_every_mail_oldest_first_in_batches(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """25 mails with batch size 10: all come back in delivery order, fetched 10 at a time."""
    with dovecot.lmtp_connection() as lmtp:
        for n in range(25):
            dovecot.deliver(user, make_mail(n), lmtp=lmtp)
    inbox = make_inbox(batch_size=10)
    inbox.connect()
    client = inbox._client
    assert client is not None
    calls: list[int] = []
    real_fetch = client.fetch

    def counting_fetch(messages: list[int], data: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(len(messages))
        return real_fetch(messages, data, *args, **kwargs)

    client.fetch = counting_fetch
    mails = inbox.fetch_new(limit=100)

    assert [message_id(m) for m in mails] == [f"<order-{n}@players.test>" for n in range(25)]
    assert max(calls) == 10 and len(calls) == 6  # sizes and bodies, 3 batches each
    uids = [int(m.key.split(":")[1]) for m in mails]
    assert uids == sorted(uids)
    assert {m.key.split(":")[0] for m in mails} == {str(dovecot.uidvalidity(user))}
    assert all(m.data is not None and m.size >= len(make_mail(0)) for m in mails)
    assert [m.key for m in inbox.fetch_new(limit=7)] == [m.key for m in mails[:7]]


def test_a_batch_in_hand_is_skipped_so_the_next_can_be_read_while_it_is_handled(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """`fetch_new(skip=...)`: the mails after the batch in hand (still in the INBOX, not yet
    moved), oldest first -- what `ReadAhead` reads while the service handles that batch."""
    with dovecot.lmtp_connection() as lmtp:
        for n in range(12):
            dovecot.deliver(user, make_mail(n), lmtp=lmtp)
    inbox = make_inbox(batch_size=5)
    first = inbox.fetch_new(limit=5)
    second = inbox.fetch_new(limit=5, skip=[m.key for m in first])
    assert [message_id(m) for m in second] == [f"<order-{n}@players.test>" for n in range(5, 10)]
    inbox.mark_done([m.key for m in first])
    third = ReadAhead(inbox, 5, skip=[m.key for m in second]).result()
    assert [message_id(m) for m in third] == [f"<order-{n}@players.test>" for n in (10, 11)]
    assert [m.key for m in inbox.fetch_new(limit=100)] == [m.key for m in second + third]


def test_fetching_changes_nothing(dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]) -> None:
    """BODY.PEEK: a fetched mail is still unseen, and fetching again returns it again."""
    dovecot.deliver(user, make_mail(1))
    inbox = make_inbox()
    first = inbox.fetch_new()
    assert [m.key for m in inbox.fetch_new()] == [m.key for m in first]
    client = dovecot.imap_client(user)
    flags = client.get_flags(client.search("ALL"))
    client.logout()
    assert all(b"\\Seen" not in f for f in flags.values())


def test_mail_over_the_size_cap_is_not_downloaded(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """A mail bigger than max_size comes back with data=None and its server size."""
    small = make_mail(1)
    big = make_mail(2, body=("y" * 76 + "\r\n") * 100)
    dovecot.deliver(user, small)
    dovecot.deliver(user, big)
    inbox = make_inbox(max_size=4000)
    first, second = inbox.fetch_new()
    assert first.data is not None and first.data.endswith(b"\r\n\r\nMove 3 to B7\r\n")
    assert second.data is None and second.size > 4000 and second.size >= len(big)


def test_a_5_mb_mail_is_fetched_whole_under_the_cap_and_skipped_over_it(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """5 MB with a 10 MB cap: fetched byte for byte; with a 1 MB cap: size only."""
    lines = "".join(f"line {i:07d} " + "z" * 60 + "\r\n" for i in range(5 * 1024 * 1024 // 74))
    big = make_mail(1, body=lines)
    dovecot.deliver(user, big)
    (whole,) = make_inbox(max_size=10 * 1024 * 1024).fetch_new()
    assert whole.data is not None and whole.data.endswith(big.split(b"\r\n\r\n", 1)[1])
    assert whole.size == len(whole.data) > 5_000_000
    (capped,) = make_inbox(max_size=1024 * 1024).fetch_new()
    assert capped.data is None and capped.size == whole.size and capped.key == whole.key


def append_at(dovecot: Dovecot, user: str, data: bytes, when: datetime) -> None:
    """APPEND a mail with INTERNALDATE `when` (RFC 3501 6.3.11: APPEND takes a date-time)."""
    client = dovecot.imap_client(user)
    try:
        client.append("INBOX", data, flags=(), msg_time=when)
    finally:
        client.logout()


# Two seconds before an 18:00 UTC deadline, as a server at +0200 and one at -0500 write it.
BEFORE_DEADLINE = datetime(2026, 3, 14, 17, 59, 58, tzinfo=UTC)
AT_PLUS_2 = BEFORE_DEADLINE.astimezone(timezone(timedelta(hours=2)))
AT_MINUS_5 = (BEFORE_DEADLINE - timedelta(days=120)).astimezone(timezone(timedelta(hours=-5)))


def test_received_at_is_the_internaldate_in_utc_for_every_mail(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """mail-interface.md: "Deadlines are judged by when the mail server received the mail
    (IMAP INTERNALDATE, the Maildir delivery time), not by when the bot reads it." A mail
    appended with a chosen INTERNALDATE comes back with that moment in UTC, over-cap mail
    too, and no FETCH is added for it (sizes, bodies, over-cap headers: one each)."""
    append_at(dovecot, user, make_mail(1), AT_PLUS_2)
    append_at(dovecot, user, make_mail(2, body=("y" * 76 + "\r\n") * 100), AT_MINUS_5)
    inbox = make_inbox(max_size=4000)
    inbox.connect()
    client = inbox._client
    assert client is not None
    fetched: list[list[str]] = []
    real_fetch = client.fetch

    def counting_fetch(messages: list[int], data: list[str], *args: Any, **kwargs: Any) -> Any:
        fetched.append([str(d) for d in data])
        return real_fetch(messages, data, *args, **kwargs)

    client.fetch = counting_fetch
    small, big = inbox.fetch_new()

    assert small.data is not None and small.received_at == BEFORE_DEADLINE
    assert big.data is None and big.headers is not None
    assert big.received_at == BEFORE_DEADLINE - timedelta(days=120)
    assert small.received_at.tzinfo is UTC and big.received_at.tzinfo is UTC
    assert len(fetched) == 3 and sum("INTERNALDATE" in items for items in fetched) == 1


def test_mail_delivered_over_lmtp_is_received_when_dovecot_stored_it(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Without a chosen date, INTERNALDATE is the delivery: between before and after it
    (to the second, the precision of INTERNALDATE)."""
    before = datetime.now(UTC).replace(microsecond=0)
    dovecot.deliver(user, make_mail(1))
    after = datetime.now(UTC)
    (mail,) = make_inbox().fetch_new()
    assert mail.received_at is not None and before <= mail.received_at <= after


@pytest.mark.parametrize(
    "local_zone",
    ["IST-5:30", "EST5EDT,M3.2.0,M11.1.0"],  # POSIX TZ: no tzdata needed; the second has DST
)
def test_received_at_does_not_depend_on_the_bots_local_time_zone(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox], monkeypatch: pytest.MonkeyPatch, local_zone: str
) -> None:
    """imapclient by default turns INTERNALDATE into a naive local time by today's offset
    (an hour off across a DST change); the bot's local zone must not move a mail's arrival."""
    append_at(dovecot, user, make_mail(1), AT_PLUS_2)  # March 14: EDT already
    append_at(dovecot, user, make_mail(2), AT_MINUS_5)  # November 14: EST
    monkeypatch.setenv("TZ", local_zone)
    time.tzset()
    try:
        mails = make_inbox().fetch_new()
    finally:
        monkeypatch.undo()
        time.tzset()
    assert [m.received_at for m in mails] == [BEFORE_DEADLINE, BEFORE_DEADLINE - timedelta(days=120)]


def test_a_missing_or_unparseable_internaldate_gives_none(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """A server that sends no INTERNALDATE, or one imapclient cannot parse (it gives None),
    or one without a zone: the mail is still fetched, with received_at None."""
    for n in range(3):
        append_at(dovecot, user, make_mail(n), AT_PLUS_2)
    inbox = make_inbox()
    inbox.connect()
    client = inbox._client
    assert client is not None
    real_fetch = client.fetch

    def lossy_fetch(messages: list[int], data: list[str], *args: Any, **kwargs: Any) -> Any:
        result = real_fetch(messages, data, *args, **kwargs)
        for uid, item in result.items():
            if b"INTERNALDATE" in item:
                if uid == min(result):
                    del item[b"INTERNALDATE"]  # not sent
                elif uid == max(result):
                    item[b"INTERNALDATE"] = item[b"INTERNALDATE"].replace(tzinfo=None)
                else:
                    item[b"INTERNALDATE"] = None  # unparseable
        return result

    client.fetch = lossy_fetch
    mails = inbox.fetch_new()
    assert [message_id(m) for m in mails] == [f"<order-{n}@players.test>" for n in range(3)]
    assert [m.received_at for m in mails] == [None, None, None]


def test_mark_done_moves_a_batch_with_one_uid_move(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """25 keys with batch size 10: three UID MOVE commands, not 25."""
    with dovecot.lmtp_connection() as lmtp:
        for n in range(25):
            dovecot.deliver(user, make_mail(n), lmtp=lmtp)
    inbox = make_inbox(batch_size=10)
    mails = inbox.fetch_new()
    client = inbox._client
    assert client is not None
    moves: list[int] = []
    real_move = client.move

    def counting_move(messages: list[int], folder: str) -> Any:
        moves.append(len(messages))
        return real_move(messages, folder)

    client.move = counting_move
    inbox.mark_done([m.key for m in mails])
    assert moves == [10, 10, 5]
    assert folder_count(dovecot, user, "Processed") == 25


def test_mark_done_moves_to_processed_and_failed(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Done mail leaves the inbox for Processed or Failed; the next fetch returns nothing."""
    for n in range(5):
        dovecot.deliver(user, make_mail(n))
    inbox = make_inbox(batch_size=2)
    mails = inbox.fetch_new()
    inbox.mark_done([m.key for m in mails[:3]], Folder.PROCESSED)
    inbox.mark_done([m.key for m in mails[3:]], Folder.FAILED)
    assert inbox.fetch_new() == []
    assert folder_count(dovecot, user, "Processed") == 3
    assert folder_count(dovecot, user, "Failed") == 2
    assert folder_count(dovecot, user, "INBOX") == 0
    inbox.mark_done([m.key for m in mails])  # already moved: nothing happens, no error
    inbox.mark_done(["garbage", "1:x", ""])  # malformed keys are ignored
    assert folder_count(dovecot, user, "Processed") == 3


def test_crash_between_fetch_and_mark_done_fetches_the_mail_again(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """A bot that dies after fetching, before marking done, sees the same mails on restart."""
    for n in range(3):
        dovecot.deliver(user, make_mail(n))
    crashed = make_inbox()
    before = crashed.fetch_new()
    crashed._drop()  # the process died: no logout, no move
    restarted = make_inbox()
    after = restarted.fetch_new()
    assert [(m.key, m.data) for m in after] == [(m.key, m.data) for m in before]


def test_uidvalidity_change_ignores_old_keys_and_returns_mail_again(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """After the INBOX is recreated, old keys move nothing; the mails come back, new keys."""
    for n in range(3):
        dovecot.deliver(user, make_mail(n))
    inbox = make_inbox()
    old = inbox.fetch_new()
    old_validity = inbox.uidvalidity
    new_validity = dovecot.recreate_inbox(user)
    assert new_validity != old_validity

    inbox.mark_done([m.key for m in old])  # reconnects (Dovecot dropped the session)

    assert folder_count(dovecot, user, "INBOX") == 3
    assert folder_count(dovecot, user, "Processed") == 0
    again = inbox.fetch_new()
    assert [message_id(m) for m in again] == [message_id(m) for m in old]
    assert {m.key.split(":")[0] for m in again} == {str(new_validity)}
    inbox.mark_done([m.key for m in again])
    assert folder_count(dovecot, user, "Processed") == 3


def test_without_move_capability_copy_and_uid_expunge_do_the_move(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Where MOVE is missing, COPY + STORE \\Deleted + UID EXPUNGE give the same result."""
    for n in range(4):
        dovecot.deliver(user, make_mail(n))
    inbox = make_inbox()
    inbox.connect()
    inbox._capabilities = inbox._capabilities - {"MOVE"}
    mails = inbox.fetch_new()
    inbox.mark_done([m.key for m in mails[:2]], Folder.FAILED)
    assert [m.key for m in inbox.fetch_new()] == [m.key for m in mails[2:]]
    assert folder_count(dovecot, user, "Failed") == 2


def test_mail_flagged_deleted_is_skipped_and_looked_past(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """A copied but not expunged mail (interrupted fallback) is not fetched again."""
    for n in range(4):
        dovecot.deliver(user, make_mail(n))
    client = dovecot.imap_client(user)
    first = min(client.search("ALL"))
    client.add_flags([first], [b"\\Deleted"])
    client.logout()
    mails = make_inbox().fetch_new(limit=2)
    assert [message_id(m) for m in mails] == ["<order-1@players.test>", "<order-2@players.test>"]


def test_idle_wakes_on_delivery_before_the_idle_cycle_ends(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """wait() returns True on an LMTP delivery made while it idles, told by the server within
    the IDLE round (its idle_check returns the EXISTS), not at the round's end; and False
    after a quiet timeout. The IDLE tests decide by what the client saw, never by the clock."""
    inbox = make_inbox(idle_cycle=5, idle_check=0)
    assert inbox.has_idle
    assert inbox.wait(0.3) is False
    client = inbox._client
    assert client is not None
    real_idle, real_check = client.idle, client.idle_check
    checks: list[tuple[float | None, list[Any]]] = []

    def idle_then_deliver() -> Any:
        started = real_idle()  # the server said "+ idling": the delivery comes during the round
        if not checks:
            dovecot.deliver(user, make_mail(1))
        return started

    def recorded_check(timeout: float | None = None) -> Any:
        responses = real_check(timeout=timeout)
        checks.append((timeout, list(responses)))
        return responses

    client.idle = idle_then_deliver
    client.idle_check = recorded_check
    assert inbox.wait(10) is True
    assert len(checks) == 1, checks  # one round: woken within it, not at its end (5 s)
    assert any(isinstance(r, tuple) and r[1:2] == (b"EXISTS",) for r in checks[0][1]), checks
    assert len(inbox.fetch_new()) == 1


def test_a_long_wait_is_cut_into_idle_cycles_each_closed_with_done(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """wait(0.7) with 0.2 s cycles: several IDLE/DONE rounds, then False (nothing came)."""
    inbox = make_inbox(idle_cycle=0.2)
    inbox.connect()
    client = inbox._client
    assert client is not None
    rounds: list[str] = []
    real_idle, real_check, real_done = client.idle, client.idle_check, client.idle_done

    def counting_idle() -> Any:
        rounds.append("idle")
        return real_idle()

    def counting_check(timeout: float | None = None) -> Any:
        assert timeout is not None and 0 < timeout <= 0.2, timeout  # no round longer than its cycle
        rounds.append("check")
        return real_check(timeout=timeout)

    def counting_done() -> Any:
        rounds.append("done")
        return real_done()

    client.idle, client.idle_check, client.idle_done = counting_idle, counting_check, counting_done
    assert inbox.wait(0.7) is False
    assert len(rounds) >= 9 and rounds == ["idle", "check", "done"] * (len(rounds) // 3), rounds
    assert inbox.fetch_new() == []  # the connection is still in a usable state


def counted(client: object, name: str, calls: list[str], after: Callable[[], None] | None = None) -> None:
    """Count the calls of one of the client's commands (and do `after` once the command is done)."""
    real = getattr(client, name)

    def command(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)
        calls.append(name)
        if after is not None:
            after()
        return result

    setattr(client, name, command)


def test_news_the_server_holds_back_during_idle_are_reported_by_the_same_cycle(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Confirmation latency: Dovecot tells an idling client of a change only 500 ms
    after the first one (and the bot's own moves start that wait again), so an order waited
    for the next half-second. With idle_check each cycle ends with DONE and a NOOP, and the
    NOOP makes the server report what it held back: a mail delivered just after IDLE began
    is reported by that cycle, not a later one."""
    inbox = make_inbox(idle_check=0.1)
    inbox.connect()
    calls: list[str] = []
    delivered: list[int] = []

    def deliver_once() -> None:
        if not delivered:
            dovecot.deliver(user, make_mail(1))  # LMTP: Dovecot has stored it when this returns
            delivered.append(1)

    for name in ("idle_done", "noop"):
        counted(inbox._client, name, calls)
    counted(inbox._client, "idle", calls, after=deliver_once)
    assert inbox.wait(30) is True
    assert delivered and calls.count("idle") == 1  # the same cycle
    assert [message_id(m) for m in inbox.fetch_new()] == ["<order-1@players.test>"]


@pytest.mark.parametrize("check", [0.0, 0.2])
def test_each_idle_cycle_ends_with_done_and_a_noop_unless_the_check_is_0(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox], check: float
) -> None:
    """idle_check > 0: every cycle is IDLE, DONE, NOOP (at most `check` s in IDLE); 0: IDLE and
    DONE alone, cycles of `idle_cycle`, no NOOP ever (a server that does not hold news back)."""
    inbox = make_inbox(idle_cycle=0.2, idle_check=check)
    inbox.connect()
    calls: list[str] = []
    for name in ("idle", "idle_done", "noop"):
        counted(inbox._client, name, calls)
    assert inbox.wait(0.7) is False
    assert calls.count("idle") >= 3
    if check:
        assert calls == ["idle", "idle_done", "noop"] * calls.count("idle")
    else:
        assert calls == ["idle", "idle_done"] * calls.count("idle")
    assert inbox.fetch_new() == []


def test_the_bots_own_move_is_no_news_to_the_idle_check(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """After the poll moves a mail out of the INBOX while others stay there, Dovecot answers the
    idle check's NOOP with the EXPUNGE and the INBOX's new RECENT count: no mail came, so the
    wait does not wake the poll again for it (only EXISTS is new mail, RFC 3501 7.3.1)."""
    for n in range(3):
        dovecot.deliver(user, make_mail(n))
    waiter = make_inbox(idle_check=0.1)
    mover = make_inbox()
    waiter.connect()
    assert waiter.wait(0.3) is False  # the three mails are known to the waiter's session
    mover.mark_done([mover.fetch_new(limit=1)[0].key], Folder.PROCESSED)
    calls: list[str] = []
    counted(waiter._client, "noop", calls)
    assert waiter.wait(0.5) is False
    assert calls  # the NOOP that reports the move was sent
    assert len(waiter.fetch_new()) == 2


def test_without_idle_wait_polls(dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]) -> None:
    """A server without IDLE: wait() polls with NOOP and still notices new mail."""
    inbox = make_inbox(poll_interval=0.1)
    inbox.connect()
    inbox._capabilities = inbox._capabilities - {"IDLE"}
    assert inbox.wait(0.3) is False
    timer = threading.Timer(0.2, dovecot.deliver, (user, make_mail(1)))
    timer.start()
    try:
        assert inbox.wait(10) is True
    finally:
        timer.join()


@pytest.fixture
def private_dovecot() -> Iterator[Dovecot]:
    """A Dovecot of its own, to kill without disturbing the other tests."""
    with Dovecot() as server:
        server.add_user("bot@flagman.test", "pw")
        yield server


def test_dovecot_killed_during_idle_raises_then_recovers(
    private_dovecot: Dovecot, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Killed mid-IDLE: wait() notices at once, gives up after N reconnects with a clear
    error; after a restart the same inbox works again."""
    dc = private_dovecot
    sleeps: list[float] = []
    inbox = make_inbox(
        server=dc,
        login="bot@flagman.test",
        idle_cycle=2,
        reconnect_attempts=3,
        sleep=lambda s: sleeps.append(s),
    )
    inbox.connect()
    client = inbox._client
    assert client is not None
    rounds: list[str] = []
    real_idle = client.idle

    def idle_then_kill() -> Any:
        started = real_idle()
        rounds.append("idle")
        dc.kill()  # killed mid-IDLE
        return started

    client.idle = idle_then_kill
    with pytest.raises(ImapUnavailable, match="unreachable after 3 attempts"):
        inbox.wait(30)
    assert rounds == ["idle"]  # noticed at the end of the round it died in (2 s), not at wait()'s 30 s
    assert sleeps == [0.05, 0.1]  # exponential backoff between the 3 attempts

    dc.restart()
    dc.deliver("bot@flagman.test", make_mail(1))
    assert [message_id(m) for m in inbox.fetch_new()] == ["<order-1@players.test>"]


def test_dovecot_restarted_during_idle_reconnects_within_a_cycle(
    private_dovecot: Dovecot, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Killed and back within the backoff: wait() reconnects and reports possible news."""
    dc = private_dovecot
    inbox = make_inbox(
        server=dc,
        login="bot@flagman.test",
        idle_cycle=2,
        reconnect_attempts=8,
        backoff_initial=0.1,
        backoff_max=0.4,
    )
    inbox.connect()
    client = inbox._client
    assert client is not None
    rounds: list[str] = []
    real_idle = client.idle

    def idle_then_crash_and_come_back() -> Any:
        started = real_idle()
        rounds.append("idle")
        dc.kill()
        dc.restart()
        return started

    client.idle = idle_then_crash_and_come_back
    assert inbox.wait(30) is True
    assert rounds == ["idle"]  # reconnected after the round the server died in, not at wait()'s 30 s
    assert inbox._client is not client  # a new connection
    dc.deliver("bot@flagman.test", make_mail(7))
    assert [message_id(m) for m in inbox.fetch_new()] == ["<order-7@players.test>"]


def test_unreachable_server_backs_off_exponentially_up_to_the_cap(make_inbox: Callable[..., ImapInbox]) -> None:
    """No server: N attempts, sleeps doubling up to backoff_max, then ImapUnavailable."""
    sleeps: list[float] = []
    inbox = ImapInbox(
        "127.0.0.1",
        free_port(),
        "u",
        "p",
        security="none",
        reconnect_attempts=5,
        backoff_initial=0.1,
        backoff_max=0.3,
        sleep=sleeps.append,
    )
    with pytest.raises(ImapUnavailable):
        inbox.fetch_new()
    assert sleeps == [0.1, 0.2, 0.3, 0.3]


def test_wrong_password_is_a_login_error_not_retried(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Refused credentials raise ImapLoginError at once; check() names the problem."""
    sleeps: list[float] = []
    inbox = ImapInbox(dovecot.host, dovecot.imap_port, user, "wrong", security="none", sleep=sleeps.append)
    with pytest.raises(ImapLoginError):
        inbox.fetch_new()
    assert sleeps == []
    problems = inbox.check()
    assert len(problems) == 1 and "login" in problems[0] and user in problems[0]


def test_check_reports_missing_folders_and_ensure_folders_creates_them(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """check() lists missing folders when it may not create them; ensure_folders() fixes it."""
    assert make_inbox().check() == []
    strict = make_inbox(processed_folder="Done", failed_folder="Broken", create_folders=False)
    problems = strict.check()
    assert any("'Done'" in p for p in problems) and any("'Broken'" in p for p in problems)
    assert sorted(strict.ensure_folders()) == ["Broken", "Done"]
    assert strict.check() == []
    assert "IDLE" in strict.capabilities() and "MOVE" in strict.capabilities()


def test_a_missing_inbox_or_target_folder_is_a_clear_error(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """No such inbox folder: ImapError naming it (check() too); moving into a missing
    folder: ImapError, and the mails stay in the inbox."""
    from bot.mail_in.imap import ImapError

    missing = make_inbox(folder="Nope", create_folders=False)
    with pytest.raises(ImapError, match="'Nope' is missing"):
        missing.fetch_new()
    assert [p for p in missing.check() if "'Nope'" in p]

    dovecot.deliver(user, make_mail(1))
    nowhere = make_inbox(processed_folder="Gone", create_folders=False)
    mails = nowhere.fetch_new()
    with pytest.raises(ImapError):
        nowhere.mark_done([m.key for m in mails])
    assert [m.key for m in nowhere.fetch_new()] == [m.key for m in mails]


def test_check_reports_an_unreachable_server() -> None:
    """check() on a port nobody listens on: one problem naming host and port, no raise."""
    port = free_port()
    problems = ImapInbox("127.0.0.1", port, "u", "p", security="none").check()
    assert len(problems) == 1 and f"127.0.0.1:{port}" in problems[0]


@pytest.fixture(scope="module")
def tls_dovecot() -> Iterator[Dovecot]:
    """A Dovecot with a self-signed certificate: IMAPS, and STARTTLS on the IMAP port."""
    with Dovecot(tls=True) as server:
        server.add_user("bot@flagman.test", "pw")
        yield server


@pytest.mark.parametrize("security", ["tls", "starttls"])
def test_tls_and_starttls_connections_work(tls_dovecot: Dovecot, security: Literal["tls", "starttls"]) -> None:
    """Implicit TLS (IMAPS) and STARTTLS both log in and fetch, verifying the certificate."""
    import ssl

    dc = tls_dovecot
    dc.deliver("bot@flagman.test", make_mail(1))
    port = dc.imaps_port if security == "tls" else dc.imap_port
    context = ssl.create_default_context(cafile=str(dc.cert))
    with ImapInbox(dc.host, port, "bot@flagman.test", "pw", security=security, ssl_context=context) as inbox:
        assert inbox.check() == []
        mails = inbox.fetch_new()
        assert [message_id(m) for m in mails] == ["<order-1@players.test>"]
        inbox.mark_done([m.key for m in mails])


def test_an_untrusted_certificate_is_a_clear_error_not_retried(tls_dovecot: Dovecot) -> None:
    """With the system CAs the self-signed certificate fails: ImapError at once; check() says so."""
    from bot.mail_in.imap import ImapError

    sleeps: list[float] = []
    inbox = ImapInbox(
        tls_dovecot.host,
        tls_dovecot.imaps_port,
        "bot@flagman.test",
        "pw",
        security="tls",
        sleep=sleeps.append,
    )
    with pytest.raises(ImapError, match="certificate not trusted"):
        inbox.fetch_new()
    assert sleeps == []
    (problem,) = inbox.check()
    assert "CERTIFICATE_VERIFY_FAILED" in problem


def test_mark_done_never_moves_on_foreign_or_malformed_keys(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """Property: keys of another UIDVALIDITY, or not keys at all, move nothing, never raise."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    for n in range(3):
        dovecot.deliver(user, make_mail(n))
    inbox = make_inbox()
    mails = inbox.fetch_new()
    validity = inbox.uidvalidity
    uids = [int(m.key.split(":")[1]) for m in mails]
    foreign = st.builds(
        lambda v, u: f"{v}:{u}",
        st.integers(min_value=0, max_value=2**32).filter(lambda v: v != validity),
        st.sampled_from(uids) | st.integers(min_value=1, max_value=10**6),
    )
    junk = st.text(max_size=12).filter(lambda k: not k.startswith(f"{validity}:"))

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(foreign | junk, max_size=6))
    def check(keys: list[str]) -> None:
        inbox.mark_done(keys)
        assert [m.key for m in inbox.fetch_new()] == [m.key for m in mails]

    check()


def test_prune_deletes_processed_mail_the_server_received_before_the_day_given(
    dovecot: Dovecot, user: str, make_inbox: Callable[..., ImapInbox]
) -> None:
    """ "the IMAP Processed folder grows forever". Mail appended to Processed with
    server dates 40 and 10 days ago: pruning what came before 30 days ago deletes the first,
    keeps the second, and leaves the INBOX alone."""
    inbox = make_inbox(create_folders=True)
    inbox.fetch_new()  # connects and makes the folders
    now = datetime.now(UTC)
    client = dovecot.imap_client(user, folder=None)
    try:
        client.append("Processed", make_mail(1), msg_time=now - timedelta(days=40))
        client.append("Processed", make_mail(2), msg_time=now - timedelta(days=10))
    finally:
        client.logout()
    dovecot.deliver(user, make_mail(3))
    pruner = make_inbox()
    # What `flagman doctor` counts (read-only, nothing changed) is what the prune then takes.
    assert pruner.count_older(Folder.PROCESSED, now - timedelta(days=30)) == 1
    assert pruner.count_older(Folder.PROCESSED, now - timedelta(days=5)) == 2
    assert folder_count(dovecot, user, "Processed") == 2
    assert pruner.prune(Folder.PROCESSED, now - timedelta(days=30)) == 1
    assert folder_count(dovecot, user, "Processed") == 1
    assert folder_count(dovecot, user, "INBOX") == 1
    assert pruner.prune(Folder.PROCESSED, now - timedelta(days=30)) == 0


def test_an_outage_is_one_warning_and_its_end_one_more(
    private_dovecot: Dovecot, make_inbox: Callable[..., ImapInbox], caplog: pytest.LogCaptureFixture
) -> None:
    """ "39 "connection attempt n/5" warnings in 75 s of IMAP outage ... under
    `journalctl -p warning`. One warning per outage, one "works again"". The server killed:
    two inboxes (the poll's and IDLE's) try again and again; the log has one warning for it,
    and one as the server is back."""
    import logging

    dc = private_dovecot
    inboxes = [
        make_inbox(server=dc, login="bot@flagman.test", reconnect_attempts=3, sleep=lambda s: None) for _ in range(2)
    ]
    for inbox in inboxes:
        inbox.connect()
    dc.kill()
    caplog.set_level(logging.DEBUG, logger="bot.mail_in.imap")
    for _ in range(3):
        for inbox in inboxes:
            inbox.close()
            with pytest.raises(ImapUnavailable):
                inbox.fetch_new()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "cannot be reached" in warnings[0], warnings
    assert sum("connection attempt" in r.getMessage() for r in caplog.records) == 2 * 3 * 3 - 1  # the rest: debug
    dc.restart()
    for inbox in inboxes:
        inbox.fetch_new()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2 and "works again after 18 failed connection attempts" in warnings[1], warnings
