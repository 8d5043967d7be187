"""`flagman doctor`: check the set-up and say what is wrong and how to fix it.

Each check yields findings: ``ok`` (what was checked and found right), ``warning`` (works,
but worth knowing), ``problem`` (must be fixed: the exit status is 1). Every problem comes
with its fix. The checks: the configuration, the site secret, the database (reachable, at
the head revision), the inbox (IMAP login, folders, IDLE; or the Maildir), the outbox (SMTP
login; or the Maildir), the clock (against the database server's ``now()`` and the newest
INTERNALDATE on the IMAP server), the sending domain's SPF, DKIM and DMARC records
(bot.ops.mail_dns: each missing or wrong record with the one to publish), the retention policy
(its settings, and whether the database or the Processed folder holds what a daily prune would
have taken: `check_retention`), and whether a service holds the instance lock.

``--fix`` repairs what is safe to repair without a human decision: it creates the missing
IMAP folders (Processed, Failed) and the Maildir folders. It never migrates the database
(that is `flagman migrate`, run before each start by the systemd unit).

A server that cannot be used gets the fix for the way it failed (bot.ops.reach): a name that
does not resolve, a refused connection, no answer within the timeout, a TLS handshake or
certificate that fails, a login refused. Every password is named by the one path the unit
reads it from, ``/etc/flagman/credentials/<name>`` (LoadCredential=).

``--probe-plus`` also mails a probe to the bot's own plus-address and waits for it in the
INBOX (bot.ops.plus_probe): the mail server must deliver the players' replies there.

No secret is ever printed: database URLs are shown with the password hidden.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.host.storage import safe_url
from bot.host.unit import credentials_dir, unit_of
from bot.ops.findings import Finding, Severity, counted, ok, problem, warning
from bot.ops.mail_dns import check_sending_domain

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from bot.mail_in.imap import ImapInbox
    from bot.settings import Settings

# Secrets that appear in documentation and examples: a site running with one of them has no
# secret at all (anyone can sign a reply address).
EXAMPLE_SECRETS = frozenset(
    {
        "change-me",
        "changeme",
        "change-me-to-a-long-random-string",
        "secret",
        "example",
        "flagman",
        "password",
        "xxx",
        "test",
    }
)
MIN_SECRET_LENGTH = 16
CLOCK_TOLERANCE = timedelta(minutes=2)

__all__ = ["Finding", "Severity", "compare_clock", "diagnose", "print_findings", "run_doctor", "safe_url"]


# -- configuration and secret ----------------------------------------------------------------


def check_secret(settings: Settings) -> Iterator[Finding]:
    secret = settings.secrets.site_secret
    folder = credentials_dir()
    how = (
        f"create it: python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > {folder}/site-secret "
        f"(mode 0600; the unit and flagmanctl hand over every file of {folder}/; "
        f"a command run by hand reads FLAGMAN_SECRET, or [bot] secret_file), then `systemctl restart {unit_of()}`"
    )
    if not secret:
        yield problem("secret", "no site secret is set: reply addresses and seat passwords cannot be signed", how)
    elif secret.strip().lower() in EXAMPLE_SECRETS:
        yield problem(
            "secret",
            "the site secret is an example value from the documentation",
            "replace it with a random one; " + how,
        )
    elif len(secret) < MIN_SECRET_LENGTH:
        yield problem(
            "secret",
            f"the site secret is only {len(secret)} characters long (at least {MIN_SECRET_LENGTH})",
            "replace it with a random one; " + how,
        )
    else:
        yield ok("secret", "site secret set")


# -- database --------------------------------------------------------------------------------


def check_database(settings: Settings, now: datetime) -> Iterator[Finding]:
    """Reachable, at the head revision, writable (a write rolled back), intact (SQLite's
    quick_check) and, for SQLite, private to the service's user."""
    from sqlalchemy import text

    from bot.app import open_database
    from bot.host.instance import sqlite_path
    from bot.host.storage import Cause, breakdown

    url = settings.database_url
    shown = safe_url(url)
    path = sqlite_path(url)
    if path is not None and not path.exists():
        yield problem(
            "database",
            f"no database at {path}",
            "create it with `flagman migrate` (check [database] url if it should exist)",
        )
        return
    with open_database(url, connect_timeout=10) as db:
        try:
            with db.engine.connect() as conn:
                conn.execute(text("select 1"))
        except Exception as exc:  # noqa: BLE001 - any failure to connect is the finding itself
            found = breakdown(exc, url)
            if found is not None and found.cause is not Cause.UNREACHABLE:
                yield problem("database", found.text, found.fix)
                return
            from bot.host.storage import database_hint

            reason = " ".join(str(getattr(exc, "orig", None) or exc).split()) or type(exc).__name__
            yield problem(
                "database", f"cannot reach {shown}: {reason[:300]}", database_hint(reason, url.startswith("sqlite"))
            )
            return
        try:
            schema = list(_check_schema(db.engine, shown))
            yield from schema
            if "has no schema" not in schema[0].text:
                yield from _check_written(db.engine, url, shown)
            if path is not None:
                yield from _check_sqlite_file(db.engine, path)
        except Exception as exc:  # a failure while checking is the finding itself
            found = breakdown(exc, url)
            if found is None:
                raise
            yield problem("database", found.text, found.fix)
            return
        if url.startswith("postgresql"):
            with db.engine.connect() as conn:
                server_now = conn.execute(text("select now()")).scalar()
            if isinstance(server_now, datetime):
                yield from compare_clock("the database server", server_now, now)


