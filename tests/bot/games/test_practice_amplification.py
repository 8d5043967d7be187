"""A practice race cannot be made an amplifier (40 order mails, 11.7 kB, in 10 minutes
brought back 71 mails, 2.28 MB: x195 in bytes). Its turns resolve no sooner than `[practice]
turn_minutes` after they open (`bot.games.turns.resolves_from`), and its person's answers are
held past the loop limit, so the bytes it sends back for each byte it is sent are bounded
(docs/DESIGN.md, "Practice games": the figures measured)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.games import turns
from bot.models import Outbox, OutboxBody
from bot.store import find_game_row
from bot.testing import FakeClock, TestApp, reply_to
from tests.bot import gm_helpers
from tests.bot.gm_helpers import cycle, mails, stranger_says

gapp = gm_helpers.gapp
PAT = "pat@example.net"
MAILS, MINUTES = 40, 10  # the amplifier case: 40 order mails in 10 minutes
BYTES_OUT_PER_BYTE_IN = 15  # the bound (docs/DESIGN.md gives the figure measured for each game)


def _open_orders(app: TestApp, seed: int) -> str:
    """Orders for the person's seat in the open turn, legal and complete (its robot's, drawn)."""
    with app.db.read() as session:
        game = find_game_row(session, "practice1")
        assert game is not None
        rules, state, turn = turns.current_state(session, game)
        seat = next(s for s in game.seats if not s.robot)
        if turn is None or seat.name not in rules.expected_players(state):
            return "STATUS"
        return rules.format_orders(rules.robot_orders(state, seat.name, random.Random(seed)))


@pytest.mark.parametrize("kind", ["racecraft", "speed-circuit", "speedphreakz"])
def test_forty_mails_in_ten_minutes_bring_back_a_bounded_number_of_bytes(gapp: TestApp, kind: str) -> None:
    stranger_says(gapp, PAT, f"PRACTICE {kind}")
    code_mail = mails(gapp, PAT)[-1]
    gapp.inbox.deliver(reply_to(code_mail, "Yes please", sender=PAT, quote=False))
    cycle(gapp)
    with gapp.db.read() as session:
        first = max(session.scalars(select(Outbox.id)))
    assert isinstance(gapp.clock, FakeClock)
    bytes_in = 0
    for number in range(MAILS):
        latest = mails(gapp, PAT)[-1]
        mail = reply_to(latest, _open_orders(gapp, number), sender=PAT, quote=False)
        bytes_in += len(mail)
        gapp.inbox.deliver(mail)
        cycle(gapp)
        gapp.clock.advance(timedelta(minutes=MINUTES) / MAILS)
    with gapp.db.read() as session:
        out = list(
            session.execute(
                select(Outbox.kind, OutboxBody.data)
                .join(OutboxBody, OutboxBody.id == Outbox.id)
                .where(Outbox.id > first)
            )
        )
    bytes_out = sum(len(data) for _, data in out)
    ratio = bytes_out / bytes_in
    print(f"{kind}: {MAILS} mails, {bytes_in} bytes in; {len(out)} mails, {bytes_out} bytes out: x{ratio:.1f}")
    assert ratio <= BYTES_OUT_PER_BYTE_IN, (kind, len(out), bytes_out, bytes_in, sorted({k for k, _ in out}))
