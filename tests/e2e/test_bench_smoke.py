"""The benchmarks run (performance.md): every one, at a tiny size, through the one command.

No speed is asserted here (CI machines vary): only that each benchmark runs end to end on
real servers, that the bot did all the work it was timed for (every mail applied and moved,
every game resolved, every mail at the sink, every confirmation back), and that the figures
and the JSON file are written.
"""

from __future__ import annotations

import email.policy
import json
import os
import random
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Required, TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.burn import burners
from bench.mails import STYLES, Seat, order_mail
from bench.overrides import overrides
from bench.run import main
from bot.mail_out import compose as mailout
from bot.mail_out.render import RenderedMail
from bot.settings import parse_settings
from bot.testing import plain_mail
from tests.helpers import wait_until
from tests.servers import Dovecot


class Case(TypedDict, total=False):
    """The keywords of one `compose` call (bot.mail_out.compose.compose)."""

    kind: Required[str]
    to: Required[mailout.Recipient]
    rendered: Required[RenderedMail]
    reply_to: str | None
    in_reply_to: str
    auto_replied: bool
    html: mailout.HtmlBody | None


def _compose_both(
    monkeypatch: pytest.MonkeyPatch, cases: list[Case], bot_name: str = "Flagmän Bot"
) -> tuple[list[bytes], list[bytes]]:
    """Each case composed twice with the memoised policies, and with the stdlib's plain ones."""
    config = parse_settings(
        {"bot": {"address": "flagman@bench.test", "name": bot_name}},
        env={"FLAGMAN_SECRET": "x"},
        base_dir=Path("."),
        source="test",
    )
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def run() -> list[bytes]:
        counter = iter(range(10**9))
        monkeypatch.setattr(secrets, "token_hex", lambda n: f"{next(counter):016x}")
        random.seed(7)  # the stdlib's MIME boundaries
        return [mailout.compose(config, now, **case)[2] for _ in range(2) for case in cases]

    memoised = run()
    with monkeypatch.context() as m:
        m.setattr(mailout, "_BUILD", email.policy.default)
        m.setattr(mailout, "_POLICY", email.policy.default.clone(max_line_length=998, linesep="\r\n"))
        m.setattr(mailout, "_plain_head", lambda *args, **kwargs: None)  # the stdlib writes every mail
        plain = run()
    return memoised, plain


NAMES = [
    "Kelly",
    "José Müller",
    "李小龍",
    'A "quoted" name',
    "x" * 80,
    "O'Brien, Pat",
    "",
    "=?utf-8?q?enc?=",
    "Racer 1.2",
    "Jo-Ann O'Neil_3",
    "x" * 61,
    "a  b",
    "Dr. No",
    "  padded  ",
]
SUBJECTS = [
    "[rc1] Results of Turn 1",
    "Ünïcode ✓ " * 3,
    "long " * 260,
    "=?utf-8?q?x?= literal",
    "a\tb",
    "[dl1] Results of Turn 1 of 5: start; next due Fri 4 Dec 2026 00:00 GMT",
    "x" * 990,
    "a  b",
    " lead",
    '(comment) <angle> "quote" \\ back; semi: colon, comma @ at',
]


@pytest.mark.parametrize("bot_name", ["Flagmän Bot", "Flagman"])  # the second: plain headers, the fast path
def test_memoised_compose_writes_the_same_bytes(monkeypatch: pytest.MonkeyPatch, bot_name: str) -> None:
    """The compose speed-up (bench: memoised header registry, each shared header folded once)
    changes no byte: every mail equals the stdlib's plain composition, also when composed again."""
    cases: list[Case] = []
    for i in range(120):
        case = Case(
            kind="results",
            to=mailout.Recipient(f"p{i % 7}@players.test", NAMES[i % len(NAMES)]),
            rendered=RenderedMail(SUBJECTS[i % len(SUBJECTS)], "Hello ✓\nUSE 5\n-- \nFlagman\n" * (1 + i % 3)),
            reply_to=None if i % 4 == 0 else f"flagman+rc{i % 3}.s1.abc@bench.test",
            in_reply_to="" if i % 2 else f"<m{i}@x>",
            auto_replied=bool(i % 2),
        )
        if hasattr(mailout, "HtmlBody") and i % 3 == 0:
            images = (mailout.InlineImage("pic@x", bytes(range(256)), "race.png"),) if i % 2 else ()
            case["html"] = mailout.HtmlBody("<p>Hello ✓</p>" * (1 + i % 4), images)
        cases.append(case)
    memoised, plain = _compose_both(monkeypatch, cases, bot_name)
    assert memoised == plain


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(max_size=40),
    subject=st.text(min_size=1, max_size=120),
    local=st.from_regex(r"[a-z0-9][a-z0-9+-]{0,19}", fullmatch=True),
)
def test_memoised_compose_is_the_same_for_any_name_and_subject(name: str, subject: str, local: str) -> None:
    """Property: for any display name and subject, memoised compose (and its plain header fast
    path) == the stdlib's, twice over."""
    if any(c in name for c in "\r\n") or not subject.split():
        return  # Address refuses CR/LF in a name; an all-blank subject is not a subject
    with pytest.MonkeyPatch.context() as monkeypatch:
        case = Case(
            kind="confirmation",
            to=mailout.Recipient(f"{local}@players.test", name),
            rendered=RenderedMail(subject, "USE 1\n"),
            reply_to=f"flagman+{local}@bench.test",
        )
        memoised, plain = _compose_both(monkeypatch, [case])
    assert memoised == plain


