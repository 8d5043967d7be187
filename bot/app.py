"""The one composition root: settings in, a wired application out.

Nothing else in `bot/` constructs adapters. Tests build an `App` from fakes with `App(...)`
directly; the CLI and the service use `build_app(settings)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from bot.clock import Clock, SystemClock
from bot.db import Database
from bot.faults import NO_FAULTS, Faults
from bot.games.turns import Shell
from bot.mail_in.inbox import Inbox, MaildirInbox
from bot.mail_out.mailer import MaildirMailer, Mailer
from bot.mail_out.render import Renderer
from bot.service import Service
from bot.settings import Settings

Security = Literal["tls", "starttls", "none"]  # checked by bot.settings.validate


@dataclass
class App:
    settings: Settings
    db: Database
    clock: Clock
    renderer: Renderer
    inbox: Inbox
    mailer: Mailer
    faults: Faults = NO_FAULTS

    @property
    def shell(self) -> Shell:
        return Shell(self.db, self.settings, self.clock, self.renderer, self.faults)

    @property
    def service(self) -> Service:
        return Service(self.shell, self.inbox, self.mailer)

    def close(self) -> None:
        self.inbox.close()
        self.mailer.close()
        self.db.dispose()


def build_inbox(settings: Settings) -> Inbox:
    cfg = settings.inbox
    if cfg.kind == "maildir":
        return MaildirInbox(settings.resolve_path(cfg.path), max_size=settings.limits.max_mail_bytes)
    from bot.mail_in.imap import ImapInbox

    return ImapInbox(
        host=cfg.host, port=cfg.port, username=cfg.username, password=settings.secrets.imap_password,
        security=cast(Security, cfg.security), folder=cfg.folder, processed_folder=cfg.processed_folder,
        failed_folder=cfg.failed_folder, max_size=settings.limits.max_mail_bytes, batch_size=cfg.batch_size,
        timeout=cfg.timeout,
    )


def build_mailer(settings: Settings) -> Mailer:
    cfg = settings.outbox
    if cfg.kind == "maildir":
        return MaildirMailer(settings.resolve_path(cfg.path))
    from bot.mail_out.smtp import SmtpMailer

    return SmtpMailer(host=cfg.host, port=cfg.port, security=cast(Security, cfg.security), username=cfg.username,
                      password=settings.secrets.smtp_password, timeout=cfg.timeout)


def build_app(settings: Settings, *, clock: Clock | None = None, inbox: Inbox | None = None,
              mailer: Mailer | None = None, faults: Faults = NO_FAULTS) -> App:
    return App(
        faults=faults,
        settings=settings,
        db=Database(settings.database_url),
        clock=clock or SystemClock(),
        renderer=Renderer(),
        inbox=inbox if inbox is not None else build_inbox(settings),
        mailer=mailer if mailer is not None else build_mailer(settings),
    )
