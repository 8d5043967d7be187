"""`flagman demo`: a whole Racecraft game by mail on the embedded default, end to end."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, text

from bot.cli.demo import run_demo
from rules import find_game


def test_the_demo_plays_a_whole_game_by_mail_and_prints_every_mail(tmp_path: Path) -> None:
    """`flagman demo` plays a whole Racecraft game by mail and shows every mail as it goes."""
    out = io.StringIO()
    assert run_demo(keep=str(tmp_path / "demo"), out=out) == 0
    printed = out.getvalue()
    assert "The race is over after 5 turns" in printed and "Game over:" not in printed
    # "the demo states its schedule and shows a GM digest, a GM command and where the
    # HTML and the archive are".
    assert "The schedule: a turn every 48 hours (Europe/London)" in printed
    assert "Subject: [GM digest] 1 game" in printed and "Subject: [demo1] GM: EXTEND done" in printed
    assert printed.count("Subject: [demo1] Deadline extended for Turn 2") == 5
    index = tmp_path / "demo" / "archive" / "demo1" / "index.html"
    assert f"The game's public archive (HTML, each turn's report and picture, the dice): {index}" in printed
    assert index.is_file() and f"{tmp_path / 'demo' / 'mail' / 'outbox'}/" in printed
    # Five players, turns 1-3: turn 4's results come in the final result, with the sprint's.
    assert printed.count("Subject: [demo1] Results of Turn") == 5 * 3
    assert printed.count("Final result of Racecraft demo1") >= 5
    assert "Subject: [ERROR] [demo1] Orders not accepted" in printed  # Steve's USE 12
    assert "the deadline of turn 3 passes" in printed
    # The real pipeline left its traces: a SQLite database, Maildirs in and out.
    root = tmp_path / "demo"
    engine = create_engine(f"sqlite:///{root / 'flagman.sqlite'}")
    with engine.connect() as conn:
        assert conn.execute(text("select count(*) from turn where resolved_at is not null")).scalar() == 5
        assert conn.execute(text("select count(*) from outbox where status != 'sent'")).scalar() == 0
        defaults = conn.execute(text("select text from order_submission where source = 'default'")).scalars().all()
        turn3 = conn.execute(text("select state from turn where number = 3")).scalar()
    # Anna forgot turn 3: racecraft.md NMR, "half their remaining EP, rounded down".
    game = find_game("racecraft")
    assert turn3 is not None
    anna_ep = game.figures(game.load_state(json.loads(turn3) if isinstance(turn3, str) else turn3), "anna")["ep"]
    assert isinstance(anna_ep, int)
    assert defaults == [f"USE {anna_ep // 2}"]
    engine.dispose()
    root = tmp_path / "demo"
    assert list((root / "mail" / "inbox" / ".Processed" / "cur").iterdir())
    assert not list((root / "mail" / "inbox" / "new").iterdir())


def test_the_demo_command_runs_from_the_console_script() -> None:
    """README: one command runs the demo on a fresh machine, no server needed."""
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "--quiet"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "The race is over after 5 turns" in result.stdout and "flagman demo --keep DIR" in result.stdout
    # The players' mail is delivered at the demo's simulated time: no warning that the mail
    # server's clock and the bot's disagree, nor any other, on the way.
    assert "disagree" not in result.stdout + result.stderr and "WARNING" not in result.stderr


def test_the_season_demo_plays_three_races_by_mail_and_prints_the_table_after_each(tmp_path: Path) -> None:
    """ "the demo can show a short season (`flagman demo --season`)": three races of
    three players and two robots, the next ones made by the bot, the table after each race as
    the final result mailed it, and the final table."""
    from bot.cli.demo_season import run_season_demo

    out = io.StringIO()
    assert run_season_demo(keep=str(tmp_path / "demo"), quiet=True, out=out) == 0
    printed = out.getvalue()
    for round_ in (1, 2, 3):
        assert f"===== after race {round_} of 3 (demo-cup-r{round_})" in printed
        assert f"Season demo-cup (Racecraft), after {round_} of 3 races; scoring f1, 1 dropped." in printed
    assert "The season is finished" in printed and "Final table:" in printed
    steve = [line for line in printed.splitlines() if " Steve " in line]
    assert steve and all(line.split()[3] in ("0-5", "(0)-5") for line in steve), "the no-show of race 1 lost 5 points"
    # Each driver's best two of three count: the no-show's 0 is dropped only once a third result
    # is in (docs/championships.md, "Dropped results").
    assert "(0)-5" not in steve[0] and "(0)-5" in steve[-1]
    page = tmp_path / "demo" / "archive" / "_seasons" / "demo-cup" / "index.html"
    assert page.is_file() and "<polyline" in page.read_text(encoding="utf-8")
    engine = create_engine(f"sqlite:///{tmp_path / 'demo' / 'flagman.sqlite'}")
    with engine.connect() as conn:
        seats = conn.execute(
            text("select g.name, count(*), sum(s.robot) from seat s join game g on g.id = s.game_id group by g.name")
        ).all()
    engine.dispose()
    assert sorted(seats) == [(f"demo-cup-r{n}", 5, 2) for n in (1, 2, 3)], "the robots keep the field at five"
