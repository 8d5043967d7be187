"""Backup, restore, export, replay, and copying the database to another one.

- `backup`: SQLite's online backup API (a consistent copy while the service runs, WAL and
  all). For PostgreSQL, pg_dump is the tool: `backup` says so and prints the exact command.
- `backup_into`: a backup named by the time in a directory, the oldest beyond a number pruned
  (`flagman backup --keep N DIR`, which the shipped timer runs daily).
- `restore`: the reverse, for SQLite, refused while a service holds the instance lock.
- `export_game`: one game's whole history as JSON (every turn with its state, seed, orders
  and events; every mail received for it; the GM audit), deterministic (sorted keys), so two
  exports of the same history are byte-identical. Seat passwords and the GM secret are
  left out: an export may be published.
- `replay_game`: re-resolve every resolved turn from what is stored (the state it opened
  with, the orders as the tick saw them, the seed) and compare with the stored result. The
  rules are pure functions of (state, orders, seed), so any difference means the stored
  history was altered or the rules changed behaviour.
- `copy_database`: every table, in dependency order, into an empty database migrated to the
  same revision (SQLite -> PostgreSQL, see deploy/OPERATING.md).
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, Table, func, select, text
from sqlalchemy.orm import Session

from bot.db import Database
from bot.host.instance import InstanceLock, sqlite_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from bot.models import InboundMessage, Seat, Turn


class BackupError(RuntimeError):
    """The backup, restore or copy cannot be done; the message says why and what to do, and
    `status` is the exit status: 1 refused (a file there already, a service running), 2 the
    file given is not a backup (missing, unreadable, something else), 4 storage (a damaged
    database, a full disk, a folder this user may not write: bot.host.storage)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# -- backup and restore ----------------------------------------------------------------------

SQLITE_HEADER = b"SQLite format 3\x00"


def pg_dump_command(url: str, target: Path, *, password_credential: bool = False) -> str:
    """The pg_dump command that backs up this database. The password is never shown: with
    `password_credential` (the configured url has ``{password}``) the command reads it from the
    db-password credential file into PGPASSWORD, as root; else pg_dump asks for it, or takes it
    from ~/.pgpass."""
    from sqlalchemy.engine import make_url

    from bot.host.unit import CREDENTIALS_DIR

    u = make_url(url)
    parts = ["pg_dump", "--format=custom", f"--file={target}"]
    if u.host:
        parts.append(f"--host={u.host}")
    if u.port:
        parts.append(f"--port={u.port}")
    if u.username:
        parts.append(f"--username={u.username}")
    parts.append(u.database or "flagman")
    if password_credential:
        parts.insert(0, f'PGPASSWORD="$(cat {CREDENTIALS_DIR}/db-password)"')
    return " ".join(parts)


def _storage_error(exc: BaseException, what: str, url: str | None = None) -> BackupError:
    """A failure of the disk or of a database file, said as bot.host.storage says it."""
    from bot.host.storage import breakdown, reason_of

    found = breakdown(exc, url)
    if found is None:
        return BackupError(f"{what}: {reason_of(exc)}")
    return BackupError(f"{what}: {found.text}; {found.fix}", found.status)


