"""Logs: one line per decision (Message-ID, game, seat, outcome) and never a secret, even with --verbose."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import build_app
from bot.cli import main
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.inbox import deliver_to_maildir
from bot.models import Seat
from bot.settings import load_settings
from bot.testing import plain_mail
from tests.helpers import flagman_command, init_site

SITE_SECRET = "site-secret-Zq8vLx2mW9pR4tYk"
IMAP_PASSWORD = "imap-pass-Hh71Kk03Jj55"
SMTP_PASSWORD = "smtp-pass-Ww44Nn88Bb22"
DB_PASSWORD = "db-pass-Qq19Ee37Rr56"
PLAYERS = [PlayerSpec(n, f"{n}@players.test", n.title()) for n in ("kelly", "seb", "steve", "roger", "anna")]


@pytest.mark.parametrize(
    "verbose",
    [
        pytest.param(False, id="quiet"),
        pytest.param(True, id="verbose"),
    ],
)
def test_a_poll_with_passwords_in_mail_logs_decisions_and_no_secret(
    verbose: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A poll (quiet and --verbose) of mails carrying seat passwords (right and wrong): every decision is logged
    with Message-ID, game, seat and outcome; the site secret, the seat and GM passwords and the
    server passwords appear nowhere in the output."""
    config = init_site(tmp_path / "site", "flagman@log.test")
    (config.parent / "site-secret").write_text(SITE_SECRET + "\n")
    for name, value in (
        ("FLAGMAN_IMAP_PASSWORD", IMAP_PASSWORD),
        ("FLAGMAN_SMTP_PASSWORD", SMTP_PASSWORD),
        ("FLAGMAN_DB_PASSWORD", DB_PASSWORD),
    ):
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
    deliver_to_maildir(
        inbox,
        plain_mail(
            "kelly@players.test",
            "flagman@log.test",
            "rc1 orders",
            f"PASSWORD {seat_secrets['kelly']}\nUSE 1",
            message_id="<right@players.test>",
        ),
    )
    deliver_to_maildir(
        inbox,
        plain_mail(
            "seb@players.test",
            "flagman@log.test",
            "rc1 orders",
            f"PASSWORD {seat_secrets['kelly']}x\nUSE 2",
            message_id="<wrong@players.test>",
        ),
    )

    caplog.set_level(logging.DEBUG)
    flags = ["--verbose"] if verbose else []
    assert main([*flags, "--config", str(config), "poll"]) == 0
    assert main([*flags, "--config", str(config), "send"]) == 0
    assert main(["--config", str(config), "doctor"]) == 0
    output = caplog.text + "\n".join(capsys.readouterr())

    decisions = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mail ")]
    assert any(
        "right@players.test from kelly@players.test: applied" in d and "game=rc1" in d and "seat=kelly" in d
        for d in decisions
    ), decisions
    assert any("wrong@players.test from seb@players.test: refused game=rc1" in d for d in decisions), decisions
    from bot.db import Database

    db = Database(settings.database_url)
    with db.read() as session:
        from bot.models import Game

        gm_secret = session.scalars(select(Game.gm_secret)).one()
    db.dispose()
    leaked = [
        name
        for name, secret in [
            ("site secret", SITE_SECRET),
            ("IMAP password", IMAP_PASSWORD),
            ("SMTP password", SMTP_PASSWORD),
            ("DB password", DB_PASSWORD),
            ("GM password", gm_secret),
        ]
        + [(f"seat password of {n}", s) for n, s in seat_secrets.items()]
        if secret in output
    ]
    assert not leaked, f"secrets in the logs: {leaked}"


# -- the journal and JSON lines -----------------------------------------------------------------


def run_under_journal(config: Path, *args: str, journal: bool = True) -> tuple[int, str, str]:
    """`flagman ARGS` (in this process, `tests.helpers.flagman_command`) with stdout and stderr on
    files of their own, and $JOURNAL_STREAM naming stdout's file (as systemd names the journal's
    stream, one file for both: it connects stdout and stderr to the same stream), or another file
    when not `journal`; what each file holds."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        out_path, err_path = Path(where) / "stdout", Path(where) / "stderr"
        with out_path.open("w+", encoding="utf-8") as out, err_path.open("w+", encoding="utf-8") as err:
            named = os.fstat(out.fileno()) if journal else os.stat(os.devnull)
            stream = f"{named.st_dev}:{named.st_ino}"
            done = flagman_command(
                config, *args, env={"JOURNAL_STREAM": stream}, streams=(out, out if journal else err)
            )
        return done.returncode, out_path.read_text(encoding="utf-8"), err_path.read_text(encoding="utf-8")


@pytest.fixture
def noisy_site(tmp_path: Path) -> Path:
    """A site whose next poll logs at info (a mail answered) and at warning (a mail over the size limit)."""
    config = init_site(tmp_path / "site", "flagman@log.test")
    config.write_text(config.read_text() + "\n[limits]\nmax_mail_bytes = 2000\n")
    inbox = tmp_path / "site" / "mail" / "inbox"
    deliver_to_maildir(
        inbox, plain_mail("kim@players.test", "flagman@log.test", "help", "HELP", message_id="<small@players.test>")
    )
    deliver_to_maildir(
        inbox, plain_mail("kim@players.test", "flagman@log.test", "big", "x" * 5000, message_id="<big@players.test>")
    )
    return config


def test_under_the_journal_every_line_starts_with_its_priority(noisy_site: Path) -> None:
    """stdout is the journal ($JOURNAL_STREAM is its device:inode): each log line starts with its
    syslog priority, <6> info and <4> warning, so `journalctl -p warning` finds the warning; the
    command's own result line too is on stdout, unprefixed (the journal files it at info)."""
    code, out, _ = run_under_journal(noisy_site, "poll")
    assert code == 0, out
    logged = [line for line in out.splitlines() if not line.startswith("fetched ")]
    assert logged and all(line[:3] in ("<6>", "<4>", "<3>") for line in logged), out
    assert any(line.startswith("<4>WARNING flagman.inbound: mail big@players.test") for line in logged), out
    assert any(line.startswith("<6>INFO flagman.inbound: mail small@players.test") for line in logged), out


