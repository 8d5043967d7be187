"""The IMAP inbox: `ImapInbox` implements `bot.mail_in.inbox.Inbox` over imapclient.

Mail is fetched by UID in batches and keyed ``"<uidvalidity>:<uid>"``. Fetching changes
nothing (``BODY.PEEK[]``); only `mark_done`, called after the commit, moves mail out of the
inbox, one ``UID MOVE`` per batch (performance.md: per-mail MOVE is the expensive part).

Exceptions::

    ImapError                 anything this adapter raises on purpose; also an untrusted
    │                         TLS certificate or a folder that cannot be selected
    ├── ImapLoginError        the server refused the credentials (not retried)
    └── ImapUnavailable       the server could not be reached after N attempts

A dropped connection is retried with exponential backoff (capped); every operation here is
safe to repeat: fetching changes nothing, and a repeated MOVE of UIDs already moved moves
nothing. If the UIDVALIDITY changed meanwhile (folder recreated), `mark_done` ignores keys of
the old validity: those mails come back from the next fetch under new keys, and the service
skips them as duplicates by Message-ID and hash, so nothing is lost or done twice.
"""

from __future__ import annotations

import imaplib
import logging
import ssl
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from datetime import UTC, datetime
from typing import Literal, TypeVar

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError, LoginError

from bot.mail_in.inbox import HEADER_CAP, Folder, RawMail, header_section
from bot.safe_text import error_text

log = logging.getLogger(__name__)


