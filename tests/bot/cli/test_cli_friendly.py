"""The command line for people: `--version`; a server that cannot be reached
said in two lines with what to check, status 3, no traceback; a closed stdout ends quietly;
each result printed once and a refused GM command mailed to nobody; `game options`; every
duration option read alike; a turn under an hour only with --force."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

import bot.cli
import rules
from bot.cli import main
from bot.db import Database
from bot.mail_in.imap import ImapInbox
from bot.mail_in.inbox import deliver_to_maildir
from bot.models import GmAudit, Outbox, OutboxStatus
from bot.settings import load_settings
from bot.store import find_game_row
from bot.testing import plain_mail
from tests.helpers import flagman_command, init_site

ROOT = Path(__file__).resolve().parents[3]
FLAGMAN = Path(sys.executable).parent / "flagman"  # the console script of the installed package
PLAYERS = [f"--player={n}={n}@example.org" for n in ("kelly", "seb", "steve", "roger", "anna")]
GM = "gm@example.org"

CONFIG = """\
[bot]
address = "flagman@example.org"
timezone = "UTC"
secret_file = "site-secret"

[database]
url = "{database}"

[inbox]
{inbox}

[outbox]
{outbox}
"""
MAILDIR_IN = 'kind = "maildir"\npath = "mail/inbox"'
MAILDIR_OUT = 'kind = "maildir"\npath = "mail/outbox"'


def configure(
    config: Path, *, database: str = "sqlite:///flagman.sqlite", inbox: str = MAILDIR_IN, outbox: str = MAILDIR_OUT
) -> Path:
    config.write_text(CONFIG.format(database=database, inbox=inbox, outbox=outbox), encoding="utf-8")
    return config


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def flagman(config: Path | None, *args: str) -> int:
    return main([*(["--config", str(config)] if config else []), *args])


def run(*argv: str | Path, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """The installed `flagman` as a process."""
    return subprocess.run(
        [str(FLAGMAN), *map(str, argv)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def closed_pipe() -> int:
    """The write end of a pipe whose reader has gone: every write to it fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.fixture(scope="module")
def made_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded default with Racecraft `rc1` (GM gm@example.org, 48h turns) started, made
    once for the module (`site` copies it)."""
    config = init_site(tmp_path_factory.mktemp("made") / "site", "flagman@example.org")
    assert flagman(config, "game", "new", "racecraft", "--name", "rc1", "--gm", GM, *PLAYERS) == 0
    return config


@pytest.fixture
def site(made_site: Path, tmp_path: Path) -> Path:
    """The embedded default with Racecraft `rc1` started, the test's own: a copy of `made_site`
    (its configuration names its files relative to itself)."""
    shutil.copytree(made_site.parent, tmp_path / "site")
    return tmp_path / "site" / made_site.name


def database(config: Path) -> Database:
    return Database(load_settings(config, env={}).database_url)


def outbox_rows(config: Path, recipient: str | None = None) -> list[tuple[str, str, int]]:
    db = database(config)
    with db.read() as session:
        query = select(Outbox.kind, Outbox.status, Outbox.attempts).order_by(Outbox.id)
        if recipient is not None:
            query = query.where(Outbox.recipient == recipient)
        rows = [(kind, str(status), attempts) for kind, status, attempts in session.execute(query)]
    db.dispose()
    return rows


# -- --version and --help --------------------------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_version_prints_this_builds_version_and_commit_and_exits_0() -> None:
    """`flagman --version` as a process, from the source tree: RELEASE.COMMITS of the commit
    checked out and that commit (bot/buildinfo.py), status 0."""
    from bot.buildinfo import RELEASE

    done = run("--version")
    assert done.returncode == 0, done.stderr
    dirty = ", with uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    count, commit = git("rev-list", "--count", "HEAD"), git("rev-parse", "HEAD")
    assert done.stdout == f"flagman {RELEASE}.{count} (commit {commit[:12]}{dirty})\n"
    assert done.stderr == ""


def test_version_falls_back_to_the_installed_version_without_git(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source tree git cannot read (git missing): the installed distribution's version, no commit."""
    import bot.buildinfo

    def no_git(root: Path, release: str = "") -> bot.buildinfo.Build:
        raise bot.buildinfo.VersionError("git is not installed")

    monkeypatch.setattr(bot.buildinfo, "from_git", no_git)
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"flagman {importlib.metadata.version('flagman')}\n"