_ASCII = st.characters(min_codepoint=32, max_codepoint=126)


@settings(max_examples=150, deadline=None)
@given(
    name=st.text(_ASCII, max_size=30) | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ._'-]{0,20}", fullmatch=True),
    subject=st.text(_ASCII, min_size=1, max_size=80),
    local=st.from_regex(r"[a-z0-9+_=-]{1,10}(\.[a-z0-9+_=-]{1,8})?", fullmatch=True),
    in_reply_to=st.sampled_from(["", "<m1@x.test>", "<a.b+c@x>", "<odd id@x>", "no-brackets"]),
    html=st.booleans(),
    body=st.text(max_size=200),
)
def test_the_plain_header_fast_path_writes_the_stdlibs_bytes(
    name: str, subject: str, local: str, in_reply_to: str, html: bool, body: str
) -> None:
    """Property: mostly plain ASCII names, subjects and ids (the cases `compose` writes itself, and
    their near misses), with and without HTML: the bytes equal the stdlib's composition."""
    if any(c in name for c in "\r\n") or not subject.split():
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        case = Case(
            kind="results",
            to=mailout.Recipient(f"{local}@players.test", name),
            rendered=RenderedMail(subject, body or "x\n"),
            reply_to=f"flagman+{local}@bench.test",
            in_reply_to=in_reply_to,
            auto_replied=bool(in_reply_to),
            html=mailout.HtmlBody(f"<p>{name}</p>", (mailout.InlineImage("pic@x", b"\x89PNG" * 40, "race.png"),))
            if html
            else None,
        )
        memoised, plain = _compose_both(monkeypatch, [case], "Flagman")
    assert memoised == plain


pytestmark = [pytest.mark.e2e]


def test_every_mail_style_parses_to_its_order() -> None:
    """Each client style of the ingest mails yields its order, and nothing of the quote."""
    from bot.mail_in.parse import parse_inbound

    seat = Seat("rc1", "s1", "rc1-p1@players.test", "Racer José", "flagman+tag@bench.test")
    for serial in range(3 * len(STYLES)):
        _, data = order_mail(seat, serial)
        inbound = parse_inbound(data, own_addresses={"flagman@bench.test"})
        assert inbound.ignore is None, (serial, inbound.ignore)
        assert inbound.sender == seat.address
        style = STYLES[serial % len(STYLES)].__name__
        lines = [line.strip().upper() for line in inbound.text.splitlines()]
        assert f"USE {serial % 11}" in lines, (style, inbound.text)
        for quoted in ("USE n", "USE 5 (", "Deadline", "Flagman"):  # the quoted turn sheet
            assert quoted not in inbound.text, (style, inbound.text)


