"""When the database or the disk fails: which way it failed, in one line, with its fix.

A command that meets such a failure says so in two lines (what failed, what to do) and exits
with the status of its kind (bot.cli.servers); the service logs one line per back-off step
(bot.daemon.backoff); `flagman migrate` and `flagman doctor` say the same. The kinds:

| cause       | what happened                                                        | status |
|-------------|----------------------------------------------------------------------|--------|
| UNREACHABLE | the database server cannot be reached or refused us; an SQLite file that cannot be opened for another reason (no such folder) | 3 |
| DISK_FULL   | no space left: SQLite's "database or disk is full", ENOSPC, a quota, PostgreSQL's disk_full | 4 |
| READ_ONLY   | a file or folder this user may not write (SQLite's database, its ``-wal`` and ``-shm`` files and their folder), a read-only file system, a read-only PostgreSQL | 4 |
| DAMAGED     | SQLite's "database disk image is malformed" or "file is not a database"; PostgreSQL's data_corrupted | 4 |
| IO_ERROR    | a disk I/O error that is neither of the above (a failing disk)      | 4 |

Status 4 (`STORAGE`) is this machine's storage, or the database server's: what fixes it is
space, permissions or a backup, never a URL or a password; status 3 (`UNREACHABLE`) stays
what it was, a server that cannot be reached.

SQLite says "disk I/O error" for some writes on a full disk (growing its ``-shm``): an I/O
error where the file system has less than `FULL_BELOW` bytes left is counted as a full disk.

A leaf: it imports SQLAlchemy's and the drivers' exceptions only to tell them apart, and
only those already loaded (as bot.cli.servers does).
"""

from __future__ import annotations

import enum
import errno
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.host.unit import credentials_dir

if TYPE_CHECKING:
    from sqlalchemy import Engine

UNREACHABLE = 3  # exit status: a server cannot be reached (bot.cli.servers)
STORAGE = 4  # exit status: the disk is full, something cannot be written, or the database is damaged

# `flagman doctor`: below MIN_FREE bytes free where the database (SQLite) or the Maildirs are is
# a problem (a deadline's mail, the database growing, a migration's copy of a table need room);
# below LOW_FREE a warning.
MIN_FREE = 64 * 1024 * 1024
LOW_FREE = 512 * 1024 * 1024
FULL_BELOW = 1024 * 1024  # an I/O error with less than this free is a full disk

# SQLite's primary result codes (sqlite3.h), as `sqlite3.Error.sqlite_errorcode & 0xff`.
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 3, 5, 6, 8
_SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 10, 11, 13, 14, 26


# PostgreSQL's SQLSTATEs of storage (psycopg raises them as InternalError and the like, not
# OperationalError): read-only transaction, disk full, data and index corrupted.
_STORAGE_STATES = frozenset({"25006", "53100", "XX001", "XX002"})


class Cause(enum.Enum):
    UNREACHABLE = "unreachable"
    DISK_FULL = "disk full"
    READ_ONLY = "read-only"
    DAMAGED = "damaged"
    IO_ERROR = "I/O error"


@dataclass(frozen=True, slots=True)
class Breakdown:
    """A failure of the database or the disk: `text` says what failed and why (one line),
    `fix` what to do."""

    cause: Cause
    text: str
    fix: str
    area: str = "database"  # what failed: "database", or "disk" (a file the service writes)

    @property
    def status(self) -> int:
        return UNREACHABLE if self.cause is Cause.UNREACHABLE else STORAGE

    def lines(self) -> list[str]:
        return [self.text, self.fix]

    def one_line(self) -> str:
        return f"{self.text}; {self.fix}"


# -- the words of an exception ------------------------------------------------------------------


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return seen


def reason_of(exc: BaseException) -> str:
    """The driver's or the system's own words, one line (SQLAlchemy's wrapper adds the statement)."""
    inner = getattr(exc, "orig", None) or exc
    text = " ".join(str(inner).split()) or type(inner).__name__
    return text[:300]


def _sqlite_code(exc: BaseException) -> int | None:
    for link in _chain(exc):
        code = getattr(link, "sqlite_errorcode", None)
        if isinstance(code, int) and type(link).__module__.startswith("sqlite3"):
            return code & 0xFF
    return None


def _sqlstate(exc: BaseException) -> str:
    for link in _chain(exc):
        state = getattr(link, "sqlstate", None)
        if isinstance(state, str) and state:
            return state
    return ""


