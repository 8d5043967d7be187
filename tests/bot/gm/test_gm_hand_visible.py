"""The GM's hand is visible and departures are told to everyone
(mail-interface.md, GM commands): an ORDER, PLOT, PLOT ... CLEAR or SET by the GM is told to the
player it touches, with what changed; DROP, RESIGN and REPLACE are announced to the other
players; the new holder's first sheet says whose seat they take over, in the game's zone; the
GM's plot goes with the player it was for."""

from __future__ import annotations

from bot.store import find_game_row, seat_named
from bot.testing import TestApp, body_of, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, gm_says, last, mails, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _subjects(app: TestApp, to: str) -> list[str]:
    return [str(m["Subject"]) for m in mails(app, to)]


def test_an_order_entered_by_the_gm_is_shown_to_the_player(rc: TestApp) -> None:
    gm_says(rc, "ORDER rc1 steve USE 1")
    told = last(rc, ADDRESS["steve"])
    assert str(told["Subject"]) == "[rc1] The GM entered orders for you in Turn 1 of 5: start"
    assert "> USE 1" in body_of(told) and "[ERROR]" not in str(told["Subject"])
    assert "steve was told." in gm_helpers.bodies(rc, GM)


def test_a_plot_set_and_cleared_is_told_to_the_player(rc: TestApp) -> None:
    gm_says(rc, "PLOT rc1 steve USE 1")
    set_ = last(rc, ADDRESS["steve"])
    assert str(set_["Subject"]) == "[rc1] The GM has set a plot for you" and "> USE 1" in body_of(set_)
    assert "until the GM clears it" in body_of(set_)
    gm_says(rc, "PLOT rc1 steve CLEAR")
    cleared = last(rc, ADDRESS["steve"])
    assert str(cleared["Subject"]) == "[rc1] The GM's plot for you is cleared" and "> USE" in body_of(cleared)


def test_a_figure_set_by_the_gm_is_told_to_the_player(rc: TestApp) -> None:
    gm_says(rc, "SET rc1 seb ep 4")
    told = last(rc, ADDRESS["seb"])
    assert str(told["Subject"]) == "[rc1] The GM changed your ep" and "set your ep to 4" in body_of(told)


def test_drop_is_announced_to_the_others_and_the_dropped_player_gets_their_own_notice(rc: TestApp) -> None:
    gm_says(rc, "DROP rc1 seb")
    assert "[rc1] You are out of rc1" in _subjects(rc, ADDRESS["seb"])
    assert "[rc1] seb is out of the race" not in _subjects(rc, ADDRESS["seb"])
    for seat in ("kelly", "steve", "roger", "anna"):
        assert "[rc1] seb is out of the race" in _subjects(rc, ADDRESS[seat])


def test_resign_is_announced_to_the_others(rc: TestApp) -> None:
    player_says(rc, "roger", "RESIGN rc1")
    assert "[rc1] You have resigned from rc1" in _subjects(rc, ADDRESS["roger"])
    for seat in ("kelly", "seb", "steve", "anna"):
        assert "[rc1] roger has resigned" in _subjects(rc, ADDRESS[seat])


def test_replace_tells_the_new_holder_whose_seat_in_the_games_zone_and_clears_the_plot(rc: TestApp) -> None:
    with rc.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.timezone = "America/New_York"
    gm_says(rc, "PLOT rc1 steve USE 1")
    gm_says(rc, "REPLACE rc1 steve sam@example.org Sam")
    sheet = last(rc, "sam@example.org")
    assert "You take over seat steve in rc1 from" in body_of(sheet) and "from Turn 1 of 5" in body_of(sheet)
    assert "Times are shown in America/New_York" in body_of(sheet)
    for seat in ("kelly", "seb", "roger", "anna"):
        assert "[rc1] steve changes hands" in _subjects(rc, ADDRESS[seat])
    assert "[rc1] steve changes hands" not in _subjects(rc, "sam@example.org")
    assert "The GM plot of steve (USE 1) is cleared" in " ".join(gm_helpers.bodies(rc, GM).split())
    with rc.db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        steve = seat_named(game, "steve")
        assert steve is not None and steve.gm_plot is None and steve.player.timezone == "America/New_York"


# -- ROLLBACK, PAUSE and the calendar -----------------------------------------------------------


def _calendar_methods(message: object) -> list[str]:
    from email.message import EmailMessage

    assert isinstance(message, EmailMessage)
    return [str(part.get_param("method")) for part in message.walk() if part.get_content_type() == "text/calendar"]


def _play_turn_1(app: TestApp) -> None:
    for seat in ("kelly", "seb", "steve", "roger", "anna"):
        player_says(app, seat, "USE 2")


def test_rollback_reopens_the_turn_paused_and_its_new_results_say_they_are_a_correction(rc: TestApp) -> None:
    """ROLLBACK with every order on file: the turn is not resolved again at the next tick (the game
    is paused; the GM is told how to go on); PROCESS resolves it and its results say in subject and
    text that they replace the ones sent before."""
    _play_turn_1(rc)
    gm_says(rc, "ROLLBACK rc1")
    assert str(gm_helpers.game_row(rc).status) == "paused"
    assert "the game is paused" in gm_helpers.bodies(rc, GM) and "RESUME rc1" in gm_helpers.bodies(rc, GM)
    notice = last(rc, ADDRESS["kelly"])
    assert "Turn 1 of 5: start reopened by the GM" in str(notice["Subject"]) and "paused" in body_of(notice)
    gm_helpers.cycle(rc)
    assert [t.resolved_at is None for t in gm_helpers.turns(rc)] == [True], "not resolved again by itself"
    gm_says(rc, "PROCESS rc1")
    assert str(gm_helpers.game_row(rc).status) == "active"
    results = last(rc, ADDRESS["kelly"])
    assert str(results["Subject"]).startswith("[rc1] Corrected results of Turn 1 of 5")
    assert "These results replace the ones sent before for Turn 1 of 5: start" in body_of(results)
    copy = next(m for m in reversed(mails(rc, GM)) if "GM copy" in str(m["Subject"]))
    assert "corrected results of Turn 1" in str(copy["Subject"])


