"""Words for the GM reach the GM: "I have to drop out, family
stuff" got "Your note: nothing changed" and the GM was never told; a rules question got
[ERROR] or a one-tap link for a word that is no order. mail-interface.md: PRESS ... GM "goes to
the GM alone"; a human GM reads a player's note and answers a question. Prose addressed to the
GM, a question or a farewell is passed on to the GM as PRESS GM would, the player is told so;
a farewell is answered "Did you mean to resign? Send RESIGN <game>"; the GM's digest and STATUS
list it under "Needs your attention" at the top."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.commands.grammar import ForTheGm, for_the_gm, is_courtesy
from bot.gm import digest
from bot.models import GmAttention, OrderSubmission
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, body_of, gm_says, last, mails, one_lap_race, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("I have to drop out, family stuff", ForTheGm.FAREWELL),
        ("Sorry, I can't continue after this week", ForTheGm.FAREWELL),
        ("What happens if I run out of EP?", ForTheGm.QUESTION),
        ("Dear GM, I'll be away next week", ForTheGm.NOTE),
        ("USE 3", None),
        ("Good luck everyone, see you next turn", None),
        ("Thanks, got it!", None),
    ],
)
def test_words_for_the_gm_are_told_from_orders_and_courtesies(line: str, kind: ForTheGm | None) -> None:
    assert for_the_gm(line) is kind


def test_a_greeting_that_carries_words_for_the_gm_is_no_courtesy() -> None:
    """ "Dear GM, I'll be away next week" was passed over as a greeting."""
    assert is_courtesy("Hi GM!") and is_courtesy("Thanks, GM") and is_courtesy("Cheers")
    assert not is_courtesy("Dear GM, I'll be away next week")
    assert not is_courtesy("Thanks! Can I pit twice in one lap?")


def test_a_farewell_reaches_the_gm_and_the_player_is_asked_whether_they_meant_resign(gapp: TestApp) -> None:
    one_lap_race(gapp, ("kelly", "seb"))
    before = len(mails(gapp, GM))
    player_says(gapp, "kelly", "I have to drop out, family stuff", game="sc1")
    answer = last(gapp, ADDRESS["kelly"])
    text = _flat(body_of(answer))
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert "Did you mean to resign? Send RESIGN sc1" in text and "Your words went to the GM" in str(answer["Subject"])
    (to_gm,) = mails(gapp, GM)[before:]
    gm_text = _flat(body_of(to_gm))
    assert "> I have to drop out, family stuff" in gm_text and "PRESS sc1 kelly" in gm_text
    with gapp.db.read() as session:
        assert session.scalars(select(GmAttention.kind)).all() == ["note"]
        assert not session.scalars(select(OrderSubmission.id).where(OrderSubmission.source == "mail")).all()


def test_a_rules_question_reaches_the_gm_and_gets_no_error_nor_a_one_tap_link(gapp: TestApp) -> None:
    """ "How does SLIP work? Can I slip behind seb?" was refused as orders, [ERROR] 'HOW' is not
    an order."""
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "How does SLIP work? Can I slip behind seb?", game="sc1")
    answer = last(gapp, ADDRESS["kelly"])
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert "mailto:" not in body_of(answer)
    assert "a question, passed on to the GM" in _flat(body_of(answer))
    assert "> How does SLIP work? Can I slip behind seb?" in _flat(body_of(last(gapp, GM)))


def test_words_for_the_gm_beside_orders_go_to_the_gm_and_the_orders_are_taken(rc: TestApp) -> None:
    player_says(rc, "seb", "USE 3\nDear GM, I'll be away next week")
    text = _flat(body_of(last(rc, ADDRESS["seb"])))
    assert "Understood for" in text and "> USE 3" in text and "words for the GM, passed on to the GM" in text
    assert "> Dear GM, I'll be away next week" in _flat(body_of(last(rc, GM)))


def test_a_mail_of_many_questions_gives_the_gm_a_notice_and_items_of_bounded_size(rc: TestApp) -> None:
    """No answer is bigger than its cause deserves: a mail of 300 questions for the GM gives the
    GM one notice quoting 12 of them, with how many more were read, and 12 items under "Needs
    your attention"."""
    questions = "\n".join(f"Question {n}: what happens if I run out of EP on lap {n}?" for n in range(300))
    player_says(rc, "seb", questions)
    notice = body_of(last(rc, GM))
    quoted = [line for line in notice.splitlines() if line.lstrip().startswith("> Question")]
    assert len(quoted) == 12 and re.search(r"\[\d+ more lines not shown\]", notice), notice
    with rc.db.read() as session:
        assert len(list(session.scalars(select(GmAttention)))) == 12


