"""`flagman ...`: each subcommand builds what it needs and returns an exit code.

Exit codes (`EXIT_STATUS`, shown by ``flagman --help``): 0 done; 1 the work failed (the
message says why), or stdout was closed before everything was printed (``| head``); 2 bad
usage or bad input; 3 a server (IMAP, SMTP, the database) cannot be reached or refused the
login (bot.cli.servers). Anything else is a bug and shows its traceback.

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
from typing import TYPE_CHECKING, NoReturn, cast

from bot.cli import archive as cli_archive
from bot.cli import durations, logs
from bot.cli import gm as cli_gm
from bot.cli import ops as cli_ops
from bot.cli import rating as cli_rating
from bot.cli import season as cli_season
from bot.cli.context import counted, load, need_database, need_secret, one_line, open_app
from bot.cli.init import cmd_init, cmd_migrate, init_dir
from bot.cli.servers import explain

if TYPE_CHECKING:
    from bot.app import App
    from bot.cli.context import Subcommands
    from bot.games.turns import PlayerSpec
    from bot.models import Seat

__all__ = ["EXIT_STATUS", "build_parser", "init_dir", "main", "setup_logging", "version"]

log = logging.getLogger("flagman")

EXIT_STATUS = """\
exit status:
  0  done
  1  the work failed or found a problem (the message says why), or stdout was closed early (| head)
  2  bad usage or bad input: refused, with the reason
  3  a server cannot be reached or refused the login: the IMAP server, the SMTP relay or the
     database; the message names it and what to check, and `flagman doctor` checks them all
  4  storage: the disk is full, the database (or a file or folder it needs) cannot be written
     by this user or is on a read-only file system, or the database file is damaged; the
     message names the file and what to do
"""


# -- version ---------------------------------------------------------------------------------


def version() -> str:
    """This build's version and the commit it was built from, ``0.1.268 (commit 588b8b0c1d2e)``:
    a version per build, counted from the repository (bot.buildinfo)."""
    from bot.buildinfo import current

    return current().describe()


class _VersionAction(argparse.Action):
    """``--version``, worked out when asked for (argparse's own wants it when the parser is built)."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:  # argparse's names
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"flagman {version()}")
        parser.exit(0)


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
    from bot.mail_in.addresses import address_problem

    name, sep, rest = text.partition("=")
    if not sep or "@" not in rest:
        raise ValueError(f"--player {text!r}: write NAME=ADDRESS or NAME=ADDRESS,TIMEZONE")
    address, _, zone = rest.partition(",")
    problem = address_problem(address.strip().lower())
    if problem is not None:
        raise ValueError(f"--player {name.strip()[:40]!r}: the address is {problem}")
    return PlayerSpec(
        seat=name.strip().lower(), address=address.strip(), name=name.strip(), timezone=zone.strip() or None
    )


def _cmd_game_new(args: argparse.Namespace) -> int:
    from bot.games import archive, turns
    from bot.models import PressMode

    durations.check_turn_length(args.deadline, force=args.force)
    with open_app(args) as app:
        need_secret(app.settings)
        players = [_parse_player(p) for p in args.player]
        bad = next((o for o in args.option if "=" not in o or not o.split("=", 1)[0].strip()), None)
        if bad is not None:
            print(
                f"flagman game new: --option {bad!r}: write KEY=VALUE, e.g. --option laps=2 "
                "(flagman game options lists each game's)",
                file=sys.stderr,
            )
            return 2
        options = dict(o.split("=", 1) for o in args.option)
        with app.db.transaction() as session:
            # --grace is minutes already (durations.grace, as for `gm configure`).
            game = turns.create_game(
                app.shell,
                session,
                kind=args.game,
                name=args.name,
                players=players,
                gm_address=args.gm or app.settings.bot.address,
                options=options,
                deadline=args.deadline,
                timezone=args.timezone,
                signup=args.signup,
                grace=f"{args.grace}m" if args.grace else "",
                early_resolution=None if args.early_resolution is None else args.early_resolution == "on",
                press=PressMode(args.press),
                robot_seats=[r.strip() for r in args.robot],
            )
            game.min_reliability = args.min_reliability  # the entry gate (bot.games.reliability)
            # One line (tests/bot/cli/test_cli_friendly.py); early resolution and press: `game show`.
            said = (
                f"game {game.name} ({game.kind}) created: {counted(len(players), 'player')}"
                + (f" and {counted(len(args.robot), 'robot')}" if args.robot else "")
                + f", status {game.status}"
            )
        archive.publish(app.shell, [])  # its first commitment, now that it is committed
        print(said)  # after the commit: a closed stdout cannot undo the game
    return 0


