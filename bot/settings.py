"""Settings: a frozen value read from TOML, with secrets from the environment or systemd.

Secrets never live in the TOML file. Each is looked up, in order, in
``$CREDENTIALS_DIRECTORY/<name>`` (systemd ``LoadCredential=``; the unit hands over every file
of ``/etc/flagman/credentials``, which systemd names ``flagman_<name>``), then the environment
variable named in the table below. No global settings object: `load_settings` returns a value
that the composition root (`bot.app.build_app`) passes on.

| secret            | credential file   | environment variable   |
|-------------------|-------------------|------------------------|
| site secret       | site-secret       | FLAGMAN_SECRET         |
| previous secrets  | previous-secrets  | FLAGMAN_PREVIOUS_SECRETS (comma-separated) |
| IMAP password     | imap-password     | FLAGMAN_IMAP_PASSWORD  |
| SMTP password     | smtp-password     | FLAGMAN_SMTP_PASSWORD  |
| database password | db-password       | FLAGMAN_DB_PASSWORD (replaces ``{password}`` in the URL) |
| DKIM private key  | dkim-<selector>   | FLAGMAN_DKIM_KEY_<SELECTOR> (the key's text; ``-`` in the selector as ``_``) |

Failing those, the site secret may come from the file named by ``[bot] secret_file`` (what
``flagman init`` sets up for the embedded default; keep it mode 0600), and a DKIM key from
the file ``[dkim] key_files`` names for its selector.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

LOG_FORMATS = ("text", "json")  # [log] format


class SettingsError(ValueError):
    """The configuration is wrong; the message says where and how to fix it."""


@dataclass(frozen=True)
class BotSettings:
    address: str = "flagman@localhost"
    name: str = "Flagman"
    timezone: str = "UTC"
    loop_header: str = "X-Flagman-Loop"
    public_url: str = ""
    secret_file: str = ""  # a file holding the site secret (used when no credential or env var is set)
    # The public game archive: when set, a static site per game is kept up to date
    # in <archive_dir>/<game>/ after every turn (`flagman archive GAME DIR` writes one by
    # hand). Serve <archive_dir> at public_url so that <public_url>/<game>/ is the game's site.
    archive_dir: str = ""

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]

    @property
    def local_part(self) -> str:
        return self.address.rpartition("@")[0]


@dataclass(frozen=True)
class DatabaseSettings:
    url: str = "sqlite:///flagman.sqlite"


@dataclass(frozen=True)
class InboxSettings:
    kind: str = "maildir"  # maildir | imap
    path: str = "mail/inbox"
    host: str = "localhost"
    port: int = 993
    security: str = "tls"  # tls | starttls | none
    username: str = ""
    folder: str = "INBOX"
    processed_folder: str = "Processed"
    failed_folder: str = "Failed"
    batch_size: int = 100
    # Worker processes that parse the next batch while one is handled (bot.mail_in.parse_worker):
    # 1 puts the parsing on a second core; 0 parses in the service's own process.
    parse_workers: int = 1
    idle: bool = True
    # Each IDLE cycle lasts at most this long and ends with DONE and a NOOP, so mail the server
    # holds back from an idling client (Dovecot: half a second) is seen at once; 0: IDLE alone.
    idle_check_seconds: float = 0.1
    timeout: float = 30.0
    # How far the mail server's clock may run ahead of ours before a receipt time is
    # logged as suspect (deadlines are judged by the server's receipt time).
    clock_skew: float = 300.0


@dataclass(frozen=True)
class OutboxSettings:
    kind: str = "maildir"  # maildir | smtp
    path: str = "mail/outbox"
    host: str = "localhost"
    port: int = 587
    security: str = "starttls"
    username: str = ""
    batch_size: int = 100
    timeout: float = 30.0
    max_attempts: int = 8


@dataclass(frozen=True)
class ScheduleSettings:
    poll_seconds: float = 60.0
    tick_seconds: float = 60.0
    send_seconds: float = 30.0
    digest_time: str = "08:00"
    # Worker processes that work out due turns (resolve them, render their results mails) while
    # the service writes and sends the ones before (bot.games.workers); 0: in the service's process.
    resolve_workers: int = 1
    # How much lower the turn workers' CPU priority is than the service's (nice 0 to 19; 0: the
    # same). Above 0 the service's own work (confirming orders, writing turns, sending) comes
    # first, but another busy process on the machine then starves the workers and the deadline.
    resolve_niceness: int = 0


@dataclass(frozen=True)
class AuthSettings:
    # Which proofs admit a mail sent to the plain address from a seat's registered From.
    # "password": a PASSWORD line or the signed tag in the subject; "dmarc": the topmost
    # Authentication-Results of `authserv_id` says dmarc=pass with header.from the From's
    # domain, or aligned dkim=pass.
    accept: tuple[str, ...] = ("password",)
    authserv_id: str = ""


@dataclass(frozen=True)
class LimitSettings:
    max_mail_bytes: int = 2 * 1024 * 1024
    max_lines: int = 2000
    mails_per_sender_per_hour: int = 30
    # Answers to mail that proved nobody (stranger notices, JOIN answers), all senders together.
    answers_to_strangers_per_hour: int = 50
    # Answers to mail that proved nobody at one domain (every address @ it together) in a day.
    answers_to_strangers_per_domain_per_day: int = 100
    # ADDRESS: the seats move once the new address answered, and not before the old address
    # has had this long to stop it.
    address_change_hold_hours: int = 24


@dataclass(frozen=True)
class PracticeSettings:
    # Practice games (PRACTICE <game kind>) running at once on the whole bot; past it PRACTICE is
    # refused, saying the bot is full of practice races for now.
    running_max: int = 200
    # A practice game without orders from its person for this many days is closed (the person told).
    idle_days: int = 7
    # A practice turn resolves no sooner than this many minutes after it opened, however fast the
    # orders come: a practice race sends at most 60 / turn_minutes results an hour.
    turn_minutes: int = 3


@dataclass(frozen=True)
class RatingSettings:
    # A person's rating (RATING ON) is shown only once they have finished this many rated races.
    shown_after: int = 3


@dataclass(frozen=True)
class DkimSettings:
    # DKIM signing of every outgoing mail (RFC 6376), for a relay that does not sign.
    # Off while `selectors` is empty. One private key per selector (ed25519 or RSA), from the
    # credential dkim-<selector> (else `key_files`, in the same order); two selectors during
    # a key rotation: every mail is then signed with both.
    selectors: tuple[str, ...] = ()
    domain: str = ""  # d=; "" means the domain of [bot] address
    key_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class DnsSettings:
    # The resolver `flagman doctor` asks about the sending domain's SPF, DKIM and DMARC
    # records (dnspython): the system's (/etc/resolv.conf) unless nameservers are named.
    nameservers: tuple[str, ...] = ()
    port: int = 53
    timeout: float = 5.0


@dataclass(frozen=True)
class LogSettings:
    # How each log line is written (stdout; under systemd, the journal): "text" (LEVEL logger:
    # message) or "json" (one object a line, for a log shipper). Either way, when stdout is the
    # journal each line starts with its syslog priority (<3> error ... <7> debug), so
    # `journalctl -p warning` filters by level.
    format: str = "text"


@dataclass(frozen=True)
class MetricsSettings:
    # A Prometheus text-format file that `flagman run` rewrites (atomically) after every job,
    # for node_exporter's textfile collector; "" writes none (OPERATING.md, "Monitoring").
    file: str = ""


@dataclass(frozen=True)
class RetentionSettings:
    # How long what only operations need is kept, in days (0: for ever); `flagman run` prunes
    # once a day, `flagman prune` by hand or from a timer (bot.ops.retention). A game's record
    # (its turns, orders, dice, states, seats, and the GM audit of its commands) is never pruned:
    # a finished game stays whole, for its archive and for `flagman replay`.
    sent_mail_days: int = 90  # the bodies of mail sent (or given up): the row stays, its body goes
    inbound_days: int = 90  # the text kept of each mail read, and quarantined raw mail already reported
    audit_days: int = 365  # GM audit lines of commands that named no game
    processed_mail_days: int = 30  # mail in the inbox's Processed folder (IMAP or Maildir)


@dataclass(frozen=True)
class Secrets:
    site_secret: str = field(default="", repr=False)
    previous_secrets: tuple[str, ...] = field(default=(), repr=False)
    imap_password: str = field(default="", repr=False)
    smtp_password: str = field(default="", repr=False)
    db_password: str = field(default="", repr=False)
    # (selector, private key text) for each of [dkim] selectors, in their order.
    dkim_keys: tuple[tuple[str, str], ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class Settings:
    bot: BotSettings = BotSettings()
    database: DatabaseSettings = DatabaseSettings()
    inbox: InboxSettings = InboxSettings()
    outbox: OutboxSettings = OutboxSettings()
    schedule: ScheduleSettings = ScheduleSettings()
    auth: AuthSettings = AuthSettings()
    limits: LimitSettings = LimitSettings()
    practice: PracticeSettings = PracticeSettings()
    ratings: RatingSettings = RatingSettings()
    dkim: DkimSettings = DkimSettings()
    dns: DnsSettings = DnsSettings()
    log: LogSettings = LogSettings()
    metrics: MetricsSettings = MetricsSettings()
    retention: RetentionSettings = RetentionSettings()
    secrets: Secrets = Secrets()
    base_dir: Path = Path(".")
    source: str = "(defaults)"

    def resolve_path(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    @property
    def database_url(self) -> str:
        url = self.database.url
        scheme, sep, rest = url.partition("://")
        if sep and scheme.lower() in _POSTGRES_SPELLINGS:
            url = "postgresql+psycopg://" + rest
        if "{password}" in url:
            url = url.replace("{password}", self.secrets.db_password)
        if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
            rel = url.removeprefix("sqlite:///")
            if rel and rel != ":memory:":
                url = "sqlite:///" + str(self.resolve_path(rel))
        return url


_SECTIONS: dict[str, type] = {
    "bot": BotSettings,
    "database": DatabaseSettings,
    "inbox": InboxSettings,
    "outbox": OutboxSettings,
    "schedule": ScheduleSettings,
    "auth": AuthSettings,
    "limits": LimitSettings,
    "practice": PracticeSettings,
    "ratings": RatingSettings,
    "dkim": DkimSettings,
    "dns": DnsSettings,
    "log": LogSettings,
    "metrics": MetricsSettings,
    "retention": RetentionSettings,
}


def _section(name: str, cls: type, data: Mapping[str, object]) -> Any:
    known = {f.name: f for f in fields(cls)}
    values: dict[str, object] = {}
    for key, value in data.items():
        if key not in known:
            raise SettingsError(f"[{name}] has no option {key!r}; known: {', '.join(sorted(known))}")
        default = getattr(cls(), key)
        if isinstance(default, tuple):
            if not isinstance(value, list):
                raise SettingsError(f"[{name}] {key} must be a list")
            value = tuple(str(v) for v in value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise SettingsError(f"[{name}] {key} must be true or false")
        elif isinstance(default, float):
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise SettingsError(f"[{name}] {key} must be a number")
            value = float(value)
        elif isinstance(default, int):
            if not isinstance(value, int) or isinstance(value, bool):
                raise SettingsError(f"[{name}] {key} must be a whole number")
        elif not isinstance(value, str):
            raise SettingsError(f"[{name}] {key} must be a string")
        values[key] = value
    return cls(**values)


# The unit hands over the whole credentials directory with one line,
# ``LoadCredential=flagman:/etc/flagman/credentials``: systemd names each file of it
# ``flagman_<file>`` (systemd.exec(5), LoadCredential= of a directory).
CREDENTIALS_PREFIX = "flagman_"


def _secret(env: Mapping[str, str], credential: str, variable: str) -> str:
    """The credential `credential` (a file of its own, as a drop-in's ``LoadCredential=NAME:PATH``
    hands it over, or one of the credentials directory), else the environment variable. An
    empty file is not set (the tmpfiles snippet makes each file, empty until filled in)."""
    directory = env.get("CREDENTIALS_DIRECTORY")
    if directory:
        for name in (credential, CREDENTIALS_PREFIX + credential):
            path = Path(directory) / name
            text = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
            if text:
                return text
    return env.get(variable, "").strip()


def load_secrets(env: Mapping[str, str]) -> Secrets:
    previous = _secret(env, "previous-secrets", "FLAGMAN_PREVIOUS_SECRETS")
    return Secrets(
        site_secret=_secret(env, "site-secret", "FLAGMAN_SECRET"),
        previous_secrets=tuple(s.strip() for s in previous.replace("\n", ",").split(",") if s.strip()),
        imap_password=_secret(env, "imap-password", "FLAGMAN_IMAP_PASSWORD"),
        smtp_password=_secret(env, "smtp-password", "FLAGMAN_SMTP_PASSWORD"),
        db_password=_secret(env, "db-password", "FLAGMAN_DB_PASSWORD"),
    )


def parse_settings(data: Mapping[str, object], *, env: Mapping[str, str], base_dir: Path, source: str) -> Settings:
    sections: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _SECTIONS:
            raise SettingsError(f"{source}: unknown section [{key}]; known: {', '.join(sorted(_SECTIONS))}")
        if not isinstance(value, dict):
            raise SettingsError(f"{source}: [{key}] must be a table")
        sections[key] = _section(key, _SECTIONS[key], value)
    settings = Settings(**sections, secrets=load_secrets(env), base_dir=base_dir, source=source)
    if not settings.secrets.site_secret and settings.bot.secret_file:
        secret_path = settings.resolve_path(settings.bot.secret_file)
        try:
            secret = secret_path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SettingsError(f"[bot] secret_file {secret_path}: {exc.strerror}") from exc
        settings = with_secret(settings, secret)
    if settings.dkim.selectors:
        settings = replace(settings, secrets=replace(settings.secrets, dkim_keys=_dkim_keys(settings, env)))
    validate(settings)
    return settings


_SELECTOR_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?")


def dkim_credential(selector: str) -> str:
    """The systemd credential (and file name under the credentials directory) of a DKIM key."""
    return f"dkim-{selector}"


def dkim_variable(selector: str) -> str:
    return "FLAGMAN_DKIM_KEY_" + re.sub(r"[^A-Za-z0-9]", "_", selector).upper()


def _dkim_keys(settings: Settings, env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The private key of each [dkim] selector: its credential, its variable, else its key file."""
    cfg = settings.dkim
    if cfg.key_files and len(cfg.key_files) != len(cfg.selectors):
        raise SettingsError(
            f"[dkim] key_files names {len(cfg.key_files)} files for {len(cfg.selectors)} selectors: "
            "one file per selector, in the same order (or none: the keys as credentials)"
        )
    keys = []
    for index, selector in enumerate(cfg.selectors):
        if not _SELECTOR_RE.fullmatch(selector):
            raise SettingsError(f"[dkim] selector {selector!r} is not a DNS label (letters, digits, '-', '_')")
        text = _secret(env, dkim_credential(selector), dkim_variable(selector))
        if not text and cfg.key_files:
            path = settings.resolve_path(cfg.key_files[index])
            try:
                text = path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise SettingsError(f"[dkim] key_files {path}: {exc.strerror}") from exc
        if not text:
            raise SettingsError(
                f"[dkim] selector {selector!r} has no private key: put it in the credential "
                f"{dkim_credential(selector)} (under systemd: the file {dkim_credential(selector)} "
                f"in the credentials directory, /etc/flagman/credentials/), ${dkim_variable(selector)}, "
                "or [dkim] key_files"
            )
        from bot.dkim import DkimKeyError, load_key

        try:
            load_key(selector, text)  # a key that cannot sign is found now, not at the first mail
        except DkimKeyError as exc:
            raise SettingsError(f"[dkim] {exc}") from exc
        keys.append((selector, text))
    return tuple(keys)


