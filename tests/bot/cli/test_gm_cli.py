"""The GM's commands on the command line (mail-interface.md: "also as CLI subcommands"):
`flagman gm VERB GAME ARGS...`, `flagman gm configure`, `flagman gm audit`, `flagman digest`,
on the embedded default made by `flagman init`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.cli import main
from bot.db import Database
from bot.models import GameStatus, GmAudit, Turn
from bot.settings import load_settings
from bot.store import find_game_row
from tests.helpers import init_site


@pytest.fixture(scope="module")
def made_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`flagman init` and a Racecraft game of five made once for the module (`site` copies it)."""
    config = init_site(tmp_path_factory.mktemp("made") / "site", "flagman@example.org")
    args = [
        "--config",
        str(config),
        "game",
        "new",
        "racecraft",
        "--name",
        "rc1",
        "--gm",
        "gm@example.org",
        "--deadline",
        "48h",
        "--timezone",
        "Europe/London",
    ]
    for name in ("kelly", "seb", "steve", "roger", "anna"):
        args += ["--player", f"{name}={name}@example.org"]
    assert main(args) == 0
    return config


@pytest.fixture
def site(made_site: Path, tmp_path: Path) -> Path:
    """A site of its own for the test: a copy of `made_site` (its configuration names its files
    relative to itself), as `flagman init` and `flagman game new` left it."""
    shutil.copytree(made_site.parent, tmp_path / "site")
    return tmp_path / "site" / made_site.name


def flagman(config: Path, *args: str) -> int:
    return main(["--config", str(config), *args])


def db(config: Path) -> Database:
    return Database(load_settings(config, env={}).database_url)


def outbox_files(config: Path, address: str) -> list[str]:
    folder = load_settings(config, env={}).resolve_path("mail/outbox")
    return [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and address in str(p)]


