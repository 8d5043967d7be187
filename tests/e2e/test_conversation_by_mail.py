"""The conversation as players and a GM meet it, through Dovecot and the SMTP relay: a GM mail
that rolls back, enters an order and processes tells the reopening before the corrected results
(each mail true when it is read, in the order it arrives); "B for me this turn" is CRUISE, read
and echoed; "Use 2. No wait, use 1." takes the correction (mail-interface.md, "Prose is read
like a GM, never guessed silently"; "What happens next: one outlook")."""

from __future__ import annotations

import pytest

from bot.mail_in.auth import signed_address
from tests.e2e.rig import SECRET, Rig, text_of


def _gm(rig: Rig, text: str) -> None:
    rig.mail(rig.gm, signed_address(rig.bot, SECRET, "rc1", "gm"), text, subject="[rc1] commands")
    rig.cycle()


def _to(rig: Rig, seat: str, since: int) -> list[tuple[str, str]]:
    """(subject, text) of each mail to `seat` since outbox row `since`, in the order sent."""
    return [(str(msg["Subject"]), text_of(msg)) for recipient, msg in rig.sent(since) if recipient == rig.players[seat]]


@pytest.mark.parametrize("rig", ["dovecot"], indirect=True)
def test_rollback_order_process_and_prose_options_by_mail(rig: Rig) -> None:
    _gm(rig, "PROCESS rc1")  # to Turn 2: tactical, where B (CRUISE) and C (OVERTAKE) are orders
    rig.mail(rig.players["seb"], rig.signed("seb"), "Hi, B for me this turn\n-- \nSeb\nsent from my phone")
    rig.mail(rig.players["kelly"], rig.signed("kelly"), "Use 2. No wait, use 1.")
    since = rig.last_outbox_id()
    rig.cycle()
    (seb,) = _to(rig, "seb", since)
    assert not seb[0].startswith("[ERROR]") and "read as CRUISE" in " ".join(seb[1].split())
    (kelly,) = _to(rig, "kelly", since)
    assert "read as USE 1, your correction: USE 2 before it is not taken" in " ".join(kelly[1].split())
    assert sorted(rig.orders()) == ["CRUISE", "USE 1"]
    since = rig.last_outbox_id()
    _gm(rig, "ROLLBACK rc1\nORDER rc1 roger USE 5\nPROCESS rc1")
    for seat in ("roger", "anna"):
        subjects = [subject for subject, _ in _to(rig, seat, since)]
        reopened = [i for i, s in enumerate(subjects) if "reopened by the GM" in s]
        corrected = [i for i, s in enumerate(subjects) if "Corrected results of Turn 1" in s]
        assert reopened and corrected and reopened[-1] < corrected[0], subjects
