"""The benchmarks run (performance.md): every one, at a tiny size, through the one command.

No speed is asserted here (CI machines vary): only that each benchmark runs end to end on
real servers, that the bot did all the work it was timed for (every mail applied and moved,
every game resolved, every mail at the sink, every confirmation back), and that the figures
and the JSON file are written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.mails import STYLES, Seat, order_mail
from bench.run import main

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_every_mail_style_parses_to_its_order() -> None:
    """Each client style of the ingest mails yields its order, and nothing of the quote."""
    from bot.inbound import parse_inbound

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


def test_the_benchmarks_run_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """performance.md: one command runs ingest, deadline, latency and scale and writes the JSON."""
    out = tmp_path / "results.json"
    code = main(["--only", "ingest,deadline,latency,scale", "--size", "20", "--scale-sizes", "10,30",
                 "--out", str(out)])
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

    deadline = results["deadline"]
    assert deadline["problems"] == [], deadline["problems"]
    assert deadline["bot"]["resolved"] == 2 and deadline["bot"]["sent"] == deadline["reference"]["sent"] == 18

    latency = results["latency"]
    assert latency["missing"] == 0 and latency["mails"] == 20
    assert 0 < latency["p50_seconds"] <= latency["p95_seconds"] <= latency["max_seconds"]

    scale = results["scale"]
    assert [r["size"] for r in scale["runs"]] == [10, 30]
    assert all(r["problems"] == [] and r["peak_rss_mb"] > 0 for r in scale["runs"])