def verify_sqlite(path: Path) -> str | None:
    """What is wrong with the SQLite file at `path` as a flagman database (SQLite's integrity
    check, then the schema's version table), or None if nothing is."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        try:
            rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)")]
        except sqlite3.DatabaseError as exc:  # too damaged to be checked at all
            return f"SQLite cannot check it: {exc}"
        if rows != ["ok"]:
            return "it fails SQLite's integrity check: " + "; ".join(rows[:3]) + ("; ..." if len(rows) > 3 else "")
        try:
            conn.execute("select version_num from alembic_version").fetchall()
        except sqlite3.OperationalError:
            return "it is an SQLite database but not flagman's (no alembic_version table)"
    finally:
        conn.close()
    return None


def _copy_sqlite(source: Path, target: Path) -> None:
    # The online backup API copies a consistent snapshot page by page, while writers carry on.
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
            # A self-contained file: no -wal beside it is needed to read it.
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    finally:
        src.close()


def _fsync(path: Path, *, directory: bool = False) -> None:
    fd = os.open(path, (os.O_RDONLY | os.O_DIRECTORY) if directory else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def backup(url: str, target: Path, *, password_credential: bool = False) -> Path:
    """A verified copy of the SQLite database at `target`, never over an existing file.

    The copy is made beside the target under a temporary name, checked (SQLite's integrity
    check, the schema's version table: a snapshot of the database as it was, so this checks the
    database itself) and only then given its name: a damaged database gives no backup, and an
    error, and the backups already taken stay the last good ones."""
    path = sqlite_path(url)
    if path is None:
        raise BackupError(
            "this is not a SQLite database: back up PostgreSQL with pg_dump:\n  "
            + pg_dump_command(url, target, password_credential=password_credential)
            + "\n(restore with: pg_restore --clean --if-exists --dbname=DATABASE "
            + str(target)
            + ")"
        )
    if not path.exists():
        raise BackupError(f"no database at {path}", 2)
    target = Path(target)
    if target.exists():
        raise BackupError(f"{target} exists already: choose a new name (a backup never overwrites)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _storage_error(exc, f"cannot make the folder {target.parent}") from exc
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        try:
            _copy_sqlite(path, partial)
        except sqlite3.Error as exc:
            where = url if isinstance(exc, sqlite3.DatabaseError) and not _is_full(exc) else None
            raise _storage_error(exc, f"no backup written to {target}", where) from exc
        except OSError as exc:
            raise _storage_error(exc, f"no backup written to {target}") from exc
        wrong = verify_sqlite(partial)
        if wrong is not None:
            from bot.host.storage import damaged_fix

            raise BackupError(
                f"the database {path} is damaged, {wrong}: no backup written to {target} (the backups "
                f"taken before are the good ones); {damaged_fix(path)}",
                4,
            )
        try:
            _fsync(partial)
            os.link(partial, target)  # fails if the target appeared meanwhile: never overwritten
            _fsync(target.parent, directory=True)
        except FileExistsError as exc:
            raise BackupError(f"{target} exists already: choose a new name (a backup never overwrites)") from exc
        except OSError as exc:
            raise _storage_error(exc, f"no backup written to {target}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return target


# -- backups kept in a directory, the oldest pruned (`flagman backup --keep N DIR`) -----------

# What `backup_into` names its copies: the moment in UTC, and -2, -3 ... for a second one in
# the same second. Nothing else in the directory is ever pruned.
_KEPT_NAME = re.compile(r"flagman-(\d{8}T\d{6}Z)(?:-(\d+))?\.sqlite")


def backup_into(url: str, directory: Path, *, keep: int, now: datetime) -> tuple[Path, tuple[Path, ...]]:
    """A new backup in `directory` named by `now` (flagman-20260601T033000Z.sqlite), then every
    backup of ours but the newest `keep` deleted. Returns the new file and the deleted ones.

    The copy is written under a hidden name and renamed when complete, so a copy that failed
    half-way is never counted as a backup (nor pushes a good one out); nothing is pruned then.
    """
    from bot.clock import as_utc

    if keep < 1:
        raise BackupError(f"--keep {keep}: keep at least 1 backup")
    directory = Path(directory)
    stamp = as_utc(now).strftime("%Y%m%dT%H%M%SZ")
    same_second = [_order(p)[1] for p in kept_backups(directory) if _order(p)[0] == stamp] if directory.is_dir() else []
    number = max(same_second, default=0) + 1
    target = directory / (f"flagman-{stamp}.sqlite" if number == 1 else f"flagman-{stamp}-{number}.sqlite")
    partial = directory / f".{target.name}.partial"
    partial.unlink(missing_ok=True)  # left by a copy that was killed
    try:
        backup(url, partial)
        partial.rename(target)
    finally:
        partial.unlink(missing_ok=True)
    return target, prune_backups(directory, keep, written=target)


def _order(path: Path) -> tuple[str, int]:
    match = _KEPT_NAME.fullmatch(path.name)
    assert match is not None
    return match.group(1), int(match.group(2) or 1)


def kept_backups(directory: Path) -> list[Path]:
    """The backups `backup_into` wrote in `directory`, oldest first (by the time in their names)."""
    return sorted((p for p in Path(directory).iterdir() if _KEPT_NAME.fullmatch(p.name) and p.is_file()), key=_order)


def prune_backups(directory: Path, keep: int, *, written: Path | None = None) -> tuple[Path, ...]:
    """Delete all but the newest `keep` of `kept_backups(directory)`; returns the deleted ones.
    The backup just `written` is never one of them, even when the clock went back and its name
    sorts before the others: the oldest others go instead."""
    backups = kept_backups(directory)
    others = [p for p in backups if p != written]
    doomed = tuple(others[: max(0, len(backups) - keep)])
    for path in doomed:
        path.unlink()
    return doomed


def _is_full(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == 13  # SQLITE_FULL: the target's disk


def _check_source(source: Path) -> None:
    """Is `source` a flagman SQLite backup this user can read? BackupError with the real reason if not."""
    from bot.host.storage import me, owner_of

    try:
        st = source.stat()
    except FileNotFoundError as exc:
        raise BackupError(f"no file at {source}: check the name (`ls -l {source.parent}`)", 2) from exc
    except PermissionError as exc:
        raise BackupError(
            f"{me()} may not look into {source.parent} ({owner_of(source.parent)}): restore from a "
            "file the service's user can read (copy it to /var/lib/flagman/backups/)",
            2,
        ) from exc
    if stat.S_ISDIR(st.st_mode):
        raise BackupError(f"{source} is a folder, not a backup file", 2)
    try:
        with open(source, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except PermissionError as exc:
        raise BackupError(
            f"{me()} may not read {source} ({owner_of(source)}): give it to the service's user "
            f"(as root: `chown --reference={source.parent} {source}`), or copy it to "
            "/var/lib/flagman/backups/ as root and restore from there",
            2,
        ) from exc
    except OSError as exc:
        raise _storage_error(exc, f"cannot read {source}") from exc
    if head.startswith(b"PGDMP"):
        raise BackupError(
            f"{source} is a pg_dump archive, not a SQLite backup: restore it with pg_restore (OPERATING.md, section 8)",
            2,
        )
    if head != SQLITE_HEADER:
        raise BackupError(
            f"{source} is not a flagman backup: not an SQLite database file" + (" (it is empty)" if not head else ""), 2
        )
    try:
        wrong = verify_sqlite(source)
    except sqlite3.Error as exc:
        raise BackupError(f"{source} is not a flagman backup: {exc}", 2) from exc
    if wrong is not None:
        raise BackupError(f"{source} is not a good flagman backup: {wrong}", 2)


@dataclass(frozen=True, slots=True)
class CheckedBackup:
    """What `check_backup` found in a good backup file."""

    path: Path
    size: int
    revision: str
    games: int
    newest: str  # when its newest row was written (a turn resolved or a mail received), or ""
    known: bool  # its revision is one this flagman knows (restore, then migrate)

    def summary(self) -> str:
        return (
            f"{self.path}: a good flagman backup ({self.size} bytes, SQLite's integrity check: ok), "
            f"at revision {self.revision}"
            + ("" if self.known else " (from a newer flagman: restore it with that version)")
            + f", {self.games} game{'' if self.games == 1 else 's'}"
            + (f", newest activity {self.newest}" if self.newest else "")
        )


def check_backup(source: Path) -> CheckedBackup:
    """An existing backup file checked as `restore` would (an SQLite file, SQLite's integrity
    check, flagman's schema), without touching the database: BackupError (status 2) says what
    is wrong with it."""
    from bot.db import revisions

    source = Path(source)
    _check_source(source)
    conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        revision = str(conn.execute("select version_num from alembic_version").fetchone()[0])
        try:
            games = int(conn.execute("select count(*) from game").fetchone()[0])
        except sqlite3.OperationalError:
            games = 0
        newest = ""
        for query in ("select max(resolved_at) from turn", "select max(received_at) from inbound_message"):
            try:
                found = conn.execute(query).fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if found and str(found) > newest:
                newest = str(found)[:19]
    finally:
        conn.close()
    known = revision in {r.revision for r in revisions().walk_revisions()}
    return CheckedBackup(source, source.stat().st_size, revision, games, newest, known)


def _check_target(path: Path) -> None:
    """Can this user put a database at `path` (its folder, the file, its -wal and -shm)?"""
    from bot.host.storage import me, unwritable, writable_fix

    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder != path.parent:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise BackupError(
                f"the database's folder {path.parent} does not exist and {me()} may not make it in "
                f"{folder}: restore as the service's user (`flagmanctl restore FILE`)",
                4,
            )
        return
    found = unwritable(path)
    if found:
        raise BackupError(
            f"{me()} may not write where the database goes: {'; '.join(found)}: nothing was restored; "
            + writable_fix(path),
            4,
        )


def restore(url: str, source: Path, *, lock: InstanceLock | None = None) -> Path:
    """Replace the SQLite database with a backup (the service must be stopped).

    The backup is copied beside the database under a temporary name (mode 0600), then renamed
    over it, its old -wal and -shm files removed first (a -wal left behind would be replayed
    onto the restored file): a damaged database is replaced as well as a good one, and a
    restore that fails half way leaves the database as it was."""
    path = sqlite_path(url)
    if path is None:
        raise BackupError("restore works on SQLite; for PostgreSQL use pg_restore (see deploy/OPERATING.md)", 2)
    source = Path(source)
    _check_source(source)
    _check_target(path)
    if lock is not None and not lock.try_acquire():
        raise BackupError(
            f"a flagman service is running ({lock.description} is held): stop it first (systemctl stop flagman)"
        )
    partial = path.with_name(f".{path.name}.restoring-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600))
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            dst = sqlite3.connect(partial)
            try:
                src.backup(dst)
                dst.execute("PRAGMA journal_mode=DELETE")
            finally:
                dst.close()
        finally:
            src.close()
        _fsync(partial)
        for leftover in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            leftover.unlink(missing_ok=True)
        os.replace(partial, path)
        _fsync(path.parent, directory=True)
    except (sqlite3.Error, OSError) as exc:
        raise _storage_error(exc, f"{path} not restored") from exc
    finally:
        partial.unlink(missing_ok=True)
        if lock is not None:
            lock.release()
    return path


# -- export ----------------------------------------------------------------------------------


def _time(value: datetime | None) -> str | None:
    if value is None:
        return None
    from bot.clock import as_utc

    return as_utc(value).isoformat()


def _exported_turn(
    session: Session, turn: Turn, seats: Mapping[int, Seat], inbound: Mapping[int, InboundMessage]
) -> dict[str, object]:
    """One turn as the export writes it: its states, its events and every order filed for it."""
    from bot.models import OrderSubmission

    subs = session.scalars(
        select(OrderSubmission).where(OrderSubmission.turn_id == turn.id).order_by(OrderSubmission.id)
    )
    return {
        "number": turn.number,
        "label": turn.label,
        "seed": turn.seed,
        "dice_scheme": turn.dice_scheme,
        "state": turn.state,
        "opened_at": _time(turn.opened_at),
        "deadline": _time(turn.deadline),
        "resolved_at": _time(turn.resolved_at),
        "state_after": turn.state_after,
        "events": turn.events,
        "submitted": turn.submitted,
        "orders": [
            {
                "seat": seats[s.seat_id].name if s.seat_id in seats else None,
                "source": s.source,
                "text": s.text,
                "received_at": _time(s.received_at),
                "message_id": inbound[s.inbound_id].message_id
                if s.inbound_id is not None and s.inbound_id in inbound
                else None,
            }
            for s in subs
        ],
    }


def _exported_commitments(session: Session, game_id: int) -> list[dict[str, object]]:
    """The game's commitment log, every entry as made (the chain `flagman verify` checks): a
    secret only once revealed, so an export of a running game gives none away."""
    from bot.models import Commitment, CommitmentFate

    return [
        {
            "seq": c.seq,
            "turn": c.number,
            "label": c.label,
            "commitment": c.commitment,
            "made_at": _time(c.made_at),
            "why": c.why,
            "head": c.head,
            "secret": c.secret if c.fate != CommitmentFate.OPEN else None,
            "revealed_at": _time(c.revealed_at),
            "fate": c.fate,
        }
        for c in session.scalars(select(Commitment).where(Commitment.game_id == game_id).order_by(Commitment.seq))
    ]


def export_game(session: Session, name: str) -> dict[str, object]:
    from bot import store
    from bot.games import turns
    from bot.letters.words import say
    from bot.models import GmAudit, InboundMessage, Seat, Turn

    game = store.find_game_row(session, name)
    if game is None:
        raise turns.GameError(say("game_refused", why="no_game", game=name))
    seats = {s.id: s for s in session.scalars(select(Seat).where(Seat.game_id == game.id).order_by(Seat.id))}
    inbound = {
        m.id: m
        for m in session.scalars(
            select(InboundMessage).where(InboundMessage.game_id == game.id).order_by(InboundMessage.id)
        )
    }
    exported_turns = [
        _exported_turn(session, turn, seats, inbound)
        for turn in session.scalars(select(Turn).where(Turn.game_id == game.id).order_by(Turn.number))
    ]
    return {
        "format": "flagman-export-1",
        "game": {
            "name": game.name,
            "kind": game.kind,
            "status": str(game.status),
            "options": game.options,
            "seed": game.seed,
            "timezone": game.timezone,
            "deadline_spec": game.deadline_spec,
            "grace_minutes": game.grace_minutes,
            "early_resolution": game.early_resolution,
            "gm_address": game.gm_address,
            "created_at": _time(game.created_at),
            "finished_at": _time(game.finished_at),
        },
        "seats": [
            {
                "name": s.name,
                "player": s.player.name,
                "address": s.player.address,
                "active": s.active,
                "nmr_streak": s.nmr_streak,
                "gm_plot": s.gm_plot,
                "handed_over": s.handed_over,
                "joined_at": _time(s.joined_at),
            }
            for s in seats.values()
        ],
        "turns": exported_turns,
        "mail": [
            {
                "message_id": m.message_id,
                "sender": m.sender,
                "subject": m.subject,
                "status": m.status,
                "detail": m.detail,
                "received_at": _time(m.received_at),
                "seat": seats[m.seat_id].name if m.seat_id in seats else None,
            }
            for m in inbound.values()
        ],
        "commitments": _exported_commitments(session, game.id),
        "gm_audit": [
            {
                "actor": a.actor,
                "via": a.via,
                "message_id": a.message_id,
                "command": a.command,
                "outcome": a.outcome,
                "created_at": _time(a.created_at),
            }
            for a in session.scalars(select(GmAudit).where(GmAudit.game_id == game.id).order_by(GmAudit.id))
        ],
    }


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# -- replay ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnReplay:
    number: int
    label: str
    differences: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what is explained by the GM's audited changes

    @property
    def same(self) -> bool:
        return not self.differences


def _utc(value: datetime) -> datetime:
    from bot.clock import as_utc

    return as_utc(value)


def _normal(value: object) -> object:
    """As stored in a JSON column (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value))


