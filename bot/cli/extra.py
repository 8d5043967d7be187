"""Subcommands beyond the core jobs, each group in its own module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli import archive as cli_archive
from bot.cli import gm as cli_gm
from bot.cli import ops as cli_ops

if TYPE_CHECKING:
    from bot.cli.context import Subcommands


def register(sub: Subcommands) -> None:
    cli_gm.register(sub)
    cli_ops.register(sub)
    cli_archive.register(sub)
    cli_archive.register_verify(sub)
