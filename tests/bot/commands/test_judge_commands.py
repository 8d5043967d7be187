"""The judge commands njudge and the human GMs have (mail-interface.md, "Player
commands"): HISTORY <game> [turn] (past results) and RESEND <game> (the open turn's sheet again,
only to the registered address)."""

from __future__ import annotations

from bot.mail_in.auth import signed_address
from bot.store import find_game_row
from bot.testing import TestApp, body_of, plain_mail, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, last, mails, player_says, stranger_says
from tests.helpers import fake_inbox

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
SEATS = ("kelly", "seb", "steve", "roger", "anna")


def _play_turn_1(app: TestApp) -> None:
    for seat in SEATS:
        player_says(app, seat, "USE 2")


def test_history_lists_the_turns_and_gives_one_turns_report(rc: TestApp) -> None:
    """HISTORY: the turns resolved so far; HISTORY <game> <n>: that turn's public report."""
    player_says(rc, "kelly", "HISTORY")
    assert "No turn of rc1 has been resolved yet" in body_of(last(rc, ADDRESS["kelly"]))
    _play_turn_1(rc)
    player_says(rc, "kelly", "HISTORY rc1")
    assert "1. Turn 1 of 5: start" in body_of(last(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "HISTORY rc1 1")
    answer = last(rc, ADDRESS["kelly"])
    assert str(answer["Subject"]) == "[rc1] History: Turn 1 of 5: start"
    results = next(m for m in mails(rc, ADDRESS["seb"]) if "Results of Turn 1" in str(m["Subject"]))
    summary = body_of(answer).split("as everyone saw them:")[1].split("-- ")[0].strip().splitlines()[0]
    assert summary and summary in body_of(results)  # the same public report the results carried
    player_says(rc, "kelly", "HISTORY rc1 7")
    assert "has no resolved turn 7" in body_of(last(rc, ADDRESS["kelly"]))


def test_history_is_for_the_players_of_the_game(rc: TestApp) -> None:
    """A stranger's HISTORY is a command for players: not done; the stranger gets the stranger's notice."""
    stranger_says(rc, "someone@else.example", "HISTORY rc1")
    assert "not in any game running here" in words_of(last(rc, "someone@else.example"))


def test_resend_mails_the_open_sheet_to_the_registered_address_only(rc: TestApp) -> None:
    """RESEND through the seat's reply address, from another address: the sheet goes to the seat's
    registered address, with its reply address, and never to the From; a few a day at most."""
    before = len(mails(rc, ADDRESS["seb"]))
    fake_inbox(rc).deliver(
        plain_mail(
            "seb-phone@else.example",
            signed_address(BOT, "test-site-secret", "rc1", "seb"),
            "resend",
            "RESEND",
        )
    )
    gm_helpers.cycle(rc)
    new = mails(rc, ADDRESS["seb"])[before:]
    assert [str(m["Subject"]).startswith("[rc1] Racecraft: Turn 1 of 5") for m in new] == [True]
    assert "rc1.seb." in str(new[0]["Reply-To"])
    assert mails(rc, "seb-phone@else.example") == []
    for _ in range(3):
        player_says(rc, "seb", "RESEND")
    assert "Sent already" in str(last(rc, ADDRESS["seb"])["Subject"])


# -- CLEAR, WAIT, NOWAIT ("nothing clears orders back to the default, nothing
#    lets a player hold a turn from early resolution") ----------------------------------------


def _resolved_turns(app: TestApp) -> int:
    return sum(1 for t in gm_helpers.turns(app) if t.resolved_at is not None)


def test_clear_takes_the_orders_back_and_the_default_is_used(rc: TestApp) -> None:
    """CLEAR: the seat's orders of the open turn no longer count; the answer names the default that
    now stands (Racecraft: half the EP, racecraft.md) and ORDERS says nothing is on file."""
    player_says(rc, "kelly", "USE 4")
    player_says(rc, "kelly", "CLEAR")
    answer = last(rc, ADDRESS["kelly"])
    assert str(answer["Subject"]) == "[rc1] Orders cleared" and "[ERROR]" not in str(answer["Subject"])
    assert "If no new orders arrive by" in words_of(answer) and "> USE" in body_of(answer)
    player_says(rc, "kelly", "ORDERS")
    assert "Nothing is on file for you for Turn 1" in body_of(last(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "STATUS")
    assert "Still to order: anna, kelly, roger, seb, steve." in body_of(last(rc, ADDRESS["kelly"]))
    # Orders after the CLEAR count again; the others order: the turn resolves at once.
    player_says(rc, "kelly", "USE 1")
    for seat in SEATS[1:]:
        player_says(rc, seat, "USE 2")
    assert _resolved_turns(rc) == 1


def test_clear_in_the_same_mail_before_new_orders_keeps_the_new_ones(rc: TestApp) -> None:
    """Commands are carried out before the orders of the same mail: CLEAR then USE 1 leaves USE 1."""
    player_says(rc, "seb", "USE 5")
    player_says(rc, "seb", "CLEAR\nUSE 1")
    player_says(rc, "seb", "ORDERS")
    assert "> USE 1" in body_of(last(rc, ADDRESS["seb"]))


def test_wait_holds_the_turn_to_its_deadline_and_nowait_lifts_it(rc: TestApp) -> None:
    """WAIT: with every order in, the turn does not resolve early (mail-interface.md's early
    resolution, held by one player) and no mail promises it will; NOWAIT lifts it at once."""
    player_says(rc, "kelly", "WAIT")
    assert "waits for its deadline" in body_of(last(rc, ADDRESS["kelly"]))
    for seat in SEATS:
        player_says(rc, seat, "USE 2")
    assert _resolved_turns(rc) == 0, "held by kelly's WAIT"
    confirmation = body_of(last(rc, ADDRESS["anna"]))
    assert "Orders received" in str(last(rc, ADDRESS["anna"])["Subject"])
    assert "resolves as soon as every order is in" not in confirmation
    player_says(rc, "seb", "STATUS")
    status = body_of(last(rc, ADDRESS["seb"]))
    assert (
        "The turn waits for its deadline: a player asked it to (WAIT)." in status
        and "kelly" not in status.split("WAIT")[0].split("Still to order")[1]
    )
    player_says(rc, "seb", "NOWAIT")
    assert "You were not holding" in body_of(last(rc, ADDRESS["seb"]))
    player_says(rc, "kelly", "NOWAIT")
    assert _resolved_turns(rc) == 1, "every order is in and nobody holds it: resolved at the next tick"


def test_wait_in_a_game_without_early_resolution_holds_nothing(rc: TestApp) -> None:
    """Turns that never resolve early (`gm configure --early-resolution off`) have nothing to hold:
    said so, without [ERROR]; in a paused game there is no turn open for orders."""
    with rc.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.early_resolution = False
    player_says(rc, "kelly", "WAIT")
    answer = last(rc, ADDRESS["kelly"])
    assert str(answer["Subject"]) == "[rc1] Nothing to hold" and "never resolve before their deadline" in body_of(
        answer
    )
    gm_helpers.gm_says(rc, "PAUSE rc1")
    player_says(rc, "kelly", "CLEAR")
    assert "has no turn open for orders now (paused)" in body_of(last(rc, ADDRESS["kelly"]))


def test_clear_wait_and_nowait_are_for_the_seats_players(rc: TestApp) -> None:
    """A stranger's CLEAR is refused (a player command); the GM is told to use ORDER/PLOT."""
    stranger_says(rc, "someone@else.example", "CLEAR rc1")
    assert "not in any game running here" in words_of(last(rc, "someone@else.example"))
    gm_helpers.gm_says(rc, "WAIT rc1")
    assert "WAIT is for players" in gm_helpers.bodies(rc, gm_helpers.GM)


def test_the_gms_wait_is_told_what_wait_is_and_what_the_gm_has_instead(rc: TestApp) -> None:
    """The GM (no seat) writing WAIT, as "WAIT rc1" or with a seat after it ("WAIT rc1 kelly",
    a word too many), is told one thing: WAIT is a player's command, and the GM holds a game
    with PAUSE; never "Incomplete command" with a form that is then refused."""
    gm_helpers.gm_says(rc, "WAIT rc1 kelly")
    answer = last(rc, gm_helpers.GM)
    assert str(answer["Subject"]) == "[ERROR] [rc1] Command not run as written: WAIT", answer["Subject"]
    first = words_of(answer)
    assert "WAIT is a player's command" in first and "PAUSE <game>" in first, first
    assert "write WAIT [game]" not in first, first
    gm_helpers.gm_says(rc, "WAIT rc1")
    second = words_of(last(rc, gm_helpers.GM))
    assert "WAIT is a player's command" in second and "PAUSE <game>" in second, second


def test_a_dropped_seats_wait_holds_nothing_and_no_mail_says_it_does(rc: TestApp) -> None:
    """ "WAIT holds the open turn to its deadline" (docs/DESIGN.md, CLEAR, WAIT and NOWAIT), while
    the turn expects the seat's orders: kelly WAITs and the GM drops kelly. What STATUS, the
    confirmations and the reminders say of the hold is the tick's own reading (the turn's
    outlook, `Outlook.resolves_early`): no mail says the turn is held, and the others' orders
    resolve it at once (on main STATUS read the hold from the rows, kelly's WAIT among them,
    and said the turn waited for its deadline while the tick resolved it)."""
    player_says(rc, "kelly", "WAIT")
    gm_helpers.gm_says(rc, "DROP rc1 kelly")
    for seat in SEATS[1:-1]:
        player_says(rc, seat, "USE 2")
    assert "resolves as soon as every order is in" in body_of(last(rc, ADDRESS[SEATS[-2]]))
    player_says(rc, "seb", "STATUS")
    status = body_of(last(rc, ADDRESS["seb"]))
    assert "Still to order: anna." in status and "waits for its deadline" not in status, status
    player_says(rc, "anna", "USE 2")
    assert _resolved_turns(rc) == 1, "kelly is out of the race: its WAIT holds nothing"
