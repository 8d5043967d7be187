"""What every subcommand gets from the global options: the settings, and the app built on them.

A leaf of the CLI package (it imports no other `bot.cli` module but the leaf
`bot.cli.servers`), so the command modules can share it without importing each other.
Nothing here is imported before a command needs it: `flagman play` loads neither the
settings nor the database.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from bot.app import App
    from bot.db import Database
    from bot.settings import Settings

    # What `ArgumentParser.add_subparsers()` returns: each command module registers on it.
    Subcommands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


def load(args: argparse.Namespace) -> Settings:
    """The settings of ``--config`` (or $FLAGMAN_CONFIG, or ./flagman.toml)."""
    from bot.settings import load_settings

    return load_settings(Path(args.config) if args.config else None)


def open_app(args: argparse.Namespace) -> App:
    """The application on the settings of `args`; use it as ``with open_app(args) as app:``.

    Its mail goes out through `RelayWatch`: a command run by hand that cannot reach the SMTP
    relay says so and exits 3 (bot.cli.servers), where the service would retry later.
    """
    from bot.app import build_app
    from bot.cli.servers import RelayWatch

    app = build_app(load(args))
    if app.settings.outbox.kind == "smtp":
        app.use_mailer(RelayWatch(app.mailer))
    return app


MAX_LINE = 500  # a refusal printed by the CLI is one line of at most this many characters


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """`text` as one printable line: white space (line breaks included) collapsed, control
    and format characters shown as ``?``, cut to `limit` characters."""
    flat = " ".join(text.split())
    flat = "".join(c if c.isprintable() else "?" for c in flat[: limit + 1])
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def counted(count: int, word: str) -> str:
    """`count` and `word`, plural unless one: "1 player", "5 players"."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def need_secret(settings: Settings) -> None:
    """Refuse to sign anything without a site secret (reply addresses, seat passwords)."""
    from bot.settings import SettingsError

    if not settings.secrets.site_secret:
        raise SettingsError("no site secret: set FLAGMAN_SECRET, a 'site-secret' credential, or [bot] secret_file")


class DatabaseNotReady(ValueError):  # noqa: N818 - named for what happened, as Refused
    """The database a job command would work on is not there, or not at this flagman's schema."""


def need_database(app: App) -> None:
    """Refuse a job (poll, tick, send) on a database that is not there or not migrated, rather
    than report "fetched 0" on it: SQLite would make an empty file where none is, and an empty
    inbox never touches the database. A database that cannot be used at all raises what its
    driver says (bot.cli.servers explains it: status 3 or 4)."""
    need_database_at(app.settings, app.db)


def need_database_at(settings: Settings, db: Database) -> None:
    """`need_database` for a command that opens the database alone."""
    from bot.db import current_revision, head_revision
    from bot.host.instance import sqlite_path
    from bot.host.storage import safe_url

    url = settings.database_url
    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise DatabaseNotReady(
            f"no database at {path}: run `flagman migrate` (check [database] url if it should exist)"
        )
    current, head = current_revision(db.engine), head_revision()
    if current != head:
        raise DatabaseNotReady(
            f"the database {safe_url(url)} is at revision {current or '(none: no schema)'}, this flagman needs "
            f"{head}: run `flagman migrate`"
        )
