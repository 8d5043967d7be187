"""The use cases: read the inbox, answer every mail, resolve due turns, send the outbox.

Every mail ends in exactly one of: applied (and confirmed), refused (with a clear reply),
ignored (logged, shown in the digest, never answered), or quarantined (processing crashed:
the raw mail is kept, the GM is told). One batch of mails is one transaction with a
savepoint per mail; the mails are moved out of the inbox only after the commit. What happens
to one mail is `bot.intake`'s, top to bottom.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Sequence

from sqlalchemy.orm import Session

from bot.fate import MailFate, PollReport
from bot.faults import CrashPoint
from bot.games import archive, deadline, practice, requests, season_races
from bot.host.storage import breakdown
from bot.intake import Intake
from bot.mail_in.inbox import Folder, Inbox, RawMail, ReadAhead
from bot.mail_in.parse import Inbound
from bot.mail_in.parse_worker import InlineParser, MailParser, ParseOptions, parse_batch, unparsed
from bot.mail_out import drain as mailout
from bot.mail_out.mailer import Mailer
from bot.models import InboundStatus, Quarantine
from bot.safe_text import error_text
from bot.settings import Settings
from bot.shell import Shell

log = logging.getLogger("flagman.inbound")


class Service:
    def __init__(
        self,
        shell: Shell,
        inbox: Inbox,
        mailer: Mailer,
        parser: MailParser | None = None,
        turn_worker: deadline.TurnWorker = deadline.INLINE,
    ) -> None:
        self.shell = shell
        self.inbox = inbox
        self.mailer = mailer
        self.parser: MailParser = parser if parser is not None else InlineParser()
        self.turn_worker = turn_worker  # where due turns are worked out (bot.games.workers)
        self.intake = Intake(shell)
        self._message_ids: dict[str, str] = {}  # mailbox key -> Message-ID of the mails quarantined

    @property
    def settings(self) -> Settings:
        return self.shell.settings

    # -- the jobs ------------------------------------------------------------------------

    def poll(
        self,
        *,
        max_batches: int | None = None,
        stop: Callable[[], bool] | None = None,
        on_batch: Callable[[PollReport], None] | None = None,
        on_committed: Callable[[], None] | None = None,
    ) -> PollReport:
        """Work through the inbox in batches until it is empty (or `max_batches` are done, or
        `stop()` says so after a batch; `on_batch` is called after each one, `on_committed` as
        each is committed, before it is moved: see `handle_batch`). While a batch is
        handled, the next one is read (`ReadAhead`); the batch is moved out of the inbox once
        that read is over, so the inbox is never used by two threads at once. The batch read
        ahead is parsed there too (`self.parser`: in a worker process, beside the batch in hand).
        The whole pass holds the mailbox lock (`bot.host.instance.holding_mailbox`): a prune of the
        Processed folder waits for it, and it for the prune."""
        from bot.host.instance import holding_mailbox, mailbox_name

        with holding_mailbox(self.shell.db.url, mailbox_name(self.settings)):
            return self._poll(max_batches=max_batches, stop=stop, on_batch=on_batch, on_committed=on_committed)

    def _poll(
        self,
        *,
        max_batches: int | None,
        stop: Callable[[], bool] | None,
        on_batch: Callable[[PollReport], None] | None,
        on_committed: Callable[[], None] | None,
    ) -> PollReport:
        report = PollReport()
        size = self.settings.inbox.batch_size
        batches = 0
        seen: set[str] = set()
        mails = self.inbox.fetch_new(size)
        parsed: list[Inbound | None] | None = None  # the batch's mails parsed, when read ahead
        while True:
            if any(m.key in seen for m in mails):
                parsed = None
                mails = [m for m in mails if m.key not in seen]
            if not mails:
                break
            batches += 1
            seen.update(m.key for m in mails)
            report.fetched += len(mails)
            self.shell.faults.reached(CrashPoint.AFTER_FETCH)
            last = max_batches is not None and batches >= max_batches
            ahead = (
                None
                if last
                else ReadAhead(
                    self.inbox,
                    size,
                    skip=[m.key for m in mails],
                    parse=lambda batch: self.parser.parse(batch, self.parse_options()),
                )
            )
            try:
                self.handle_batch(
                    mails,
                    report,
                    before_move=ahead.wait if ahead is not None else None,
                    parsed=parsed,
                    committed=on_committed,
                )
            finally:
                if ahead is not None:
                    ahead.wait()
            if on_batch is not None:
                on_batch(report)
            if ahead is None or (stop is not None and stop()):
                break
            mails, parsed = ahead.result(), ahead.parsed()
        return report

    def parse_options(self) -> ParseOptions:
        return ParseOptions(
            frozenset({self.settings.bot.address.lower()}),
            self.settings.bot.loop_header,
            self.settings.limits.max_lines,
        )

    def tick(self, *, read_first: bool = False, on_resolved: Callable[[], None] | None = None) -> list[tuple[str, int]]:
        """The deadline (`bot.games.deadline.run`: the turns due resolved, the NMR limits, the late
        notices, the reminders), then the ADDRESS changes whose hold is over and the
        practice games left alone and the seasons' next races
        (`bot.games.season_races`). With `read_first` (`flagman tick`; the service's own tick
        job reads the inbox itself, one batch at a time, before it calls this), the inbox is read first: a turn is never
        resolved before the mail that arrived by its deadline is read (mail-interface.md:
        deadlines are judged by arrival, not by when the bot reads). `on_resolved` is called as
        each turn is committed (the service's sender starts on its mail while the next resolves),
        and the next turns are worked out meanwhile by `self.turn_worker` (in a worker process,
        when many fall due together)."""
        if read_first:
            self.poll()
        resolved = deadline.run(self.shell, worker=self.turn_worker, on_resolved=on_resolved)
        requests.due_moves(self.shell)  # ADDRESS changes whose hold is over
        practice.expire_idle(self.shell)  # practice games left alone
        if season_races.next_races(self.shell):  # a season's next race, its last one over
            archive.publish(self.shell, [])
        return [(r.game, r.number) for r in resolved]

    def send(self) -> mailout.DrainReport:
        return mailout.drain(self.shell.db, self.mailer, self.shell.clock, self.settings, faults=self.shell.faults)

    # -- one batch -------------------------------------------------------------------------

    def handle_batch(
        self,
        mails: Sequence[RawMail],
        report: PollReport | None = None,
        *,
        before_move: Callable[[], None] | None = None,
        parsed: Sequence[Inbound | None] | None = None,
        committed: Callable[[], None] | None = None,
    ) -> None:
        """Handle one batch and move it out of the inbox. `parsed`: its mails parsed already
        (`parse_batch`, in the same order), else they are parsed here. `committed` is called once
        the batch is committed, before the move (the service's sender starts on its answers while
        the next batch is read and this one moved)."""
        report = report if report is not None else PollReport()
        if parsed is None or len(parsed) != len(mails):
            parsed = parse_batch(unparsed(mails), self.parse_options())
        batch = list(zip(mails, parsed, strict=True))
        try:
            # The common case, every mail handled: one transaction, no savepoints.
            results = self._handle_all(batch, savepoints=False)
        except Exception as exc:  # redone mail by mail below, where the failure is quarantined
            if breakdown(exc, self.settings.database_url) is not None:
                # The database or the disk failed, not a mail: nothing was committed and every
                # mail stays in the inbox for the next poll (the caller says what failed).
                raise
            log.warning("a mail of the batch failed; the batch is done again mail by mail", exc_info=True)
            self._message_ids.clear()
            results = self._handle_all(batch, savepoints=True, again=True)
        # Committed: the turns the batch resolved (a GM's PROCESS, the orders that completed a turn)
        # are published now (never before).
        resolved = self.intake.take_resolved()
        for _turn in resolved:
            self.shell.faults.reached(CrashPoint.AFTER_RESOLVE)  # a turn resolved and committed
        archive.publish(self.shell, resolved)
        done: list[str] = []
        failed: list[str] = []
        for raw, outcome in results:
            if isinstance(outcome, BaseException):
                failed.append(raw.key)
                report.count(InboundStatus.QUARANTINED)
                # Said once the quarantine is committed (a batch that then failed quarantined nothing).
                log.error(
                    "quarantined %s (%s): %s", self._message_ids.pop(raw.key, raw.key), raw.key, error_text(outcome)
                )
                continue
            done.append(raw.key)
            if outcome is None:
                report.duplicates += 1
            else:
                report.count(outcome.status)
        # Only now, after the commit, are the mails moved out of the inbox.
        self.shell.faults.reached(CrashPoint.AFTER_COMMIT)
        if committed is not None:
            committed()
        if before_move is not None:
            before_move()
        if done:
            self.inbox.mark_done(done, Folder.PROCESSED)
        if failed:
            self.inbox.mark_done(failed, Folder.FAILED)
        self.shell.faults.reached(CrashPoint.AFTER_MOVE)

    def _handle_all(
        self, parsed: Sequence[tuple[RawMail, Inbound | None]], *, savepoints: bool, again: bool = False
    ) -> list[tuple[RawMail, MailFate | None | BaseException]]:
        """The batch in one transaction. Without savepoints a failing mail fails the whole
        transaction (the caller does it again with them); with them, each mail has its own and a
        mail that fails is rolled back alone and quarantined."""
        results: list[tuple[RawMail, MailFate | None | BaseException]] = []
        try:
            with self.shell.db.transaction() as session:
                self.intake.begin_batch(session, [inbound for _, inbound in parsed if inbound is not None], again=again)
                try:
                    for raw, inbound in parsed:
                        if not savepoints:
                            results.append((raw, self.intake.handle(session, raw, inbound)))
                            continue
                        savepoint = session.begin_nested()
                        try:
                            outcome = self.intake.handle(session, raw, inbound)
                            self.intake.write_rows(session)  # the mail's rows, inside its savepoint
                            savepoint.commit()
                        except Exception as exc:  # noqa: BLE001 - quarantined and reported, never swallowed
                            savepoint.rollback()
                            self.intake.drop_rows()
                            self._quarantine(session, raw, inbound, exc)
                            results.append((raw, exc))
                            continue
                        self.intake.keep_said()
                        results.append((raw, outcome))
                    self.intake.write_rows(session)
                    self.intake.keep_said()
                    self.shell.faults.reached(CrashPoint.BEFORE_COMMIT)
                except BaseException:
                    self.intake.drop_rows()  # the transaction is rolled back: its rows go with it
                    raise
        except BaseException:
            self.intake.forget_said()  # rolled back (or the commit failed): none of it happened
            raise
        # Committed: only now does the log say what became of each mail ("applied", "refused" ...).
        self.intake.tell_committed()
        return results

    def _quarantine(self, session: Session, raw: RawMail, inbound: Inbound | None, exc: BaseException) -> None:
        message_id = inbound.message_id if inbound else raw.key
        self._message_ids[raw.key] = message_id
        session.add(
            Quarantine(
                mailbox_key=raw.key,
                message_id=message_id,
                raw=raw.data or b"",
                error="".join(traceback.format_exception(exc)),
                created_at=self.shell.now(),
                reported=False,
            )
        )


__all__ = ["MailFate", "PollReport", "Service"]
