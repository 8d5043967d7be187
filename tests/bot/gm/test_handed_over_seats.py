"""A seat the GM's REPLACE gave to another person is named as the letters name it, "anna (Kim
McDonald)" (`bot.letters.context.seat_labels`; docs/DESIGN.md, "Seats that change hands"), in
the public archive, in `flagman game show` and in the game's block of the digest and the GM's
STATUS, escaped in HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from bot.games.archive import write_game_archive
from bot.gm import digest
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import GM, body_of, gm_says, mails, player_says
from tests.helpers import init_site

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures

NAME = "Kim <McDonald> & Co"  # a display name with what HTML must escape
LABEL = f"anna ({NAME})"


def _handed_over(rc: TestApp) -> None:
    gm_says(rc, f"REPLACE rc1 anna kim@example.org {NAME}")
    assert f"anna ({NAME})" in body_of(mails(rc, "kim@example.org")[-1])  # as the letters name it


def test_the_digest_and_gm_status_name_a_handed_over_seat_as_the_letters_do(rc: TestApp) -> None:
    """The digest's game block named the seat "anna" alone among who has orders and who has not;
    it names it "anna (Kim ...)" there and in the result, as every letter does."""
    _handed_over(rc)
    player_says(rc, "seb", "USE 2")
    digest.send_due_digests(rc.shell, force=True)
    rc.service.send()
    text = body_of([m for m in mails(rc, GM) if "GM digest" in str(m["Subject"])][-1]).replace("\r\n", "\n")
    block = text.split("== rc1", 1)[1]
    assert "Orders on file: seb." in block, block
    missing = next(line for line in block.splitlines() if line.startswith("No orders yet:"))
    assert missing == f"No orders yet:  {LABEL}, kelly, roger, steve.", missing
    gm_says(rc, "STATUS rc1")
    assert f"No orders yet:  {LABEL}, kelly, roger, steve." in body_of(mails(rc, GM)[-1]).replace("\r\n", "\n")


def test_game_show_names_a_handed_over_seat_as_the_letters_do(
    rc: TestApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flagman game show` listed the seat as "anna" with the new holder's address: its line
    names it "anna (Kim ...)", and the JSON keeps the seat's name and gives the label beside it."""
    _handed_over(rc)
    gm_says(rc, "PROCESS rc1")
    config = init_site(tmp_path / "site")
    config.write_text(
        re.sub(r'url = "[^"]*"', f'url = "sqlite:///{tmp_path / "flagman.sqlite"}"', config.read_text()), "utf-8"
    )
    capsys.readouterr()
    assert main(["--config", str(config), "game", "show", "rc1"]) == 0
    out = capsys.readouterr().out
    seat_line = next(line for line in out.splitlines() if "kim@example.org" in line)
    assert seat_line.startswith(f"  {LABEL} kim@example.org"), seat_line
    assert any(LABEL in line for line in out.splitlines() if line.startswith("    ")), out  # the standings
    assert main(["--config", str(config), "game", "show", "rc1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    (anna,) = [s for s in shown["seats"] if s["seat"] == "anna"]
    assert anna["shown"] == LABEL and anna["address"] == "kim@example.org"
    assert any(LABEL in place for place in shown["standings"]), shown["standings"]


def test_the_public_archive_names_a_handed_over_seat_as_the_letters_do_escaped(rc: TestApp, tmp_path: Path) -> None:
    """The archive's standings, what happened and dice page named the seat "anna" alone: they
    name it "anna (Kim ...)", the holder's name escaped as HTML (never markup of its own)."""
    _handed_over(rc)
    gm_says(rc, "PROCESS rc1")
    site = tmp_path / "site"
    write_game_archive(rc.db, "rc1", site)
    escaped = "anna (Kim &lt;McDonald&gt; &amp; Co)"
    index = (site / "index.html").read_text("utf-8")
    turn = next(p for p in site.glob("turn-*.html")).read_text("utf-8") if list(site.glob("turn-*.html")) else index
    for page in (index, turn):
        assert escaped in page, page
        assert "<McDonald>" not in page
    happened = turn.split('<ul class="events">', 1)[1].split("</ul>", 1)[0]
    assert escaped in happened and not re.search(r"<li>anna [^(]", happened), happened