def _cmd_game_options(args: argparse.Namespace) -> int:
    """Every option of a game (or of every game) with its range and default: `rules` alone,
    no configuration and no database."""
    import rules

    kinds = [rules.find_game(args.game).name] if args.game else list(rules.game_names())
    for number, kind in enumerate(kinds):
        game = rules.find_game(kind)
        if number:
            print()
        spelled = f"{kind.replace('_', '-')} or {kind}" if "_" in kind else kind
        print(f"{spelled} ({game.title}): flagman game new {kind.replace('_', '-')} --option KEY=VALUE ...")
        for line in game.option_help().splitlines():
            print(f"  {line}" if line.strip() else "")
        # The settings every game has beside its own options (also `gm configure GAME`).
        print(
            f"  --early-resolution on|off: the turn resolves as soon as every order is in "
            f"(default {'on' if game.early_resolution else 'off'})"
        )
        print(
            "  --press none|signed|anonymous: PRESS between the players, and whether it names its sender "
            "(default signed)"
        )
    return 0


def _due_words(deadline: str | None) -> str:
    """A turn's deadline as `game list` and `game show` say it (a manual schedule has none)."""
    return f"due {deadline}" if deadline else "no deadline (manual schedule: `flagman gm deadline GAME WHEN` sets one)"


