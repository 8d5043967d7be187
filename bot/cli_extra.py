"""Subcommands beyond the core jobs, each group in its own module."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    from bot import cli_archive, cli_gm, cli_ops

    cli_gm.register(sub)
    cli_ops.register(sub)
    cli_archive.register(sub)


def add(sub: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    return parser
