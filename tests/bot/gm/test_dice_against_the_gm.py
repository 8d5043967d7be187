"""The dice hold against the game's own GM (docs/DESIGN.md, "Dice anyone can check"): PREVIEW never
shows a real roll and says so; a GM's ORDER (a robot seat's too) is in the turn's results and
record; a ROLLBACK draws the turn again in plain sight (a new commitment in the published log at
once, the results saying which draw they are, new receipts mailed); and over any sequence of GM
commands, nothing anyone was sent or could read in the archive before a turn's orders closed
holds its real secret or seed."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.games.turns import PlayerSpec, create_game
from bot.testing import TestApp, body_of
from rules import fair
from tests.bot import gm_helpers
from tests.bot.conftest import GM, make_settings
from tests.bot.gm_helpers import ADDRESS, cycle, gm_says, last, mails, new_app, one_lap_race, player_says, turns
from tests.settled import examples

gapp = gm_helpers.gapp  # the shared fixture
KELLY = ADDRESS["kelly"]
THROWAWAY = re.compile(r"drawn for this preview alone:\s+([0-9a-f]{64})")


def _race(tmp: Path) -> TestApp:
    """Speed Circuit sc1 at race turn 1: kelly by mail, robots ada and robo; the bot keeps its
    archive; every mail so far sent."""
    base = make_settings(tmp)
    app = new_app(tmp, bot=replace(base.bot, archive_dir=str(tmp / "site")))
    one_lap_race(app, ("kelly",), ("ada", "robo"), early_resolution=False)
    return app


def _racecraft(app: TestApp) -> None:
    """Racecraft rc1, five people in UTC, 24h turns, started and its sheets sent."""
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb", "steve", "roger", "anna")],
            gm_address=GM,
            deadline="24h",
            seed=2,
        )
    app.service.send()


@pytest.fixture
def sc(tmp_path: Path) -> Iterator[TestApp]:
    app = _race(tmp_path)
    yield app
    app.close()


def _text(msg: EmailMessage) -> str:
    return "\n".join(str(p.get_content()) for p in msg.walk() if p.get_content_maintype() == "text")


def test_preview_resolves_with_a_throwaway_secret_and_says_so(sc: TestApp) -> None:
    """PREVIEW's dice come from a throwaway secret it names, never the turn's; the preview says in
    plain words that its rolls are not the turn's; its orders used are the whole set that counts,
    the part the game's default fills in named as such."""
    player_says(sc, "kelly", "PATH B B", game="sc1")  # no SPEED: the default fills it in
    gm_says(sc, "PREVIEW sc1", game="sc1")
    preview = _text(last(sc, GM))
    assert "These are NOT the turn's dice" in preview
    found = THROWAWAY.search(preview)
    assert found is not None
    real = turns(sc, "sc1")[-1].secret
    assert real is not None and found.group(1) != real and real not in preview
    assert "of which the game's default fills in what the seat's set lacks:" in preview
    assert re.search(r"kelly +\(on file\)\s+> SPEED \d+\s+> PATH B B", preview), preview


def test_the_gms_order_for_a_robot_is_in_the_results_and_the_record(sc: TestApp) -> None:
    """Nobody is told of an ORDER for a robot seat (it has no one to tell), so the turn's results
    and its record in the archive say it: which seat, when, by which door; the GM's confirmation
    says nobody was told. A person's seat is told, with the receipt of what is on file now."""
    gm_says(sc, "ORDER sc1 robo SPEED 20", game="sc1")
    assert "robo is a robot seat: nobody is told" in body_of(last(sc, GM))
    gm_says(sc, "ORDER sc1 kelly SPEED 20", game="sc1")
    told = _text(last(sc, KELLY))
    assert "The GM entered these orders for your seat kelly" in told
    assert re.search(r"Receipt of the orders on file for you now: [0-9a-f]{20}\.", told)
    gm_says(sc, "PROCESS sc1", game="sc1")
    results = _text(last(sc, KELLY))
    assert re.search(
        r"The GM entered orders in Race turn 1 .* for:\s+robo \(robot\), \w{3} \d+ \w{3} 2026 \d\d:\d\d \w+ \(by mail\)",
        results,
        re.S,
    )
    record = json.loads((Path(sc.settings.bot.archive_dir) / "sc1" / "record.json").read_text())
    changed = record["turns"][-1]["gm_orders"]
    assert [g["seat"] for g in changed] == ["robo", "kelly"] and changed[0]["by"] == "by mail"


