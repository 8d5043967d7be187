"""GM subcommands on the command line: the same commands the GM can send by mail, and more.

* ``flagman gm VERB GAME ARGS...`` -- one subcommand per GM command of mail-interface.md
  (``flagman gm extend rc1 24h``, ``flagman gm order rc1 roger "USE 3"``), checked against
  the same syntax, confirmed by mail to the GM and written to the audit log ``via cli``; the
  result printed once (its log line is left out of the output: bot.cli._ECHOED); a refused
  command is printed with its reason (status 2) and audited, but mailed to nobody;
* ``flagman gm configure GAME`` -- the game's options: ``--grace``, ``--early-resolution``,
  ``--reminders``, ``--nmr-limit``, ``--nmr-action``, ``--deadline`` (``--grace`` and
  ``--deadline`` read as by `game new`: bot.cli.durations), ``--press`` (none, signed,
  anonymous);
* ``flagman gm audit GAME`` -- the audit log;
* ``flagman digest [--now]`` -- send the due daily digests (all of them at once with --now);
* ``flagman remind`` -- send the reminders that are due (the tick does this too).
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from bot.cli import durations
from bot.cli.context import need_secret, one_line, open_app

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot.app import App
    from bot.cli.context import Subcommands
    from bot.commands.registry import GmResult


def _fail(prog: str, message: str) -> int:
    """A refusal on the command line: one line on stderr, exit status 2 (never a traceback)."""
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
    return 2


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments to a `flagman gm` subcommand: one line on stderr and status 2, as for
    every other refusal of a GM command (argparse would print the usage as well)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {one_line(message)} (see {self.prog} --help)\n")

    # argparse's own signature is overloaded on the namespace's type; these parsers are only
    # ever given a Namespace (by argparse itself), hence the narrower one and the ignore.
    def parse_known_args(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        self._before_parsing()
        # Left to itself, argparse hands unknown options up to `flagman`'s own parser, which
        # prints its usage: refuse them here, in one line.
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _before_parsing(self) -> None:
        """A hook for `_GmParser`."""


class _GmParser(_OneLineParser):
    """`flagman gm`: its VERB subcommands are added when it is used (to parse, or to print
    its help), not when the `flagman` parser is built. They are made from bot.commands,
    which grows with the GM commands; `flagman play`, which builds the same parser, must not
    import the shell (tests/rules/test_play_cli.py)."""

    _verbs_added = False  # a class attribute: bot.cli's parser made this one, not __init__

    def _before_parsing(self) -> None:
        if not self._verbs_added:
            self._verbs_added = True
            _register_verbs(self)

    def format_usage(self) -> str:
        self._before_parsing()
        return super().format_usage()

    def format_help(self) -> str:
        self._before_parsing()
        return super().format_help()


def _actor(args: argparse.Namespace) -> str:
    if getattr(args, "actor", None):
        return str(args.actor)
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _execute(app: App, session: Session, args: argparse.Namespace) -> GmResult:
    """`bot.commands.registry.execute_words` with the GM's letter held back until the outcome is known:
    a command done is confirmed to the GM by mail, as by mail; a refused one is printed by the
    CLI and mailed to nobody (a typo at the terminal is no news for the GM's inbox).
    The audit log has both."""
    from bot import letters, store
    from bot.commands import GM_VERBS, gm, registry
    from bot.fate import Refused
    from bot.intake import proven
    from bot.letters.words import say

    command = GM_VERBS[args.verb]  # the VERB subcommands are made from the same table
    robot = getattr(args, "robot", None)
    words = list(args.args) + ([f"ROBOT {robot}"] if robot else [])
    parsed = command.split(words)
    if parsed is None:
        raise Refused(say("gm_refused", why="syntax", syntax=command.syntax, example=command.example))
    result = registry.execute(
        app.shell,
        session,
        command.verb,
        args.game.lower(),
        parsed,
        actor=_actor(args),
        via="cli",
        line=" ".join([command.verb, args.game, *words]),
        deliver=False,
    )
    if result.ok and result.letter is not None:
        letter = result.letter
        letters.post(app.shell, session, letter.to, letter.rendered, kind=letter.kind, game=letter.game)
        game = store.find_game_row(session, result.game)
        if game is not None:
            # A command that completes a turn that resolves early resolves it now, as by mail.
            told = list(result.news)
            resolved = proven.resolve_completed(app.shell, session, game, told)
            gm.tell_players(app.shell, session, game, told, app.shell.now())
            result = dataclasses.replace(result, resolved=(*result.resolved, *resolved))
    return result


def _cmd_verb(args: argparse.Namespace) -> int:
    from bot.games import archive

    prog = f"flagman gm {args.verb.lower()}"
    with open_app(args) as app:
        try:
            need_secret(app.settings)
            with app.db.transaction() as session:
                result = _execute(app, session, args)
            archive.publish(app.shell, result.resolved)  # PROCESS: the turn, now that it is committed
            if not result.ok:
                # The reason is the first paragraph (an ORDER refusal goes on with the order help).
                return _fail(f"{result.verb} {one_line(result.game, 40)}", "refused: " + result.text.split("\n\n")[0])
            if result.extra:
                print(result.extra.rstrip())
            # The command's text (as mailed to the GM) says the players "were told": true by mail,
            # where their mail goes out with the GM's; here it is queued, and sent (or not) next.
            print(f"{result.verb} {result.game}: done: {queued_not_told(result.text)}")
            if args.send:
                # A relay that cannot be reached raises here: two lines and status 3, the mail
                # kept in the outbox (bot.cli.servers).
                report = app.service.send()
                print(f"mail sent {report.sent}, retrying {report.retrying}, failed {report.failed}")
            else:
                print("mail queued, not sent (--no-send): the service sends it, or `flagman send`")
            return 0
        except (ValueError, OverflowError) as exc:
            # Refused, DeadlineError, FigureError, OptionError, GameError, SettingsError are
            # ValueErrors: a refusal, never a traceback.
            from bot.letters.refusals import refusal

            return _fail(prog, refusal(exc) or type(exc).__name__)


_TOLD = re.compile(r"(?:;\s*the players were told|\s*They were told)\.\s*$")


def queued_not_told(text: str) -> str:
    """A GM command's text as the command line says it: "the players were told" (the mail that
    tells them is queued in the same transaction, and goes out with the GM's own confirmation)
    becomes what is true when the CLI prints it, before the send: their mail is queued."""
    return _TOLD.sub("; their mail is queued.", text)


def _on_off(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("on", "yes", "true", "1"):
        return True
    if lowered in ("off", "no", "false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: write on or off")


def _cmd_configure(args: argparse.Namespace) -> int:
    with open_app(args) as app:
        try:
            return _configure(app, args)
        except (ValueError, OverflowError) as exc:
            # DeadlineError, OptionError, GameError and bad numbers: one line, no traceback.
            from bot.letters.refusals import refusal

            return _fail("flagman gm configure", refusal(exc) or type(exc).__name__)


MAX_NMR_LIMIT = 999


def _nmr_limit(text: str) -> int | None:
    """``--nmr-limit``: a whole number of turns 1..MAX_NMR_LIMIT, or off (none, 0)."""
    value = text.strip().lower()
    if value in ("off", "none", "0"):
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= len(str(MAX_NMR_LIMIT))) or int(value) < 1:
        raise ValueError(
            f"--nmr-limit must be a whole number from 1 to {MAX_NMR_LIMIT}, or off; not {one_line(text, 40)!r}"
        )
    return int(value)


def _configure(app: App, args: argparse.Namespace) -> int:
    from bot import store
    from bot.games import reminders, turns
    from bot.models import GmAudit

    if args.deadline is not None:
        durations.check_turn_length(args.deadline, force=args.force)
    changes: list[str] = []
    with app.db.transaction() as session:
        game = store.find_game_row(session, args.game)
        if game is None:
            return _fail("flagman gm configure", f"no game called {args.game}")
        if args.grace is not None:
            game.grace_minutes = args.grace  # minutes (durations.grace, as for `game new`)
            changes.append(f"grace {game.grace_minutes} min")
        if args.early_resolution is not None:
            if args.early_resolution and not turns.rules_of(game).early_resolution:
                raise ValueError(f"{turns.rules_of(game).title} does not allow early resolution")
            game.early_resolution = args.early_resolution
            changes.append(f"early resolution {'on' if args.early_resolution else 'off'}")
        if args.reminders is not None:
            game.reminder_spec = reminders.validate_spec(args.reminders)
            changes.append(f"reminders {game.reminder_spec}")
        if args.nmr_limit is not None:
            limit = _nmr_limit(args.nmr_limit)
            game.nmr_limit = limit
            changes.append(f"NMR limit {limit or 'off'}")
        if args.nmr_action is not None:
            game.nmr_action = args.nmr_action
            changes.append(f"at the NMR limit: {args.nmr_action}")
        if args.press is not None:
            game.press = args.press
            changes.append(f"press {args.press}")
        if args.min_reliability is not None:
            game.min_reliability = args.min_reliability or None  # "off": no gate
            changes.append(f"entry gate {game.min_reliability or 'off'}")
        if args.deadline is not None:  # a schedule (durations.schedule)
            game.deadline_spec = args.deadline
            changes.append(f"deadlines {args.deadline} (from the next turn on)")
        if changes:
            session.add(
                GmAudit(
                    game_id=game.id,
                    actor=_actor(args),
                    via="cli",
                    message_id="",
                    command="configure " + "; ".join(changes),
                    outcome="done",
                    created_at=app.shell.now(),
                    undo=None,
                )
            )
        said = (
            f"{game.name}: deadlines {game.deadline_spec} ({game.timezone}), grace {game.grace_minutes} min, "
            f"early resolution {'on' if game.early_resolution else 'off'}, reminders {game.reminder_spec}, "
            f"NMR limit {game.nmr_limit or 'off'} ({game.nmr_action}), press {game.press}"
            + (f", entry gate {game.min_reliability}" if game.min_reliability else "")
        )
    print(said)  # after the commit: a closed stdout cannot undo the change
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from bot import store
    from bot.clock import as_utc
    from bot.models import GmAudit
    from bot.schedules import format_local

    with open_app(args) as app, app.db.read() as session:
        game = store.find_game_row(session, args.game)
        if game is None:
            print(f"no game called {args.game}", file=sys.stderr)
            return 2
        rows = session.scalars(select(GmAudit).where(GmAudit.game_id == game.id).order_by(GmAudit.id)).all()
        if args.json:
            import json

            listed = [
                {
                    "at": as_utc(row.created_at).isoformat(),
                    "via": row.via,
                    "actor": row.actor,
                    "command": row.command,
                    "outcome": row.outcome,
                    "message_id": row.message_id or None,
                }
                for row in rows
            ]
            print(json.dumps(listed, indent=1))
            return 0
        for row in rows:
            print(
                f"{format_local(as_utc(row.created_at), game.timezone)}  {row.via:<4} {row.actor}  "
                f"{row.command}  -> {row.outcome.splitlines()[0] if row.outcome else ''}"
                + (f"  [{row.message_id}]" if row.message_id else "")
            )
    return 0


def _cmd_digest(args: argparse.Namespace) -> int:
    from bot.gm import digest

    with open_app(args) as app:
        need_secret(app.settings)
        count = digest.send_due_digests(app.shell, force=args.now)
        print(f"digests queued: {count}")
        if count:
            app.service.send()
    return 0


def _cmd_remind(args: argparse.Namespace) -> int:
    from bot.games import reminders

    with open_app(args) as app:
        need_secret(app.settings)
        count = reminders.send_reminders(app.shell)
        print(f"reminders queued: {count}")
        if count:
            app.service.send()
    return 0


def register(sub: Subcommands) -> None:
    gm = sub.add_parser("gm", help="the GM's commands (as by mail), game options, the audit log")
    gm.__class__ = _GmParser  # made by bot.cli's parser: one-line errors for an unknown VERB too

    p = sub.add_parser("digest", help="send the GM digests that are due")
    p.add_argument("--now", action="store_true", help="send every GM's digest now, whatever the hour")
    p.set_defaults(func=_cmd_digest)

    p = sub.add_parser("remind", help="send the deadline reminders that are due")
    p.set_defaults(func=_cmd_remind)


def _register_verbs(gm: argparse.ArgumentParser) -> None:
    """`flagman gm VERB`: one subcommand per GM command of bot.commands, then configure and audit."""
    from bot.commands import GM_COMMANDS

    verbs = gm.add_subparsers(dest="gm_command", required=True, metavar="VERB", parser_class=_OneLineParser)
    for spec in GM_COMMANDS:
        p = verbs.add_parser(
            spec.verb.lower(), help=spec.summary, description=f"{spec.syntax}: {spec.summary}. By mail: {spec.example}"
        )
        p.add_argument("game")
        p.add_argument("args", nargs="*", help=spec.syntax.split(" ", 2)[2] if spec.syntax.count(" ") > 1 else "")
        p.add_argument("--as", dest="actor", help="who to record in the audit log (default cli:<user>)")
        p.add_argument("--no-send", dest="send", action="store_false", help="queue the mails without sending them")
        if spec.verb == "REPLACE":  # `flagman gm replace GAME SEAT --robot`
            p.add_argument(
                "--robot",
                nargs="?",
                const="normal",
                default=None,
                metavar="LEVEL",
                help="hand the seat to the game's robot driver, at LEVEL (normal unless said; easy: gentler)",
            )
        p.set_defaults(func=_cmd_verb, verb=spec.verb)

    p = verbs.add_parser(
        "configure", help="a game's options: grace, early resolution, reminders, NMR limit, press, entry gate"
    )
    p.add_argument("game")
    p.add_argument("--grace", type=durations.grace, metavar="MINUTES|DURATION", help=durations.GRACE_HELP)
    p.add_argument(
        "--early-resolution",
        type=_on_off,
        metavar="on|off",
        help="resolve as soon as every order is in (where the game allows it)",
    )
    p.add_argument("--reminders", metavar="SPEC", help="reminder marks before the deadline, e.g. 24h,2h; or none")
    p.add_argument(
        "--nmr-limit",
        metavar="N|off",
        help="after N turns in a row without orders the seat is dropped or handed to the GM",
    )
    p.add_argument("--nmr-action", choices=("gm", "drop"), help="what happens at the NMR limit (default gm)")
    p.add_argument(
        "--press",
        choices=("none", "signed", "anonymous"),
        help="what PRESS may do in the game: no press, signed messages, or anonymous ones",
    )
    p.add_argument(
        "--deadline",
        type=durations.schedule,
        metavar="SPEC",
        help="the deadline schedule for the turns opened from now on: " + durations.DEADLINE_HELP,
    )
    p.add_argument(
        "--min-reliability",
        type=durations.min_reliability_or_off,
        metavar="RATIO|off",
        help="the entry gate: a JOIN from a person whose on-time ratio is below RATIO is refused (off: none)",
    )
    p.add_argument("--force", action="store_true", help=durations.FORCE_HELP)
    p.add_argument("--as", dest="actor", help="who to record in the audit log")
    p.set_defaults(func=_cmd_configure)

    p = verbs.add_parser("audit", help="the GM audit log of a game")
    p.add_argument("game")
    p.add_argument("--json", action="store_true", help="a JSON list, one object per command (times in UTC)")
    p.set_defaults(func=_cmd_audit)