# [inbox] idle_check_seconds: 0, or within these bounds (a shorter check would keep the server busy
# for nothing; IDLE is renewed every minute at the latest anyway).
IDLE_CHECK_MIN = 0.05
IDLE_CHECK_MAX = 60.0


@dataclass(frozen=True)
class Bounds:
    """The range a number setting must lie in: `low` to `high` (inclusive); `above_low` makes
    `low` itself refused (a timeout or an interval of 0 would spin)."""

    low: float
    high: float
    above_low: bool = False

    def holds(self, value: float) -> bool:
        return (value > self.low if self.above_low else value >= self.low) and value <= self.high

    def words(self, unit: str) -> str:
        low = f"more than {_number(self.low)}" if self.above_low else _number(self.low)
        return f"{low} to {_number(self.high)}{unit}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


DAY = 86400.0
_PORT = Bounds(1, 65535)
_TIMEOUT = Bounds(0, 3600, above_low=True)
# Every number setting's range, checked when the configuration is read (section, option, unit).
NUMBER_BOUNDS: dict[tuple[str, str], tuple[Bounds, str]] = {
    ("inbox", "port"): (_PORT, ""),
    ("inbox", "batch_size"): (Bounds(1, 10000), " mails"),
    ("inbox", "timeout"): (_TIMEOUT, " seconds"),
    ("inbox", "clock_skew"): (Bounds(0, DAY), " seconds"),
    ("outbox", "port"): (_PORT, ""),
    ("outbox", "batch_size"): (Bounds(1, 10000), " mails"),
    ("outbox", "timeout"): (_TIMEOUT, " seconds"),
    ("outbox", "max_attempts"): (Bounds(1, 100), " attempts"),
    ("schedule", "poll_seconds"): (Bounds(0.1, DAY), " seconds"),
    ("schedule", "tick_seconds"): (Bounds(0.1, DAY), " seconds"),
    ("schedule", "send_seconds"): (Bounds(0.1, DAY), " seconds"),
    ("schedule", "resolve_niceness"): (Bounds(0, 19), ""),
    ("limits", "max_mail_bytes"): (Bounds(1024, 1024**3), " bytes"),
    ("limits", "max_lines"): (Bounds(1, 10**6), " lines"),
    ("limits", "mails_per_sender_per_hour"): (Bounds(1, 10**6), " mails"),
    ("limits", "answers_to_strangers_per_hour"): (Bounds(0, 10**6), " mails"),
    ("limits", "answers_to_strangers_per_domain_per_day"): (Bounds(0, 10**6), " mails"),
    ("limits", "address_change_hold_hours"): (Bounds(0, 24 * 365), " hours"),
    ("ratings", "shown_after"): (Bounds(1, 100), " rated races"),
    ("dns", "port"): (_PORT, ""),
    ("dns", "timeout"): (_TIMEOUT, " seconds"),
    ("retention", "sent_mail_days"): (Bounds(0, 36500), " days (0: for ever)"),
    ("retention", "inbound_days"): (Bounds(0, 36500), " days (0: for ever)"),
    ("retention", "audit_days"): (Bounds(0, 36500), " days (0: for ever)"),
    ("retention", "processed_mail_days"): (Bounds(0, 36500), " days (0: for ever)"),
}