@pytest.mark.slow
def test_the_benchmarks_run_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """performance.md: one command runs ingest, deadline, latency and scale and writes the JSON.
    Their timed workers run in this process (`--workers-in-process`): the same work and answers
    without an interpreter started for each (the test of `bench.world.run_worker` below starts
    one as a process of its own)."""
    out = tmp_path / "results.json"
    code = main(
        [
            "--only",
            "ingest,deadline,latency,scale",
            "--size",
            "20",
            "--scale-sizes",
            "10,30",
            "--workers-in-process",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    results = json.loads(out.read_text())["benchmarks"]
    assert code == 0, printed + json.dumps({k: v.get("error") for k, v in results.items()})
    for name in ("ingest", "deadline", "latency", "scale"):
        assert name in results and "error" not in results[name], (name, results.get(name))
        assert results[name]["line"].split("\n")[0] in printed

    ingest = results["ingest"]
    assert ingest["problems"] == [], ingest["problems"]
    assert ingest["bot"]["fetched"] == ingest["reference"]["fetched"] == 20
    assert ingest["bot"]["outcomes"] == {"applied": 20}
    assert ingest["ratio"] > 0 and "ratio" in ingest["line"]
    assert "3 runs of each side, alternated" in ingest["line"]

    deadline = results["deadline"]
    assert deadline["problems"] == [], deadline["problems"]
    # Each side of the ingest and of the deadline ran three times, alternated, the bot from its
    # database as set up each time (the ingest's mails moved back into each INBOX): the median run
    # of each counts.
    for figures in (ingest, deadline):
        for side in ("bot", "reference"):
            runs = figures[side]["runs_seconds"]
            assert len(runs) == 3 and figures[side]["seconds"] == sorted(runs)[1], (figures["benchmark"], side, runs)
    assert deadline["bot"]["resolved"] == 2 and deadline["bot"]["sent"] == deadline["reference"]["sent"] == 18
    # The bot's workers are started before the clock; what the sink did beside each run is read.
    assert deadline["bot"]["worker_started_ahead"] and ingest["bot"]["worker_started_ahead"]
    for run in (deadline["bot"], deadline["reference"]):
        assert set(run["beside"]) == {"sink", "burners"} and run["beside"]["sink"]["cpu"] > 0, run["beside"]
        assert run["beside"]["burners"]["cpu"] == 0  # no --burn
        # Each clock stops when the sink accepted the last mail, before the worker was done.
        assert 0 < run["seconds"] <= run["done_seconds"] and run["connections"] >= 1, run

    latency = results["latency"]
    assert latency["missing"] == 0 and latency["mails"] == 20
    assert 0 < latency["p50_seconds"] <= latency["p95_seconds"] <= latency["max_seconds"]

    scale = results["scale"]
    assert [r["size"] for r in scale["runs"]] == [10, 30]
    assert all(r["problems"] == [] and r["peak_rss_mb"] > 0 for r in scale["runs"])


def test_a_timed_worker_runs_in_an_interpreter_of_its_own_and_answers_in_json(dovecot: Dovecot) -> None:
    """`bench.world.run_worker` (what the benchmarks time, outside `--workers-in-process`): the
    worker started as `python -m bench.worker MODE`, its arguments on stdin, its answer the JSON
    line it prints: here the reference reader of ingest on a mailbox of two mails."""
    from bench.world import run_worker

    user = dovecot.add_user("bench-worker@smoke.test", "pw")
    for n in range(2):
        dovecot.deliver(user, plain_mail("p@x.test", user, f"m{n}", "USE 1", message_id=f"<w{n}@x>"))
    answer = run_worker("ingest-ref", {"host": dovecot.host, "port": dovecot.imap_port, "user": user, "password": "pw"})
    assert answer["fetched"] == 2 and answer["cpu_seconds"] > 0 and answer["peak_rss_mb"] > 0, answer


def test_the_tick_harness_runs_and_its_mail_hash_is_the_same_every_run(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bench.tick`: the tick resolves every game, each run from the same database
    writes the same mail (the hash of the outbox, random parts masked), and it says so."""
    from bench import tick

    assert tick.main(["--games", "3", "--runs", "2"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("tick 3 games: CPU ") and "; 27 mails, outbox " in line and "runs differ" not in line
    assert tick.masked(b"Message-ID: <results-0123456789abcdef@x>\nDate: Mon\n") == b"Message-ID: <*@x>\n*\n"


def test_the_turns_harness_works_out_the_counted_turns_and_digests_the_same_each_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`python -m bench.turns`: the turns past `--warm` are worked out and counted (9 mails a
    Racecraft turn of 8), and two runs print the same digest of their mails and pictures."""
    from bench import turns

    lines = []
    for _ in range(2):
        assert turns.main(["--games", "3", "--warm", "1"]) == 0
        lines.append(capsys.readouterr().out.strip().splitlines()[-1])
    assert (
        lines[0].startswith("2 turns worked out (after 1 not counted): CPU ") and "; 18 mails and pictures " in lines[0]
    )
    assert lines[0].rsplit(" ", 1)[1] == lines[1].rsplit(" ", 1)[1]
    with pytest.raises(SystemExit):  # nothing left to count
        turns.main(["--games", "3", "--warm", "3"])


def test_a_setting_for_every_benchmark_is_read_as_in_config_toml() -> None:
    """`--set SECTION.KEY=VALUE` (a before/after of a setting on the same servers): the value
    read as TOML, a plain string where it is not TOML; a malformed one refused with the form."""
    assert overrides(["schedule.resolve_workers=0", "inbox.idle=false", "bot.name=Flag man", "limits.x=1.5"]) == {
        "schedule": {"resolve_workers": 0},
        "inbox": {"idle": False},
        "bot": {"name": "Flag man"},
        "limits": {"x": 1.5},
    }
    for bad in ("resolve_workers=0", "schedule.resolve_workers", ".x=1"):
        with pytest.raises(ValueError, match="SECTION.KEY=VALUE"):
            overrides([bad])


def test_the_burners_spin_for_the_run_and_end_with_it() -> None:
    """`python -m bench --burn N`: N processes each using a core for the whole run (their CPU
    time grows while the run goes on), each ended and reaped when it is over."""
    with burners(2) as pids:
        assert len(pids) == 2
        start = [_cpu_seconds(pid) for pid in pids]
        # waits on the burners' own CPU counters, not on a duration; a burner that never spins
        # fails by the harness's timeout
        wait_until(
            lambda: all(_cpu_seconds(pid) >= s + 0.2 for pid, s in zip(pids, start, strict=True)),
            "the burners did not use 0.2 s of CPU each",
        )
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_usage_reads_what_a_thread_did_with_the_cores() -> None:
    """`bench.usage`: a thread's CPU seconds grow while it works and differences of two readings
    are what it did between them; a process that is not there reads as nothing used."""
    from bench.usage import Usage, process, task

    before = task(os.getpid())
    spun = 0
    while (task(os.getpid()) - before).cpu < 0.05:  # waits on the thread's own counter, not a duration
        spun += sum(range(10_000))
    used = task(os.getpid()) - before
    assert used.cpu >= 0.05 and used.slices >= 0 and used.waiting >= 0
    assert process(os.getpid()).cpu >= task(os.getpid()).cpu
    assert task(2**22 + 7) == Usage() == process(2**22 + 7)
    assert (used + Usage()).as_dict() == used.as_dict()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_the_robots_benchmark_runs_without_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bench --only robots`: each game's robot head to head against
    the references written from the rules (the NMR default, a greedy driver, Racecraft's rule
    of thumb, its own easy level) in every field size the game allows, each matchup with its
    95% interval and its target on its line and in the JSON; no server started. Not timed."""
    out = tmp_path / "robots.json"
    assert main(["--only", "robots", "--races", "1", "--jobs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no servers" in printed
    result = json.loads(out.read_text())["benchmarks"]["robots"]
    assert "error" not in result, result.get("error")
    assert result["unfinished"] == 0
    cells = {(m["game"], m["size"], m["driver"], m["opponent"]) for m in result["matchups"]}
    sizes = {"racecraft": range(5, 9), "speed_circuit": range(2, 7), "speedphreakz": range(2, 9)}
    for game, allowed in sizes.items():
        refs = ["nmr", "greedy", "easy"] + (["heuristic"] if game == "racecraft" else [])
        for size in allowed:
            assert all((game, size, "robot", ref) in cells for ref in refs), (game, size)
            assert (game, size, "easy", "nmr") in cells
    for m in result["matchups"]:
        assert m["races"] == 1 and m["pairs"] >= 1
        assert 0 <= m["ahead"]["low"] <= m["ahead"]["mean"] <= m["ahead"]["high"] <= 1
        assert -1 <= m["lead"]["low"] <= m["lead"]["mean"] <= m["lead"]["high"] <= 1
        assert abs(m["lead"]["mean"] - (m["ahead"]["mean"] - m["behind"]["mean"])) < 1e-9
        assert m["target"] == (
            "" if m["driver"] == "easy" else "ahead >= 70%" if m["opponent"] == "nmr" else "ahead > behind"
        )
    assert "racecraft     5 seats robot vs heuristic 1 races: ahead" in printed


def test_ahead_head_to_head_means_more_pairs_ahead_than_behind_and_a_shared_place_counts_for_neither() -> None:
    """bench/README.md, "robots": a driver is ahead of a reference head to head when it finished
    strictly ahead of it in more pairs than strictly behind it (`lead` = ahead - behind > 0,
    the same as `score` > 50%). Racecraft shares many places: a robot level with a rule of
    thumb in most pairs and ahead in the rest is ahead head to head, though `ahead` is low."""
    from bench import robots

    race = robots.Spec("racecraft", ("robot", "heuristic", "heuristic", "robot", "heuristic"), {}, 0)
    # places: the robots 1st and 2nd-equal; the rule of thumb 2nd-equal, 2nd-equal and 5th
    level = robots.tally("racecraft", "robot", "heuristic", 5, [race], [([1, 2, 2, 2, 5], 5, True, 0.0)])
    assert level.pairs == 6
    assert level.ahead[0] == 4 / 6 and level.behind[0] == 0 and level.lead[0] == 4 / 6 and level.met
    # half the pairs shared and none behind: ahead head to head, though ahead is only 50%
    shared = robots.tally("racecraft", "robot", "heuristic", 5, [race], [([1, 2, 2, 2, 2], 5, True, 0.0)])
    assert shared.ahead[0] == 3 / 6 and shared.met
    tied = robots.tally("racecraft", "robot", "heuristic", 5, [race], [([2, 1, 2, 2, 3], 5, True, 0.0)])
    assert tied.ahead[0] == 2 / 6 and tied.behind[0] == 2 / 6 and tied.lead[0] == 0 and not tied.met
    assert tied.target == "ahead > behind" and "lead +0.0%" in tied.line()


def test_the_robots_figures_do_not_depend_on_the_worker_processes() -> None:
    """The races are drawn before they are shared out: one process or two, the same figures (the
    20 matchups of one game, the cheapest to race, shared between the two)."""
    from bench import robots

    def figures(result: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in m.items() if k != "cpu_seconds"} for m in result["matchups"]]

    games = ("speed_circuit",)
    assert figures(robots.run(races=1, jobs=1, games=games)) == figures(robots.run(races=1, jobs=2, games=games))


def test_the_practice_benchmark_runs_from_the_bench_command_without_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m bench --only practice` ("measure practice at scale in the bench"):
    `bench.practice` from the one bench command, no server started; `--size` live practice
    games; its figures (a new game's CPU and first sheet, the tick's CPU per live game against
    its target) on its line and in the JSON. Not timed."""
    out = tmp_path / "practice.json"
    assert main(["--only", "practice", "--size", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no servers" in printed
    result = json.loads(out.read_text())["benchmarks"]["practice"]
    assert "error" not in result, result.get("error")
    assert result["games"] == 3 and result["sheets"] >= 3
    assert result["new_game_cpu_ms"] > 0 and result["first_sheet_kb"] > 0
    assert result["target_ms_per_game"] == 0.5 and isinstance(result["met"], bool)
    assert "practice 3 live games: new game " in printed and "ms a game (target <= 0.5 ms)" in printed


def test_the_budgets_benchmark_runs_without_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bench --only budgets`: the costs the tests do not time (a picture of each game,
    the deadline parsers on hostile text, a 100,000-line mail, the reply-text reader on hostile
    text, the mail fixtures' throughput,
    the poll of a 100,000-line mail and of 500 auto-replies),
    each with its target, from the one bench command with no server started. Not timed: only
    that every figure is there, positive, and judged against its target."""
    out = tmp_path / "budgets.json"
    assert main(["--only", "budgets", "--runs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no servers" in printed
    result = json.loads(out.read_text())["benchmarks"]["budgets"]
    assert "error" not in result, result.get("error")
    names = [figure["figure"] for figure in result["figures"]]
    assert names == [
        "picture racecraft",
        "picture speed_circuit",
        "picture speedphreakz",
        "deadline-text",
        "long-mail",
        "hostile-text",
        "fixtures",
        "poll long-mail",
        "poll auto-replies",
    ]
    for figure in result["figures"]:
        assert figure["value"] >= 0 and figure["target"] and isinstance(figure["met"], bool), figure
        assert f"budgets  {figure['figure']}" in printed
    assert result["figures"][-1]["value"] > 0 and isinstance(result["met"], bool)
