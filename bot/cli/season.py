"""`flagman season new|add|show`: championship seasons by CLI (docs/championships.md).

Exit codes as in bot.cli: 0 done; 2 refused (the reason on stderr: a setting, a name, a game).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import open_app

if TYPE_CHECKING:
    from bot.cli.context import Subcommands


def _cmd_new(args: argparse.Namespace) -> int:
    from bot.games import seasons
    from bot.letters.words import say

    with open_app(args) as app:
        settings = seasons.SeasonSettings(
            name=args.name,
            kind=args.game_kind,
            gm_address=args.gm or app.settings.bot.address,
            scoring=args.scoring,
            drop=args.drop,
            no_show_penalty=args.no_show_penalty,
            nmr_penalty=args.nmr_penalty,
            races=args.races,
            tracks=tuple(args.track),
            games=tuple(args.race),
            series=args.series,
            tier=args.tier,
            promote=args.up,
            relegate=args.down,
            min_field=args.min_field,
            bench_newcomers=args.bench_newcomers,
        )
        try:
            with app.db.transaction() as session:
                season = seasons.create_season(app.shell, session, settings)
                said = say(
                    "season_created",
                    season=season.name,
                    kind=season.kind,
                    scoring=season.scoring,
                    races=season.races_planned,
                    games=[race.game.name for race in season.races],
                    drop=season.drop_results,
                    no_show_penalty=season.no_show_penalty,
                    nmr_penalty=season.nmr_penalty,
                    tracks=list(season.tracks),
                    series=season.series,
                    tier=season.tier,
                    promote=season.promote,
                    relegate=season.relegate,
                    min_field=season.min_field,
                    bench_newcomers=season.bench_newcomers,
                )
        except seasons.SeasonRequestError as refused:
            print(say("season_cli_refused", verb="new", reason=str(refused)), file=sys.stderr)
            return 2
    print(said)
    return 0


def _cmd_add(args: argparse.Namespace) -> int:
    from bot.games import seasons
    from bot.letters.words import say

    with open_app(args) as app:
        try:
            with app.db.transaction() as session:
                season = seasons.find_season(session, args.name)
                if season is None:
                    raise seasons.SeasonRequestError(say("season_none", season=args.name[:40]))
                race = seasons.add_race(session, season, args.game)
                said = say("season_race_added", season=season.name, game=race.game.name, round=race.round)
        except seasons.SeasonRequestError as refused:
            print(say("season_cli_refused", verb="add", reason=str(refused)), file=sys.stderr)
            return 2
    print(said)
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from bot.games import seasons
    from bot.letters.words import say

    with open_app(args) as app, app.db.read() as session:
        season = seasons.find_season(session, args.name)
        if season is None:
            print(
                say("season_cli_refused", verb="show", reason=say("season_none", season=args.name[:40])),
                file=sys.stderr,
            )
            return 2
        table = seasons.table_of(session, season)
    if args.json:
        print(json.dumps(dataclasses.asdict(table), indent=1))
    else:
        print(say("season_table", table=table))
    return 0


def _cmd_next(args: argparse.Namespace) -> int:
    from bot.games import season_tiers, seasons
    from bot.letters.words import say

    with open_app(args) as app:
        try:
            with app.db.transaction() as session:
                series = season_tiers.series_of(session, args.series)
                if series is None:
                    raise seasons.SeasonRequestError(say("season_none", season=args.series[:40]))
                if args.confirm and args.redraw:
                    raise seasons.SeasonRequestError(say("season_redraw_or_confirm"))
                if args.confirm:
                    draw = season_tiers.confirm_next(app.shell, session, series)
                elif args.redraw:
                    draw = season_tiers.redraw(session, series, app.shell.now())[0]
                else:
                    found = season_tiers.show_draw(session, series, app.shell.now())
                    if found is None:
                        raise seasons.SeasonRequestError(say("season_no_draw", series=series))
                    draw = found[0]
                said = say("season_draw", draw=draw)
        except seasons.SeasonRequestError as refused:
            print(say("season_cli_refused", verb="next", reason=str(refused)), file=sys.stderr)
            return 2
    print(said)
    return 0


def _cmd_archive(args: argparse.Namespace) -> int:
    from bot.app import open_database
    from bot.cli.context import load
    from bot.games.archive import write_season_archive
    from bot.letters.words import say

    settings = load(args)
    with open_database(settings.database_url) as db:
        try:
            page = write_season_archive(db, args.name, Path(args.dir))
        except ValueError as exc:
            print(say("season_cli_refused", verb="archive", reason=str(exc)), file=sys.stderr)
            return 2
        except OSError as exc:
            print(say("season_cli_refused", verb="archive", reason=str(exc)), file=sys.stderr)
            return 1
    print(say("season_page_written", page=str(page)))
    return 0


def register(sub: Subcommands) -> None:
    season = sub.add_parser(
        "season", help="championship seasons: create one, add races, show the table"
    ).add_subparsers(dest="season_command", required=True, metavar="SEASON_COMMAND")
    p = season.add_parser(
        "new",
        help="create a season",
        description="Create a championship season of one kind of game: its scoring table, dropped results, "
        "penalties, the number of races, the tracks (or maps) in rotation, and its first races (existing "
        "games, in round order). The table is worked out from the races' results every time it is shown.",
    )
    p.add_argument("name", help="the season's short name")
    p.add_argument("--game-kind", required=True, help="the kind of game every race is (racecraft, speed-circuit ...)")
    p.add_argument("--gm", help="the season's GM (default: the bot's own address)")
    p.add_argument(
        "--scoring",
        default="f1",
        help="f1 (25-18-15-12-10-8-6-4-2-1, the default), cfr, linear, or custom:10,6,4,3,2,1; then any bonus "
        "points, e.g. f1+pole:1 (Speed Circuit's pole)",
    )
    p.add_argument("--drop", type=int, default=0, help="each driver's lowest race scores left out (default 0)")
    p.add_argument("--no-show-penalty", type=int, default=0, help="points a no-show loses (default 0)")
    p.add_argument("--nmr-penalty", type=int, default=0, help="points a driver put out by the NMR limit loses")
    p.add_argument("--races", type=int, default=3, help="races in the season (default 3)")
    p.add_argument("--track", action="append", default=[], help="a track or map in rotation (repeat, in order)")
    p.add_argument("--race", action="append", default=[], help="an existing game as the next race (repeat)")
    p.add_argument("--series", default="", help="the series with tiers the season belongs to (default: its own name)")
    p.add_argument("--tier", type=int, default=1, help="its tier in the series, 1 the top (default 1)")
    p.add_argument("--up", type=int, default=0, help="how many of its top go up a tier for the next season")
    p.add_argument("--down", type=int, default=0, help="how many of its bottom go down a tier for the next season")
    p.add_argument(
        "--min-field",
        type=int,
        default=0,
        help="the least field of the tier's next race: robots fill it when the draw gives fewer drivers (default 0: none)",
    )
    p.add_argument(
        "--bench-newcomers",
        action="store_true",
        help="draw the substitutes bench of the kind into the series' lowest tier as newcomers",
    )
    p.set_defaults(func=_cmd_new)
    p = season.add_parser("add", help="add an existing game as a season's next race")
    p.add_argument("name", help="the season")
    p.add_argument("game", help="the game")
    p.set_defaults(func=_cmd_add)
    p = season.add_parser("show", help="a season's table, worked out from its races' results")
    p.add_argument("name", help="the season")
    p.add_argument("--json", action="store_true", help="the same as JSON")
    p.set_defaults(func=_cmd_show)
    p = season.add_parser(
        "next",
        help="a series' next season: its tiers as drawn from the last one's tables; --confirm makes it",
        description="Show the next season of SERIES (or of the series season SERIES belongs to), its tiers drawn "
        "from the final tables of the last season: the top of each tier up, the bottom down, as each tier's "
        "--up and --down say. The draw is stored when first shown (here, by mail or in the GM's digest), and "
        "that draw is the one made. Nothing is made until --confirm: then each tier's season is made with the "
        "settings of the tier it follows, and its first race started with the drawn drivers. A race result "
        "corrected after the draw was shown makes it stale: --redraw draws it again from the tables now.",
    )
    p.add_argument("series", help="the series (or one of its seasons)")
    p.add_argument("--confirm", action="store_true", help="make the next season as drawn and start its first races")
    p.add_argument(
        "--redraw", action="store_true", help="draw the next season again (after a correction made it stale)"
    )
    p.set_defaults(func=_cmd_next)
    p = season.add_parser(
        "archive",
        help="write a season's public page (its table and races) into DIR",
        description="Write the public page of season NAME into DIR (index.html, style.css): its table, "
        "worked out from the races' results, and its races. With [bot] archive_dir set, the bot keeps "
        "<archive_dir>/_seasons/<season>/ up to date after every turn of a race by itself; its races link "
        "to their games' archives beside it.",
    )
    p.add_argument("name", help="the season")
    p.add_argument("dir", help="the folder to write (created if missing)")
    p.set_defaults(func=_cmd_archive)