def test_a_failure_line_on_stderr_under_the_journal_is_an_error(tmp_path: Path) -> None:
    """`flagman migrate` (the unit's pre-start step) on a damaged database: its line on stderr,
    which the unit also sends to the journal, starts with <3>: `journalctl -p err` shows it."""
    from tests.helpers import damage_header

    config = init_site(tmp_path / "site")
    damage_header(tmp_path / "site" / "flagman.sqlite")
    code, out, err = run_under_journal(config, "migrate")
    assert code == 4
    lines = (out + err).strip().splitlines()
    assert lines and all(line.startswith("<3>") for line in lines), lines
    assert lines[0].startswith("<3>flagman migrate: the database sqlite:")


def test_without_the_journal_lines_have_no_prefix(noisy_site: Path) -> None:
    """$JOURNAL_STREAM naming another file (inherited, say, by a command whose stdout is a pipe):
    no prefix."""
    code, out, _ = run_under_journal(noisy_site, "poll", journal=False)
    assert code == 0
    assert "<4>" not in out and "<6>" not in out
    assert "WARNING flagman.inbound: mail big@players.test" in out


def test_json_lines_are_one_object_each_with_time_level_logger_message(noisy_site: Path) -> None:
    """[log] format = "json": one object a line (time in UTC, level, logger, message), prefixed
    by its priority under the journal; a log shipper reads each line as JSON."""
    import json

    noisy_site.write_text(noisy_site.read_text() + '\n[log]\nformat = "json"\n')
    code, out, _ = run_under_journal(noisy_site, "poll")
    assert code == 0
    records = []
    for line in out.splitlines():
        if line.startswith("fetched "):
            continue
        assert line[:3] in ("<6>", "<4>"), line
        records.append((line[1], json.loads(line[3:])))
    assert records
    for prio, record in records:
        assert set(record) >= {"time", "level", "logger", "message"}
        assert record["time"].endswith("Z")
        assert prio == {"info": "6", "warning": "4"}[record["level"]]
    assert any(r["level"] == "warning" and "big@players.test" in r["message"] for _, r in records)


def test_a_json_record_carries_its_fields_and_its_traceback() -> None:
    """Fields given with `extra=` are keys of their own; a traceback is one string."""
    import io
    import json

    from bot.cli import logs

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter(journal=False))
    logger = logging.getLogger("flagman.test.json")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("mail %s refused", "<x@y>", extra={"game": "rc1", "seat": "kelly"})
        try:
            raise ValueError("bad\nnews")
        except ValueError:
            logger.exception("it failed")
    finally:
        logger.removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["message"] == "mail <x@y> refused" and first["game"] == "rc1" and first["seat"] == "kelly"
    assert second["level"] == "error" and "ValueError: bad\nnews" in second["exception"]


def test_each_python_level_has_its_syslog_priority() -> None:
    """sd-daemon(3): critical <2>, error <3>, warning <4>, info <6>, debug <7>; a prefix on every
    line of a record, a traceback's too."""
    from bot.cli import logs

    assert [logs.priority(level) for level in (50, 40, 30, 20, 10)] == [2, 3, 4, 6, 7]
    formatter = logs.TextFormatter(journal=True)
    record = logging.LogRecord("flagman.x", logging.ERROR, __file__, 1, "two\nlines", None, None)
    assert formatter.format(record) == "<3>ERROR flagman.x: two\n<3>lines"


# -- no reprs and no byte dumps ----------------------------------------------------------------


def test_log_lines_say_outcomes_and_errors_in_words_not_reprs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The poll's summary line names outcomes as words (not `<InboundStatus.APPLIED: ...>`), and a
    relay refusing the login is said as its code and text (not `b'...'` or an exception's repr)."""
    from bot.daemon.jobs import Runner
    from bot.mail_out.mailer import OutgoingMail
    from bot.mail_out.smtp import SmtpMailer
    from bot.testing import FakeClock, FakeInbox, FakeMailer
    from tests.servers import SmtpSink

    config = init_site(tmp_path / "site", "flagman@log.test")
    inbox = FakeInbox()
    for n in range(2):
        inbox.deliver(plain_mail(f"p{n}@players.test", "flagman@log.test", "help", "HELP", message_id=f"<h{n}@p.test>"))
    app = build_app(load_settings(config, env={}), clock=FakeClock(), inbox=inbox, mailer=FakeMailer())
    caplog.set_level(logging.INFO)
    try:
        Runner(app).poll()
    finally:
        app.close()
    [summary] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("poll: ")]
    assert summary == "poll: 2 mails: 2 applied", summary
    with SmtpSink(users={"relay": "right"}) as sink:
        mailer = SmtpMailer(
            host=sink.host, port=sink.port, security="none", username="relay", password="wrong", timeout=10
        )
        mail = OutgoingMail("<m1@log.test>", "flagman@log.test", ("kim@players.test",), b"Subject: x\r\n\r\nhi\r\n")
        [result] = mailer.send([mail])
    assert "535" in result.detail and "SMTPAuthenticationError: 535" in result.detail, result.detail
    assert "b'" not in result.detail and 'b"' not in result.detail and "(535," not in result.detail
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(("flagman", "bot")))
    assert "cannot connect to SMTP relay" in ours
    assert "b'" not in ours and "Error(" not in ours and "InboundStatus" not in ours, ours