def _check_schema(engine: Engine, shown: str) -> Iterator[Finding]:
    from bot.db import MigrationFilesMissing, current_revision, head_revision

    try:
        head = head_revision()
    except MigrationFilesMissing as exc:
        yield problem("database", str(exc).partition(": nothing was migrated")[0], "reinstall this version of flagman")
        return
    current = current_revision(engine)
    if current is None:
        yield problem("database", f"{shown} has no schema", "run `flagman migrate`")
    elif current != head:
        from bot.db import revisions

        known = {r.revision for r in revisions().walk_revisions()}
        if current in known:
            yield problem(
                "database",
                f"{shown} is at revision {current}; this flagman needs {head}",
                "run `flagman migrate` (the systemd unit does it before each start)",
            )
        else:
            yield problem(
                "database",
                f"{shown} is at revision {current}, which this flagman does not know (a newer flagman migrated it)",
                "upgrade flagman to the version that wrote it",
            )
    else:
        yield ok("database", f"{shown} reachable, at the head revision {head}")


def _check_written(engine: Engine, url: str, shown: str) -> Iterator[Finding]:
    """A write in a transaction rolled back (bot.host.storage.write_probe)."""
    from bot.host.storage import breakdown, reason_of, write_probe

    try:
        write_probe(engine)
    except Exception as exc:  # noqa: BLE001 - the refusal is the finding
        found = breakdown(exc, url)
        if found is not None:
            yield problem("database", found.text, found.fix)
        else:
            yield problem(
                "database",
                f"{shown} refuses a write: {reason_of(exc)}",
                "check that this user owns the tables (`flagman migrate` made them as this user)",
            )
        return
    yield ok("database", f"{shown} takes a write (a probe, rolled back)")


def _check_sqlite_file(engine: Engine, path: Path) -> Iterator[Finding]:
    """SQLite: intact (quick_check), and not readable by every user of the machine."""
    import stat

    from bot.host.storage import damaged_fix, quick_check, sqlite_files

    found = quick_check(engine)
    if found:
        yield problem(
            "database", f"{path} is damaged: SQLite's quick_check says: " + "; ".join(found[:3]), damaged_fix(path)
        )
    else:
        yield ok("database", f"{path} intact (SQLite's quick_check)")
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        files = " ".join(str(f) for f in sqlite_files(path) if f.exists())
        yield warning(
            "database",
            f"{path} is readable by other users of this machine (mode {mode:04o}): it holds "
            "every player's address and mail",
            f"chmod 0600 {files}",
        )


