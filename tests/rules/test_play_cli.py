"""`flagman play racecraft --script -` as a real subprocess (mail-interface.md, the command line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# racecraft.md's worked example, with a fifth runner (zed) at the back: the game needs five.
WORKED_TURNS = [
    {"kelly": "USE 0", "seb": "USE 2", "steve": "USE 2", "roger": "USE 5", "zed": "0"},
    {"roger": "CRUISE", "seb": "USE 3", "steve": "OVERTAKE", "kelly": "USE 2", "zed": "cruise"},
]
WORKED_EXAMPLE = {
    "players": ["kelly", "seb", "steve", "roger", "zed"],
    "options": {"turns": 5},
    "seed": 1,
    "turns": WORKED_TURNS,
}


def flagman_play(script: dict[str, Any] | str, *extra: str) -> subprocess.CompletedProcess[str]:
    text = script if isinstance(script, str) else json.dumps(script)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "play", "racecraft", "--script", "-", *extra],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_play_prints_the_worked_example_as_json() -> None:
    """`flagman play` resolves the script offline and prints positions and EP per turn."""
    done = flagman_play(WORKED_EXAMPLE)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    one, two = output["turns"]
    assert one["positions"] == [["roger"], ["seb", "steve"], ["kelly", "zed"]]
    assert {p: f["ep"] for p, f in one["players"].items()} == {"kelly": 10, "seb": 8, "steve": 8, "roger": 5, "zed": 10}
    assert two["positions"] == [["seb", "steve"], ["roger"], ["kelly", "zed"]]
    assert {p: f["ep"] for p, f in two["players"].items()} == {"kelly": 8, "seb": 4, "steve": 6, "roger": 7, "zed": 10}
    assert output["finished"] is False and output["result"] is None


def test_play_runs_the_sprint_and_prints_the_result() -> None:
    """With every turn but the sprint scripted, the race finishes and `result` is set."""
    done = flagman_play({**WORKED_EXAMPLE, "options": {"turns": 3}}, "--pretty")
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["finished"] is True
    assert output["turns"][-1]["label"] == "Turn 3 of 3: final sprint"
    assert output["result"] == output["turns"][-1]["positions"]


def test_an_illegal_order_exits_2_naming_turn_player_and_reason() -> None:
    """ "An order that does not parse or is illegal exits with status 2 and a message naming
    the turn, the player and the reason."""
    script = {**WORKED_EXAMPLE, "turns": [WORKED_TURNS[0], {"seb": "USE 9"}]}
    done = flagman_play(script)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "turn 2, player seb: USE 9: you have only 8 EP" in done.stderr


def test_an_order_that_does_not_parse_exits_2() -> None:
    """An unparseable order: status 2, the turn, the player and the line."""
    done = flagman_play({**WORKED_EXAMPLE, "turns": [{"kelly": "sprint like mad"}]})
    assert done.returncode == 2
    assert "turn 1, player kelly: sprint like mad: not a Racecraft order" in done.stderr


def test_a_script_that_is_not_json_exits_2() -> None:
    """A script that cannot be read: status 2 and a message."""
    done = flagman_play("{not json")
    assert done.returncode == 2
    assert "cannot read the script" in done.stderr


# What `flagman play` must never load: it resolves a script offline, with `rules` alone.
THE_SHELLS_STORAGE = ("sqlalchemy", "alembic", "bot.db", "bot.models", "bot.app", "bot.service", "bot.games")


def test_play_imports_nothing_of_the_database() -> None:
    """`python -X importtime -m bot.cli play` lists every module it imports: no SQLAlchemy,
    no bot.db, bot.models or bot.app (the CLI imports the shell per command, when it runs)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot.cli", "play", "racecraft", "--script", "-"],
        input=json.dumps(WORKED_EXAMPLE),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # "import time: self [us] | cumulative | imported package", one line per module imported.
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "rules.script" in imported and "bot.cli" in imported  # the measurement itself works
    loaded = sorted(m for m in imported if m.startswith(THE_SHELLS_STORAGE))
    assert loaded == []


def test_play_through_main_leaves_the_database_modules_unloaded() -> None:
    """The same in a fresh interpreter through `bot.cli.main`, read back from sys.modules."""
    probe = (
        "import io, json, sys\n"
        "from bot.cli import main\n"
        f"sys.stdin = io.StringIO({json.dumps(json.dumps(WORKED_EXAMPLE))})\n"
        "sys.stdout = io.StringIO()\n"
        "code = main(['play', 'racecraft', '--script', '-'])\n"
        "sys.stdout = sys.__stdout__\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout)
    assert code == 0
    assert [m for m in modules if m.startswith(THE_SHELLS_STORAGE)] == []
