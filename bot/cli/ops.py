"""Operator subcommands: doctor, deploy, backup, restore, export, replay, copy-db.

Exit codes as in bot.cli: 0 done; 1 the work failed or found a problem; 2 bad usage (restore:
the file given is no backup); 4 storage (backup: the database is damaged, or the disk full).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import load

if TYPE_CHECKING:
    from bot.cli.context import Subcommands
    from bot.settings import Settings


def _cmd_doctor(args: argparse.Namespace) -> int:
    from bot.ops.doctor import run_doctor

    return run_doctor(
        Path(args.config) if args.config else None,
        fix=args.fix,
        probe_plus=args.probe_plus,
        probe_wait=args.probe_wait,
        as_json=args.json,
    )


def _cmd_deploy(args: argparse.Namespace) -> int:
    from pathlib import PurePosixPath

    from bot.ops import deploy

    venv = PurePosixPath(args.venv) if args.venv else deploy.running_venv()
    try:
        if args.show is not None:
            if args.show:
                sys.stdout.buffer.write(deploy.content(deploy.find_placement(args.show, venv, args.instance), venv))
                return 0
            for placement in deploy.placements(venv, fixed_user=args.fixed_user, instance=args.instance):
                keep = " (kept if there)" if placement.keep else ""
                print(f"{placement.name:<30} -> {placement.target}  {placement.mode:04o}{keep}: {placement.what}")
            return 0
        if not args.prefix:
            print(
                "flagman deploy: give PREFIX (/ to install on this machine), or --print to see what goes where",
                file=sys.stderr,
            )
            return 2
        prefix = Path(args.prefix)
        written = deploy.deploy(prefix, venv, fixed_user=args.fixed_user, instance=args.instance)
    except deploy.DeployError as exc:
        print(f"flagman deploy: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"flagman deploy: cannot write under {args.prefix}: {exc.strerror or exc} "
            f"({exc.filename or ''}); run it as root for /",
            file=sys.stderr,
        )
        return 1
    for done in written:
        print(f"{done.action:<9} {done.path}")
    print(f"the unit runs {venv}/bin/flagman")
    for step in deploy.next_steps(prefix, args.instance):
        print(f"next: {step}")
    return 0


def _cmd_backup(args: argparse.Namespace) -> int:
    from bot.clock import SystemClock
    from bot.ops.backup import BackupError, backup, backup_into

    settings = load(args)
    pruned: tuple[Path, ...] = ()
    try:
        if args.keep is None:
            target = backup(
                settings.database_url, Path(args.path), password_credential="{password}" in settings.database.url
            )
        else:
            target, pruned = backup_into(
                settings.database_url, Path(args.path), keep=args.keep, now=SystemClock().now()
            )
    except BackupError as exc:
        # On stderr: under systemd (the backup timer) a line at error priority in the journal.
        print(f"flagman backup: {exc}", file=sys.stderr)
        _backup_metrics(settings, ok=False, size=None)
        return exc.status
    _backup_metrics(settings, ok=True, size=target.stat().st_size if target.is_file() else None)
    print(f"backup written to {target} (SQLite's integrity check: ok)")
    if args.keep is not None:
        print(
            f"kept the newest {args.keep} in {args.path}"
            + (f"; deleted {', '.join(p.name for p in pruned)}" if pruned else "")
        )
    return 0


def _backup_metrics(settings: Settings, *, ok: bool, size: int | None) -> None:
    """With [metrics] file set, the backup's figures beside it (bot.ops.metrics.render_backup):
    whether the last one worked, when, and when one last did, for an alert on a failed backup."""
    if not settings.metrics.file:
        return
    from datetime import UTC, datetime

    from bot.ops import metrics

    path = metrics.backup_metrics_path(settings.resolve_path(settings.metrics.file))
    now = datetime.now(UTC)
    last = now.timestamp() if ok else metrics.last_backup_success(path)
    text = metrics.render_backup(bot=settings.bot.address, ok=ok, now=now, last_success=last, size=size)
    try:
        metrics.write_atomically(path, text)
    except OSError as exc:
        print(f"flagman backup: cannot write the metrics file {path}: {exc.strerror or exc}", file=sys.stderr)


def _at_least_one(text: str) -> int:
    """--keep N: a whole number, 1 or more (argparse says so and exits 2 otherwise)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number}: keep at least 1 backup")
    return number


