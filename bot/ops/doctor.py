"""`flagman doctor`: check the set-up and say what is wrong and how to fix it.

Each check yields findings: ``ok`` (what was checked and found right), ``warning`` (works,
but worth knowing), ``problem`` (must be fixed: the exit status is 1). Every problem comes
with its fix. The checks: the configuration, the site secret, the database (reachable, at
the head revision), the inbox (IMAP login, folders, IDLE; or the Maildir), the outbox (SMTP
login; or the Maildir), the clock (against the database server's ``now()`` and the newest
INTERNALDATE on the IMAP server), and whether a service holds the instance lock.

``--fix`` repairs what is safe to repair without a human decision: it creates the missing
IMAP folders (Processed, Failed) and the Maildir folders. It never migrates the database
(that is `flagman migrate`, run before each start by the systemd unit).

No secret is ever printed: database URLs are shown with the password hidden.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from bot.mail_in.imap import ImapInbox
    from bot.settings import Settings

# Secrets that appear in documentation and examples: a site running with one of them has no
# secret at all (anyone can sign a reply address).
EXAMPLE_SECRETS = frozenset({
    "change-me", "changeme", "change-me-to-a-long-random-string", "secret", "example", "flagman",
    "password", "xxx", "test",
})
MIN_SECRET_LENGTH = 16
CLOCK_TOLERANCE = timedelta(minutes=2)


class Severity(enum.Enum):
    OK = "ok"
    WARNING = "warning"
    PROBLEM = "PROBLEM"


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    area: str
    text: str
    fix: str = ""


def ok(area: str, text: str) -> Finding:
    return Finding(Severity.OK, area, text)


def warning(area: str, text: str, fix: str = "") -> Finding:
    return Finding(Severity.WARNING, area, text, fix)


def problem(area: str, text: str, fix: str) -> Finding:
    return Finding(Severity.PROBLEM, area, text, fix)


def safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is shown as a placeholder, never raw
        return "(unparsable database URL)"


# -- configuration and secret ----------------------------------------------------------------

def check_secret(settings: Settings) -> Iterator[Finding]:
    secret = settings.secrets.site_secret
    how = ("create it: python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > /etc/flagman/site-secret "
           "(mode 0600), and pass it with LoadCredential=site-secret:/etc/flagman/site-secret "
           "(or FLAGMAN_SECRET, or [bot] secret_file)")
    if not secret:
        yield problem("secret", "no site secret is set: reply addresses and seat passwords cannot be signed", how)
    elif secret.strip().lower() in EXAMPLE_SECRETS:
        yield problem("secret", "the site secret is an example value from the documentation",
                      "replace it with a random one; " + how)
    elif len(secret) < MIN_SECRET_LENGTH:
        yield problem("secret", f"the site secret is only {len(secret)} characters long (at least {MIN_SECRET_LENGTH})",
                      "replace it with a random one; " + how)
    else:
        yield ok("secret", "site secret set")


# -- database --------------------------------------------------------------------------------

def check_database(settings: Settings, now: datetime) -> Iterator[Finding]:
    from sqlalchemy import text

    from bot.app import open_database
    from bot.db import current_revision, head_revision
    from bot.ops.instance import sqlite_path

    url = settings.database_url
    shown = safe_url(url)
    path = sqlite_path(url)
    if path is not None and not path.exists():
        yield problem("database", f"no database at {path}",
                      "create it with `flagman migrate` (check [database] url if it should exist)")
        return
    with open_database(url, connect_timeout=10) as db:
        try:
            with db.engine.connect() as conn:
                conn.execute(text("select 1"))
        except Exception as exc:  # noqa: BLE001 - any failure to connect is the finding itself
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            yield problem("database", f"cannot reach {shown}: {reason}",
                          "check [database] url, that the server runs and accepts this user, and the db-password credential"
                          if not url.startswith("sqlite") else
                          "check [database] url and that the service user may read and write the file and its directory")
            return
        head = head_revision()
        current = current_revision(db.engine)
        if current is None:
            yield problem("database", f"{shown} has no schema", "run `flagman migrate`")
        elif current != head:
            from alembic.script import ScriptDirectory

            from bot.db import alembic_config

            known = {r.revision for r in ScriptDirectory.from_config(alembic_config("sqlite://")).walk_revisions()}
            if current in known:
                yield problem("database", f"{shown} is at revision {current}; this flagman needs {head}",
                              "run `flagman migrate` (the systemd unit does it before each start)")
            else:
                yield problem("database", f"{shown} is at revision {current}, which this flagman does not know "
                              "(a newer flagman migrated it)", "upgrade flagman to the version that wrote it")
        else:
            yield ok("database", f"{shown} reachable, at the head revision {head}")
        if url.startswith("postgresql"):
            with db.engine.connect() as conn:
                server_now = conn.execute(text("select now()")).scalar()
            if isinstance(server_now, datetime):
                yield from compare_clock("the database server", server_now, now)


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
        yield problem("clock", f"this machine's clock is {abs(skew).total_seconds():.0f} s {direction} {source}: "
                      "deadlines would pass at the wrong time",
                      "run NTP (systemctl enable --now systemd-timesyncd, or chrony) and check `timedatectl`")
    else:
        yield ok("clock", f"agrees with {source}" + (" (no mail from the future)" if one_sided else ""))


def check_local_clock(now: datetime) -> Iterator[Finding]:
    if now.year < 2024:
        yield problem("clock", f"this machine's clock says {now:%Y-%m-%d}",
                      "set the clock and run NTP (timedatectl set-ntp true)")


# -- inbox -----------------------------------------------------------------------------------

PROBE_TIMEOUT = 15.0  # seconds: at most this long for a server to answer the doctor


def imap_inbox(settings: Settings, *, create_folders: bool = False) -> ImapInbox:
    """The IMAP account as a probe: a short timeout, one attempt, folders made only on --fix."""
    from bot.app import build_imap_inbox

    return build_imap_inbox(settings, timeout=min(settings.inbox.timeout, PROBE_TIMEOUT),
                            create_folders=create_folders, reconnect_attempts=1)


def _imap_fix(text: str, fixing: bool) -> tuple[Severity, str]:
    lower = text.lower()
    if "idle" in lower or "lacks move" in lower:
        return Severity.WARNING, "use a server with IDLE and MOVE (Dovecot, Cyrus...) for instant, cheap mail handling"
    if "missing" in lower:
        return Severity.PROBLEM, ("could not be created: check the account's rights" if fixing else
                                  "run `flagman doctor --fix` to create it, or create it in a mail client")
    if "login" in lower or "refused" in lower:
        return Severity.PROBLEM, ("check [inbox] username and the imap-password credential "
                                  "(LoadCredential=imap-password:/etc/flagman/imap-password or FLAGMAN_IMAP_PASSWORD)")
    return Severity.PROBLEM, "check [inbox] host, port and security (tls: 993, starttls/none: 143) and that the server runs"


def check_imap(settings: Settings, now: datetime, fix: bool) -> Iterator[Finding]:
    from bot.mail_in.imap import ImapError

    cfg = settings.inbox
    where = f"{cfg.username}@{cfg.host}:{cfg.port}"
    if not settings.secrets.imap_password:
        yield problem("inbox", "no IMAP password is set",
                      "store it in /etc/flagman/imap-password and pass LoadCredential=imap-password:... "
                      "(or FLAGMAN_IMAP_PASSWORD)")
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
    yield ok("inbox", f"IMAP login as {where} works; folders {cfg.folder}, {cfg.processed_folder}, "
             f"{cfg.failed_folder} present")
    newest = newest_internaldate(settings)
    if newest is not None:
        yield from compare_clock("the newest mail's arrival time on the IMAP server", newest, now, one_sided=True)


def newest_internaldate(settings: Settings) -> datetime | None:
    """The latest INTERNALDATE among the inbox's and the Processed folder's newest mails."""
    import ssl

    from imapclient import IMAPClient

    cfg = settings.inbox
    context = ssl.create_default_context() if cfg.security != "none" else None
    try:
        client = IMAPClient(cfg.host, cfg.port, ssl=cfg.security == "tls", ssl_context=context,
                            timeout=min(cfg.timeout, PROBE_TIMEOUT))
    except OSError:
        return None
    try:
        if cfg.security == "starttls":
            client.starttls(context)
        client.login(cfg.username, settings.secrets.imap_password)
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
                    # imapclient gives local naive times unless told otherwise; aware ones are exact.
                    stamp = stamp.astimezone(UTC) if stamp.tzinfo else stamp.astimezone().astimezone(UTC)
                    newest = stamp if newest is None or stamp > newest else newest
        return newest
    except Exception:  # noqa: BLE001 - the clock check is a bonus; the folder checks report real failures
        return None
    finally:
        try:
            client.logout()
        except Exception:  # noqa: BLE001
            pass


def _check_maildir(settings: Settings, area: str, path_value: str, fix: bool, subdirs: tuple[str, ...]) -> Iterator[Finding]:
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
        yield problem(area, f"Maildir {path} is not writable by this user",
                      "give the service user write access (StateDirectory=flagman puts it in /var/lib/flagman)")
    elif missing:
        yield warning(area, f"Maildir {path} does not exist yet; the service creates it when it starts",
                      "`flagman doctor --fix` creates it now")
    else:
        yield ok(area, f"Maildir {path} ready")


def check_inbox(settings: Settings, now: datetime, fix: bool) -> Iterator[Finding]:
    if settings.inbox.kind == "imap":
        yield from check_imap(settings, now, fix)
    else:
        yield from _check_maildir(settings, "inbox", settings.inbox.path, fix, ("new", "cur", "tmp"))


# -- outbox ----------------------------------------------------------------------------------

def check_outbox(settings: Settings, fix: bool) -> Iterator[Finding]:
    cfg = settings.outbox
    if cfg.kind == "maildir":
        yield from _check_maildir(settings, "outbox", cfg.path, fix, ("",))
        return
    from bot.app import build_smtp_mailer

    if cfg.username and not settings.secrets.smtp_password:
        yield problem("outbox", f"[outbox] username is {cfg.username!r} but no SMTP password is set",
                      "store it in /etc/flagman/smtp-password and pass LoadCredential=smtp-password:... "
                      "(or FLAGMAN_SMTP_PASSWORD), or empty the username for an open local relay")
        return
    mailer = build_smtp_mailer(settings, timeout=min(cfg.timeout, PROBE_TIMEOUT))
    serious = False
    for text in mailer.check():
        if "without TLS" in text:
            yield warning("outbox", text, "use security = \"starttls\" or \"tls\" for a relay across a network")
            continue
        serious = True
        if "login" in text.lower():
            yield problem("outbox", text, "check [outbox] username and the smtp-password credential")
        else:
            yield problem("outbox", text, "check [outbox] host, port and security (starttls: 587, tls: 465, none: 25)")
    if not serious:
        yield ok("outbox", f"SMTP relay {cfg.host}:{cfg.port} ({cfg.security})"
                 + (f" accepts the login as {cfg.username}" if cfg.username else " reachable"))


# -- the instance lock -----------------------------------------------------------------------

def check_lock(settings: Settings) -> Iterator[Finding]:
    from bot.ops.instance import lock_for

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

def diagnose(settings: Settings, *, fix: bool = False, now: datetime | None = None) -> list[Finding]:
    now = now or datetime.now(UTC)
    findings: list[Finding] = []
    steps: list[Callable[[], Iterator[Finding]]] = [
        lambda: check_secret(settings),
        lambda: check_local_clock(now),
        lambda: check_database(settings, now),
        lambda: check_inbox(settings, now, fix),
        lambda: check_outbox(settings, fix),
        lambda: check_lock(settings),
    ]
    for step in steps:
        try:
            findings.extend(step())
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            findings.append(problem("doctor", f"a check failed unexpectedly: {type(exc).__name__}: {exc}",
                                    "report this, with the output of `flagman --verbose doctor`"))
    return findings


def print_findings(findings: list[Finding], out: TextIO) -> None:
    for finding in findings:
        label = finding.severity.value
        print(f"{label:<8} {finding.area:<9} {finding.text}", file=out)
        if finding.fix and finding.severity is not Severity.OK:
            print(f"{'':<8} {'':<9} fix: {finding.fix}", file=out)


def run_doctor(config: Path | None, *, fix: bool = False, env: Mapping[str, str] | None = None,
               out: TextIO | None = None) -> int:
    """Load the configuration, run every check, print the findings; 1 if any problem."""
    from bot.settings import SettingsError, default_config_path, load_settings

    out = out or sys.stdout
    import os

    env = os.environ if env is None else env
    path = config or default_config_path(env)
    try:
        settings = load_settings(path, env)
    except SettingsError as exc:
        print_findings([problem("config", str(exc),
                                f"edit {path} (config.example.toml documents every option) or pass --config")], out)
        return 1
    findings = [ok("config", f"{settings.source} read")] + diagnose(settings, fix=fix)
    print_findings(findings, out)
    problems = [f for f in findings if f.severity is Severity.PROBLEM]
    print(f"{len(problems)} problem(s)" if problems else "all good", file=out)
    return 1 if problems else 0
