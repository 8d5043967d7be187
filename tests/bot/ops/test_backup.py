"""Backup, restore, export, replay and copy-db on a game played through the real pipeline.

The game is the demo's: five players play Racecraft by mail on SQLite + Maildir, through
inbound parsing, the outbox and the tick, with one NMR default (Anna forgets turn 3).
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.cli import main
from bot.cli.demo import Demo
from bot.db import Database
from bot.host.instance import FileLock
from bot.models import Seat, Turn
from bot.ops.backup import (
    BackupError,
    TurnReplay,
    backup,
    copy_database,
    dumps,
    export_game,
    first_differences,
    pg_dump_command,
    replay_game,
    restore,
)
from bot.settings import load_settings

if TYPE_CHECKING:
    from tests.servers import Postgres


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("played")
    assert Demo(root, io.StringIO(), quiet=True).play() == 0
    return root


@pytest.fixture
def site(played: Path, tmp_path: Path) -> Path:
    """A private copy of the played site (tests may alter it)."""
    root = tmp_path / "site"
    shutil.copytree(played, root)
    return root


def url_of(root: Path) -> str:
    return load_settings(root / "flagman.toml", env={}).database_url


def export_text(url: str, game: str = "demo1") -> str:
    db = Database(url)
    try:
        with db.read() as session:
            return dumps(export_game(session, game))
    finally:
        db.dispose()


def replay(url: str, game: str = "demo1") -> list[TurnReplay]:
    db = Database(url)
    try:
        with db.read() as session:
            return replay_game(session, game)
    finally:
        db.dispose()


def tamper(url: str, number: int, field: str, change: Callable[[Any], None]) -> None:
    db = Database(url)
    try:
        with db.transaction() as session:
            turn = session.scalar(select(Turn).where(Turn.number == number))
            value = json.loads(json.dumps(getattr(turn, field)))
            change(value)
            setattr(turn, field, value)
    finally:
        db.dispose()


# -- export --------------------------------------------------------------------------------


def test_export_holds_every_turn_state_order_event_and_seed(site: Path) -> None:
    """The export has every turn with its seed, states, orders (the NMR default too) and events."""
    data = json.loads(export_text(url_of(site)))
    assert data["game"]["name"] == "demo1" and data["game"]["seed"] == 2026
    turns = data["turns"]
    assert [t["number"] for t in turns] == list(range(1, len(turns) + 1))
    resolved = [t for t in turns if t["resolved_at"]]
    assert resolved and all(t["state_after"] is not None and t["events"] is not None for t in resolved)
    assert all(isinstance(t["seed"], int) for t in turns)
    # Anna forgot turn 3: the default the tick filled in is in the history, marked as such.
    turn3 = next(t for t in turns if t["number"] == 3)
    anna = [o for o in turn3["orders"] if o["seat"] == "anna"]
    assert [o["source"] for o in anna] == ["default"]
    mailed = [o for o in turns[0]["orders"] if o["source"] == "mail"]
    assert mailed and all(o["message_id"] for o in mailed)
    assert data["mail"] and all(m["message_id"] for m in data["mail"])


def test_export_holds_the_games_commitment_log_as_verify_reads_it(site: Path) -> None:
    """The export carries the game's whole commitment log (every entry, its chain head, its fate
    and, once revealed, its secret) and each turn's dice scheme: a published export is enough to
    check the dice's chain, not only the turns' seeds."""
    data = json.loads(export_text(url_of(site)))
    with sqlite3.connect(site / "flagman.sqlite") as conn:
        rows = conn.execute(
            "select seq, number, commitment, head, secret, fate from commitment c join game g on g.id = c.game_id"
            " where g.name = 'demo1' order by seq"
        ).fetchall()
        schemes = [
            row[0]
            for row in conn.execute(
                "select dice_scheme from turn t join game g on g.id = t.game_id where g.name = 'demo1' order by number"
            )
        ]
    exported = [(c["seq"], c["turn"], c["commitment"], c["head"], c["secret"], c["fate"]) for c in data["commitments"]]
    assert rows and exported == [tuple(r) for r in rows]
    assert all(c["secret"] for c in data["commitments"] if c["fate"] == "resolved")
    assert [t["dice_scheme"] for t in data["turns"]] == schemes


def test_export_leaves_out_seat_passwords_and_the_gm_secret(site: Path) -> None:
    """An export may be published: no seat secret, no GM secret in it."""
    text = export_text(url_of(site))
    with sqlite3.connect(site / "flagman.sqlite") as conn:
        secrets = [row[0] for row in conn.execute("select secret from seat")]
        secrets += [row[0] for row in conn.execute("select gm_secret from game")]
    assert secrets and not any(s in text for s in secrets)


def test_export_cli_writes_the_same_json(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman export GAME` prints the export; an unknown game is a usage error (2)."""
    assert main(["--config", str(site / "flagman.toml"), "export", "demo1"]) == 0
    assert capsys.readouterr().out == export_text(url_of(site))
    assert main(["--config", str(site / "flagman.toml"), "export", "nosuch"]) == 2


