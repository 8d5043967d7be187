"""`flagman init` and `flagman migrate`: a working configuration, and the schema brought up to date.

Exit codes as in bot.cli: 0 done; 2 bad usage or bad input.
"""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path

from bot.cli.context import load

CONFIG_TEMPLATE = """\
# Flagman configuration written by `flagman init` for the embedded default:
# SQLite and Maildir folders under this directory. See config.example.toml for every option.

[bot]
address = "{address}"
name = "Flagman"
timezone = "UTC"
secret_file = "site-secret"

[database]
url = "sqlite:///flagman.sqlite"

[inbox]
kind = "maildir"
path = "mail/inbox"

[outbox]
kind = "maildir"
path = "mail/outbox"
"""


def init_dir(directory: Path, address: str = "flagman@localhost") -> Path:
    """A working configuration on the embedded default, and a migrated database."""
    from bot.db import migrate
    from bot.settings import load_settings

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "flagman.toml"
    if not config.exists():
        config.write_text(CONFIG_TEMPLATE.format(address=address), encoding="utf-8")
    secret = directory / "site-secret"
    if not secret.exists():
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
    settings = load_settings(config, env={})
    for path in (settings.inbox.path, settings.outbox.path):
        settings.resolve_path(path).mkdir(parents=True, exist_ok=True)
    migrate(settings.database_url)
    return config


def cmd_init(args: argparse.Namespace) -> int:
    config = init_dir(Path(args.dir), args.address)
    print(f"Configuration: {config}\nDatabase migrated. Next: flagman --config {config} game new ...")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from bot.db import migrate

    settings = load(args)
    migrate(settings.database_url, args.revision)
    print(f"database at revision {args.revision}")
    return 0
