"""GM subcommands on the command line: the same commands the GM can send by mail, and more.

* ``flagman gm VERB GAME ARGS...`` -- one subcommand per GM command of mail-interface.md
  (``flagman gm extend rc1 24h``, ``flagman gm order rc1 roger "USE 3"``), checked against
  the same syntax, confirmed by mail to the GM and written to the audit log ``via cli``;
* ``flagman gm configure GAME`` -- the game's deadline options: ``--grace``,
  ``--early-resolution``, ``--reminders``, ``--nmr-limit``, ``--nmr-action``, ``--deadline``;
* ``flagman gm audit GAME`` -- the audit log;
* ``flagman digest [--now]`` -- send the due daily digests (all of them at once with --now);
* ``flagman remind`` -- send the reminders that are due (the tick does this too).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from bot.commands import GM_COMMANDS


def _app(args: argparse.Namespace) -> Any:
    from bot.cli import _app as build

    return build(args)


def _actor(args: argparse.Namespace) -> str:
    if getattr(args, "actor", None):
        return str(args.actor)
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _cmd_verb(args: argparse.Namespace) -> int:
    from bot import gm
    from bot.cli import _need_secret

    app = _app(args)
    _need_secret(app.settings)
    try:
        with app.db.transaction() as session:
            result = gm.execute_words(app.shell, session, args.verb, args.game, list(args.args), actor=_actor(args))
    except gm.GmRefusal as exc:
        print(f"flagman gm {args.verb.lower()}: {exc}", file=sys.stderr)
        app.close()
        return 2
    if result.extra:
        print(result.extra.rstrip())
    stream = sys.stdout if result.ok else sys.stderr
    print(f"{result.verb} {result.game}: {'done' if result.ok else 'refused'}: {result.text}", file=stream)
    if args.send:
        app.service.send()
    app.close()
    return 0 if result.ok else 2


def _on_off(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("on", "yes", "true", "1"):
        return True
    if lowered in ("off", "no", "false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: write on or off")


def _cmd_configure(args: argparse.Namespace) -> int:
    from bot import games as G
    from bot import reminders as R
    from bot.deadlines import parse_schedule
    from bot.models import GmAudit

    app = _app(args)
    changes: list[str] = []
    with app.db.transaction() as session:
        game = G.find_game_row(session, args.game)
        if game is None:
            print(f"no game called {args.game}", file=sys.stderr)
            app.close()
            return 2
        if args.grace is not None:
            if args.grace < 0:
                raise ValueError("--grace must be 0 or more minutes")
            game.grace_minutes = args.grace
            changes.append(f"grace {args.grace} min")
        if args.early_resolution is not None:
            if args.early_resolution and not G.rules_of(game).early_resolution:
                raise ValueError(f"{G.rules_of(game).title} does not allow early resolution")
            game.early_resolution = args.early_resolution
            changes.append(f"early resolution {'on' if args.early_resolution else 'off'}")
        if args.reminders is not None:
            game.reminder_spec = R.validate_spec(args.reminders)
            changes.append(f"reminders {game.reminder_spec}")
        if args.nmr_limit is not None:
            limit = None if args.nmr_limit.lower() in ("off", "none", "0") else int(args.nmr_limit)
            if limit is not None and limit < 1:
                raise ValueError("--nmr-limit must be 1 or more, or off")
            game.nmr_limit = limit
            changes.append(f"NMR limit {limit or 'off'}")
        if args.nmr_action is not None:
            game.nmr_action = args.nmr_action
            changes.append(f"at the NMR limit: {args.nmr_action}")
        if args.deadline is not None:
            parse_schedule(args.deadline)
            game.deadline_spec = args.deadline
            changes.append(f"deadlines {args.deadline} (from the next turn on)")
        if changes:
            session.add(GmAudit(game_id=game.id, actor=_actor(args), via="cli", message_id="",
                                command="configure " + "; ".join(changes), outcome="done", created_at=app.shell.now(),
                                undo=None))
        print(f"{game.name}: deadlines {game.deadline_spec} ({game.timezone}), grace {game.grace_minutes} min, "
              f"early resolution {'on' if game.early_resolution else 'off'}, reminders {game.reminder_spec}, "
              f"NMR limit {game.nmr_limit or 'off'} ({game.nmr_action})")
    app.close()
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from bot import games as G
    from bot.deadlines import format_local
    from bot.models import GmAudit

    app = _app(args)
    with app.db.read() as session:
        game = G.find_game_row(session, args.game)
        if game is None:
            print(f"no game called {args.game}", file=sys.stderr)
            app.close()
            return 2
        for row in session.scalars(select(GmAudit).where(GmAudit.game_id == game.id).order_by(GmAudit.id)):
            from bot.clock import as_utc

            print(f"{format_local(as_utc(row.created_at), game.timezone)}  {row.via:<4} {row.actor}  "
                  f"{row.command}  -> {row.outcome.splitlines()[0] if row.outcome else ''}"
                  + (f"  [{row.message_id}]" if row.message_id else ""))
    app.close()
    return 0


def _cmd_digest(args: argparse.Namespace) -> int:
    from bot import digest
    from bot.cli import _need_secret

    app = _app(args)
    _need_secret(app.settings)
    count = digest.send_due_digests(app.shell, force=args.now)
    print(f"digests queued: {count}")
    if count:
        app.service.send()
    app.close()
    return 0


def _cmd_remind(args: argparse.Namespace) -> int:
    from bot import reminders
    from bot.cli import _need_secret

    app = _app(args)
    _need_secret(app.settings)
    count = reminders.send_reminders(app.shell)
    print(f"reminders queued: {count}")
    if count:
        app.service.send()
    app.close()
    return 0


def register(sub: Any) -> None:
    gm = sub.add_parser("gm", help="the GM's commands (as by mail), game options, the audit log")
    verbs = gm.add_subparsers(dest="gm_command", required=True, metavar="VERB")
    for spec in GM_COMMANDS:
        p = verbs.add_parser(spec.verb.lower(), help=spec.summary,
                             description=f"{spec.syntax}: {spec.summary}. By mail: {spec.example}")
        p.add_argument("game")
        p.add_argument("args", nargs="*", help=spec.syntax.split(" ", 2)[2] if spec.syntax.count(" ") > 1 else "")
        p.add_argument("--as", dest="actor", help="who to record in the audit log (default cli:<user>)")
        p.add_argument("--no-send", dest="send", action="store_false", help="queue the mails without sending them")
        p.set_defaults(func=_cmd_verb, verb=spec.verb)

    p = verbs.add_parser("configure", help="deadline options of a game: grace, early resolution, reminders, NMR limit")
    p.add_argument("game")
    p.add_argument("--grace", type=int, metavar="MINUTES", help="orders still accepted this long after the deadline")
    p.add_argument("--early-resolution", type=_on_off, metavar="on|off",
                   help="resolve as soon as every order is in (where the game allows it)")
    p.add_argument("--reminders", metavar="SPEC", help="reminder marks before the deadline, e.g. 24h,2h; or none")
    p.add_argument("--nmr-limit", metavar="N|off", help="after N turns in a row without orders the seat is dropped "
                                                         "or handed to the GM")
    p.add_argument("--nmr-action", choices=("gm", "drop"), help="what happens at the NMR limit (default gm)")
    p.add_argument("--deadline", metavar="SPEC", help="the deadline schedule for the turns opened from now on")
    p.add_argument("--as", dest="actor", help="who to record in the audit log")
    p.set_defaults(func=_cmd_configure)

    p = verbs.add_parser("audit", help="the GM audit log of a game")
    p.add_argument("game")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("digest", help="send the GM digests that are due")
    p.add_argument("--now", action="store_true", help="send every GM's digest now, whatever the hour")
    p.set_defaults(func=_cmd_digest)

    p = sub.add_parser("remind", help="send the deadline reminders that are due")
    p.set_defaults(func=_cmd_remind)