# -- clock -----------------------------------------------------------------------------------


def compare_clock(source: str, theirs: datetime, ours: datetime, *, one_sided: bool = False) -> Iterator[Finding]:
    """Our clock against another: a difference over CLOCK_TOLERANCE is a problem.

    `one_sided`: `theirs` is a time that has passed (a mail's arrival), so only "theirs is in
    our future" says anything.
    """
    if theirs.tzinfo is None:
        theirs = theirs.replace(tzinfo=UTC)
    skew = theirs - ours
    if skew > CLOCK_TOLERANCE or (not one_sided and -skew > CLOCK_TOLERANCE):
        direction = "behind" if skew > timedelta(0) else "ahead of"
        yield problem(
            "clock",
            f"this machine's clock is {abs(skew).total_seconds():.0f} s {direction} {source}: "
            "deadlines would pass at the wrong time",
            "run NTP (systemctl enable --now systemd-timesyncd, or chrony) and check `timedatectl`",
        )
    else:
        yield ok("clock", f"agrees with {source}" + (" (no mail from the future)" if one_sided else ""))


def check_local_clock(now: datetime) -> Iterator[Finding]:
    if now.year < 2024:
        yield problem(
            "clock", f"this machine's clock says {now:%Y-%m-%d}", "set the clock and run NTP (timedatectl set-ntp true)"
        )


# -- inbox -----------------------------------------------------------------------------------

PROBE_TIMEOUT = 15.0  # seconds: at most this long for a server to answer the doctor


def imap_inbox(settings: Settings, *, create_folders: bool = False) -> ImapInbox:
    """The IMAP account as a probe: a short timeout, one attempt, folders made only on --fix."""
    from bot.app import build_imap_inbox

    return build_imap_inbox(
        settings,
        timeout=min(settings.inbox.timeout, PROBE_TIMEOUT),
        create_folders=create_folders,
        reconnect_attempts=1,
    )


def _imap_fix(text: str, fixing: bool) -> tuple[Severity, str]:
    """The fix for what `ImapInbox.check` found once the server was reached and the login taken
    (the ways a connection fails have been told apart before: `reach_imap`)."""
    from bot.ops.reach import Failure, Server, credential_hint, hint

    lower = text.lower()
    if "idle" in lower or "lacks move" in lower:
        return Severity.WARNING, "use a server with IDLE and MOVE (Dovecot, Cyrus...) for instant, cheap mail handling"
    if "missing" in lower:
        return Severity.PROBLEM, (
            "could not be created: check the account's rights"
            if fixing
            else "run `flagman doctor --fix` to create it, or create it in a mail client"
        )
    account = Server("IMAP server", "[inbox]", "", 0, "", "", 0.0, "imap-password", "FLAGMAN_IMAP_PASSWORD", 993, 143)
    if "login" in lower:
        return Severity.PROBLEM, "check [inbox] username and " + credential_hint(account)
    return Severity.PROBLEM, hint(Failure.OTHER, account)


def reach_imap(settings: Settings) -> Finding | None:
    """One login to the [inbox] account; None if it works, else the problem, told apart by how
    it failed (bot.ops.reach)."""
    from bot.mail_in.imap import ImapError
    from bot.ops.reach import Failure, describe, failure_of, hint, imap_server

    try:
        with imap_inbox(settings) as inbox:
            inbox.connect()
    except (ImapError, OSError) as exc:
        failure = failure_of(exc)
        if failure is Failure.OTHER:
            return None  # a missing folder or a refused command: ImapInbox.check says which
        account = imap_server(settings, min(settings.inbox.timeout, PROBE_TIMEOUT))
        return problem("inbox", describe(failure, exc, account), hint(failure, account))
    return None


