"""A bot process for the fault-injection tests: works until nothing is left, then exits 0.

    python -m tests.e2e.bot_worker CONFIG NOW

It runs the real jobs (poll over IMAP, tick, send over SMTP) on the configuration's
database, with the clock fixed at NOW (ISO 8601), so a test can kill it at any moment and
start it again.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select

from bot.app import build_app
from bot.games.turns import due_turns
from bot.models import Outbox, OutboxStatus
from bot.settings import load_settings
from bot.testing import FakeClock


def main(config: str, now: str) -> int:
    clock = FakeClock(datetime.fromisoformat(now))
    app = build_app(load_settings(Path(config)), clock=clock)
    service = app.service
    for _ in range(200):
        report = service.poll()
        service.tick()
        service.send()
        with app.db.read() as session:
            pending = session.scalar(select(func.count()).select_from(Outbox).where(
                Outbox.status == OutboxStatus.PENDING, Outbox.next_attempt_at <= clock.now())) or 0
            due = due_turns(session, clock.now())
        if report.fetched == 0 and pending == 0 and not due:
            app.close()
            return 0
    app.close()
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
