"""`flagman ...`: each subcommand builds what it needs and returns an exit code.

Exit codes: 0 done; 1 the work failed (the message says why); 2 bad usage or bad input.

Every command that touches the database or the mail goes through the composition root,
``with open_app(args) as app:`` (bot.app), and imports the shell when it runs, not when
the parser is built: `flagman play` resolves a script with `rules` alone and never loads
SQLAlchemy (tests/rules/test_play_cli.py checks it).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import extra as cli_extra
from bot.cli.context import load, need_secret, open_app
from bot.cli.init import cmd_init, cmd_migrate, init_dir

if TYPE_CHECKING:
    from bot.games.turns import PlayerSpec

__all__ = ["build_parser", "init_dir", "main", "setup_logging"]

log = logging.getLogger("flagman")


# -- play ------------------------------------------------------------------------------------

def _cmd_play(args: argparse.Namespace) -> int:
    from rules import UnknownGameError
    from rules.script import ScriptError, run_script

    try:
        raw = sys.stdin.read() if args.script == "-" else Path(args.script).read_text(encoding="utf-8")
        script = json.loads(raw)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"flagman play: cannot read the script: {exc}", file=sys.stderr)
        return 2
    try:
        output = run_script(args.game, script)
    except (ScriptError, UnknownGameError) as exc:
        print(f"flagman play: {exc}", file=sys.stderr)
        return 2
    json.dump(output, sys.stdout, indent=2 if args.pretty else None)
    sys.stdout.write("\n")
    return 0


# -- games -----------------------------------------------------------------------------------

def _parse_player(text: str) -> PlayerSpec:
    from bot.games.turns import PlayerSpec

    name, sep, rest = text.partition("=")
    if not sep or "@" not in rest:
        raise ValueError(f"--player {text!r}: write NAME=ADDRESS or NAME=ADDRESS,TIMEZONE")
    address, _, zone = rest.partition(",")
    return PlayerSpec(seat=name.strip().lower(), address=address.strip(), name=name.strip(), timezone=zone.strip() or None)


def _cmd_game_new(args: argparse.Namespace) -> int:
    from bot.games import turns as G

    with open_app(args) as app:
        need_secret(app.settings)
        players = [_parse_player(p) for p in args.player]
        options = dict(o.split("=", 1) for o in args.option)
        with app.db.transaction() as session:
            game = G.create_game(app.shell, session, kind=args.game, name=args.name, players=players,
                                 gm_address=args.gm or app.settings.bot.address, options=options,
                                 deadline=args.deadline, timezone=args.timezone, signup=args.signup,
                                 grace=args.grace or "")
            print(f"game {game.name} ({game.kind}) created: {len(players)} players, status {game.status}")
    return 0


def _cmd_game_list(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from bot.games import store
    from bot.games import turns as G
    from bot.models import Game

    with open_app(args) as app, app.db.read() as session:
        for game in session.scalars(select(Game).order_by(Game.id)):
            turn = store.open_turn(session, game)
            where = f"{turn.label}, due {G.deadline_text(turn, game.timezone)}" if turn else "-"
            print(f"{game.name:<12} {game.kind:<14} {game.status:<9} {len(game.seats)} seats  {where}")
    return 0


def _cmd_game_show(args: argparse.Namespace) -> int:
    from bot.games import store
    from bot.games import turns as G

    with open_app(args) as app, app.db.read() as session:
        game = store.find_game_row(session, args.name)
        if game is None:
            print(f"no game called {args.name}", file=sys.stderr)
            return 2
        rules, state, turn = G.current_state(session, game) if game.turns else (G.rules_of(game), None, None)
        print(f"{game.name}: {rules.title}, {game.status}; GM {game.gm_address}; deadlines {game.deadline_spec} ({game.timezone})")
        if turn is not None:
            print(f"open: {turn.label}, due {G.deadline_text(turn, game.timezone)}")
        for seat in game.seats:
            on_file = ""
            if turn is not None and state is not None and seat.name in rules.expected_players(state):
                orders = G.orders_on_file(rules, state, seat, store.submissions(session, turn, seat))
                on_file = "orders in" if orders is not None else "no orders yet"
            status = "" if seat.active else " (out)"
            print(f"  {seat.name:<12} {seat.player.address:<32} NMR streak {seat.nmr_streak}{status}  {on_file}")
        if state is not None:
            for place in rules.standings(state):
                print("   ", ", ".join(place))
    return 0


# -- the jobs --------------------------------------------------------------------------------

def _cmd_poll(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        need_secret(app.settings)
        report = app.service.poll()
        print(f"fetched {report.fetched}; " + ", ".join(f"{k} {v}" for k, v in sorted(report.outcomes.items()))
              + (f"; duplicates {report.duplicates}" if report.duplicates else ""))
    return 0


def _cmd_tick(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        need_secret(app.settings)
        done = app.service.tick(read_first=True)
        print("resolved: " + (", ".join(f"{g} turn {n}" for g, n in done) or "nothing due"))
    return 0


def _cmd_send(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        report = app.service.send()
        print(f"sent {report.sent}, retrying {report.retrying}, failed {report.failed}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from bot.scheduler import run_service

    settings = load(args)
    need_secret(settings)
    return run_service(settings, config_path=Path(args.config) if args.config else None)


def _cmd_demo(args: argparse.Namespace) -> int:
    from bot.cli.demo import run_demo

    return run_demo(keep=args.keep, quiet=args.quiet)


# -- the parser ------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flagman", description="Flagman, a play-by-email race director.")
    parser.add_argument("--config", default=os.environ.get("FLAGMAN_CONFIG"),
                        help="configuration file (default ./flagman.toml, or $FLAGMAN_CONFIG)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every decision in detail")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("init", help="write a working configuration (SQLite + Maildir) and migrate the database")
    p.add_argument("dir", nargs="?", default=".")
    p.add_argument("--address", default="flagman@localhost", help="the bot's mail address")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("migrate", help="bring the database schema up to date (Alembic)")
    p.add_argument("revision", nargs="?", default="head")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("demo", help="play a whole Racecraft game by mail on the embedded default, printing every mail")
    p.add_argument("--keep", metavar="DIR", help="play in DIR and keep it (default: a temp dir, removed)")
    p.add_argument("--quiet", action="store_true", help="print only the summary and the final result")
    p.set_defaults(func=_cmd_demo)

    game = sub.add_parser("game", help="create, list and show games").add_subparsers(dest="game_command", required=True)
    p = game.add_parser("new", help="create a game")
    p.add_argument("game", help="racecraft, speed_circuit or speedphreakz")
    p.add_argument("--name", required=True, help="the game's short name, e.g. rc1")
    p.add_argument("--player", action="append", default=[], metavar="NAME=ADDRESS[,TZ]")
    p.add_argument("--gm", help="the GM's address (default: the bot's own)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--deadline", default="48h", help="48h, 3d, daily 18:00, mon,thu 18:00, or manual")
    p.add_argument("--timezone", help="the game's time zone (default: [bot] timezone)")
    p.add_argument("--grace", help="orders still taken this long after each deadline, e.g. 30m or 2h")
    p.add_argument("--signup", action="store_true", help="open for sign-ups (JOIN) instead of starting now")
    p.set_defaults(func=_cmd_game_new)
    p = game.add_parser("list", help="every game, one line each")
    p.set_defaults(func=_cmd_game_list)
    p = game.add_parser("show", help="one game: seats, orders in, standings")
    p.add_argument("name")
    p.set_defaults(func=_cmd_game_show)

    for name, func, text in (("poll", _cmd_poll, "read the inbox once and answer every mail"),
                             ("tick", _cmd_tick, "resolve every turn that is due"),
                             ("send", _cmd_send, "send the outbox")):
        sub.add_parser(name, help=text).set_defaults(func=func)
    sub.add_parser("run", help="the service: poll, tick and send on their schedules").set_defaults(func=_cmd_run)

    p = sub.add_parser("play", help="resolve a scripted game offline and print JSON")
    p.add_argument("game")
    p.add_argument("--script", required=True, help="script file, or - for stdin")
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    p.set_defaults(func=_cmd_play)

    cli_extra.register(sub)
    return parser


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, stream=sys.stdout,
                        format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("alembic", "apscheduler", "imapclient"):
        logging.getLogger(noisy).setLevel(logging.INFO if verbose else logging.WARNING)
    # SQLAlchemy's INFO log is every statement: noise, and a risk (see bot.db.make_engine).
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in ("play", "demo"):
        setup_logging(args.verbose)
    try:
        code: int = args.func(args)
    except ValueError as exc:
        # A refusal, never a traceback: SettingsError, GameError, DeadlineError,
        # UnknownGameError and OptionError are all ValueErrors. Caught by the base class so
        # that `flagman play` need not import the shell's modules just to name them.
        print(f"flagman {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    raise SystemExit(main())