def check_imap(settings: Settings, now: datetime, fix: bool) -> Iterator[Finding]:
    from bot.mail_in.imap import ImapError
    from bot.ops.reach import credential_hint, imap_server

    cfg = settings.inbox
    where = f"{cfg.username}@{cfg.host}:{cfg.port}"
    if not settings.secrets.imap_password:
        yield problem(
            "inbox", "no IMAP password is set", "store it in " + credential_hint(imap_server(settings, cfg.timeout))
        )
        return
    unreachable = reach_imap(settings)
    if unreachable is not None:
        yield unreachable
        return
    created: list[str] = []
    try:
        with imap_inbox(settings) as inbox:
            problems = inbox.check()
        if fix and any("missing" in p for p in problems):
            with imap_inbox(settings) as inbox:
                created = inbox.ensure_folders()
            with imap_inbox(settings) as inbox:
                problems = inbox.check()
    except ImapError as exc:
        problems = [str(exc)]
    for name in created:
        yield ok("inbox", f"created IMAP folder {name!r}")
    serious = False
    for text in problems:
        severity, how = _imap_fix(text, fix)
        serious = serious or severity is Severity.PROBLEM
        yield Finding(severity, "inbox", text, how)
    if serious:
        return
    yield ok(
        "inbox",
        f"IMAP login as {where} works; folders {cfg.folder}, {cfg.processed_folder}, {cfg.failed_folder} present",
    )
    newest = newest_internaldate(settings)
    if newest is not None:
        yield from compare_clock("the newest mail's arrival time on the IMAP server", newest, now, one_sided=True)


def newest_internaldate(settings: Settings) -> datetime | None:
    """The latest INTERNALDATE among the inbox's and the Processed folder's newest mails."""
    from bot.ops.reach import imap_session

    cfg = settings.inbox
    try:
        with imap_session(settings, min(cfg.timeout, PROBE_TIMEOUT)) as client:
            newest: datetime | None = None
            for folder in (cfg.folder, cfg.processed_folder):
                client.select_folder(folder, readonly=True)
                uids = client.search("ALL")
                if not uids:
                    continue
                data = client.fetch([max(uids)], ["INTERNALDATE"])
                for item in data.values():
                    stamp = item.get(b"INTERNALDATE")
                    if isinstance(stamp, datetime):
                        # With its zone offset (imap_session); one without is read as local time.
                        stamp = stamp.astimezone(UTC) if stamp.tzinfo else stamp.astimezone().astimezone(UTC)
                        newest = stamp if newest is None or stamp > newest else newest
            return newest
    except Exception:  # noqa: BLE001 - the clock check is a bonus; the folder checks report real failures
        return None


def _check_maildir(
    settings: Settings, area: str, path_value: str, fix: bool, subdirs: tuple[str, ...]
) -> Iterator[Finding]:
    """A Maildir the service creates itself on start: missing is fine if it can be created."""
    import os

    path = settings.resolve_path(path_value)
    missing = [path / sub for sub in subdirs if not (path / sub).is_dir()]
    if missing and fix:
        for folder in missing:
            folder.mkdir(parents=True, exist_ok=True)
        yield ok(area, f"created Maildir {path}")
        missing = []
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        yield problem(
            area,
            f"Maildir {path} is not writable by this user",
            "give the service user write access (StateDirectory=flagman puts it in /var/lib/flagman)",
        )
    elif missing:
        yield warning(
            area,
            f"Maildir {path} does not exist yet; the service creates it when it starts",
            "`flagman doctor --fix` creates it now",
        )
    else:
        yield ok(area, f"Maildir {path} ready")


def check_inbox(settings: Settings, now: datetime, fix: bool) -> Iterator[Finding]:
    if settings.inbox.kind == "imap":
        yield from check_imap(settings, now, fix)
    else:
        yield from _check_maildir(settings, "inbox", settings.inbox.path, fix, ("new", "cur", "tmp"))


# -- outbox ----------------------------------------------------------------------------------


