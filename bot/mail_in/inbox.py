"""Where mail comes from: the Inbox protocol, and the embedded default, a Maildir.

A mail is fetched, its effect committed, and only then marked done (moved to Processed or
Failed). A crash between the commit and the move leaves it in the inbox; the next fetch
returns it again and the service skips it as a duplicate (its key is already recorded).
"""

from __future__ import annotations

import enum
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Generic, Protocol, TypeVar


class Folder(enum.Enum):
    PROCESSED = "Processed"
    FAILED = "Failed"


@dataclass(frozen=True, slots=True)
class RawMail:
    """One mail as the server holds it.

    `key` identifies it in this inbox for `mark_done` (IMAP: ``"<uidvalidity>:<uid>"``;
    Maildir: the file name). `data` is None when the mail is over the size cap and was not
    fetched; `size` is the server's size in bytes either way. `headers` is the header
    section of such an over-cap mail (at most `HEADER_CAP` bytes), so the service can tell
    whether a registered player sent it (mail-interface.md: answered once, briefly, if the
    sender is a player); None when the mail was fetched whole or the header is unknown.

    `received_at` is when the mail server received the mail, an aware UTC datetime (IMAP:
    the INTERNALDATE; Maildir: the delivery time), over-cap mail included; None when the
    server did not say. mail-interface.md: "Deadlines are judged by when the mail server
    received the mail (IMAP INTERNALDATE, the Maildir delivery time), not by when the bot
    reads it."
    """

    key: str
    data: bytes | None
    size: int
    headers: bytes | None = None
    received_at: datetime | None = None

    def __post_init__(self) -> None:
        # A naive time would only fail later, in a comparison with a deadline, far from here.
        if self.received_at is not None and self.received_at.utcoffset() is None:
            raise ValueError(f"received_at must be timezone-aware, not {self.received_at!r}")


log = logging.getLogger("flagman.inbound")
Parsed = TypeVar("Parsed")  # what ReadAhead's `parse` makes of a batch

# The most of an over-cap mail's header section that is read (a real header is a few kB).
HEADER_CAP = 64 * 1024


def header_section(data: bytes, cap: int = HEADER_CAP) -> bytes:
    """The header section of `data` (up to and including the blank line), at most `cap` bytes."""
    head = data[:cap]
    ends = [i for i in (head.find(b"\r\n\r\n"), head.find(b"\n\n")) if i >= 0]
    if not ends:
        return head
    end = min(ends)
    return head[: end + (4 if head[end : end + 4] == b"\r\n\r\n" else 2)]


