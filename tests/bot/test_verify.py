"""`flagman verify`: a record whose every piece holds verifies; any change to a revealed secret, an
order or a roll makes it fail, naming the turn and the item. The records here are made from the
rules alone, as the scheme says (rules/fair.py), with robot drivers for orders; the archive the
bot writes, and what changes to it verify catches, are tests/bot/test_verify_tamper.py's."""

from __future__ import annotations

import copy
import json
import random
import secrets as pysecrets
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.verify import FORMAT, RECORD, RecordError, read_record, verify
from rules import fair, find_game
from rules.api import Viewer, robot_rng

PLAYERS = {
    "racecraft": ["ann", "bob", "cat", "dan", "eve"],
    "speed_circuit": ["ann", "bob", "cat"],
    "speedphreakz": ["ann", "bob", "cat"],
}


def played(kind: str, seed: int, *, finished: bool = True, turns: int = 60) -> dict[str, Any]:
    """A whole game's record, made as the scheme says with the rules alone: each turn's secret,
    its entry in the commitment log, the orders used (robots) in normal form, the dice seed made
    of both, every receipt, the state before and after, the events and the public report."""
    rules = find_game(kind)
    chooser = random.Random(seed)
    options: dict[str, str] = {"laps": "1"} if kind == "speed_circuit" else {}
    state = rules.new_game(PLAYERS[kind], options, random.Random(seed))
    record: dict[str, Any] = {
        "format": FORMAT,
        "game": "g1",
        "kind": kind,
        "title": rules.title,
        "chance": rules.chance,
        "finished": False,
        "seats": PLAYERS[kind],
        "robots": [],
        "turn_count": 0,
        "turns": [],
        "before_commitments": [],
        "open": None,
        "commitments": [],
        "head": fair.GENESIS,
    }
    for number in range(1, turns + 1):
        if rules.is_finished(state):
            break
        secret = pysecrets.token_hex(32)
        label = rules.turn_label(state)
        made = f"2026-01-{1 + number // 24:02d}T{number % 24:02d}:00:00Z"
        revealed = f"2026-01-{1 + number // 24:02d}T{number % 24:02d}:30:00Z"
        head = fair.log_head(record["head"], "g1", number, label, fair.commitment(secret), made, "opened")
        record["commitments"].append(
            {
                "seq": number,
                "number": number,
                "label": label,
                "commitment": fair.commitment(secret),
                "made_at": made,
                "why": "opened",
                "head": head,
                "fate": "resolved",
                "secret": secret,
                "revealed_at": revealed,
            }
        )
        record["head"] = head
        parsed = {
            p: rules.robot_orders(state, p, robot_rng(chooser.getrandbits(62), p))
            for p in sorted(rules.expected_players(state))
        }
        orders = {p: rules.format_orders(rules.normal_orders(state, p, o)) for p, o in parsed.items()}
        digest = fair.orders_digest(orders)
        key = fair.TurnKey("g1", number, label)
        dice = key.seed(secret, digest)
        resolution = rules.resolve(state, parsed, random.Random(dice))
        record["turns"].append(
            {
                "number": number,
                "label": label,
                "scheme": fair.SCHEME,
                "commitment": fair.commitment(secret),
                "log": number,
                "draw": 1,
                "earlier": [],
                "committed_at": made,
                "secret": secret,
                "revealed_at": revealed,
                "digest": digest,
                "seed": dice,
                "receipts": {p: key.receipt(p, secret, text) for p, text in orders.items()},
                "gm_orders": [],
                "state_changes": [],
                "public_events": list(rules.view(resolution.state, resolution, Viewer.PUBLIC).events),
                "state": rules.dump_state(state),
                "orders": orders,
                "submitted": [],
                "events": [e.to_json() for e in resolution.events],
                "state_after": rules.dump_state(resolution.state),
            }
        )
        state = resolution.state
    record["turn_count"] = len(record["turns"])
    record["finished"] = finished and rules.is_finished(state)
    return record


@pytest.fixture(scope="module", params=sorted(PLAYERS))
def record(request: pytest.FixtureRequest) -> dict[str, Any]:
    return played(request.param, 7)


def test_a_whole_game_verifies_turn_by_turn(record: dict[str, Any]) -> None:
    """An end-to-end record of each kind: every item of every turn holds, nothing skipped."""
    assert record["finished"], "the robots finish the race"
    verdict = verify(record)
    assert verdict.ok, verdict.failure
    assert verdict.turns == len(record["turns"]) and not verdict.skipped


