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
