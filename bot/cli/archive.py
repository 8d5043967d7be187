"""`flagman archive GAME DIR`: write a game's public archive, a static site.

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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cmd_verify(args: argparse.Namespace) -> int:
    """`flagman verify DIR` and `flagman verify --turn MAIL [DIR]`: exit 0 when it all holds, 1
    naming the first item that does not (one line), 2 for no record (or no block of values in the
    mail), a link, a file too big or not a record, or bad usage. Needs no configuration: it reads
    the archive (and the mail) alone."""
    from bot.verify import FAILS, HOLDS, NOT_A_RECORD, ONLY_YOUR_MAIL, RecordError, verify_archive, verify_mail

    if args.turn is None and args.dir is None:
        print("flagman verify: give the folder of a game's archive, or --turn MAIL", file=sys.stderr)
        return NOT_A_RECORD
    try:
        if args.turn is not None:
            try:
                with open(args.turn, "rb") as handle:
                    data = handle.read(4 << 20)
            except OSError as exc:
                print(f"flagman verify: {args.turn}: {_one_line(str(exc.strerror or exc))}", file=sys.stderr)
                return NOT_A_RECORD
            mail = verify_mail(data, Path(args.dir) if args.dir else None)
            if mail.failure is not None:
                print(
                    f"flagman verify: {mail.game} {mail.turn}: does NOT hold: {_one_line(mail.failure)}",
                    file=sys.stderr,
                )
                return FAILS
            for line in mail.checked:
                print(f"ok    {line}")
            print(
                f"{mail.game} {mail.turn}: the mail's values hold. Compare its commitment with the one your "
                f"turn sheet of {mail.turn} carried: that comparison proves the secret was fixed before the orders."
            )
            return HOLDS
        verdict = verify_archive(Path(args.dir))
    except RecordError as exc:
        print(f"flagman verify: {_one_line(str(exc))}", file=sys.stderr)
        return NOT_A_RECORD
    if verdict.failure is not None:
        print(f"flagman verify: {verdict.game}: does NOT hold: {_one_line(str(verdict.failure))}", file=sys.stderr)
        return FAILS
    for line in verdict.shown:
        print(line)
    for line in verdict.checked:
        print(f"ok    {line}")
    for line in verdict.skipped:
        print(f"skip  {line}")
    print(
        f"{verdict.game}: {verdict.turns} turn(s) verified"
        + (f", {len(verdict.skipped)} only in part until the game ends" if verdict.skipped else "")
    )
    print(ONLY_YOUR_MAIL)
    return HOLDS


def register_verify(sub: Subcommands) -> None:
    p = sub.add_parser(
        "verify",
        help="check a game's public archive turn by turn (commitment log, dice seeds, receipts, dice, pages), "
        "or one saved results mail",
        description="Check the archive of a game in DIR: its record (DIR/record.json) and the pages people "
        "read. That the commitment log is an unbroken chain and every turn's revealed secret is the one "
        "committed to in it (re-rolls included), that each dice seed is made of the secret and the orders, "
        "that the pages show the turns, values and reports of the record, and, once the game has ended, "
        "that the orders match their digest and receipts and that every turn resolved again from its "
        "published state and orders gives the published events (rolls included) and state. With --turn "
        "MAIL, the block of values of one saved results mail (and with DIR, that the archive holds them). "
        "Exit 0: all holds; 1: the first item that does not, in one line; 2: no record (or no block in the "
        "mail), a file that is a link, too big or not a record, or bad usage.",
    )
    p.add_argument("dir", nargs="?", help="the folder of the game's archive")
    p.add_argument("--turn", metavar="MAIL", help="a results mail saved as a file: check its block of values")
    p.set_defaults(func=_cmd_verify)