def first_differences(stored: object, replayed: object, where: str = "", limit: int = 5) -> list[str]:
    """Where two JSON values differ, as paths, at most `limit` of them."""
    out: list[str] = []

    def walk(a: object, b: object, path: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                if key not in a:
                    out.append(f"{path}.{key}: not stored, replay has {json.dumps(b[key])[:80]}")
                elif key not in b:
                    out.append(f"{path}.{key}: stored {json.dumps(a[key])[:80]}, replay has none")
                else:
                    walk(a[key], b[key], f"{path}.{key}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(f"{path}: stored {len(a)} items, replay {len(b)}")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                walk(x, y, f"{path}[{i}]")
        elif a != b:
            out.append(f"{path}: stored {json.dumps(a)[:80]}, replay {json.dumps(b)[:80]}")

    walk(stored, replayed, where)
    return out


def replay_game(session: Session, name: str) -> list[TurnReplay]:
    from bot import dice, store
    from bot.games import record, turns
    from bot.letters.words import say
    from bot.models import GmAudit, Turn

    game = store.find_game_row(session, name)
    if game is None:
        raise turns.GameError(say("game_refused", why="no_game", game=name))
    rules = turns.rules_of(game)
    # GM commands that change an open turn's state in place (SET, DROP) record the state
    # they replaced in the audit log's `undo`: such a turn legitimately opens from a state
    # other than the previous turn's result.
    changed_by_gm: dict[int, list[tuple[str, object, datetime]]] = {}
    for audit in session.scalars(select(GmAudit).where(GmAudit.game_id == game.id).order_by(GmAudit.id)):
        undo = audit.undo or {}
        if isinstance(undo, dict) and "state" in undo and isinstance(undo.get("turn"), int):
            changed_by_gm.setdefault(undo["turn"], []).append((audit.command, undo["state"], audit.created_at))
    results = []
    resolved = list(
        session.scalars(
            select(Turn).where(Turn.game_id == game.id, Turn.resolved_at.is_not(None)).order_by(Turn.number)
        )
    )
    previous_after: object = None
    for turn in resolved:
        differences: list[str] = []
        notes: list[str] = []
        # The state the turn opened with: the one the first audited GM change replaced, if any.
        # (Only changes made while this turn was open: a ROLLBACK may have deleted an earlier
        # turn of the same number, with its own audited changes.)
        audited = [a for a in changed_by_gm.get(turn.number, []) if _utc(a[2]) >= _utc(turn.opened_at)]
        opened = audited[0][1] if audited else turn.state
        if previous_after is not None and _normal(previous_after) != _normal(opened):
            differences += first_differences(previous_after, opened, "state (vs the previous turn's result)")
        notes += [f"opened from a state the GM changed: {command}" for command, _, _ in audited]
        try:
            state = rules.load_state(turn.state)
            orders = record.orders_used(rules, state, game, store.turn_submissions(session, turn))
            if turn.secret is not None and dice.seed_for(game.name, turn, rules, state, orders) != turn.seed:
                differences.append("seed: not the seed of the turn's secret and the orders used")
            # the order the seats' orders arrived, as stored when it was resolved (none before 0010)
            resolution = rules.resolve(state, orders, random.Random(turn.seed), submitted=tuple(turn.submitted or ()))
            after = _normal(rules.dump_state(resolution.state))
            events = _normal([e.to_json() for e in resolution.events])
        except Exception as exc:  # noqa: BLE001 - a turn that cannot be replayed is a difference to report
            differences.append(f"cannot replay: {type(exc).__name__}: {exc}")
        else:
            differences += first_differences(_normal(turn.state_after), after, "state_after")
            differences += first_differences(_normal(turn.events), events, "events")
        previous_after = turn.state_after
        results.append(TurnReplay(turn.number, turn.label, tuple(differences), tuple(notes)))
    return results


# -- copy to another database ----------------------------------------------------------------


def _tables() -> list[Table]:
    from bot.models import Base

    return list(Base.metadata.sorted_tables)


def count_rows(db: Database) -> dict[str, int]:
    with db.engine.connect() as conn:
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar() or 0 for t in _tables()}


def _batches(rows: Iterator[Row[Any]], size: int) -> Iterator[list[dict[str, object]]]:
    batch: list[dict[str, object]] = []
    for row in rows:
        batch.append(dict(row._mapping))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def copy_database(source_url: str, target_url: str, *, batch: int = 500) -> dict[str, int]:
    """Copy every table into an empty target (migrated here to the source's revision).

    Returns the rows copied per table. Refuses a target that holds any row: a copy never
    merges. Ids are kept; PostgreSQL's sequences are moved past them.
    """
    from bot.app import open_database
    from bot.db import current_revision, head_revision, migrate

    with open_database(source_url) as source, open_database(target_url) as target:
        revision = current_revision(source.engine)
        if revision != head_revision():
            raise BackupError(f"the source database is at revision {revision}; run `flagman migrate` on it first")
        migrate(target_url, revision)
        filled = {name: n for name, n in count_rows(target).items() if n}
        if filled:
            raise BackupError(
                "the target database is not empty ("
                + ", ".join(f"{k}: {v} rows" for k, v in sorted(filled.items()))
                + "): copy into a new, empty database"
            )
        copied: dict[str, int] = {}
        with source.engine.connect() as src, target.engine.begin() as dst:
            for table in _tables():
                copied[table.name] = 0
                result = src.execution_options(stream_results=True).execute(
                    select(table).order_by(*table.primary_key.columns)
                )
                for rows in _batches(iter(result), batch):
                    dst.execute(table.insert(), rows)
                    copied[table.name] += len(rows)
            if target.engine.dialect.name == "postgresql":
                for table in _tables():
                    if "id" in table.columns:
                        dst.execute(
                            text(
                                f"select setval(pg_get_serial_sequence('{table.name}', 'id'), "
                                f'coalesce((select max(id) from "{table.name}"), 0) + 1, false)'
                            )
                        )
        return copied