# -- replay --------------------------------------------------------------------------------


def test_replay_of_a_finished_game_finds_no_difference(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rules are pure functions of (state, orders, seed): every stored turn replays exactly."""
    results = replay(url_of(site))
    assert len(results) >= 4 and all(r.same for r in results)
    assert main(["--config", str(site / "flagman.toml"), "replay", "demo1"]) == 0
    assert "all identical" in capsys.readouterr().out


def test_replay_reports_a_tampered_stored_state(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stored state_after altered by hand is found, with where it differs; exit 1."""
    url = url_of(site)
    before = json.loads(export_text(url))["turns"][1]["state_after"]
    changed: list[str] = []

    def alter(value: dict[str, Any]) -> None:  # change the first integer found, wherever it is
        def walk(node: object) -> None:
            if isinstance(node, dict):
                for key, item in node.items():
                    if isinstance(item, int) and not isinstance(item, bool) and not changed:
                        node[key] = item + 7
                        changed.append(key)
                    else:
                        walk(item)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(value)

    tamper(url, 2, "state_after", alter)
    assert changed, f"no integer to alter in {before}"
    results = replay(url)
    bad = [r for r in results if not r.same]
    assert [r.number for r in bad][:1] == [2]
    assert any(changed[0] in line and "state_after" in line for line in bad[0].differences)
    assert main(["--config", str(site / "flagman.toml"), "replay", "demo1"]) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT" in out and "turn 2" in out


def test_replay_reports_tampered_dice_events(site: Path) -> None:
    """An event text altered after the fact (e.g. a die face) differs from the replay."""
    url = url_of(site)

    def alter(events: list[Any]) -> None:
        events[0]["text"] = events[0]["text"] + " (edited)"

    tamper(url, 1, "events", alter)
    bad = [r for r in replay(url) if not r.same]
    assert [r.number for r in bad] == [1]
    assert any(line.startswith("events[0].text") for line in bad[0].differences)


def test_first_differences_names_the_paths() -> None:
    """The report says where two JSON values differ."""
    assert first_differences({"a": [1, 2], "b": 1}, {"a": [1, 3], "b": 1}, "s") == ["s.a[1]: stored 2, replay 3"]
    assert first_differences({"a": 1}, {"a": 1}) == []
    assert "not stored" in first_differences({}, {"x": 1})[0]


# -- backup and restore --------------------------------------------------------------------


def test_backup_then_restore_gives_an_identical_export(site: Path, tmp_path: Path) -> None:
    """backup -> the database changes -> restore: the export is byte-identical to before."""
    url = url_of(site)
    before = export_text(url)
    copy = backup(url, tmp_path / "backups" / "b1.sqlite")
    assert copy.exists() and not Path(str(copy) + "-wal").exists()
    tamper(url, 1, "state", lambda value: value.update({"edited": True}))
    assert export_text(url) != before
    restore(url, copy, lock=FileLock(site / "flagman.sqlite.lock"))
    assert export_text(url) == before
    assert all(r.same for r in replay(url))


def test_a_seat_that_changed_hands_is_marked_in_the_export_and_kept_by_backup_and_copy(
    site: Path, tmp_path: Path
) -> None:
    """The seats the GM's REPLACE handed to another person (Seat.handed_over: the letters name
    them "anna (Kim McDonald)") are marked in the export, and a backup restored or a copy-db
    keeps the mark."""
    url = url_of(site)
    seats = json.loads(export_text(url))["seats"]
    assert seats and not any(s["handed_over"] for s in seats)
    db = Database(url)
    try:
        with db.transaction() as session:
            anna = session.scalar(select(Seat).where(Seat.name == "anna"))
            assert anna is not None
            anna.handed_over = True
    finally:
        db.dispose()
    marked = export_text(url)
    assert [s["name"] for s in json.loads(marked)["seats"] if s["handed_over"]] == ["anna"]
    copy = backup(url, tmp_path / "backups" / "b1.sqlite")
    target = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    copy_database(url, target)
    assert export_text(target) == marked
    tamper(url, 1, "state", lambda value: value.update({"edited": True}))
    restore(url, copy, lock=FileLock(site / "flagman.sqlite.lock"))
    assert export_text(url) == marked


def test_backup_via_the_cli_and_never_over_an_existing_file(site: Path, tmp_path: Path) -> None:
    """`flagman backup PATH` writes once; a second run to the same path is refused (1)."""
    config = str(site / "flagman.toml")
    target = tmp_path / "b.sqlite"
    assert main(["--config", config, "backup", str(target)]) == 0
    assert main(["--config", config, "backup", str(target)]) == 1
    with sqlite3.connect(target) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_restore_is_refused_while_a_service_holds_the_lock(site: Path, tmp_path: Path) -> None:
    """Restoring under a running service would corrupt its view: refused."""
    url = url_of(site)
    copy = backup(url, tmp_path / "b.sqlite")
    service = FileLock(site / "flagman.sqlite.lock")
    assert service.try_acquire()
    try:
        with pytest.raises(BackupError, match="running"):
            restore(url, copy, lock=FileLock(site / "flagman.sqlite.lock"))
    finally:
        service.release()


def test_restore_refuses_a_file_that_is_not_a_backup(site: Path, tmp_path: Path) -> None:
    """Only a SQLite file with a schema version is accepted."""
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(BackupError):
        restore(url_of(site), junk)


def test_postgres_backup_names_pg_dump_and_the_command(tmp_path: Path) -> None:
    """PostgreSQL is backed up with pg_dump: the exact command is printed, without the password."""
    url = "postgresql+psycopg://flagman:hunter2-secret@db.example:5433/flagman"
    command = pg_dump_command(url, tmp_path / "f.dump")
    assert (
        command
        == f"pg_dump --format=custom --file={tmp_path / 'f.dump'} --host=db.example --port=5433 --username=flagman flagman"
    )
    with pytest.raises(BackupError) as err:
        backup(url, tmp_path / "f.dump")
    assert "pg_dump" in str(err.value) and "hunter2" not in str(err.value)


# -- copy-db -------------------------------------------------------------------------------


def test_copy_db_to_a_new_sqlite_database_keeps_the_whole_history(site: Path, tmp_path: Path) -> None:
    """copy-db into an empty database: every table copied, the export identical, replay clean."""
    url = url_of(site)
    target = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    copied = copy_database(url, target)
    assert copied["turn"] >= 5 and copied["outbox"] > 0
    assert export_text(target) == export_text(url)
    assert all(r.same for r in replay(target))
    with pytest.raises(BackupError, match="not empty"):
        copy_database(url, target)


@pytest.mark.e2e
def test_copy_db_from_sqlite_to_postgresql(site: Path, postgres: Postgres, capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite -> PostgreSQL with `flagman copy-db --to URL`: identical export, and new rows get fresh ids."""
    target = postgres.create_database("copy_target")
    assert main(["--config", str(site / "flagman.toml"), "copy-db", "--to", target]) == 0
    assert "rows" in capsys.readouterr().out
    assert export_text(target) == export_text(url_of(site))
    assert all(r.same for r in replay(target))
    # The sequences were moved past the copied ids: an insert does not collide.
    from sqlalchemy import text

    db = Database(target)
    try:
        with db.transaction() as session:
            new_id = session.execute(
                text(
                    "insert into player (address, name, timezone, created_at) "
                    "values ('new@example.org', 'New', 'UTC', now()) returning id"
                )
            ).scalar()
            top = session.execute(text("select max(id) from player where address <> 'new@example.org'")).scalar()
        assert new_id is not None and top is not None and new_id > top
    finally:
        db.dispose()


def test_replay_accepts_a_gm_change_from_the_audit_log_but_not_an_unaudited_one(tmp_path: Path) -> None:
    """SET (an audited GM change to the open turn) is a note, not a difference; the same kind of
    change made behind the audit log's back is a difference."""
    from bot.app import build_app
    from bot.commands import registry as gm
    from bot.games.turns import PlayerSpec, create_game
    from bot.testing import FakeClock, FakeInbox, FakeMailer
    from tests.helpers import init_site

    config = init_site(tmp_path / "gm-site")
    clock = FakeClock()
    app = build_app(load_settings(config, env={}), clock=clock, inbox=FakeInbox(), mailer=FakeMailer())
    players = [PlayerSpec(n, f"{n}@players.test", n.title()) for n in ("kelly", "seb", "steve", "roger", "anna")]
    try:
        with app.db.transaction() as session:
            create_game(
                app.shell, session, kind="racecraft", name="rc1", players=players, gm_address="gm@players.test", seed=7
            )
        clock.advance(hours=49)
        assert app.service.tick() == [("rc1", 1)]  # everyone NMR-defaulted
        with app.db.transaction() as session:
            result = gm.execute_words(app.shell, session, "SET", "rc1", ["seb", "ep", "3"], actor="gm@players.test")
            assert result.ok, result.text
        clock.advance(hours=49)
        assert ("rc1", 2) in app.service.tick()
    finally:
        app.close()
    url = url_of(tmp_path / "gm-site")
    results = replay(url, "rc1")
    assert all(r.same for r in results), [r.differences for r in results]
    assert any("SET rc1 seb ep 3" in note for note in next(r for r in results if r.number == 2).notes)
    # The same kind of change without an audit entry: tampering.
    tamper(url, 1, "state_after", lambda value: value.update({"edited": True}))
    bad = [r for r in replay(url, "rc1") if not r.same]
    assert [r.number for r in bad][:2] == [1, 2]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, JSON_VALUES)
def test_first_differences_is_empty_exactly_when_the_values_are_equal(a: object, b: object) -> None:
    """Replay's comparison never misses a difference and never invents one (JSON values)."""
    assert (first_differences(a, b) == []) == (a == b)
    assert first_differences(a, a) == []
