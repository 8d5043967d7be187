"""Where mail comes from: the Inbox protocol, and the embedded default, a Maildir.

A mail is fetched, its effect committed, and only then marked done (moved to Processed or
Failed). A crash between the commit and the move leaves it in the inbox; the next fetch
returns it again and the service skips it as a duplicate (its key is already recorded).
"""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


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
    """

    key: str
    data: bytes | None
    size: int
    headers: bytes | None = None


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
    def fetch_new(self, limit: int = 100) -> list[RawMail]:
        """Up to `limit` mails not yet marked done, oldest first. Fetching changes nothing."""
        ...

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        """Move the mails out of the inbox into `folder`. Unknown keys are ignored."""
        ...

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` seconds for new mail (IMAP IDLE); True if some may have come."""
        ...

    def close(self) -> None: ...


class MaildirInbox:
    """A Maildir (``cur/ new/ tmp/``) as the inbox; done mail moves to ``.Processed``/``.Failed``.

    This is the layout Dovecot and most MDAs write, so a local MTA can deliver straight in.
    """

    def __init__(self, path: Path, max_size: int = 10 * 1024 * 1024) -> None:
        self.path = Path(path)
        self.max_size = max_size
        for sub in ("new", "cur", "tmp"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)
        for folder in Folder:
            for sub in ("new", "cur", "tmp"):
                (self.path / f".{folder.value}" / sub).mkdir(parents=True, exist_ok=True)

    def _pending(self) -> list[Path]:
        files = [p for sub in ("new", "cur") for p in (self.path / sub).iterdir() if p.is_file()]
        # Maildir names start with the delivery time: sorting by (mtime, name) is arrival order.
        return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))

    def fetch_new(self, limit: int = 100) -> list[RawMail]:
        mails = []
        for path in self._pending()[:limit]:
            size = path.stat().st_size
            if size <= self.max_size:
                mails.append(RawMail(key=path.name, data=path.read_bytes(), size=size))
                continue
            with path.open("rb") as handle:  # over the cap: the header only, never the body
                head = header_section(handle.read(HEADER_CAP))
            mails.append(RawMail(key=path.name, data=None, size=size, headers=head))
        return mails

    def mark_done(self, keys: Sequence[str], folder: Folder = Folder.PROCESSED) -> None:
        wanted = set(keys)
        target = self.path / f".{folder.value}" / "cur"
        for sub in ("new", "cur"):
            for path in (self.path / sub).iterdir():
                if path.name in wanted:
                    os.replace(path, target / path.name)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any((self.path / sub).iterdir() for sub in ("new",)):
                return True
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        return False

    def close(self) -> None:
        pass


def deliver_to_maildir(path: Path, data: bytes, *, clock_ns: int | None = None) -> Path:
    """Write one mail into a Maildir the way an MDA does (tmp/ then rename into new/)."""
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
