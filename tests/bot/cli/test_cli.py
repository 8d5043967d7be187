"""The command line contract (mail-interface.md, "The command line") on the embedded default."""

from __future__ import annotations

import subprocess
import sys
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

import bot.app
from bot.app import App
from bot.cli import main
from bot.mail_in.inbox import deliver_to_maildir
from bot.testing import reply_to
from tests.helpers import flagman_command, init_site


def flagman(config: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    """`flagman` as a process of its own, with nothing of this environment but PATH."""
    argv = [sys.executable, "-m", "bot.cli"] + (["--config", str(config)] if config else []) + list(args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})


def newest(maildir: Path) -> EmailMessage:
    files = sorted((maildir / "new").iterdir(), key=lambda p: p.name)
    msg = message_from_bytes(files[-1].read_bytes(), policy=policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def test_init_game_poll_tick_send_on_the_embedded_default(tmp_path: Path) -> None:
    """flagman init DIR as a process of its own, with nothing of this environment but PATH; then
    game new/list/show, poll, tick and send, each once, in this process (`flagman_command`)."""
    initialised = flagman(None, "init", str(tmp_path), "--address", "bot@club.example")
    assert initialised.returncode == 0, initialised.stderr
    config = tmp_path / "flagman.toml"
    assert config.exists() and (tmp_path / "flagman.sqlite").exists()
    assert oct((tmp_path / "site-secret").stat().st_mode)[-3:] == "600"
    players = [f"--player={n}={n.lower()}@club.example" for n in ("Kelly", "Seb", "Steve", "Roger", "Anna")]
    done = flagman_command(
        config,
        "game",
        "new",
        "racecraft",
        "--name",
        "rc1",
        *players,
        "--gm",
        "gm@club.example",
        "--deadline",
        "daily 18:00",
        "--timezone",
        "Europe/London",
        "--option",
        "turns=4",
    )
    assert done.returncode == 0, done.stderr
    assert "game rc1 (racecraft) created" in done.stdout
    listing = flagman_command(config, "game", "list")
    assert "rc1" in listing.stdout and "Turn 1 of 4" in listing.stdout
    sent = flagman_command(config, "send")
    assert "sent 6" in sent.stdout, sent.stdout + sent.stderr
    outbox = tmp_path / "mail" / "outbox"
    sheet = newest(outbox / "seb@club.example")
    deliver_to_maildir(tmp_path / "mail" / "inbox", reply_to(sheet, "USE 4", sender="seb@club.example"))
    polled = flagman_command(config, "poll")
    assert polled.returncode == 0 and "fetched 1" in polled.stdout and "applied 1" in polled.stdout
    assert "nothing due" in flagman_command(config, "tick").stdout
    assert "sent 1" in flagman_command(config, "send").stdout
    assert "Orders received" in str(newest(outbox / "seb@club.example")["Subject"])
    show = flagman_command(config, "game", "show", "rc1")
    assert "seb" in show.stdout and "orders in" in show.stdout and "no orders yet" in show.stdout


def test_bad_usage_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    """Each refusal in this process (`flagman_command`), the last also as a process of its own."""
    assert flagman_command(None, "init", str(tmp_path)).returncode == 0
    config = tmp_path / "flagman.toml"
    done = flagman_command(config, "game", "new", "racecraft", "--name", "x1", "--player", "a=a@x.example")
    assert done.returncode == 2 and "takes 5 to 8 players" in done.stderr
    done = flagman_command(config, "game", "new", "chess", "--name", "x1")
    assert done.returncode == 2 and "unknown game" in done.stderr
    done = flagman_command(
        config,
        "game",
        "new",
        "racecraft",
        "--name",
        "x2",
        "--deadline",
        "sometime",
        *[f"--player=p{i}=p{i}@x.example" for i in range(5)],
    )
    assert done.returncode == 2 and "is not a schedule" in done.stderr
    done = flagman_command(tmp_path / "missing.toml", "poll")
    assert done.returncode == 2 and "no configuration" in done.stderr
    in_its_own = flagman(tmp_path / "missing.toml", "poll")
    assert in_its_own.returncode == 2 and "no configuration" in in_its_own.stderr


def closes_counted(monkeypatch: pytest.MonkeyPatch) -> list[App]:
    """Every App.close() from now on, by App."""
    closed: list[App] = []
    original = App.close

    def close(self: App) -> None:
        closed.append(self)
        original(self)

    monkeypatch.setattr(App, "close", close)
    return closed


def test_every_command_closes_its_app_whichever_way_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The composition root's App is used in a `with` block: a refusal or an error closes it too."""
    config = init_site(tmp_path)
    built: list[App] = []
    original = bot.app.build_app

    def build(*args: Any, **kwargs: Any) -> App:
        built.append(original(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(bot.app, "build_app", build)
    closed = closes_counted(monkeypatch)
    runs = (
        (["game", "show", "nosuch"], 2, "no game called nosuch"),  # returns from inside the block
        (["gm", "audit", "nosuch"], 2, "no game called nosuch"),
        (["game", "new", "racecraft", "--name", "x1", "--player", "nobody"], 2, "NAME=ADDRESS"),  # raises
        (["gm", "extend", "nosuch", "24h"], 2, "nosuch"),
        (["game", "list"], 0, ""),
        (["send"], 0, "sent 0"),
    )
    for argv, code, said in runs:
        assert main(["--config", str(config), *argv]) == code, argv
        out = capsys.readouterr()
        assert said in out.out + out.err
        assert len(built) == len(closed) and closed[-1] is built[-1], argv


def test_gm_help_lists_every_gm_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman gm` makes its VERB subcommands when it is used, not when the parser is built."""
    from bot.commands import GM_COMMANDS

    with pytest.raises(SystemExit) as exited:
        main(["gm", "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    for verb in [spec.verb.lower() for spec in GM_COMMANDS] + ["configure", "audit"]:
        assert verb in shown


def test_flagman_tick_names_a_turn_as_the_players_know_it(tmp_path: Path) -> None:
    """Output and logs name no internal turn number ("resolved turn 6 (Race turn 4)"):
    `flagman tick` says the game and the turn's own label."""
    from bot.app import build_app
    from bot.cli import _labels
    from bot.settings import load_settings

    assert flagman_command(None, "init", str(tmp_path), "--address", "bot@club.example").returncode == 0
    config = tmp_path / "flagman.toml"
    players = [f"--player={n}={n.lower()}@club.example" for n in ("Kelly", "Seb", "Steve", "Roger", "Anna")]
    made = flagman_command(config, "game", "new", "racecraft", "--name", "rc1", *players, "--option", "turns=4")
    assert made.returncode == 0, made.stderr
    with build_app(load_settings(config, env={})) as app:
        assert _labels(app, [("rc1", 1)]) == [("rc1", "Turn 1 of 4: start")]