def test_an_unfinished_game_verifies_what_is_public_and_says_what_it_skipped(record: dict[str, Any]) -> None:
    """A game not over publishes no orders and states, and has a turn open: what is public (the
    log, the commitments, the seeds) verifies, and the rest is said to be skipped."""
    public = copy.deepcopy(record)
    public["finished"] = False
    last = public["turns"].pop()
    public["turn_count"] -= 1
    entry = public["commitments"][-1]
    entry.update({"fate": "open", "secret": None, "revealed_at": None})
    public["open"] = {
        "number": last["number"],
        "label": last["label"],
        "commitment": last["commitment"],
        "log": last["log"],
        "draw": 1,
        "committed_at": last["committed_at"],
    }
    for turn in public["turns"]:
        for private in ("state", "orders", "events", "state_after", "submitted"):
            turn.pop(private)
    verdict = verify(public)
    assert verdict.ok, verdict.failure
    assert len(verdict.skipped) == len(public["turns"])


def _mutations(record: dict[str, Any]) -> st.SearchStrategy[tuple[int, str]]:
    """(turn index, what to change) of the record."""
    kinds = ["secret", "order", "roll", "receipt", "commitment"]
    return st.tuples(st.integers(0, len(record["turns"]) - 1), st.sampled_from(kinds))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_change_to_a_secret_an_order_or_a_roll_fails_naming_it(record: dict[str, Any], data: st.DataObject) -> None:
    """Property: "any change to a revealed secret, an order or a roll in an archive
    makes verify fail naming it"."""
    index, change = data.draw(_mutations(record))
    changed = copy.deepcopy(record)
    turn = changed["turns"][index]
    number = turn["number"]
    if change == "secret":
        turn["secret"] = f"{(int(turn['secret'], 16) ^ 1):064x}"
        expected = {"commitment"}
    elif change == "commitment":
        turn["commitment"] = "0" * 64
        expected = {"commitment"}
    elif change == "receipt":
        if not turn["receipts"]:
            return  # a turn nobody orders in (Racecraft's sprint) has no receipt to change
        seat = data.draw(st.sampled_from(sorted(turn["receipts"])))
        turn["receipts"][seat] = "f" * 20
        expected = {f"receipt {seat}"}
    elif change == "order":
        if not turn["orders"]:
            return  # nor an order
        seat = data.draw(st.sampled_from(sorted(turn["orders"])))
        turn["orders"][seat] += "X"
        expected = {"orders"}
    else:  # a roll: a die's face in the events
        rolled = [e for e in turn["events"] if e.get("roll")]
        if not rolled:
            return  # a turn without dice has no roll to change
        event = data.draw(st.sampled_from(rolled))
        event["roll"]["faces"][0] = event["roll"]["faces"][0] % 6 + 1
        event["roll"]["total"] += 1
        expected = {"events"}
    verdict = verify(changed)
    assert verdict.failure is not None, change
    assert verdict.failure.where.startswith(f"turn {number} (") and verdict.failure.item in expected, verdict.failure


def test_the_record_is_read_from_the_archive_folder(tmp_path: Path) -> None:
    """A folder without a record, or with one that is not JSON, is said to be no record."""
    with pytest.raises(RecordError, match="does not exist"):
        read_record(tmp_path)
    (tmp_path / RECORD).write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordError, match="is not JSON"):
        read_record(tmp_path)
    (tmp_path / RECORD).write_text(json.dumps(played("racecraft", 3)), encoding="utf-8")
    assert verify(read_record(tmp_path)).ok


def test_check_dice_runs_with_python_alone_on_a_saved_mail(tmp_path: Path) -> None:
    """The archive's check-dice.py needs nothing but Python (isolated: no site packages, no
    flagman): exit 0 on a mail whose values hold, 1 on one changed, 2 on a mail without them."""
    import subprocess
    import sys

    from bot.verify import check_script

    script = tmp_path / "check-dice.py"
    script.write_text(check_script(), encoding="utf-8")
    secret, seat, text = "ef" * 32, "kelly", "SPEED 20"
    key = fair.TurnKey("sc1", 0, "Race turn 1")
    digest = fair.orders_digest({seat: text})
    block = "\n".join(
        [
            "Hello,",
            "",
            f"What it reads: {fair.MARK}",
            "  game        sc1",
            "  turn        Race turn 1",
            f"  commitment  {fair.commitment(secret)}",
            f"  secret      {secret}",
            f"  digest      {digest}",
            f"  seed        {key.seed(secret, digest)}",
            f"  receipt     {seat} {key.receipt(seat, secret, text)}",
            f"  orders      {seat}",
            f"      > {text}",
            "",
        ]
    )
    mail = tmp_path / "results.eml"
    for content, status in ((block, 0), (block.replace("SPEED 20", "SPEED 40"), 1), ("Hello", 2)):
        mail.write_text(f"Subject: [sc1] Results\nContent-Type: text/plain\n\n{content}", encoding="utf-8")
        done = subprocess.run([sys.executable, "-I", "-S", str(script), str(mail)], capture_output=True, text=True)
        assert done.returncode == status, done.stderr
        assert (done.stderr.count("\n") == 1) == (status != 0)