class Outages:
    """What the log says of an IMAP server that cannot be reached: one warning as the outage
    begins (the first attempt that fails), the attempts after it at debug, and one warning as
    it works again, however many connections (the poll's, IDLE's, the doctor's) try meanwhile."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down: dict[tuple[str, int], tuple[float, int]] = {}  # server -> (since, attempts failed)

    def failed(self, host: str, port: int, attempt: int, attempts: int, exc: BaseException) -> None:
        with self._lock:
            since, count = self._down.get((host, port), (time.time(), 0))
            self._down[(host, port)] = (since, count + 1)
        if count == 0:
            log.warning(
                "IMAP %s:%s cannot be reached: %s; trying again with back-off (said once until it works again)",
                host,
                port,
                error_text(exc),
            )
        else:
            log.debug("IMAP %s:%s: connection attempt %d/%d failed: %s", host, port, attempt, attempts, exc)

    def works(self, host: str, port: int) -> None:
        with self._lock:
            down = self._down.pop((host, port), None)
        if down is not None:
            since, count = down
            log.warning(
                "IMAP %s:%s works again after %d failed connection attempt%s over %.0f s",
                host,
                port,
                count,
                "" if count == 1 else "s",
                time.time() - since,
            )


OUTAGES = Outages()

Security = Literal["tls", "starttls", "none"]
T = TypeVar("T")

# Errors that mean "the connection is gone": reconnect and try again.
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    imaplib.IMAP4.abort,  # imapclient's IMAPClientAbortError is this class
    OSError,  # socket errors, timeouts, ssl.SSLError, ConnectionResetError
    EOFError,
)


class ImapError(Exception):
    """Something went wrong talking to the IMAP server."""


class ImapLoginError(ImapError):
    """The server refused the username or password."""


class ImapUnavailable(ImapError):  # noqa: N818 - named for what happened, as Refused
    """The server could not be reached or kept dropping the connection."""


def _forget_responses(client: IMAPClient) -> None:
    """Drop the untagged responses imaplib kept and nobody reads.

    imaplib keeps every untagged response no command asked for (one ``* n EXPUNGE`` per mail
    a UID MOVE moved, a COPYUID per batch, EXISTS/RECENT news) until the connection closes,
    so a service that stays connected would grow by an entry a mail, forever (found by
    tests/e2e/test_soak.py). Nothing here reads them once a command has completed; SELECT
    flushes them anyway.
    """
    kept = getattr(getattr(client, "_imap", None), "untagged_responses", None)
    if isinstance(kept, dict):
        kept.clear()


def _received_at(value: object) -> datetime | None:
    """An INTERNALDATE as imapclient returns it, as an aware UTC datetime.

    None when the server sent none, or one imapclient could not parse (it gives None), or
    one without a zone offset (``-0000``: then it is no moment, and guessing a zone could
    move a mail across a deadline by hours).
    """
    if not isinstance(value, datetime) or value.utcoffset() is None:
        return None
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):  # e.g. year 1 at +0100: before datetime.min in UTC
        return None


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ImapInbox:
    """An IMAP folder as the bot's inbox. Connects lazily, on first use.

    One connection, so one thread at a time: a thread that waits in IDLE needs an instance
    of its own (IDLE occupies the connection).
    """

    def __init__(
        self,
        host: str,
        port: int | None = None,
        username: str = "",
        password: str = "",
        *,
        security: Security = "tls",
        folder: str = "INBOX",
        processed_folder: str = Folder.PROCESSED.value,
        failed_folder: str = Folder.FAILED.value,
        max_size: int = 10 * 1024 * 1024,
        batch_size: int = 100,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        create_folders: bool = True,
        reconnect_attempts: int = 5,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        idle_cycle: float = 60.0,
        idle_check: float = 0.0,
        poll_interval: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if security not in ("tls", "starttls", "none"):
            raise ValueError(f"security must be tls, starttls or none, not {security!r}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.host = host
        self.port = port if port is not None else (993 if security == "tls" else 143)
        self.username = username
        self.password = password
        self.security: Security = security
        self.folder = folder
        self.folders = {Folder.PROCESSED: processed_folder, Folder.FAILED: failed_folder}
        self.max_size = max_size
        self.batch_size = batch_size
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.create_folders = create_folders
        self.reconnect_attempts = max(1, reconnect_attempts)
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        # RFC 2177 wants IDLE renewed within 29 min; short cycles also notice a dead
        # connection sooner (idle_done raises, see `wait`).
        self.idle_cycle = min(idle_cycle, 60.0)
        # > 0: each IDLE cycle lasts at most this long and ends with DONE and a NOOP (see `_idle`).
        self.idle_check = max(0.0, idle_check)
        self.poll_interval = poll_interval
        self._sleep = sleep
        self._client: IMAPClient | None = None
        self._capabilities: frozenset[str] = frozenset()
        self.uidvalidity: int | None = None

    # -- connection --------------------------------------------------------------------------
    def _open(self) -> IMAPClient:
        """One connection attempt: connect, log in, make folders, select the inbox."""
        context = self.ssl_context
        if context is None and self.security != "none":
            context = ssl.create_default_context()
        client = IMAPClient(
            self.host,
            self.port,
            ssl=self.security == "tls",
            ssl_context=context,
            timeout=self.timeout,
        )
        # INTERNALDATE as sent, with its zone offset. imapclient's default (True) turns it
        # into a naive local time by today's UTC offset, which is an hour off for a date on
        # the other side of a DST change; `_received_at` makes it UTC.
        client.normalise_times = False
        try:
            if self.security == "starttls":
                client.starttls(context)
            try:
                client.login(self.username, self.password)
            except LoginError as exc:
                raise ImapLoginError(
                    f"IMAP login as {self.username!r} at {self.host}:{self.port} refused: {exc}"
                ) from exc
            # Capabilities change after login (RFC 3501 7.2.1): read them now.
            self._capabilities = frozenset(c.decode("ascii", "replace").upper() for c in client.capabilities())
            if self.create_folders:
                self._ensure_folders(client)
            try:
                selected = client.select_folder(self.folder)
            except imaplib.IMAP4.abort:
                raise
            except IMAPClientError as exc:
                raise ImapError(f"IMAP folder {self.folder!r} is missing or cannot be selected: {exc}") from exc
            uidvalidity = int(selected[b"UIDVALIDITY"])
            if self.uidvalidity is not None and uidvalidity != self.uidvalidity:
                log.warning(
                    "UIDVALIDITY of %s changed from %s to %s: mail fetched before is "
                    "returned again under new keys (duplicates are skipped by Message-ID)",
                    self.folder,
                    self.uidvalidity,
                    uidvalidity,
                )
            self.uidvalidity = uidvalidity
        except BaseException:
            self._shutdown(client)
            raise
        return client

    @staticmethod
    def _shutdown(client: IMAPClient) -> None:
        try:
            client.shutdown()
        except Exception:  # noqa: BLE001 - the connection is being thrown away anyway
            pass

    def _drop(self) -> None:
        if self._client is not None:
            self._shutdown(self._client)
            self._client = None

    def _backoff(self, attempt: int) -> float:
        return float(min(self.backoff_max, self.backoff_initial * 2.0**attempt))

    def _connect(self) -> IMAPClient:
        """The open connection, or a new one: up to N attempts with exponential backoff."""
        if self._client is not None:
            return self._client
        last: BaseException | None = None
        for attempt in range(self.reconnect_attempts):
            if attempt:
                self._sleep(self._backoff(attempt - 1))
            try:
                self._client = self._open()
                OUTAGES.works(self.host, self.port)
                return self._client
            except ssl.SSLCertVerificationError as exc:
                # A configuration problem, not an outage: retrying cannot help.
                raise ImapError(f"IMAP server {self.host}:{self.port}: TLS certificate not trusted: {exc}") from exc
            except _CONNECTION_ERRORS as exc:
                last = exc
                OUTAGES.failed(self.host, self.port, attempt + 1, self.reconnect_attempts, exc)
            except IMAPClientError as exc:  # a NO/BAD while setting up, e.g. CREATE refused
                raise ImapError(f"IMAP server {self.host}:{self.port}: {exc}") from exc
        raise ImapUnavailable(
            f"IMAP server {self.host}:{self.port} unreachable after "
            f"{self.reconnect_attempts} attempts: {error_text(last) if last else 'no attempt'}"
        ) from last

    def _run(self, operation: Callable[[IMAPClient], T]) -> T:
        """Run `operation` on a live connection; on a dropped connection reconnect and retry.

        Every operation given here is idempotent, so a retry after an unknown outcome is safe.
        """
        last: BaseException | None = None
        for attempt in range(self.reconnect_attempts):
            if attempt:
                self._sleep(self._backoff(attempt - 1))
            client = self._connect()
            try:
                return operation(client)
            except _CONNECTION_ERRORS as exc:
                last = exc
                log.info("IMAP connection lost (%s); reconnecting", exc)
                self._drop()
            except IMAPClientError as exc:  # the server answered NO or BAD
                raise ImapError(f"IMAP server {self.host}:{self.port}: {exc}") from exc
        raise ImapUnavailable(
            f"IMAP server {self.host}:{self.port} kept dropping the connection: {error_text(last) if last else '-'}"
        ) from last

    def prune(self, folder: Folder, before: datetime) -> int:
        """Delete the mails of `folder` (Processed, say) the server received before `before`
        (IMAP SEARCH BEFORE: by INTERNALDATE, to the day), then expunge them; how many. Meant
        for an inbox of its own: the session is left with `folder` selected."""
        target = self.folders[folder]

        def operation(client: IMAPClient) -> int:
            client.select_folder(target)
            uids = sorted(int(u) for u in client.search(["BEFORE", before.date()]))
            for batch in _chunks(uids, self.batch_size):
                client.delete_messages(list(batch), silent=True)
                if self._has("UIDPLUS"):
                    client.uid_expunge(list(batch))
                else:
                    client.expunge()
            _forget_responses(client)
            return len(uids)

        return self._run(operation)

    def count_older(self, folder: Folder, before: datetime) -> int:
        """How many mails of `folder` the server received before `before` (by INTERNALDATE, to
        the day, as `prune` takes them); the folder is examined read-only, nothing is changed.
        Meant for an inbox of its own: the session is left with `folder` selected."""
        target = self.folders[folder]

        def operation(client: IMAPClient) -> int:
            client.select_folder(target, readonly=True)
            found = len(client.search(["BEFORE", before.date()]))
            _forget_responses(client)
            return found

        return self._run(operation)

    def connect(self) -> None:
        """Connect now (otherwise the first operation does)."""
        self._connect()

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            try:
                client.logout()
            except Exception:  # noqa: BLE001 - logging out of a dead connection
                self._shutdown(client)

    def __enter__(self) -> ImapInbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- capabilities and folders ------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        """The server's capabilities after login, upper-case (connects if needed)."""
        self._connect()
        return self._capabilities

    @property
    def has_idle(self) -> bool:
        return "IDLE" in self.capabilities()

    def _has(self, capability: str) -> bool:
        return capability in self._capabilities

    def _ensure_folders(self, client: IMAPClient) -> list[str]:
        created = []
        for name in self.folders.values():
            if not client.folder_exists(name):
                try:
                    client.create_folder(name)
                except IMAPClientError:
                    # Created by someone else in between: fine; anything else shows next.
                    if not client.folder_exists(name):
                        raise
                created.append(name)
                log.info("created IMAP folder %s", name)
        return created

    def ensure_folders(self) -> list[str]:
        """Create the Processed/Failed folders where missing; returns the ones created."""
        return self._run(self._ensure_folders)

    # -- Inbox -------------------------------------------------------------------------------
    def fetch_new(self, limit: int = 100, *, skip: Collection[str] = ()) -> list[RawMail]:
        """Up to `limit` mails still in the inbox, oldest (lowest UID) first, but for those
        whose keys are in `skip` (a batch in hand, still in the inbox).

        SEARCH for the UIDs, FETCH the sizes, then ``BODY.PEEK[]`` (which leaves ``\\Seen``
        alone) in batches, only for mails within `max_size`; bigger ones come back with
        ``data=None`` and only their header section (``BODY.PEEK[HEADER]``, capped), so the
        service can answer them without downloading them.

        Every mail, over-cap or not, carries its INTERNALDATE as `received_at` (UTC), fetched
        with the sizes, so it costs no extra command. mail-interface.md: "Deadlines are
        judged by when the mail server received the mail (IMAP INTERNALDATE, the Maildir
        delivery time), not by when the bot reads it."
        """
        if limit <= 0:
            return []
        return self._run(lambda client: self._fetch(client, limit, skip))

    def _fetch(self, client: IMAPClient, limit: int, skip: Collection[str] = ()) -> list[RawMail]:
        # Done mail is moved out, so whatever is here is new, in UID order = sequence order.
        # Searching the first `limit` sequence numbers (and as many more as are skipped)
        # keeps a 50,000-mail inbox from costing 50,000 UIDs per poll.
        self._sync(client)
        skipped = self._uids_of(skip)
        uids = sorted(int(u) for u in client.search([f"1:{limit + len(skipped)}"]) if int(u) not in skipped)[:limit]
        sizes, received, deleted = self._sizes(client, uids)
        if deleted:
            # Mail flagged \Deleted but not yet expunged (the COPY fallback of `_move`,
            # interrupted) is already copied out: skip it, and look past it.
            uids = sorted(int(u) for u in client.search(["UNDELETED"]) if int(u) not in skipped)[:limit]
            sizes, received, _ = self._sizes(client, uids)
        uidvalidity = self.uidvalidity
        mails: list[RawMail] = []
        for batch in _chunks([uid for uid in uids if uid in sizes], self.batch_size):
            wanted = [uid for uid in batch if sizes[uid] <= self.max_size]
            bodies: dict[int, bytes] = {}
            if wanted:
                for uid, item in client.fetch(wanted, ["BODY.PEEK[]"]).items():
                    body = item.get(b"BODY[]")
                    if body is not None:
                        bodies[int(uid)] = bytes(body)
            big = [uid for uid in batch if sizes[uid] > self.max_size]
            heads = self._headers(client, big) if big else {}
            for uid in batch:
                if sizes[uid] <= self.max_size and uid not in bodies:
                    continue  # expunged by someone else meanwhile
                mails.append(
                    RawMail(
                        key=f"{uidvalidity}:{uid}",
                        data=bodies.get(uid),
                        size=sizes[uid],
                        headers=heads.get(uid),
                        received_at=received.get(uid),
                    )
                )
        _forget_responses(client)
        return mails

    @staticmethod
    def _headers(client: IMAPClient, uids: Sequence[int]) -> dict[int, bytes]:
        """The header sections of over-cap mails, each at most HEADER_CAP bytes (a partial
        FETCH, RFC 3501 6.4.5), so that the service can tell a player their mail was too big
        without the body ever being downloaded."""
        heads: dict[int, bytes] = {}
        for uid, item in client.fetch(list(uids), [f"BODY.PEEK[HEADER]<0.{HEADER_CAP}>"]).items():
            for key, value in item.items():
                if isinstance(key, bytes) and key.startswith(b"BODY[HEADER]") and value is not None:
                    heads[int(uid)] = header_section(bytes(value))
        return heads

    def _sizes(
        self, client: IMAPClient, uids: Sequence[int]
    ) -> tuple[dict[int, int], dict[int, datetime | None], bool]:
        """UID -> RFC822.SIZE and UID -> INTERNALDATE (UTC, or None) for the mails not
        flagged \\Deleted; and whether any was. One FETCH per batch for all three."""
        sizes: dict[int, int] = {}
        received: dict[int, datetime | None] = {}
        deleted = False
        for batch in _chunks(uids, self.batch_size):
            items = ["RFC822.SIZE", "FLAGS", "INTERNALDATE"]
            for uid, item in client.fetch(list(batch), items).items():
                if b"\\Deleted" in item.get(b"FLAGS", ()):
                    deleted = True
                elif b"RFC822.SIZE" in item:
                    sizes[int(uid)] = int(item[b"RFC822.SIZE"])
                    received[int(uid)] = _received_at(item.get(b"INTERNALDATE"))
        return sizes, received, deleted

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        """Move the mails to `folder`: one UID MOVE per batch.

        Keys of another UIDVALIDITY (the folder was recreated since the fetch) and malformed
        keys are ignored: their UIDs may now name other mail.
        """
        if not keys:
            return
        target = self.folders[folder]
        self._run(lambda client: self._move(client, keys, target))

    def _sync(self, client: IMAPClient) -> None:
        """NOOP, so that the session is in step with the mailbox before UIDs are used.

        A session sees mail delivered since its last command only once the server has
        announced it (EXISTS; Dovecot does that at the end of a command). And a session must
        not act on UIDs of a mailbox whose UIDVALIDITY changed: Dovecot executes a UID MOVE
        with the stale UIDs first and only then drops the session. The NOOP makes it notice
        (and drop us) before; a server that reports ``[UIDVALIDITY n]`` instead makes us
        reconnect here. Either way `_run` reconnects and the new UIDVALIDITY is read.
        """
        _, responses = client.noop()
        for response in responses or ():
            text = response[1] if isinstance(response, tuple) and len(response) > 1 else response
            if isinstance(text, bytes) and b"[UIDVALIDITY " in text.upper():
                value = text.upper().split(b"[UIDVALIDITY ", 1)[1].split(b"]", 1)[0]
                if value.isdigit() and int(value) != self.uidvalidity:
                    raise imaplib.IMAP4.abort(f"UIDVALIDITY changed to {int(value)}")

    def _split_keys(self, keys: Collection[str]) -> tuple[list[int], int]:
        """The UIDs the keys name in the mailbox as it is now, and how many keys were of an
        old UIDVALIDITY (their UIDs may now name other mail)."""
        uids: list[int] = []
        stale = 0
        for key in keys:
            validity, _, uid = key.partition(":")
            if not (validity.isdigit() and uid.isdigit()):
                log.warning("ignoring malformed IMAP key %r", key)
                continue
            if int(validity) != self.uidvalidity:
                stale += 1
                continue
            uids.append(int(uid))
        return uids, stale

    def _uids_of(self, keys: Collection[str]) -> set[int]:
        return set(self._split_keys(keys)[0]) if keys else set()

    def _move(self, client: IMAPClient, keys: Sequence[str], target: str) -> None:
        self._sync(client)
        uids, stale = self._split_keys(keys)
        if stale:
            log.warning(
                "ignoring %d key(s) of an old UIDVALIDITY of %s (now %s): those mails will "
                "be fetched again and skipped as duplicates",
                stale,
                self.folder,
                self.uidvalidity,
            )
        uids = sorted(set(uids))
        for batch in _chunks(uids, self.batch_size):
            if self._has("MOVE"):
                client.move(list(batch), target)  # RFC 6851 UID MOVE: atomic
            else:
                client.copy(list(batch), target)
                client.add_flags(list(batch), [b"\\Deleted"], silent=True)
                if self._has("UIDPLUS"):
                    client.uid_expunge(list(batch))  # RFC 4315: only these UIDs
                else:
                    client.expunge()
        _forget_responses(client)

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` s for new mail; True if some came (or may have come).

        With IDLE: cycles of at most `idle_cycle` s, each ALWAYS closed with ``idle_done``:
        on a dead socket imapclient's ``idle_check`` just returns nothing, forever, while
        ``idle_done`` raises, so a dead server is noticed within one cycle. Then reconnect
        (raising `ImapUnavailable` after N attempts) and return True: mail may have come
        while the connection was down. Without IDLE: NOOP every `poll_interval` s.

        With `idle_check` > 0 each cycle lasts at most that long and ends with DONE and a
        NOOP, which makes the server report at once what it holds back from an idling
        client (Dovecot tells of a change only 500 ms after the first one, and the bot's own
        moves after each poll start that wait again); 0: IDLE alone.
        """
        deadline = time.monotonic() + max(0.0, timeout)
        try:
            client = self._connect()
            if self._has("IDLE"):
                return self._idle(client, deadline)
            return self._poll(client, deadline)
        except _CONNECTION_ERRORS as exc:
            log.warning("IMAP connection lost while waiting (%s); reconnecting", exc)
            self._drop()
            self._connect()
            return True
        except IMAPClientError as exc:  # the server answered NO or BAD
            self._drop()  # the session may be stuck in IDLE: start clean next time
            raise ImapError(f"IMAP server {self.host}:{self.port}: {exc}") from exc

    @staticmethod
    def _news(responses: Sequence[object]) -> bool:
        """New mail: an EXISTS (RFC 3501 7.3.1: sent when mail is added). Not RECENT alone: after
        the bot's own move Dovecot reports the INBOX's new RECENT count, which is no new mail."""
        for response in responses:
            if isinstance(response, tuple) and len(response) >= 2:
                if response[1] == b"EXISTS" and response[0] != 0:
                    return True
        return False

    def _idle(self, client: IMAPClient, deadline: float) -> bool:
        cycle = min(self.idle_cycle, self.idle_check) if self.idle_check > 0 else self.idle_cycle
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            client.idle()
            responses: list[object] = []
            try:
                # What the server sends right after "+ idling" may sit in imaplib's read buffer,
                # where idle_check's select() cannot see it: it comes out with idle_done.
                responses = list(client.idle_check(timeout=min(cycle, left)))
            finally:
                # Always: this is what raises on a dead connection (see `wait`).
                done = client.idle_done()
            if self._news(responses) or self._news(list(done[1] or [])):
                return True
            if self.idle_check > 0 and self._news(list(client.noop()[1] or [])):
                return True

    def _poll(self, client: IMAPClient, deadline: float) -> bool:
        while True:
            response = client.noop()
            if self._news(list(response[1] or [])):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._sleep(min(self.poll_interval, left))

    # -- doctor ------------------------------------------------------------------------------
    def check(self) -> list[str]:
        """Problems an operator must fix (empty when all is well): login, folders, IDLE."""
        problems: list[str] = []
        try:
            client = self._open()
        except ImapError as exc:  # login refused, inbox folder missing
            return [str(exc)]
        except (IMAPClientError, *_CONNECTION_ERRORS) as exc:
            return [f"cannot use IMAP server {self.host}:{self.port} ({self.security}): {exc}"]
        try:
            for name in (self.folder, *self.folders.values()):
                if not client.folder_exists(name):
                    problems.append(f"IMAP folder {name!r} is missing")
            if "IDLE" not in self._capabilities:
                problems.append(
                    "the IMAP server does not advertise IDLE: new mail is noticed only by "
                    f"polling every {self.poll_interval:g} s"
                )
            if "MOVE" not in self._capabilities:
                problems.append("the IMAP server lacks MOVE: done mail is moved by COPY + EXPUNGE (slower)")
        except (IMAPClientError, *_CONNECTION_ERRORS) as exc:
            problems.append(f"IMAP server {self.host}:{self.port} failed during the check: {exc}")
        finally:
            try:
                client.logout()
            except Exception:  # noqa: BLE001 - the check is over either way
                self._shutdown(client)
        return problems


__all__ = ["ImapError", "ImapInbox", "ImapLoginError", "ImapUnavailable", "Security"]
