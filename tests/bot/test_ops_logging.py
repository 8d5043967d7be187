"""Logs: one line per decision (Message-ID, game, seat, outcome) and never a secret, even with --verbose."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import build_app
from bot.cli import init_dir, main
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.inbox import deliver_to_maildir
from bot.models import Seat
from bot.settings import load_settings
from bot.testing import plain_mail

SITE_SECRET = "site-secret-Zq8vLx2mW9pR4tYk"
IMAP_PASSWORD = "imap-pass-Hh71Kk03Jj55"
SMTP_PASSWORD = "smtp-pass-Ww44Nn88Bb22"
DB_PASSWORD = "db-pass-Qq19Ee37Rr56"
PLAYERS = [PlayerSpec(n, f"{n}@players.test", n.title()) for n in ("kelly", "seb", "steve", "roger", "anna")]


@pytest.mark.parametrize("verbose", [
    pytest.param(False, id="quiet"),
    pytest.param(True, id="verbose"),
])
def test_a_poll_with_passwords_in_mail_logs_decisions_and_no_secret(
    verbose: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A poll (quiet and --verbose) of mails carrying seat passwords (right and wrong): every decision is logged
    with Message-ID, game, seat and outcome; the site secret, the seat and GM passwords and the
    server passwords appear nowhere in the output."""
    config = init_dir(tmp_path / "site", "flagman@log.test")
    (config.parent / "site-secret").write_text(SITE_SECRET + "\n")
    for name, value in (("FLAGMAN_IMAP_PASSWORD", IMAP_PASSWORD), ("FLAGMAN_SMTP_PASSWORD", SMTP_PASSWORD),
                        ("FLAGMAN_DB_PASSWORD", DB_PASSWORD)):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLAGMAN_SECRET", raising=False)
    settings = load_settings(config)
    app = build_app(settings)
    with app.db.transaction() as session:
        create_game(app.shell, session, kind="racecraft", name="rc1", players=PLAYERS, gm_address="gm@log.test")
    with app.db.read() as session:
        seat_secrets = {s.name: s.secret for s in session.scalars(select(Seat))}
    app.close()
    inbox = settings.resolve_path(settings.inbox.path)
    deliver_to_maildir(inbox, plain_mail("kelly@players.test", "flagman@log.test", "rc1 orders",
                                         f"PASSWORD {seat_secrets['kelly']}\nUSE 1", message_id="<right@players.test>"))
    deliver_to_maildir(inbox, plain_mail("seb@players.test", "flagman@log.test", "rc1 orders",
                                         f"PASSWORD {seat_secrets['kelly']}x\nUSE 2", message_id="<wrong@players.test>"))

    caplog.set_level(logging.DEBUG)
    flags = ["--verbose"] if verbose else []
    assert main([*flags, "--config", str(config), "poll"]) == 0
    assert main([*flags, "--config", str(config), "send"]) == 0
    assert main(["--config", str(config), "doctor"]) == 0
    output = caplog.text + "\n".join(capsys.readouterr())

    decisions = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mail ")]
    assert any("right@players.test from kelly@players.test: applied" in d and "game=rc1" in d and "seat=kelly" in d for d in decisions), decisions
    assert any("wrong@players.test from seb@players.test: refused game=rc1" in d for d in decisions), decisions
    from bot.db import Database

    db = Database(settings.database_url)
    with db.read() as session:
        from bot.models import Game

        gm_secret = session.scalars(select(Game.gm_secret)).one()
    db.dispose()
    leaked = [name for name, secret in [("site secret", SITE_SECRET), ("IMAP password", IMAP_PASSWORD),
                                        ("SMTP password", SMTP_PASSWORD), ("DB password", DB_PASSWORD),
                                        ("GM password", gm_secret)]
              + [(f"seat password of {n}", s) for n, s in seat_secrets.items()]
              if secret in output]
    assert not leaked, f"secrets in the logs: {leaked}"