def _cmd_prune(args: argparse.Namespace) -> int:
    from bot.app import open_database
    from bot.cli.context import need_database_at
    from bot.clock import SystemClock
    from bot.ops.retention import prune

    settings = load(args)
    with open_database(settings.database_url) as db:
        need_database_at(settings, db)
        print(prune(db, settings, SystemClock().now()).summary())
    return 0


def _cmd_check_backup(args: argparse.Namespace) -> int:
    from bot.ops.backup import BackupError, check_backup

    try:
        checked = check_backup(Path(args.path))
    except BackupError as exc:
        print(f"flagman check-backup: {exc}", file=sys.stderr)
        return exc.status
    print(checked.summary())
    return 0


def _cmd_restore(args: argparse.Namespace) -> int:
    from bot.host.instance import lock_for
    from bot.ops.backup import BackupError, restore

    settings = load(args)
    try:
        path = restore(settings.database_url, Path(args.path), lock=lock_for(settings))
    except BackupError as exc:
        print(f"flagman restore: {exc}", file=sys.stderr)
        return exc.status
    print(f"{path} restored from {args.path}; run `flagman migrate` if the backup is from an older flagman")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from bot.app import open_database
    from bot.ops.backup import dumps, export_game

    settings = load(args)
    with open_database(settings.database_url) as db, db.read() as session:
        text = dumps(export_game(session, args.game))
    if args.output and args.output != "-":
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from bot.app import open_database
    from bot.ops.backup import replay_game

    settings = load(args)
    with open_database(settings.database_url) as db, db.read() as session:
        results = replay_game(session, args.game)
    differ = [r for r in results if not r.same]
    for result in results:
        if result.same:
            print(f"turn {result.number} ({result.label}): same")
            for note in result.notes:
                print(f"    note: {note}")
        else:
            print(f"turn {result.number} ({result.label}): DIFFERENT")
            for line in result.differences:
                print(f"    {line}")
    print(
        f"{args.game}: {len(results)} resolved turn(s) replayed, "
        + (f"{len(differ)} differ from what is stored" if differ else "all identical to what is stored")
    )
    return 1 if differ else 0