def _cmd_game_list(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from bot import outlook, store
    from bot.letters.context import deadline_text
    from bot.models import Game

    listed: list[dict[str, object]] = []
    with open_app(args) as app, app.db.read() as session:
        for game in session.scalars(select(Game).order_by(Game.id)):
            turn = store.open_turn(session, game)
            due = deadline_text(outlook.timing(game, turn), game.timezone)
            robots = sum(1 for seat in game.seats if seat.robot)
            if args.json:
                listed.append(
                    {
                        "name": game.name,
                        "kind": game.kind,
                        "status": str(game.status),
                        "seats": len(game.seats),
                        "robots": robots,
                        "practice": bool(game.practice),
                        "open_turn": turn.label if turn else None,
                        "deadline": due,
                    }
                )
                continue
            where = f"{turn.label}, {_due_words(due)}" if turn else "-"
            seats = counted(len(game.seats), "seat") + (f" ({counted(robots, 'robot')})" if robots else "")
            print(
                f"{game.name:<12} {game.kind:<14} {game.status:<9} {seats}  {where}"
                + ("  [practice]" if game.practice else "")
            )
    if args.json:
        print(json.dumps(listed, indent=1))
    return 0


def _seat_shown(seat: Seat, on_file: str, label: str) -> tuple[dict[str, object], str]:
    """One seat as `flagman game show` shows it: its entry in the JSON, and its line; a person's
    seat by `label`, as the letters name it ("anna (Kim McDonald)" for a seat handed over)."""
    status = "" if seat.active else " (out)"
    player = seat.player
    vacation = (
        (player.vacation_from.isoformat(), player.vacation_to.isoformat())
        if player.vacation_from is not None and player.vacation_to is not None
        else None
    )
    entry: dict[str, object] = {
        "seat": seat.name,
        "shown": label,
        "robot": seat.robot_level if seat.robot else None,
        "address": None if seat.robot else player.address,
        "active": bool(seat.active),
        "nmr_streak": seat.nmr_streak,
        "orders": on_file or None,
        "timezone": None if seat.robot else player.timezone,
        "vacation": list(vacation) if vacation else None,
    }
    if seat.robot:
        driver = "(robot)" if seat.robot_level == "normal" else f"(robot, {seat.robot_level})"
        return entry, f"  {seat.name:<12} {driver:<32}{status}  {on_file}"
    away = f"  vacation {vacation[0]} to {vacation[1]}" if vacation else ""
    return entry, (
        f"  {label:<12} {player.address:<32} NMR streak {seat.nmr_streak}{status}  {on_file}"
        f"  zone {player.timezone}{away}"
    )


def _cmd_game_show(args: argparse.Namespace) -> int:
    from bot import outlook, store
    from bot.games import observers, turns
    from bot.letters.context import deadline_text, seat_labels

    with open_app(args) as app, app.db.read() as session:
        game = store.find_game_row(session, args.name)
        if game is None:
            print(f"flagman game show: no game called {args.name}", file=sys.stderr)
            return 2
        rules, state, turn = turns.current_state(session, game) if game.turns else (turns.rules_of(game), None, None)
        watching = observers.observers_of(session, game)
        due = deadline_text(outlook.timing(game, turn), game.timezone) if turn is not None else None
        seats: list[dict[str, object]] = []
        lines = [
            f"{game.name}: {rules.title}, {game.status}{' (practice)' if game.practice else ''}; GM {game.gm_address}; "
            f"deadlines {game.deadline_spec} ({game.timezone})",
            f"early resolution {'on' if game.early_resolution else 'off'}; press {game.press}; "
            f"observers {len(watching)}" + (f" ({', '.join(watching)})" if watching else ""),
        ]
        if turn is not None:
            lines.append(f"open: {turn.label}, {_due_words(due)}")
        seen = (
            outlook.of_turn(game, rules, state, store.turn_submissions(session, turn))
            if turn is not None and state is not None
            else None
        )
        labels = seat_labels(game.seats)
        for seat in game.seats:
            on_file = ""
            if seen is not None and state is not None and seat.name in rules.expected_players(state):
                on_file = {
                    outlook.Status.COMPLETE: "orders in",
                    outlook.Status.INCOMPLETE: "incomplete orders (the turn waits)",
                    outlook.Status.NONE: "no orders yet",
                }[seen.status(seat.name)]
            entry, line = _seat_shown(seat, on_file, labels.get(seat.name, seat.name))
            seats.append(entry)
            lines.append(line)
        standings: list[list[str]] = []
        if state is not None:
            standings = [[labels.get(name, name) for name in place] for place in rules.standings(state)]
            lines.extend("    " + ", ".join(place) for place in standings)
    if args.json:
        shown = {
            "name": game.name,
            "kind": game.kind,
            "title": rules.title,
            "status": str(game.status),
            "practice": bool(game.practice),
            "gm": game.gm_address,
            "deadlines": game.deadline_spec,
            "timezone": game.timezone,
            "early_resolution": bool(game.early_resolution),
            "press": str(game.press),
            "observers": list(watching),
            "open_turn": {"label": turn.label, "deadline": due} if turn is not None else None,
            "seats": seats,
            "standings": standings,
        }
        print(json.dumps(shown, indent=1))
    else:
        print("\n".join(lines))
    return 0


# -- the jobs --------------------------------------------------------------------------------


def _cmd_poll(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        need_secret(app.settings)
        need_database(app)
        report = app.service.poll()
        print(
            f"fetched {report.fetched}; "
            + ", ".join(f"{k} {v}" for k, v in sorted(report.outcomes.items()))
            + (f"; duplicates {report.duplicates}" if report.duplicates else "")
        )
    return 0


def _labels(app: App, done: list[tuple[str, int]]) -> list[tuple[str, str]]:
    """The turns resolved, named as the players know them ("Race turn 4"), not by number."""
    from sqlalchemy import select

    from bot.models import Game, Turn

    with app.db.read() as session:
        return [
            (
                name,
                session.scalar(
                    select(Turn.label)
                    .join(Game, Game.id == Turn.game_id)
                    .where(Game.name == name, Turn.number == number)
                )
                or f"turn {number}",
            )
            for name, number in done
        ]


def _cmd_tick(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        need_secret(app.settings)
        need_database(app)
        done = app.service.tick(read_first=True)
        print("resolved: " + (", ".join(f"{g} {label}" for g, label in _labels(app, done)) or "nothing due"))
    return 0


def _cmd_send(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        need_database(app)
        report = app.service.send()
        print(f"sent {report.sent}, retrying {report.retrying}, failed {report.failed}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from bot.daemon.run import run_service
    from bot.ops.upgrade import MigrationError

    settings = load(args)
    need_secret(settings)
    try:
        return run_service(
            settings, config_path=Path(args.config) if args.config else None, version=version(), migrate=args.migrate
        )
    except MigrationError as exc:
        print(f"flagman run: {one_line(str(exc), 1000)}", file=sys.stderr)
        return exc.status


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.season:
        from bot.cli.demo_season import run_season_demo

        return run_season_demo(keep=args.keep, quiet=args.quiet)
    from bot.cli.demo import run_demo

    return run_demo(keep=args.keep, quiet=args.quiet)


# -- the parser ------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal of a bad argument is one line (every bad
    argument gets one line and exit status 2, never a usage block or a traceback); the
    subcommands' parsers are of this class too (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _register_game(sub: Subcommands) -> None:
    """`flagman game new|list|show|options`."""
    game = sub.add_parser("game", help="create, list and show games; the options of each kind of game").add_subparsers(
        dest="game_command", required=True
    )
    p = game.add_parser("new", help="create a game")
    p.add_argument("game", help="racecraft, speed-circuit (or speed_circuit) or speedphreakz")
    p.add_argument("--name", required=True, help="the game's short name, e.g. rc1")
    p.add_argument("--player", action="append", default=[], metavar="NAME=ADDRESS[,TZ]")
    p.add_argument(
        "--robot",
        action="append",
        default=[],
        metavar="NAME[:LEVEL]",
        help="a seat the game's robot drives (repeatable): never mailed, its orders on file as each turn "
        "opens; LEVEL easy for a gentler driver (default normal)",
    )
    p.add_argument("--gm", help="the GM's address (default: the bot's own)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument(
        "--deadline",
        default="48h",
        type=durations.schedule,
        metavar="SPEC",
        help=durations.DEADLINE_HELP + " (default 48h)",
    )
    p.add_argument("--force", action="store_true", help=durations.FORCE_HELP)
    p.add_argument("--timezone", help="the game's time zone (default: [bot] timezone)")
    p.add_argument("--grace", type=durations.grace, metavar="MINUTES|DURATION", help=durations.GRACE_HELP)
    p.add_argument("--signup", action="store_true", help="open for sign-ups (JOIN) instead of starting now")
    p.add_argument(
        "--early-resolution",
        choices=("on", "off"),
        help="resolve a turn as soon as every order is in (default: the game's own, on for every game "
        "here); off: every turn waits for its deadline",
    )
    p.add_argument(
        "--press",
        choices=("none", "signed", "anonymous"),
        default="signed",
        help="what PRESS may do: no press, signed messages, or anonymous ones (default signed)",
    )
    p.add_argument(
        "--min-reliability",
        type=durations.min_reliability,
        metavar="RATIO",
        help="the entry gate: a JOIN from a person whose on-time ratio is below RATIO (e.g. 0.8) is refused; "
        "a person with no record yet is let in",
    )
    p.set_defaults(func=_cmd_game_new)
    p = game.add_parser(
        "list",
        help="every game, one line each",
        description="Every game, one line each: its name, kind, status, seats (and robots), and its open "
        "turn with the deadline in the game's time zone.",
    )
    p.add_argument("--json", action="store_true", help="a JSON list, one object per game")
    p.set_defaults(func=_cmd_game_list)
    p = game.add_parser(
        "show",
        help="one game: seats, orders in, standings",
        description="One game: its rules, status, GM, schedule, early resolution, press and observers; "
        "the open turn and its deadline; each seat with its player, whether its orders are in, and away "
        "dates; the standings.",
    )
    p.add_argument("name", help="the game's short name (as `game list` shows it)")
    p.add_argument("--json", action="store_true", help="the same as one JSON object")
    p.set_defaults(func=_cmd_game_show)
    p = game.add_parser("options", help="the options of a kind of game (or of every kind), with defaults and ranges")
    p.add_argument(
        "game", nargs="?", help="racecraft, speed-circuit (or speed_circuit) or speedphreakz (default: every game)"
    )
    p.set_defaults(func=_cmd_game_options)


def _register_jobs(sub: Subcommands) -> None:
    """The service's jobs once each (`poll`, `tick`, `send`), and the service itself (`run`)."""
    for name, func, text, description in (
        (
            "poll",
            _cmd_poll,
            "read the inbox once and answer every mail",
            "Read the inbox until it is empty, once: every mail applied and confirmed, refused with a "
            "reason, or ignored and logged; the answers are queued in the outbox (`flagman send` sends "
            "them). What the service's poll job does. Prints how many mails were fetched and what became "
            "of them.",
        ),
        (
            "tick",
            _cmd_tick,
            "resolve every turn that is due",
            "Read the inbox first (mail that came by a deadline counts), then resolve every turn whose "
            "deadline (plus grace) has passed, fill in the NMR defaults, queue the results, reminders and "
            "late notices. What the service's tick job does. Prints the turns resolved.",
        ),
        (
            "send",
            _cmd_send,
            "send the outbox",
            "Send the mail waiting in the outbox through [outbox] (SMTP relay or Maildir), once; a "
            "temporary failure is tried again later with back-off. What the service's send job does. "
            "Prints how many were sent, retrying and failed.",
        ),
    ):
        sub.add_parser(name, help=text, description=description).set_defaults(func=func)
    p = sub.add_parser(
        "run",
        help="the service: poll, tick and send on their schedules",
        description="The service, until SIGTERM: reads the inbox (IMAP IDLE wakes it at once), works out "
        "due turns, sends the outbox, and mails each GM's digest, on the intervals of [schedule]. "
        "SIGHUP reloads the configuration and the templates. A database it cannot use yet (its server "
        "down, read-only, a full disk) is waited for, with back-off, not a reason to exit.",
    )
    p.add_argument(
        "--migrate",
        action="store_true",
        help="migrate the database to this flagman's schema once it can be used (what the systemd unit runs)",
    )
    p.set_defaults(func=_cmd_run)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="flagman",
        description="Flagman, a play-by-email race director.",
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    parser.add_argument(
        "--config",
        default=os.environ.get("FLAGMAN_CONFIG"),
        help="configuration file (default ./flagman.toml, or $FLAGMAN_CONFIG)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every decision in detail")
    sub = cast("Subcommands", parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))

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
    p.add_argument(
        "--season",
        action="store_true",
        help="a short championship season instead: three races of players and robots, the table after each",
    )
    p.set_defaults(func=_cmd_demo)

    _register_game(sub)
    _register_jobs(sub)

    p = sub.add_parser("play", help="resolve a scripted game offline and print JSON")
    p.add_argument("game")
    p.add_argument("--script", required=True, help="script file, or - for stdin")
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    p.set_defaults(func=_cmd_play)

    # The other groups of subcommands, each in its module of bot.cli.
    cli_gm.register(sub)
    cli_ops.register(sub)
    cli_archive.register(sub)
    cli_season.register(sub)
    cli_rating.register(sub)
    cli_archive.register_verify(sub)
    return parser


# Loggers whose INFO lines say what the command prints itself: left out of its output unless
# --verbose, so that each result is printed once. A GM command's outcome is
# logged by bot.commands.registry and printed by bot.cli.gm; a game made or started, by bot.games.turns.
_ECHOED: dict[str, tuple[str, ...]] = {"gm": ("flagman.gm", "flagman.games"), "game": ("flagman.games",)}


def setup_logging(verbose: bool, echoed: Sequence[str] = (), fmt: str = "text") -> None:
    """The log on stdout (bot.cli.logs): INFO, DEBUG with `verbose`; text or JSON lines, with
    syslog priority prefixes when stdout is the journal."""
    logs.setup_logging(verbose, echoed, fmt=fmt)


def _stdout_gone() -> None:
    """The reader of stdout went away (`flagman game list | head -1`): the recipe of the Python
    docs (signal module, "Note on SIGPIPE"): stdout goes to devnull, so that the flush at exit
    does not fail a second time, and the exit status is 1."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no file descriptor (a test's capture)
        pass


def _refusal(error: ValueError) -> str:
    """The words of a refusal the command line prints: a bad time's (bot.schedules, which
    imports nothing of the shell) rendered from its facts by the letters, any other's its own."""
    from bot.schedules import DeadlineError

    if isinstance(error, DeadlineError):
        from bot.letters.refusals import deadline_refused

        return deadline_refused(error.problem)
    return str(error)


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in ("play", "demo"):
        setup_logging(args.verbose, _ECHOED.get(args.command, ()), logs.configured_format(args.config))
    prog = " ".join(["flagman", args.command, *([args.game_command] if getattr(args, "game_command", None) else [])])
    try:
        code: int = args.func(args)
    except ValueError as exc:
        # A refusal, never a traceback: SettingsError, GameError, DeadlineError,
        # UnknownGameError and OptionError are all ValueErrors. Caught by the base class so
        # that `flagman play` need not import the shell's modules just to name them; a
        # DeadlineError carries facts, whose words the letters render.
        print(f"{prog}: {_refusal(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        # The IMAP server, the SMTP relay or the database cannot be reached (3), or the disk or
        # the database fails (4): what and what to do, in two lines. Anything else is a bug:
        # its traceback stays.
        explained = explain(exc, args)
        if explained is None:
            raise
        lines, status = explained
        for line in lines:
            print(f"{prog}: {one_line(line)}", file=sys.stderr)
        return status
    return code


def main(argv: Sequence[str] | None = None) -> int:
    if logs.is_journal(sys.stderr) and not isinstance(sys.stderr, logs.JournalErrors):
        sys.stderr = logs.JournalErrors(sys.stderr)
    try:
        try:
            code = _run(argv)
        except SystemExit:
            sys.stdout.flush()  # --help, --version
            raise
        # A closed pipe shows here, not as "Exception ignored" when the interpreter exits.
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_gone()
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
