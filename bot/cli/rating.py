"""`flagman rating show|rebuild|archive`: the ratings by CLI (docs/championships.md, "Ratings").

Exit codes as in bot.cli: 0 done; 1 the page could not be written; 2 refused (the reason on
stderr: a kind of game or a person unknown, a name two people share); 3 the database cannot be
reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import one_line, open_app

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot.cli.context import Subcommands
    from bot.games.ratings import Rated
    from bot.models import Player


class _RefusedError(Exception):
    """What `rating` refuses, with the reason (exit 2)."""


def _person(session: Session, text: str) -> Player:
    """The person `text` names: their address, or their name if nobody else has it."""
    from sqlalchemy import func, select

    from bot.letters.words import say
    from bot.models import Player

    wanted = text.strip().lower()
    if "@" in wanted:
        found = session.scalar(select(Player).where(Player.address == wanted))
        if found is None:
            raise _RefusedError(say("rating_cli_no_person", person=one_line(text, 80)))
        return found
    named = list(session.scalars(select(Player).where(func.lower(Player.name) == wanted).order_by(Player.id)))
    if len(named) != 1:
        raise _RefusedError(say("rating_cli_no_person", person=one_line(text, 80), several=len(named)))
    return named[0]


def _row(rated: Rated) -> dict[str, object]:
    from rules import find_game

    return {
        "kind": rated.kind,
        "game": find_game(rated.kind).title,
        "place": rated.place,
        "name": one_line(rated.name, 40),
        "address": one_line(rated.address, 80),
        "rating": rated.rating.shown,
        "races": rated.rating.races,
        "mu": round(rated.rating.mu, 4),
        "sigma": round(rated.rating.sigma, 4),
        "shown": rated.shown,
    }


def _cmd_show(args: argparse.Namespace) -> int:
    from bot.games import ratings
    from bot.letters.words import say

    with open_app(args) as app, app.db.read() as session:
        shown_after = app.settings.ratings.shown_after
        kind = ratings.kind_key(args.kind) if args.kind else None
        try:
            if args.kind and kind is None:
                raise _RefusedError(say("rating_cli_no_kind", kind=one_line(args.kind, 40)))
            if args.person:
                person = _person(session, args.person)
                rows = [r for r in ratings.ratings_of_person(session, person, shown_after) if kind in (None, r.kind)]
                said = say(
                    "rating_cli_person",
                    name=one_line(person.name, 40),
                    address=one_line(person.address, 80),
                    on=bool(person.rating),
                    shown_after=shown_after,
                    rows=[_row(r) for r in rows],
                )
                found: object = [_row(r) for r in rows]
            else:
                kinds = [kind] if kind else ratings.kinds_raced(session)
                tables = [
                    [_row(r) for r in ratings.standings(session, k, shown_after, shown_only=False)] for k in kinds
                ]
                from rules import find_game

                said = say(
                    "rating_cli_table",
                    tables=[{"game": find_game(k).title, "rows": t} for k, t in zip(kinds, tables, strict=True)],
                    shown_after=shown_after,
                )
                found = [row for table in tables for row in table]
        except _RefusedError as refused:
            print(say("rating_cli_refused", verb="show", reason=str(refused)), file=sys.stderr)
            return 2
    print(json.dumps(found, indent=1) if args.json else said)
    return 0


def _cmd_rebuild(args: argparse.Namespace) -> int:
    from bot.games import ratings
    from bot.letters.words import say

    with open_app(args) as app, app.db.transaction() as session:
        kinds = ratings.kinds_raced(session)
        done = [(kind, len(ratings.rated_ids(session, kind)), len(ratings.rebuild(session, kind))) for kind in kinds]
    print(say("rating_rebuilt", kinds=[{"kind": k, "races": r, "people": p} for k, r, p in done]))
    return 0


def _cmd_archive(args: argparse.Namespace) -> int:
    from bot.app import open_database
    from bot.cli.context import load
    from bot.games.archive import write_ratings_page
    from bot.letters.words import say

    settings = load(args)
    with open_database(settings.database_url) as db, db.read() as session:
        try:
            page = write_ratings_page(session, Path(args.dir), settings.ratings.shown_after)
        except OSError as exc:
            print(say("rating_cli_refused", verb="archive", reason=one_line(str(exc))), file=sys.stderr)
            return 1
    print(say("rating_page_written", page=str(page)))
    return 0


def register(sub: Subcommands) -> None:
    rating = sub.add_parser("rating", help="the ratings: show them, write their public page").add_subparsers(
        dest="rating_command", required=True, metavar="RATING_COMMAND"
    )
    p = rating.add_parser(
        "show",
        help="everyone's ratings in each kind of game, or one person's",
        description="The ratings worked out from the finished rated races: in each kind of game (or in KIND), "
        "everyone rated, best first, with their rated races and whether their rating is shown (they sent "
        "RATING ON and have finished [ratings] shown_after rated races); with PERSON (an address, or a name "
        "nobody else has), that person's rating in each kind.",
    )
    p.add_argument("person", nargs="?", help="a person: their address, or their name")
    p.add_argument("--kind", help="one kind of game (racecraft, speed-circuit, speedphreakz)")
    p.add_argument("--json", action="store_true", help="the same as a JSON list, one object a rating")
    p.set_defaults(func=_cmd_show)
    p = rating.add_parser(
        "rebuild",
        help="work the stored ratings out again from the archived results",
        description="Work every kind of game's stored ratings out again from the archived results of its "
        "finished rated races, in the order they ended, and store them. The bot keeps them up to date by "
        "itself (at each rated final, and at a ROLLBACK of a finished race); stored ratings that do not "
        "count exactly the record's rated races are never read. Run it after upgrading past migration "
        "0023, so that the first reads need not work them out.",
    )
    p.set_defaults(func=_cmd_rebuild)
    p = rating.add_parser(
        "archive",
        help="write the public ratings page into DIR",
        description="Write the public ratings page into DIR (index.html, style.css): in each kind of game, the "
        "ratings of those who sent RATING ON and have finished [ratings] shown_after rated races. With "
        "[bot] archive_dir set, the bot keeps <archive_dir>/_ratings/ up to date by itself.",
    )
    p.add_argument("dir", help="the folder to write (created if missing)")
    p.set_defaults(func=_cmd_archive)
