"""The one composition root: settings in, a wired application out.

Nothing else in `bot/` constructs adapters (tests/test_architecture.py checks it): the CLI
and the service use `build_app(settings)`, a command that needs only the database uses
`open_database(url)`, and `flagman doctor` probes the servers with `build_imap_inbox` and
`build_smtp_mailer`. Tests build an `App` from fakes with `App(...)` directly.

An `App` owns its adapters: ``with build_app(settings) as app:`` closes the inbox, the
mailer and the database however the block ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self, cast

from bot.clock import Clock, FixedClock, SystemClock
from bot.db import Database
from bot.dice import Entropy, OsEntropy
from bot.faults import NO_FAULTS, Faults
from bot.games.deadline import INLINE, TurnWorker, WorkedOut, work_out_due
from bot.games.workers import Chunk, ProcessTurnWorker
from bot.mail_in.inbox import Folder, Inbox, MaildirInbox
from bot.mail_in.parse_worker import InlineParser, MailParser, WorkerParser
from bot.mail_out.mailer import MaildirMailer, Mailer
from bot.mail_out.render import Renderer
from bot.processes import Kept
from bot.service import Service
from bot.settings import Settings
from bot.shell import Shell

if TYPE_CHECKING:
    from datetime import datetime

    from bot.mail_in.imap import ImapInbox
    from bot.mail_out.smtp import SmtpMailer

Security = Literal["tls", "starttls", "none"]  # checked by bot.settings.validate


class App:
    """The application: the Shell (the database, the settings, the clock, the templates, the
    crash points, the dice's entropy) and the Service on it (the inbox, the mailer, where mail
    is parsed and where due turns are worked out), built once when the App is. Each value is
    held in one place, the Shell or the Service; the App's attributes read it from there, and a
    value is replaced only through the App's `use_*` methods (the scheduler's SIGHUP reload:
    `use_settings`), so the jobs that run after it see the new one."""

    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        clock: Clock,
        renderer: Renderer,
        inbox: Inbox,
        mailer: Mailer,
        faults: Faults = NO_FAULTS,
        parser: MailParser | None = None,
        turn_worker: TurnWorker = INLINE,
        entropy: Entropy | None = None,
    ) -> None:
        # `parser`: where a batch of mail is parsed; `turn_worker`: where due turns are worked
        # out; `entropy`: where each turn's dice secret comes from (bot.dice)
        self.shell = Shell(db, settings, clock, renderer, faults, entropy if entropy is not None else OsEntropy())
        self.service = Service(self.shell, inbox, mailer, parser if parser is not None else InlineParser(), turn_worker)
        self._closed = False

    @property
    def settings(self) -> Settings:
        return self.shell.settings

    @property
    def db(self) -> Database:
        return self.shell.db

    @property
    def clock(self) -> Clock:
        return self.shell.clock

    @property
    def renderer(self) -> Renderer:
        return self.shell.renderer

    @property
    def faults(self) -> Faults:
        return self.shell.faults

    @property
    def entropy(self) -> Entropy:
        return self.shell.entropy

    @property
    def inbox(self) -> Inbox:
        return self.service.inbox

    @property
    def mailer(self) -> Mailer:
        return self.service.mailer

    @property
    def parser(self) -> MailParser:
        return self.service.parser

    @property
    def turn_worker(self) -> TurnWorker:
        return self.service.turn_worker

    def use_settings(self, settings: Settings) -> None:
        """From now on, `settings` (the SIGHUP reload; tests)."""
        self.shell.settings = settings

    def use_inbox(self, inbox: Inbox) -> None:
        """From now on, mail is read from `inbox` (tests: an inbox that fails)."""
        self.service.inbox = inbox

    def use_mailer(self, mailer: Mailer) -> None:
        """From now on, mail goes out through `mailer` (the CLI wraps the relay's: `RelayWatch`)."""
        self.service.mailer = mailer

    def close(self) -> None:
        """Close the inbox, the mailer, the parse and turn workers and the database; each even
        if closing another fails.

        Idempotent: the `with` block's exit and an explicit close (the scheduler's stop) may
        both call it.
        """
        if self._closed:
            return
        self._closed = True
        with ExitStack() as closing:  # run last-in first-out: the database is disposed of last
            closing.callback(self.db.dispose)
            closing.callback(self.parser.close)
            closing.callback(self.turn_worker.close)
            closing.callback(self.service.mailer.close)
            closing.callback(self.service.inbox.close)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# -- the adapters ----------------------------------------------------------------------------


def _database(url: str, *, connect_timeout: int | None = None) -> Database:
    kwargs: dict[str, object] = {}
    if connect_timeout is not None and url.startswith("postgresql"):
        # libpq's own timeout (seconds): a server that does not answer is a finding for
        # `flagman doctor`, not a hang. SQLite has no connection to wait for.
        kwargs["connect_args"] = {"connect_timeout": connect_timeout}
    return Database(url, **kwargs)


@contextmanager
def open_database(url: str, *, connect_timeout: int | None = None) -> Iterator[Database]:
    """The database alone, for a command that needs nothing else (export, replay, archive,
    copy-db, doctor): ``with open_database(url) as db:`` disposes of it on every path.

    `connect_timeout`: give up connecting to PostgreSQL after this many seconds.
    """
    db = _database(url, connect_timeout=connect_timeout)
    try:
        yield db
    finally:
        db.dispose()


def build_imap_inbox(
    settings: Settings, *, timeout: float | None = None, create_folders: bool = True, reconnect_attempts: int = 5
) -> ImapInbox:
    """The [inbox] IMAP account. The service takes the defaults; `flagman doctor` probes with
    a short `timeout`, one attempt, and folders created only when asked (``--fix``)."""
    from bot.mail_in.imap import ImapInbox

    cfg = settings.inbox
    return ImapInbox(
        host=cfg.host,
        port=cfg.port,
        username=cfg.username,
        password=settings.secrets.imap_password,
        security=cast(Security, cfg.security),
        folder=cfg.folder,
        processed_folder=cfg.processed_folder,
        failed_folder=cfg.failed_folder,
        max_size=settings.limits.max_mail_bytes,
        batch_size=cfg.batch_size,
        timeout=cfg.timeout if timeout is None else timeout,
        create_folders=create_folders,
        reconnect_attempts=reconnect_attempts,
        idle_check=cfg.idle_check_seconds,
    )


def build_inbox(settings: Settings, *, create: bool = True) -> Inbox:
    """The [inbox]; a Maildir is made where there is none only with `create` (see `build_app`)."""
    cfg = settings.inbox
    if cfg.kind == "maildir":
        return MaildirInbox(settings.resolve_path(cfg.path), max_size=settings.limits.max_mail_bytes, create=create)
    return build_imap_inbox(settings)


def _has_read_mail(db: Database) -> bool:
    """Has this database read mail already (from the inbox it names)? Then a Maildir inbox that
    is not there vanished (deleted, or its disk not mounted): it is reported, not made again
    empty. A database that cannot say (not migrated, not reachable) says no: the command meets
    that failure itself, in its own words."""
    from sqlalchemy import select

    from bot.host.instance import sqlite_path
    from bot.models import InboundMessage

    path = sqlite_path(db.url)
    if path is not None and not path.exists():
        return False  # never opened here: SQLite would make an empty file
    try:
        with db.read() as session:
            return session.scalar(select(InboundMessage.id).limit(1)) is not None
    except Exception:  # noqa: BLE001 - see the docstring: the command reports the database's failure
        return False


def prune_done_mail(settings: Settings, folder: Folder, before: datetime) -> int:
    """Delete the mail of the inbox's `folder` (Processed) received before `before`, on an
    inbox of its own (never the one the poll works on); how many (bot.ops.retention)."""
    if settings.inbox.kind == "maildir":
        maildir = MaildirInbox(
            settings.resolve_path(settings.inbox.path), max_size=settings.limits.max_mail_bytes, create=False
        )
        return maildir.prune(folder, before)
    imap = build_imap_inbox(settings)
    try:
        return imap.prune(folder, before)
    finally:
        imap.close()


def build_smtp_mailer(settings: Settings, *, timeout: float | None = None) -> SmtpMailer:
    """The [outbox] SMTP relay; `flagman doctor` probes it with a short `timeout`."""
    from bot.mail_out.smtp import SmtpMailer

    cfg = settings.outbox
    return SmtpMailer(
        host=cfg.host,
        port=cfg.port,
        security=cast(Security, cfg.security),
        username=cfg.username,
        password=settings.secrets.smtp_password,
        timeout=cfg.timeout if timeout is None else timeout,
    )


def build_mailer(settings: Settings) -> Mailer:
    cfg = settings.outbox
    if cfg.kind == "maildir":
        return MaildirMailer(settings.resolve_path(cfg.path))
    return build_smtp_mailer(settings)


def build_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    inbox: Inbox | None = None,
    mailer: Mailer | None = None,
    faults: Faults = NO_FAULTS,
    entropy: Entropy | None = None,
) -> App:
    """The application on these settings; the adapters not given are built from them.

    If building one fails, the ones built before it are closed again: nothing leaks.
    """
    with ExitStack() as built:
        db = _database(settings.database_url)
        built.callback(db.dispose)
        if inbox is None:
            # A Maildir inbox is made on first use; once mail was read from it, never again.
            inbox = build_inbox(settings, create=settings.inbox.kind != "maildir" or not _has_read_mail(db))
            built.callback(inbox.close)
        if mailer is None:
            mailer = build_mailer(settings)
        parser: MailParser = (
            WorkerParser(settings.inbox.parse_workers) if settings.inbox.parse_workers else InlineParser()
        )
        built.callback(parser.close)
        turn_worker: TurnWorker = INLINE
        if settings.schedule.resolve_workers and not db.in_memory:  # a worker cannot see an in-memory database
            turn_worker = ProcessTurnWorker(
                work_out_in_worker,
                settings.schedule.resolve_workers,
                niceness=settings.schedule.resolve_niceness,
            )
            built.callback(turn_worker.close)
        app = App(
            faults=faults,
            settings=settings,
            db=db,
            clock=clock or SystemClock(),
            renderer=Renderer(),
            inbox=inbox,
            mailer=mailer,
            parser=parser,
            turn_worker=turn_worker,
            entropy=entropy or OsEntropy(),
        )
        built.pop_all()
    return app


