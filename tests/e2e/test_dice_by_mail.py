"""Dice anyone can check, through the real mail servers: for a game of each kind, the sheets a
player receives carry the commitment of the turn's dice (not Racecraft's, which has no dice); the
confirmation of their orders carries a receipt; the results reveal a secret whose SHA-256 is that
commitment and list that receipt; the player checks the results mail they saved with the archive's
check-dice.py and with `flagman verify --turn` (where there are dice: Racecraft's results carry the
receipts and their key, no block of values to check); and the game's public archive verifies with
`flagman verify` (a finished Racecraft race completely, the others as far as an unfinished game is
public).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from bot.cli import main
from bot.games.archive import write_game_archive
from bot.games.turns import PlayerSpec, create_game
from bot.verify import read_record, verify
from rules import find_game
from rules.api import robot_rng
from tests.e2e.rig import Rig, text_of

COMMITMENT = re.compile(r"the\s+SHA-256\s+of\s+their\s+secret\s+is\s+([0-9a-f]{64})")
SECRET = re.compile(r"^  secret +([0-9a-f]{64})\r?$", re.M)
KEY = re.compile(r"kept\s+secret\s+until\s+now:\s+([0-9a-f]{64})\s")  # a game without chance: the receipts' key
RECEIPT = re.compile(r"Receipt\s+of\s+these\s+orders\s+for\s.+?:\s+([0-9a-f]{20})\.", re.S)


def _to(rig: Rig, address: str, since: int) -> list[EmailMessage]:
    return [msg for recipient, msg in rig.sent(since) if recipient == address]


@pytest.mark.parametrize("rig", ["dovecot"], indirect=True)
@pytest.mark.parametrize("kind", ["racecraft", "speed_circuit", "speedphreakz"])
def test_a_game_by_mail_commits_reveals_gives_receipts_and_its_archive_verifies(
    rig: Rig, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = find_game(kind)
    name = "d" + kind[:2]
    players = {f"p{i}": f"p{i}@players-{rig.domain}" for i in range(rules.min_players)}
    since = rig.last_outbox_id()
    with rig.app.db.transaction() as session:
        create_game(
            rig.app.shell,
            session,
            kind=kind,
            name=name,
            players=[PlayerSpec(s, a, s.upper()) for s, a in players.items()],
            gm_address=rig.gm,
            deadline="48h",
            timezone="Europe/London",
            seed=9,
        )
    rig.cycle()
    sheet = _to(rig, players["p0"], since)[-1]
    committed = COMMITMENT.search(text_of(sheet))
    assert bool(committed) == rules.chance, "the first sheet carries the commitment, where there are dice"
    # p0 orders by replying to the sheet: a robot's orders, legal and complete in every game.
    with rig.app.db.read() as session:
        from bot.store import find_game_row, open_turn

        game = find_game_row(session, name)
        assert game is not None
        turn = open_turn(session, game)
        assert turn is not None
        state = rules.load_state(turn.state)
    orders = rules.format_orders(rules.robot_orders(state, "p0", robot_rng(1, "p0")))
    since = rig.last_outbox_id()
    rig.mail(players["p0"], str(sheet["Reply-To"].addresses[0].addr_spec), orders, subject=f"Re: {sheet['Subject']}")
    rig.cycle()
    receipt = RECEIPT.search(text_of(_to(rig, players["p0"], since)[-1]))
    assert receipt, "the confirmation carries a receipt"
    since = rig.last_outbox_id()
    rig.clock.advance(timedelta(hours=49))
    rig.app.service.tick()
    rig.app.service.send()
    results_mail = _to(rig, players["p0"], since)[0]
    results = text_of(results_mail)
    revealed = (SECRET if rules.chance else KEY).search(results)
    assert revealed, "the results reveal the secret"
    if committed:
        assert hashlib.sha256(revealed.group(1).encode()).hexdigest() == committed.group(1)
    else:
        assert "Dice of" not in results and "commitment" not in results and "seed" not in results
    assert re.search(rf"\bp0\s+{receipt.group(1)}\b", results), "the results list the receipt of p0's orders"
    assert re.search(r"\bp1\s+[0-9a-f]{20} \(default\)", results), "a default is marked as one"
    # Racecraft to the finish, the others a few turns more (robots' orders for p0 each time).
    for _ in range(12 if kind == "racecraft" else 2):
        with rig.app.db.read() as session:
            game = find_game_row(session, name)
            assert game is not None
            if str(game.status) == "finished":
                break
        rig.clock.advance(timedelta(hours=49))
        rig.app.service.tick()
        rig.app.service.send()
    out = tmp_path / "archive"
    write_game_archive(rig.app.db, name, out)
    if committed:
        assert committed.group(1) in (out / "dice.html").read_text()
    # The player checks the results mail they saved, with Python alone and with flagman (a game
    # without chance: its results carry no block of values, the archive checks its receipts).
    saved = tmp_path / "results.eml"
    saved.write_bytes(bytes(results_mail))
    if rules.chance:
        checked = subprocess.run(
            [sys.executable, str(out / "check-dice.py"), str(saved)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stderr
        assert f"receipt p0 {receipt.group(1)}" in checked.stdout
        capsys.readouterr()
        assert main(["verify", "--turn", str(saved), str(out)]) == 0, capsys.readouterr().err
    else:
        assert "[flagman-check]" not in results and "check-dice" not in results, results
    verdict = verify(read_record(out))
    assert verdict.ok and verdict.turns >= 2, verdict.failure
    if kind == "racecraft":
        assert read_record(out)["finished"] and not verdict.skipped, "a finished race verifies completely"
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "turn 1" in capsys.readouterr().out
    # One roll changed (a published secret), and verify names the turn and the item.
    record = read_record(out)
    record["turns"][0]["secret"] = hashlib.sha256(b"another").hexdigest()
    (out / "record.json").write_text(json.dumps(record))
    assert main(["verify", str(out)]) == 1
    said = capsys.readouterr()
    # One line, naming what does not hold: the dice page people read shows another secret.
    assert said.out == "" and said.err.count("\n") == 1 and "turn 1 secret" in said.err