def check_outbox(settings: Settings, fix: bool) -> Iterator[Finding]:
    """The [outbox] relay: connect, EHLO, STARTTLS and log in as the mailer does; a failure
    gets the fix for the way it failed (bot.ops.reach)."""
    import smtplib

    from bot.ops.reach import credential_hint, describe, failure_of, hint, smtp_server, smtp_session

    cfg = settings.outbox
    if cfg.kind == "maildir":
        yield from _check_maildir(settings, "outbox", cfg.path, fix, ("",))
        return
    timeout = min(cfg.timeout, PROBE_TIMEOUT)
    relay = smtp_server(settings, timeout)
    if cfg.username and not settings.secrets.smtp_password:
        yield problem(
            "outbox",
            f"[outbox] username is {cfg.username!r} but no SMTP password is set",
            "store it in " + credential_hint(relay) + "; or empty the username for an open local relay",
        )
        return
    try:
        with smtp_session(settings, timeout):
            pass
    except (smtplib.SMTPException, OSError, ValueError) as exc:
        failure = failure_of(exc)
        yield problem("outbox", describe(failure, exc, relay), hint(failure, relay))
        return
    if cfg.security == "none" and cfg.host not in ("localhost", "127.0.0.1", "::1"):
        yield warning(
            "outbox",
            f"SMTP relay {cfg.host}:{cfg.port} is used without TLS: fine on localhost, not across a network",
            'use security = "starttls" or "tls" for a relay across a network',
        )
    yield ok(
        "outbox",
        f"SMTP relay {cfg.host}:{cfg.port} ({cfg.security})"
        + (f" accepts the login as {cfg.username}" if cfg.username else " reachable"),
    )


# -- free space --------------------------------------------------------------------------------


def check_disk(settings: Settings) -> Iterator[Finding]:
    """Free space on each file system the service writes (the SQLite database, the Maildirs, the
    archive, the metrics file): below bot.host.storage.MIN_FREE a problem, below LOW_FREE a
    warning. (PostgreSQL's disk is the server's: watch it there.)"""
    import os

    from bot.host.instance import sqlite_path
    from bot.host.storage import LOW_FREE, MIN_FREE, free_bytes, sizes

    places: list[tuple[str, Path]] = []
    database = sqlite_path(settings.database_url)
    if database is not None:
        places.append(("the database", database.parent))
    if settings.inbox.kind == "maildir":
        places.append(("the inbox", settings.resolve_path(settings.inbox.path)))
    if settings.outbox.kind == "maildir":
        places.append(("the outbox", settings.resolve_path(settings.outbox.path)))
    if settings.bot.archive_dir:
        places.append(("the archive", settings.resolve_path(settings.bot.archive_dir)))
    if settings.metrics.file:
        places.append(("the metrics file", settings.resolve_path(settings.metrics.file).parent))
    by_device: dict[int, tuple[Path, list[str]]] = {}
    for what, place in places:
        existing = place
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        try:
            device = os.stat(existing).st_dev
        except OSError:
            continue
        by_device.setdefault(device, (existing, []))[1].append(what)
    for where, whats in by_device.values():
        free = free_bytes(where)
        if free is None:
            continue
        holding = ", ".join(whats)
        if free < MIN_FREE:
            yield problem(
                "disk",
                f"only {sizes(free)} free on the file system of {where} ({holding}): at least "
                f"{sizes(MIN_FREE)} are needed (a deadline's mail, the database growing)",
                f"free space there (`df -h {where}`, `du -xsh {where}/*`)",
            )
        elif free < LOW_FREE:
            yield warning(
                "disk",
                f"{sizes(free)} free on the file system of {where} ({holding})",
                f"free space there before it runs out (`df -h {where}`); below {sizes(MIN_FREE)} it is a problem",
            )
        else:
            yield ok("disk", f"{sizes(free)} free on the file system of {where} ({holding})")


# -- retention -------------------------------------------------------------------------------

# The service prunes once a day: what outlived its policy by more than this was missed by a prune.
PRUNE_SLACK = timedelta(days=2)