def test_help_documents_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman --help` ends with the exit statuses, 3 for a server that cannot be reached."""
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "--version" in shown
    statuses = shown[shown.index("exit status:") :]
    for status, meaning in (
        ("0", "done"),
        ("1", "the work failed"),
        ("2", "bad usage"),
        ("3", "cannot be reached"),
        ("4", "storage: the disk is full"),
    ):
        assert f"  {status}  " in statuses and meaning in statuses


# -- a server that cannot be reached -----------------------------------------------------------


def assert_two_lines(err: str, *expected: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert "Traceback" not in err
    for text in expected:
        assert text in err, (text, err)


def test_poll_with_the_imap_server_unreachable_says_what_to_check_and_exits_3(
    site: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flagman poll` with nothing listening on the IMAP port: two lines on stderr naming the
    server's host:port from the configuration, the [inbox] settings and `flagman doctor`; status 3."""
    monkeypatch.setattr(ImapInbox, "_backoff", lambda self, attempt: 0.0)  # no waiting between attempts
    port = free_port()
    configure(site, inbox=f'kind = "imap"\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\nusername = "bot"')
    assert flagman(site, "poll") == 3
    assert_two_lines(
        capsys.readouterr().err,
        f"127.0.0.1:{port}",
        "unreachable",
        "[inbox] host, port and security",
        str(site),
        "flagman doctor",
    )


class _RefusingImap(socketserver.StreamRequestHandler):
    """An IMAP server that refuses every login (RFC 3501: NO to LOGIN)."""

    def handle(self) -> None:
        self.wfile.write(b"* OK [CAPABILITY IMAP4rev1] ready\r\n")
        for raw in self.rfile:
            tag, _, rest = raw.decode("ascii", "replace").strip().partition(" ")
            command = rest.split(" ", 1)[0].upper()
            if command == "CAPABILITY":
                self.wfile.write(f"* CAPABILITY IMAP4rev1\r\n{tag} OK done\r\n".encode())
            elif command == "LOGIN":
                self.wfile.write(f"{tag} NO [AUTHENTICATIONFAILED] Authentication failed.\r\n".encode())
            elif command == "LOGOUT":
                self.wfile.write(f"* BYE\r\n{tag} OK bye\r\n".encode())
                return
            else:
                self.wfile.write(f"{tag} BAD not here\r\n".encode())