def test_the_gms_notice_names_how_the_seat_takes_part_in_the_games_own_word(rc: TestApp) -> None:
    """racecraft.md: a race of runners. The GM's notice of a Racecraft question read "Roger, who
    drives roger in rc1"; it says the game's own verb (templates/<game>/vocabulary.toml): the
    runner runs, the car is driven."""
    player_says(rc, "seb", "What happens if I run out of EP?")
    notice = _flat(body_of(last(rc, GM)))
    assert "who runs as seb in rc1" in notice and "drive" not in notice, notice
    one_lap_race(rc, ("kelly", "seb"))
    player_says(rc, "kelly", "How does SLIP work?", game="sc1")
    assert "who drives as kelly in sc1" in _flat(body_of(last(rc, GM)))


def test_the_digest_and_a_gms_status_list_what_needs_attention_at_the_top(rc: TestApp) -> None:
    player_says(rc, "kelly", "What happens if I run out of EP?")
    gm_says(rc, "STATUS rc1")
    status = body_of(last(rc, GM))
    assert "Needs your attention:" in status and "kelly: a question for you" in status
    assert status.index("Needs your attention:") < status.index("== rc1")
    rc.clock.advance(timedelta(minutes=5))
    assert digest.send_due_digests(rc.shell, force=True) == 1
    rc.service.send()
    body = body_of(last(rc, GM))
    assert body.index("Needs your attention:") < body.index("== rc1")
    assert "> What happens if I run out of EP?" in body


def test_a_question_about_the_game_offers_no_word_as_an_order() -> None:
    """ "what colour is free?" was offered back as a one-tap link for COLOUR IS, and "What does
    round 2 mean?" for ROUND 2: a word that is no order gets no link; the question is the GM's."""
    import random

    from bot.intake import prose
    from rules import find_game

    game = find_game("speedphreakz")
    state = game.new_game(["ann", "bob", "cat"], {}, random.Random(1))
    for line in ("what colour is free?", "What does round 2 mean?"):
        parsed = game.parse_orders(state, "ann", line)
        (reading,) = prose.read(
            game, state, "ann", line, parsed.problems, prose.order_words(game.order_help(state, "ann"))
        ).readings
        assert (reading.offered, reading.applied, reading.for_gm) == ((), (), ForTheGm.QUESTION)
    parsed = game.parse_orders(state, "ann", "colour red or blue?")
    (reading,) = prose.read(
        game, state, "ann", "colour red or blue?", parsed.problems, prose.order_words(game.order_help(state, "ann"))
    ).readings
    assert reading.offered == ("COLOUR red", "COLOUR blue")


def test_orders_that_came_too_late_need_the_gms_attention(rc: TestApp) -> None:
    """The attention block lists orders lost as well as words: a mail after the deadline."""
    rc.clock.advance(timedelta(hours=49))
    player_says(rc, "kelly", "USE 3")
    assert any("Too late for" in str(m["Subject"]) for m in mails(rc, ADDRESS["kelly"]))
    gm_says(rc, "STATUS rc1")
    status = body_of(last(rc, GM))
    assert "kelly: orders not used" in status and "after the deadline" in status


def test_a_greeting_line_at_the_head_of_the_gms_commands_is_passed_over(rc: TestApp) -> None:
    """A greeting at the head of a mail is a courtesy, as "Thanks" at its end is ("Morning! A few
    things:", "Good morning all"), so the GM's commands under it are answered alone; an option
    letter after a greeting ("Hi, B for me") is still no courtesy."""
    assert is_courtesy("Morning! A few things:") and is_courtesy("Morning!") and is_courtesy("Good morning all")
    assert not is_courtesy("Hi, B for me this turn") and not is_courtesy("Morning, A for me")
    gm_helpers.gm_says(rc, "Morning! A few things:\nEXTEND rc1 24h\nThanks")
    answer = last(rc, gm_helpers.GM)
    assert str(answer["Subject"]) == "[rc1] GM: EXTEND done", answer["Subject"]
    assert "not understood" not in _flat(body_of(answer))