def test_a_confirmation_while_paused_promises_no_deadline_and_the_calendar_follows_the_pause(rc: TestApp) -> None:
    gm_says(rc, "PAUSE rc1")
    paused = last(rc, ADDRESS["seb"])
    assert _calendar_methods(paused) == ["CANCEL"], "the deadline's event is cancelled while paused"
    player_says(rc, "seb", "USE 3")
    confirmation = body_of(last(rc, ADDRESS["seb"]))
    assert "The game is paused: no deadline runs" in confirmation
    assert (
        "resolves as soon as every order is in" not in confirmation and "If nothing else arrives by" not in confirmation
    )
    gm_says(rc, "RESUME rc1")
    resumed = last(rc, ADDRESS["kelly"])
    assert "resumes" in str(resumed["Subject"]) and _calendar_methods(resumed) == ["REQUEST"]


def test_a_dropped_runner_is_in_the_final_classification_as_not_finishing(rc: TestApp) -> None:
    """The driver stays in the classification (DNF, or the game's own word)."""
    gm_says(rc, "DROP rc1 seb")
    for _ in range(10):
        if str(gm_helpers.game_row(rc).status) == "finished":
            break
        gm_says(rc, "PROCESS rc1")
    final = next(m for m in mails(rc, ADDRESS["kelly"]) if "Final result" in str(m["Subject"]))
    assert "seb (did not finish)" in body_of(final)


def test_one_gm_mail_touching_a_player_several_ways_is_one_mail_to_them(rc: TestApp) -> None:
    """ "one mail in, at most one mail out per recipient": a PLOT, an ORDER and an EXTEND
    in one GM mail reach Steve as one mail with a section each (each says what changed)."""
    before = len(mails(rc, ADDRESS["steve"]))
    gm_says(rc, "PLOT rc1 steve USE 1\nORDER rc1 steve USE 2\nEXTEND rc1 24h")
    new = mails(rc, ADDRESS["steve"])[before:]
    assert len(new) == 1
    text = body_of(new[0])
    assert "== The GM has set a plot for you ==" in text and "== The GM entered orders for you" in text
    assert "== Deadline extended" in text
    assert len(mails(rc, ADDRESS["seb"])) > 0 and "plot" not in body_of(last(rc, ADDRESS["seb"]))


def test_results_say_when_the_player_sent_orders_after_the_gms(rc: TestApp) -> None:
    """Played by mail (playfix M8): the GM's ORDER for kelly, then kelly's own USE 1: the results
    said "The GM entered orders in Turn 1 of 5: start for: kelly ..." as if they were used. They
    say the player sent orders of their own after it; an ORDER that stood says nothing more."""
    gm_says(rc, "ORDER rc1 kelly USE 4\nORDER rc1 seb USE 3")
    player_says(rc, "kelly", "USE 1")
    gm_says(rc, "PROCESS rc1")
    results = next(m for m in reversed(mails(rc, ADDRESS["anna"])) if "Results of" in str(m["Subject"]))
    text = words_of(results)
    assert "kelly, Mon 5 Jan 2026 09:00 UTC (by mail); the player sent orders of their own after it" in text, text
    assert (
        "seb, Mon 5 Jan 2026 09:00 UTC (by mail) " in text + " "
        and "seb, Mon 5 Jan 2026 09:00 UTC (by mail);" not in text
    )


def test_the_gms_hand_is_told_at_the_time_in_the_readers_zone(rc: TestApp) -> None:
    """Every time a letter shows is in its reader's zone, as the letter's deadlines are (its
    sign-off says the zone): the GM's copy of rc1 (Europe/London) said "seb, 2026-01-05 09:00
    UTC (by mail)"; it says "seb, Mon 5 Jan 2026 09:00 GMT (by mail)"."""
    gm_says(rc, "ORDER rc1 seb USE 3")
    gm_says(rc, "PROCESS rc1")
    copy = next(m for m in reversed(mails(rc, GM)) if "The GM entered orders in" in body_of(m))
    text = words_of(copy)
    assert "seb, Mon 5 Jan 2026 09:00 GMT (by mail)" in text, text
    assert "Times are shown in Europe/London" in text and "UTC (by mail)" not in text, text


def test_replace_says_the_predecessors_orders_stand_only_where_there_are_some(rc: TestApp) -> None:
    """The new holder's sheet says "Orders your predecessor sent for this turn stand" only for a
    seat whose holder sent orders for the open turn; a seat with none is not told of orders it
    does not have (its sheet says what it gets if nothing arrives)."""
    gm_says(rc, "REPLACE rc1 steve sam@example.org Sam")
    quiet = words_of(last(rc, "sam@example.org"))
    assert "You take over seat steve in rc1 from" in quiet and "Orders your predecessor sent" not in quiet
    player_says(rc, "roger", "USE 2")
    gm_says(rc, "REPLACE rc1 roger rob@example.org Rob")
    busy = words_of(last(rc, "rob@example.org"))
    assert "Orders your predecessor sent for this turn stand until you send your own." in busy