_CLOCK_TIME_RE = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")

# The database URL schemes the bot can open; libpq's `postgres://` and a bare `postgresql://`
# are read as PostgreSQL through psycopg (the driver the postgres extra installs).
DATABASE_SCHEMES = ("sqlite", "postgresql+psycopg")
_POSTGRES_SPELLINGS = ("postgres", "postgresql")


def database_scheme(url: str) -> str:
    """The scheme of a database URL as the bot opens it (`postgres` -> `postgresql+psycopg`)."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    return "postgresql+psycopg" if scheme in _POSTGRES_SPELLINGS else scheme


def validate(settings: Settings) -> None:
    for (section, option), (bounds, unit) in NUMBER_BOUNDS.items():
        value = getattr(getattr(settings, section), option)
        if not bounds.holds(value):
            raise SettingsError(f"[{section}] {option} = {_number(value)} is out of range: {bounds.words(unit)}")
    if not _CLOCK_TIME_RE.fullmatch(settings.schedule.digest_time):
        raise SettingsError(
            f"[schedule] digest_time {settings.schedule.digest_time!r} is not a time of day (HH:MM, 00:00 to 23:59)"
        )
    if database_scheme(settings.database.url) not in DATABASE_SCHEMES:
        raise SettingsError(
            f"[database] url: {(settings.database.url.partition('://')[0] or 'a URL without a scheme')!r} is not a "
            'database Flagman opens: use "sqlite:///PATH" or "postgresql://USER:{password}@HOST/NAME"'
        )
    if "@" not in settings.bot.address:
        raise SettingsError(f"[bot] address {settings.bot.address!r} is not an email address")
    try:
        ZoneInfo(settings.bot.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise SettingsError(f"[bot] timezone {settings.bot.timezone!r} is not a known time zone") from exc
    if settings.inbox.kind not in ("maildir", "imap"):
        raise SettingsError('[inbox] kind must be "maildir" or "imap"')
    if settings.outbox.kind not in ("maildir", "smtp"):
        raise SettingsError('[outbox] kind must be "maildir" or "smtp"')
    for section, security in (("inbox", settings.inbox.security), ("outbox", settings.outbox.security)):
        if security not in ("tls", "starttls", "none"):
            raise SettingsError(f'[{section}] security must be "tls", "starttls" or "none"')
    if not 0 <= settings.inbox.parse_workers <= 8:
        raise SettingsError("[inbox] parse_workers must be 0 (parse in the service's process) to 8")
    check = settings.inbox.idle_check_seconds
    if not (check == 0 or IDLE_CHECK_MIN <= check <= IDLE_CHECK_MAX):
        raise SettingsError(
            f"[inbox] idle_check_seconds must be 0 (IDLE alone) or {IDLE_CHECK_MIN:g} to {IDLE_CHECK_MAX:g} seconds"
        )
    if not 0 <= settings.schedule.resolve_workers <= 8:
        raise SettingsError("[schedule] resolve_workers must be 0 (work out due turns in the service's process) to 8")
    for proof in settings.auth.accept:
        if proof not in ("password", "dmarc"):
            raise SettingsError(f'[auth] accept: unknown proof {proof!r}; use "password" and/or "dmarc"')
    if "dmarc" in settings.auth.accept and not settings.auth.authserv_id:
        raise SettingsError('[auth] accept includes "dmarc" but authserv_id is empty: name your receiving server')
    if len(set(settings.dkim.selectors)) != len(settings.dkim.selectors):
        raise SettingsError("[dkim] selectors: a selector is named twice")
    if settings.dkim.domain and "." not in settings.dkim.domain.strip("."):
        raise SettingsError(f"[dkim] domain {settings.dkim.domain!r} is not a domain")
    for option in ("running_max", "idle_days", "turn_minutes"):
        if getattr(settings.practice, option) < (0 if option == "running_max" else 1):
            least = "0 (no practice games)" if option == "running_max" else "1"
            raise SettingsError(f"[practice] {option} must be at least {least}")
    if settings.log.format not in LOG_FORMATS:
        raise SettingsError(f"[log] format must be {' or '.join(repr(f) for f in LOG_FORMATS)}")


def default_config_path(env: Mapping[str, str]) -> Path:
    return Path(env.get("FLAGMAN_CONFIG") or "flagman.toml")


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    path = Path(path) if path is not None else default_config_path(env)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SettingsError(f"no configuration at {path}: run `flagman init` or pass --config") from exc
    except PermissionError as exc:
        raise SettingsError(
            f"{path} is unreadable for {_me()}: the service's user must be able to read it "
            "(e.g. root:flagman, mode 0640)"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} is unreadable: {getattr(exc, 'strerror', None) or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    settings = parse_settings(data, env=env, base_dir=path.resolve().parent, source=str(path))
    for section, option in REQUIRED:
        table = data.get(section)
        if not isinstance(table, dict) or option not in table:
            where = f"[{section}] {option}" if isinstance(table, dict) else f"the section [{section}]"
            raise SettingsError(f"{path}: {where} is required (see config.example.toml)")
    return settings


# What a configuration file must name: nothing here falls back to a default, so a file cut
# short (or a section forgotten) is refused rather than run against a mailbox or database
# nobody chose.
REQUIRED: tuple[tuple[str, str], ...] = (("bot", "address"), ("database", "url"))


def _me() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def with_secret(settings: Settings, secret: str) -> Settings:
    return replace(settings, secrets=replace(settings.secrets, site_secret=secret))
