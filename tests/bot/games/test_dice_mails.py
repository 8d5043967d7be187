"""What a player can check from their own mail (docs/DESIGN.md, "Dice anyone can check"): the
confirmation's receipt is of the orders as the dice count them, so a line restating a default
changes neither the receipt nor the dice; each results mail carries the block of values the
archive's check-dice.py reads (the secret, the digest, the seed, the log entry, every receipt,
the player's own orders), and the final one every seat's orders, so that the digest is checked
from the mail alone; a changed value in a saved mail is caught."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Mapping
from email.message import EmailMessage
from pathlib import Path

import pytest

from bot.verify import verify_mail
from rules import fair
from tests.bot.gm_helpers import ADDRESS, last, mails, new_app, one_lap_race, player_says, to_the_finish

KELLY, SEB = ADDRESS["kelly"], ADDRESS["seb"]


def _text(msg: EmailMessage) -> str:
    return "\n".join(str(p.get_content()) for p in msg.walk() if p.get_content_maintype() == "text")


def test_a_player_checks_every_results_mail_and_a_restated_default_changes_no_receipt(tmp_path: Path) -> None:
    """Speed Circuit to the finish: kelly's confirmation of "SPEED 20, PAY WEAR, PUSH NO" gives the
    receipt of "SPEED 20" (and says so), seb's plain "SPEED 20" in the same turn the same digest
    part; each results mail's block holds by itself (rules.fair.check_mail); the final mail lists
    every seat's orders and the digest is checked from them; a digit changed in a saved mail fails."""
    app = new_app(tmp_path)
    try:
        one_lap_race(app, ("kelly", "seb"), seed=5, early_resolution=False)
        player_says(app, "kelly", "SPEED 20\nPAY WEAR\nPUSH NO", game="sc1")
        confirmation = _text(last(app, KELLY))
        receipt = re.search(r"Receipt of these orders for\s+Race\s+turn\s+1[^:]*:\s+([0-9a-f]{20})\.", confirmation)
        assert receipt is not None, confirmation
        assert "as the dice count them" in " ".join(
            confirmation.split()
        ) and "    > SPEED 20\n" in confirmation.replace("\r", "")
        to_the_finish(app, "sc1", 40)
        results = [
            m for m in mails(app, KELLY) if "Results of" in str(m["Subject"]) or "inal result" in str(m["Subject"])
        ]
        race = [m for m in results if "Race turn" in str(m["Subject"])]
        assert race, "results of race turns"
        first = fair.read_mail(bytes(race[0]))
        assert first is not None and first.receipts["kelly"] == receipt.group(1)
        assert first.orders == {"kelly": "SPEED 20"}
        for msg in results:
            found = fair.read_mail(bytes(msg))
            assert found is not None, msg["Subject"]
            done, failure = fair.check_mail(found)
            assert failure is None, (msg["Subject"], failure)
            assert verify_mail(bytes(msg)).failure is None
        final = fair.read_mail(bytes(mails(app, KELLY)[-1]))
        assert final is not None and final.all_orders and set(final.orders) == {"kelly", "seb"}
        assert any(line.startswith("digest ") for line in fair.check_mail(final)[0])
        forged = bytes(race[0]).replace(first.seed.encode(), str(int(first.seed) + 1).encode())
        assert fair.read_mail(forged) is not None
        assert verify_mail(forged).failure is not None
    finally:
        app.close()


def test_a_quoted_and_forwarded_block_is_still_read() -> None:
    """A block quoted by a mail client ("> " before each line) is read as the bot wrote it."""
    secret = "ab" * 32
    key = fair.TurnKey("sc1", 0, "Race turn 1")
    digest = fair.orders_digest({"kelly": "SPEED 20"})
    lines = [
        f"To check them: {fair.MARK}",
        "  game        sc1",
        "  turn        Race turn 1",
        f"  commitment  {fair.commitment(secret)}",
        f"  secret      {secret}",
        f"  digest      {digest}",
        f"  seed        {key.seed(secret, digest)}",
        f"  receipt     kelly {key.receipt('kelly', secret, 'SPEED 20')}",
        "  every-seat  (the game is over)",
        "  orders      kelly",
        "      > SPEED 20",
    ]
    quoted = "\n".join("> " + line for line in lines).encode()
    found = fair.read_mail(quoted)
    assert found is not None and found.orders == {"kelly": "SPEED 20"}
    done, failure = fair.check_mail(found)
    assert failure is None and len(done) == 4


def test_the_receipts_of_a_turn_are_worked_out_once_for_all_its_letters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every seat's results and the GM's copy show the same receipts of the turn: they are
    worked out once for the turn's letters, not once a letter (each one an HMAC of every seat's
    orders), and each seat's letter still carries its own orders alone."""
    from bot import dice

    made: Counter[tuple[str, int]] = Counter()
    receipts = dice.receipts

    def counted(turn_key: fair.TurnKey, secret: str, texts: Mapping[str, str]) -> dict[str, str]:
        if sys._getframe(1).f_globals["__name__"] == "bot.letters.reveal":
            made[(turn_key.game, turn_key.number)] += 1
        return receipts(turn_key, secret, texts)

    monkeypatch.setattr(dice, "receipts", counted)
    app = new_app(tmp_path)
    try:
        one_lap_race(app, ("kelly", "seb"), seed=5, early_resolution=False)
        player_says(app, "kelly", "SPEED 20", game="sc1")
        player_says(app, "seb", "SPEED 40", game="sc1")
        to_the_finish(app, "sc1", 3)
        assert made and set(made.values()) == {1}, made  # three letters a turn: kelly's, seb's, the GM's
        race = [m for m in mails(app, KELLY) if "Results of Race turn 1" in str(m["Subject"])]
        found = fair.read_mail(bytes(race[0]))
        assert found is not None and found.orders == {"kelly": "SPEED 20"}
        seb = [m for m in mails(app, SEB) if "Results of Race turn 1" in str(m["Subject"])]
        found = fair.read_mail(bytes(seb[0]))
        assert found is not None and found.orders == {"seb": "SPEED 40"}
    finally:
        app.close()


def test_racecraft_results_list_the_receipts_and_carry_no_block_to_check_dice(tmp_path: Path) -> None:
    """docs/DESIGN.md, "A game without chance" (Racecraft): "its mails say nothing of dice ...;
    the confirmation and results carry the receipts, and the results the turn's secret as the key
    that checks them". Played by mail (playtest5 RC3): every Racecraft result still ended with
    "To check the receipts yourself, ... run check-dice.py" and its block of values, a dozen
    lines of a dice check for a game without dice."""
    from tests.bot.gm_helpers import _start_rc, gm_says

    app = new_app(tmp_path)
    try:
        _start_rc(app)
        player_says(app, "kelly", "USE 4")
        gm_says(app, "PROCESS rc1")
        results = next(m for m in mails(app, KELLY) if "Results of" in str(m["Subject"]))
        text = _text(results)
        assert re.search(r"\bkelly\s+[0-9a-f]{20}\b", text), text
        assert re.search(r"\bseb\s+[0-9a-f]{20} \(default\)", text), text
        assert "Each is made with the turn's key" in " ".join(text.split()), text
        assert fair.MARK not in text and "check-dice" not in text and "orders      kelly" not in text, text
    finally:
        app.close()
