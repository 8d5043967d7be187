"""RATING ON|OFF by mail (docs/championships.md, "Ratings": opt-in): a player's own preference,
off until they ask, confirmed in the answer."""

from __future__ import annotations

from bot.models import Player
from bot.testing import TestApp, body_of, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, mails, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def rating_of(app: TestApp, seat: str) -> bool:
    with app.db.read() as session:
        return session.query(Player).filter_by(address=ADDRESS[seat]).one().rating


def test_rating_is_off_until_asked_and_rating_on_and_off_are_confirmed(rc: TestApp) -> None:
    assert rating_of(rc, "roger") is False
    player_says(rc, "roger", "RATING ON")
    answer = mails(rc, ADDRESS["roger"])[-1]
    assert "Rating on" in str(answer["Subject"])
    assert "once you have finished 3 rated races" in words_of(answer)
    assert rating_of(rc, "roger") is True
    assert rating_of(rc, "kelly") is False, "one player's preference alone"
    player_says(rc, "roger", "rating on")
    assert "on already" in body_of(mails(rc, ADDRESS["roger"])[-1])
    player_says(rc, "roger", "RATING OFF")
    answer = mails(rc, ADDRESS["roger"])[-1]
    assert "Rating off" in str(answer["Subject"]) and "no longer show it" in body_of(answer)
    assert rating_of(rc, "roger") is False


def test_rating_with_a_word_not_on_or_off_is_refused_with_the_syntax(rc: TestApp) -> None:
    player_says(rc, "roger", "RATING PLEASE\u202e")
    answer = body_of(mails(rc, ADDRESS["roger"])[-1])
    assert "RATING [ON|OFF]" in answer
    assert rating_of(rc, "roger") is False


def _person_in_no_game(app: TestApp, address: str) -> None:
    """A person whose games are over (between seasons): a registered address, no seat running."""
    from datetime import UTC, datetime

    with app.db.transaction() as session:
        session.add(Player(address=address, name="Nina", created_at=datetime(2026, 1, 1, tzinfo=UTC)))


def test_rating_alone_from_the_plain_address_of_a_person_in_no_game_is_answered_there(rc: TestApp) -> None:
    """RATING is about the person, not a game (docs/championships.md, "Ratings"): a person
    between seasons asks from their plain address and is answered with their ratings, at that
    address; RATING ON|OFF changes the setting and wants a reply to a mail of the bot."""
    _person_in_no_game(rc, "nina@example.org")
    gm_helpers.stranger_says(rc, "nina@example.org", "RATING")
    answer = mails(rc, "nina@example.org")[-1]
    assert "Your ratings" in str(answer["Subject"]), str(answer["Subject"])
    text = body_of(answer)
    assert "not in a game" not in text and "not in any game" not in text
    assert "You have no rating yet" in text and "Your rating is off" in text
    gm_helpers.stranger_says(rc, "nina@example.org", "RATING ON")
    answer = mails(rc, "nina@example.org")[-1]
    assert "reply to any mail the bot sent you" in words_of(answer)
    with rc.db.read() as session:
        assert session.query(Player).filter_by(address="nina@example.org").one().rating is False
    gm_helpers.stranger_says(rc, "nobody@example.org", "RATING")
    assert "not in any game running here" in words_of(mails(rc, "nobody@example.org")[-1]), "a stranger: as before"


def test_a_rating_not_shown_yet_says_how_many_rated_races_until_it_is() -> None:
    """docs/championships.md, "Ratings": shown "once they have finished `shown_after` rated
    races"; the answer says so, not that it was counted from that many."""
    from bot.letters.words import say

    rated = [{"game": "Racecraft", "rating": 0, "races": 2, "shown": False, "more": 1}]
    text = " ".join(say("commands_rating_asked", on=False, shown_after=3, rated=rated, page="", archive=False).split())
    assert "Racecraft: 0 after 2 rated races." in text
    assert "Shown once you have finished 3 rated races, 1 more" in text
    assert "Counted from" not in text
