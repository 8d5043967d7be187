"""`flagman verify DIR` against a real finished archive and hand-made changes to it.

The archive is the bot's own (``[bot] archive_dir``), of a Speed Circuit race played through the
service: a person ordering by mail (with lines that restate a default), two robots, the GM's ORDER
for a robot, a PREVIEW, a PROCESS rolled back and processed again (a re-roll, and the next turn's
commitment withdrawn), then deadlines to the finish. Built once for the module. The untouched
archive verifies; each change below, to the record or to a page people read, makes verify fail
with one line on stderr and nothing on stdout, exit 1 (does not hold) or 2 (not a record).
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.verify import RECORD
from rules import fair, find_game
from tests.bot.conftest import GM, make_settings
from tests.bot.gm_helpers import ADDRESS, game_row, gm_says, last, new_app, one_lap_race, player_says, to_the_finish

Record = dict[str, Any]
Change = Callable[[Record, Path], None]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bot's archive of a finished race with a re-roll, the GM's hand and a person's orders."""
    tmp = tmp_path_factory.mktemp("tamper")
    base = make_settings(tmp)
    app = new_app(tmp, bot=replace(base.bot, archive_dir=str(tmp / "site")))
    try:
        one_lap_race(app, ("kelly",), ("ada", "robo"))
        player_says(app, "kelly", "SPEED 20\nPAY WEAR\nPUSH NO\nSLIP 0", game="sc1")
        assert "[ERROR]" not in str(last(app, ADDRESS["kelly"])["Subject"])
        for command in ("ORDER sc1 robo SPEED 20", "PREVIEW sc1", "PROCESS sc1", "ROLLBACK sc1", "PROCESS sc1"):
            gm_says(app, command, game="sc1")
            assert "refused" not in str(last(app, GM)["Subject"]).lower(), command
        to_the_finish(app, "sc1")
        assert str(game_row(app, "sc1").status) == "finished"
    finally:
        app.close()
    return tmp / "site" / "sc1"


def _copy(site: Path, into: Path) -> Path:
    target = into / "sc1"
    shutil.copytree(site, target, ignore=shutil.ignore_patterns("*.png"))
    return target


def _run(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["verify", str(folder)])
    said = capsys.readouterr()
    return code, said.out, said.err


