"""The start of `flagman run`: the database must answer, be at the schema's head revision, take
a write (rolled back) and, on SQLite, pass its quick_check, before the instance lock is taken.

A fault that waiting mends (the database server down, a read-only database or file system, a
full disk) is waited out in the process: one log line per kind of fault, ``STATUS=`` saying
why, tries backing off from START_RETRY_FIRST to START_RETRY_MAX seconds, and one line when it
works again. A fault that waiting does not mend stops it: a damaged database (two lines, status
4: restore a backup), one not migrated (status 1).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from bot.daemon.metrics import RoleMetrics
from bot.daemon.signals import Signals
from bot.ops.notify import Notifier
from bot.settings import Settings

log = logging.getLogger("flagman.service")


class NotMigrated(Exception):  # noqa: N818 - named for what happened, as Refused
    """`flagman run` on a database that is not at this flagman's schema."""


def check_database(settings: Settings) -> None:
    """Can the service start on this database? It answers, is at the head revision, takes a
    write (rolled back) and is intact (SQLite's quick_check). Raises what the database says (bot.cli explains it: status 3 or 4), or
    NotMigrated."""
    from bot.app import open_database
    from bot.db import current_revision, head_revision
    from bot.host.instance import sqlite_path
    from bot.host.storage import check_intact, safe_url, write_probe

    path = sqlite_path(settings.database_url)
    if path is not None and not path.exists():  # not made here: `flagman migrate` makes it, private
        raise NotMigrated(f"no database at {path}: run `flagman migrate` (the unit does, before each start)")
    with open_database(settings.database_url, connect_timeout=10) as db:
        current, head = current_revision(db.engine), head_revision()
        if current != head:
            raise NotMigrated(
                f"the database {safe_url(settings.database_url)} is at revision {current or '(empty)'}, "
                f"this flagman needs {head}: run `flagman migrate` (the unit does, before each start)"
            )
        write_probe(db.engine)
        check_intact(db.engine, settings.database_url)


# A database that cannot be used at the start (its server down, read-only, its disk full): the
# service waits in its own process and tries again after START_RETRY_FIRST seconds, then twice as
# long each time, at most START_RETRY_MAX; one log line per kind of fault (and one when it works),
# STATUS= saying why it waits. A restart by systemd would not mend any of them, and would use up
# the unit's start limit (StartLimitBurst) while the fault lasts.
START_RETRY_FIRST = 2.0
START_RETRY_MAX = 60.0


def _migrate(settings: Settings) -> None:
    """`flagman migrate`, once. A database that cannot be reached, written or grown yet raises
    what stopped the migration (its cause), to be waited for; any other failure raises
    `MigrationError`."""
    from bot.host.storage import Cause, breakdown
    from bot.ops.upgrade import MigrationError, migrate_to

    try:
        log.info("%s", migrate_to(settings.database_url).summary())
    except MigrationError as failed:
        cause = failed.__cause__
        waitable = breakdown(cause, settings.database_url) if cause is not None else None
        if cause is None or waitable is None or waitable.cause is Cause.DAMAGED:
            raise
        raise cause from None


def wait_for_database(
    settings: Settings,
    signals: Signals,
    notifier: Notifier,
    *,
    migrate: bool = False,
    role: RoleMetrics | None = None,
) -> bool:
    """`check_database` until it passes: True then, False if a stop came first. With `migrate`,
    a database behind this flagman's schema (or not there yet) is migrated once it can be used
    (`flagman migrate`'s MigrationError if that fails). A fault that waiting cannot mend is
    raised as it is: a damaged database (bot.host.storage, status 4: restore a backup), one not
    migrated (NotMigrated), any other error (a bug)."""
    from bot.host.storage import Cause, breakdown

    delay = START_RETRY_FIRST
    told: Cause | None = None
    tries = 0
    since = datetime.now(UTC)
    readied = False
    migrated = False
    while True:
        try:
            try:
                check_database(settings)
            except NotMigrated:
                if not migrate or migrated:
                    raise
                _migrate(settings)
                migrated = True
                continue
        except NotMigrated:
            raise
        except Exception as exc:
            found = breakdown(exc, settings.database_url)
            if found is None or found.cause is Cause.DAMAGED:
                raise
            tries += 1
            if found.cause is not told:
                log.error(
                    "cannot start yet: %s; %s; waiting, and trying again with back-off (%g s, doubling to %g s)",
                    found.text,
                    found.fix,
                    delay,
                    START_RETRY_MAX,
                )
                told = found.cause
            else:
                log.debug("cannot start yet (try %d): %s", tries, found.text)
            status = f"waiting to start since {since:%Y-%m-%d %H:%M} UTC, {tries} tries: {found.text}; next try in {delay:.0f} s"
            # systemd must see the process up (or TimeoutStartSec= kills it) and alive (the
            # watchdog), as on standby: it is doing the right thing, waiting.
            if readied:
                notifier.status(status)
            else:
                readied = notifier.ready(status) or True
            if role is not None:
                role.write("waiting", healthy=False, failing=((found.area, tries),))
            deadline = time.monotonic() + delay
            while not signals.stopping and time.monotonic() < deadline:
                signals.wait(min(1.0, max(0.0, deadline - time.monotonic())))
                if notifier.watchdog_due():
                    notifier.watchdog()
                signals.reloading = False  # nothing to reload yet; the configuration is read at the start
            if signals.stopping:
                return False
            delay = min(START_RETRY_MAX, delay * 2)
        else:
            if told is not None:
                log.warning("the database works again after %d tries: starting", tries)
            return True
