"""A newcomer's first hour at the command line: "Subcommand help: `run`, `poll`,
`tick`, `send`, `game list`, `game show` show only a usage line; `--json` for `game list`, `game
show`, `doctor`, `gm audit`; the CLI spells `speed_circuit`, the mail `speed-circuit` (accept
and show both); plurals ("1 players"); the 12-hour minimum notice of a fixed-time deadline is
documented"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.bot.cli.test_cli_friendly import GM, PLAYERS, flagman, made_site, site  # noqa: F401 - the fixtures
from tests.helpers import init_site

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("run",), "SIGHUP reloads"),
        (("poll",), "applied and confirmed"),
        (("tick",), "deadline (plus grace)"),
        (("send",), "temporary failure"),
        (("game", "list"), "its open turn"),
        (("game", "show"), "each seat"),
    ],
)
def test_each_job_and_game_command_says_what_it_does(
    argv: tuple[str, ...], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert words in text, text


def test_game_list_and_show_as_json(site: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    capsys.readouterr()
    assert flagman(site, "game", "list", "--json") == 0
    (game,) = json.loads(capsys.readouterr().out)
    assert game["name"] == "rc1" and game["kind"] == "racecraft" and game["seats"] == 5 and game["open_turn"]
    assert flagman(site, "game", "show", "rc1", "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["gm"] == GM and len(shown["seats"]) == 5 and shown["open_turn"]["deadline"]
    assert {seat["orders"] for seat in shown["seats"]} == {"no orders yet"}


def test_doctor_and_gm_audit_as_json(site: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert flagman(site, "gm", "extend", "rc1", "1h") == 0
    capsys.readouterr()
    code = flagman(site, "doctor", "--json")
    found = json.loads(capsys.readouterr().out)
    assert code == (1 if found["problems"] else 0)
    assert {f["area"] for f in found["findings"]} >= {"config", "database"}
    assert flagman(site, "gm", "audit", "rc1", "--json") == 0
    (line,) = json.loads(capsys.readouterr().out)
    assert line["via"] == "cli" and "EXTEND" in line["command"].upper()


def test_speed_circuit_is_taken_and_shown_in_both_spellings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = init_site(tmp_path / "site")
    for spelled in ("speed-circuit", "speed_circuit"):
        assert flagman(config, "game", "options", spelled) == 0
        assert capsys.readouterr().out.startswith("speed-circuit or speed_circuit (Speed Circuit)")
    assert (
        flagman(config, "game", "new", "speed-circuit", "--name", "sc1", "--player", "a=a@x.test", "--robot", "r") == 0
    )
    said = capsys.readouterr().out
    assert "1 player and 1 robot," in said, said
    assert flagman(config, "game", "new", "speed_circuit", "--name", "sc2", *PLAYERS[:2]) == 0
    assert "2 players," in capsys.readouterr().out
    assert flagman(config, "game", "list") == 0
    listed = capsys.readouterr().out
    assert "2 seats (1 robot)" in listed and "1 robots" not in listed


def test_the_twelve_hour_notice_of_a_fixed_time_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    """bot/schedules.py: a fixed time closes the turn at the next such time at least MIN_NOTICE
    (12 hours) after it opens; the README and `game new --help` say so."""
    from bot.schedules import MIN_NOTICE

    assert MIN_NOTICE.total_seconds() == 12 * 3600
    assert "at least\n12 hours' notice" in (ROOT / "README.md").read_text()
    with pytest.raises(SystemExit):
        main(["game", "new", "--help"])
    assert "12 hours' notice" in " ".join(capsys.readouterr().out.split())