def test_a_gm_verb_by_cli_acts_confirms_by_mail_and_is_audited_via_cli(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = db(site)
    with database.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        before = session.scalar(select(Turn.deadline).where(Turn.game_id == game.id))
    assert flagman(site, "gm", "extend", "rc1", "24h", "--as", "operator") == 0
    assert "EXTEND rc1: done" in capsys.readouterr().out
    with database.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        after = session.scalar(select(Turn.deadline).where(Turn.game_id == game.id))
        row = session.scalars(select(GmAudit)).all()[-1]
    assert before is not None and after is not None and (after - before).total_seconds() == 24 * 3600
    assert (row.via, row.actor, row.command) == ("cli", "operator", "EXTEND rc1 24h")
    assert outbox_files(site, "gm@example.org"), "the GM gets the confirmation by mail"
    database.dispose()


def test_cli_refusals_exit_2_with_the_reason(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "set", "rc1", "seb", "ep") == 2
    assert "SET <game> <seat> <figure> <value>" in capsys.readouterr().err
    assert flagman(site, "gm", "set", "rc1", "seb", "ep", "42") == 2
    assert "0 to 10" in capsys.readouterr().err
    assert flagman(site, "gm", "pause", "nosuch") == 2
    assert "no game called nosuch" in capsys.readouterr().err


def deadline_and_state(config: Path) -> tuple[object, object]:
    database = db(config)
    with database.read() as session:
        turn = session.scalars(select(Turn).where(Turn.resolved_at.is_(None))).one()
        found = (turn.deadline, dict(turn.state))
    database.dispose()
    return found


def test_a_huge_number_by_the_real_command_exits_2_with_one_line_and_no_traceback(site: Path) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    `flagman gm extend rc1 999999999999d` as a process: status 2, one line on stderr."""
    before = deadline_and_state(site)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--config", str(site), "gm", "extend", "rc1", "999999999999d", "--no-send"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.splitlines() == [
        "EXTEND rc1: refused: '999999999999d' is too long: a duration is at most 365 days"
    ]
    assert deadline_and_state(site) == before


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("extend", "rc1", "999999999999d"), "at most 365 days"),
        (("extend", "rc1", "9" * 5000 + "h"), "too long"),
        (("extend", "rc1", "\u0661\u0662h"), "not a duration"),
        (("deadline", "rc1", "+99999999999999d"), "at most 365 days"),
        (("deadline", "rc1", "9999-12-31", "23:59"), "at most 365 days"),
        (("deadline", "rc1", "2026-02-30"), "not a date"),
        (("set", "rc1", "seb", "ep", "9" * 5000), "from 0 to 10"),
        (("set", "rc1", "seb", "ep", "\u00b2"), "from 0 to 10"),
        (("set", "rc1", "seb", "fuel", "3"), "unknown figure"),
        (("set", "rc1", "nobody", "ep", "3"), "no seat 'nobody'"),
        (("set", "nosuch", "seb", "ep", "3"), "no game called nosuch"),
        (("order", "rc1", "seb", "USE", "9" * 5000), "not valid orders for seb"),
        (("extend", "rc1"), "EXTEND <game> <duration>"),
        (("extend", "rc1", "24h", "--bogus"), "unrecognized arguments"),
        (("extend",), "required: game"),
        (("nosuch", "rc1"), "invalid choice"),
        (("configure", "rc1", "--grace", "99999999999"), "at most 365 days"),
        (("configure", "rc1", "--grace", "-5"), "not a duration"),
        (("configure", "rc1", "--nmr-limit", "9" * 5000), "from 1 to 999"),
        (("configure", "rc1", "--nmr-limit", "\u0663"), "from 1 to 999"),
        (("configure", "rc1", "--deadline", "999999999999d"), "at most 365 days"),
        (("configure", "rc1", "--reminders", "99999999999999h"), "at most 365 days"),
        (("configure", "nosuch", "--grace", "5"), "no game called nosuch"),
    ],
)
def test_bad_gm_arguments_exit_2_with_one_clear_line(
    site: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    """GM arguments validated with clear refusals (no quarantine, no traceback).
    Refused commands, DeadlineError, FigureError, an unknown game or seat, bad arguments: one line
    on stderr, status 2, nothing changed."""
    before = deadline_and_state(site)
    try:
        code = flagman(site, "gm", *args)
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and expected in err, err
    assert "Traceback" not in err and len(err) <= 600
    if args[0] != "order":  # ORDER's reason quotes the order line as the rules read it (bot/commands/gm.py)
        assert "9" * 41 not in err
    assert deadline_and_state(site) == before


def test_configure_takes_grace_as_minutes_or_a_duration(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "configure", "rc1", "--grace", "2h", "--nmr-limit", "off") == 0
    assert "grace 120 min" in capsys.readouterr().out
    assert flagman(site, "gm", "configure", "rc1", "--grace", "0") == 0
    assert "grace 0 min" in capsys.readouterr().out


def test_preview_by_cli_prints_the_preview(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "preview", "rc1") == 0
    out = capsys.readouterr().out
    assert "PREVIEW of Racecraft rc1" in out and "nothing was stored" in out


def test_order_by_cli_takes_the_rest_of_the_line(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "order", "rc1", "seb", "USE", "3") == 0
    assert "> USE 3" in capsys.readouterr().out


def test_configure_sets_grace_early_resolution_reminders_and_nmr_limit(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        flagman(
            site,
            "gm",
            "configure",
            "rc1",
            "--grace",
            "30",
            "--early-resolution",
            "off",
            "--reminders",
            "2h,1d",
            "--nmr-limit",
            "3",
            "--nmr-action",
            "drop",
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "grace 30 min" in out and "early resolution off" in out and "reminders 1d,2h" in out
    database = db(site)
    with database.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        assert (game.grace_minutes, game.early_resolution, game.reminder_spec, game.nmr_limit, game.nmr_action) == (
            30,
            False,
            "1d,2h",
            3,
            "drop",
        )
    database.dispose()
    assert flagman(site, "gm", "configure", "rc1", "--reminders", "soon") == 2


def test_audit_lists_the_commands(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flagman(site, "gm", "pause", "rc1")
    flagman(site, "gm", "resume", "rc1")
    capsys.readouterr()
    assert flagman(site, "gm", "audit", "rc1") == 0
    out = capsys.readouterr().out
    assert "PAUSE rc1" in out and "RESUME rc1" in out and "cli" in out


def test_start_by_cli_starts_a_signup_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = init_site(tmp_path / "s2", "flagman@example.org")
    args = ["game", "new", "racecraft", "--name", "rc2", "--gm", "gm@example.org", "--signup"]
    for name in ("a", "b", "c", "d", "e"):
        args += ["--player", f"{name}={name}@example.org"]
    assert flagman(config, *args) == 0
    assert flagman(config, "gm", "start", "rc2") == 0
    database = db(config)
    with database.read() as session:
        game = find_game_row(session, "rc2")
        assert game is not None and game.status == GameStatus.ACTIVE
    database.dispose()


def test_digest_now_sends_every_digest(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "digest", "--now") == 0
    assert "digests queued: 1" in capsys.readouterr().out
    assert any("GM digest" in text for text in outbox_files(site, "gm@example.org"))
    assert flagman(site, "digest") == 0  # not due again today
    assert "digests queued: 0" in capsys.readouterr().out


def test_game_new_takes_early_resolution_and_press_and_game_show_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Early resolution is the GM's choice per game, made at `game new`
    (default: the game's own) and changed by `gm configure`; so is press (none, signed,
    anonymous); `game show` shows both, and each player's zone and vacation."""
    config = init_site(tmp_path / "s3", "flagman@example.org")
    players = [arg for n in ("a", "b", "c", "d", "e") for arg in ("--player", f"{n}={n}@example.org,Europe/Paris")]
    assert flagman(config, "game", "new", "racecraft", "--name", "rc1", "--gm", "gm@example.org", *players) == 0
    capsys.readouterr()
    assert flagman(config, "game", "show", "rc1") == 0
    assert "early resolution on; press signed; observers 0" in capsys.readouterr().out  # the defaults
    assert (
        flagman(
            config,
            "game",
            "new",
            "racecraft",
            "--name",
            "rc2",
            "--gm",
            "gm@example.org",
            *players,
            "--early-resolution",
            "off",
            "--press",
            "anonymous",
        )
        == 0
    )
    capsys.readouterr()
    database = db(config)
    with database.transaction() as session:
        game = find_game_row(session, "rc2")
        assert game is not None and (game.early_resolution, game.press) == (False, "anonymous")
        from datetime import date

        game.seats[0].player.vacation_from, game.seats[0].player.vacation_to = date(2026, 7, 1), date(2026, 7, 14)
    database.dispose()
    assert flagman(config, "game", "show", "rc2") == 0
    show = capsys.readouterr().out
    assert "early resolution off; press anonymous; observers 0" in show
    assert "zone Europe/Paris  vacation 2026-07-01 to 2026-07-14" in show
    assert flagman(config, "gm", "configure", "rc2", "--press", "none", "--early-resolution", "on") == 0
    assert "early resolution on" in capsys.readouterr().out
    assert flagman(config, "game", "show", "rc2") == 0
    assert "early resolution on; press none" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:  # argparse: one line, status 2
        flagman(config, "gm", "configure", "rc2", "--press", "loud")
    assert exited.value.code == 2 and "invalid choice: 'loud'" in capsys.readouterr().err


def test_a_cli_order_that_completes_the_turn_resolves_it_at_once_as_by_mail(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mail-interface.md: the GM's commands are "also as CLI subcommands", the same commands.
    By mail, the ORDER that completes a turn resolving early resolves it in that mail's
    transaction; `flagman gm order` left it to the next tick."""
    for name in ("kelly", "seb", "steve", "roger"):
        assert flagman(site, "gm", "order", "rc1", name, "USE", "3", "--as", "operator") == 0
    database = db(site)
    with database.read() as session:
        assert session.scalars(select(Turn).where(Turn.resolved_at.is_not(None))).all() == []
    assert flagman(site, "gm", "order", "rc1", "anna", "USE", "2", "--as", "operator") == 0
    with database.read() as session:
        resolved = session.scalars(select(Turn).where(Turn.resolved_at.is_not(None))).all()
        assert [t.number for t in resolved] == [1]
        assert session.scalars(select(Turn).where(Turn.resolved_at.is_(None))).one().number == 2
    assert any("Results of Turn 1" in text for text in outbox_files(site, "kelly@example.org"))
    database.dispose()


def test_the_entry_gate_is_set_by_game_new_and_configure_and_removed_with_off(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/reliability.md: `flagman game new ... --min-reliability 0.8`, `flagman gm configure
    GAME --min-reliability RATIO|off`."""
    assert flagman(site, "game", "new", "racecraft", "--name", "rc2", "--signup", "--min-reliability", "80%") == 0
    assert flagman(site, "gm", "configure", "rc1", "--min-reliability", "0.9") == 0
    assert "entry gate 0.9" in capsys.readouterr().out

    def gates() -> tuple[str | None, str | None]:
        database = db(site)
        with database.read() as session:
            first, second = (find_game_row(session, n) for n in ("rc1", "rc2"))
            found = (getattr(first, "min_reliability", "?"), getattr(second, "min_reliability", "?"))
        database.dispose()
        return found

    assert gates() == ("0.9", "80%")
    assert flagman(site, "gm", "configure", "rc1", "--min-reliability", "off") == 0
    assert gates() == (None, "80%")
