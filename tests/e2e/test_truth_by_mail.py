"""Every mail tells the truth about what happens next, through Dovecot and the SMTP relay
(end to end): the GM's plot named to the player and used, the GM's ORDER shown,
DROP announced and the dropped runner classified as not finishing, ROLLBACK reopening the turn
paused and its new results marked as a correction."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.mail_in.auth import signed_address
from tests.e2e.rig import SECRET, Rig, text_of


def _gm(rig: Rig, text: str) -> None:
    rig.mail(rig.gm, signed_address(rig.bot, SECRET, "rc1", "gm"), text, subject="[rc1] commands")
    rig.cycle()


def _to(rig: Rig, seat: str, since: int) -> list[str]:
    return [text_of(msg) for recipient, msg in rig.sent(since) if recipient == rig.players[seat]]


@pytest.mark.parametrize("rig", ["dovecot"], indirect=True)
def test_the_gms_hand_and_a_rollback_are_told_truly_by_mail(rig: Rig) -> None:
    since = rig.last_outbox_id()
    _gm(rig, "PLOT rc1 steve USE 1\nORDER rc1 roger USE 2")
    assert any("The GM has set a plot for you" in m and "> USE 1" in m for m in _to(rig, "steve", since))
    assert any("The GM entered orders for you" in m and "> USE 2" in m for m in _to(rig, "roger", since))
    _gm(rig, "DROP rc1 anna")
    assert any("anna is out of the race" in m for m in _to(rig, "kelly", since))
    for seat in ("kelly", "seb"):
        rig.mail(rig.players[seat], rig.signed(seat), "USE 3")
    rig.cycle()
    rig.clock.advance(timedelta(hours=49))
    since = rig.last_outbox_id()
    rig.app.service.tick()
    rig.app.service.send()
    steve = _to(rig, "steve", since)
    assert any("you were given the GM's plot" in m for m in steve)
    since = rig.last_outbox_id()
    _gm(rig, "ROLLBACK rc1")
    assert any("reopened by the GM" in m and "paused" in m for m in _to(rig, "kelly", since))
    rig.app.service.tick()
    assert rig.deadline() is not None  # reopened, not resolved again by the tick
    since = rig.last_outbox_id()
    _gm(rig, "PROCESS rc1")
    results = _to(rig, "kelly", since)
    assert any(
        "Corrected results of Turn 1" in m and "These results replace the ones sent before" in m for m in results
    )
    for _ in range(8):
        _gm(rig, "PROCESS rc1")
    final = [m for m in _to(rig, "kelly", since) if "Final result" in m]
    assert final and "anna (did not finish)" in final[-1]