class Inbox(Protocol):
    def fetch_new(self, limit: int = 100, *, skip: Collection[str] = ()) -> list[RawMail]:
        """Up to `limit` mails not yet marked done, oldest first, leaving out the ones whose
        keys are in `skip` (a batch in hand, not yet marked done: the next one is read while
        it is handled). Fetching changes nothing."""
        ...

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        """Move the mails out of the inbox into `folder`. Unknown keys are ignored."""
        ...

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` seconds for new mail (IMAP IDLE); True if some may have come."""
        ...

    def close(self) -> None: ...


class ReadAhead(Generic[Parsed]):
    """The next batch, fetched in a thread of its own while the batch in hand is handled (the
    mail server works while the bot does; performance.md: ingest), then parsed there with
    `parse` (`bot.mail_in.parse_worker`: in a worker process, on another core). `skip`: the keys
    of the batch in hand, still in the inbox. The inbox is used by this thread alone until
    `wait` returns (the fetch is over): the caller moves the batch in hand only after that."""

    def __init__(
        self, inbox: Inbox, limit: int, skip: Collection[str], parse: Callable[[list[RawMail]], Parsed] | None = None
    ) -> None:
        self._mails: list[RawMail] = []
        self._parsed: Parsed | None = None
        self._error: BaseException | None = None
        self._fetched = threading.Event()
        self._thread = threading.Thread(
            target=self._fetch, args=(inbox, limit, frozenset(skip), parse), name="read-ahead", daemon=True
        )
        self._thread.start()

    def _fetch(
        self, inbox: Inbox, limit: int, skip: frozenset[str], parse: Callable[[list[RawMail]], Parsed] | None
    ) -> None:
        try:
            self._mails = inbox.fetch_new(limit, skip=skip)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread by `result`
            self._error = exc
        finally:
            self._fetched.set()
        if parse is not None and self._error is None and self._mails:
            try:
                self._parsed = parse(self._mails)
            except Exception:  # the batch is parsed again by the caller
                log.warning("the batch read ahead could not be parsed there; it is parsed when handled", exc_info=True)

    def wait(self) -> None:
        """Until the fetch is over (the parse may still run: it does not use the inbox)."""
        self._fetched.wait()

    def result(self) -> list[RawMail]:
        """The mails fetched; what the fetch raised is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._mails

    def parsed(self) -> Parsed | None:
        """`parse` of the mails fetched, in order; None when there was nothing to parse or it failed."""
        self._thread.join()
        return self._parsed


class MaildirMissing(ValueError):  # noqa: N818 - named for what happened, as Refused
    """The Maildir named as the inbox is not there."""


class MaildirInbox:
    """A Maildir (``cur/ new/ tmp/``) as the inbox; done mail moves to ``.Processed``/``.Failed``.

    This is the layout Dovecot and most MDAs write, so a local MTA can deliver straight in.
    """

    def __init__(self, path: Path, max_size: int = 10 * 1024 * 1024, *, create: bool = True) -> None:
        """`create`: make the Maildir where there is none. The service's inbox is made on first
        use only (`bot.app.build_app`): once mail was read from it, a Maildir that vanished
        (deleted, or its disk not mounted) is reported (`MaildirMissing`), not replaced by an
        empty one that the mail server does not deliver to."""
        self.path = Path(path)
        self.max_size = max_size
        if not create and not self.path.is_dir():
            raise MaildirMissing(
                f"the inbox Maildir {self.path} is not there (deleted, moved, or its disk not mounted): "
                "mail delivered to it would never be read; restore it, or check [inbox] path "
                "(`flagman init` makes a new one)"
            )
        for sub in ("new", "cur", "tmp"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)
        for folder in Folder:
            for sub in ("new", "cur", "tmp"):
                (self.path / f".{folder.value}" / sub).mkdir(parents=True, exist_ok=True)

    def _pending(self) -> list[Path]:
        files = [p for sub in ("new", "cur") for p in (self.path / sub).iterdir() if p.is_file()]
        # Maildir names start with the delivery time: sorting by (mtime, name) is arrival order.
        return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))

    def fetch_new(self, limit: int = 100, *, skip: Collection[str] = ()) -> list[RawMail]:
        """Up to `limit` mails (not in `skip`), each with its delivery time as `received_at`.

        mail-interface.md: "Deadlines are judged by when the mail server received the mail
        (IMAP INTERNALDATE, the Maildir delivery time), not by when the bot reads it." The
        delivery time is the one at the start of the file name (`maildir_delivery_time`);
        for a file not named the Maildir way, its modification time.
        """
        mails = []
        for path in [p for p in self._pending() if p.name not in skip][:limit]:
            stat = path.stat()
            size = stat.st_size
            received = maildir_delivery_time(path.name) or _from_ns(stat.st_mtime_ns)
            if size <= self.max_size:
                mails.append(RawMail(key=path.name, data=path.read_bytes(), size=size, received_at=received))
                continue
            with path.open("rb") as handle:  # over the cap: the header only, never the body
                head = header_section(handle.read(HEADER_CAP))
            mails.append(RawMail(key=path.name, data=None, size=size, headers=head, received_at=received))
        return mails

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        wanted = set(keys)
        target = self.path / f".{folder.value}" / "cur"
        for sub in ("new", "cur"):
            for path in (self.path / sub).iterdir():
                if path.name in wanted:
                    os.replace(path, target / path.name)

    def prune(self, folder: Folder, before: datetime) -> int:
        """Delete the mails of `folder` (Processed, say) delivered before `before`; how many."""
        gone = 0
        for path in list(older_in_maildir(self.path, folder, before)):
            path.unlink(missing_ok=True)
            gone += 1
        return gone

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any((self.path / sub).iterdir() for sub in ("new",)):
                return True
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        return False

    def close(self) -> None:
        pass


def older_in_maildir(root: Path, folder: Folder, before: datetime) -> Iterator[Path]:
    """The mails of the Maildir `root`'s `folder` delivered before `before` (the time their file
    names start with, else their modification time); none if the folder is not there."""
    for sub in ("cur", "new"):
        directory = root / f".{folder.value}" / sub
        if not directory.is_dir():
            continue
        for path in directory.iterdir():
            if not path.is_file():
                continue
            delivered = maildir_delivery_time(path.name) or _from_ns(path.stat().st_mtime_ns)
            if delivered < before:
                yield path


# A Maildir file name: "<seconds>.<unique>.<host>", then ":2,<flags>" once in cur/
# (https://cr.yp.to/proto/maildir.html). The seconds are the delivery time.
_MAILDIR_NAME = re.compile(r"(\d{1,12})\.([^.]+)\.[^.]")
# In the unique part, "M<n>" is the sub-second part of the same clock reading: microseconds,
# unpadded, in the standard and as Dovecot writes it ("1796123259.M939790P9544.host"); nine
# digits of nanoseconds in the names `deliver_to_maildir` writes.
_FRACTION = re.compile(r"M(\d+)")


def maildir_delivery_time(name: str) -> datetime | None:
    """The delivery time a Maildir file name starts with (aware UTC); None if it has none.

    ``1796123259.M000000250P77Q3.flagman`` (`deliver_to_maildir`: nanoseconds) and
    ``1796123259.M250P77.host,S=268:2,S`` (Dovecot: microseconds) both give the second
    1796123259 plus 250 ns (truncated to the microsecond) or 250 us. A fraction of neither
    width is ignored (whole seconds); a name of another form gives None.
    """
    match = _MAILDIR_NAME.match(name)
    if match is None:
        return None
    micros = 0
    fraction = _FRACTION.search(match.group(2))
    if fraction is not None:
        digits = fraction.group(1)
        if len(digits) == 9:
            micros = int(digits) // 1000
        elif len(digits) <= 6:
            micros = int(digits)
    try:
        return datetime.fromtimestamp(int(match.group(1)), UTC) + timedelta(microseconds=micros)
    except (OverflowError, OSError, ValueError):  # seconds beyond what a datetime holds
        return None


def _from_ns(ns: int) -> datetime:
    """A POSIX time in nanoseconds (a file's st_mtime_ns) as an aware UTC datetime."""
    seconds, rest = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC) + timedelta(microseconds=rest // 1000)


def deliver_to_maildir(path: Path, data: bytes, *, clock_ns: int | None = None) -> Path:
    """Write one mail into a Maildir the way an MDA does (tmp/ then rename into new/).

    `clock_ns` (default: now) is the delivery time; it goes into the name, from which
    `MaildirInbox.fetch_new` reads it back as `received_at`.
    """
    path = Path(path)
    for sub in ("new", "cur", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    stamp = clock_ns if clock_ns is not None else time.time_ns()
    name = f"{stamp // 1_000_000_000}.M{stamp % 1_000_000_000:09d}P{os.getpid()}Q{_next_seq()}.flagman"
    tmp = path / "tmp" / name
    tmp.write_bytes(data)
    final = path / "new" / name
    os.replace(tmp, final)
    return final


_seq = 0


def _next_seq() -> int:
    global _seq
    _seq += 1
    return _seq
