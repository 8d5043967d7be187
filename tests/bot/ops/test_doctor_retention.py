"""`flagman doctor` checks the retention policy (docs/operating-for-years.md), one line each:
the settings (a kind kept for ever is a warning), what the database still holds that a daily
prune would have taken, and the same for the inbox's Processed folder. What is found before
`flagman prune` is gone after it."""

from __future__ import annotations

import io
import sqlite3
import time
from pathlib import Path

import pytest

from bot.app import build_app
from bot.cli import main
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.inbox import deliver_to_maildir
from bot.ops.doctor import run_doctor
from bot.settings import load_settings
from bot.testing import FakeMailer, plain_mail
from tests.helpers import damage_header, init_site

ADDRESS = "flagman@keep.test"
PLAYERS = [PlayerSpec(n, f"{n}@players.test", n.title()) for n in ("kelly", "seb", "steve", "roger", "anna")]
DAY_NS = 86400 * 10**9


def doctor(config: Path) -> tuple[int, list[str]]:
    """The doctor's status and its retention lines (each a finding of one line)."""
    out = io.StringIO()
    code = run_doctor(config, env={}, out=out)
    lines = out.getvalue().splitlines()
    found = [line for line in lines if line.split()[1:2] == ["retention"]]
    for line in found:  # one line each: a warning's fix follows on its own line
        assert "\n" not in line
    return code, found


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return init_site(tmp_path / "site", ADDRESS)


def set_retention(config: Path, *lines: str) -> None:
    config.write_text(config.read_text(encoding="utf-8") + "\n[retention]\n" + "".join(f"{x}\n" for x in lines))


def test_a_fresh_site_keeps_what_the_policy_says_and_nothing_older(site: Path) -> None:
    code, lines = doctor(site)
    assert code == 0, lines
    assert lines == [
        "ok       retention [retention] keeps sent mail bodies 90 days, texts of mail read 90 days, "
        "audit lines of no game 365 days, the Processed folder 30 days",
        "ok       retention the database holds nothing older than the policy keeps (the prune runs)",
        "ok       retention the inbox's Processed folder holds no mail older than 30 days",
    ]


def test_a_kind_kept_for_ever_is_one_warning_line(site: Path) -> None:
    """0 keeps a kind for ever (config.example.toml): allowed, but the database grows without end."""
    set_retention(site, "sent_mail_days = 0", "processed_mail_days = 0")
    code, lines = doctor(site)
    assert code == 0
    (policy,) = [line for line in lines if "[retention]" in line]
    assert policy.startswith("warning  retention [retention] sent_mail_days = 0, processed_mail_days = 0 keeps")
    assert (
        "grows without end" in policy and "kept: texts of mail read 90 days, audit lines of no game 365 days" in policy
    )
    assert not any("Processed folder holds" in line for line in lines), "no Processed check when it is kept for ever"


def test_data_older_than_the_policy_is_a_warning_until_a_prune(site: Path) -> None:
    """A game's turn sheets sent 100 days ago and a Processed mail of 40 days (the service was
    stopped, say, so no prune ran): two warnings, each one line, naming what is left; `flagman
    prune` takes it; the doctor then finds nothing older."""
    app = build_app(load_settings(site, env={}), mailer=FakeMailer())
    try:
        with app.db.transaction() as session:
            create_game(app.shell, session, kind="racecraft", name="rc1", players=PLAYERS, gm_address="gm@keep.test")
        app.service.send()
    finally:
        app.close()
    database = site.parent / "flagman.sqlite"
    with sqlite3.connect(database) as conn:
        sent = conn.execute("select count(*) from outbox where status = 'sent'").fetchone()[0]
        conn.execute("update outbox set created_at = datetime(created_at, '-100 days')")
    conn.close()
    processed = site.parent / "mail" / "inbox" / ".Processed"
    deliver_to_maildir(processed, plain_mail("a@p.test", ADDRESS, "x", "HELP"), clock_ns=time.time_ns() - 40 * DAY_NS)
    deliver_to_maildir(processed, plain_mail("b@p.test", ADDRESS, "y", "HELP"), clock_ns=time.time_ns() - 31 * DAY_NS)
    code, lines = doctor(site)
    assert code == 0, lines  # warnings: the service works, its data grows
    warned = [line for line in lines if line.startswith("warning")]
    assert len(warned) == 2, lines
    assert f"the database holds what the policy prunes: {sent} sent mail bodies, 0 texts of mail read" in warned[0]
    assert "no prune has run for days, or it fails" in warned[0]
    # 31 days is within the daily prune's slack of 30 days: only the mail of 40 days is counted.
    assert "the inbox's Processed folder holds 1 mail older than 32 days (processed_mail_days = 30" in warned[1]
    assert main(["--config", str(site), "prune"]) == 0
    code, lines = doctor(site)
    assert not [line for line in lines if line.startswith("warning")], lines


def test_a_database_problem_is_told_once_and_retention_waits_for_it(site: Path) -> None:
    damage_header(site.parent / "flagman.sqlite")
    code, lines = doctor(site)
    assert code == 1
    assert lines == ["warning  retention retention not checked: fix the database problems above first"]