def test_a_rollback_draws_again_in_plain_sight(sc: TestApp) -> None:
    """ROLLBACK: the reopened turn's new commitment is in the game's published log at once, before
    its orders close, dated when it was made; every person with orders on file gets a new receipt;
    the results of the turn resolved again say they are its 2nd draw."""
    player_says(sc, "kelly", "SPEED 20", game="sc1")
    gm_says(sc, "PROCESS sc1", game="sc1")
    first = turns(sc, "sc1")[2].secret
    sc.clock.advance(timedelta(hours=3))
    gm_says(sc, "ROLLBACK sc1", game="sc1")
    reopened = turns(sc, "sc1")[2]
    assert reopened.secret is not None and reopened.secret != first
    site = Path(sc.settings.bot.archive_dir) / "sc1"
    record = json.loads((site / "record.json").read_text())
    assert record["open"]["commitment"] == fair.commitment(reopened.secret) and record["open"]["draw"] == 2
    entry = record["commitments"][record["open"]["log"] - 1]
    assert entry["why"] == "reopened" and entry["made_at"] > record["commitments"][2]["made_at"]
    assert fair.commitment(reopened.secret) in (site / "dice.html").read_text()
    notice = " ".join(_text(last(sc, KELLY)).split())
    assert "The turn's secret is new, so the receipt your confirmation carried no longer stands" in notice
    receipt = re.search(r"The receipt of the orders on file for you now is ([0-9a-f]{20})", notice)
    assert receipt is not None
    gm_says(sc, "PROCESS sc1", game="sc1")
    results = _text(last(sc, KELLY))
    assert "the 2nd draw for this turn" in results and "the GM rolled the turn back" in results
    assert f"receipt     kelly {receipt.group(1)}" in results


def test_racecraft_mails_carry_receipts_and_no_dice(tmp_path: Path) -> None:
    """Racecraft has no chance: its sheets and results say nothing of dice, commitments or seeds;
    the confirmation and the results carry the receipts; the final sprint, which nobody orders in,
    prints no empty receipts section."""
    app = new_app(tmp_path)
    try:
        _racecraft(app)
        player_says(app, "kelly", "USE 2", game="rc1")
        assert re.search(r"Receipt of these orders for Turn 1 of 5: start: [0-9a-f]{20}\.", body_of(last(app, KELLY)))
        for _ in range(8):
            app.clock.advance(timedelta(hours=25))
            cycle(app)
        every = [_text(m) for m in mails(app, KELLY)] + [_text(m) for m in mails(app, GM)]
        assert every and all("Dice of" not in t and "SHA-256" not in t and "commitment" not in t for t in every)
        results = [t for t in every if "Receipts of the orders used in" in t]
        assert results, "the results carry the receipts"
        final = _text(mails(app, KELLY)[-1])
        # The final carries the last tactical turn's receipts (its results wait for the sprint,
        # which runs at once), and none for the sprint, which takes no orders.
        assert "is over" in final and "Receipts of the orders used in Turn 5" not in final
        receipts = final.count("Receipts of the orders used")
        assert receipts and receipts == final.count("Receipts of the orders used in Turn 4 of 5: tactical")
        for text in every:
            assert not re.search(r"Receipts of the orders used[^\n]*:\s*\n\s*\n", text), "an empty receipts list"
    finally:
        app.close()


def test_a_game_whose_gm_set_a_figure_verifies_and_says_what_it_could_not_chain(tmp_path: Path) -> None:
    """A GM's SET changes the open turn's state: the record says when (not what), the dice page
    shows it, and verify resolves every turn again, the changed one from its own state, saying
    that its state follows from the turn before but for the GM's change."""
    from bot.games.archive import write_game_archive
    from bot.verify import verify_archive

    app = new_app(tmp_path)
    try:
        _racecraft(app)
        app.clock.advance(timedelta(hours=25))
        cycle(app)
        gm_says(app, "SET rc1 kelly ep 3", game="rc1")
        for _ in range(8):
            app.clock.advance(timedelta(hours=25))
            cycle(app)
        write_game_archive(app.db, "rc1", tmp_path / "out")
    finally:
        app.close()
    record = json.loads((tmp_path / "out" / "record.json").read_text())
    assert record["finished"] and [t["number"] for t in record["turns"] if t["state_changes"]] == [2]
    verdict = verify_archive(tmp_path / "out")
    assert verdict.ok, verdict.failure
    assert any("but for the GM's change" in line for line in verdict.skipped)


# -- the property: before the close, no real roll --------------------------------------------

