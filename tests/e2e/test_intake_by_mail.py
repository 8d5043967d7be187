"""The intake's answers through Dovecot and the SMTP relay: a
part-only mail added to the set on file (findings 1: "Oops, forgot: SPEED 40", "DESIGN SKILL 2"),
and a player's words for the GM passed on to the GM, asked whether RESIGN was meant, and listed
in the GM's STATUS under "Needs your attention" (finding 3)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.models import Game, OrderSubmission, Seat
from tests.e2e.rig import SECRET, Rig, text_of

pytestmark = pytest.mark.e2e


def _to(rig: Rig, address: str, since: int) -> list[str]:
    return [" ".join(text_of(msg).split()) for recipient, msg in rig.sent(since) if recipient == address]


@pytest.mark.parametrize("rig", ["dovecot"], indirect=True)
def test_a_part_only_mail_is_added_to_the_set_on_file_by_mail(rig: Rig) -> None:
    with rig.app.db.transaction() as session:
        create_game(
            rig.app.shell,
            session,
            kind="speed_circuit",
            name="sc1",
            players=[PlayerSpec(s, rig.players[s], s.title(), "UTC") for s in ("kelly", "seb")],
            gm_address=rig.gm,
            deadline="24h",
            seed=3,
            options={"laps": "1"},
        )
    rig.app.service.send()
    kelly = rig.players["kelly"]
    address = signed_address(rig.bot, SECRET, "sc1", "kelly")
    rig.mail(kelly, address, "TYRES OPTION", subject="[sc1] design")
    rig.cycle()
    since = rig.last_outbox_id()
    rig.mail(kelly, address, "Oops, forgot:\nDESIGN SKILL 2\n\nKelly", subject="Re: [sc1] design")
    rig.cycle()
    (answer,) = _to(rig, kelly, since)
    assert "Added to the set you had on file, which stands: > TYRES OPTION" in answer
    assert "That is a complete set" in answer
    with rig.app.db.read() as session:
        game = session.scalars(select(Game).where(Game.name == "sc1")).one()
        texts = session.scalars(
            select(OrderSubmission.text)
            .join(Seat, Seat.id == OrderSubmission.seat_id)
            .where(OrderSubmission.source == "mail", Seat.game_id == game.id)
            .order_by(OrderSubmission.id)
        ).all()
    assert texts == ["TYRES OPTION", "DESIGN ACC 0 DEC 0 TOP 0 START 0 PRIME 0 OPTION 0 SKILL 2"]


@pytest.mark.parametrize("rig", ["dovecot"], indirect=True)
def test_words_for_the_gm_reach_the_gm_by_mail(rig: Rig) -> None:
    since = rig.last_outbox_id()
    rig.mail(rig.players["kelly"], rig.signed("kelly"), "Hi GM,\nI have to drop out, family stuff\n\nKelly")
    rig.cycle()
    (answer,) = _to(rig, rig.players["kelly"], since)
    assert "Did you mean to resign? Send RESIGN rc1" in answer and "[ERROR]" not in answer
    (to_gm,) = _to(rig, rig.gm, since)
    assert "> I have to drop out, family stuff" in to_gm and "PRESS rc1 kelly" in to_gm
    since = rig.last_outbox_id()
    rig.mail(rig.gm, signed_address(rig.bot, SECRET, "rc1", "gm"), "STATUS rc1\nthanks!", subject="[rc1] commands")
    rig.cycle()
    (status,) = _to(rig, rig.gm, since)
    assert "Needs your attention:" in status and "kelly: a note for you" in status
    assert "> I have to drop out, family stuff" in status and "[ERROR]" not in status