def check_retention(settings: Settings, now: datetime, *, inbox_usable: bool = True) -> Iterator[Finding]:
    """[retention] (bot.ops.retention), one line each: the policy (a kind kept for ever is a
    warning: the database or the Processed folder grows without end); whether the database
    still holds what a daily prune would have taken (then the prune has not run, or fails);
    the same for the inbox's Processed folder (skipped when the inbox check found a problem)."""
    from bot.mail_in.inbox import Folder
    from bot.ops.retention import overdue

    policy = settings.retention
    kinds = (
        ("sent_mail_days", policy.sent_mail_days, "sent mail bodies"),
        ("inbound_days", policy.inbound_days, "texts of mail read"),
        ("audit_days", policy.audit_days, "audit lines of no game"),
        ("processed_mail_days", policy.processed_mail_days, "the Processed folder"),
    )
    forever = [f"{key} = 0" for key, days, _ in kinds if days == 0]
    kept = ", ".join(f"{what} {days} days" for _, days, what in kinds if days)
    if forever:
        yield warning(
            "retention",
            f"[retention] {', '.join(forever)} keeps those for ever: the database (about 15 kB a sent mail) "
            "or the Processed folder grows without end" + (f"; kept: {kept}" if kept else ""),
            "set a number of days (docs/operating-for-years.md; the defaults are 90, 90, 365 and 30)",
        )
    else:
        yield ok("retention", f"[retention] keeps {kept}")
    moment = now - PRUNE_SLACK
    if any(days for _, days, _ in kinds[:3]):
        from bot.app import open_database

        with open_database(settings.database_url, connect_timeout=10) as db:
            late = overdue(db, settings, moment)
        if late.anything:
            since = f" (the oldest from {late.oldest:%Y-%m-%d})" if late.oldest is not None else ""
            yield warning(
                "retention",
                f"the database holds what the policy prunes: {counted(late.mail_bodies, 'sent mail body', 'sent mail bodies')}, "
                f"{counted(late.inbound_texts, 'text of mail read', 'texts of mail read')}, "
                f"{counted(late.quarantined, 'quarantined mail', 'quarantined mails')}, "
                f"{counted(late.audit_lines, 'audit line', 'audit lines')}{since}; no prune has run for days, or it fails",
                "run `flagman prune`; the service prunes daily (see its journal for the prune job's errors)",
            )
        else:
            yield ok("retention", "the database holds nothing older than the policy keeps (the prune runs)")
    if policy.processed_mail_days and inbox_usable:
        before = moment - timedelta(days=policy.processed_mail_days)
        if settings.inbox.kind == "imap":
            from bot.mail_in.imap import ImapError

            imap = imap_inbox(settings)
            try:
                late_mail = imap.count_older(Folder.PROCESSED, before)
            except ImapError as exc:
                yield warning(
                    "retention", f"cannot count the mail of the Processed folder: {exc}", "see the inbox check"
                )
                return
            finally:
                imap.close()
        else:
            from bot.mail_in.inbox import older_in_maildir

            late_mail = sum(
                1 for _ in older_in_maildir(settings.resolve_path(settings.inbox.path), Folder.PROCESSED, before)
            )
        if late_mail:
            yield warning(
                "retention",
                f"the inbox's Processed folder holds {counted(late_mail, 'mail', 'mails')} older than "
                f"{policy.processed_mail_days + PRUNE_SLACK.days} days (processed_mail_days = "
                f"{policy.processed_mail_days}, and {PRUNE_SLACK.days} for the daily prune); no prune has run "
                "for days, or it fails",
                "run `flagman prune`; the service prunes daily (see its journal for the prune job's errors)",
            )
        else:
            yield ok(
                "retention", f"the inbox's Processed folder holds no mail older than {policy.processed_mail_days} days"
            )


# -- the instance lock -----------------------------------------------------------------------


def check_lock(settings: Settings) -> Iterator[Finding]:
    from bot.host.instance import lock_for

    try:
        lock = lock_for(settings)
        if lock is None:
            return
        if lock.try_acquire():
            lock.release()
            yield ok("service", f"no flagman service runs on this mailbox now ({lock.description} is free)")
        else:
            yield ok("service", f"a flagman service is running ({lock.description} is held)")
    except Exception as exc:  # noqa: BLE001 - informative only; the database check reports real failures
        yield warning("service", f"cannot test the instance lock: {exc}")


# -- the whole check -------------------------------------------------------------------------


