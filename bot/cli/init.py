"""`flagman init` and `flagman migrate`: a working configuration, and the schema brought up to date.

Exit codes as in bot.cli: 0 done; 1 a migration failed; 2 bad usage or bad input; 3 the
database cannot be reached.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path

from bot.cli.context import load, one_line

CONFIG_TEMPLATE = """\
# Flagman configuration written by `flagman init` for the embedded default:
# SQLite and Maildir folders under this directory. Every option is documented in
# config.example.toml: `flagman deploy --print config.example.toml` prints it.

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
    """Up (or down) to the revision; a failure is one line on stderr (the journal's, under the
    unit's ExecStartPre=) and a non-zero exit (bot.ops.upgrade)."""
    from bot.ops.upgrade import MigrationError, migrate_to

    settings = load(args)
    try:
        done = migrate_to(settings.database_url, args.revision)
    except MigrationError as exc:
        print(f"flagman migrate: {one_line(str(exc), 1000)}", file=sys.stderr)
        return exc.status
    print(done.summary())
    return 0