def _os_error(exc: BaseException) -> OSError | None:
    for link in _chain(exc):
        if isinstance(link, OSError) and link.errno is not None:
            return link
    return None


def _is_database_error(exc: BaseException) -> bool:
    """SQLAlchemy's OperationalError or plain DatabaseError, or sqlite3's (a raw connection); not
    IntegrityError, ProgrammingError and the like: those are the code's mistakes."""
    for module in ("sqlalchemy.exc", "sqlite3"):
        loaded = sys.modules.get(module)
        operational = getattr(loaded, "OperationalError", None)
        database = getattr(loaded, "DatabaseError", None)
        if isinstance(operational, type) and isinstance(exc, operational):
            return True
        if isinstance(database, type) and type(exc) is database:
            return True
    return False


def safe_url(url: str) -> str:
    """A database URL as it may be shown: the password hidden."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is shown as a placeholder, never raw
        return "(unparsable database URL)"


# -- the file system ---------------------------------------------------------------------------


def free_bytes(path: Path) -> int | None:
    """The bytes an unprivileged user may still write on the file system holding `path` (or
    its nearest existing parent); None if that cannot be told."""
    existing = _existing(path)
    try:
        st = os.statvfs(existing)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(_existing(path)).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _existing(path: Path) -> Path:
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def sizes(count: int) -> str:
    """Bytes as people say them: 0 bytes, 312 KiB, 41 MiB, 2.3 GiB."""
    if count < 1024:
        return f"{count} bytes"
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 10 and unit == "GiB" else f"{value:.0f} {unit}"
    return f"{count} bytes"  # not reached


def owner_of(path: Path) -> str:
    """ "owner user:group, mode 0644" of `path` ("" if it cannot be told)."""
    try:
        st = path.stat()
    except OSError:
        return ""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        user = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return f"owner {user}:{group}, mode {stat.S_IMODE(st.st_mode):04o}"


def _writable_file(path: Path) -> bool:
    """Can this process open `path` for writing? (an open that writes nothing)"""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS)
    os.close(fd)
    return True


def _writable_dir(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)


def me() -> str:
    """This process's user, as the messages name it."""
    import pwd

    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def sqlite_files(path: Path) -> list[Path]:
    """The database file and the ones SQLite keeps beside it in WAL mode."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def unwritable(path: Path) -> list[str]:
    """What SQLite must write and this user may not: the folder, the database file, its
    ``-wal`` and ``-shm`` files (each that exists), each with its owner and mode."""
    found = []
    folder = path.parent
    if folder.is_dir() and not _writable_dir(folder):
        found.append(f"the folder {folder} ({owner_of(folder)})")
    for file in sqlite_files(path):
        if file.exists() and not _writable_file(file):
            found.append(f"{file} ({owner_of(file)})")
    return found


def writable_fix(path: Path) -> str:
    """The fix for SQLite files this user may not write."""
    folder = path.parent
    files = f"{folder}/{path.name}*"
    return (
        f"SQLite writes the database, its -wal and -shm files and their folder: give them to the user the "
        f"service runs as, writable by it (as root: `chown --reference={folder} {files}; chmod u+rw {files}`), "
        "and run commands as the service does (`flagmanctl ...`), not as another user"
    )


# -- what failed ---------------------------------------------------------------------------------


def _database_name(url: str | None) -> str:
    return "the database" if url is None else f"the database {safe_url(url)}"


class StorageFault(Exception):  # noqa: N818 - named for what happened, as Refused
    """A failure of the storage found by a check of ours rather than raised by the driver (the
    pages of an SQLite file that fail its quick_check); `found` says what and what to do."""

    def __init__(self, found: Breakdown) -> None:
        super().__init__(found.text)
        self.found = found


def check_intact(engine: Engine, url: str) -> None:
    """SQLite: the file passes its quick_check, else StorageFault (DAMAGED). It reads the whole
    file once (about a second per few hundred MB): `flagman migrate` and `flagman run` do it at
    the start, so that damage found nowhere else (pages in the middle overwritten, the header and
    schema intact) stops them rather than the first job that reads there. PostgreSQL checks its
    own pages as it reads them (data_corrupted)."""
    from bot.host.instance import sqlite_path

    path = sqlite_path(url)
    if path is None:
        return
    found = quick_check(engine, 3)
    if found:
        raise StorageFault(
            Breakdown(
                Cause.DAMAGED,
                f"{_database_name(url)} is damaged: SQLite's quick_check says: " + "; ".join(found)[:300],
                damaged_fix(path),
            )
        )


def breakdown(exc: BaseException, url: str | None = None) -> Breakdown | None:
    """What failed, if `exc` is a failure of the database (`url`: the one in use) or of the
    disk; None for anything else (a bug, a mail server)."""
    from bot.host.instance import sqlite_path

    if isinstance(exc, StorageFault):
        return exc.found
    path = sqlite_path(url) if url else None
    oserr = _os_error(exc)
    if _is_database_error(exc) or _sqlstate(exc) in _STORAGE_STATES:
        return _database(exc, url, path)
    if oserr is not None and not _is_network(oserr):
        return _disk(oserr)
    return None


def _is_network(exc: OSError) -> bool:
    return isinstance(exc, ConnectionError | TimeoutError) or exc.errno in (
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
    )


def _database(exc: BaseException, url: str | None, path: Path | None) -> Breakdown:
    name = _database_name(url)
    reason = reason_of(exc)
    code = _sqlite_code(exc)
    state = _sqlstate(exc)
    oserr = _os_error(exc)
    folder = path.parent if path is not None else None
    where = f" ({folder})" if folder is not None else ""
    if code == _SQLITE_FULL or state == "53100" or (oserr is not None and oserr.errno in (errno.ENOSPC, errno.EDQUOT)):
        return _full(name, reason, folder)
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or state in ("XX001", "XX002"):
        return Breakdown(Cause.DAMAGED, f"{name} is damaged: {reason}", damaged_fix(path))
    if code == _SQLITE_IOERR:
        free = free_bytes(folder) if folder is not None else None
        if free is not None and free < FULL_BELOW:
            return _full(name, reason, folder)
        if path is not None and read_only_fs(path.parent):
            return _read_only(name, reason, path)
        return Breakdown(
            Cause.IO_ERROR,
            f"{name} cannot be read or written{where}: {reason}",
            "the disk may be failing: look for I/O errors in the kernel's log (`journalctl -k -p err`, "
            "`dmesg`), check its free space (`df -h`), then `flagman doctor`",
        )
    if code in (_SQLITE_READONLY, _SQLITE_PERM, _SQLITE_CANTOPEN) and path is not None:
        if read_only_fs(path.parent) or unwritable(path):
            return _read_only(name, reason, path)
    if state == "25006" or (state == "42501" and url is not None and not url.startswith("sqlite")):
        return Breakdown(
            Cause.READ_ONLY,
            f"{name} refuses to be written: {reason}",
            "the server is read-only (a standby, or default_transaction_read_only) or this user may not "
            "write the tables: point [database] url at the primary, or grant the user the rights "
            "(it must own the tables `flagman migrate` made)",
        )
    if code == _SQLITE_READONLY:
        return Breakdown(
            Cause.READ_ONLY,
            f"{name} cannot be written: {reason}",
            "SQLite writes the database, its -wal and -shm files and their folder: check that the user "
            "the service runs as owns them all (`ls -l` them), and run commands as the service does "
            "(`flagmanctl ...`)",
        )
    return Breakdown(Cause.UNREACHABLE, f"cannot use {name}: {reason}", database_hint(reason, path is not None))


def database_hint(reason: str, url_is_sqlite: bool) -> str:
    """The fix for a database that cannot be reached, by what the driver said."""
    lower = reason.lower()
    if url_is_sqlite:
        return (
            "check [database] url and that the service user may read and write the file, its -wal and -shm "
            "files and its directory"
        )
    if (
        "could not translate host name" in lower
        or "failed to resolve host" in lower
        or "name or service not known" in lower
    ):
        return "the host in [database] url does not resolve: check the name, and DNS on this machine"
    if "connection refused" in lower:
        return (
            "nothing accepts connections at the host and port of [database] url: check them, that PostgreSQL "
            "runs (`systemctl status postgresql`) and listens there (listen_addresses and port in postgresql.conf)"
        )
    if "does not exist" in lower and "database" in lower:
        return (
            "the server has no such database: create it (`sudo -u postgres createdb --owner=flagman flagman`) "
            "or fix the name at the end of [database] url"
        )
    return (
        f"check [database] url, that the server runs and accepts this user, and {credentials_dir()}/db-password "
        "(it replaces {password} in the url)"
    )


def _full(name: str, reason: str, folder: Path | None) -> Breakdown:
    if folder is None:  # PostgreSQL: the server's disk
        return Breakdown(
            Cause.DISK_FULL,
            f"{name}: the database server's disk is full: {reason}",
            "free space on the PostgreSQL server's disk (its data directory); nothing was committed, "
            "so the work is done again once there is room",
        )
    free = free_bytes(folder)
    left = f" ({sizes(free)} free)" if free is not None else ""
    return Breakdown(
        Cause.DISK_FULL,
        f"{name}: the disk is full{left}: {reason}",
        f"free space on the file system of {folder} (`df -h {folder}`, `du -xsh {folder}/*`); nothing "
        "was committed, so the work is done again once there is room",
    )


def _read_only(name: str, reason: str, path: Path) -> Breakdown:
    if read_only_fs(path.parent):
        return Breakdown(
            Cause.READ_ONLY,
            f"{name} cannot be written: the file system of {path.parent} is mounted read-only: {reason}",
            "a file system is made read-only after disk errors: look in the kernel's log (`journalctl -k "
            "-p err`), repair it, and mount it read-write again (`mount -o remount,rw ...`)",
        )
    found = unwritable(path)
    what = "; ".join(found) if found else f"{path} or its folder"
    return Breakdown(Cause.READ_ONLY, f"{name} cannot be written by {me()}: {what}: {reason}", writable_fix(path))


def damaged_fix(path: Path | None) -> str:
    if path is None:
        return (
            "PostgreSQL found damaged data: see its log, then restore the latest pg_dump backup "
            "(OPERATING.md, section 8)"
        )
    return (
        f"stop the service (`systemctl stop flagman`), keep the damaged file aside for a look "
        f"(`cp -p {path}* /root/`), and restore the latest good backup over it (`flagmanctl restore FILE`, "
        "OPERATING.md section 8); `flagman doctor` runs SQLite's integrity check"
    )


def _disk(exc: OSError) -> Breakdown | None:
    found = _disk_cause(exc)
    return None if found is None else Breakdown(found.cause, found.text, found.fix, "disk")


def _disk_cause(exc: OSError) -> Breakdown | None:
    where = exc.filename if isinstance(exc.filename, str) else None
    target = f" {where}" if where else ""
    words = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        folder = Path(where).parent if where else None
        free = free_bytes(folder) if folder is not None else None
        left = f" ({sizes(free)} free)" if free is not None else ""
        fix = (
            f"free space on the file system of {folder} (`df -h {folder}`, `du -xsh {folder}/*`)"
            if folder
            else "free space on the disk (`df -h`)"
        )
        return Breakdown(
            Cause.DISK_FULL,
            f"the disk is full{left}: cannot write{target}: {words}",
            fix + "; what was not written is done again once there is room",
        )
    if exc.errno == errno.EROFS:
        return Breakdown(
            Cause.READ_ONLY,
            f"cannot write{target}: the file system is mounted read-only",
            "a file system is made read-only after disk errors: look in the kernel's log (`journalctl -k "
            "-p err`), repair it, and mount it read-write again",
        )
    if exc.errno in (errno.EACCES, errno.EPERM) and where:
        place = Path(where)
        owner = owner_of(place) or owner_of(place.parent)
        return Breakdown(
            Cause.READ_ONLY,
            f"{me()} may not write {where}" + (f" ({owner})" if owner else "") + f": {words}",
            "give it (and its folder) to the user the service runs as, and run commands as the service "
            "does (`flagmanctl ...`); the service may write only under /var/lib/flagman",
        )
    if exc.errno == errno.EIO:
        return Breakdown(
            Cause.IO_ERROR,
            f"a disk I/O error{(' on' + target) if where else ''}: {words}",
            "the disk may be failing: look for I/O errors in the kernel's log (`journalctl -k -p err`)",
        )
    return None


# -- probes (flagman doctor, the service's start) ------------------------------------------------


def write_probe(engine: Engine) -> None:
    """A write in a transaction that is rolled back: raises what the database says if it cannot
    be written (on SQLite the transaction begins IMMEDIATE, which takes the write lock: a
    database, -wal or -shm this user may not write fails there; bot.db.make_engine)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            conn.execute(text("update alembic_version set version_num = version_num"))
        finally:
            transaction.rollback()


def quick_check(engine: Engine, most: int = 10) -> list[str]:
    """SQLite's quick_check (the pages and the rows, not the indexes' contents; it reads the
    whole file once): [] when the database is intact, else what it found."""
    with engine.connect() as conn:
        rows = [str(row[0]) for row in conn.exec_driver_sql(f"PRAGMA quick_check({int(most)})")]
    return [] if rows == ["ok"] else rows