def diagnose(
    settings: Settings,
    *,
    fix: bool = False,
    now: datetime | None = None,
    probe_plus: bool = False,
    probe_wait: float = 60.0,
) -> list[Finding]:
    """Every check; with `probe_plus`, then the plus-address probe (if the mail checks passed)."""
    now = now or datetime.now(UTC)
    findings: list[Finding] = []
    steps: list[Callable[[], Iterator[Finding]]] = [
        lambda: check_secret(settings),
        lambda: check_local_clock(now),
        lambda: check_database(settings, now),
        lambda: check_inbox(settings, now, fix),
        lambda: check_outbox(settings, fix),
        lambda: check_disk(settings),
        lambda: check_sending_domain(settings),
        lambda: check_lock(settings),
        lambda: _retention_after(settings, now, findings),
    ]
    if probe_plus:
        steps.append(lambda: _probe(settings, findings, probe_wait))
    for step in steps:
        try:
            findings.extend(step())
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            findings.append(
                problem(
                    "doctor",
                    f"a check failed unexpectedly: {type(exc).__name__}: {exc}",
                    "report this, with the output of `flagman --verbose doctor`",
                )
            )
    return findings


def _retention_after(settings: Settings, now: datetime, before: list[Finding]) -> Iterator[Finding]:
    """The retention check, once the database works (a problem there is told once, above)."""
    if any(f.severity is Severity.PROBLEM and f.area == "database" for f in before):
        yield warning("retention", "retention not checked: fix the database problems above first")
        return
    usable = not any(f.severity is Severity.PROBLEM and f.area == "inbox" for f in before)
    yield from check_retention(settings, now, inbox_usable=usable)


def _probe(settings: Settings, before: list[Finding], wait: float) -> Iterator[Finding]:
    from bot.ops.plus_probe import AREA, run_probe

    if any(f.severity is Severity.PROBLEM and f.area in ("inbox", "outbox") for f in before):
        yield warning(AREA, "plus-address probe not run: fix the inbox and outbox problems above first")
        return
    yield from run_probe(
        settings, wait=wait, timeout=min(settings.inbox.timeout, settings.outbox.timeout, PROBE_TIMEOUT)
    )


def print_findings(findings: list[Finding], out: TextIO, *, as_json: bool = False) -> None:
    if as_json:
        import json

        problems = sum(1 for f in findings if f.severity is Severity.PROBLEM)
        found = [{"severity": f.severity.value, "area": f.area, "text": f.text, "fix": f.fix} for f in findings]
        print(json.dumps({"findings": found, "problems": problems}, indent=1), file=out)
        return
    for finding in findings:
        label = finding.severity.value
        print(f"{label:<8} {finding.area:<9} {finding.text}", file=out)
        if finding.fix and finding.severity is not Severity.OK:
            print(f"{'':<8} {'':<9} fix: {finding.fix}", file=out)


def run_doctor(
    config: Path | None,
    *,
    fix: bool = False,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    probe_plus: bool = False,
    probe_wait: float = 60.0,
    as_json: bool = False,
) -> int:
    """Load the configuration, run every check, print the findings (`as_json`: as one JSON
    object, {"findings": [...], "problems": N}); 1 if any problem."""
    from bot.settings import SettingsError, default_config_path, load_settings

    out = out or sys.stdout
    import os

    env = os.environ if env is None else env
    path = config or default_config_path(env)
    try:
        settings = load_settings(path, env)
    except SettingsError as exc:
        print_findings(
            [problem("config", str(exc), f"edit {path} (config.example.toml documents every option) or pass --config")],
            out,
            as_json=as_json,
        )
        return 1
    findings = [ok("config", f"{settings.source} read")] + diagnose(
        settings, fix=fix, probe_plus=probe_plus, probe_wait=probe_wait
    )
    print_findings(findings, out, as_json=as_json)
    problems = [f for f in findings if f.severity is Severity.PROBLEM]
    if not as_json:
        print(f"{len(problems)} problem(s)" if problems else "all good", file=out)
    return 1 if problems else 0