def url_problem(url: str) -> str | None:
    """What is wrong with a database URL as given (None: SQLAlchemy can open its kind)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        make_url(url.replace("{password}", "x")).get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        return (
            f"{url.split('://', 1)[0]!r} is not a database URL flagman can use ({type(exc).__name__}): write "
            "sqlite:///PATH or postgresql+psycopg://USER:{password}@HOST/DATABASE"
        )
    return None


def _unreachable(url: str) -> str | None:
    """Why the database at `url` cannot be connected to (None: it can)."""
    from sqlalchemy.exc import SQLAlchemyError

    from bot.app import open_database

    try:
        with open_database(url, connect_timeout=10) as db, db.engine.connect():
            return None
    except SQLAlchemyError as exc:
        return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]


def _cmd_copy_db(args: argparse.Namespace) -> int:
    from bot.ops.backup import BackupError, copy_database
    from bot.ops.doctor import safe_url

    settings = load(args)
    target = args.to
    problem = url_problem(target)
    if problem is not None:
        print(f"flagman copy-db: --to: {problem}", file=sys.stderr)
        return 2
    if "{password}" in target:
        target = target.replace("{password}", settings.secrets.db_password)
    reason = _unreachable(target)
    if reason is not None:  # named here: a failure inside the copy would name the source's URL
        print(f"flagman copy-db: cannot reach the target database {safe_url(target)}: {reason}", file=sys.stderr)
        return 3
    try:
        copied = copy_database(settings.database_url, target)
    except BackupError as exc:
        print(f"flagman copy-db: {exc}", file=sys.stderr)
        return 1
    for table, count in copied.items():
        print(f"{table:<18} {count} rows")
    print(f"copied to {safe_url(target)}; now set [database] url to it and start the service")
    return 0


def register(sub: Subcommands) -> None:
    """The operator's subcommands: the set-up (doctor, deploy), then the data (backup, prune,
    restore, export, replay, copy-db)."""
    _register_set_up(sub)
    _register_data(sub)


def _register_set_up(sub: Subcommands) -> None:
    """`flagman doctor` and `flagman deploy`."""
    p = sub.add_parser(
        "doctor", help="check the set-up (config, database, IMAP, SMTP, secret, clock) and say how to fix it"
    )
    p.add_argument("--fix", action="store_true", help="create missing IMAP/Maildir folders")
    p.add_argument(
        "--probe-plus",
        action="store_true",
        help="also mail a probe to the bot's own plus-address (<local>+doctor.probe.<random>@<domain>) "
        "through the SMTP relay and wait for it in the IMAP INBOX, then delete it",
    )
    p.add_argument(
        "--probe-wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long --probe-plus waits for the probe to arrive (default 60)",
    )
    p.add_argument(
        "--json", action="store_true", help='the findings as one JSON object: {"findings": [...], "problems": N}'
    )
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser(
        "deploy",
        help="write the systemd unit, tmpfiles snippet, flagmanctl, an example "
        "configuration and the documentation where systemd expects them",
    )
    p.add_argument(
        "prefix",
        nargs="?",
        metavar="PREFIX",
        help="the root to write under: / on this machine (as root), or a staging directory",
    )
    p.add_argument(
        "--print",
        dest="show",
        nargs="?",
        const="",
        metavar="FILE",
        help="write nothing: list where each file goes, or print FILE (e.g. flagman.service, "
        "config.example.toml, mail/postfix-main.cf) as it would be written",
    )
    p.add_argument("--venv", metavar="DIR", help="the venv the unit runs flagman from (default: this flagman's own)")
    p.add_argument(
        "--fixed-user",
        action="store_true",
        help="also a fixed system user (sysusers.d) and the drop-in that turns DynamicUser= off",
    )
    p.add_argument(
        "--instance",
        metavar="NAME",
        help="one of several bots on this host, flagman@NAME.service: its tmpfiles snippet and "
        "configuration (/etc/flagman-NAME/flagman.toml; state in /var/lib/flagman-NAME) in place "
        "of flagman.service's",
    )
    p.set_defaults(func=_cmd_deploy)


def _register_data(sub: Subcommands) -> None:
    """`flagman backup`, `prune`, `restore`, `export`, `replay` and `copy-db`."""
    p = sub.add_parser(
        "backup", help="copy the SQLite database while the service runs (PostgreSQL: prints the pg_dump command)"
    )
    p.add_argument(
        "path", help="the backup file to write (never overwritten); with --keep, the directory to write it in"
    )
    p.add_argument(
        "--keep",
        type=_at_least_one,
        metavar="N",
        help="PATH is a directory: write flagman-<UTC time>.sqlite in it, then delete all but the newest N "
        "of those (other files are left alone); the shipped timer runs --keep 14",
    )
    p.set_defaults(func=_cmd_backup)

    p = sub.add_parser(
        "prune",
        help="apply the [retention] policy now: old mail bodies, mail texts, audit lines, the Processed folder",
        description="What `flagman run` does once a day: empties the bodies of mail sent more than [retention] "
        "sent_mail_days ago, the texts of mail read more than inbound_days ago (and quarantined mail already "
        "reported), deletes GM audit lines of no game older than audit_days, and mail of the inbox's Processed "
        "folder older than processed_mail_days. A game's own record is never pruned.",
    )
    p.set_defaults(func=_cmd_prune)

    p = sub.add_parser(
        "check-backup",
        help="check an existing backup file as restore would (integrity, schema), without touching the database",
    )
    p.add_argument("path", help="a file written by `flagman backup`")
    p.set_defaults(func=_cmd_check_backup)

    p = sub.add_parser("restore", help="replace the SQLite database with a backup (stop the service first)")
    p.add_argument("path", help="a file written by `flagman backup`")
    p.set_defaults(func=_cmd_restore)

    p = sub.add_parser("export", help="one game's whole history as JSON")
    p.add_argument("game")
    p.add_argument("-o", "--output", help="write to this file (default: stdout)")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("replay", help="re-resolve every resolved turn of a game and compare with what is stored")
    p.add_argument("game")
    p.set_defaults(func=_cmd_replay)

    p = sub.add_parser("copy-db", help="copy every table into a new, empty database (e.g. SQLite -> PostgreSQL)")
    p.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="the target SQLAlchemy URL, e.g. postgresql+psycopg://flagman:{password}@db/flagman",
    )
    p.set_defaults(func=_cmd_copy_db)