# -- in a turn worker process (bot.games.workers) ----------------------------------------------


def work_out_in_worker(kept: Kept, chunk: Chunk) -> list[WorkedOut]:
    """What a turn worker process runs: the chunk's due turns worked out (`work_out_due`) on a
    Shell of its own, built here (its own database connection, no crash points) on the
    service's settings and again when they change (SIGHUP), with the service's templates, read
    again when the service reloaded them; its clock is the service's reading when it handed
    the chunk on. The Shell is what the worker keeps from one chunk to the next (`kept`)."""
    shell = kept.get(Shell)
    if shell is None or shell.settings != chunk.settings:
        if shell is not None:
            shell.db.dispose()
        shell = Shell(
            _database(chunk.settings.database_url),
            chunk.settings,
            FixedClock(chunk.now),
            _worker_renderer(chunk),
            entropy=chunk.entropy,
        )
    elif (shell.renderer.root, shell.renderer.reloads) != (chunk.templates, chunk.reloads):
        shell.renderer = _worker_renderer(chunk)
    shell.clock = FixedClock(chunk.now)
    shell.entropy = chunk.entropy
    kept.put(shell)
    if chunk.warm:  # made ready ahead (`ProcessTurnWorker.start`): as after a deadline
        shell.renderer.compile_all()
    return work_out_due(shell, chunk.due)


def _worker_renderer(chunk: Chunk) -> Renderer:
    renderer = Renderer(chunk.templates)
    renderer.reloads = chunk.reloads  # the service's count: read again at its next reload
    return renderer
