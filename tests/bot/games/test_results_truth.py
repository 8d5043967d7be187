"""The results say what was used: a seat given the GM's plot is told
it was the GM's plot, not "the default"; the GM's copy names every seat that sent nothing and
the orders it got, plot or default."""

from __future__ import annotations

import re

from bot.testing import TestApp, body_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, gm_says, mails, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def test_the_gm_plot_is_named_as_such_to_the_player_and_the_gm(rc: TestApp) -> None:
    gm_says(rc, "PLOT rc1 steve USE 1")
    for seat in ("kelly", "seb", "roger"):
        player_says(rc, seat, "USE 2")
    gm_says(rc, "PROCESS rc1")
    steve = next(m for m in mails(rc, ADDRESS["steve"]) if "Results of Turn 1" in str(m["Subject"]))
    assert "you were given the GM's plot." in body_of(steve)
    anna = next(m for m in mails(rc, ADDRESS["anna"]) if "Results of Turn 1" in str(m["Subject"]))
    assert "you were given the default." in body_of(anna)
    copy = next(m for m in mails(rc, GM) if "GM copy: results of Turn 1" in str(m["Subject"]))
    text = body_of(copy)
    assert "No orders arrived in time from:" in text
    lines = {
        line.split()[0]: line for line in text.split("No orders arrived in time from:")[1].strip().splitlines()[:2]
    }
    assert "the GM's plot: USE 1" in lines["steve"] and "the default: USE" in lines["anna"]


def test_the_receipts_name_the_gm_plot_as_such(rc: TestApp) -> None:
    """The receipts marked a seat given the GM's plot "(default)" while its own line said "the
    GM's plot": the receipts say "(the GM's plot)" for it and "(default)" for a seat given the
    game's default, in the text and the HTML part alike."""
    gm_says(rc, "PLOT rc1 steve USE 1")
    for seat in ("kelly", "seb", "roger"):
        player_says(rc, seat, "USE 2")
    gm_says(rc, "PROCESS rc1")
    copy = next(m for m in mails(rc, GM) if "GM copy: results of Turn 1" in str(m["Subject"]))
    text = body_of(copy).split("Receipts of the orders used", 1)[1]
    receipt = {line.split()[0]: line for line in text.splitlines()[1:] if line.startswith("  ")}
    assert receipt["steve"].endswith("(the GM's plot)"), receipt
    assert receipt["anna"].endswith("(default)"), receipt
    assert not receipt["kelly"].endswith(")"), receipt
    html = next(p for p in copy.walk() if p.get_content_type() == "text/html").get_content()
    assert re.search(r"steve [0-9a-f]{20}</span> \(the GM(&#39;|&#x27;|')s plot\)", html), html
