"""`turns.work_out` decides what resolving a turn writes and what its letters say, rendering
none of them; the deadline's letters step renders them from that plan (`bot.letters.turn`).
On main `work_out` rendered every results letter itself. The mail is the same bytes: `python
-m bench.tick` hashes the outbox, unchanged by the move."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

import pytest

from bot.games import turns
from bot.letters import turn as turn_letters
from bot.letters.cache import LetterCache
from bot.mail_out.render import RenderedMail, Renderer
from bot.store import find_game_row, open_turn
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM

gapp, rc = gm_helpers.gapp, gm_helpers.rc


def test_work_out_renders_no_letter_and_the_letters_step_renders_them_all(
    rc: TestApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[str] = []
    render = Renderer.render

    def counting(
        self: Renderer, template: str, context: Mapping[str, object], *, game: str | None = None
    ) -> RenderedMail:
        rendered.append(template)
        return render(self, template, context, game=game)

    monkeypatch.setattr(Renderer, "render", counting)
    rc.clock.advance(timedelta(hours=49))
    with rc.db.read() as session:
        game = find_game_row(session, "rc1", with_seats=True)
        assert game is not None
        turn = open_turn(session, game)
        assert turn is not None
        cache = LetterCache()
        writes = turns.work_out(rc.shell, session, game, turn, cache=cache)
        assert rendered == [] and writes.letters is not None
        assert writes.letters.kind == "results" and writes.letters.next_turn is not None
        mails = turn_letters.render(rc.shell, session, game, turn, writes.letters, cache=cache)
    assert sorted(str(m["recipient"]) for m in mails) == sorted([*ADDRESS.values(), GM])
    assert rendered.count("results") == len(ADDRESS) and rendered.count("results_gm") == 1