STEPS = st.lists(
    st.sampled_from(
        [
            ("gm", "ORDER sc1 robo SPEED 20"),
            ("gm", "ORDER sc1 ada SPEED 0"),
            ("gm", "ORDER sc1 kelly SPEED 20"),
            ("gm", "PLOT sc1 kelly SPEED 0"),
            ("gm", "SET sc1 kelly wear 3"),
            ("gm", "PREVIEW sc1"),
            ("gm", "PREVIEW sc1"),
            ("gm", "PROCESS sc1"),
            ("gm", "ROLLBACK sc1"),
            ("player", "SPEED 20\nPAY WEAR\nPUSH NO"),
            ("tick", ""),
        ]
    ),
    min_size=3,
    max_size=9,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A race at its first race turn, set up once: each example plays on a copy."""
    tmp = tmp_path_factory.mktemp("race")
    _race(tmp).close()
    return tmp


def _archive_text(site: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(site.rglob("*")) if p.suffix in (".html", ".json"))


@pytest.mark.slow
@settings(max_examples=examples(5, 12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
# Previewed, processed, rolled back, ordered again and closed at the deadline: rolls drawn twice.
@example(
    steps=[
        ("gm", "PREVIEW sc1"),
        ("gm", "PROCESS sc1"),
        ("gm", "ROLLBACK sc1"),
        ("player", "SPEED 20\nPAY WEAR\nPUSH NO"),
        ("gm", "PREVIEW sc1"),
        ("tick", ""),
    ]
)
# The GM's orders for a robot and a person, a plot and a figure set, previewed before the deadline.
@example(
    steps=[
        ("gm", "ORDER sc1 robo SPEED 20"),
        ("gm", "PLOT sc1 kelly SPEED 0"),
        ("gm", "SET sc1 kelly wear 3"),
        ("gm", "PREVIEW sc1"),
        ("tick", ""),
        ("gm", "ROLLBACK sc1"),
    ]
)
def test_no_sequence_of_gm_commands_shows_a_real_roll_before_the_orders_close(
    template: Path, steps: list[tuple[str, str]]
) -> None:
    """Property: over any sequence of the GM's commands (ORDER, robot seats included; PLOT, SET,
    PREVIEW, PROCESS, ROLLBACK), a player's orders and deadlines, nothing mailed to anyone and
    nothing in the archive before a turn's orders closed for the last time holds the secret or
    the seed its dice were finally drawn with: the set of real rolls a GM can observe before the
    close is empty. Every preview names the throwaway secret it rolled with, never a real one."""
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder) / "race"
        shutil.copytree(template, tmp)
        base = make_settings(tmp)
        app = new_app(tmp, bot=replace(base.bot, archive_dir=str(tmp / "site")))
        try:
            seen: list[str] = []  # what could be read after each step
            closed: dict[int, int] = {}  # turn number -> the step at which its orders last closed
            real: set[str] = set()
            previews: list[str] = []
            already = {t.number for t in turns(app, "sc1") if t.resolved_at is not None}
            for index, (kind, text) in enumerate(steps):
                before = {t.number: t.resolved_at for t in turns(app, "sc1")}
                sent = len(mails(app))
                if kind == "gm":
                    gm_says(app, text, game="sc1")
                elif kind == "player":
                    player_says(app, "kelly", text, game="sc1")
                else:
                    app.clock.advance(timedelta(hours=25))
                    cycle(app)
                new = [_text(m) for m in mails(app)[sent:]]
                previews += [t for t in new if "GM preview of" in t or "PREVIEW of" in t]
                seen.append("\n".join(new) + "\n" + _archive_text(tmp / "site"))
                for turn in turns(app, "sc1"):
                    if turn.secret is not None:
                        real.add(turn.secret)
                    if turn.resolved_at is not None and before.get(turn.number) is None:
                        closed[turn.number] = index
            for turn in turns(app, "sc1"):
                if turn.secret is None or (turn.number in already and turn.number not in closed):
                    continue  # resolved before the first step, and never reopened
                last_open = closed.get(turn.number, len(steps)) if turn.resolved_at is not None else len(steps)
                for index in range(last_open):
                    assert turn.secret not in seen[index], (turn.number, steps[: index + 1])
                    if turn.resolved_at is not None:
                        assert str(turn.seed) not in seen[index], (turn.number, steps[: index + 1])
            for text in previews:
                assert "These are NOT the turn's dice" in text
                found = THROWAWAY.search(text)
                assert found is not None and found.group(1) not in real
        finally:
            app.close()


def test_the_dice_times_a_letter_shows_are_in_its_readers_zone(gapp: TestApp) -> None:
    """Every time a person reads is in their zone (docs/DESIGN.md: the sign-off says "Times are
    shown in <zone>"): the commitment's "made" time on each sheet, and the earlier draws the
    results of a rolled-back turn list, were UTC whatever the reader's zone (the reveal block
    was worked out once a turn); each letter shows them in its reader's zone."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speed_circuit",
            name="sc1",
            players=[
                PlayerSpec("kelly", ADDRESS["kelly"], "Kelly", "Europe/London"),
                PlayerSpec("steve", ADDRESS["steve"], "Steve", "America/New_York"),
            ],
            gm_address=GM,
            deadline="24h",
            seed=3,
            options={"laps": "1"},
        )
    gapp.service.send()
    kelly, steve = (" ".join(_text(mails(gapp, ADDRESS[s])[0]).split()) for s in ("kelly", "steve"))
    assert "commitment log, made Mon 5 Jan 2026 09:00 GMT" in kelly, kelly
    assert "commitment log, made Mon 5 Jan 2026 04:00 EST" in steve, steve
    gm_says(gapp, "PROCESS sc1", game="sc1")
    gm_says(gapp, "ROLLBACK sc1", game="sc1")
    gm_says(gapp, "PROCESS sc1", game="sc1")
    results = " ".join(
        _text(next(m for m in mails(gapp, ADDRESS["steve"])[::-1] if "Corrected results" in str(m["Subject"]))).split()
    )
    assert "Earlier commitments for it: - made Mon 5 Jan 2026 04:00 EST" in results, results
    assert not re.search(r"made \d{4}-\d\d-\d\d \d\d:\d\d UTC", results + kelly + steve)
