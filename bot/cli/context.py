"""What every subcommand gets from the global options: the settings, and the app built on them.

A leaf of the CLI package (it imports no other `bot.cli` module), so the command modules
can share it without importing each other. Nothing here is imported before a command
needs it: `flagman play` loads neither the settings nor the database.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from bot.app import App
    from bot.settings import Settings

    # What `ArgumentParser.add_subparsers()` returns: each command module registers on it.
    Subcommands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


def load(args: argparse.Namespace) -> Settings:
    """The settings of ``--config`` (or $FLAGMAN_CONFIG, or ./flagman.toml)."""
    from bot.settings import load_settings

    return load_settings(Path(args.config) if args.config else None)


def open_app(args: argparse.Namespace) -> App:
    """The application on the settings of `args`; use it as ``with open_app(args) as app:``."""
    from bot.app import build_app

    return build_app(load(args))


def need_secret(settings: Settings) -> None:
    """Refuse to sign anything without a site secret (reply addresses, seat passwords)."""
    from bot.settings import SettingsError

    if not settings.secrets.site_secret:
        raise SettingsError("no site secret: set FLAGMAN_SECRET, a 'site-secret' credential, or [bot] secret_file")
