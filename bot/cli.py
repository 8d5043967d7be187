"""`flagman ...`: each subcommand builds what it needs and returns an exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def _cmd_play(args: argparse.Namespace) -> int:
    from rules import UnknownGameError
    from rules.script import ScriptError, run_script

    try:
        raw = sys.stdin.read() if args.script == "-" else open(args.script, encoding="utf-8").read()
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flagman", description="Flagman, a play-by-email race director.")
    parser.add_argument("--config", help="configuration file (default ./flagman.toml or $FLAGMAN_CONFIG)")
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="resolve a scripted game offline and print JSON")
    play.add_argument("game")
    play.add_argument("--script", required=True, help="script file, or - for stdin")
    play.add_argument("--pretty", action="store_true", help="indent the JSON")
    play.set_defaults(func=_cmd_play)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
