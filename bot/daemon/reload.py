"""SIGHUP: what a reload takes from the configuration file, and what needs a restart.

Reloaded: the templates; the schedule (intervals of poll, tick and send); every option of
[bot], [auth], [limits] and the secrets (credentials are re-read). Kept until a restart:
[database], [inbox], [outbox], [log] and [metrics] (set up once) and [schedule]
resolve_workers and resolve_niceness (the turn worker is built once); a reload that changes them says so in the log
and keeps the old ones.
"""

from __future__ import annotations

from dataclasses import replace

from bot.settings import Settings

# The sections set up once, at the start.
SET_UP_ONCE = ("database", "inbox", "outbox", "log", "metrics")


def reloaded(old: Settings, new: Settings) -> tuple[Settings, list[str]]:
    """The settings a reload puts in force (`new`, with what needs a restart as in `old`), and
    what of `new` was kept back for a restart ("[inbox]", "[schedule] resolve_workers")."""
    kept = [f"[{name}]" for name in SET_UP_ONCE if getattr(new, name) != getattr(old, name)]
    for key in ("resolve_workers", "resolve_niceness"):  # the turn worker is built once
        if getattr(new.schedule, key) != getattr(old.schedule, key):
            kept.append(f"[schedule] {key}")
            new = replace(new, schedule=replace(new.schedule, **{key: getattr(old.schedule, key)}))
    if kept:
        new = replace(new, database=old.database, inbox=old.inbox, outbox=old.outbox, log=old.log, metrics=old.metrics)
    return new, kept
