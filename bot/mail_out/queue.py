"""Mail into the outbox: composed (bot.mail_out.compose) and written in the same transaction
as the change that caused it, with its final bytes and a stable Message-ID; an answer that
would pass its cap is cut to fit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.orm import Session

from bot.db import insert_with_parts
from bot.mail_out import handoff
from bot.mail_out.compose import CalendarPart, HtmlBody, Recipient, compose
from bot.mail_out.lists import ListHeaders
from bot.mail_out.render import RenderedMail
from bot.models import Outbox, OutboxBody, OutboxStatus
from bot.settings import Settings

log = logging.getLogger("flagman.mail")

NewRows = list[dict[str, object]]  # outbox rows not yet inserted (`queue(into=...)`)
# A letter's claims as JSON, keys sorted: ``json.dumps(claims, sort_keys=True)`` by one encoder made
# once (json.dumps makes a new one for every call given an option).
_CLAIMS_JSON = json.JSONEncoder(sort_keys=True).encode


def queue(
    session: Session,
    settings: Settings,
    now: datetime,
    *,
    kind: str,
    to: Recipient,
    rendered: RenderedMail,
    game_id: int | None = None,
    reply_to: str | None = None,
    in_reply_to: str = "",
    auto_replied: bool = False,
    html: HtmlBody | None = None,
    into: NewRows | None = None,
    lists: ListHeaders | None = None,
    calendars: tuple[CalendarPart, ...] = (),
    max_bytes: int | None = None,
) -> None:
    """Compose the mail and put it in the outbox: now (`session.add`), or, with `into`, in the
    rows a batch inserts together when it is done (`insert_rows`). With `max_bytes` (an answer
    to a mail, bot.letters.answer_cap), a text that would make the mail bigger is cut (`_fit`)."""

    def make(text: RenderedMail) -> tuple[str, str, bytes]:
        return compose(
            settings,
            now,
            kind=kind,
            to=to,
            rendered=text,
            reply_to=reply_to,
            in_reply_to=in_reply_to,
            auto_replied=auto_replied,
            html=html,
            lists=lists,
            calendars=calendars,
        )

    message_id, envelope_from, data = make(rendered)
    if max_bytes is not None and len(data) > max_bytes:
        rendered, (message_id, envelope_from, data) = _fit(rendered, max_bytes, make)
    values: dict[str, object] = {
        "message_id": message_id,
        "kind": kind,
        "game_id": game_id,
        "recipient": to.address,
        "envelope_from": envelope_from,
        "subject": rendered.subject,
        "data": data,
        "status": OutboxStatus.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "last_error": "",
        "created_at": now,
        "sent_at": None,
        "claims": _CLAIMS_JSON([c.to_json() for c in rendered.claims]) if rendered.claims else None,
    }
    if into is not None:
        into.append(values)
    else:
        body = OutboxBody(data=values.pop("data"))
        session.add(Outbox(**values, body=body))


def _fit(
    rendered: RenderedMail, max_bytes: int, make: Callable[[RenderedMail], tuple[str, str, bytes]]
) -> tuple[RenderedMail, tuple[str, str, bytes]]:
    """The most lines of `rendered`'s text whose mail (made by `make`) is at most `max_bytes`,
    and a last line saying the rest is cut (no answer is bigger than its cap)."""
    lines = rendered.body.splitlines()
    note = (
        f"[... the rest of this answer is cut: an answer to a mail is at most {max_bytes // 1024} kB. "
        "Ask for less in one mail.]"
    )

    def cut(keep: int) -> RenderedMail:
        return RenderedMail(rendered.subject, "\n".join([*lines[:keep], "", note, ""]), rendered.claims)

    low, high = 0, len(lines)  # the most lines kept that fit: at least none
    while low < high:
        middle = (low + high + 1) // 2
        if len(make(cut(middle))[2]) <= max_bytes:
            low = middle
        else:
            high = middle - 1
    text = cut(low)
    log.warning(
        "an answer (%s) over %d bytes was cut to %d of its %d lines", rendered.subject[:80], max_bytes, low, len(lines)
    )
    return text, make(text)


def insert_rows(session: Session, rows: NewRows) -> None:
    """Insert the rows `queue` collected, and forget them: the outbox rows and their bodies
    (`OutboxBody`, under the ids the rows were given, matched by Message-ID) together
    (`insert_with_parts`: one statement on PostgreSQL, two elsewhere); the bodies handed to this
    process's sender once the transaction commits (`bot.mail_out.handoff`)."""
    if rows:
        insert_with_parts(session, Outbox, OutboxBody, rows, ("data",), "message_id")
        bodies: list[tuple[str, bytes]] = []
        for row in rows:
            message_id, data = row["message_id"], row["data"]
            assert isinstance(message_id, str) and isinstance(data, bytes)
            bodies.append((message_id, data))
        handoff.keep(session, bodies)
        rows.clear()