def test_the_untouched_archive_verifies_and_prints_every_commitment_and_receipt(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bot's archive of a whole game verifies (exit 0), every turn resolved again; verify
    prints each turn's commitment, secret and receipts, the re-roll, the GM's hand, what it
    checked, and what only a player's comparison with their mail proves."""
    record = json.loads((site / RECORD).read_text())
    code, out, err = _run(site, capsys)
    assert code == 0, err
    assert record["finished"] and len(record["turns"]) >= 5
    whys = [c["why"] for c in record["commitments"]]
    fates = [c["fate"] for c in record["commitments"]]
    assert "reopened" in whys and "rolled back" in fates and "withdrawn" in fates, record["commitments"]
    redrawn = [t for t in record["turns"] if t["draw"] == 2]
    assert len(redrawn) == 1 and redrawn[0]["gm_orders"] and redrawn[0]["gm_orders"][0]["seat"] == "robo"
    withdrawn = [t for t in record["turns"] if t["draw"] == 1 and t["earlier"]]
    assert len(withdrawn) == 1 and withdrawn[0]["number"] == redrawn[0]["number"] + 1
    for turn in record["turns"]:
        assert turn["commitment"] in out and turn["secret"] in out
        for receipt in turn["receipts"].values():
            assert receipt in out
    assert "draw 2" in out and "the GM entered orders for robo" in out
    assert "dice, events, state and report" in out
    assert "only your own mail can" in out and "The bot's operator holds each secret" in out
    # The person's restating lines (PAY WEAR, PUSH NO, SLIP 0) are not in the orders digested
    # (race turn 1 resolved as soon as they were in: the robots' are on file as it opens).
    race_turn_1 = next(t for t in record["turns"] if t["label"].startswith("Race turn 1 "))
    assert race_turn_1["orders"]["kelly"] == "SPEED 20"


def _turn(record: Record, index: int) -> Record:
    turn: Record = record["turns"][index]
    return turn


def _reroll(record: Record, index: int) -> None:
    """Turn `index` drawn again with a new secret, every value of the turn consistent with it
    (commitment, seed, events, state after): the turn as a forger would make it."""
    rules = find_game(record["kind"])
    turn = _turn(record, index)
    secret = random.Random(index).randbytes(32).hex()
    key = fair.TurnKey(record["game"], turn["number"], turn["label"], turn["scheme"])
    turn.update({"secret": secret, "commitment": fair.commitment(secret), "seed": key.seed(secret, turn["digest"])})
    state = rules.load_state(turn["state"])
    orders = {s: rules.parse_orders(state, s, t).orders for s, t in turn["orders"].items()}
    resolution = rules.resolve(state, orders, random.Random(turn["seed"]))
    turn["events"] = [e.to_json() for e in resolution.events]
    turn["state_after"] = rules.dump_state(resolution.state)
    turn["receipts"] = {s: key.receipt(s, secret, t) for s, t in turn["orders"].items()}


def _rechain(record: Record) -> None:
    """The log's heads made again after a change to its entries (a forger's consistent log)."""
    head = fair.GENESIS
    for seq, entry in enumerate(record["commitments"], start=1):
        entry["seq"] = seq
        head = fair.log_head(
            head, record["game"], entry["number"], entry["label"], entry["commitment"], entry["made_at"], entry["why"]
        )
        entry["head"] = head
    record["head"] = head


def _hide_the_reroll(record: Record, folder: Path) -> None:
    """The rolled-back draw taken out of the log, the log chained again, the turn made its 1st
    draw: a record consistent in itself, hiding the re-roll (the dice page still shows it)."""
    spent = next(c for c in record["commitments"] if c["fate"] == "rolled back")
    record["commitments"].remove(spent)
    _rechain(record)
    for turn in record["turns"]:
        if turn["number"] == spent["number"]:
            turn["draw"] = 1
        turn["log"] = next(c["seq"] for c in record["commitments"] if c["commitment"] == turn["commitment"])


def _forged_ending(record: Record, folder: Path) -> None:
    """The last turn replaced by a forged one, consistent in itself."""
    _reroll(record, -1)


def _page(name: str, old: str, new: str, count: int = 1) -> Change:
    def change(record: Record, folder: Path) -> None:
        text = (folder / name).read_text(encoding="utf-8")
        assert old in text, (name, old)
        (folder / name).write_text(text.replace(old, new, count), encoding="utf-8")

    return change


def _first_rolled_event(record: Record) -> tuple[int, int]:
    for t, turn in enumerate(record["turns"]):
        for e, event in enumerate(turn["events"]):
            if event.get("roll"):
                return t, e
    raise AssertionError("no roll in the race")


def _die_in_record(record: Record, folder: Path) -> None:
    t, e = _first_rolled_event(record)
    roll = record["turns"][t]["events"][e]["roll"]
    roll["faces"][0] = roll["faces"][0] % 6 + 1
    roll["total"] = sum(roll["faces"])


def _die_in_page(record: Record, folder: Path) -> None:
    """The line of a die in a turn's page changed (the record left as it was)."""
    t, e = _first_rolled_event(record)
    turn = record["turns"][t]
    faces = " ".join(str(f) for f in turn["events"][e]["roll"]["faces"])
    page = folder / f"turn-{turn['number']:03d}.html"
    html = page.read_text(encoding="utf-8")
    line = next(line for line in turn["public_events"] if any(c.isdigit() for c in line) and line in html)
    digit = next(c for c in line if c.isdigit())
    changed = line.replace(digit, str((int(digit) + 1) % 10), 1)
    assert line in html and faces
    page.write_text(html.replace(line, changed, 1), encoding="utf-8")


def _set(path: str, value: object) -> Change:
    """record[path] = value, `path` in dots, list indexes as numbers."""

    def change(record: Record, folder: Path) -> None:
        *parents, leaf = path.split(".")
        here: Any = record
        for part in parents:
            here = here[int(part)] if isinstance(here, list) else here[part]
        if isinstance(here, list):
            here[int(leaf)] = value
        else:
            here[leaf] = value

    return change


def _do(action: Callable[[Record], None]) -> Change:
    return lambda record, folder: action(record)


def _raw(data: bytes) -> Change:
    def change(record: Record, folder: Path) -> None:
        (folder / RECORD).write_bytes(data)

    return change


def _link_record(target: str) -> Change:
    def change(record: Record, folder: Path) -> None:
        (folder / RECORD).unlink()
        os.symlink(target, folder / RECORD)

    return change


def _huge(record: Record, folder: Path) -> None:
    with open(folder / RECORD, "r+b") as handle:
        handle.truncate(200 << 20)  # sparse: 200 MB said, nothing written


def _fifo(record: Record, folder: Path) -> None:
    (folder / RECORD).unlink()
    os.mkfifo(folder / RECORD)


def _record_is_a_folder(record: Record, folder: Path) -> None:
    (folder / RECORD).unlink()
    (folder / RECORD).mkdir()


def _unlink(name: str) -> Change:
    return lambda record, folder: (folder / name).unlink()


def _link_page(name: str) -> Change:
    def change(record: Record, folder: Path) -> None:
        outside = folder.parent / "elsewhere.html"
        shutil.copy(folder / name, outside)
        (folder / name).unlink()
        os.symlink(outside, folder / name)

    return change


def _extra_page(record: Record, folder: Path) -> None:
    shutil.copy(folder / "turn-001.html", folder / "turn-099.html")


def _other_games_record(record: Record, folder: Path) -> None:
    record["game"] = "demo1"
    _rechain(record)
    for turn in record["turns"]:
        key = fair.TurnKey("demo1", turn["number"], turn["label"], turn["scheme"])
        turn["seed"] = key.seed(turn["secret"], turn["digest"])


def _drop_receipt(record: Record, folder: Path) -> None:
    turn = _turn(record, -1)
    del turn["receipts"][sorted(turn["receipts"])[0]]


def _unfinished_without_orders(record: Record, folder: Path) -> None:
    record["finished"] = False
    for turn in record["turns"]:
        for key in ("state", "orders", "submitted", "events", "state_after"):
            turn.pop(key)


def _no_turns(record: Record, folder: Path) -> None:
    record["turns"], record["turn_count"], record["commitments"] = [], 0, []
    record["head"] = fair.GENESIS


def _delete_turns(which: slice) -> Change:
    def change(record: Record, folder: Path) -> None:
        del record["turns"][which]

    return change


def _restate_a_default(record: Record, folder: Path) -> None:
    turn = next(t for t in record["turns"] if t["orders"].get("kelly", "").startswith("SPEED"))
    turn["orders"]["kelly"] += "\nPAY WEAR"


def _second_open_entry(record: Record, folder: Path) -> None:
    entry = copy.deepcopy(record["commitments"][-1])
    entry.update({"fate": "open", "secret": None, "revealed_at": None})
    record["commitments"].append(entry)
    _rechain(record)


def _swap_entries(record: Record, folder: Path) -> None:
    log = record["commitments"]
    log[1], log[2] = log[2], log[1]


def _index_drops_a_turn(record: Record, folder: Path) -> None:
    html = (folder / "index.html").read_text(encoding="utf-8")
    link = '<li><a href="turn-002.html">'
    start = html.index(link)
    (folder / "index.html").write_text(html[:start] + html[html.index("</li>", start) + 5 :], encoding="utf-8")


def _drop_dice_card(record: Record, folder: Path) -> None:
    """The dice page loses the card of the rolled-back draw (the record keeps it)."""
    spent = next(c for c in record["commitments"] if c["fate"] == "rolled back")
    html = (folder / "dice.html").read_text(encoding="utf-8")
    start = html.index(f'<li value="{spent["seq"]}">')
    (folder / "dice.html").write_text(html[:start] + html[html.index("</li>", start) + 5 :], encoding="utf-8")


def _middle(record: Record) -> Record:
    turn: Record = record["turns"][len(record["turns"]) // 2]
    return turn


def _hexflip(value: str) -> str:
    return ("1" if value[0] != "1" else "2") + value[1:]


CASES: dict[str, tuple[Change, int]] = {
    # -- bounded: turns taken out, added, forged -------------------------------------------------
    "turn 1 deleted": (_delete_turns(slice(0, 1)), 1),
    "the last turn deleted": (_delete_turns(slice(-1, None)), 1),
    "the last five turns deleted": (_delete_turns(slice(-5, None)), 1),
    "the ending replaced by one consistent forged turn": (_forged_ending, 1),
    "a turn re-rolled with a new secret": (lambda r, f: _reroll(r, len(r["turns"]) // 2), 1),
    "the re-roll hidden from a log chained again": (_hide_the_reroll, 1),
    "a receipt dropped": (_drop_receipt, 1),
    "every receipt of a turn dropped": (lambda r, f: _turn(r, -1).update(receipts={}), 1),
    "a finished record with no turns": (_no_turns, 1),
    "the turn count one more": (lambda r, f: r.update(turn_count=r["turn_count"] + 1), 1),
    "the turn count one less": (lambda r, f: r.update(turn_count=r["turn_count"] - 1), 1),
    "a turn said resolved before commitments": (lambda r, f: r["before_commitments"].append(1), 1),
    "an open turn in a finished game": (lambda r, f: r.update(open=copy.deepcopy({**_turn(r, -1), "draw": 1})), 1),
    # -- cannot be told to skip ------------------------------------------------------------------
    "finished: false": (_set("finished", False), 1),
    "finished: false and no orders anywhere": (_unfinished_without_orders, 1),
    "a turn without its orders key": (lambda r, f: _middle(r).pop("orders"), 1),
    "a turn without its events key": (lambda r, f: _middle(r).pop("events"), 1),
    # -- the dice and the orders ------------------------------------------------------------------
    "a die changed in the record": (_die_in_record, 1),
    "a die changed in a turn's page": (_die_in_page, 1),
    "a secret changed": (lambda r, f: _middle(r).update(secret=_hexflip(_middle(r)["secret"])), 1),
    "a commitment changed": (lambda r, f: _middle(r).update(commitment=_hexflip(_middle(r)["commitment"])), 1),
    "a seed changed": (lambda r, f: _middle(r).update(seed=_middle(r)["seed"] + 1), 1),
    "a digest changed": (lambda r, f: _middle(r).update(digest=_hexflip(_middle(r)["digest"])), 1),
    "an order changed": (lambda r, f: _middle(r)["orders"].update(kelly="SPEED 0"), 1),
    "a default restated in the orders": (_restate_a_default, 1),
    "a receipt changed": (lambda r, f: _middle(r)["receipts"].update(kelly="0" * 20), 1),
    "a state after changed": (lambda r, f: _middle(r)["state_after"].update(turn=999), 1),
    "a turn's state changed": (lambda r, f: _middle(r)["state"].update(turn=999), 1),
    "the report of a turn changed": (lambda r, f: _middle(r)["public_events"].append("kelly wins"), 1),
    "a GM's change to a state claimed": (
        lambda r, f: _middle(r).update(state_changes=[{"at": "2026-01-09T11:00:00Z", "by": "by mail"}]),
        1,
    ),
    "the GM's hand hidden": (lambda r, f: next(t for t in r["turns"] if t["gm_orders"]).update(gm_orders=[]), 1),
    "the draw said to be the first": (lambda r, f: next(t for t in r["turns"] if t["draw"] == 2).update(draw=1), 1),
    "the scheme changed": (lambda r, f: _middle(r).update(scheme=1), 1),
    "the kind of game changed": (_set("kind", "speedphreakz"), 1),
    "the title changed": (_set("title", "Speed Circus"), 1),
    # -- the commitment log ------------------------------------------------------------------------
    "a log entry's commitment changed": (lambda r, f: r["commitments"][0].update(commitment="0" * 64), 1),
    "a log entry's time changed": (lambda r, f: r["commitments"][1].update(made_at="2020-01-01T00:00:00Z"), 1),
    "a reopened entry said opened": (
        lambda r, f: next(c for c in r["commitments"] if c["why"] == "reopened").update(why="opened"),
        1,
    ),
    "a rolled-back entry said resolved": (
        lambda r, f: next(c for c in r["commitments"] if c["fate"] == "rolled back").update(fate="resolved"),
        1,
    ),
    "a log entry deleted": (lambda r, f: r["commitments"].pop(1), 1),
    "two log entries swapped": (_swap_entries, 1),
    "the log's head changed": (lambda r, f: r.update(head=_hexflip(r["head"])), 1),
    "a second open entry": (_second_open_entry, 1),
    # -- tied to the archive -------------------------------------------------------------------------
    "another game's record": (_other_games_record, 1),
    "a secret changed on the dice page": (
        lambda r, f: _page("dice.html", _middle(r)["secret"], _hexflip(_middle(r)["secret"]))(r, f),
        1,
    ),
    "the head changed on the dice page": (lambda r, f: _page("dice.html", r["head"], _hexflip(r["head"]))(r, f), 1),
    "the re-roll's card dropped from the dice page": (_drop_dice_card, 1),
    "a turn dropped from the index": (_index_drops_a_turn, 1),
    "the index names another game": (_page("index.html", "Speed Circuit sc1", "Speed Circuit demo1", 2), 1),
    "the index shows no final result": (_page("index.html", '<section class="result">', "<section>"), 1),
    "a turn's page deleted": (_unlink("turn-002.html"), 1),
    "a turn's page a link out of the archive": (_link_page("turn-002.html"), 1),
    "a page of a turn the record does not count": (_extra_page, 1),
    "the index deleted": (_unlink("index.html"), 1),
    "the dice page deleted": (_unlink("dice.html"), 1),
    # -- not a record, and never a crash ---------------------------------------------------------------
    "null turns": (_set("turns", None), 2),
    "turns a string": (_set("turns", "all of them"), 2),
    "a seed that is text": (lambda r, f: _middle(r).update(seed="12"), 2),
    "a log entry that is a number": (lambda r, f: r["commitments"].append(7), 2),
    "another format": (_set("format", 1), 2),
    "not JSON": (_raw(b"{not json"), 2),
    "deep nesting": (_raw(b"[" * 100_000 + b"]" * 100_000), 2),
    "nesting inside a state": (lambda r, f: _middle(r).update(state={"a": json.loads("[" * 80 + "]" * 80)}), 2),
    "NaN in it": (_raw(b'{"format": 2, "seed": NaN}'), 2),
    "a number of a million digits": (_raw(b'{"format": ' + b"9" * 1_000_000 + b"}"), 2),
    "not UTF-8": (_raw(b'{"format": 2, "game": "\xff"}'), 2),
    "a link to /dev/zero": (_link_record("/dev/zero"), 2),
    "a link out of the archive": (_link_record("/etc/hostname"), 2),
    "a 200 MB record": (_huge, 2),
    "a pipe": (_fifo, 2),
    "a folder": (_record_is_a_folder, 2),
    "no record": (_unlink(RECORD), 2),
}


def test_the_suite_holds_fifty_changes_and_more() -> None:
    """The tamper suite is at least fifty hand-made changes."""
    assert len(CASES) >= 50


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_change_to_the_archive_fails_in_one_line_with_its_exit_status(
    site: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each hand-made change to a real finished archive makes `flagman verify` fail: one line on
    stderr, nothing on stdout, exit 1 where the archive does not hold, 2 where it is no record."""
    change, expected = CASES[name]
    folder = _copy(site, tmp_path)
    original = (folder / RECORD).read_bytes()
    record = json.loads(original)
    change(record, folder)
    record_file = folder / RECORD
    if record_file.is_file() and not record_file.is_symlink() and record_file.read_bytes() == original:
        # A change to the record's values (not to its file): written back as the bot writes it.
        record_file.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    code, out, err = _run(folder, capsys)
    assert (code, out) == (expected, ""), (name, code, out, err)
    assert err.count("\n") == 1 and err.startswith("flagman verify: "), err
