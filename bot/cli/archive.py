"""`flagman archive GAME DIR`: write a game's public archive, a static site (issue 11).

Exit codes as in bot.cli: 0 done; 1 the work failed; 2 bad usage (no such game).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import load

if TYPE_CHECKING:
    from bot.cli.context import Subcommands


def _cmd_archive(args: argparse.Namespace) -> int:
    from bot.app import open_database
    from bot.games.archive import write_game_archive

    settings = load(args)
    # The database alone: an archive needs no inbox or mailer (building them would create Maildirs).
    with open_database(settings.database_url) as db:
        try:
            index = write_game_archive(db, args.game, Path(args.dir))
        except ValueError as exc:
            print(f"flagman archive: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"flagman archive: cannot write {args.dir}: {exc}", file=sys.stderr)
            return 1
    print(f"archive of {args.game} written: {index}")
    return 0


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "archive",
        help="write a game's public archive (static HTML: every turn's report and picture, the result, the rules) into DIR",
        description="Write the public archive of GAME into DIR: index.html, one page and picture per turn, "
        "rules.html and style.css; plain HTML and CSS that work from a file system or any static "
        "web server. With [bot] archive_dir set, the bot keeps <archive_dir>/<game>/ up to date "
        "after every turn by itself.",
    )
    p.add_argument("game", help="the game's short name")
    p.add_argument("dir", help="the folder to write (created if missing)")
    p.set_defaults(func=_cmd_archive)


def _cmd_verify(args: argparse.Namespace) -> int:
    """`flagman verify DIR`: exit 0 when every turn holds, 1 naming the first that does not, 2 for
    a folder that holds no record. Needs no configuration: it reads the archive alone."""
    from bot.verify import RecordError, read_record, verify

    try:
        record = read_record(Path(args.dir))
    except RecordError as exc:
        print(f"flagman verify: {exc}", file=sys.stderr)
        return 2
    verdict = verify(record)
    for line in verdict.checked:
        print(f"ok    {line}")
    for line in verdict.skipped:
        print(f"skip  {line}")
    if verdict.failure is not None:
        print(f"flagman verify: {verdict.game}: FAILED at {verdict.failure}", file=sys.stderr)
        return 1
    print(
        f"{verdict.game}: {verdict.turns} turn(s) verified"
        + (f", {len(verdict.skipped)} only in part until the game ends" if verdict.skipped else "")
    )
    return 0


def register_verify(sub: Subcommands) -> None:
    p = sub.add_parser(
        "verify",
        help="check a game's public archive turn by turn: commitments, dice seeds, receipts, dice and results",
        description="Check the record of a game's public archive (DIR/record.json): that each turn's revealed "
        "secret is the one its sheets committed to, that its dice seed is made of the secret and the "
        "orders, and, once the game has ended, that the orders match their receipts and that the turn "
        "resolved again from its published state and orders gives the published events (rolls "
        "included) and state. Exit 0: all holds; 1: the first turn and item that does not; 2: no record.",
    )
    p.add_argument("dir", help="the folder of the game's archive")
    p.set_defaults(func=_cmd_verify)