@pytest.fixture
def refusing_imap() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _RefusingImap)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_poll_with_the_imap_login_refused_says_check_the_username_and_password(
    site: Path, refusing_imap: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that answers and refuses the login: the refusal, and what to check (the
    username and the imap-password credential); status 3."""
    monkeypatch.setenv("FLAGMAN_IMAP_PASSWORD", "wrong")
    configure(
        site, inbox=f'kind = "imap"\nhost = "127.0.0.1"\nport = {refusing_imap}\nsecurity = "none"\nusername = "bot"'
    )
    assert flagman(site, "poll") == 3
    err = capsys.readouterr().err
    assert_two_lines(
        err, f"127.0.0.1:{refusing_imap}", "refused", "[inbox] username", "imap-password", "flagman doctor"
    )
    assert "wrong" not in err


def test_send_with_the_smtp_relay_unreachable_exits_3_and_leaves_the_outbox_as_it_was(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flagman send` with nothing listening on the relay's port (the real SmtpMailer): two lines
    naming the relay, the [outbox] settings and `flagman doctor`, status 3; every mail still
    pending with no attempt counted, so a relay that is down does not use up the retries."""
    before = outbox_rows(site)
    assert before and all(status == OutboxStatus.PENDING and attempts == 0 for _, status, attempts in before)
    port = free_port()
    configure(site, outbox=f'kind = "smtp"\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"')
    assert flagman(site, "send") == 3
    assert_two_lines(
        capsys.readouterr().err,
        f"SMTP relay 127.0.0.1:{port}",
        "nothing was sent",
        "stays in the outbox",
        f"[outbox] host and port (127.0.0.1:{port})",
        "flagman doctor",
    )
    assert outbox_rows(site) == before


def test_send_through_a_relay_that_answers_sends_everything(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's watch on the relay changes nothing when it answers: every mail sent, status 0."""
    from aiosmtpd.controller import Controller

    class Sink:
        def __init__(self) -> None:
            self.to: list[str] = []

        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's hook
            self.to.extend(envelope.rcpt_tos)
            return "250 OK"

    sink = Sink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        count = len(outbox_rows(site))
        configure(site, outbox=f'kind = "smtp"\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"')
        assert flagman(site, "send") == 0
    finally:
        controller.stop()
    assert f"sent {count}, retrying 0, failed 0" in capsys.readouterr().out
    assert len(sink.to) == count and GM in sink.to
    assert {status for _, status, _ in outbox_rows(site)} == {OutboxStatus.SENT}


def test_a_gm_command_done_with_the_relay_down_says_done_then_that_the_mail_waits(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flagman gm pause rc1` with the relay down: the pause is done and said so; then the
    relay, status 3; the confirmation waits in the outbox."""
    configure(site, outbox=f'kind = "smtp"\nhost = "127.0.0.1"\nport = {free_port()}\nsecurity = "none"')
    assert flagman(site, "gm", "pause", "rc1") == 3
    out, err = capsys.readouterr()
    assert "PAUSE rc1: done" in out
    assert_two_lines(err, "SMTP relay", "stays in the outbox")
    assert ("gm_pause", OutboxStatus.PENDING, 0) in outbox_rows(site, GM)


@pytest.mark.parametrize("argv", [("extend", "rc1", "24h"), ("pause", "rc1")])
def test_a_gm_command_on_the_command_line_never_says_the_players_were_told_before_the_send(
    site: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    """A GM command from the CLI never says "the players were told": the done line says their
    mail is queued; with the relay down (status 3) the next lines say it stays in the outbox;
    with --no-send, that it is not sent."""
    configure(site, outbox=f'kind = "smtp"\nhost = "127.0.0.1"\nport = {free_port()}\nsecurity = "none"')
    assert flagman(site, "gm", *argv) == 3
    out, err = capsys.readouterr()
    assert f"{argv[0].upper()} rc1: done" in out and "their mail is queued." in out
    assert "were told" not in out + err
    assert_two_lines(err, "nothing was sent", "stays in the outbox")
    assert flagman(site, "gm", "resume" if argv[0] == "pause" else "extend", "rc1", *argv[2:], "--no-send") == 0
    out = capsys.readouterr().out
    assert "were told" not in out and "mail queued, not sent (--no-send)" in out


def test_game_list_and_show_say_a_manual_schedule_has_no_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A turn without a deadline (a manual schedule) is shown as such, never "due None"."""
    config = init_site(tmp_path / "site")
    assert flagman(config, "game", "new", "racecraft", "--name", "man1", "--deadline", "manual", *PLAYERS) == 0
    capsys.readouterr()
    assert flagman(config, "game", "list") == 0
    assert flagman(config, "game", "show", "man1") == 0
    out = capsys.readouterr().out
    assert "None" not in out and out.count("no deadline (manual schedule") == 2, out


def test_an_unreachable_database_is_two_lines_and_status_3_from_the_process(tmp_path: Path) -> None:
    """`flagman game list` as a process, the SQLite file in a folder that does not exist: the
    database named, what to check, `flagman doctor`; status 3 and no traceback."""
    config = init_site(tmp_path / "site")
    configure(config, database=f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'flagman.sqlite'}")
    done = run("--config", config, "game", "list")
    assert done.returncode == 3, done.stderr
    assert_two_lines(
        done.stderr,
        "cannot use the database sqlite:///",
        "unable to open database file",
        "[database] url",
        "flagman doctor",
    )


def test_a_database_without_its_schema_says_migrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty SQLite file: the driver's reason (no such table) and `flagman migrate`, not the SQL."""
    config = init_site(tmp_path / "site")
    configure(config, database="sqlite:///empty.sqlite")
    assert flagman(config, "game", "list") == 3
    err = capsys.readouterr().err
    assert_two_lines(err, "no such table", "flagman migrate", "flagman doctor")
    assert "SELECT" not in err


def test_an_unexpected_error_keeps_its_traceback(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the known server failures are made friendly: anything else is a bug and propagates."""

    def broken(args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(bot.cli, "_cmd_game_list", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        flagman(site, "game", "list")


# -- a closed stdout -------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("game", "show", "rc1"), ("game", "list"), ("game", "options")])
def test_a_closed_stdout_ends_quietly_with_status_1(site: Path, argv: tuple[str, ...]) -> None:
    """`flagman game show rc1 | head -1`: the reader gone, no BrokenPipeError and nothing on
    stderr; status 1 (the Python docs' recipe, signal module, "Note on SIGPIPE")."""
    pipe = closed_pipe()
    try:
        done = run("--config", site, *argv, stdout=pipe)
    finally:
        os.close(pipe)
    assert done.returncode == 1
    assert done.stderr == ""


def test_head_of_game_show_gets_its_line_and_nothing_on_stderr(site: Path) -> None:
    """The real pipeline, `flagman game show rc1 | head -1`."""
    done = subprocess.run(
        ["bash", "-c", f'"{FLAGMAN}" --config "{site}" game show rc1 | head -1'],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("rc1: Racecraft") and done.stdout.count("\n") == 1
    assert done.stderr == ""


def test_a_closed_stdout_does_not_stop_the_work_nor_fill_stderr_with_logging_errors(site: Path) -> None:
    """`flagman poll | head -1` with mail to read: the log (on stdout) stops quietly and the
    poll does its work all the same (the mail read, the confirmations queued)."""
    settings = load_settings(site, env={})
    inbox = settings.resolve_path("mail/inbox")
    for number in range(3):
        deliver_to_maildir(
            inbox,
            plain_mail(
                "seb@example.org",
                "flagman@example.org",
                "rc1 orders",
                "USE 2",
                message_id=f"<closed-{number}@example.org>",
            ),
        )
    before = len(outbox_rows(site, "seb@example.org"))
    pipe = closed_pipe()
    try:
        done = run("--config", site, "poll", stdout=pipe)
    finally:
        os.close(pipe)
    assert done.returncode == 1
    assert done.stderr == ""
    assert not list((inbox / "new").iterdir())
    assert len(outbox_rows(site, "seb@example.org")) > before


# -- GM commands: each result once, and a refusal mailed to nobody ---------------------------------


def test_a_gm_command_prints_its_result_once(site: Path) -> None:
    """`flagman gm extend rc1 24h` (its stdout and log as in its own process, `flagman_command`):
    the result once on stdout (its log line left out)."""
    done = flagman_command(site, "gm", "extend", "rc1", "24h", "--no-send")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("the deadline moved") == 1, done.stdout
    assert done.stdout.count("EXTEND rc1: done") == 1


def test_a_game_made_is_said_once(tmp_path: Path) -> None:
    """`flagman game new` (its stdout and log as in its own process, `flagman_command`): one
    line saying the game was made (not a log line too)."""
    config = init_site(tmp_path / "site")
    done = flagman_command(config, "game", "new", "racecraft", "--name", "rc1", *PLAYERS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["game rc1 (racecraft) created: 5 players, status active"]


def test_verbose_still_logs_the_gm_decision(site: Path) -> None:
    """With --verbose the log keeps every decision, the GM's included."""
    done = flagman_command(site, "--verbose", "gm", "pause", "rc1", "--no-send")
    assert done.returncode == 0, done.stderr
    assert "flagman.gm" in done.stdout and "PAUSE rc1: done" in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("extend", "rc1", "2x"),  # a duration mistyped: refused by the command itself
        ("set", "rc1", "sbe", "ep", "3"),  # a seat mistyped
        ("set", "rc1", "seb", "ep", "42"),  # out of range
        ("extend", "rc1"),  # an argument missing
        ("set", "nosuch", "seb", "ep", "3"),
    ],
)
def test_a_refused_gm_command_mails_the_gm_nothing(
    site: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    """A typo at the terminal: the refusal printed (status 2) and audited, and no [ERROR]
    letter queued for the GM, nor anything else sent."""
    before = outbox_rows(site)
    assert flagman(site, "gm", *args) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1  # the reasons: tests/bot/cli/test_gm_cli.py
    assert outbox_rows(site) == before


def test_a_refused_gm_command_is_still_audited(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal mailed to nobody stays in the audit log (and so in the GM's digest)."""
    assert flagman(site, "gm", "set", "rc1", "sbe", "ep", "3") == 2
    db = database(site)
    with db.read() as session:
        row = session.scalars(select(GmAudit).order_by(GmAudit.id.desc())).first()
    db.dispose()
    assert row is not None and row.command == "SET rc1 sbe ep 3" and row.outcome.startswith("refused")


def test_an_unknown_gm_verb_mails_nothing(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = outbox_rows(site)
    with pytest.raises(SystemExit) as exited:
        flagman(site, "gm", "extnd", "rc1", "24h")
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    assert outbox_rows(site) == before


def test_a_gm_command_done_still_confirms_to_the_gm(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "gm", "pause", "rc1", "--no-send") == 0
    assert ("gm_pause", OutboxStatus.PENDING, 0) in outbox_rows(site, GM)


# -- game options -------------------------------------------------------------------------------


def test_game_options_lists_every_game_with_its_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman game options`: each game of the registry, each option line of its rules
    (range and default); no configuration needed."""
    assert flagman(tmp_path / "no-such.toml", "game", "options") == 0
    out = capsys.readouterr().out
    for kind in rules.GAMES:
        game = rules.find_game(kind)
        assert f"{kind} ({game.title})" in out
        for line in game.option_help().splitlines():
            assert line.strip() in out
    # The settings every game has, with the game's own default.
    assert out.count("--early-resolution on|off: the turn resolves as soon as every order is in (default on)") == len(
        rules.GAMES
    )
    assert out.count("--press none|signed|anonymous") == len(rules.GAMES)


def test_game_options_of_one_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(None, "game", "options", "Speed-Circuit") == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("speed-circuit or speed_circuit (Speed Circuit)") and "laps=N" in out and "racecraft" not in out
    )
    assert flagman(None, "game", "options", "chess") == 2
    assert "unknown game 'chess'" in capsys.readouterr().err


# -- durations alike everywhere ------------------------------------------------------------------


def grace_of(config: Path, name: str) -> int:
    db = database(config)
    with db.read() as session:
        game = find_game_row(session, name)
        assert game is not None
        minutes = game.grace_minutes
    db.dispose()
    return minutes


@pytest.mark.parametrize(("text", "minutes"), [("30", 30), ("0", 0), ("2h", 120), ("1h30m", 90), ("1d", 1440)])
def test_grace_reads_alike_in_game_new_and_gm_configure(
    site: Path, capsys: pytest.CaptureFixture[str], text: str, minutes: int
) -> None:
    """`--grace` of `game new` and of `gm configure`: the same parser, the same minutes."""
    assert flagman(site, "game", "new", "racecraft", "--name", "rc2", "--grace", text, *PLAYERS) == 0
    assert grace_of(site, "rc2") == minutes
    assert flagman(site, "gm", "configure", "rc1", "--grace", text) == 0
    assert grace_of(site, "rc1") == minutes


@pytest.mark.parametrize("text", ["2x", "-5", "99999999999", "2 4h"])
def test_a_bad_grace_is_refused_alike_by_game_new_and_gm_configure(
    site: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        flagman(site, "game", "new", "racecraft", "--name", "rc2", "--grace", text, *PLAYERS)
    assert exited.value.code == 2
    by_game_new = capsys.readouterr().err.splitlines()[-1]
    with pytest.raises(SystemExit) as exited:
        flagman(site, "gm", "configure", "rc1", "--grace", text)
    assert exited.value.code == 2
    by_configure = capsys.readouterr().err
    reason = by_game_new.split("argument --grace: ", 1)[1].split(" (see flagman")[0]
    assert reason in by_configure


# -- a turn under an hour -----------------------------------------------------------------------


def test_game_new_refuses_a_turn_under_an_hour_unless_forced(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`game new --deadline 1m`: refused (status 2) with the reason and the way round it; no
    game made. With --force it is made; an hour, fixed times and manual need no --force."""
    assert flagman(site, "game", "new", "racecraft", "--name", "rc2", "--deadline", "1m", *PLAYERS) == 2
    err = capsys.readouterr().err
    assert "no time to mail" in err and "--force" in err and len(err.splitlines()) == 1
    db = database(site)
    with db.read() as session:
        assert find_game_row(session, "rc2") is None
    db.dispose()
    assert flagman(site, "game", "new", "racecraft", "--name", "rc2", "--deadline", "59m", "--force", *PLAYERS) == 0
    for number, spec in enumerate(("1h", "daily 18:00", "manual")):
        assert flagman(site, "game", "new", "racecraft", "--name", f"ok{number}", "--deadline", spec, *PLAYERS) == 0


def test_gm_configure_refuses_a_turn_under_an_hour_unless_forced(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert flagman(site, "gm", "configure", "rc1", "--deadline", "30m") == 2
    err = capsys.readouterr().err
    assert "no time to mail" in err and "--force" in err and len(err.splitlines()) == 1
    db = database(site)
    with db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None and game.deadline_spec == "48h"
        audits = session.scalar(select(func.count()).select_from(GmAudit))
    db.dispose()
    assert audits == 0
    assert flagman(site, "gm", "configure", "rc1", "--deadline", "30m", "--force") == 0
    assert "deadlines 30m" in capsys.readouterr().out


BAD_ARGUMENTS = [
    ("game", "new", "racecraft", "--name", "rc2", *PLAYERS, "--option", "foo"),
    ("game", "new", "racecraft", "--name", "rc2", *PLAYERS, "--deadline", "nonsense"),
    ("game", "new", "racecraft", "--name", "rc2", *PLAYERS, "--grace", "soon"),
    ("game", "new", "racecraft", "--name", "rc2", "--player", "bad"),
    ("game", "new", "racecraft", "--name", "rc2", *PLAYERS, "--timezone", "Mars/Base"),
    ("game", "new", "nosuchkind", "--name", "x", *PLAYERS),
    ("game", "show", "nosuch"),
    ("gm", "extend", "rc1"),
    ("gm", "extend", "rc1", "soon"),
    ("gm", "deadline", "rc1", "+2m"),
    ("backup", "--keep", "-1", "/tmp/nowhere"),
    ("migrate", "badrev"),
    ("copy-db", "--to", "nonsense://"),
    ("verify", "/nonexistent"),
    ("play", "racecraft", "--script", "/nonexistent"),
    ("restore", "/nonexistent"),
    ("digest", "--bogus"),
]


@pytest.mark.parametrize("argv", BAD_ARGUMENTS, ids=lambda argv: " ".join(argv[:3]))
def test_every_bad_argument_gets_one_line_and_status_2(
    site: Path, argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad argument is one line on stderr saying what to write, exit status 2;
    no traceback, no usage block."""
    capsys.readouterr()
    status: int | str | None
    try:
        status = flagman(site, *argv)
    except SystemExit as exc:  # argparse's own refusals end the process from inside main
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("flagman") or argv[0] == "gm", err
