"""The GM's commands on the command line (mail-interface.md: "also as CLI subcommands"):
`flagman gm VERB GAME ARGS...`, `flagman gm configure`, `flagman gm audit`, `flagman digest`,
on the embedded default made by `flagman init`."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from bot.cli import init_dir, main
from bot.db import Database
from bot.games import find_game_row
from bot.models import GameStatus, GmAudit, Turn
from bot.settings import load_settings


@pytest.fixture
def site(tmp_path: Path) -> Path:
    config = init_dir(tmp_path / "site", "flagman@example.org")
    args = ["--config", str(config), "game", "new", "racecraft", "--name", "rc1", "--gm", "gm@example.org",
            "--deadline", "48h", "--timezone", "Europe/London"]
    for name in ("kelly", "seb", "steve", "roger", "anna"):
        args += ["--player", f"{name}={name}@example.org"]
    assert main(args) == 0
    return config


def flagman(config: Path, *args: str) -> int:
    return main(["--config", str(config), *args])


def db(config: Path) -> Database:
    return Database(load_settings(config, env={}).database_url)


def outbox_files(config: Path, address: str) -> list[str]:
    folder = load_settings(config, env={}).resolve_path("mail/outbox")
    return [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and address in str(p)]


def test_a_gm_verb_by_cli_acts_confirms_by_mail_and_is_audited_via_cli(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
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


def test_preview_by_cli_prints_the_preview(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "preview", "rc1") == 0
    out = capsys.readouterr().out
    assert "PREVIEW of Racecraft rc1" in out and "nothing was stored" in out


def test_order_by_cli_takes_the_rest_of_the_line(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "order", "rc1", "seb", "USE", "3") == 0
    assert "> USE 3" in capsys.readouterr().out


def test_configure_sets_grace_early_resolution_reminders_and_nmr_limit(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "configure", "rc1", "--grace", "30", "--early-resolution", "off",
                   "--reminders", "2h,1d", "--nmr-limit", "3", "--nmr-action", "drop") == 0
    out = capsys.readouterr().out
    assert "grace 30 min" in out and "early resolution off" in out and "reminders 1d,2h" in out
    database = db(site)
    with database.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        assert (game.grace_minutes, game.early_resolution, game.reminder_spec, game.nmr_limit, game.nmr_action) == (
            30, False, "1d,2h", 3, "drop")
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
    config = init_dir(tmp_path / "s2", "flagman@example.org")
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
